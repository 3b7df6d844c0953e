// SPDX-License-Identifier: MIT
// `perf list`'s entries as perf 6.12 makes them (print-events.c, pmus.c, pmu.c, metricgroup.c): which
// events and metrics of which kinds, their names, aliases and encodings in perf's forms, in perf's
// order. The printers (perf's JSON) are print/'s.
#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <unordered_map>

#include <fmt/format.h>

#include "perfspec/catalog.hpp"
#include "perfspec/error.hpp"
#include "perfspec/tables.hpp"
#include "spec/ascii.hpp"
#include "spec/builtin.hpp"
#include "spec/perf_metric_expr.hpp"
#include "spec/sysfs_io.hpp"

namespace perfspec::spec {

namespace {

using Entry = PerfListEntry;

// perf's pmu_name_len_no_suffix: the length of a PMU's name without its instance suffix (`_` and
// decimal digits, or more than two hex digits: `uncore_imc_3`, `armv8_pmuv3_0`; not `cpum_cf`).
std::size_t base_length(std::string_view name) {
  std::size_t len = name.size();
  bool hex = false;
  while (len > 0 && std::isxdigit(static_cast<unsigned char>(name[len - 1]))) {
    if (!std::isdigit(static_cast<unsigned char>(name[len - 1]))) hex = true;
    --len;
  }
  if (len > 0 && len != name.size() && name[len - 1] == '_' && (!hex || name.size() - len > 2))
    return len - 1;
  return name.size();
}

// perf's pmu_name_cmp: by the names without suffixes over the shorter one's length (so that
// `uncore_imc` and `uncore_imc_free_running` compare equal), then by the suffixes read as hex.
int pmu_name_cmp(std::string_view a, std::string_view b) {
  const std::size_t la = base_length(a), lb = base_length(b);
  const int c = std::strncmp(a.data(), b.data(), std::min({la, lb, a.size(), b.size()}));
  if (la != lb || c != 0 || la == 0) return c;
  auto suffix = [](std::string_view n, std::size_t l) -> unsigned long long {
    return l + 1 < n.size() ? std::strtoull(std::string(n.substr(l + 1)).c_str(), nullptr, 16) : 0;
  };
  const auto na = suffix(a, la), nb = suffix(b, lb);
  return na < nb ? -1 : (na > nb ? 1 : 0);
}

struct PmuRef {
  std::string name;
  const Pmu* pmu = nullptr;  // nullptr: perf's placeholder `cpu` of a machine without a core PMU
  bool core = false;
};

// Linux's list_sort (which perf sorts its PMUs with) over a three-way comparison that need not be a
// strict order (pmu_name_cmp is not: prefix-related names compare equal), so its merge pattern shows:
// elements move one by one onto a stack of sorted runs, and after the k-th, the two runs that make
// k's lowest clear bit are merged (older run first: stable); at the end every run is merged into the
// newest, oldest last.
std::vector<PmuRef> list_sort(std::vector<PmuRef> in) {
  auto merge = [](std::vector<PmuRef> a, std::vector<PmuRef> b) {  // a: the older run
    std::vector<PmuRef> out;
    out.reserve(a.size() + b.size());
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size())
      out.push_back(std::move(pmu_name_cmp(a[i].name, b[j].name) <= 0 ? a[i++] : b[j++]));
    while (i < a.size()) out.push_back(std::move(a[i++]));
    while (j < b.size()) out.push_back(std::move(b[j++]));
    return out;
  };
  std::vector<std::vector<PmuRef>> pending;  // back(): the newest run
  std::size_t count = 0;
  for (auto& element : in) {
    std::size_t bits = count, depth = 0;
    for (; bits & 1; bits >>= 1) ++depth;
    if (bits) {
      const std::size_t newer = pending.size() - 1 - depth;
      pending[newer - 1] = merge(std::move(pending[newer - 1]), std::move(pending[newer]));
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(newer));
    }
    pending.push_back({});
    pending.back().push_back(std::move(element));
    ++count;
  }
  if (pending.empty()) return {};
  std::vector<PmuRef> list = std::move(pending.back());
  for (std::size_t k = pending.size() - 1; k-- > 0;) list = merge(std::move(pending[k]), std::move(list));
  return list;
}

// perf's PMU list: the core PMUs, then the others, each in pmu_name_cmp order from the folder's order.
std::vector<PmuRef> pmus_in_perf_order(const Machine& machine, const io::Jail& jail) {
  std::vector<PmuRef> core, other;
  for (const auto& name : io::list_dir(jail, machine.root() + "/bus/event_source/devices", false, false)) {
    const Pmu* pmu = nullptr;
    try {
      pmu = machine.pmu(name);
    } catch (const Error&) {
      continue;  // a PMU that cannot be read: perf skips it too
    }
    if (!pmu) continue;
    (pmu->is_core() ? core : other).push_back({name, pmu, pmu->is_core()});
  }
  if (core.empty()) core.push_back({"cpu", nullptr, true});
  core = list_sort(std::move(core));
  other = list_sort(std::move(other));
  core.insert(core.end(), std::make_move_iterator(other.begin()), std::make_move_iterator(other.end()));
  return core;
}

// A term list as perf parses and prints it again (parse_events_terms__to_strbuf): numbers as `%#llx`
// (`0` for zero), a term without a value as its name, other values as written.
struct Term {
  std::string key, value;
  bool number = false, bare = false;
};

std::vector<Term> parse_terms(std::string_view text) {
  std::vector<Term> out;
  std::size_t i = 0;
  while (i <= text.size()) {
    std::size_t j = text.find(',', i);
    if (j == std::string_view::npos) j = text.size();
    std::string_view t = io::trim(text.substr(i, j - i));
    i = j + 1;
    if (t.empty()) continue;
    Term term;
    const std::size_t eq = t.find('=');
    term.key = std::string(io::trim(t.substr(0, eq)));
    if (eq == std::string_view::npos) {
      term.bare = term.number = true;
      term.value = "1";
    } else {
      term.value = std::string(io::trim(t.substr(eq + 1)));
      char* end = nullptr;
      errno = 0;
      const unsigned long long v = std::strtoull(term.value.c_str(), &end, 0);
      term.number = !term.value.empty() && end && *end == '\0' && errno == 0 && term.value[0] != '-';
      if (term.number) term.value = v ? fmt::format("{:#x}", v) : "0";
    }
    out.push_back(std::move(term));
  }
  return out;
}

std::string print_terms(const std::vector<Term>& terms) {
  std::string out;
  for (const auto& t : terms) {
    if (!out.empty()) out += ',';
    out += t.bare ? t.key : t.key + "=" + t.value;
  }
  return out;
}

// `%G` of a scale, then the unit; nullopt when neither says anything (a unit and a scale of 1).
std::optional<std::string> scale_unit(double scale, const std::string& unit) {
  if (unit.empty() && scale == 1.0) return std::nullopt;
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%G", scale);
  return std::string(buffer) + unit;
}

std::optional<std::string> given(const std::string& text) {
  return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

// An event of a PMU, with what perf sorts it by.
struct Sevent {
  Entry entry;
  const Pmu* pmu = nullptr;
  bool core = false;
};

// perf_pmu__for_each_event over one PMU: its sysfs events (a table event of the same name in their
// stead) and its table events, named and encoded as perf shows them.
class PmuEvents {
 public:
  explicit PmuEvents(const Machine& machine) : machine_(machine) {}

  void add(const PmuRef& ref, std::vector<Sevent>& out) {
    if (!ref.pmu) return;
    const Pmu& pmu = *ref.pmu;
    std::unordered_map<std::string, const TableEvent*> table;  // by lower-case name
    std::vector<const TableEvent*> order;
    auto take = [&](const EventTables* tables) {
      if (!tables) return;
      for (const auto& te : tables->events())
        if (machine_.table_event_applies(te, pmu) && table.emplace(ascii_lowered(te.alias.name), &te).second)
          order.push_back(&te);
    };
    if (const EventTables* t = machine_.tables_for(pmu)) take(&full(t->model()));
    if (machine_.sys_tables()) take(&full(""));
    for (const auto& a : pmu.aliases()) {
      if (a.source != Source::sysfs || table.count(ascii_lowered(a.name))) continue;
      const auto terms = parse_terms(a.terms);
      Sevent s{{}, &pmu, ref.core};
      Entry& e = s.entry;
      e.type = "Kernel PMU event";
      e.pmu_name = pmu.name();
      std::string shown = pmu.name() + "/" + a.name;
      for (const auto& t : terms)
        if (!t.number) shown += "," + t.key + "=" + t.value;
      shown += "/";
      if (ref.core) {
        e.name = a.name;
        e.alias = shown;
      } else {
        e.name = shown;
      }
      e.encoding = pmu.name() + "/" + print_terms(terms) + "/";
      out.push_back(std::move(s));
    }
    for (const TableEvent* te : order) {
      Sevent s{{}, &pmu, ref.core};
      Entry& e = s.entry;
      e.type = "Kernel PMU event";
      const std::string pmu_name = te->pmu.empty() ? pmu.name() : te->pmu;
      e.pmu_name = pmu_name;
      const auto terms = parse_terms(te->alias.terms);
      const std::string name = ascii_lowered(te->alias.name);
      if (!te->description.empty()) {
        e.name = name;
        e.desc = te->description;
        e.long_desc = te->long_description.empty() ? te->description : te->long_description;
      } else {
        std::string shown = pmu.name() + "/" + name;
        for (const auto& t : terms)
          if (!t.number) shown += "," + t.key + "=" + t.value;
        shown += "/";
        if (ref.core) {
          e.name = name;
          e.alias = shown;
        } else {
          e.name = shown;
        }
        if (!te->long_description.empty()) e.long_desc = te->long_description;
      }
      e.scale_unit = scale_unit(te->alias.scale, te->alias.unit);
      e.encoding = pmu_name + "/" + print_terms(terms) + "/";
      e.topic = given(te->topic);
      e.deprecated = te->deprecated;
      out.push_back(std::move(s));
    }
    // perf's selectable PMUs (x86's intel_pt and intel_bts): the PMU itself as an event.
    if (pmu.name() == "intel_pt" || pmu.name() == "intel_bts") {
      Sevent s{{}, &pmu, ref.core};
      s.entry.name = pmu.name() + "//";
      s.entry.type = "Kernel PMU event";
      s.entry.pmu_name = pmu.name();
      out.push_back(std::move(s));
    }
  }

 private:
  // The tables with descriptions (the index has none): a model's, or "" for the `sys` folders.
  const EventTables& full(const std::string& model) {
    auto& t = full_[model];
    if (!t) t = EventTables::load_full(machine_.tables_folder(), model);
    return *t;
  }

  const Machine& machine_;
  std::map<std::string, std::shared_ptr<const EventTables>> full_;
};

// perf_pmus__print_pmu_events: every PMU's events, sorted (no description first, topic, core PMUs
// first, PMU name, name) and without one whose name and PMU name the next one has too.
void pmu_events(const Machine& machine, const std::vector<PmuRef>& pmus, std::vector<Entry>& out) {
  std::vector<Sevent> all;
  PmuEvents events(machine);
  for (const auto& ref : pmus) events.add(ref, all);
  std::stable_sort(all.begin(), all.end(), [](const Sevent& a, const Sevent& b) {
    if (a.entry.desc.has_value() != b.entry.desc.has_value()) return !a.entry.desc.has_value();
    const int topic = a.entry.topic.value_or("").compare(b.entry.topic.value_or(""));
    if (topic != 0) return topic < 0;
    if (a.core != b.core) return a.core;
    if (a.pmu != b.pmu) {
      const int pmu = a.entry.pmu_name.value_or("").compare(b.entry.pmu_name.value_or(""));
      if (pmu != 0) return pmu < 0;
    }
    return a.entry.name < b.entry.name;
  });
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i + 1 < all.size() && all[i].entry.name == all[i + 1].entry.name &&
        all[i].entry.pmu_name == all[i + 1].entry.pmu_name)
      continue;
    out.push_back(std::move(all[i].entry));
  }
}

// perf_pmus__print_raw_pmu_events: each PMU's formats (in the folder's order) with their ranges,
// a core PMU's with the terms perf adds; the first three, and all.
Entry raw_descriptor(const io::Jail& jail, const PmuRef& ref) {
  std::vector<std::string> parts;
  if (ref.pmu) {
    for (const auto& name : io::list_dir(jail, ref.pmu->directory() + "/format", false, false)) {
      unsigned bits = 0;
      try {
        if (const Format* f = ref.pmu->format(name)) bits = static_cast<unsigned>(std::popcount(f->mask()));
      } catch (const Error&) {
        // a format perf cannot read shows as its name alone
      }
      if (bits <= 1)
        parts.push_back(name);
      else if (bits > 8)
        parts.push_back(fmt::format("{}=0..{:#x}", name, ~0ULL >> (64 - bits)));
      else
        parts.push_back(fmt::format("{}=0..{}", name, ~0ULL >> (64 - bits)));
    }
  }
  if (ref.core)
    for (std::string_view t : {"config=0..0xffffffffffffffff",
                               "config1=0..0xffffffffffffffff",
                               "config2=0..0xffffffffffffffff",
                               "config3=0..0xffffffffffffffff",
                               "name=string",
                               "period=number",
                               "freq=number",
                               "branch_type=(u|k|hv|any|...)",
                               "time",
                               "call-graph=(fp|dwarf|lbr)",
                               "stack-size=number",
                               "max-stack=number",
                               "nr=number",
                               "inherit",
                               "no-inherit",
                               "overwrite",
                               "no-overwrite",
                               "percore",
                               "aux-output",
                               "aux-sample-size=number"})
      parts.emplace_back(t);
  const std::string base = ref.name.substr(0, base_length(ref.name));
  std::string all, first;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    all += (i ? "," : "") + parts[i];
    if (i < 3) first += (i ? "," : "") + parts[i];
  }
  Entry e;
  e.name = base + "/" + first + (parts.size() > 3 ? ",.../modifier" : "/modifier");
  e.type = "Raw event descriptor";
  if (ref.core) e.desc = "(see 'man perf-list' or 'man perf-record' on how to encode it)";
  e.encoding = base + "/" + all + "/modifier";
  return e;
}

// perf's generic hardware and software events (event_symbols_hw, event_symbols_sw): symbol and
// alias, by config.
constexpr std::pair<std::string_view, std::string_view> hardware_symbols[] = {
    {"cpu-cycles", "cycles"},
    {"instructions", ""},
    {"cache-references", ""},
    {"cache-misses", ""},
    {"branch-instructions", "branches"},
    {"branch-misses", ""},
    {"bus-cycles", ""},
    {"stalled-cycles-frontend", "idle-cycles-frontend"},
    {"stalled-cycles-backend", "idle-cycles-backend"},
    {"ref-cycles", ""}};
constexpr std::pair<std::string_view, std::string_view> software_symbols[] = {
    {"cpu-clock", ""},
    {"task-clock", ""},
    {"page-faults", "faults"},
    {"context-switches", "cs"},
    {"cpu-migrations", "migrations"},
    {"minor-faults", ""},
    {"major-faults", ""},
    {"alignment-faults", ""},
    {"emulation-faults", ""},
    {"dummy", ""},
    {"bpf-output", ""},
    {"cgroup-switches", ""}};

// print_symbol_events: those that open, sorted by `symbol OR alias`.
void symbol_events(std::uint32_t type, std::span<const std::pair<std::string_view, std::string_view>> table,
                   std::string_view what, const std::function<bool(std::uint32_t, std::uint64_t)>& opens,
                   std::vector<Entry>& out) {
  std::vector<std::string> shown;
  for (std::uint64_t config = 0; config < table.size(); ++config) {
    if (!opens(type, config)) continue;
    const auto [symbol, alias] = table[config];
    shown.push_back(alias.empty() ? std::string(symbol) : fmt::format("{} OR {}", symbol, alias));
  }
  std::sort(shown.begin(), shown.end());
  shown.erase(std::unique(shown.begin(), shown.end()), shown.end());
  for (const auto& s : shown) {
    Entry e;
    const std::size_t or_at = s.find(" OR ");
    e.name = s.substr(0, or_at);
    if (or_at != std::string::npos) e.alias = s.substr(or_at + 4);
    e.type = std::string(what);
    out.push_back(std::move(e));
  }
}

// print_hwcache_events: per core PMU (not the software one), the valid cache events that open, in
// the loop's order; the PMU's type in the config's upper half where perf puts it (hybrid machines).
void cache_events(const std::vector<PmuRef>& pmus,
                  const std::function<bool(std::uint32_t, std::uint64_t)>& opens, std::vector<Entry>& out) {
  std::size_t cores = 0;
  for (const auto& ref : pmus) cores += ref.core && ref.pmu;
  for (const auto& ref : pmus) {
    if (!ref.core) continue;
    const std::uint32_t type = ref.pmu ? ref.pmu->type() : 4;
    if ((ref.pmu && ref.pmu->is_uncore()) || type == 1) continue;
    for (unsigned cache = 0; cache < 7; ++cache)
      for (unsigned op = 0; op < 3; ++op) {
        if (!cache_op_valid(cache, op)) continue;
        for (unsigned result = 0; result < 2; ++result) {
          const CacheEvent ev{cache, op, result};
          const std::uint64_t config = ev.config() | (cores > 1 ? std::uint64_t{type} << 32 : 0);
          if (!opens(3, config)) continue;
          Entry e;
          e.topic = "cache";
          e.pmu_name = ref.name;
          e.name = cache_event_name(ev);
          e.alias = fmt::format("{}/{}/", ref.name, e.name);
          e.type = "Hardware cache event";
          out.push_back(std::move(e));
        }
      }
  }
}

// print_tracepoint_events: every tracepoint whose id can be read, by system and name.
void tracepoint_events(const Machine& machine, std::vector<Entry>& out) {
  for (const auto& [sys, name] : machine.tracepoints("*", "*")) {
    const auto id = machine.tracepoint_id(sys, name);
    if (!id) continue;
    Entry e;
    e.name = sys + ":" + name;
    e.type = "Tracepoint event";
    e.encoding = fmt::format("tracepoint/config={:#x}/", *id);
    out.push_back(std::move(e));
  }
}

// metricgroup__print: one entry per (group, metric), sorted by group then name; a pair met again
// (a metric of several PMUs' sections, which perf walks by PMU name) takes the later one's fields.
void metric_entries(const Machine& machine, std::vector<Entry>& out) {
  std::vector<const TableMetric*> metrics;
  for (const auto& m : machine.table_metrics())
    if (!m.name.empty() && !m.expr.empty()) metrics.push_back(&m);
  auto section = [](const TableMetric* m) { return m->pmu.empty() ? std::string("default_core") : m->pmu; };
  std::stable_sort(metrics.begin(), metrics.end(),
                   [&](const TableMetric* a, const TableMetric* b) { return section(a) < section(b); });
  std::map<std::pair<std::string, std::string>, Entry> pairs;
  for (const TableMetric* m : metrics) {
    const std::string groups = m->groups.empty() ? m->name : m->groups;
    std::size_t i = 0;
    while (i <= groups.size()) {
      std::size_t j = groups.find(';', i);
      if (j == std::string::npos) j = groups.size();
      std::string_view g = std::string_view(groups).substr(i, j - i);
      i = j + 1;
      while (!g.empty() && std::isspace(static_cast<unsigned char>(g.front()))) g.remove_prefix(1);
      const std::string group = g.empty() ? m->name : std::string(g);
      Entry e;
      e.metric = true;
      e.group = group;
      e.name = m->name;
      e.desc = given(m->description);
      e.long_desc = given(m->long_description);
      // the expression as perf's build printed it again (where that build could read it)
      e.expr = perf_metric_expr(m->expr).value_or(m->expr);
      e.threshold = given(m->threshold);
      e.unit = given(m->scale_unit);
      pairs[{group, m->name}] = std::move(e);
    }
  }
  for (auto& [key, e] : pairs) out.push_back(std::move(e));
}

}  // namespace

std::vector<PerfListEntry> perf_list(const Machine& machine, unsigned kinds,
                                     const std::function<bool(std::uint32_t, std::uint64_t)>& opens,
                                     const std::vector<std::string>& sdt) {
  std::vector<Entry> out;
  const io::Jail jail(machine.root());
  std::vector<PmuRef> pmus;
  if (kinds & (perf_list_cache | perf_list_pmu | perf_list_raw)) pmus = pmus_in_perf_order(machine, jail);
  if (kinds & perf_list_hardware) symbol_events(0, hardware_symbols, "Hardware event", opens, out);
  if (kinds & perf_list_software) {
    symbol_events(1, software_symbols, "Software event", opens, out);
    for (std::string_view tool : {"duration_time", "user_time", "system_time"}) {
      Entry e;
      e.topic = "tool";
      e.name = std::string(tool);
      e.type = "Tool event";
      out.push_back(std::move(e));
    }
  }
  if (kinds & perf_list_cache) cache_events(pmus, opens, out);
  if (kinds & perf_list_pmu) pmu_events(machine, pmus, out);
  if (kinds & perf_list_raw) {
    Entry raw;
    raw.name = "rNNN";
    raw.type = "Raw event descriptor";
    out.push_back(std::move(raw));
    for (const auto& ref : pmus) out.push_back(raw_descriptor(jail, ref));
  }
  if (kinds & perf_list_breakpoint) {
    Entry bp;
    bp.name = "mem:<addr>[/len][:access]";
    bp.type = "Hardware breakpoint";
    out.push_back(std::move(bp));
  }
  if (kinds & perf_list_tracepoint) tracepoint_events(machine, out);
  if (kinds & perf_list_sdt)
    for (const std::string& name : sdt) {
      Entry e;
      e.name = name;
      e.type = "SDT event";
      out.push_back(std::move(e));
    }
  if (kinds & perf_list_metric) metric_entries(machine, out);
  return out;
}

}  // namespace perfspec::spec
