// SPDX-License-Identifier: MIT
#pragma once
#include <string>
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

/// The same into `list`, reusing the storage an earlier parse left in it (its strings and vectors):
/// for a program that parses many strings, parsing then allocates only when a string is larger than
/// any before. On an error `list` holds unspecified contents (parse into it again to reuse it).
///
/// Example: `perfspec::ast::EventList list; for (auto& s : lines) { perfspec::parse(s, list); use(list); }`
void parse(std::string_view text, ast::EventList& list);

/// The canonical text of a syntax tree: no blanks, numbers in hex, modifiers after `:` (directly
/// after `/` for the slash forms), quotes only where a value needs them. Parsing it gives the same
/// tree again (the same kinds, names, values and modifiers; spans differ).
///
/// Example: `to_string(parse("{ cycles , cpu/event=60,inv/u }"))` is `{cycles,cpu/event=0x3c,inv/u}`.
std::string to_string(const ast::EventList& list);
/// One event of a tree. Example: `to_string(parse("mem:4096:w").items[0].events[0]) == "mem:0x1000:w"`.
std::string to_string(const ast::Event& event);
/// One term. Example: `to_string(parse("cpu/event=60,inv/").items[0].events[0].terms[0]) == "event=0x3c"`.
std::string to_string(const ast::Term& term);

}  // namespace perfspec
