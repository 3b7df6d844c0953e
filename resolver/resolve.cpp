// SPDX-License-Identifier: MIT
// An event list's events by kind: named events and symbols, PMU forms, generic types, breakpoints;
// and the public resolve() calls. PMU events are in pmu_event.cpp, tracepoints in tracepoint.cpp,
// grouping in groups.cpp.
#include <fnmatch.h>

#include <algorithm>
#include <mutex>

#include <fmt/format.h>

#include <range/v3/range/conversion.hpp>
#include <range/v3/view/filter.hpp>
#include "perfspec/event_source.hpp"

#include "perfspec/parse.hpp"
#include "perfspec/resolve.hpp"
#include "perfspec/tables.hpp"
#include "resolver/resolver.hpp"
#include "resolver/suggest.hpp"
#include "resolver/terms.hpp"
#include "spec/abi.hpp"
#include "spec/ascii.hpp"
#include "spec/libpfm4.hpp"

namespace perfspec {
namespace resolver {

namespace {

// What to do about a `model::EVENT` name libpfm4 does not know, from the models libpfm4 uses: which
// one it took (from this CPU, or from LIBPFM_FORCE_PMU, which it reads once per process), a prefix
// naming another, or a forced name that is no model at all (then libpfm4 has no core events).
std::string libpfm4_help(std::string_view name, const spec::Machine& machine) {
  if (!spec::pfm::available())
    return "names of the form 'pmu::EVENT:UMASK' need libpfm4, which this build lacks";
  if (machine.options().libpfm4 && !spec::pfm::describes(machine))
    return fmt::format(
        "libpfm4 knows this host's CPU, and the machine here is another ({}): LIBPFM_FORCE_PMU names the "
        "model for libpfm4 to take (e.g. 'skx', 'amd64_fam19h_zen3')",
        machine.cpuid());
  const auto& m = spec::pfm::models();
  std::string prefix(name.substr(0, name.find("::")));
  auto quoted = [](const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
    return out;
  };
  if (m.forced && m.active.empty()) {
    std::string close = suggest(*m.forced, m.known);
    return fmt::format(
        "LIBPFM_FORCE_PMU='{}' names no CPU model this libpfm4 knows, so it has no core events{}", *m.forced,
        close.empty() ? "" : "; " + close);
  }
  if (m.active.empty())
    return "libpfm4 knows no model of this CPU; LIBPFM_FORCE_PMU picks one by libpfm4's name for it (e.g. "
           "'skx', 'amd64_fam19h_zen3')";
  // An empty LIBPFM_FORCE_PMU is still set for libpfm4, which then takes the first model it has.
  std::string model =
      !m.forced ? fmt::format("this CPU's model {} (LIBPFM_FORCE_PMU picks another)", quoted(m.active))
      : m.forced->empty() ? fmt::format("model {} (LIBPFM_FORCE_PMU is set but empty: libpfm4's first model)",
                                        quoted(m.active))
                          : fmt::format("model {} (LIBPFM_FORCE_PMU)", quoted(m.active));
  if (name.find("::") == std::string_view::npos ||
      std::find(m.active.begin(), m.active.end(), prefix) != m.active.end())
    return fmt::format("libpfm4 does not know it for {}", model);
  return fmt::format("perfspec takes libpfm4's core events of {}, and '{}' is not it", model, prefix);
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

}  // namespace

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
  bool builtin =
      type == spec::type_software || type == spec::type_tracepoint || type == spec::type_breakpoint;
  return start(out, ev, name, pmu, !builtin && !name.empty());
}

const std::vector<const Pmu*>& Resolver::cores() const { return machine_.core_pmus(); }

namespace {
std::vector<std::string_view> pmu_names_of(const std::vector<const Pmu*>& pmus) {
  std::vector<std::string_view> names;
  for (const Pmu* p : pmus) names.push_back(p->name());
  return names;
}
std::vector<std::string_view> pmu_names_of(const Resolver::Named& found) {
  std::vector<std::string_view> names;
  for (const auto& t : found) names.push_back(t.first->name());
  return names;
}
}  // namespace

// The PMUs that have an alias of the event's name, but those the filter leaves out (into `kept`): an
// error when only those have it.
const Resolver::Named& Resolver::aliases_named(const ast::Event& ev, Named& kept) const {
  const Named& found = machine_.aliases_named(ev.name);
  if (options_.pmu_filter.empty()) return found;
  for (const auto& target : found)
    if (!filtered_out(target.first->name())) kept.push_back(target);
  if (kept.empty() && !found.empty())
    throw Error(ErrorKind::unknown_name,
                fmt::format("PMU '{}' has no event '{}' (--cputype)", options_.pmu_filter, ev.name),
                ev.name_span,
                fmt::format("'{}' is an event of {}", ev.name, fmt::join(pmu_names_of(found), ", ")));
  return kept;
}

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
      if (const Pmu* p = machine_.pmu_of_type(type)) return {p->name(), p};
      return {{}, nullptr};
  }
}

unsigned Resolver::max_precise_for(const ResolvedEvent& e) const {
  if (e.pmu.empty()) return 0;
  if (const Pmu* p = machine_.pmu(e.pmu)) return p->max_precise();
  return 0;
}

// Hardware, cache and numeric events of the generic types: on a hybrid machine one event per core PMU
// with that PMU's type in config bits 32-63 (the extended type).
void Resolver::generic(const ast::Event& ev, std::uint32_t type, std::uint64_t config, Events& out) {
  std::size_t first = out.size();
  // Only the symbolic forms fan out; `0:1` and `r1a8` are taken literally, as current perf does
  // (perf 6.1 also fanned raw and numeric events out over hybrid PMUs).
  std::vector<const Pmu*> targets;
  bool symbolic = ev.kind == ast::EventKind::named || ev.kind == ast::EventKind::pmu;
  if (symbolic && (type == spec::type_hardware || type == spec::type_hw_cache)) {
    const auto& c = cores();
    if (c.size() > 1)
      for (const Pmu* p : c)
        if (!filtered_out(p->name())) targets.push_back(p);
    if (c.size() > 1 && targets.empty())
      throw Error(ErrorKind::unknown_name,
                  fmt::format("'{}' is counted by the core PMUs ({}), and --cputype picks '{}'", ev.name,
                              fmt::join(pmu_names_of(c), ", "), options_.pmu_filter),
                  ev.name_span);
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
  for (std::string_view t : {"duration_time", "user_time", "system_time"}) names.push_back(t);
  for (const spec::EventSource* source : machine_.sources()) source->all_names(names);
  return names;
}

// perf's tool events, by exact name (perf's lexer is case-sensitive here too).
static ToolEvent tool_event(std::string_view name) {
  if (name == "duration_time") return ToolEvent::duration_time;
  if (name == "user_time") return ToolEvent::user_time;
  if (name == "system_time") return ToolEvent::system_time;
  return ToolEvent::none;
}

// A bare alias name: that event on every PMU that has it, all or nothing. The name as a term naming
// the event; one per thread, so that its string keeps its storage.
template <typename Targets, typename One>
void Resolver::on_each_target(const ast::Event& ev, const Targets& targets, Events& out, One&& one) {
  thread_local ast::Term t;
  t.name.assign(ev.name);
  t.span = t.name_span = ev.name_span;
  std::size_t first = out.size();
  try {
    for (const auto& target : targets) one(target, t);
  } catch (...) {
    out.resize(first);
    throw;
  }
}

const std::vector<MachineMemo::NamedTarget>* Resolver::remembered_name(std::string_view n) const {
  auto& memo = MachineMemo::of(machine_);
  std::lock_guard lock(memo.mutex);
  auto it = memo.named.find(n);
  return it != memo.named.end() ? it->second.get() : nullptr;
}

// This name resolved before: its PMUs, aliases and their encodings are known.
void Resolver::on_known_name(const ast::Event& ev, const std::vector<MachineMemo::NamedTarget>& known,
                             Events& out) {
  on_each_target(ev, known, out, [&](const MachineMemo::NamedTarget& k, const ast::Term& t) {
    on_pmu(ev, *k.pmu, out, KnownName{&t, k.alias, k.encoded});
  });
}

void Resolver::resolve_named(const ast::Event& ev, Events& out) {
  const std::string& n = ev.name;
  const auto* symbol = spec::find_symbol(n);
  // `cpu/terms/`: straight to the PMU (no PMU is named like a cache event).
  if (ev.kind == ast::EventKind::pmu && !symbol)
    if (const Pmu* pmu = machine_.find_pmu(n)) return on_pmu(ev, *pmu, out);
  if (symbol) return generic(ev, symbol->type, symbol->config, out);
  // A bare name resolved before as an alias (the memo keeps only those): it is no tool or cache
  // name, so those checks are not made again.
  if (ev.kind == ast::EventKind::named && options_.pmu_filter.empty())
    if (const auto* known = remembered_name(n)) return on_known_name(ev, *known, out);
  if (ev.kind == ast::EventKind::named)
    if (ToolEvent tool = tool_event(n); tool != ToolEvent::none) {
      generic(ev, spec::type_software, 9 /* PERF_COUNT_SW_DUMMY */, out);
      ResolvedEvent& e = out[out.size() - 1];
      e.pmu = "tool";
      e.tool = tool;
      e.unit = "ns";
      return;
    }
  auto cache = spec::parse_cache_name(n);
  if (!cache) cache = spec::parse_dotted_cache(n);
  if (cache) {
    if (!cache->invalid.empty())
      throw Error(ErrorKind::bad_value, fmt::format("invalid cache event '{}': {}", n, cache->invalid),
                  ev.name_span);
    return generic(ev, spec::type_hw_cache, cache->event.config(), out);
  }
  if (ev.kind == ast::EventKind::pmu) return resolve_pmu_form(ev, out);
  Named kept;
  if (const auto& found = aliases_named(ev, kept); !found.empty()) {
    on_each_target(ev, found, out, [&](const auto& target, const ast::Term& t) {
      on_pmu(ev, *target.first, out, KnownName{&t, target.second});
    });
    if (options_.pmu_filter.empty()) remember_name(n, found);
    return;
  }
  if (n.find("::") != std::string::npos)
    throw Error(ErrorKind::unknown_name, fmt::format("unknown event '{}'", n), ev.name_span,
                libpfm4_help(n, machine_));
  if (machine_.pmu(n))
    throw Error(ErrorKind::unknown_name, fmt::format("'{}' is a PMU, not an event", n), ev.name_span,
                fmt::format("write '{}/.../' with terms, e.g. '{}/config=0x1/'", n, n));
  // A name a source has, but for a PMU this machine lacks (the tables' core events on a machine
  // without a core PMU): what it is for, not suggestions that spell it again.
  for (const spec::EventSource* source : machine_.sources())
    if (std::string why = source->unplaced(n); !why.empty())
      throw Error(ErrorKind::unknown_name, fmt::format("no PMU of this machine has event '{}'", n),
                  ev.name_span, why);
  throw Error(
      ErrorKind::unknown_name, fmt::format("unknown event '{}'", n), ev.name_span,
      with_table_problems(n.size() > max_suggest_length ? std::string{} : suggest(n, suggestable_names())));
}

std::string Resolver::with_table_problems(std::string help) const {
  // A table file that could not be read may be where the name is defined: say so, with the file.
  auto problems = machine_.table_problems();
  if (problems.empty()) return help;
  std::string note =
      fmt::format("the event tables have {} file(s) that could not be read, which may define it: {}",
                  problems.size(), problems.front().text());
  return help.empty() ? note : help + "\n" + note;
}

void Resolver::remember_name(const std::string& n,
                             const std::vector<std::pair<const Pmu*, const spec::Alias*>>& found) {
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
                   if (filtered_out(n)) return false;
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
    // perf 6.12: a name that is no PMU is an event's, the terms added to its own (the tables' metrics
    // write `UNC_ARB_DAT_OCCUPANCY.RD@cmask\=1@`): that event on every PMU that has it, all or nothing.
    // (A PMU that cannot be read while looking for the name does not hide that no PMU has it.)
    const std::vector<std::pair<const Pmu*, const spec::Alias*>>* named = nullptr;
    Named kept;
    try {
      named = &aliases_named(ev, kept);
    } catch (const Error&) {
      if (!options_.pmu_filter.empty()) throw;  // the filter's own error: on no PMU it picks
    }
    if (named && !named->empty()) {
      const auto& found = *named;
      thread_local ast::Term t;
      t.clear();
      t.name.assign(ev.name);
      t.span = t.name_span = ev.name_span;
      std::size_t first = out.size();
      try {
        for (const auto& [pmu, alias] : found) on_pmu(ev, *pmu, out, KnownName{&t, alias});
      } catch (...) {
        out.resize(first);
        throw;
      }
      return;
    }
    throw Error(ErrorKind::unknown_name, fmt::format("unknown PMU '{}'", ev.name), ev.name_span,
                suggest(ev.name, machine_.pmu_names()).empty()
                    ? fmt::format("PMUs of this machine: {}", fmt::join(machine_.pmu_names(), ", "))
                    : suggest(ev.name, machine_.pmu_names()));
  }
  std::sort(matches.begin(), matches.end(), natural_less);
  // A wildcard adds the event on every matching PMU that accepts the terms; it is an error only when
  // none does (as perf does for uncore PMUs that differ in their aliases).
  pmu_wildcard_ = true;
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

void Resolver::resolve_event(const ast::Event& ev, Events& out) {
  try {
    switch (ev.kind) {
      case ast::EventKind::named:
      case ast::EventKind::pmu: return resolve_named(ev, out);
      case ast::EventKind::tracepoint: return resolve_tracepoint(ev, out);
      case ast::EventKind::raw: return generic(ev, spec::type_raw, ev.number1, out);
      case ast::EventKind::numeric:
        return generic(ev, static_cast<std::uint32_t>(ev.number1), ev.number2, out);
      case ast::EventKind::breakpoint: {
        std::size_t mark = out.size();
        ResolvedEvent& e = start(out, ev, "breakpoint", nullptr, false);
        try {
          e.attr.type = spec::type_breakpoint;
          e.attr.bp_type = 0;
          for (char c : ev.access)
            e.attr.bp_type |= c == 'r'   ? spec::breakpoint_r
                              : c == 'w' ? spec::breakpoint_w
                                         : spec::breakpoint_x;
          if (ev.access.empty()) e.attr.bp_type = spec::breakpoint_rw;
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
    throw Error(e.kind(), e.message(), ev.span, e.help());
  }
}

}  // namespace resolver

void resolve(const ast::EventList& list, const spec::Machine& machine, EventSet& out) {
  resolver::Resolver(list, machine).run(out);
}

void resolve(const ast::EventList& list, const spec::Machine& machine, EventSet& out,
             const ResolveOptions& options) {
  resolver::Resolver(list, machine, &options).run(out);
}

void resolve(std::string_view text, const spec::Machine& machine, EventSet& out,
             const ResolveOptions& options) {
  resolve(parse(text), machine, out, options);
}

EventSet resolve(std::string_view text, const spec::Machine& machine, const ResolveOptions& options) {
  EventSet set;
  resolve(text, machine, set, options);
  return set;
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
