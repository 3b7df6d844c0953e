// SPDX-License-Identifier: MIT
#pragma once
// Term lists outside an event string: sysfs alias files and event tables (`event=0xcd,umask=0x1,ldlat=3`).
#include <string_view>
#include <vector>

#include "perfspec/ast.hpp"

namespace perfspec::grammar {

/// Parse a bare term list; spans index into `text`. Throws perfspec::Error.
std::vector<ast::Term> parse_terms(std::string_view text);

}  // namespace perfspec::grammar
