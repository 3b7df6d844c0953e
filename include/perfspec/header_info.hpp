// SPDX-License-Identifier: MIT
#pragma once
// The facts of a perf.data file's feature sections beyond its names and strings (perf_data.hpp): the
// machine's CPU, NUMA and memory topology, its caches, PMUs and their capabilities, the event
// groups, the time the samples span, the clocks and compression. Read as perf 6.12 reads them into
// its struct perf_env; what `perfspec report --header` prints.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "perfspec/perf_data.hpp"

namespace perfspec::record {

/// HEADER_CPU_TOPOLOGY: the sibling lists, and each CPU's core, die and socket.
struct CpuTopologyInfo {
  std::vector<std::string> sockets;  ///< perf's "sibling sockets" (the CPUs of each package)
  std::vector<std::string> dies;     ///< "sibling dies": empty where the section has none
  std::vector<std::string> threads;  ///< "sibling threads" (the CPUs of each core)
  struct Cpu {
    std::int32_t core = 0, die = 0, socket = 0;  ///< -1 for a CPU that was not present
  };
  /// Per CPU from 0 to HEADER_NRCPUS' available count.
  std::vector<Cpu> cpus;
  bool has_ids = false;   ///< the section holds the CPUs' ids (a perf older than 4.1 wrote none)
  bool has_dies = false;  ///< the section holds die lists and ids (perf writes them where dies exist)
};

/// One node of HEADER_NUMA_TOPOLOGY.
struct NumaNodeInfo {
  std::uint32_t node = 0;
  std::uint64_t total_kb = 0, free_kb = 0;
  std::string cpus;  ///< as written (`0-3,8-11`)
};

/// One group of HEADER_GROUP_DESC.
struct GroupInfo {
  std::string name;  ///< perf's `{anon_group}` for a group without a name
  std::uint32_t leader = 0, members = 0;
};

/// One cache of HEADER_CACHE (sysfs' cache/indexN of a CPU).
struct CacheInfo {
  std::uint32_t level = 0, line_size = 0, sets = 0, ways = 0;
  std::string type, size, map;  ///< `Data`, `32K`, `0-1`
};

/// HEADER_MEM_TOPOLOGY: sysfs' memory blocks of each node.
struct MemoryTopologyInfo {
  std::uint64_t block_size = 0;
  struct Node {
    std::uint64_t node = 0;
    std::uint64_t blocks = 0;           ///< the bitmap's size in bits
    std::vector<std::uint64_t> bitmap;  ///< a bit per memory block
  };
  std::vector<Node> nodes;
};

/// HEADER_COMPRESSED: how perf record -z compressed the data.
struct CompressedInfo {
  std::uint32_t version = 0, type = 0, level = 0, ratio = 0, mmap_len = 0;
};

/// HEADER_CLOCK_DATA: one moment read on the wall clock and on the events' clock.
struct ClockDataInfo {
  std::uint32_t clockid = 0;
  std::uint64_t tod_ns = 0, clockid_ns = 0;
};

/// A PMU's capabilities (sysfs' caps/), as `name=value`.
struct PmuCapsInfo {
  std::string pmu;
  std::vector<std::string> caps;
};

/// One node of HEADER_HYBRID_TOPOLOGY.
struct HybridNodeInfo {
  std::string pmu, cpus;
};

/// What the feature sections say; a member is empty when its feature is absent.
struct HeaderInfo {
  std::optional<CpuTopologyInfo> cpu_topology;
  std::optional<std::vector<NumaNodeInfo>> numa_nodes;
  std::optional<std::vector<std::pair<std::uint32_t, std::string>>> pmu_mappings;  ///< type, name
  std::optional<std::vector<GroupInfo>> groups;
  std::optional<std::vector<CacheInfo>> caches;
  std::optional<std::pair<std::uint64_t, std::uint64_t>> sample_time;  ///< first, last (ns)
  std::optional<MemoryTopologyInfo> memory;
  std::optional<std::uint64_t> clock_resolution_ns;    ///< HEADER_CLOCKID
  std::optional<std::uint64_t> dir_version;            ///< HEADER_DIR_FORMAT
  std::optional<std::uint32_t> bpf_programs;           ///< the number of programs of HEADER_BPF_PROG_INFO
  std::optional<std::vector<std::uint32_t>> bpf_btfs;  ///< the ids of HEADER_BPF_BTF's entries, ascending
  std::optional<CompressedInfo> compressed;
  std::optional<std::vector<std::string>> cpu_pmu_caps;  ///< HEADER_CPU_PMU_CAPS
  std::optional<ClockDataInfo> clock_data;
  std::optional<std::vector<HybridNodeInfo>> hybrid_nodes;
  std::optional<std::vector<PmuCapsInfo>> pmu_caps;  ///< HEADER_PMU_CAPS: the PMUs other than `cpu`
};

/// The feature sections of `file` read so far (in pipe mode those whose FEATURE records have passed).
/// Throws DecodeError naming the feature and the section's offset when one does not follow perf's
/// layout (a count past its section's end, an unknown version of HEADER_CACHE, MEM_TOPOLOGY or
/// CLOCK_DATA, a socket number past the CPUs), as perf refuses such a file.
///
/// Example: `if (auto t = record::read_header_info(file).cpu_topology) n = t->sockets.size();`
HeaderInfo read_header_info(const PerfData& file);

}  // namespace perfspec::record
