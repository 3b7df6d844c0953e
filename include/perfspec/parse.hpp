#pragma once
#include <string_view>

#include "perfspec/ast.hpp"

namespace perfspec {

/// Parse an event list (`cycles,{cpu/event=0x3c/u,instructions}:k`) into a syntax tree.
/// Throws perfspec::Error with the span of the first offending character on a syntax error.
///
/// Example:
/// ```
/// auto list = perfspec::parse("{cycles,instructions}:u");
/// assert(list.items[0].events.size() == 2);
/// ```
ast::EventList parse(std::string_view text);

}  // namespace perfspec
