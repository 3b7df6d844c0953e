// SPDX-License-Identifier: MIT
// A Machine: its PMUs (read lazily from the sysfs root), the event tables of its CPU, and its named
// events asked of its sources in order. Tracepoints are in machine_tracefs.cpp.
#include <regex.h>

#include <charconv>
#include <filesystem>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "spec/ascii.hpp"
#include "spec/machine_impl.hpp"
#include "spec/sources.hpp"

namespace perfspec::spec {

Machine::Impl::Impl(const Machine& machine, std::string root, MachineOptions options)
    : root_(std::move(root)), options_(std::move(options)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  devices_ = root_ + "/bus/event_source/devices";
  jail_ = std::make_shared<const io::Jail>(root_);
  // The lookup order of perf 6.12 (REFERENCE.md section 5): a PMU's `sys` table events are added
  // when it is loaded, before its sysfs aliases, so they win; a sysfs alias that the model's tables
  // also define takes the table's encoding (refined()); libpfm4 comes last, for core PMUs.
  sources_.push_back(make_table_source(machine, TableScope::sys));
  sources_.push_back(make_sysfs_source(machine));
  sources_.push_back(make_table_source(machine, TableScope::model));
  if (options_.libpfm4) sources_.push_back(make_libpfm4_source(machine));
  for (const auto& s : sources_) source_list_.push_back(s.get());
}

Machine::Machine(std::string sysfs_root, MachineOptions options)
    : impl_(std::make_unique<Impl>(*this, std::move(sysfs_root), std::move(options))) {}

const std::string& Machine::root() const { return impl_->root_; }
const MachineOptions& Machine::options() const { return impl_->options_; }
const Pmu* Machine::pmu(std::string_view name) const { return impl_->pmu(name); }
const std::vector<std::string>& Machine::pmu_names() const { return impl_->pmu_names(); }
const std::vector<const Pmu*>& Machine::core_pmus() const { return impl_->core_pmus(); }
const Pmu* Machine::find_pmu(std::string_view name) const { return impl_->find_pmu(name); }
const EventTables* Machine::tables() const { return impl_->tables(); }
const EventTables* Machine::tables_for(const Pmu& pmu) const { return impl_->tables_for(pmu); }
const EventTables* Machine::sys_tables() const { return impl_->sys_tables(); }
const std::vector<const EventSource*>& Machine::sources() const { return impl_->source_list_; }

Machine::~Machine() = default;

const Pmu* Machine::Impl::pmu(std::string_view name) const {
  if (!safe_component(name)) return nullptr;
  std::lock_guard lock(mutex_);
  if (auto it = pmus_.find(name); it != pmus_.end()) return it->second.get();
  if (absent_.contains(name)) return nullptr;
  std::string dir = devices_ + "/" + std::string(name);
  auto type_text = io::read_small_file(*jail_, dir + "/type");
  if (!type_text) {
    // Kept, since a wildcard (`uncore_imc/.../`) asks for its absent prefix on every resolve; but only
    // so many, since every unknown name a long-lived program is given would otherwise stay.
    if (absent_.size() < 4096) absent_.emplace(std::string(name), true);
    return nullptr;
  }
  auto t = io::trim(*type_text);
  std::uint32_t type = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), type);
  if (t.empty() || ec != std::errc{} || p != t.data() + t.size())
    throw Error(ErrorKind::machine, fmt::format("pmu '{}': '{}/type' holds '{}', not a PMU type number", name,
                                                dir, t.substr(0, 40)));
  auto pmu = std::make_unique<Pmu>();
  pmu->name_ = std::string(name);
  pmu->dir_ = dir;
  pmu->lazy_->jail = jail_;
  pmu->type_ = type;
  if (auto m = io::read_optional_file(*jail_, dir + "/cpumask")) {
    pmu->cpumask_ = std::string(io::trim(*m));
    pmu->uncore_ = true;
  }
  auto cpus = io::read_optional_file(*jail_, dir + "/cpus");
  if (cpus) pmu->cpus_ = std::string(io::trim(*cpus));
  pmu->core_ = name == "cpu" || name == "cpum_cf" || cpus.has_value();
  // perf reads the identifier of uncore PMUs only.
  if (pmu->uncore_)
    if (auto id = io::read_optional_file(*jail_, dir + "/identifier"))
      pmu->identifier_ = std::string(io::trim(*id));
  const Pmu* raw = pmu.get();
  pmus_.emplace(std::string(name), std::move(pmu));
  return raw;
}

const Pmu* Machine::pmu_of_type(std::uint32_t type) const {
  for (const auto& n : impl_->pmu_names())
    if (const Pmu* p = impl_->pmu(n); p && p->type() == type) return p;
  return nullptr;
}

const std::vector<std::string>& Machine::Impl::pmu_names() const {
  std::call_once(names_once_, [this] {
    for (auto& n : io::list_dir(*jail_, devices_))
      if (safe_component(n)) names_.push_back(n);
  });
  return names_;
}

const std::vector<const Pmu*>& Machine::Impl::core_pmus() const {
  // Only core candidates are loaded, so a broken uncore PMU cannot disturb `cycles`; a broken core PMU
  // is an error (thrown on every call until it reads), since skipping it would silently change the
  // encoding of every hardware event.
  std::call_once(cores_once_, [this] {
    std::vector<const Pmu*> out;
    for (const auto& n : pmu_names())
      if (n == "cpu" || io::exists(*jail_, devices_ + "/" + n + "/cpus"))
        if (const Pmu* p = pmu(n); p && p->is_core()) out.push_back(p);
    cores_ = std::move(out);
  });
  return cores_;
}

const Pmu* Machine::Impl::find_pmu(std::string_view name) const {
  if (const Pmu* p = pmu(name)) return p;
  if (name.empty()) return nullptr;
  // perf_pmus__find: a name that is no PMU folder may be another PMU's `alias`. The aliases are
  // collected once (wildcards like `uncore_imc/.../` ask here on every resolve).
  std::call_once(alias_names_once_, [this] {
    for (const auto& n : pmu_names()) {
      try {
        if (const Pmu* p = pmu(n); p && !p->alias_name().empty()) pmu_aliases_.emplace(p->alias_name(), p);
      } catch (const Error&) {
        // an unreadable PMU is not the one asked for by another name
      }
    }
  });
  auto it = pmu_aliases_.find(name);
  return it == pmu_aliases_.end() ? nullptr : it->second;
}

bool Machine::pmu_matches(std::string_view pattern, const Pmu& p) const {
  return pmu_name_matches(pattern, p.name()) ||
         (!p.alias_name().empty() && pmu_name_matches(pattern, p.alias_name()));
}

namespace {

// The first CPU of a sysfs CPU list ("0-15", "8,12"), or -1.
int first_cpu(std::string_view list) {
  list = io::trim(list);
  int cpu = 0;
  auto [p, ec] = std::from_chars(list.data(), list.data() + list.size(), cpu);
  return ec == std::errc{} && p != list.data() ? cpu : -1;
}

// The architecture folder perf compiled in for this CPU id: `dir` itself when it holds mapfile.csv,
// else its subfolder for the id's architecture (`--events-dir pmu-events` as well as `pmu-events/x86`).
std::string arch_folder(const std::string& dir, const std::string& cpuid) {
  std::error_code ec;
  if (std::filesystem::exists(dir + "/mapfile.csv", ec)) return dir;
  const char* name = nullptr;
  switch (table_arch("", cpuid)) {
    case TableArch::x86: name = "x86"; break;
    case TableArch::arm64: name = "arm64"; break;
    default:
#if defined(__x86_64__) || defined(__i386__)
      name = "x86";
#elif defined(__aarch64__)
      name = "arm64";
#elif defined(__powerpc__)
      name = "powerpc";
#elif defined(__s390__)
      name = "s390";
#elif defined(__riscv)
      name = "riscv";
#endif
      break;
  }
  if (name && std::filesystem::exists(fmt::format("{}/{}/mapfile.csv", dir, name), ec))
    return fmt::format("{}/{}", dir, name);
  return dir;  // find_model names the missing mapfile.csv
}

}  // namespace

const std::string& Machine::cpuid() const {
  impl_->tables();
  return impl_->cpuid_;
}

Machine::CpuidOrigin Machine::cpuid_origin() const {
  impl_->tables();
  return impl_->cpuid_origin_;
}

std::string Machine::Impl::midr_of(int cpu) const {
  if (cpu < 0) return {};
  auto text = io::read_small_file(
      *jail_, fmt::format("{}/devices/system/cpu/cpu{}/regs/identification/midr_el1", root_, cpu));
  return text ? std::string(io::trim(*text)) : std::string{};
}

const EventTables* Machine::Impl::tables() const {
  std::call_once(tables_once_, [this] {
    // The CPU id: the option, else the one a snapshot recorded, else this machine's: the MIDR of the
    // first core CPU under the root (arm64 keeps it in sysfs), else what perf reads from /proc.
    cpuid_ = options_.cpuid;
    cpuid_origin_ = CpuidOrigin::option;
    if (cpuid_.empty())
      if (auto recorded = io::read_small_file(*jail_, root_ + "/perfspec-snapshot/cpuid")) {
        cpuid_ = std::string(io::trim(*recorded));
        cpuid_origin_ = CpuidOrigin::snapshot;
      }
    cpuid_given_ = !cpuid_.empty();
    if (cpuid_.empty()) {
      int cpu = 0;
      try {
        for (const Pmu* p : core_pmus())
          if (int c = first_cpu(p->cpus().empty() ? p->cpumask() : p->cpus()); c >= 0) {
            cpu = c;
            break;
          }
      } catch (const Error&) {
        // a broken core PMU is reported where it is used
      }
      cpuid_ = midr_of(cpu);
      cpuid_origin_ = CpuidOrigin::midr;
    }
    if (cpuid_.empty()) {
      cpuid_ = detect_cpuid();
      cpuid_origin_ = CpuidOrigin::this_host;
    }
    if (options_.events_dir.empty()) return;
    arch_dir_ = arch_folder(options_.events_dir, cpuid_);
    arm64_ = table_arch(arch_dir_, cpuid_) == TableArch::arm64;
    auto model = find_model(arch_dir_, cpuid_);
    if (!model) return;
    tables_ = EventTables::load(arch_dir_, *model, EventTables::Options{options_.cache_dir});
  });
  return tables_.get();
}

const std::string& Machine::tables_folder() const {
  impl_->tables();
  return impl_->arch_dir_;
}

const EventTables* Machine::Impl::tables_for_cpuid(const std::string& cpuid) const {
  if (cpuid == cpuid_) return tables_.get();
  {
    std::lock_guard lock(mutex_);
    if (auto it = tables_by_cpuid_.find(cpuid); it != tables_by_cpuid_.end()) return it->second.get();
  }
  std::shared_ptr<const EventTables> t;
  if (auto model = find_model(arch_dir_, cpuid))
    t = EventTables::load(arch_dir_, *model, EventTables::Options{options_.cache_dir});
  std::lock_guard lock(mutex_);
  return tables_by_cpuid_.emplace(cpuid, std::move(t)).first->second.get();
}

const EventTables* Machine::Impl::tables_for(const Pmu& pmu) const {
  const EventTables* machine_tables = tables();
  if (!arm64_ || cpuid_given_ || arch_dir_.empty()) return machine_tables;
  // perf asks each PMU for its CPU id on arm64: the MIDR of the first CPU of its `cpus` (core) or
  // `cpumask` (uncore); a PMU with neither has no CPU and no model tables.
  const std::string& cpus = pmu.is_core() && !pmu.cpus().empty() ? pmu.cpus() : pmu.cpumask();
  if (cpus.empty()) return pmu.is_core() ? machine_tables : nullptr;
  std::string midr = midr_of(first_cpu(cpus));
  return midr.empty() ? machine_tables : tables_for_cpuid(midr);
}

const EventTables* Machine::Impl::sys_tables() const {
  tables();
  std::call_once(sys_once_, [this] {
    if (!arch_dir_.empty())
      sys_tables_ = EventTables::load_sys(arch_dir_, EventTables::Options{options_.cache_dir});
  });
  return sys_tables_.get();
}

namespace {

// perf's pmu_uncore_identifier_match: the Compat regex matches the whole identifier.
bool identifier_matches(const std::string& compat, const std::string& id) {
  regex_t re;
  if (::regcomp(&re, compat.c_str(), REG_EXTENDED) != 0) return false;
  regmatch_t m[1];
  bool found = ::regexec(&re, id.c_str(), 1, m, 0) == 0;
  ::regfree(&re);
  return found && m[0].rm_so == 0 && static_cast<std::size_t>(m[0].rm_eo) == id.size();
}

}  // namespace

bool Machine::table_event_applies(const TableEvent& e, const Pmu& pmu) const {
  if (e.sys)
    return pmu.is_uncore() && !pmu.identifier().empty() && !e.pmu.empty() && !e.compat.empty() &&
           table_pmu_matches(e.pmu, pmu.name()) && identifier_matches(e.compat, pmu.identifier());
  if (e.pmu.empty()) return pmu.is_core();
  return e.pmu == pmu.name() || (pmu.is_uncore() && table_pmu_matches(e.pmu, pmu.name()));
}

std::string Machine::table_cache_problem() const {
  const Impl& I = *impl_;
  if (const EventTables* t = I.tables(); t && !t->cache_problem().empty()) return t->cache_problem();
  std::lock_guard lock(I.mutex_);
  for (const auto& [id, t] : I.tables_by_cpuid_)
    if (t && !t->cache_problem().empty()) return t->cache_problem();
  return {};  // the sys tables use the same folder: what is wrong with it shows above
}

std::vector<TableDiagnostic> Machine::table_problems() const {
  const Impl& I = *impl_;
  std::vector<TableDiagnostic> out;
  auto add = [&](const EventTables* t) {
    if (t)
      for (const auto& d : t->diagnostics())
        if (!d.entry) out.push_back(d);
  };
  add(I.tables());
  {
    std::lock_guard lock(I.mutex_);
    for (const auto& [id, t] : I.tables_by_cpuid_) add(t.get());
  }
  add(I.sys_tables());
  return out;
}

const Alias* Machine::Impl::refined(const Pmu& pmu, std::string_view name, const Alias& a,
                                    const Alias& t) const {
  // A sysfs alias that the model tables also define takes the table's encoding and per-pkg, and its
  // scale and unit when the entry has them (perf's update_alias); the rest stays the sysfs file's.
  std::string key = fmt::format("{}/{}", pmu.name(), ascii_lowered(name));
  std::lock_guard lock(mutex_);
  if (auto it = merged_.find(key); it != merged_.end()) return it->second.get();
  auto m = std::make_unique<Alias>(a);
  m->terms = t.terms;
  m->per_pkg = t.per_pkg;
  if (!t.scale_text.empty() || !t.unit.empty()) {
    m->scale = t.scale;
    m->scale_text = t.scale_text;
    m->unit = t.unit;
  }
  m->source = Source::json;
  m->origin = fmt::format("{} (over the sysfs file '{}')", t.origin, a.origin);
  return merged_.emplace(key, std::move(m)).first->second.get();
}

const Alias* Machine::Impl::named_event(const Pmu& pmu, std::string_view name, bool fallbacks) const {
  for (std::size_t i = 0; i < sources_.size(); ++i) {
    const EventSource& s = *sources_[i];
    if (s.fallback() && !fallbacks) continue;
    const Alias* a = s.find(pmu, name);
    if (!a) continue;
    if (s.kind() == Source::sysfs)
      for (std::size_t j = i + 1; j < sources_.size(); ++j)
        if (sources_[j]->kind() == Source::json && !sources_[j]->fallback())
          if (const Alias* t = sources_[j]->find(pmu, name)) return refined(pmu, name, *a, *t);
    return a;
  }
  return nullptr;
}

const Alias* Machine::alias(const Pmu& pmu, std::string_view name) const {
  return impl_->named_event(pmu, name, true);
}

const std::vector<std::pair<const Pmu*, const Alias*>>& Machine::aliases_named(std::string_view name) const {
  const Impl& I = *impl_;
  // Kept per name: a bare name is looked up on every PMU, and event strings repeat names. The key is
  // the lower-cased name, built in a per-thread buffer so that a lookup does not allocate.
  thread_local std::string key;
  key.assign(name);
  for (char& c : key) c = ascii_lower(c);
  {
    std::lock_guard lock(I.mutex_);
    if (auto it = I.named_.find(key); it != I.named_.end()) return it->second;
  }
  std::string lower = key;  // the buffer is only for the lookup above
  std::vector<std::pair<const Pmu*, const Alias*>> out;
  // A PMU that cannot be read does not hide the name on the others; when the name is found nowhere,
  // the first such error is the answer (that PMU may be the one that has it).
  std::optional<Error> unreadable;
  for (const auto& n : I.pmu_names()) {
    try {
      const Pmu* pmu = I.pmu(n);
      if (!pmu) continue;
      if (const Alias* a = I.named_event(*pmu, name, false)) out.emplace_back(pmu, a);
    } catch (const Error& e) {
      if (!unreadable) unreadable = e;
    }
  }
  // A fallback source (libpfm4) names what no other source has on any PMU.
  if (out.empty())
    for (const auto& s : I.sources_)
      if (s->fallback())
        for (const Pmu* pmu : I.core_pmus())
          if (const Alias* a = s->find(*pmu, name)) out.emplace_back(pmu, a);
  if (out.empty() && unreadable) throw *unreadable;  // not kept: the tree may be mended
  // A name found nowhere is not kept either: it is an error, and keeping every unknown name a
  // long-lived program is given would grow without bound.
  static const std::vector<std::pair<const Pmu*, const Alias*>> none;
  if (out.empty()) return none;
  std::lock_guard lock(I.mutex_);
  return I.named_.emplace(std::move(lower), std::move(out))
      .first->second;  // or the answer another thread kept
}

}  // namespace perfspec::spec
