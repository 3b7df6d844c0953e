// SPDX-License-Identifier: MIT
#pragma once
// Event modifiers (REFERENCE.md section 6). Internal to resolver/.
#include <string_view>

#include "perfspec/ast.hpp"
#include "perfspec/event_set.hpp"

namespace perfspec::resolver {

struct ModifierSet {
  bool u = false, k = false, h = false, G = false, H = false, I = false, S = false, D = false, e = false,
       W = false, b = false, R = false, P = false;
  unsigned p = 0;
  static ModifierSet from(std::string_view letters);
};

/// Where an event sits, for the leader-only modifiers.
struct Placement {
  bool leader = true;
  bool in_multi_group = false;  ///< a group with more than one member (for PERF_FORMAT_GROUP)
};

/// Apply the event's own modifiers with its group's on top (letters combine; `p` counts add up).
/// `max_precise` is the PMU's caps/max_precise, used by `P`. Throws positioned perfspec::Error.
void apply_modifiers(ResolvedEvent& event, const ast::Modifiers& own, const ast::Modifiers* group,
                     Placement placement, unsigned max_precise);

}  // namespace perfspec::resolver
