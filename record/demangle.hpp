// SPDX-License-Identifier: MIT
#pragma once
// Internal to record/: perf 6.12's display of an ELF symbol's name (record/demangle.cpp).
#include <string>

namespace perfspec::record::detail {

/// The name as perf shows it, or empty when perf shows it as it is.
std::string demangled_name(const char* name);

}  // namespace perfspec::record::detail
