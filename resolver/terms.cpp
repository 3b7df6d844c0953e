// SPDX-License-Identifier: MIT
#include "resolver/terms.hpp"

#include <algorithm>
#include <iterator>
#include <string>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "spec/abi.hpp"

namespace perfspec::resolver {
namespace {

using Value = ast::Term::Value;
using namespace spec;  // the ABI constants

#if defined(__aarch64__)
constexpr std::uint64_t user_regs_mask = (std::uint64_t{1} << 33) - 1;  // arm64 PERF_REGS_MASK
#else
constexpr std::uint64_t user_regs_mask = 0xff0fff;  // x86-64 PERF_REGS_MASK
#endif
constexpr std::uint32_t default_stack_size = 8192;

struct BranchMode {
  std::string_view name;
  std::uint64_t bits;
};
// tools/perf/util/parse-branch-options.c
constexpr BranchMode branch_modes[] = {
    {"u", spec::branch_user},
    {"k", spec::branch_kernel},
    {"hv", spec::branch_hv},
    {"any", spec::branch_any},
    {"any_call", spec::branch_any_call},
    {"any_ret", spec::branch_any_return},
    {"ind_call", spec::branch_ind_call},
    {"abort_tx", spec::branch_abort_tx},
    {"in_tx", spec::branch_in_tx},
    {"no_tx", spec::branch_no_tx},
    {"cond", spec::branch_cond},
    {"call_stack", spec::branch_call_stack},
    {"ind_jump", spec::branch_ind_jump},
    {"call", spec::branch_call},
    {"no_flags", spec::branch_no_flags},
    {"no_cycles", spec::branch_no_cycles},
    {"save_type", spec::branch_type_save},
    {"hw_index", spec::branch_hw_index},
    {"priv", spec::branch_priv_save},
    {"counter", spec::branch_counters},
};

// REFERENCE.md section 7; `Builtin` follows the order of the names.
constexpr std::string_view builtin_terms[] = {
    "config",     "config1",         "config2",    "config3",    "name",         "period",
    "freq",       "branch_type",     "time",       "call-graph", "stack-size",   "max-stack",
    "nr",         "inherit",         "no-inherit", "overwrite",  "no-overwrite", "percore",
    "aux-output", "aux-sample-size", "metric-id",  "cpu"};
enum class Builtin {
  config,
  config1,
  config2,
  config3,
  name,
  period,
  freq,
  branch_type,
  time,
  call_graph,
  stack_size,
  max_stack,
  nr,
  inherit,
  no_inherit,
  overwrite,
  no_overwrite,
  percore,
  aux_output,
  aux_sample_size,
  metric_id,
  cpu,
  none
};
static_assert(std::size(builtin_terms) == static_cast<std::size_t>(Builtin::none));

// Lengths of the built-in term names: most format terms (`event`, `umask`, `ldlat`) are rejected by
// their length alone, and every term of every event asks.
constexpr std::uint64_t builtin_lengths = [] {
  std::uint64_t m = 0;
  for (auto b : builtin_terms) m |= std::uint64_t{1} << b.size();
  return m;
}();

Builtin builtin_of(std::string_view n) {
  if (n.size() >= 64 || !(builtin_lengths >> n.size() & 1)) return Builtin::none;
  auto it = std::find(std::begin(builtin_terms), std::end(builtin_terms), n);
  return static_cast<Builtin>(it - std::begin(builtin_terms));  // none when not found
}

}  // namespace

std::span<const std::string_view> builtin_term_names() { return builtin_terms; }

bool is_builtin_term(std::string_view n) { return builtin_of(n) != Builtin::none; }

// `r1a8` or `r0x1a8` inside slashes.
std::optional<std::uint64_t> raw_term_value(std::string_view n) {
  if (n.size() < 2 || n[0] != 'r') return std::nullopt;
  std::string_view hex = n.substr(1);
  if (hex.size() > 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) hex.remove_prefix(2);
  if (hex.empty() || hex.size() > 16 ||
      hex.find_first_not_of("0123456789abcdefABCDEF") != std::string_view::npos)
    return std::nullopt;
  return std::stoull(std::string(hex), nullptr, 16);
}

namespace {

// A built-in term's value, read as the term needs it; errors point at the value.
struct TermValue {
  const ast::Term& t;
  std::uint64_t number() const {
    if (t.kind == Value::none) return 1;  // a bare built-in means 1
    if (t.kind != Value::number)
      throw Error(ErrorKind::bad_value, "expected numeric value",
                  t.value_span.end > t.value_span.begin ? t.value_span : t.span);
    return t.number;
  }
  std::string string() const {
    if (t.kind != Value::name && t.kind != Value::quoted)
      throw Error(ErrorKind::bad_value, "expected string value",
                  t.kind == Value::none ? t.name_span : t.value_span);
    return t.text;
  }
  // number(), at most `max`.
  std::uint64_t at_most(std::uint64_t max) const {
    std::uint64_t v = number();
    if (v > max)
      throw Error(ErrorKind::bad_value,
                  fmt::format("value {} for '{}' is too large, maximum is {}", v, t.name, max), t.value_span);
    return v;
  }
  bool flag() const { return at_most(1) != 0; }
};

void apply_branch_type(Attr& a, const TermValue& value) {
  std::string v = value.string();
  auto it =
      std::find_if(std::begin(branch_modes), std::end(branch_modes), [&](auto& m) { return m.name == v; });
  if (it == std::end(branch_modes))
    throw Error(
        ErrorKind::unknown_name, fmt::format("unknown branch type '{}'", v), value.t.value_span,
        "valid: u, k, hv, any, any_call, any_ret, ind_call, abort_tx, in_tx, no_tx, cond, call_stack, "
        "ind_jump, call, no_flags, no_cycles, save_type, hw_index, priv, counter");
  a.branch_sample_type |= it->bits;
  a.sample_type |= sample_branch_stack;
}

void apply_call_graph(CallGraph& cg, const TermValue& value) {
  std::string v = value.string();
  if (v != "fp" && v != "dwarf" && v != "lbr" && v != "no")
    throw Error(ErrorKind::unknown_name, fmt::format("unknown call-graph mode '{}'", v), value.t.value_span,
                "valid: fp, dwarf, lbr, no");
  cg.mode = v;
}

}  // namespace

bool apply_builtin(ResolvedEvent& out, const ast::Term& t, CallGraph& cg) {
  if (t.driver) {
    if (!out.driver_config.empty()) out.driver_config += ',';
    out.driver_config += t.kind == Value::none ? t.name : t.name + "=" + t.text;
    return true;
  }
  const Builtin which = builtin_of(t.name);
  if (which == Builtin::none) return false;
  Attr& a = out.attr;
  const TermValue value{t};
  switch (which) {
    case Builtin::config: a.config = value.number(); break;
    case Builtin::config1: a.config1 = value.number(); break;
    case Builtin::config2: a.config2 = value.number(); break;
    case Builtin::config3: a.config3 = value.number(); break;
    case Builtin::name: out.name = value.string(); break;
    case Builtin::period: a.sample_period = value.number(), a.freq = 0; break;
    case Builtin::freq: a.sample_period = value.number(), a.freq = 1; break;
    case Builtin::branch_type: apply_branch_type(a, value); break;
    case Builtin::time:
      if (value.flag())
        a.sample_type |= sample_time;
      else
        a.sample_type &= ~sample_time;
      break;
    case Builtin::call_graph: apply_call_graph(cg, value); break;
    case Builtin::stack_size: cg.stack_size = static_cast<std::uint32_t>(value.at_most(0xffffffffu)); break;
    case Builtin::max_stack: a.sample_max_stack = static_cast<std::uint16_t>(value.at_most(0xffff)); break;
    case Builtin::nr: out.max_events = value.number(); break;
    case Builtin::inherit: a.inherit = value.flag(); break;
    case Builtin::no_inherit: a.inherit = !value.flag(); break;
    case Builtin::overwrite: a.write_backward = value.flag(); break;
    case Builtin::no_overwrite: a.write_backward = !value.flag(); break;
    case Builtin::percore: out.percore = value.flag(); break;
    case Builtin::aux_output: a.aux_output = value.flag(); break;
    case Builtin::aux_sample_size:
      a.aux_sample_size = static_cast<std::uint32_t>(value.at_most(0xffffffffu));
      a.sample_type |= sample_aux;
      break;
    case Builtin::metric_id: out.metric_id = value.string(); break;
    case Builtin::cpu:
      if (t.kind == Value::none) throw Error(ErrorKind::bad_value, "expected a CPU list", t.name_span);
      out.cpus = t.text;
      break;
    case Builtin::none: break;
  }
  return true;
}

void finish_call_graph(Attr& a, const CallGraph& cg) {
  if (cg.mode.empty() || cg.mode == "no") return;
  a.sample_type |= sample_callchain;
  if (cg.mode == "dwarf") {
    a.sample_type |= sample_regs_user | sample_stack_user;
    a.sample_regs_user = user_regs_mask;
    a.sample_stack_user = cg.stack_size.value_or(default_stack_size);
    a.exclude_callchain_user = 1;
  } else if (cg.mode == "lbr") {
    a.sample_type |= sample_branch_stack;
    // as perf record sets it
    a.branch_sample_type |=
        branch_user | branch_call_stack | branch_no_flags | branch_no_cycles | branch_hw_index;
  }
}

}  // namespace perfspec::resolver
