// SPDX-License-Identifier: MIT
#pragma once
// Reading a counter through its mmap'd perf_event_mmap_page (internal to runtime/).
#include <optional>

#include "perfspec/runtime.hpp"

namespace perfspec::runtime {

/// Read the counter behind a mapped first page with rdpmc (x86-64) or the PMU registers (arm64),
/// following the seqlock protocol. nullopt when the page does not allow it (index 0, no
/// cap_user_rdpmc, or an architecture without user counter access): use read(2).
std::optional<UserRead> read_mapped_page(const void* page);

}  // namespace perfspec::runtime
