// SPDX-License-Identifier: MIT
// CPU list strings and the CPU topology, as sysfs describes them.
#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/spec.hpp"
#include "spec/machine_impl.hpp"
#include "spec/sysfs_io.hpp"

namespace perfspec::spec {

std::vector<int> parse_cpu_list(std::string_view text) {
  std::vector<int> out;
  std::string_view s = text;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  if (s.empty()) return out;
  auto number = [&](std::string_view& rest) {
    int v = 0;
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
    if (ec != std::errc{} || p == rest.data() || v < 0 || v > 65535)
      throw Error(ErrorKind::bad_value, fmt::format("invalid CPU list '{}'", text));
    rest.remove_prefix(static_cast<std::size_t>(p - rest.data()));
    return v;
  };
  while (!s.empty()) {
    int lo = number(s), hi = lo;
    if (!s.empty() && s.front() == '-') {
      s.remove_prefix(1);
      hi = number(s);
      if (hi < lo)
        throw Error(ErrorKind::bad_value,
                    fmt::format("invalid CPU list '{}': range {}-{} is reversed", text, lo, hi));
    }
    for (int c = lo; c <= hi; ++c) out.push_back(c);
    if (s.empty()) break;
    if (s.front() != ',') throw Error(ErrorKind::bad_value, fmt::format("invalid CPU list '{}'", text));
    s.remove_prefix(1);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1 && cpus[i] >= 0) ++j;
    out += fmt::format("{}{}", out.empty() ? "" : ",", cpus[i]);
    if (j > i) out += fmt::format("-{}", cpus[j]);
    i = j + 1;
  }
  return out;
}

namespace {

// "cpu12" -> 12; "cpufreq", "cpuidle" -> nullopt.
std::optional<int> numbered(std::string_view entry, std::string_view prefix) {
  if (!entry.starts_with(prefix) || entry.size() == prefix.size()) return std::nullopt;
  int v = 0;
  auto rest = entry.substr(prefix.size());
  auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
  if (ec != std::errc{} || p != rest.data() + rest.size()) return std::nullopt;
  return v;
}

int topology_number(const io::Jail& jail, const std::string& path, int absent) {
  auto text = io::read_optional_file(jail, path);
  if (!text) return absent;
  std::string_view s = *text;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || s.empty())
    throw Error(ErrorKind::machine, fmt::format("{}: not a number: '{}'", path, s));
  return v;
}

// A CPU or node list file, parsed; empty when absent.
std::vector<int> listed(const io::Jail& jail, const std::string& path) {
  auto text = io::read_optional_file(jail, path);
  if (!text) return {};
  try {
    return parse_cpu_list(*text);
  } catch (const Error& e) {
    throw Error(ErrorKind::machine, fmt::format("{}: {}", path, e.what()));
  }
}

std::vector<CpuTopology> read_cpu_topology(const io::Jail& jail, const std::string& root) {
  std::map<int, CpuTopology> cpus;
  const std::string cpu_dir = root + "/devices/system/cpu";
  for (const auto& entry : io::list_dir(jail, cpu_dir)) {
    auto cpu = numbered(entry, "cpu");
    if (!cpu) continue;
    const std::string t = fmt::format("{}/{}/topology/", cpu_dir, entry);
    CpuTopology& c = cpus[*cpu];
    c.cpu = *cpu;
    c.socket = topology_number(jail, t + "physical_package_id", -1);
    c.die = topology_number(jail, t + "die_id", 0);
    c.core = topology_number(jail, t + "core_id", -1);
    c.cluster = topology_number(jail, t + "cluster_id", -1);
    const std::string cache_dir = fmt::format("{}/{}/cache", cpu_dir, entry);
    std::vector<std::pair<int, std::string>> indexes;
    for (const auto& index : io::list_dir(jail, cache_dir))
      if (auto n = numbered(index, "index")) indexes.emplace_back(*n, index);
    std::sort(indexes.begin(), indexes.end());
    for (const auto& [n, index] : indexes) {
      const std::string dir = fmt::format("{}/{}/", cache_dir, index);
      int level = topology_number(jail, dir + "level", 0);
      if (level <= 0) continue;
      std::vector<int> shared = listed(jail, dir + "shared_cpu_list");
      c.caches.push_back({level, shared.empty() ? *cpu : *std::min_element(shared.begin(), shared.end())});
    }
  }
  const std::string node_dir = root + "/devices/system/node";
  for (const auto& entry : io::list_dir(jail, node_dir)) {
    auto node = numbered(entry, "node");
    if (!node) continue;
    for (int cpu : listed(jail, fmt::format("{}/{}/cpulist", node_dir, entry)))
      if (auto it = cpus.find(cpu); it != cpus.end()) it->second.node = *node;
  }
  std::vector<CpuTopology> out;
  for (auto& [cpu, t] : cpus) out.push_back(t);
  return out;
}

// The first of `names` that the folder holds, its text without the line's end; nullopt when none.
std::optional<std::string> first_text(const io::Jail& jail, const std::string& dir,
                                      std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (auto text = io::read_optional_file(jail, dir + n)) return std::string(io::trim(*text));
  return std::nullopt;
}

void add_distinct(std::vector<std::string>& to, std::optional<std::string> text) {
  if (text && std::find(to.begin(), to.end(), *text) == to.end()) to.push_back(std::move(*text));
}

// A `Node N Key: V kB` line's V, 0 when the key is absent.
std::uint64_t meminfo_kb(std::string_view text, std::string_view key) {
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = std::min(text.find('\n', at), text.size());
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    auto k = line.find(key);
    if (k == std::string_view::npos || line.substr(k + key.size(), 1) != ":") continue;
    line.remove_prefix(k + key.size() + 1);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    std::uint64_t v = 0;
    std::from_chars(line.data(), line.data() + line.size(), v);
    return v;
  }
  return 0;
}

}  // namespace

SiblingLists Machine::sibling_lists() const {
  const auto& I = *impl_;
  const std::string cpu_dir = I.root_ + "/devices/system/cpu";
  SiblingLists out;
  for (int cpu : listed(*I.jail_, cpu_dir + "/online")) {
    const std::string t = fmt::format("{}/cpu{}/topology/", cpu_dir, cpu);
    add_distinct(out.packages, first_text(*I.jail_, t, {"package_cpus_list", "core_siblings_list"}));
    add_distinct(out.dies, first_text(*I.jail_, t, {"die_cpus_list"}));
    add_distinct(out.cores, first_text(*I.jail_, t, {"core_cpus_list", "thread_siblings_list"}));
  }
  return out;
}

std::vector<NumaNode> Machine::numa_nodes() const {
  const auto& I = *impl_;
  const std::string node_dir = I.root_ + "/devices/system/node";
  std::vector<NumaNode> out;
  for (int node : listed(*I.jail_, node_dir + "/online")) {
    const std::string dir = fmt::format("{}/node{}/", node_dir, node);
    NumaNode n{.node = node};
    if (auto meminfo = io::read_optional_file(*I.jail_, dir + "meminfo")) {
      n.mem_total_kb = meminfo_kb(*meminfo, "MemTotal");
      n.mem_free_kb = meminfo_kb(*meminfo, "MemFree");
    }
    n.cpus = first_text(*I.jail_, dir, {"cpulist"}).value_or("");
    out.push_back(std::move(n));
  }
  return out;
}

const std::vector<CpuTopology>& Machine::cpu_topology() const {
  auto& I = *impl_;
  std::call_once(I.topology_once_, [&] { I.topology_ = read_cpu_topology(*I.jail_, I.root_); });
  return I.topology_;
}

}  // namespace perfspec::spec
