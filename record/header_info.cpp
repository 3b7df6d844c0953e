// SPDX-License-Identifier: MIT
// The feature sections of a perf.data file read into HeaderInfo, each as perf 6.12's process_*
// functions of tools/perf/util/header.c read it: the same fields in the same order, the same checks.
#include "perfspec/header_info.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "record/perf_data_impl.hpp"

namespace perfspec::record {

namespace {

using detail::bad;

// A bounds-checked reader of one feature section: a read past its end is an error naming the feature
// and where its section starts.
class Section {
 public:
  Section(const PerfData& file, Feature f)
      : bytes_(file.feature(f)), where_(file.feature_offset(f)), name_(feature_name(f)) {}

  std::size_t size() const { return size_ + bytes_.size(); }
  std::size_t used() const { return size_; }
  std::uint32_t u32(std::string_view what) {
    need(4, what);
    std::uint32_t v = detail::u32_at(bytes_, 0);
    advance(4);
    return v;
  }
  std::uint64_t u64(std::string_view what) {
    need(8, what);
    std::uint64_t v = detail::u64_at(bytes_, 0);
    advance(8);
    return v;
  }
  void skip(std::uint32_t n, std::string_view what) {
    need(n, what);
    advance(n);
  }
  std::string string(std::string_view what) {
    std::size_t before = bytes_.size();
    std::string s = detail::header_string(bytes_, where_, fmt::format("{}: {}", name_, what));
    size_ += before - bytes_.size();
    return s;
  }
  // `count` strings; the count is checked against what is left (each takes at least 4 bytes).
  std::vector<std::string> strings(std::uint32_t count, std::string_view what) {
    check_count(count, 4, what);
    std::vector<std::string> out;
    out.reserve(count);
    for (std::uint32_t i = 0; i < count; ++i) out.push_back(string(what));
    return out;
  }
  // A count of entries each at least `min_size` bytes long: one the section cannot hold is an error
  // before anything is allocated for it.
  void check_count(std::uint64_t count, std::size_t min_size, std::string_view what) const {
    if (count > bytes_.size() / min_size)
      fail(fmt::format("{} {} do not fit in the {} bytes left of its section", count, what, bytes_.size()));
  }
  [[noreturn]] void fail(const std::string& message) const {
    bad(where_, fmt::format("the {} section at offset {:#x}: {}", name_, where_, message));
  }

 private:
  std::span<const std::byte> bytes_;
  std::uint64_t where_;
  std::string_view name_;
  std::size_t size_ = 0;  // bytes read so far

  void need(std::size_t n, std::string_view what) const {
    if (bytes_.size() < n) fail(fmt::format("{} is cut off", what));
  }
  void advance(std::size_t n) {
    bytes_ = bytes_.subspan(n);
    size_ += n;
  }
};

// perf's process_cpu_topology: sibling sockets and threads; then, when the section goes on, each
// CPU's core and socket; then, when it still goes on, the die lists and each CPU's die.
CpuTopologyInfo cpu_topology(const PerfData& file) {
  Section s(file, Feature::cpu_topology);
  CpuTopologyInfo t;
  t.sockets = s.strings(s.u32("the number of socket lists"), "socket lists");
  t.threads = s.strings(s.u32("the number of thread lists"), "thread lists");
  if (s.used() >= s.size()) return t;  // an old perf's: no ids
  t.has_ids = true;
  const std::uint32_t cpus = file.nr_cpus() ? file.nr_cpus()->first : 0;
  auto arch = file.feature_string(Feature::arch);
  // perf: socket numbers on s390 and arm64 need not be CPU numbers
  const bool check_socket = !(arch && (arch->starts_with("s390") || arch->starts_with("aarch64")));
  s.check_count(cpus, 8, "CPUs' core and socket ids");
  t.cpus.resize(cpus);
  for (auto& c : t.cpus) {
    c.core = static_cast<std::int32_t>(s.u32("a core id"));
    std::uint32_t socket = s.u32("a socket id");
    if (check_socket && socket != ~std::uint32_t{0} && socket > cpus)
      s.fail(fmt::format("socket id {} is past the {} CPUs of HEADER_NRCPUS", socket, cpus));
    c.socket = static_cast<std::int32_t>(socket);
  }
  if (s.used() >= s.size()) return t;  // no dies
  t.has_dies = true;
  t.dies = s.strings(s.u32("the number of die lists"), "die lists");
  for (auto& c : t.cpus) c.die = static_cast<std::int32_t>(s.u32("a die id"));
  return t;
}

std::vector<NumaNodeInfo> numa_nodes(const PerfData& file) {
  Section s(file, Feature::numa_topology);
  std::uint32_t n = s.u32("the number of nodes");
  s.check_count(n, 24, "nodes");
  std::vector<NumaNodeInfo> out(n);
  for (auto& node : out) {
    node.node = s.u32("a node number");
    node.total_kb = s.u64("a node's memory");
    node.free_kb = s.u64("a node's free memory");
    node.cpus = s.string("a node's CPU list");
  }
  return out;
}

std::vector<std::pair<std::uint32_t, std::string>> pmu_mappings(const PerfData& file) {
  Section s(file, Feature::pmu_mappings);
  std::uint32_t n = s.u32("the number of PMUs");
  s.check_count(n, 8, "PMUs");
  std::vector<std::pair<std::uint32_t, std::string>> out;
  for (std::uint32_t i = 0; i < n; ++i) {
    std::uint32_t type = s.u32("a PMU's type");
    out.emplace_back(type, s.string("a PMU's name"));
  }
  return out;
}

std::vector<GroupInfo> groups(const PerfData& file) {
  Section s(file, Feature::group_desc);
  std::uint32_t n = s.u32("the number of groups");
  s.check_count(n, 12, "groups");
  std::vector<GroupInfo> out(n);
  std::size_t free = 0;  // perf: groups in the events' order, apart, each within the events
  for (auto& g : out) {
    g.name = s.string("a group's name");
    g.leader = s.u32("a group's leader");
    g.members = s.u32("a group's number of members");
    if (g.leader < free || g.leader >= file.events().size() || g.members == 0 ||
        g.members > file.events().size() - g.leader)
      s.fail(
          fmt::format("a group of {} events led by event {} is not within the file's {} events after the "
                      "groups before it",
                      g.members, g.leader, file.events().size()));
    free = g.leader + g.members;
  }
  return out;
}

std::vector<CacheInfo> caches(const PerfData& file) {
  Section s(file, Feature::cache);
  if (std::uint32_t version = s.u32("the version"); version != 1)
    s.fail(fmt::format("version {} is not the one perf writes (1)", version));
  std::uint32_t n = s.u32("the number of caches");
  s.check_count(n, 28, "caches");
  std::vector<CacheInfo> out(n);
  for (auto& c : out) {
    c.level = s.u32("a cache's level");
    c.line_size = s.u32("a cache's line size");
    c.sets = s.u32("a cache's sets");
    c.ways = s.u32("a cache's ways");
    c.type = s.string("a cache's type");
    c.size = s.string("a cache's size");
    c.map = s.string("a cache's CPU list");
  }
  return out;
}

MemoryTopologyInfo memory(const PerfData& file) {
  Section s(file, Feature::mem_topology);
  if (std::uint64_t version = s.u64("the version"); version != 1)
    s.fail(fmt::format("version {} is not the one perf writes (1)", version));
  MemoryTopologyInfo m;
  m.block_size = s.u64("the block size");
  std::uint64_t n = s.u64("the number of nodes");
  s.check_count(n, 24, "nodes");
  m.nodes.resize(static_cast<std::size_t>(n));
  for (auto& node : m.nodes) {
    node.node = s.u64("a node number");
    s.u64("a node's size");
    node.blocks = s.u64("a node's number of blocks");
    std::uint64_t words = node.blocks / 64 + (node.blocks % 64 != 0);
    s.check_count(words, 8, "words of a node's blocks");
    node.bitmap.resize(static_cast<std::size_t>(words));
    for (auto& w : node.bitmap) w = s.u64("a node's blocks");
  }
  return m;
}

std::vector<std::string> caps(Section& s) {
  std::uint32_t n = s.u32("the number of capabilities");
  s.check_count(n, 8, "capabilities");
  std::vector<std::string> out;
  for (std::uint32_t i = 0; i < n; ++i) {
    std::string name = s.string("a capability's name");
    out.push_back(name + "=" + s.string("a capability's value"));
  }
  return out;
}

std::vector<PmuCapsInfo> pmu_caps(const PerfData& file) {
  Section s(file, Feature::pmu_caps);
  std::uint32_t n = s.u32("the number of PMUs");
  s.check_count(n, 8, "PMUs");
  std::vector<PmuCapsInfo> out(n);
  for (auto& p : out) {
    p.caps = caps(s);
    p.pmu = s.string("a PMU's name");
  }
  return out;
}

ClockDataInfo clock_data(const PerfData& file) {
  Section s(file, Feature::clock_data);
  if (std::uint32_t version = s.u32("the version"); version != 1)
    s.fail(fmt::format("version {} is not the one perf writes (1)", version));
  ClockDataInfo c;
  c.clockid = s.u32("the clock id");
  c.tod_ns = s.u64("the time of day");
  c.clockid_ns = s.u64("the clock's time");
  return c;
}

std::vector<HybridNodeInfo> hybrid_nodes(const PerfData& file) {
  Section s(file, Feature::hybrid_topology);
  std::uint32_t n = s.u32("the number of nodes");
  s.check_count(n, 8, "nodes");
  std::vector<HybridNodeInfo> out(n);
  for (auto& node : out) {
    node.pmu = s.string("a PMU's name");
    node.cpus = s.string("a PMU's CPU list");
  }
  return out;
}

// HEADER_BPF_BTF: per entry its id, its size and its bytes (perf keeps them in a tree by id).
std::vector<std::uint32_t> btf_ids(const PerfData& file) {
  Section s(file, Feature::bpf_btf);
  std::uint32_t n = s.u32("the number of entries");
  s.check_count(n, 8, "entries");
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < n; ++i) {
    out.push_back(s.u32("an entry's id"));
    s.skip(s.u32("an entry's size"), "an entry's data");
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

CompressedInfo compressed(const PerfData& file) {
  Section s(file, Feature::compressed);
  CompressedInfo c;
  c.version = s.u32("the version");
  c.type = s.u32("the type");
  c.level = s.u32("the level");
  c.ratio = s.u32("the ratio");
  c.mmap_len = s.u32("the mmap length");
  return c;
}

}  // namespace

HeaderInfo read_header_info(const PerfData& file) {
  HeaderInfo h;
  auto has = [&](Feature f) { return file.has_feature(f); };
  if (has(Feature::cpu_topology)) h.cpu_topology = cpu_topology(file);
  if (has(Feature::numa_topology)) h.numa_nodes = numa_nodes(file);
  if (has(Feature::pmu_mappings)) h.pmu_mappings = pmu_mappings(file);
  if (has(Feature::group_desc)) h.groups = groups(file);
  if (has(Feature::cache)) h.caches = caches(file);
  if (has(Feature::sample_time_range)) {
    Section s(file, Feature::sample_time_range);
    std::uint64_t first = s.u64("the first sample's time");
    h.sample_time = std::pair{first, s.u64("the last sample's time")};
  }
  if (has(Feature::mem_topology)) h.memory = memory(file);
  if (has(Feature::clockid)) h.clock_resolution_ns = Section(file, Feature::clockid).u64("the resolution");
  if (has(Feature::dir_format)) h.dir_version = Section(file, Feature::dir_format).u64("the version");
  if (has(Feature::bpf_prog_info)) h.bpf_programs = Section(file, Feature::bpf_prog_info).u32("the count");
  if (has(Feature::bpf_btf)) h.bpf_btfs = btf_ids(file);
  if (has(Feature::compressed)) h.compressed = compressed(file);
  if (has(Feature::cpu_pmu_caps)) {
    Section s(file, Feature::cpu_pmu_caps);
    h.cpu_pmu_caps = caps(s);
  }
  if (has(Feature::clock_data)) h.clock_data = clock_data(file);
  if (has(Feature::hybrid_topology)) h.hybrid_nodes = hybrid_nodes(file);
  if (has(Feature::pmu_caps)) h.pmu_caps = pmu_caps(file);
  return h;
}

}  // namespace perfspec::record
