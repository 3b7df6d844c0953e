// SPDX-License-Identifier: MIT
// The header block of `perf report --header` and `perf script --header` (perf 6.12's
// perf_session__fprintf_info and the print_* functions of tools/perf/util/header.c): the file's
// layout, then a line or lines per feature section in the order of their bits.
#include <ctime>

#include <fmt/format.h>

#include "perfspec/header_info.hpp"
#include "perfspec/report.hpp"
#include "print/report_header_parts.hpp"

namespace perfspec {

namespace {

using record::Feature;

// perf's feature names (feat_ops[].name), for "info available" and "missing features"
constexpr std::string_view upper_names[] = {"",
                                            "TRACING_DATA",
                                            "BUILD_ID",
                                            "HOSTNAME",
                                            "OSRELEASE",
                                            "VERSION",
                                            "ARCH",
                                            "NRCPUS",
                                            "CPUDESC",
                                            "CPUID",
                                            "TOTAL_MEM",
                                            "CMDLINE",
                                            "EVENT_DESC",
                                            "CPU_TOPOLOGY",
                                            "NUMA_TOPOLOGY",
                                            "BRANCH_STACK",
                                            "PMU_MAPPINGS",
                                            "GROUP_DESC",
                                            "AUXTRACE",
                                            "STAT",
                                            "CACHE",
                                            "SAMPLE_TIME",
                                            "MEM_TOPOLOGY",
                                            "CLOCKID",
                                            "DIR_FORMAT",
                                            "BPF_PROG_INFO",
                                            "BPF_BTF",
                                            "COMPRESSED",
                                            "CPU_PMU_CAPS",
                                            "CLOCK_DATA",
                                            "HYBRID_TOPOLOGY",
                                            "PMU_CAPS"};
constexpr unsigned last_feature = 32;  // perf 6.12's HEADER_LAST_FEATURE

// The features perf prints only with -I (full_only), and those it has no printer for.
bool full_only(Feature f) {
  return f == Feature::cpu_topology || f == Feature::numa_topology || f == Feature::cache ||
         f == Feature::mem_topology || f == Feature::hybrid_topology;
}
bool unprinted(Feature f) { return f == Feature::tracing_data || f == Feature::build_id; }

class Printer {
 public:
  Printer(const record::PerfData& file, const HeaderTextOptions& options)
      : file_(file), options_(options), info_(record::read_header_info(file)) {}

  void feature(Feature f, std::string& out) const;

 private:
  const record::PerfData& file_;
  const HeaderTextOptions& options_;
  record::HeaderInfo info_;

  void strings(Feature f, std::string& out) const;
  void events(std::string& out) const;
  void cpu_topology(std::string& out) const;
  void groups(std::string& out) const;
  void numa(std::string& out) const;
  void memory(std::string& out) const;
  void clock_data(std::string& out) const;
  void pmu_caps(std::string& out) const;
};

void Printer::strings(Feature f, std::string& out) const {
  auto text = [&](Feature g) { return file_.feature_string(g).value_or(""); };
  switch (f) {
    case Feature::hostname: out += fmt::format("# hostname : {}\n", text(f)); break;
    case Feature::osrelease: out += fmt::format("# os release : {}\n", text(f)); break;
    case Feature::version: out += fmt::format("# perf version : {}\n", text(f)); break;
    case Feature::arch: out += fmt::format("# arch : {}\n", text(f)); break;
    case Feature::cpudesc: out += fmt::format("# cpudesc : {}\n", text(f)); break;
    case Feature::cpuid: out += fmt::format("# cpuid : {}\n", text(f)); break;
    default: break;
  }
}

// "# event : name = NAME, , id = { 1, 2 }, type = ..., ...": perf's print_event_desc and its
// perf_event_attr__fprintf, the type and config named as on this machine.
void Printer::events(std::string& out) const {
  for (const record::FileEvent& e : file_.events()) {
    out += fmt::format("# event : name = {}, ", e.name);
    if (!e.ids.empty()) out += fmt::format(", id = {{ {} }}", fmt::join(e.ids, ", "));
    for (const auto& [label, value] : header::attr_fields(e.attr, options_.machine))
      out += fmt::format(", {} = {}", label, value);
    out += '\n';
  }
}

void Printer::cpu_topology(std::string& out) const {
  const record::CpuTopologyInfo& t = *info_.cpu_topology;
  for (const auto& s : t.sockets) out += fmt::format("# sibling sockets : {}\n", s);
  for (const auto& s : t.dies) out += fmt::format("# sibling dies    : {}\n", s);
  for (const auto& s : t.threads) out += fmt::format("# sibling threads : {}\n", s);
  if (!t.has_ids) {
    out += t.has_dies ? "# Core ID, Die ID and Socket ID information is not available\n"
                      : "# Core ID and Socket ID information is not available\n";
    return;
  }
  for (std::size_t i = 0; i < t.cpus.size(); ++i) {
    const auto& c = t.cpus[i];
    if (t.has_dies)
      out += fmt::format("# CPU {}: Core ID {}, Die ID {}, Socket ID {}\n", i, c.core, c.die, c.socket);
    else
      out += fmt::format("# CPU {}: Core ID {}, Socket ID {}\n", i, c.core, c.socket);
  }
}

// "# group: NAME{leader,member,...}" for each group of the section.
void Printer::groups(std::string& out) const {
  const auto& events = file_.events();
  for (const record::GroupInfo& g : *info_.groups) {
    std::string name = g.name == "{anon_group}" ? "" : g.name;
    out += fmt::format("# group: {}{{{}", name, events[g.leader].name);
    for (std::uint32_t m = 1; m < g.members; ++m) out += "," + events[g.leader + m].name;
    out += "}\n";
  }
}

// A node's CPU list that is none is an error at its section's offset, as a malformed section is.
void Printer::numa(std::string& out) const {
  for (const auto& n : *info_.numa_nodes) {
    std::string cpus;
    try {
      cpus = header::cpu_list(n.cpus);
    } catch (const Error& e) {
      const std::uint64_t at = file_.feature_offset(Feature::numa_topology);
      throw record::DecodeError(
          at, fmt::format("the numa_topology section at offset {:#x}: node {}: {}", at, n.node, e.message()));
    }
    out += fmt::format("# node{} meminfo  : total = {} kB, free = {} kB\n# node{} cpu list : {}\n", n.node,
                       n.total_kb, n.free_kb, n.node, cpus);
  }
}

void Printer::memory(std::string& out) const {
  const record::MemoryTopologyInfo& m = *info_.memory;
  out += fmt::format("# memory nodes (nr {}, block size {:#x}):\n", m.nodes.size(), m.block_size);
  for (const auto& n : m.nodes) {
    std::uint64_t blocks = 0;
    for (std::uint64_t w : n.bitmap) blocks += static_cast<std::uint64_t>(std::popcount(w));
    out += fmt::format("#  {:3} [{}]: {}\n", n.node, header::unit_number(m.block_size * blocks),
                       header::bitmap_list(n.bitmap, n.blocks));
  }
}

void Printer::clock_data(std::string& out) const {
  const record::ClockDataInfo& c = *info_.clock_data;
  const auto tod_sec = static_cast<std::time_t>(c.tod_ns / 1'000'000'000);
  const auto tod_usec = static_cast<int>(c.tod_ns % 1'000'000'000 / 1000);
  std::string when = "<error>";
  std::tm local{};
  if (::localtime_r(&tod_sec, &local)) {
    char date[64];
    std::strftime(date, sizeof date, "%F %T", &local);
    when = fmt::format("{}.{:06}", date, tod_usec);
  }
  const std::string_view clock = header::clockid_name(c.clockid);
  out += fmt::format("# clockid: {} ({})\n", clock, c.clockid);
  out += fmt::format("# reference time: {} = {}.{:06} (TOD) = {}.{:09} ({})\n", when,
                     static_cast<long>(tod_sec), tod_usec, static_cast<long>(c.clockid_ns / 1'000'000'000),
                     c.clockid_ns % 1'000'000'000, clock);
}

void Printer::pmu_caps(std::string& out) const {
  for (const auto& p : *info_.pmu_caps) out += header::caps_line(p.pmu, p.caps);
  // perf's hint for AMD machines, whose precise cycles are IBS's
  const auto arch = file_.feature_string(Feature::arch);
  bool ibs = false;
  for (const auto& [type, name] : info_.pmu_mappings.value_or(decltype(info_.pmu_mappings)::value_type{}))
    ibs = ibs || name == "ibs_op";
  if (arch && (*arch == "x86_64" || *arch == "i386" || *arch == "i686") && ibs) {
    for (const auto& p : *info_.pmu_caps)
      if (p.pmu == "cpu")
        for (const auto& cap : p.caps)
          if (cap.starts_with("max_precise=") && std::atoi(cap.c_str() + 12) == 0)
            out +=
                "# AMD systems uses ibs_op// PMU for some precise events, e.g.: cycles:p, see the 'perf "
                "list' man page for further details.\n";
  }
}

void Printer::feature(Feature f, std::string& out) const {
  const auto bit = static_cast<unsigned>(f);
  if (unprinted(f)) return;
  if (full_only(f) && !options_.full) {
    out += fmt::format("# {} info available, use -I to display\n", upper_names[bit]);
    return;
  }
  switch (f) {
    case Feature::nrcpus: {
      auto n = file_.nr_cpus().value_or(std::pair<std::uint32_t, std::uint32_t>{0, 0});
      out += fmt::format("# nrcpus online : {}\n# nrcpus avail : {}\n", n.second, n.first);
      break;
    }
    case Feature::total_mem:
      out += fmt::format("# total memory : {} kB\n", file_.total_mem().value_or(0));
      break;
    case Feature::cmdline: out += header::cmdline_line(file_.cmdline()); break;
    case Feature::event_desc: events(out); break;
    case Feature::cpu_topology: cpu_topology(out); break;
    case Feature::numa_topology: numa(out); break;
    case Feature::branch_stack: out += "# contains samples with branch stack\n"; break;
    case Feature::pmu_mappings: out += header::pmu_mappings_line(*info_.pmu_mappings); break;
    case Feature::group_desc: groups(out); break;
    case Feature::auxtrace: out += "# contains AUX area data (e.g. instruction trace)\n"; break;
    case Feature::stat: out += "# contains stat data\n"; break;
    case Feature::cache:
      out += "# CPU cache info:\n";
      for (const auto& c : *info_.caches)
        out += fmt::format("#  L{} {:<15} {:>8} [{}]\n", c.level, c.type, c.size, c.map);
      break;
    case Feature::sample_time_range: out += header::sample_time_lines(*info_.sample_time); break;
    case Feature::mem_topology: memory(out); break;
    case Feature::clockid:
      out += fmt::format("# clockid frequency: {} MHz\n", *info_.clock_resolution_ns * 1000);
      break;
    case Feature::dir_format:
      out += fmt::format("# directory data version : {}\n", *info_.dir_version);
      break;
    case Feature::bpf_prog_info:  // perf names each program from its BTF: not read yet (a gap, listed)
      if (*info_.bpf_programs > 0)
        out += fmt::format("# bpf_prog_info: {} programs (perfspec does not print them yet)\n",
                           *info_.bpf_programs);
      break;
    case Feature::bpf_btf:
      for (std::uint32_t id : *info_.bpf_btfs) out += fmt::format("# btf info of id {}\n", id);
      break;
    case Feature::compressed:
      out += fmt::format("# compressed : {}, level = {}, ratio = {}\n",
                         info_.compressed->type == 1 ? "Zstd" : "Unknown", info_.compressed->level,
                         info_.compressed->ratio);
      break;
    case Feature::cpu_pmu_caps: out += header::caps_line("cpu", *info_.cpu_pmu_caps); break;
    case Feature::clock_data: clock_data(out); break;
    case Feature::hybrid_topology:
      out += "# hybrid cpu system:\n";
      for (const auto& n : *info_.hybrid_nodes) out += fmt::format("# {} cpu list : {}\n", n.pmu, n.cpus);
      break;
    case Feature::pmu_caps: pmu_caps(out); break;
    default: strings(f, out); break;
  }
}

}  // namespace

std::string header_text(const record::PerfData& file, const HeaderTextOptions& options) {
  const Printer printer(file, options);
  std::string out = "# ========\n";
  const auto captured = static_cast<std::time_t>(options.captured);
  char when[64] = "";
  if (!::ctime_r(&captured, when)) when[0] = '\n';
  out += fmt::format("# captured on    : {}", when);
  const bool pipe = file.pipe();
  const std::uint64_t offset = pipe ? 0 : file.data_offset(), size = pipe ? 0 : file.data_size();
  out += fmt::format(
      "# header version : 1\n# data offset    : {}\n# data size      : {}\n# feat offset    : {}\n", offset,
      size, offset + size);
  std::string features;
  for (unsigned bit = 1; bit < last_feature; ++bit)
    if (file.has_feature(static_cast<Feature>(bit))) printer.feature(static_cast<Feature>(bit), features);
  if (pipe) return out + "# ========\n#\n" + features;  // perf prints them as their records come
  out += features + "# missing features: ";
  for (unsigned bit = 1; bit < last_feature; ++bit)
    if (!file.has_feature(static_cast<Feature>(bit))) out += fmt::format("{} ", upper_names[bit]);
  return out + "\n# ========\n#\n";
}

}  // namespace perfspec
