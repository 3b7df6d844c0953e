// SPDX-License-Identifier: MIT
#include "runtime/process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "perfspec/error.hpp"

namespace perfspec::runtime {

// The numbered entries of a /proc folder: the processes of /proc, the threads of /proc/PID/task.
std::vector<int> numbered_entries(const std::string& dir) {
  std::vector<int> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] >= '1' && e->d_name[0] <= '9') out.push_back(std::atoi(e->d_name));
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> threads_of(int pid) { return numbered_entries(fmt::format("/proc/{}/task", pid)); }

// Every thread of every process (--per-thread -a), as perf lists them from /proc.
std::vector<int> all_threads() {
  std::vector<int> out;
  for (int pid : numbered_entries("/proc"))
    for (int tid : threads_of(pid)) out.push_back(tid);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<int> thread_group(int tid) {
  std::FILE* f = std::fopen(fmt::format("/proc/{}/status", tid).c_str(), "r");
  if (!f) return std::nullopt;
  char line[256];
  std::optional<int> tgid;
  while (!tgid && std::fgets(line, sizeof line, f)) {
    int v = 0;
    if (std::sscanf(line, "Tgid: %d", &v) == 1 && v > 0) tgid = v;
  }
  std::fclose(f);
  return tgid;
}

std::optional<std::vector<std::string>> stat_fields(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return std::nullopt;
  char buf[1024] = {};
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  // "pid (comm) state ...": the fields after the last ')' (comm may hold parentheses and spaces).
  std::string_view text(buf, n);
  auto close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::vector<std::string> fields;
  for (std::size_t at = close + 1; at < text.size();) {
    at = text.find_first_not_of(" \n", at);
    if (at == std::string_view::npos) break;
    auto end = std::min(text.find_first_of(" \n", at), text.size());
    fields.emplace_back(text.substr(at, end - at));
    at = end;
  }
  return fields;
}

// Whether `pid` still runs. A zombie counts nothing, and its parent may never reap it.
Process process_state(int pid) {
  if (::kill(pid, 0) != 0 && errno != EPERM) return Process::gone;
  auto fields = stat_fields(fmt::format("/proc/{}/stat", pid));
  if (!fields || fields->empty()) return Process::running;
  const std::string& state = fields->front();
  return state == "Z" || state == "X" ? Process::zombie : Process::running;
}

std::optional<unsigned long long> start_ticks(int pid) {
  auto fields = stat_fields(fmt::format("/proc/{}/stat", pid));
  if (!fields || fields->size() < 20) return std::nullopt;
  return std::strtoull((*fields)[19].c_str(), nullptr, 10);  // field 22, starttime
}

// A thread's name now, from /proc; nullopt once it is gone.
std::optional<std::string> comm_of(int tid) {
  std::FILE* f = std::fopen(fmt::format("/proc/{}/comm", tid).c_str(), "r");
  if (!f) return std::nullopt;
  char buf[64] = {};
  std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  std::string s(buf, n);
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

std::optional<std::string> fd_path(int pid, int fd) {
  char buf[4096];
  ssize_t n = ::readlink(fmt::format("/proc/{}/fd/{}", pid, fd).c_str(), buf, sizeof buf);
  if (n <= 0 || static_cast<std::size_t>(n) == sizeof buf) return std::nullopt;
  return std::string(buf, static_cast<std::size_t>(n));
}

// Where cgroups are: a cgroup v1 hierarchy with the perf_event controller, else the cgroup2 mount,
// from /proc/mounts (as perf finds it).
std::string cgroup_root() {
  std::FILE* f = std::fopen("/proc/mounts", "r");
  if (!f) return {};
  std::string v1, v2;
  char dev[256], dir[4096], type[64], opts[1024];
  while (std::fscanf(f, "%255s %4095s %63s %1023s %*d %*d", dev, dir, type, opts) == 4) {
    std::string_view t = type, o = opts;
    if (t == "cgroup" && (o.find("perf_event") != std::string_view::npos) && v1.empty()) v1 = dir;
    if (t == "cgroup2" && v2.empty()) v2 = dir;
  }
  std::fclose(f);
  return v1.empty() ? v2 : v1;
}

std::string cgroup_dir(const std::string& root, std::string_view name) {
  while (name.starts_with('/')) name.remove_prefix(1);
  return name.empty() ? root : root + "/" + std::string(name);
}

namespace {

// utime and stime (fields 14, 15) of a /proc stat file, in clock ticks; with `children`, plus
// cutime and cstime (16, 17): the children waited for. nullopt when it cannot be read.
std::optional<std::pair<unsigned long long, unsigned long long>> task_ticks(const std::string& path,
                                                                            bool children) {
  auto fields = stat_fields(path);
  if (!fields || fields->size() < 15) return std::nullopt;
  auto field = [&](std::size_t n) { return std::strtoull((*fields)[n - 3].c_str(), nullptr, 10); };
  unsigned long long user = field(14), sys = field(15);
  return children ? std::pair{user + field(16), sys + field(17)} : std::pair{user, sys};
}

CpuTimes from_ticks(unsigned long long user, unsigned long long system) {
  const double tick_ns = 1e9 / static_cast<double>(::sysconf(_SC_CLK_TCK));
  return {static_cast<std::uint64_t>(static_cast<double>(user) * tick_ns),
          static_cast<std::uint64_t>(static_cast<double>(system) * tick_ns)};
}

}  // namespace

std::optional<CpuTimes> thread_cpu_times(int tid) {
  auto ticks = task_ticks(fmt::format("/proc/{0}/task/{0}/stat", tid), false);
  if (!ticks) return std::nullopt;
  return from_ticks(ticks->first, ticks->second);
}

std::optional<CpuTimes> process_cpu_times(int pid) {
  auto ticks = task_ticks(fmt::format("/proc/{}/stat", pid), true);
  if (!ticks) return std::nullopt;
  return from_ticks(ticks->first, ticks->second);
}

std::optional<CpuTimes> system_cpu_times() {
  std::FILE* f = std::fopen("/proc/stat", "r");
  if (!f) return std::nullopt;
  unsigned long long user = 0, nice = 0, sys = 0;
  const bool read = std::fscanf(f, "cpu %llu %llu %llu", &user, &nice, &sys) == 3;
  std::fclose(f);
  if (!read) return std::nullopt;
  return from_ticks(user + nice, sys);
}

// -G: an fd per distinct cgroup, and per event the fd it counts in (-1: every process).
std::vector<int> open_cgroups(const std::vector<std::string>& per_event, std::vector<Fd>& fds) {
  const std::string root = cgroup_root();
  std::map<std::string, int> by_name;
  std::vector<int> of_event;
  for (const auto& name : per_event) {
    if (!name.empty() && !by_name.count(name)) {
      if (root.empty())
        throw Error(ErrorKind::machine, "no cgroup file system is mounted (see /proc/mounts)");
      const std::string path = cgroup_dir(root, name);
      Fd fd(system_calls(), ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (!fd)
        throw Error(ErrorKind::usage,
                    fmt::format("cannot open cgroup '{}' ({}): {}", name, path, std::strerror(errno)));
      by_name[name] = fd.get();
      fds.push_back(std::move(fd));
    }
    of_event.push_back(name.empty() ? -1 : by_name[name]);
  }
  return of_event;
}

}  // namespace perfspec::runtime
