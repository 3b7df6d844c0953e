// SPDX-License-Identifier: MIT
// A recording session (perfspec/recording.hpp): a Sampler's records written into a perf.data file as
// they come, with what perf record writes beside them.
#include "perfspec/recording.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/record.hpp"
#include "perfspec/tracepoint.hpp"
#include "runtime/build_ids.hpp"
#include "runtime/process.hpp"

namespace perfspec::runtime {
namespace {

// The value of `key` in a /proc file of `key: value` lines (cpuinfo, meminfo), empty when absent.
std::string proc_value(const char* file, std::string_view key) {
  std::ifstream f(file);
  std::string line;
  while (std::getline(f, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto v = line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    return v;
  }
  return {};
}

// Where perf puts a PMU among the others (pmu_name_cmp): by name without a `_N` suffix (decimal, or
// hexadecimal of more than two digits), then by that suffix's number.
std::size_t name_without_suffix(std::string_view name) {
  std::size_t len = name.size();
  bool hex_letters = false;
  while (len > 0 && std::isxdigit(static_cast<unsigned char>(name[len - 1]))) {
    if (!std::isdigit(static_cast<unsigned char>(name[len - 1]))) hex_letters = true;
    --len;
  }
  if (len > 0 && len != name.size() && name[len - 1] == '_' && (!hex_letters || name.size() - len > 2))
    return len - 1;
  return name.size();
}

bool pmu_before(std::string_view a, std::string_view b) {
  const std::size_t la = name_without_suffix(a), lb = name_without_suffix(b);
  if (int c = a.substr(0, la).compare(b.substr(0, lb)); c != 0) return c < 0;
  auto number = [](std::string_view s, std::size_t at) {
    return at + 1 < s.size() ? std::strtoull(std::string(s.substr(at + 1)).c_str(), nullptr, 16) : 0ULL;
  };
  const auto na = number(a, la), nb = number(b, lb);
  return na != nb ? na < nb : a < b;
}

// HEADER_PMU_MAPPINGS as perf 6.12 lists the PMUs (perf_pmus__scan): the core PMUs first (perf's
// `cpu` of type PERF_TYPE_RAW in their place when sysfs has none), then the others in its order.
std::vector<std::pair<std::uint32_t, std::string>> pmu_mappings(const spec::Machine& machine) {
  std::vector<std::pair<std::uint32_t, std::string>> out;
  const auto& cores = machine.core_pmus();
  for (const spec::Pmu* p : cores) out.emplace_back(p->type(), p->name());
  if (cores.empty()) out.emplace_back(4, "cpu");
  std::vector<std::string> others;
  for (const auto& name : machine.pmu_names())
    if (std::none_of(cores.begin(), cores.end(), [&](const spec::Pmu* p) { return p->name() == name; }))
      others.push_back(name);
  std::stable_sort(others.begin(), others.end(), pmu_before);
  for (const auto& name : others)
    if (const spec::Pmu* p = machine.pmu(name)) out.emplace_back(p->type(), name);
  return out;
}

// HEADER_CPU_TOPOLOGY and HEADER_NUMA_TOPOLOGY. A sysfs file that cannot be read as perf reads it
// leaves its feature out, as perf leaves out a feature it fails to write: the samples do not need it.
void describe_topology(record::PerfDataWriter& out, const spec::Machine& machine, std::string_view arch,
                       std::uint32_t available) {
  try {
    spec::SiblingLists lists = machine.sibling_lists();
    if (arch != "x86_64" && arch != "s390x") lists.dies.clear();  // perf counts dies only there
    if (!lists.packages.empty()) out.set_cpu_topology(lists, machine.cpu_topology(), available);
  } catch (const Error&) {
  }
  try {
    if (auto nodes = machine.numa_nodes(); !nodes.empty()) out.set_numa_topology(nodes);
  } catch (const Error&) {
  }
}

// The header features perf record writes that say where the data was taken.
void describe_host(record::PerfDataWriter& out, const spec::Machine& machine,
                   const std::vector<std::string>& cmdline) {
  struct utsname u {};
  if (::uname(&u) == 0) {
    out.set_string(record::Feature::hostname, u.nodename);
    out.set_string(record::Feature::osrelease, u.release);
    out.set_string(record::Feature::arch, u.machine);
  }
  out.set_string(record::Feature::version, "0.1.0 (perfspec)");
  long conf = ::sysconf(_SC_NPROCESSORS_CONF), online = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (conf > 0 && online > 0) {
    out.set_nr_cpus(static_cast<std::uint32_t>(conf), static_cast<std::uint32_t>(online));
    describe_topology(out, machine, u.machine, static_cast<std::uint32_t>(conf));
  }
  try {
    out.set_pmu_mappings(pmu_mappings(machine));
  } catch (const Error&) {  // a PMU whose type sysfs garbles: left out, as perf leaves out a feature it fails
                            // to write
  }
  if (auto model = proc_value("/proc/cpuinfo", "model name"); !model.empty())
    out.set_string(record::Feature::cpudesc, model);
  // perf's header writes an x86 cpuid as VENDOR,FAMILY,MODEL,STEPPING
  std::string cpuid = machine.cpuid();
  if (cpuid.rfind("GenuineIntel", 0) == 0 || cpuid.rfind("AuthenticAMD", 0) == 0 ||
      cpuid.rfind("HygonGenuine", 0) == 0)
    std::replace(cpuid.begin(), cpuid.end(), '-', ',');
  if (!cpuid.empty()) out.set_string(record::Feature::cpuid, cpuid);
  if (auto mem = proc_value("/proc/meminfo", "MemTotal"); !mem.empty())
    out.set_total_mem(std::strtoull(mem.c_str(), nullptr, 10));
  out.set_cmdline(cmdline);
}

// A target that exists before the recording: its processes are synthesized, and the side-band comes
// from a tracking event enabled as it opens.
bool exists_before(const Target& t) {
  return t.kind == Target::Kind::cpus || (t.kind == Target::Kind::process && !t.enable_on_exec);
}

}  // namespace

struct Recording::Impl {
  Impl(const spec::Machine& m, const Target& t, RecordingOptions o, Sampler s)
      : machine(m), target(t), options(std::move(o)), sampler(std::move(s)) {}
  const spec::Machine& machine;
  Target target;
  RecordingOptions options;
  std::vector<int> map_timeouts;  // processes whose maps were cut short
  Sampler sampler;
  std::vector<record::FileEvent> file_events;
  record::Formats formats;
  EventSet recorded;  // the events that opened
  record::PerfDataWriter* out = nullptr;
  bool begun = false;  // a first file was begun (the events were enabled then)
  RecordingSummary summary;
  std::uint64_t first_time = ~std::uint64_t{0}, last_time = 0;
  BuildIds build_ids{formats};          // the binaries samples hit, for HEADER_BUILD_ID
  std::vector<std::size_t> file_index;  // per event of the set: its index among the file's, or npos

  // HEADER_GROUP_DESC: the groups of more than one event that opened, as perf names them.
  std::vector<record::PerfDataWriter::GroupDescription> group_description() const {
    std::vector<record::PerfDataWriter::GroupDescription> groups;
    for (const auto& g : sampler.events().groups) {
      if (g.members.empty() || file_index[g.members.front()] == std::string::npos) continue;
      const auto opened = std::count_if(g.members.begin(), g.members.end(),
                                        [&](std::size_t e) { return file_index[e] != std::string::npos; });
      if (opened < 2) continue;
      groups.push_back({g.name.empty() ? "{anon_group}" : g.name,
                        static_cast<std::uint32_t>(file_index[g.members.front()]),
                        static_cast<std::uint32_t>(opened)});
    }
    return groups;
  }

  // One record as it is written: the binaries it maps or its sample hits, the samples' time range.
  void seen(std::span<const std::byte> bytes) {
    record::Record r;
    const std::uint32_t type = record_header(bytes).type;
    const bool sample = type == static_cast<std::uint32_t>(record::Type::sample);
    if (sample) ++summary.samples;
    if (!sample && type != static_cast<std::uint32_t>(record::Type::mmap) &&
        type != static_cast<std::uint32_t>(record::Type::mmap2) &&
        type != static_cast<std::uint32_t>(record::Type::fork))
      return;
    try {
      formats.decode(bytes, 0, r);
    } catch (const record::DecodeError&) {  // written as it came; the time range leaves it out
      return;
    }
    build_ids.see(r, bytes);
    if (sample && r.sample_id.has(record::sample_time)) {
      first_time = std::min(first_time, r.sample_id.time);
      last_time = std::max(last_time, r.sample_id.time);
    }
  }

  // The records of what exists: the kernel's text, the cgroups, and the target's processes (every
  // process for every CPU). A command's own come from its exec in the first file, but at the end of a
  // file (overwrite buffers, whose exec records the kernel may have written over) it is synthesized
  // first, as perf's tail synthesis does.
  void synthesize_existing(std::vector<std::byte>& bytes) {
    const Attr& first = file_events.front().attr;
    auto process = [&](int pid) {
      if (synthesize_process(pid, first, bytes, "/proc", options.proc_map_timeout, namespaces()))
        map_timeouts.push_back(pid);
    };
    const bool tail = options.sampling.overwrite;
    const bool command = target.kind == Target::Kind::process && target.enable_on_exec;
    if (command && tail) process(target.pid);
    synthesize_kernel(first, bytes);
    if (options.cgroups) synthesize_cgroups(first, bytes, cgroup_root());
    if (target.kind == Target::Kind::process && (!command || (begun && !tail))) process(target.pid);
    if (target.kind == Target::Kind::cpus)
      for (int pid : numbered_entries("/proc")) process(pid);
  }

  // perf record --namespaces: the tracking event records them, and the threads that exist are
  // synthesized with theirs.
  bool namespaces() const {
    return std::any_of(file_events.begin(), file_events.end(),
                       [](const auto& e) { return e.attr.namespaces; });
  }

  // Synthesized records into the file, seen, then a FINISHED_ROUND.
  void write_synthesized(std::span<const std::byte> bytes) {
    out->write(bytes);
    for (std::size_t at = 0; at + 8 <= bytes.size();) {
      const std::size_t size = record_header(bytes.subspan(at)).size;
      if (size < 8 || at + size > bytes.size()) break;
      seen(bytes.subspan(at, size));
      at += size;
    }
    out->finish_round();
  }

  // Everything the buffers hold now, into the file; a FINISHED_ROUND after a pass that wrote. True
  // when it wrote.
  // (Overwrite buffers are read once, before the records of what exists, which the samples need for
  // their binaries: nothing is settled then.)
  bool take() {
    std::size_t n = sampler.read([&](std::span<const std::byte> bytes) {
      out->write(bytes);
      seen(bytes);
    });
    if (n) out->finish_round();
    if (!options.sampling.overwrite) build_ids.settle();
    return n != 0;
  }
};

Recording::Recording(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Recording::Recording(Recording&&) noexcept = default;
Recording& Recording::operator=(Recording&&) noexcept = default;
Recording::~Recording() = default;

Recording Recording::open(const spec::Machine& machine, const EventSet& set, const Target& target,
                          const RecordingOptions& options) {
  RecordingOptions o = options;
  if (exists_before(target)) o.sampling.track_at_open = true;
  if (!o.build_ids) o.sampling.mmap_build_id = false;
  auto sampler = Sampler::open(set, target, o.sampling);
  auto impl = std::make_unique<Impl>(machine, target, std::move(o), std::move(sampler));
  // The events as opened (with the tracking event of a process or every CPU, last), and what reading
  // their samples needs.
  const Sampler& s = impl->sampler;
  impl->file_index.assign(s.events().events.size(), std::string::npos);
  for (std::size_t i = 0; i < s.events().events.size(); ++i) {
    if (!s.opened(i)) continue;
    impl->file_index[i] = impl->file_events.size();
    impl->file_events.push_back({s.attrs()[i], s.ids()[i], s.events().events[i].name});
    impl->formats.add(s.attrs()[i], s.ids()[i]);
    impl->recorded.events.push_back(s.events().events[i]);
  }
  return Recording(std::move(impl));
}

const EventSet& Recording::events() const { return impl_->sampler.events(); }
const std::vector<std::optional<Failure>>& Recording::failures() const { return impl_->sampler.failures(); }
bool Recording::opened(std::size_t index) const { return impl_->sampler.opened(index); }
bool Recording::sampling() const { return !impl_->file_events.empty(); }
const std::vector<record::FileEvent>& Recording::file_events() const { return impl_->file_events; }
const std::vector<int>& Recording::map_timeouts() const { return impl_->map_timeouts; }

void Recording::begin(record::PerfDataWriter& out) {
  Impl& r = *impl_;
  if (!sampling()) throw Error(ErrorKind::usage, "no event of the recording samples: nothing to record");
  r.out = &out;
  if (std::any_of(r.file_events.begin(), r.file_events.end(), [](const auto& e) { return e.attr.type == 2; }))
    out.set_tracing_data(record::tracing_data_of(r.machine, r.recorded));
  describe_host(out, r.machine, r.options.cmdline);
  if (auto groups = r.group_description(); !groups.empty()) out.set_group_desc(groups);
  // What existed before: the kernel's text, and the processes already running; with overwrite buffers
  // at the end of the file instead, as what exists when they are read (perf's tail synthesis), but the
  // COMM of a command waiting for its exec, which perf writes first whatever the mode.
  std::vector<std::byte> synthesized;
  if (!r.options.sampling.overwrite) r.synthesize_existing(synthesized);
  if (r.target.kind == Target::Kind::process && r.target.enable_on_exec && !r.begun)
    synthesize_comm(r.target.pid, r.file_events.front().attr, synthesized, "/proc", r.namespaces());
  r.write_synthesized(synthesized);
  if (!r.begun && !r.target.enable_on_exec && !r.options.sampling.start_disabled) r.sampler.enable();
  r.begun = true;
}

int Recording::enable() { return impl_->sampler.enable(false); }
int Recording::disable() { return impl_->sampler.disable(false); }

Wakeup Recording::drain(int timeout_ms) {
  Impl& r = *impl_;
  if (!r.out) throw Error(ErrorKind::usage, "Recording::drain before begin()");
  auto p = r.sampler.poll(timeout_ms);
  if (p.state == Wakeup::failed) throw Error(ErrorKind::io, fmt::format("poll: {}", std::strerror(p.error)));
  if (r.options.sampling.overwrite) {  // the newest records, at end_file(); a wake-up counted as perf's
    if (p.state != Wakeup::timeout) ++r.summary.wakeups;
    return p.state;
  }
  if (r.take()) ++r.summary.wakeups;
  return p.state;
}

RecordingSummary Recording::finish() {
  Impl& r = *impl_;
  if (!r.out) throw Error(ErrorKind::usage, "Recording::finish before begin()");
  r.sampler.disable();
  return end_file();
}

RecordingSummary Recording::end_file() {
  Impl& r = *impl_;
  if (!r.out) throw Error(ErrorKind::usage, "Recording::end_file before begin()");
  r.take();
  if (r.options.sampling.overwrite) {
    std::vector<std::byte> synthesized;
    r.synthesize_existing(synthesized);
    r.write_synthesized(synthesized);
  }
  if (r.first_time <= r.last_time) r.out->set_sample_time(r.first_time, r.last_time);
  // perf record's post-processing: the build ids of the binaries samples hit (not in pipe mode,
  // whose features went out first)
  if (!r.out->pipe() && r.options.build_ids)
    if (auto ids = r.build_ids.section(); !ids.empty())
      r.out->set_feature(record::Feature::build_id, std::move(ids));
  r.summary.bytes = r.out->data_size();
  r.out->finish();
  r.out = nullptr;
  r.summary.losses = r.sampler.losses();
  RecordingSummary file = r.summary;
  r.summary = {};  // the next file's
  r.first_time = ~std::uint64_t{0};
  r.last_time = 0;
  return file;
}

}  // namespace perfspec::runtime
