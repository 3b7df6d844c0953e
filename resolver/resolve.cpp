#include <fnmatch.h>
#include <strings.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>
#include <range/v3/range/conversion.hpp>
#include <range/v3/view/filter.hpp>
#include <tsl/robin_map.h>

#include "grammar/terms.hpp"
#include "perfspec/parse.hpp"
#include "perfspec/resolve.hpp"
#include "perfspec/tables.hpp"
#include "resolver/modifiers.hpp"
#include "resolver/suggest.hpp"
#include "spec/builtin.hpp"
#include "spec/libpfm4.hpp"

namespace perfspec {
namespace resolver {
namespace {

using spec::Machine;
using spec::Pmu;
using Value = ast::Term::Value;

// perf_event.h bits used by built-in terms.
constexpr std::uint64_t sample_time = 1u << 2, sample_cpu = 1u << 7, sample_period_bit = 1u << 8, sample_raw = 1u << 10,
                        sample_callchain = 1u << 5, sample_branch_stack = 1u << 11,
                        sample_regs_user = 1u << 12, sample_stack_user = 1u << 13, sample_aux = 1u << 20;
#if defined(__aarch64__)
constexpr std::uint64_t user_regs_mask = (std::uint64_t{1} << 33) - 1;  // arm64 PERF_REGS_MASK
#else
constexpr std::uint64_t user_regs_mask = 0xff0fff;                      // x86-64 PERF_REGS_MASK
#endif
constexpr std::uint32_t default_stack_size = 8192;

struct BranchMode {
  std::string_view name;
  std::uint64_t bits;
};
// tools/perf/util/parse-branch-options.c
constexpr BranchMode branch_modes[] = {
    {"u", 1u << 0},         {"k", 1u << 1},         {"hv", 1u << 2},        {"any", 1u << 3},
    {"any_call", 1u << 4},  {"any_ret", 1u << 5},   {"ind_call", 1u << 6},  {"abort_tx", 1u << 7},
    {"in_tx", 1u << 8},     {"no_tx", 1u << 9},     {"cond", 1u << 10},     {"call_stack", 1u << 11},
    {"ind_jump", 1u << 12}, {"call", 1u << 13},     {"no_flags", 1u << 14}, {"no_cycles", 1u << 15},
    {"save_type", 1u << 16}, {"hw_index", 1u << 17}, {"priv", 1u << 18},    {"counter", 1u << 19},
};

// REFERENCE.md section 7; `Builtin` follows the order of the names.
constexpr std::string_view builtin_terms[] = {
    "config", "config1", "config2", "config3", "name", "period", "freq", "branch_type", "time", "call-graph",
    "stack-size", "max-stack", "inherit", "no-inherit", "overwrite", "no-overwrite", "percore", "aux-output",
    "aux-sample-size", "metric-id", "cpu"};
enum class Builtin {
  config, config1, config2, config3, name, period, freq, branch_type, time, call_graph, stack_size, max_stack,
  inherit, no_inherit, overwrite, no_overwrite, percore, aux_output, aux_sample_size, metric_id, cpu, none
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

bool is_builtin_term(std::string_view n) { return builtin_of(n) != Builtin::none; }

bool has_glob(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

// `r1a8` or `r0x1a8` inside slashes.
std::optional<std::uint64_t> raw_term_value(std::string_view n) {
  if (n.size() < 2 || n[0] != 'r') return std::nullopt;
  std::string_view hex = n.substr(1);
  if (hex.size() > 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) hex.remove_prefix(2);
  if (hex.empty() || hex.size() > 16 || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string_view::npos)
    return std::nullopt;
  return std::stoull(std::string(hex), nullptr, 16);
}

// Natural order so that uncore_imc_10 follows uncore_imc_9, as perf lists PMUs.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
      while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
      auto na = a.substr(i, i2 - i), nb = b.substr(j, j2 - j);
      na.erase(0, std::min(na.find_first_not_of('0'), na.size()));
      nb.erase(0, std::min(nb.find_first_not_of('0'), nb.size()));
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = i2, j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

// Alias term lists parse once per process: the same text always gives the same terms (keyed by the
// text, so a cache entry can never belong to a Machine that is gone).
const std::vector<ast::Term>& parsed_terms(const std::string& text) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::vector<ast::Term>> cache;
  std::lock_guard lock(mutex);
  if (auto it = cache.find(text); it != cache.end()) return it->second;
  auto terms = grammar::parse_terms(text);  // throws: nothing cached
  return cache.emplace(text, std::move(terms)).first->second;
}

}  // namespace

// An alias encoded on one PMU: the event as its definition alone leaves it, from a blank start. Kept
// per Machine, so a named event applies its definition's terms once, not on every resolve.
struct EncodedAlias {
  ResolvedEvent event;                ///< attr and metadata; name only when the definition sets `name=`
  bool sets_name = false;
  std::vector<std::string> required;  ///< its `param=?` terms
};

struct MachineMemo {
  struct Key {
    const void* pmu;
    const void* alias;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept {
      auto a = reinterpret_cast<std::uintptr_t>(k.pmu), b = reinterpret_cast<std::uintptr_t>(k.alias);
      return static_cast<std::size_t>((a * 0x9e3779b97f4a7c15ULL) ^ b);
    }
  };
  // What a bare name (`MEM_LOAD_RETIRED.L1_MISS`) names once it is known to be an alias: each PMU that
  // has it, with its encoding there. Kept by the name as written, only after it resolved once.
  struct NamedTarget {
    const spec::Pmu* pmu;
    const spec::Alias* alias;
    const EncodedAlias* encoded;
  };
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::mutex mutex;
  std::unordered_map<Key, EncodedAlias, KeyHash> aliases;  // (pmu, alias) -> its encoding on that PMU
  // Open addressing with a power-of-two table: std::unordered_map's bucket index is a division by a
  // prime, which was most of a lookup. Its entries move when it grows, so each holds its targets by pointer.
  tsl::robin_map<std::string, std::unique_ptr<const std::vector<NamedTarget>>, NameHash, std::equal_to<>,
                 std::allocator<std::pair<std::string, std::unique_ptr<const std::vector<NamedTarget>>>>, true>
      named;
  static constexpr std::size_t max_named = 1u << 16;
  // Every name a bare event could have meant, by length, for suggestions: built at the first unknown name.
  std::once_flag suggestable_once;
  ByLength suggestable;

  static MachineMemo& of(const spec::Machine& m) {
    std::call_once(m.memo_once_, [&] { m.memo_ = std::make_shared<MachineMemo>(); });
    return *static_cast<MachineMemo*>(m.memo_.get());
  }
};

namespace {

// Back to a default-constructed event, keeping the storage of its strings (for reuse).
void reset(ResolvedEvent& e) {
  e.attr = Attr{};
  e.name.clear();
  e.pmu.clear();
  e.placement.cpumask.clear();
  e.placement.cpus.clear();
  e.placement.missing = false;
  e.group = e.leader = 0;
  e.span = Span{};
  e.scale = 1.0;
  e.unit.clear();
  e.per_pkg = e.snapshot = e.bpf_counter = e.retire_latency = e.precise_max = false;
  e.metric_id.clear();
  e.driver_config.clear();
  e.cpus.clear();
  e.percore = false;
}

void reset(EventGroup& g) {
  g.name.clear();
  g.members.clear();
  g.braces = g.weak = false;
}

// The events of one resolve, built in `storage`: first in the elements an earlier resolve into the same
// EventSet left there (reset, so their strings keep their storage), then in appended ones. The code
// that fills it sees a vector: size(), emplace_back(), indexing, and resize() to drop the last ones.
class Events {
 public:
  explicit Events(std::vector<ResolvedEvent>& storage) : v_(storage) {}
  std::size_t size() const { return used_; }
  ResolvedEvent& emplace_back() {
    if (used_ < v_.size()) reset(v_[used_]);
    else v_.emplace_back();
    return v_[used_++];
  }
  void resize(std::size_t n) { used_ = std::min(n, used_); }  // drops the last ones (a rollback)
  ResolvedEvent& operator[](std::size_t i) { return v_[i]; }
  const ResolvedEvent& operator[](std::size_t i) const { return v_[i]; }
  void reserve(std::size_t n) {
    if (v_.capacity() < n) v_.reserve(n);
  }
  void finish() { v_.erase(v_.begin() + static_cast<std::ptrdiff_t>(used_), v_.end()); }

 private:
  std::vector<ResolvedEvent>& v_;
  std::size_t used_ = 0;
};

// Everything one event string resolves through.
class Resolver {
 public:
  Resolver(const ast::EventList& list, const Machine& machine) : list_(list), machine_(machine) {}
  void run(EventSet& set);

 private:
  const ast::EventList& list_;
  const Machine& machine_;

  std::string text(Span s) const { return list_.text.substr(s.begin, s.end - s.begin); }
  // Each appends what the event resolves to onto `out`, and nothing when it throws.
  void resolve_event(const ast::Event& ev, Events& out);
  void resolve_named(const ast::Event& ev, Events& out);
  void resolve_pmu_form(const ast::Event& ev, Events& out);
  void remember_name(const std::string& n, const std::vector<std::pair<const Pmu*, const spec::Alias*>>& found);
  void resolve_tracepoint(const ast::Event& ev, Events& out);
  [[noreturn]] void tracepoint_not_found(const ast::Event& ev, Span where);
  // `named`: a term naming the event that precedes ev's own terms (a bare alias name), with its alias
  // when the caller already looked it up.
  // `encoded`: that alias's encoding on `pmu`, when the caller knows it and knows that `named` can only
  // name the event there.
  void on_pmu(const ast::Event& ev, const Pmu& pmu, Events& out, const ast::Term* named = nullptr,
              const spec::Alias* named_alias = nullptr, const EncodedAlias* encoded = nullptr);
  void on_pmu_fill(const ast::Event& ev, const Pmu& pmu, ResolvedEvent& out, const ast::Term* named,
                   const spec::Alias* named_alias, const EncodedAlias* encoded);
  void generic(const ast::Event& ev, std::uint32_t type, std::uint64_t config, Events& out);
  // Appends an event for `ev` on `pmu` to `out`: the caller fills it in, and removes it if that throws.
  // `pmu` is the PMU's name; `found` the PMU itself when the machine has it (its placement is copied).
  // `looked_up` is false for the PMUs every kernel registers (software, tracepoint, breakpoint).
  ResolvedEvent& start(Events& out, const ast::Event& ev, std::string_view pmu, const Pmu* found,
                       bool looked_up = true) const;
  // start() on the PMU the kernel hands an event of `type` to.
  ResolvedEvent& start_for_type(Events& out, const ast::Event& ev, std::uint32_t type) const;
  void apply_alias(ResolvedEvent& out, const Pmu& pmu, const spec::Alias& alias, Span where,
                   std::vector<std::string>& required);
  // apply_alias through the Machine's memo: the same result, computed once per PMU and alias.
  const EncodedAlias& encoded_alias(const Pmu& pmu, const spec::Alias& alias, Span where, const Attr& blank);
  static void copy_encoded(ResolvedEvent& out, const EncodedAlias& from, std::vector<std::string>& required);
  bool apply_builtin(ResolvedEvent& out, const ast::Term& t, struct CallGraph& cg) const;
  void apply_format(ResolvedEvent& out, const Pmu& pmu, const spec::Format& f, const ast::Term& t,
                    bool from_alias) const;
  [[noreturn]] void unknown_term(const ast::Term& t, std::string_view what, const Pmu* pmu) const;
  const std::vector<const Pmu*>& cores() const;
  unsigned max_precise_for(const ResolvedEvent& e) const;
  std::pair<std::string_view, const Pmu*> pmu_of_type(std::uint32_t type) const;
  // Every name a bare event could have meant; views of names the Machine and the tables keep.
  std::vector<std::string_view> name_candidates() const;
  // `help`, plus a note naming the table files that could not be read (the name may be in one).
  std::string with_table_problems(std::string help) const;
  const ByLength& suggestable_names() const;
};

struct CallGraph {
  std::string mode;
  std::optional<std::uint32_t> stack_size;
};

ResolvedEvent& Resolver::start(Events& out, const ast::Event& ev, std::string_view pmu, const Pmu* found,
                               bool looked_up) const {
  ResolvedEvent& e = out.emplace_back();
  e.attr.size = attr_size_ver8;
  e.name.assign(list_.text, ev.span.begin, ev.span.end - ev.span.begin);
  e.pmu = pmu;
  if (found) {
    e.placement.cpumask = found->cpumask();
    e.placement.cpus = found->cpus();
  }
  e.placement.missing = looked_up && !found;
  e.span = ev.span;
  return e;
}

ResolvedEvent& Resolver::start_for_type(Events& out, const ast::Event& ev, std::uint32_t type) const {
  auto [name, pmu] = pmu_of_type(type);
  bool builtin = type == spec::type_software || type == spec::type_tracepoint || type == spec::type_breakpoint;
  return start(out, ev, name, pmu, !builtin && !name.empty());
}

const std::vector<const Pmu*>& Resolver::cores() const { return machine_.core_pmus(); }

// The PMU the kernel hands an event of `type` to, and its name: nullptr (and the name perf shows)
// for software, tracepoint and breakpoint events, which every kernel registers, and for a hardware
// event on a machine without a core PMU.
std::pair<std::string_view, const Pmu*> Resolver::pmu_of_type(std::uint32_t type) const {
  switch (type) {
    case spec::type_hardware:
    case spec::type_hw_cache:
    case spec::type_raw: {
      // Without an extended type the kernel hands these to the PMU registered as PERF_TYPE_RAW (4:
      // `cpu`, `cpu_core`); elsewhere (arm) to the core PMU.
      const auto& c = cores();
      for (const Pmu* p : c)
        if (p->type() == spec::type_raw) return {p->name(), p};
      if (c.empty()) return {"cpu", nullptr};
      return {c.front()->name(), c.front()};
    }
    case spec::type_software: return {"software", nullptr};
    case spec::type_tracepoint: return {"tracepoint", nullptr};
    case spec::type_breakpoint: return {"breakpoint", nullptr};
    default:
      for (const auto& n : machine_.pmu_names())
        if (const Pmu* p = machine_.pmu(n); p && p->type() == type) return {p->name(), p};
      return {{}, nullptr};
  }
}

unsigned Resolver::max_precise_for(const ResolvedEvent& e) const {
  if (e.pmu.empty()) return 0;
  if (const Pmu* p = machine_.pmu(e.pmu)) return p->max_precise();
  return 0;
}

[[noreturn]] void Resolver::unknown_term(const ast::Term& t, std::string_view what, const Pmu* pmu) const {
  std::vector<std::string> valid;
  if (pmu)
    for (const auto& f : pmu->formats()) valid.push_back(f.name);
  for (auto b : builtin_terms) valid.emplace_back(b);
  std::string help = fmt::format("valid terms: {}", fmt::join(valid, ","));
  throw Error(fmt::format("unknown term '{}' for {}", t.name, what), t.name_span, help);
}

bool Resolver::apply_builtin(ResolvedEvent& out, const ast::Term& t, CallGraph& cg) const {
  if (t.driver) {
    if (!out.driver_config.empty()) out.driver_config += ',';
    out.driver_config += t.kind == Value::none ? t.name : t.name + "=" + t.text;
    return true;
  }
  const Builtin which = builtin_of(t.name);
  if (which == Builtin::none) return false;
  Attr& a = out.attr;
  auto number = [&]() -> std::uint64_t {
    if (t.kind == Value::none) return 1;  // a bare built-in means 1
    if (t.kind != Value::number) throw Error("expected numeric value", t.value_span.end > t.value_span.begin ? t.value_span : t.span);
    return t.number;
  };
  auto string = [&]() -> std::string {
    if (t.kind != Value::name && t.kind != Value::quoted)
      throw Error("expected string value", t.kind == Value::none ? t.name_span : t.value_span);
    return t.text;
  };
  auto fits = [&](std::uint64_t v, std::uint64_t max) {
    if (v > max) throw Error(fmt::format("value {} for '{}' is too large, maximum is {}", v, t.name, max), t.value_span);
    return v;
  };
  switch (which) {
    case Builtin::config: a.config = number(); break;
    case Builtin::config1: a.config1 = number(); break;
    case Builtin::config2: a.config2 = number(); break;
    case Builtin::config3: a.config3 = number(); break;
    case Builtin::name: out.name = string(); break;
    case Builtin::period: a.sample_period = number(), a.freq = 0; break;
    case Builtin::freq: a.sample_period = number(), a.freq = 1; break;
    case Builtin::branch_type: {
      std::string v = string();
      auto it = std::find_if(std::begin(branch_modes), std::end(branch_modes), [&](auto& m) { return m.name == v; });
      if (it == std::end(branch_modes))
        throw Error(fmt::format("unknown branch type '{}'", v), t.value_span,
                    "valid: u, k, hv, any, any_call, any_ret, ind_call, abort_tx, in_tx, no_tx, cond, call_stack, "
                    "ind_jump, call, no_flags, no_cycles, save_type, hw_index, priv, counter");
      a.branch_sample_type |= it->bits;
      a.sample_type |= sample_branch_stack;
      break;
    }
    case Builtin::time:
      if (fits(number(), 1)) a.sample_type |= sample_time;
      else a.sample_type &= ~sample_time;
      break;
    case Builtin::call_graph: {
      std::string v = string();
      if (v != "fp" && v != "dwarf" && v != "lbr" && v != "no")
        throw Error(fmt::format("unknown call-graph mode '{}'", v), t.value_span, "valid: fp, dwarf, lbr, no");
      cg.mode = v;
      break;
    }
    case Builtin::stack_size: cg.stack_size = static_cast<std::uint32_t>(fits(number(), 0xffffffffu)); break;
    case Builtin::max_stack: a.sample_max_stack = static_cast<std::uint16_t>(fits(number(), 0xffff)); break;
    case Builtin::inherit: a.inherit = fits(number(), 1) != 0; break;
    case Builtin::no_inherit: a.inherit = fits(number(), 1) == 0; break;
    case Builtin::overwrite: a.write_backward = fits(number(), 1) != 0; break;
    case Builtin::no_overwrite: a.write_backward = fits(number(), 1) == 0; break;
    case Builtin::percore: out.percore = fits(number(), 1) != 0; break;
    case Builtin::aux_output: a.aux_output = fits(number(), 1) != 0; break;
    case Builtin::aux_sample_size:
      a.aux_sample_size = static_cast<std::uint32_t>(fits(number(), 0xffffffffu));
      a.sample_type |= sample_aux;
      break;
    case Builtin::metric_id: out.metric_id = string(); break;
    case Builtin::cpu:
      if (t.kind == Value::none) throw Error("expected a CPU list", t.name_span);
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
    // PERF_SAMPLE_BRANCH_USER | CALL_STACK | NO_FLAGS | NO_CYCLES | HW_INDEX, as perf record sets it
    a.branch_sample_type |= (1u << 0) | (1u << 11) | (1u << 14) | (1u << 15) | (1u << 17);
  }
}

void Resolver::apply_format(ResolvedEvent& out, const Pmu& pmu, const spec::Format& f, const ast::Term& t,
                            bool from_alias) const {
  // Format::width(), max_value() and scatter() each recompute the mask (width by a popcount that is a
  // library call without -mpopcnt): calling them here cost the single-string benchmark about 35 ns of
  // its 280. The same quantities, computed once; the ranges do not overlap (parse_format checks), so
  // their lengths add up to the width, and a single range scatters by a shift.
  const std::uint64_t mask = f.mask();
  unsigned width = 0;
  for (const auto& r : f.ranges) width += r.hi - r.lo + 1u;
  const std::uint64_t max_value = width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
  std::uint64_t v = 0;
  if (t.kind == Value::none) {
    if (width != 1)
      throw Error(fmt::format("no value assigned for term '{}'", t.name), t.name_span,
                  fmt::format("'{}' is {} bits wide in pmu '{}': write {}=N", t.name, width, pmu.name(), t.name));
    v = 1;
  } else if (t.kind == Value::number) {
    v = t.number;
  } else {
    throw Error("expected numeric value", t.value_span,
                fmt::format("'{}' is a {}-bit field of pmu '{}'", t.name, width, pmu.name()));
  }
  if (v > max_value) {
    if (from_alias)
      throw Error(fmt::format("value too big for format ({}), maximum is {} (in the alias of pmu '{}')", f.name,
                              max_value, pmu.name()));
    throw Error(fmt::format("value too big for format ({}), maximum is {}", f.name, max_value), t.value_span);
  }
  std::uint64_t* words[] = {&out.attr.config, &out.attr.config1, &out.attr.config2, &out.attr.config3};
  std::uint64_t& w = *words[f.word];
  // A later term replaces an earlier one's bits (perf 6.1 ORed them; current perf replaces).
  w = (w & ~mask) | (f.ranges.size() == 1 ? (v << f.ranges.front().lo) & mask : f.scatter(v));
}

void Resolver::apply_alias(ResolvedEvent& out, const Pmu& pmu, const spec::Alias& alias, Span where,
                           std::vector<std::string>& required) {
  const std::vector<ast::Term>* terms = nullptr;
  // Where the definition came from, for messages only.
  auto file = [&] {
    return alias.source == spec::Source::sysfs ? fmt::format("event file '{}'", alias.origin)
                                               : fmt::format("event '{}' of table '{}'", alias.name, alias.origin);
  };
  try {
    terms = &parsed_terms(alias.terms);
  } catch (const Error& e) {
    throw Error(fmt::format("pmu '{}': {} holds '{}': {}", pmu.name(), file(), alias.terms, e.message()), where);
  }
  CallGraph cg;
  for (const auto& t : *terms) {
    if (t.kind == Value::query) {
      required.push_back(t.name);
      continue;
    }
    try {
      if (apply_builtin(out, t, cg)) continue;
      if (const auto* f = pmu.format(t.name)) {
        apply_format(out, pmu, *f, t, true);
        continue;
      }
    } catch (const Error& e) {
      throw Error(fmt::format("pmu '{}': {}: {}", pmu.name(), file(), e.message()), where);
    }
    throw Error(fmt::format("pmu '{}': {} uses term '{}', which the pmu has no format for", pmu.name(), file(), t.name),
                where);
  }
  finish_call_graph(out.attr, cg);
  if (!alias.scale_text.empty()) out.scale = alias.scale;
  out.unit = alias.unit;
  out.per_pkg = alias.per_pkg;
  out.snapshot = alias.snapshot;
}

const EncodedAlias& Resolver::encoded_alias(const Pmu& pmu, const spec::Alias& alias, Span where,
                                            const Attr& blank) {
  auto& memo = MachineMemo::of(machine_);
  const EncodedAlias* found = nullptr;
  const MachineMemo::Key key{&pmu, &alias};
  {
    std::lock_guard lock(memo.mutex);
    if (auto it = memo.aliases.find(key); it != memo.aliases.end()) found = &it->second;
  }
  if (!found) {
    // A definition that does not apply throws here, each time, pointing at `where`: failures are not kept.
    EncodedAlias e;
    e.event.attr = blank;  // blank but for size and type
    apply_alias(e.event, pmu, alias, where, e.required);
    for (const auto& t : parsed_terms(alias.terms))
      if (!t.driver && t.name == std::string_view("name")) e.sets_name = true;
    std::lock_guard lock(memo.mutex);
    found = &memo.aliases.emplace(key, std::move(e)).first->second;  // nodes stay where they are
  }
  return *found;
}

void Resolver::copy_encoded(ResolvedEvent& out, const EncodedAlias& encoded, std::vector<std::string>& required) {
  // `out` is fresh from start(): its strings are empty, so only what the definition set is copied.
  const ResolvedEvent& from = encoded.event;
  out.attr = from.attr;
  if (encoded.sets_name) out.name = from.name;
  out.scale = from.scale;
  if (!from.unit.empty()) out.unit = from.unit;
  out.per_pkg = from.per_pkg;
  out.snapshot = from.snapshot;
  if (!from.metric_id.empty()) out.metric_id = from.metric_id;
  if (!from.driver_config.empty()) out.driver_config = from.driver_config;
  if (!from.cpus.empty()) out.cpus = from.cpus;
  out.percore = from.percore;
  if (!encoded.required.empty()) required = encoded.required;
}

// One event on one PMU from `pmu/terms/`, a bare alias name, or `pmu/alias/`.
void Resolver::on_pmu(const ast::Event& ev, const Pmu& pmu, Events& result, const ast::Term* named,
                      const spec::Alias* named_alias, const EncodedAlias* encoded) {
  std::size_t mark = result.size();
  try {
    on_pmu_fill(ev, pmu, start(result, ev, pmu.name(), &pmu), named, named_alias, encoded);
  } catch (...) {
    result.resize(mark);
    throw;
  }
}

void Resolver::on_pmu_fill(const ast::Event& ev, const Pmu& pmu, ResolvedEvent& out, const ast::Term* named,
                           const spec::Alias* named_alias, const EncodedAlias* encoded) {
  out.attr.type = pmu.type();

  // Which term names an event (an alias, a hardware or cache symbol), if any.
  const ast::Term* event_term = nullptr;
  const spec::Alias* alias = nullptr;
  const spec::Symbol* symbol = nullptr;
  std::optional<spec::CacheName> cache;
  // The caller's lookup stands when the name can only be the event (the checks of the loop below).
  if (named && named_alias &&
      (encoded || (!is_builtin_term(named->name) && !pmu.format(named->name) && !raw_term_value(named->name)))) {
    event_term = named;
    alias = named_alias;
  }
  auto each_term = [&](auto&& f) {
    if (named) f(*named);
    for (const auto& t : ev.terms) f(t);
  };
  each_term([&](const ast::Term& t) {
    if (&t == event_term) return;
    if (t.driver || is_builtin_term(t.name)) return;
    bool names_event = false;
    if (t.kind == Value::none && !pmu.format(t.name) && !raw_term_value(t.name)) {
      if (const auto* a = machine_.alias(pmu, t.name)) alias = a, names_event = true;
      else if (const auto* s = spec::find_symbol(t.name); s && s->type == spec::type_hardware && pmu.is_core())
        symbol = s, names_event = true;
      else if (auto c = spec::parse_cache_name(t.name); c && pmu.is_core()) cache = c, names_event = true;
    } else if (t.name == std::string_view("event") && (t.kind == Value::name || t.kind == Value::quoted)) {
      alias = machine_.alias(pmu, t.text);
      if (!alias) {
        std::vector<std::string> names;
        for (const auto& a : pmu.aliases()) names.push_back(a.name);
        for (const spec::TableEvent* e : machine_.table_events(pmu)) names.push_back(e->alias.name);
        throw Error(fmt::format("unknown event '{}' for pmu '{}'", t.text, pmu.name()), t.value_span,
                    with_table_problems(suggest(t.text, names)));
      }
      names_event = true;
    }
    if (names_event) {
      if (event_term)
        throw Error(fmt::format("more than one event named in the terms of pmu '{}'", pmu.name()), t.span,
                    fmt::format("'{}' already names the event", text(event_term->span)));
      event_term = &t;
    }
  });

  std::vector<std::string> required;
  if (alias) {
    copy_encoded(out, encoded && alias == named_alias ? *encoded : encoded_alias(pmu, *alias, event_term->span, out.attr),
                 required);
    // Privilege levels carried by the definition itself (libpfm4's `:u`); event modifiers still apply.
    if (alias->modifiers == std::string_view("u")) out.attr.exclude_kernel = out.attr.exclude_hv = 1;
    if (alias->modifiers == std::string_view("k")) out.attr.exclude_user = out.attr.exclude_hv = 1;
  } else if (symbol || cache) {
    // A legacy hardware or cache event addressed to this core PMU (`cpu_atom/cycles/`): the generic type
    // with the PMU's type as extended type on hybrid machines.
    out.attr.type = symbol ? spec::type_hardware : spec::type_hw_cache;
    if (cache && !cache->invalid.empty())
      throw Error(fmt::format("invalid cache event '{}': {}", event_term->name, cache->invalid), event_term->span);
    out.attr.config = symbol ? symbol->config : cache->event.config();
    if (cores().size() > 1) out.attr.config |= std::uint64_t{pmu.type()} << 32;
  }

  CallGraph cg;
  each_term([&](const ast::Term& t) {
    if (&t == event_term) return;
    if (apply_builtin(out, t, cg)) return;
    if (symbol || cache) unknown_term(t, fmt::format("event '{}'", event_term->name), nullptr);
    if (const auto* f = pmu.format(t.name)) {
      apply_format(out, pmu, *f, t, false);
      if (!required.empty()) std::erase(required, t.name);
      return;
    }
    if (auto raw = raw_term_value(t.name); raw && t.kind == Value::none) {
      out.attr.config = *raw;
      return;
    }
    if (t.kind == Value::none && (machine_.alias(pmu, t.name) || spec::find_symbol(t.name)))
      throw Error(fmt::format("more than one event named in the terms of pmu '{}'", pmu.name()), t.span);
    unknown_term(t, fmt::format("pmu '{}'", pmu.name()), &pmu);
  });
  if (!required.empty())
    throw Error(fmt::format("event '{}' of pmu '{}' needs '{}=N'", alias->name, pmu.name(), required.front()),
                event_term->span, fmt::format("its definition says {}=?", required.front()));
  finish_call_graph(out.attr, cg);
}

// Hardware, cache and numeric events of the generic types: on a hybrid machine one event per core PMU
// with that PMU's type in config bits 32-63 (the extended type).
void Resolver::generic(const ast::Event& ev, std::uint32_t type, std::uint64_t config,
                       Events& out) {
  std::size_t first = out.size();
  // Only the symbolic forms fan out; `0:1` and `r1a8` are taken literally, as current perf does
  // (perf 6.1 also fanned raw and numeric events out over hybrid PMUs).
  std::vector<const Pmu*> targets;
  bool symbolic = ev.kind == ast::EventKind::named || ev.kind == ast::EventKind::pmu;
  if (symbolic && (type == spec::type_hardware || type == spec::type_hw_cache)) {
    const auto& c = cores();
    if (c.size() > 1) targets = c;
  }
  auto make = [&](const Pmu* pmu) {
    ResolvedEvent& e = pmu ? start(out, ev, pmu->name(), pmu) : start_for_type(out, ev, type);
    e.attr.type = type;
    e.attr.config = config | (pmu ? std::uint64_t{pmu->type()} << 32 : 0);
    CallGraph cg;
    for (const auto& t : ev.terms)
      if (!apply_builtin(e, t, cg)) {
        // The event as written up to its terms: `cycles`, `r1a8`, `4:0x1a8`.
        Span head{ev.span.begin, ev.has_terms ? ev.terms_span.begin : ev.span.end};
        unknown_term(t, fmt::format("event '{}'", text(head)), nullptr);
      }
    finish_call_graph(e.attr, cg);
  };
  try {
    if (targets.empty()) make(nullptr);
    for (const Pmu* p : targets) make(p);
  } catch (...) {
    out.resize(first);  // all or nothing
    throw;
  }
}

const ByLength& Resolver::suggestable_names() const {
  auto& memo = MachineMemo::of(machine_);
  std::call_once(memo.suggestable_once, [&] { memo.suggestable = by_length(name_candidates()); });
  return memo.suggestable;
}

std::vector<std::string_view> Resolver::name_candidates() const {
  std::vector<std::string_view> names;
  for (const auto& s : spec::symbols()) names.push_back(s.name);
  for (const auto& n : machine_.pmu_names())
    if (const Pmu* p = machine_.pmu(n))
      for (const auto& a : p->aliases()) names.push_back(a.name);
  for (const spec::EventTables* tables : {machine_.tables(), machine_.sys_tables()})
    if (tables) {
      auto more = tables->names();
      names.insert(names.end(), more.begin(), more.end());
    }
  return names;
}

void Resolver::resolve_named(const ast::Event& ev, Events& out) {
  const std::string& n = ev.name;
  const auto* symbol = spec::find_symbol(n);
  // `cpu/terms/`: straight to the PMU (no PMU is named like a cache event).
  if (ev.kind == ast::EventKind::pmu && !symbol)
    if (const Pmu* pmu = machine_.find_pmu(n)) return on_pmu(ev, *pmu, out);
  if (symbol) return generic(ev, symbol->type, symbol->config, out);
  auto cache = spec::parse_cache_name(n);
  if (!cache) cache = spec::parse_dotted_cache(n);
  if (cache) {
    if (!cache->invalid.empty())
      throw Error(fmt::format("invalid cache event '{}': {}", n, cache->invalid), ev.name_span);
    return generic(ev, spec::type_hw_cache, cache->event.config(), out);
  }
  if (ev.kind == ast::EventKind::pmu) return resolve_pmu_form(ev, out);
  // A bare alias name: that event on every PMU that has it, all or nothing. The name as a term naming
  // the event; one per thread, so that its string keeps its storage.
  thread_local ast::Term t;
  auto on_each = [&](const auto& targets, auto&& one) {
    t.name.assign(n);
    t.span = t.name_span = ev.name_span;
    std::size_t first = out.size();
    try {
      for (const auto& target : targets) one(target);
    } catch (...) {
      out.resize(first);
      throw;
    }
  };
  auto& memo = MachineMemo::of(machine_);
  const std::vector<MachineMemo::NamedTarget>* known = nullptr;
  {
    std::lock_guard lock(memo.mutex);
    if (auto it = memo.named.find(std::string_view(n)); it != memo.named.end()) known = it->second.get();
  }
  if (known)  // this name resolved before: its PMUs, aliases and their encodings are known
    return on_each(*known, [&](const MachineMemo::NamedTarget& k) { on_pmu(ev, *k.pmu, out, &t, k.alias, k.encoded); });
  if (const auto& found = machine_.aliases_named(n); !found.empty()) {
    on_each(found, [&](const auto& target) { on_pmu(ev, *target.first, out, &t, target.second); });
    return remember_name(n, found);
  }
  if (n.find("::") != std::string::npos)
    throw Error(fmt::format("unknown event '{}'", n), ev.name_span,
                spec::pfm::available() ? "libpfm4 does not know it for this CPU (LIBPFM_FORCE_PMU picks another model)"
                                       : "names of the form 'pmu::EVENT:UMASK' need libpfm4, which this build lacks");
  if (machine_.pmu(n))
    throw Error(fmt::format("'{}' is a PMU, not an event", n), ev.name_span,
                fmt::format("write '{}/.../' with terms, e.g. '{}/config=0x1/'", n, n));
  throw Error(fmt::format("unknown event '{}'", n), ev.name_span,
              with_table_problems(n.size() > max_suggest_length ? std::string{} : suggest(n, suggestable_names())));
}

std::string Resolver::with_table_problems(std::string help) const {
  // A table file that could not be read may be where the name is defined: say so, with the file.
  auto problems = machine_.table_problems();
  if (problems.empty()) return help;
  std::string note = fmt::format("the event tables have {} file(s) that could not be read, which may define it: {}",
                                 problems.size(), problems.front().text());
  return help.empty() ? note : help + "\n" + note;
}

void Resolver::remember_name(const std::string& n, const std::vector<std::pair<const Pmu*, const spec::Alias*>>& found) {
  // Kept only when the name can be nothing but the event on each PMU (on_pmu_fill's test) and each
  // encoding is in the memo, which it is after a resolve that used it succeeded. Names are kept as
  // written, so the spellings of a name in other cases are kept apart; past a bound (far more than
  // any table has names) no more are kept, and those resolve by the longer way.
  if (is_builtin_term(n) || raw_term_value(n)) return;
  std::vector<MachineMemo::NamedTarget> targets;
  auto& memo = MachineMemo::of(machine_);
  std::lock_guard lock(memo.mutex);
  if (memo.named.size() >= MachineMemo::max_named) return;
  for (auto [pmu, alias] : found) {
    if (pmu->format(n)) return;
    auto it = memo.aliases.find(MachineMemo::Key{pmu, alias});
    if (it == memo.aliases.end()) return;
    targets.push_back({pmu, alias, &it->second});
  }
  memo.named.emplace(n, std::make_unique<const std::vector<MachineMemo::NamedTarget>>(std::move(targets)));
}

void Resolver::resolve_pmu_form(const ast::Event& ev, Events& out) {
  if (const Pmu* pmu = machine_.find_pmu(ev.name)) return on_pmu(ev, *pmu, out);
  // Folders without a readable `type` are not PMUs.
  auto matches = machine_.pmu_names() | ranges::views::filter([&](const std::string& n) {
                   if (spec::pmu_name_matches(ev.name, n)) return machine_.pmu(n) != nullptr;
                   // or by its `alias` file; a PMU that cannot be read is not one the name asked for
                   try {
                     const Pmu* p = machine_.pmu(n);
                     return p && !p->alias_name().empty() && spec::pmu_name_matches(ev.name, p->alias_name());
                   } catch (const Error&) {
                     return false;
                   }
                 }) |
                 ranges::to<std::vector<std::string>>();
  if (matches.empty()) {
    throw Error(fmt::format("unknown PMU '{}'", ev.name), ev.name_span,
                suggest(ev.name, machine_.pmu_names()).empty()
                    ? fmt::format("PMUs of this machine: {}", fmt::join(machine_.pmu_names(), ", "))
                    : suggest(ev.name, machine_.pmu_names()));
  }
  std::sort(matches.begin(), matches.end(), natural_less);
  // A wildcard adds the event on every matching PMU that accepts the terms; it is an error only when
  // none does (as perf does for uncore PMUs that differ in their aliases).
  std::size_t first = out.size();
  std::optional<Error> first_error;
  for (const auto& n : matches) {
    const Pmu* pmu = machine_.pmu(n);
    if (!pmu) continue;
    try {
      on_pmu(ev, *pmu, out);
    } catch (const Error& e) {
      if (!first_error) first_error = e;
    }
  }
  if (out.size() == first && first_error) throw *first_error;
}

// Says which it is: tracefs missing or unreadable (each with its remedy), or no such tracepoint, with
// the closest names that exist.
void Resolver::tracepoint_not_found(const ast::Event& ev, Span where) {
  using Kind = spec::Machine::TracefsProblem::Kind;
  std::string text = fmt::format("{}:{}", ev.name, ev.tp_event);
  auto problem = machine_.tracefs_problem(ev.name, ev.tp_event);
  std::string message =
      fmt::format("{} '{}'", problem.kind == Kind::denied ? "cannot look up tracepoint" : "unknown tracepoint", text);
  if (!problem.reason.empty()) message += ": " + problem.reason;
  std::string help = std::move(problem.remedy);
  bool glob = has_glob(ev.name) || has_glob(ev.tp_event);
  if (problem.kind == Kind::none && !glob && text.size() <= max_suggest_length)
    help = suggest(text, machine_.tracepoint_names());
  throw Error(std::move(message), where, std::move(help));
}

void Resolver::resolve_tracepoint(const ast::Event& ev, Events& out) {
  std::vector<std::pair<std::string, std::string>> found;
  if (has_glob(ev.name) || has_glob(ev.tp_event)) {
    found = machine_.tracepoints(ev.name, ev.tp_event);
  } else if (machine_.tracepoint_id(ev.name, ev.tp_event)) {
    found.emplace_back(ev.name, ev.tp_event);
  }
  Span where{ev.name_span.begin, ev.tp_event_span.end};
  if (found.empty() && !has_glob(ev.name) && !has_glob(ev.tp_event)) {
    // `INST_RETIRED:ANY_P` is libpfm4's form of a core event, not a tracepoint.
    ast::Term t;
    t.name = ev.name + ":" + ev.tp_event;
    t.span = t.name_span = where;
    std::size_t first = out.size();
    try {
      for (const Pmu* pmu : cores())
        if (const spec::Alias* alias = machine_.alias(*pmu, t.name)) on_pmu(ev, *pmu, out, &t, alias);
    } catch (...) {
      out.resize(first);
      throw;
    }
    if (out.size() > first) return;
  }
  if (found.empty()) tracepoint_not_found(ev, where);
  std::string suffix = list_.text.substr(ev.tp_event_span.end, ev.span.end - ev.tp_event_span.end);
  std::size_t first = out.size();
  try {
    for (const auto& [sys, name] : found) {
      ResolvedEvent& e = start(out, ev, "tracepoint", nullptr, false);
      if (found.size() > 1 || has_glob(ev.name) || has_glob(ev.tp_event)) e.name = sys + ":" + name + suffix;
      e.attr.type = spec::type_tracepoint;
      e.attr.config = *machine_.tracepoint_id(sys, name);
      // As perf's evsel__newtp_idx: every sample carries the raw record, time, CPU and period.
      e.attr.sample_type = sample_raw | sample_time | sample_cpu | sample_period_bit;
      e.attr.sample_period = 1;
      CallGraph cg;
      for (const auto& t : ev.terms)
        if (!apply_builtin(e, t, cg)) unknown_term(t, fmt::format("tracepoint '{}:{}'", sys, name), nullptr);
      finish_call_graph(e.attr, cg);
    }
  } catch (...) {
    out.resize(first);
    throw;
  }
}

void Resolver::resolve_event(const ast::Event& ev, Events& out) {
  try {
    switch (ev.kind) {
      case ast::EventKind::named:
      case ast::EventKind::pmu: return resolve_named(ev, out);
      case ast::EventKind::tracepoint: return resolve_tracepoint(ev, out);
      case ast::EventKind::raw: return generic(ev, spec::type_raw, ev.number1, out);
      case ast::EventKind::numeric: return generic(ev, static_cast<std::uint32_t>(ev.number1), ev.number2, out);
      case ast::EventKind::breakpoint: {
        std::size_t mark = out.size();
        ResolvedEvent& e = start(out, ev, "breakpoint", nullptr, false);
        try {
          e.attr.type = spec::type_breakpoint;
          e.attr.bp_type = 0;
          for (char c : ev.access) e.attr.bp_type |= c == 'r' ? 1u : c == 'w' ? 2u : 4u;
          if (ev.access.empty()) e.attr.bp_type = 3;  // HW_BREAKPOINT_RW
          e.attr.config1 = ev.number1;
          e.attr.config2 = ev.has_length ? ev.number2 : ev.access == "x" ? sizeof(long) : 4;
          e.attr.sample_period = 1;
          CallGraph cg;
          for (const auto& t : ev.terms)
            if (!apply_builtin(e, t, cg)) unknown_term(t, "breakpoint event", nullptr);
          finish_call_graph(e.attr, cg);
        } catch (...) {
          out.resize(mark);
          throw;
        }
        return;
      }
    }
  } catch (const Error& e) {
    if (e.positioned()) throw;
    // A sysfs problem met while resolving: keep the file's message, point at the event.
    throw Error(e.message(), ev.span, e.help());
  }
}

// A modifier letter is there (modifiers are a few letters: a loop, not a memchr call).
bool has_letter(const ast::Modifiers& m, char c) { return std::find(m.letters.begin(), m.letters.end(), c) != m.letters.end(); }

// Software-context events (software, tracepoint, breakpoint) may join a group on any PMU.
bool any_pmu_can_host(const ResolvedEvent& e) {
  return e.attr.type == spec::type_software || e.attr.type == spec::type_tracepoint ||
         e.attr.type == spec::type_breakpoint;
}

void Resolver::run(EventSet& set) {
  Events events(set.events);
  std::size_t groups_used = 0;
  auto new_group = [&]() -> EventGroup& {
    if (groups_used < set.groups.size()) reset(set.groups[groups_used]);
    else set.groups.emplace_back();
    return set.groups[groups_used++];
  };
  std::size_t written = 0;
  for (const auto& item : list_.items) written += item.events.size();
  events.reserve(written);
  if (set.groups.capacity() < list_.items.size()) set.groups.reserve(list_.items.size());
  std::vector<const ast::Event*> from;  // the written event of each produced one, for this item
  for (const auto& item : list_.items) {
    std::size_t first = events.size();
    if (!item.braces) {
      // A lone event: each event it resolves to (a wildcard gives several) is a group of one.
      const ast::Event& ev = item.events.front();
      resolve_event(ev, events);
      if (events.size() == first) throw Error(fmt::format("'{}' matched no event", text(ev.span)), ev.span);
      unsigned max_precise = 0;
      for (std::size_t index = first; index < events.size(); ++index) {
        ResolvedEvent& e = events[index];
        e.group = groups_used;
        e.leader = index;
        if (has_letter(ev.modifiers, 'P')) max_precise = max_precise_for(e);
        apply_modifiers(e, ev.modifiers, nullptr, Placement{true, false}, max_precise);
        EventGroup& g = new_group();
        g.name = item.group_name;
        g.members.push_back(index);
      }
      continue;
    }
    from.clear();
    for (const auto& ev : item.events) {
      std::size_t before = events.size();
      resolve_event(ev, events);
      if (events.size() == before) throw Error(fmt::format("'{}' matched no event", text(ev.span)), ev.span);
      from.resize(events.size() - first, &ev);
    }
    std::size_t produced = events.size() - first;

    // The kernel schedules a group on one PMU. A written group whose events landed on several PMUs
    // (a hybrid machine's `{cycles,instructions}`, or a wildcard over uncore PMUs) is split into one
    // group per PMU in order of first appearance, as perf does; software-context events stay with the
    // first group.
    std::vector<std::size_t> slot(produced, 0);
    std::size_t slots = 1;
    {
      std::vector<const std::string*> order;
      for (std::size_t i = 0; i < produced; ++i) {
        const ResolvedEvent& e = events[first + i];
        if (any_pmu_can_host(e)) continue;
        auto it = std::find_if(order.begin(), order.end(), [&](const std::string* p) { return *p == e.pmu; });
        slot[i] = static_cast<std::size_t>(it - order.begin());
        if (it == order.end()) order.push_back(&e.pmu);
      }
      slots = std::max<std::size_t>(order.size(), 1);
      if (!std::is_sorted(slot.begin(), slot.end())) {
        // Reorder the produced events group by group, keeping their order within each group.
        std::vector<std::size_t> perm(produced);
        for (std::size_t i = 0; i < produced; ++i) perm[i] = i;
        std::stable_sort(perm.begin(), perm.end(), [&](std::size_t a, std::size_t b) { return slot[a] < slot[b]; });
        std::vector<ResolvedEvent> moved;
        std::vector<const ast::Event*> origin;
        std::vector<std::size_t> slots_sorted;
        for (std::size_t i : perm) {
          moved.push_back(std::move(events[first + i]));
          origin.push_back(from[i]);
          slots_sorted.push_back(slot[i]);
        }
        for (std::size_t i = 0; i < produced; ++i) events[first + i] = std::move(moved[i]);
        from = std::move(origin);
        slot = std::move(slots_sorted);
      }
    }

    bool group_P = has_letter(item.modifiers, 'P');
    bool weak = has_letter(item.modifiers, 'W');
    for (std::size_t s = 0, i = 0; s < slots; ++s) {
      std::size_t group_index = groups_used;
      EventGroup& g = new_group();
      g.braces = true;
      g.name = item.group_name;
      g.weak = weak;
      std::size_t leader = first + i;
      std::size_t size = 0;
      while (i + size < produced && slot[i + size] == s) ++size;
      g.members.reserve(size);
      for (std::size_t k = 0; k < size; ++k, ++i) {
        std::size_t index = first + i;
        ResolvedEvent& e = events[index];
        e.group = group_index;
        e.leader = leader;
        Placement place{index == leader, size > 1};
        bool wants_max = has_letter(from[i]->modifiers, 'P') || group_P;
        apply_modifiers(e, from[i]->modifiers, &item.modifiers, place, wants_max ? max_precise_for(e) : 0);
        g.members.push_back(index);
      }
    }
  }
  events.finish();
  set.groups.erase(set.groups.begin() + static_cast<std::ptrdiff_t>(groups_used), set.groups.end());
}

}  // namespace
}  // namespace resolver

void resolve(const ast::EventList& list, const spec::Machine& machine, EventSet& out) {
  resolver::Resolver(list, machine).run(out);
}

EventSet resolve(const ast::EventList& list, const spec::Machine& machine) {
  EventSet set;
  resolve(list, machine, set);
  return set;
}

void resolve(std::string_view text, const spec::Machine& machine, EventSet& out) {
  // The syntax tree lives only for this call: each thread parses into one kept list, which reuses its
  // storage from call to call. A list that grew large is given back rather than kept.
  thread_local ast::EventList scratch;
  thread_local bool in_use = false;
  if (in_use) return resolve(parse(text), machine, out);  // a nested call (none today) gets its own
  struct Release {
    ast::EventList& list;
    ~Release() {
      in_use = false;
      if (list.text.size() > 16384 || list.items.size() > 256) list = ast::EventList{};
    }
  } release{scratch};
  in_use = true;
  parse(text, scratch);
  resolve(scratch, machine, out);
}

EventSet resolve(std::string_view text, const spec::Machine& machine) {
  EventSet set;
  resolve(text, machine, set);
  return set;
}

}  // namespace perfspec
