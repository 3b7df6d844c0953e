// SPDX-License-Identifier: MIT
// The exporter's own process as the Prometheus client libraries describe theirs, read from /proc as
// client_golang's procfs reads it; and the build's info series.
#include "exporter/process_metrics.hpp"

#include <dirent.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>

#include "exporter/build_info.hpp"
#include "exporter/set.hpp"

namespace perfspec::exporter {
namespace {

std::optional<std::string> slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<double> number(std::string_view text) {
  unsigned long long v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return static_cast<double>(v);
}

// The fields of /proc/PID/stat after the command's closing parenthesis (which may hold spaces and
// parentheses itself): [0] is field 3, the state.
std::vector<std::string_view> stat_fields(std::string_view stat) {
  std::vector<std::string_view> fields;
  auto close = stat.rfind(')');
  if (close == std::string_view::npos) return fields;
  stat.remove_prefix(close + 1);
  while (!stat.empty()) {
    auto start = stat.find_first_not_of(" \n");
    if (start == std::string_view::npos) break;
    stat.remove_prefix(start);
    auto end = stat.find_first_of(" \n");
    fields.push_back(stat.substr(0, end));
    if (end == std::string_view::npos) break;
    stat.remove_prefix(end);
  }
  return fields;
}

void one(std::vector<prometheus::MetricFamily>& out, const char* name, const char* help,
         prometheus::MetricType type, double value, Labels labels = {}) {
  auto f = family(name, help, type);
  add(f, std::move(labels), value);
  out.push_back(std::move(f));
}

// The soft limit on open files from /proc/PID/limits ("Max open files  1024  524288  files");
// nothing when unlimited.
std::optional<double> max_fds(const std::string& limits) {
  std::istringstream in(limits);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Max open files", 0) != 0) continue;
    std::istringstream words(line.substr(14));
    std::string soft;
    words >> soft;
    return number(soft);
  }
  return std::nullopt;
}

// The boot time, Unix seconds, from /proc/stat's btime.
std::optional<double> boot_time(const std::string& stat) {
  std::istringstream in(stat);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("btime ", 0) == 0) return number(std::string_view(line).substr(6));
  return std::nullopt;
}

}  // namespace

void process_series(std::vector<prometheus::MetricFamily>& out, const std::string& proc,
                    const std::string& self) {
  using prometheus::MetricType;
  const std::string dir = proc + "/" + self;
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  if (auto stat = slurp(dir + "/stat")) {
    auto f = stat_fields(*stat);
    // fields 14, 15 (utime, stime), 22 (starttime, in ticks after boot), 23 (vsize), 24 (rss, pages)
    if (f.size() > 21) {
      auto utime = number(f[11]), stime = number(f[12]), start = number(f[19]), vsize = number(f[20]),
           rss = number(f[21]);
      if (utime && stime)
        one(out, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
            MetricType::Counter, (*utime + *stime) / ticks);
      if (rss)
        one(out, "process_resident_memory_bytes", "Resident memory size in bytes.", MetricType::Gauge,
            *rss * page);
      if (vsize)
        one(out, "process_virtual_memory_bytes", "Virtual memory size in bytes.", MetricType::Gauge, *vsize);
      auto boot = slurp(proc + "/stat");
      if (auto btime = boot ? boot_time(*boot) : std::nullopt; btime && start)
        one(out, "process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
            MetricType::Gauge, *btime + *start / ticks);
    }
  }
  if (DIR* d = ::opendir((dir + "/fd").c_str())) {
    double n = 0;
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
    if (self == "self" && n > 0) --n;  // the directory's own descriptor
    one(out, "process_open_fds", "Number of open file descriptors.", MetricType::Gauge, n);
  }
  if (auto limits = slurp(dir + "/limits"))
    if (auto n = max_fds(*limits))
      one(out, "process_max_fds", "Maximum number of open file descriptors.", MetricType::Gauge, *n);
}

void build_info_series(std::vector<prometheus::MetricFamily>& out) {
  one(out, "perfspec_exporter_build_info",
      "A metric with a constant '1' value labeled by the version, revision, compiler and architecture "
      "perfspec was built with.",
      prometheus::MetricType::Gauge, 1,
      {{"version", build_version},
       {"revision", build_revision},
       {"compiler", build_compiler},
       {"arch", build_arch}});
}

}  // namespace perfspec::exporter
