// SPDX-License-Identifier: MIT
// What a Machine knows for metrics: its tables' metric entries, and the facts a metric's `#literal`
// stands for (perf 6.12's expr__get_literal and what it calls: util/smt.c, util/cputopo.c,
// arch/x86/util/tsc.c), read under the Machine's root.
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/spec.hpp"
#include "perfspec/tables.hpp"
#include "spec/ascii.hpp"
#include "spec/machine_impl.hpp"
#include "spec/sysfs_io.hpp"
#include "spec/table_json.hpp"

namespace perfspec::spec {

namespace {

// A CPU list file under the root (`online`, `present`); nullopt when absent.
std::optional<std::vector<int>> cpu_list_file(const io::Jail& jail, const std::string& path) {
  auto text = io::read_optional_file(jail, path);
  if (!text) return std::nullopt;
  try {
    return parse_cpu_list(*text);
  } catch (const Error& e) {
    throw Error(ErrorKind::machine, fmt::format("{}: {}", path, e.what()));
  }
}

// The TSC frequency of this host in Hz as perf computes it on x86: cpuid leaf 0x15 (crystal clock
// times the TSC/crystal ratio) when it enumerates one, else the `@ 2.10GHz` ending the model name of
// /proc/cpuinfo. nullopt when neither tells.
std::optional<double> host_tsc_frequency() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0, nullptr) >= 0x15) {
    __cpuid_count(0x15, 0, a, b, c, d);
    if (a && b && c) return static_cast<double>(c) * b / a;
  }
#endif
  auto text = io::read_small_file("/proc/cpuinfo");
  if (!text) return std::nullopt;
  auto at = text->find("model name");
  if (at == std::string::npos) return std::nullopt;
  std::string line = text->substr(at, text->find('\n', at) - at);
  auto sign = line.rfind('@');
  if (sign == std::string::npos) return std::nullopt;
  const char* p = line.c_str() + sign + 1;
  char* end = nullptr;
  double ghz = std::strtod(p, &end);
  if (end == p || ghz <= 0 || std::string_view(end).find("GHz") == std::string_view::npos)
    return std::nullopt;
  return ghz * 1e9;
}

// The number a term of a table event's encoding gives (`event=0xc0,umask=0x1` has event 0xc0).
std::optional<unsigned> term_value(std::string_view terms, std::string_view name) {
  while (!terms.empty()) {
    std::string_view term = terms.substr(0, terms.find(','));
    terms.remove_prefix(std::min(terms.size(), term.size() + 1));
    if (term.size() <= name.size() || !term.starts_with(name) || term[name.size()] != '=') continue;
    auto v = detail::jevents_number(term.substr(name.size() + 1));
    if (!v || *v > 0xffffffffU) return std::nullopt;
    return static_cast<unsigned>(*v);
  }
  return std::nullopt;
}

// The CPU facts under a Machine's root that topology literals count, for the literal `name`
// (named in errors).
class Topology {
 public:
  Topology(const Machine& machine, const io::Jail& jail, std::string root, std::string name)
      : machine_(machine),
        jail_(jail),
        cpu_dir_(std::move(root) + "/devices/system/cpu"),
        name_(std::move(name)) {}

  const std::string& cpu_dir() const { return cpu_dir_; }

  std::vector<int> online() const {
    if (auto cpus = cpu_list_file(jail_, cpu_dir_ + "/online")) return *cpus;
    std::vector<int> all;
    for (const auto& t : machine_.cpu_topology()) all.push_back(t.cpu);
    return all;
  }

  std::optional<std::vector<int>> present() const { return cpu_list_file(jail_, cpu_dir_ + "/present"); }

  // The topology of the online CPUs (perf's online_topology()).
  std::vector<CpuTopology> online_topology() const {
    auto cpus = online();
    std::vector<CpuTopology> out;
    for (const auto& t : machine_.cpu_topology())
      if (std::binary_search(cpus.begin(), cpus.end(), t.cpu)) out.push_back(t);
    if (out.empty())
      throw Error(ErrorKind::machine,
                  fmt::format("#{}: {} describes no CPU topology (cpuN/topology)", name_, cpu_dir_));
    return out;
  }

  template <typename Key> double distinct(Key key) const {
    std::set<decltype(key(CpuTopology{}))> seen;
    for (const auto& t : online_topology()) seen.insert(key(t));
    return static_cast<double>(seen.size());
  }

  bool smt_on() const {
    if (auto active = io::read_optional_file(jail_, cpu_dir_ + "/smt/active"))
      return io::trim(*active) == "1";
    // No smt/active (kernels before 4.19): SMT when two CPUs share a core.
    std::set<std::tuple<int, int, int>> cores;
    for (const auto& t : online_topology())
      if (!cores.insert({t.socket, t.die, t.core}).second) return true;
    return false;
  }

  // Everything on a core is counted only system-wide; without SMT a core is one CPU.
  bool core_wide(const Machine::MetricTarget& target) const {
    if (!target.system_wide) return false;
    if (!smt_on() || target.cpus.empty()) return true;
    std::set<std::tuple<int, int, int>> asked;
    const auto topology = online_topology();
    for (const auto& t : topology)
      if (std::binary_search(target.cpus.begin(), target.cpus.end(), t.cpu))
        asked.insert({t.socket, t.die, t.core});
    // Every CPU of a core with a CPU asked for must be asked for too.
    for (const auto& t : topology)
      if (asked.contains({t.socket, t.die, t.core}) &&
          !std::binary_search(target.cpus.begin(), target.cpus.end(), t.cpu))
        return false;
    return true;
  }

 private:
  const Machine& machine_;
  const io::Jail& jail_;
  std::string cpu_dir_, name_;
};

// #slots: the first core PMU's caps/slots, a hex or decimal count (arm64 writes `0x00000008`); 0 is a
// PMU that does not tell.
double slots(const std::vector<const Pmu*>& core_pmus) {
  for (const Pmu* pmu : core_pmus)
    if (auto slots = pmu->cap("slots")) {
      std::string text(io::trim(*slots));
      char* end = nullptr;
      errno = 0;
      unsigned long long v = std::strtoull(text.c_str(), &end, 0);
      if (text.empty() || *end != '\0' || errno || text.front() == '-')
        throw Error(ErrorKind::machine,
                    fmt::format("#slots: {}/caps/slots is not a number: '{}'", pmu->directory(), text));
      if (v == 0)
        throw Error(ErrorKind::machine,
                    fmt::format("#slots: {}/caps/slots is 0: the PMU does not tell its slots per cycle",
                                pmu->directory()));
      return static_cast<double>(v);
    }
  throw Error(ErrorKind::machine, "#slots: no core PMU of this machine has caps/slots");
}

// #system_tsc_freq: recorded by a snapshot beside the tree, else this host's when the root is /sys.
double system_tsc_freq(const io::Jail& jail, const std::string& root) {
  const std::string recorded = root + "/perfspec-snapshot/system_tsc_freq";
  if (auto text = io::read_optional_file(jail, recorded)) {
    std::string t(io::trim(*text));
    char* end = nullptr;
    double hz = std::strtod(t.c_str(), &end);
    if (t.empty() || *end != '\0' || hz <= 0)
      throw Error(ErrorKind::machine, fmt::format("{}: not a frequency in Hz: '{}'", recorded, t));
    return hz;
  }
  std::error_code ec;
  if (!std::filesystem::equivalent(root, "/sys", ec))
    throw Error(ErrorKind::machine,
                fmt::format("#system_tsc_freq: the TSC frequency of the machine under '{}' is not known "
                            "(write it in Hz to {})",
                            root, recorded));
  if (auto hz = host_tsc_frequency()) return *hz;
  throw Error(ErrorKind::machine,
              "#system_tsc_freq: this machine does not tell its TSC frequency (no cpuid leaf 0x15, no "
              "'@ N.NNGHz' in /proc/cpuinfo's model name)");
}

}  // namespace

const Machine::PmuCounters* Machine::pmu_counters(std::string_view name) const {
  table_metrics();
  const Pmu* p = pmu(name);
  if (!p) return nullptr;
  for (const auto& [unit, counters] : impl_->counters_)
    if (unit.empty() ? p->is_core() : (p->is_uncore() && table_pmu_matches(unit, name))) return &counters;
  return nullptr;
}

const std::vector<TableMetric>& Machine::table_metrics() const {
  auto& I = *impl_;
  std::call_once(I.metrics_once_, [&] {
    const std::string& folder = tables_folder();
    if (folder.empty()) return;
    if (const EventTables* t = tables()) {
      auto model = EventTables::load_full(folder, t->model());  // held while the loop reads from it
      I.metrics_ = model->metrics();
      for (const auto& c : model->counters()) {
        PmuCounters pc{c.fixed, c.generic, {}};
        for (const auto& ev : model->events()) {
          if (ev.pmu != c.pmu || ev.counter.empty()) continue;
          auto event = term_value(ev.alias.terms, "event"), umask = term_value(ev.alias.terms, "umask");
          if (!event) continue;
          // Events of one encoding may be scheduled where any of them may (CPU_CLK_UNHALTED.THREAD
          // on fixed counter 1, its twin THREAD_P on the generic ones: both are event 0x3c).
          std::string& text = pc.counter_of[{*event, umask.value_or(0)}];
          if (text.find(ev.counter) == std::string::npos) text += (text.empty() ? "" : ";") + ev.counter;
        }
        I.counters_.emplace_back(c.pmu, std::move(pc));
      }
    }
    // Uncore metrics of the `sys` folders: those of a PMU this machine has, by its identifier.
    auto sys = EventTables::load_full(folder, "");
    for (const auto& m : sys->metrics()) {
      bool present = false;
      for (const auto& name : pmu_names()) {
        const Pmu* pmu = this->pmu(name);
        if (!pmu || !pmu->is_uncore() || (!m.pmu.empty() && !table_pmu_matches(m.pmu, name))) continue;
        try {
          present = m.compat.empty() ||
                    std::regex_match(pmu->identifier(), std::regex(m.compat, std::regex::extended));
        } catch (const std::regex_error&) {  // a Compat that is no regex matches nothing, as in perf
        }
        if (present) break;
      }
      if (present) I.metrics_.push_back(m);
    }
  });
  return I.metrics_;
}

double Machine::metric_literal(std::string_view literal, const MetricTarget& target) const {
  const auto& I = *impl_;
  const std::string name = ascii_lowered(literal.starts_with('#') ? literal.substr(1) : literal);
  const Topology cpus(*this, *I.jail_, I.root_, name);
  if (name == "num_cpus") {
    auto present = cpus.present();
    auto list = present && !present->empty() ? *present : cpus.online();
    if (list.empty())
      throw Error(ErrorKind::machine, fmt::format("#num_cpus: {} lists no CPU", cpus.cpu_dir()));
    return static_cast<double>(list.back() + 1);
  }
  if (name == "num_cpus_online") {
    auto list = cpus.online();
    if (list.empty())
      throw Error(ErrorKind::machine, fmt::format("#num_cpus_online: {} lists no CPU", cpus.cpu_dir()));
    return static_cast<double>(list.size());
  }
  if (name == "num_cores")
    return cpus.distinct([](const CpuTopology& t) { return std::tuple{t.socket, t.die, t.core}; });
  if (name == "num_dies")
    return cpus.distinct([](const CpuTopology& t) { return std::pair{t.socket, t.die}; });
  if (name == "num_packages") return cpus.distinct([](const CpuTopology& t) { return t.socket; });
  if (name == "smt_on") return cpus.smt_on() ? 1 : 0;
  if (name == "core_wide") return cpus.core_wide(target) ? 1 : 0;
  if (name == "slots") return slots(core_pmus());
  if (name == "has_pmem") return io::exists(*I.jail_, I.root_ + "/firmware/acpi/tables/NFIT") ? 1 : 0;
  if (name == "system_tsc_freq") return system_tsc_freq(*I.jail_, I.root_);
  throw Error(ErrorKind::unknown_name,
              fmt::format("unknown literal '#{}'",
                          std::string(literal.starts_with('#') ? literal.substr(1) : literal)),
              "literals: #num_cpus, #num_cpus_online, #num_cores, #num_dies, #num_packages, #smt_on, "
              "#core_wide, #slots, #has_pmem, #system_tsc_freq");
}

bool Machine::nmi_watchdog() const {
  const auto& I = *impl_;
  std::call_once(I.nmi_once_, [&] {
    std::optional<std::string> text;
    std::error_code ec;
    if (std::filesystem::equivalent(I.root_, "/sys", ec))
      text = io::read_optional_file(io::Jail("/proc/sys/kernel"), "/proc/sys/kernel/nmi_watchdog");
    else
      text = io::read_optional_file(*I.jail_, I.root_ + "/perfspec-snapshot/nmi_watchdog");
    I.nmi_watchdog_ = text && io::trim(*text) != "0" && !io::trim(*text).empty();
  });
  return I.nmi_watchdog_;
}

std::optional<unsigned> Machine::metric_runtime_parameters(std::string_view aggregation) const {
  const auto& I = *impl_;
  const std::string file = I.root_ + "/bus/event_source/devices/hv_24x7/interface/" +
                           (aggregation == "PerChip" ? "sockets" : "coresperchip");
  std::optional<std::string> text;
  try {
    text = io::read_optional_file(*I.jail_, file);
  } catch (const Error&) {  // unreadable: as absent, perf's sysfs__read_int failing
    return std::nullopt;
  }
  if (!text) return std::nullopt;
  auto n = detail::jevents_number(io::trim(*text));
  if (!n || *n < 1 || *n > 4096) return std::nullopt;
  return static_cast<unsigned>(*n);
}

}  // namespace perfspec::spec
