// SPDX-License-Identifier: MIT
#pragma once
// The terms every event takes whatever its PMU (REFERENCE.md section 7: `config`, `period`,
// `call-graph`, ...), driver terms (`@cfg`) and the raw `rNNN` term: what each sets in an event.
// Internal to resolver/.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "perfspec/ast.hpp"
#include "perfspec/event_set.hpp"

namespace perfspec::resolver {

/// `call-graph=` and `stack-size=` as written; they take effect together, in finish_call_graph.
struct CallGraph {
  std::string mode;
  std::optional<std::uint32_t> stack_size;
};

/// The built-in term names, in REFERENCE.md's order (for "valid terms" help lines).
std::span<const std::string_view> builtin_term_names();
bool is_builtin_term(std::string_view name);
/// `r1a8` or `r0x1a8` written as a term inside slashes: its value; nullopt for any other name.
std::optional<std::uint64_t> raw_term_value(std::string_view name);
/// Applies `t` to `out` when it is a built-in or driver term; false when it is neither. Throws a
/// positioned Error for a bad value.
bool apply_builtin(ResolvedEvent& out, const ast::Term& t, CallGraph& cg);
/// What `call-graph=` and `stack-size=` add to the attr, once every term was applied.
void finish_call_graph(Attr& a, const CallGraph& cg);

}  // namespace perfspec::resolver
