// SPDX-License-Identifier: MIT
#pragma once
// The resolver's state for one event list, shared by its translation units: resolve.cpp (the kinds of
// event), pmu_event.cpp (an event on a PMU: formats and aliases), tracepoint.cpp, groups.cpp (items
// into groups). Internal to resolver/.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "perfspec/ast.hpp"
#include "perfspec/event_set.hpp"
#include "perfspec/resolve.hpp"
#include "perfspec/spec.hpp"
#include "resolver/memo.hpp"
#include "resolver/suggest.hpp"
#include "spec/ascii.hpp"
#include "spec/builtin.hpp"
#include "spec/reuse.hpp"

namespace perfspec::resolver {

using spec::Machine;
using spec::Pmu;

// The events and groups of one resolve, built in the vectors of the EventSet resolved into: first in
// the nodes an earlier resolve left there (emptied, so their strings keep their storage), then in
// appended ones.
using Events = spec::Refill<ResolvedEvent>;
using GroupSlots = spec::Refill<EventGroup>;

// Where an event goes in a group on x86 with the perf-metrics feature (a core PMU with a `slots`
// event): 0 for slots (config 0x400), which must lead, 1 for a topdown metric event (event code 0,
// umask 0x80 to 0x87, read from the PERF_METRICS register through the slots leader), which must
// follow it, 2 for every other event. The kernel refuses a group ordered otherwise; perf sorts
// groups so (arch_evlist__cmp).
int topdown_rank(const Machine& machine, const ResolvedEvent& event);

// perf 6.12's perf_pmu__is_software (tools/perf/util/pmu.c): an event of the software context, which the
// kernel lets join a group of any PMU: software (tool events too), tracepoint and breakpoint events, and
// the kprobe, msr and uprobe PMUs (the kernel's msr PMU runs in the software context). A core or uncore
// PMU (one with `cpus` or `cpumask`) or an AUX tracer (intel_pt, cs_etm, arm_spe, ...) never is.
bool software_context(const Machine& machine, const ResolvedEvent& event);
// An AUX tracer's PMU (intel_pt, intel_bts, cs_etm, arm_spe_N, hisi_ptt_N): a group it leads takes events
// of other PMUs (perf's evsel__is_aux_event).
bool aux_tracer(std::string_view pmu);

// perf 6.12's evsel__compute_group_pmu_name, for the events of one written group (`{...}`, leader first
// as written): the PMU each groups under. An event takes its own PMU's name; a software-context event
// (and every event of a group an AUX tracer leads) takes its leader's, or when the leader is of the
// software context too, the first non-software member's (in written order); in a group of software
// events alone each keeps its own. Events of one written group with the same name share a group.
std::vector<std::string_view> group_pmu_names(const Machine& machine,
                                              const std::vector<const ResolvedEvent*>& events);

// What a caller already knows of the event a bare name (`MEM_LOAD_RETIRED.L1_MISS`) names on a PMU.
struct KnownName {
  const ast::Term* term = nullptr;        // the name as a term, ahead of the event's own terms
  const spec::Alias* alias = nullptr;     // its alias on the PMU, when the caller looked it up
  const EncodedAlias* encoded = nullptr;  // that alias's encoding there, when the caller also knows that
                                          // the name can only be the event on this PMU
};

// Which term of a PMU event names the event, and what it names: an alias, or a hardware or cache
// symbol addressed to a core PMU (`cpu_atom/cycles/`). All empty for `pmu/terms/` alone.
struct EventTerm {
  const ast::Term* term = nullptr;
  const spec::Alias* alias = nullptr;
  const spec::Symbol* symbol = nullptr;
  std::optional<spec::CacheName> cache;
};

using spec::has_glob;

// Everything one event string resolves through.
class Resolver {
 public:
  Resolver(const ast::EventList& list, const Machine& machine, const ResolveOptions* options = nullptr)
      : list_(list), machine_(machine), options_(options ? *options : no_options()) {}
  void run(EventSet& set);
  using Named = std::vector<std::pair<const Pmu*, const spec::Alias*>>;  // PMUs with an alias of a name

 private:
  const ast::EventList& list_;
  const Machine& machine_;
  const ResolveOptions& options_;  // the caller's, which outlive the Resolver
  static const ResolveOptions& no_options() {
    static const ResolveOptions none;
    return none;
  }
  // perf's "events were regrouped to match PMUs": a written group split or reordered; not said when a
  // PMU name matched several PMUs (perf's wild_card_pmus).
  bool regrouped_ = false;
  bool pmu_wildcard_ = false;

  std::string text(Span s) const { return list_.text.substr(s.begin, s.end - s.begin); }
  // Each appends what the event resolves to onto `out`, and nothing when it throws.
  void resolve_event(const ast::Event& ev, Events& out);
  void resolve_named(const ast::Event& ev, Events& out);
  void resolve_pmu_form(const ast::Event& ev, Events& out);
  void remember_name(const std::string& n,
                     const std::vector<std::pair<const Pmu*, const spec::Alias*>>& found);
  const std::vector<MachineMemo::NamedTarget>* remembered_name(std::string_view n) const;
  void on_known_name(const ast::Event& ev, const std::vector<MachineMemo::NamedTarget>& known, Events& out);
  template <typename Targets, typename One>
  void on_each_target(const ast::Event& ev, const Targets& targets, Events& out, One&& one);
  void resolve_tracepoint(const ast::Event& ev, Events& out);
  [[noreturn]] void tracepoint_not_found(const ast::Event& ev, Span where);
  // One event on one PMU from `pmu/terms/`, a bare alias name (`known`), or `pmu/alias/`.
  void on_pmu(const ast::Event& ev, const Pmu& pmu, Events& out, const KnownName& known = {});
  EventTerm find_event_term(const ast::Event& ev, const Pmu& pmu, const KnownName& known) const;
  // The event's definition (alias, hardware or cache symbol) into `out`; `required` gets its `param=?`.
  void apply_definition(ResolvedEvent& out, const Pmu& pmu, const EventTerm& which, const KnownName& known,
                        std::vector<std::string>& required);
  // Every term but the one naming the event, onto the definition.
  void apply_terms(ResolvedEvent& out, const ast::Event& ev, const Pmu& pmu, const EventTerm& which,
                   const KnownName& known, std::vector<std::string>& required) const;
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
  void apply_format(ResolvedEvent& out, const Pmu& pmu, const spec::Format& f, const ast::Term& t,
                    bool from_alias) const;
  [[noreturn]] void unknown_term(const ast::Term& t, std::string_view what, const Pmu* pmu) const;
  const std::vector<const Pmu*>& cores() const;
  bool filtered_out(std::string_view pmu) const {
    return !options_.pmu_filter.empty() && pmu != options_.pmu_filter;
  }
  const Named& aliases_named(const ast::Event& ev, Named& kept) const;
  unsigned max_precise_for(const ResolvedEvent& e) const;
  std::pair<std::string_view, const Pmu*> pmu_of_type(std::uint32_t type) const;
  // Every name a bare event could have meant; views of names the Machine and the tables keep.
  std::vector<std::string_view> name_candidates() const;
  // `help`, plus a note naming the table files that could not be read (the name may be in one).
  std::string with_table_problems(std::string help) const;
  const ByLength& suggestable_names() const;
  // An item of the list into groups (groups.cpp): a lone event's results each a group of one; a
  // written group's split by PMU.
  void add_lone(const ast::Item& item, Events& events, GroupSlots& groups);
  // Topdown events written alone, gathered into a group as perf 6.12 does (after every item).
  void group_lone_topdown(EventSet& set);
  void add_braced(const ast::Item& item, Events& events, GroupSlots& groups);
};

}  // namespace perfspec::resolver
