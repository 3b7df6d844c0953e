// SPDX-License-Identifier: MIT
#include <fmt/format.h>

#include "resolver/modifiers.hpp"
#include "spec/abi.hpp"

namespace perfspec::resolver {

namespace {
using spec::format_group;
using spec::sample_read;

Span letter_span(const ast::Modifiers& m, char c) {
  auto i = m.letters.find(c);
  if (i == std::string::npos) return m.span;
  auto b = m.span.begin + static_cast<std::uint32_t>(i);
  return Span{b, b + 1};
}
}  // namespace

ModifierSet ModifierSet::from(std::string_view letters) {
  ModifierSet m;
  for (char c : letters) {
    switch (c) {
      case 'u': m.u = true; break;
      case 'k': m.k = true; break;
      case 'h': m.h = true; break;
      case 'G': m.G = true; break;
      case 'H': m.H = true; break;
      case 'I': m.I = true; break;
      case 'S': m.S = true; break;
      case 'D': m.D = true; break;
      case 'e': m.e = true; break;
      case 'W': m.W = true; break;
      case 'b': m.b = true; break;
      case 'R': m.R = true; break;
      case 'P': m.P = true; break;
      case 'p': ++m.p; break;
      default: break;  // the grammar rejects other letters
    }
  }
  return m;
}

void apply_modifiers(ResolvedEvent& ev, const ast::Modifiers& own_text, const ast::Modifiers* group_text,
                     Placement placement, unsigned max_precise) {
  // No letters: nothing below applies (every effect is a letter's).
  if (own_text.letters.empty() && (!group_text || group_text->letters.empty())) return;
  ModifierSet own = ModifierSet::from(own_text.letters);
  ModifierSet grp = group_text ? ModifierSet::from(group_text->letters) : ModifierSet{};

  // W names a group property; on an event it is a mistake (perf: "Weak modifier is for use with groups").
  if (own.W)
    throw Error(ErrorKind::bad_value, "Weak modifier is for use with groups", letter_span(own_text, 'W'));
  if (!placement.leader) {
    if (own.D)
      throw Error(ErrorKind::bad_value, "the 'D' (pinned) modifier is only valid on a group leader",
                  letter_span(own_text, 'D'));
    if (own.e)
      throw Error(ErrorKind::bad_value, "the 'e' (exclusive) modifier is only valid on a group leader",
                  letter_span(own_text, 'e'));
  }

  Attr& a = ev.attr;
  // u/k/h: the first of them excludes all three, then each letter re-includes its own. Group letters
  // combine with the event's: {instructions:k}:u counts user and kernel.
  bool u = own.u || grp.u, k = own.k || grp.k, h = own.h || grp.h;
  if (u || k || h) {
    a.exclude_user = !u;
    a.exclude_kernel = !k;
    a.exclude_hv = !h;
  }
  bool G = own.G || grp.G, H = own.H || grp.H;
  if (G || H) {
    a.exclude_host = !H;
    a.exclude_guest = !G;
  }
  if (own.I || grp.I) a.exclude_idle = 1;

  unsigned p = own.p + grp.p;
  bool P = own.P || grp.P;
  if (p > 3) {
    throw Error(
        ErrorKind::bad_value,
        fmt::format("precise level {} is too high: the event's 'p' and its group's add up to more than 3", p),
        group_text ? group_text->span : own_text.span);
  }
  if (p) a.precise_ip = static_cast<std::uint8_t>(p);
  if (P) {  // P asks for the most the PMU can do, whatever 'p's stand beside it (as perf's precise_max)
    a.precise_ip = static_cast<std::uint8_t>(max_precise);
    ev.precise_max = true;
  }
  if (own.S || grp.S) {
    a.sample_type |= sample_read;
    if (placement.in_multi_group) a.read_format |= format_group;
  }
  if (placement.leader) {
    if (own.D || grp.D) a.pinned = 1;
    if (own.e || grp.e) a.exclusive = 1;
  }
  if (own.b || grp.b) ev.bpf_counter = true;
  if (own.R || grp.R) ev.retire_latency = true;
}

}  // namespace perfspec::resolver
