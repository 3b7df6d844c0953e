// SPDX-License-Identifier: MIT
#include "spec/tracefs.hpp"

#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <mutex>

namespace perfspec::spec::tracefs {

namespace {

bool has_magic(const std::string& dir, long magic) {
  struct statfs st {};
  return ::statfs(dir.c_str(), &st) == 0 && static_cast<long>(st.f_type) == magic;
}

std::string read_proc_mounts() {
  // Not read through read_small_file: a busy machine's mount table is larger than a sysfs attribute.
  std::ifstream in("/proc/mounts", std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// One whitespace-separated field of a /proc/mounts line, from `at`, which moves past it.
std::string_view field(std::string_view line, std::size_t& at) {
  while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
  std::size_t start = at;
  while (at < line.size() && line[at] != ' ' && line[at] != '\t') ++at;
  return line.substr(start, at - start);
}

std::string unescape(std::string_view s) {
  auto octal = [](char c) { return c >= '0' && c <= '7'; };
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && octal(s[i + 1]) && octal(s[i + 2]) && octal(s[i + 3])) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

bool is_real_sysfs(std::string_view root) { return root == "/sys" && has_magic("/sys", SYSFS_MAGIC); }

bool is_tracefs(const std::string& dir) { return has_magic(dir, TRACEFS_MAGIC); }

std::vector<std::string> mount_points(std::string_view mounts, std::string_view type) {
  std::vector<std::string> out;
  while (!mounts.empty()) {
    std::size_t end = mounts.find('\n');
    std::string_view line = mounts.substr(0, end);
    mounts.remove_prefix(end == std::string_view::npos ? mounts.size() : end + 1);
    std::size_t at = 0;
    field(line, at);  // the device
    std::string_view where = field(line, at);
    if (!where.empty() && field(line, at) == type) out.push_back(unescape(where));
  }
  return out;
}

std::string find_mount() {
  // statfs of /sys/kernel/debug/tracing mounts tracefs there when debugfs is mounted at
  // /sys/kernel/debug: the kernel's automount, which perf relies on as well.
  for (const char* known : {default_mountpoint, "/sys/kernel/debug/tracing", "/tracing", "/trace"})
    if (is_tracefs(known)) return known;
  std::string mounts = read_proc_mounts();
  for (auto& where : mount_points(mounts, "tracefs"))
    if (is_tracefs(where)) return where;
  for (const auto& debugfs : mount_points(mounts, "debugfs")) {
    std::string where = debugfs + "/tracing";
    if (is_tracefs(where)) return where;
  }
  return {};
}

int mount_once() {
  // Once per process, not per Machine: a program that makes many Machines tries one mount, and a
  // failed mount is not retried on every tracepoint. The pid tells a forked child from its parent.
  static std::mutex mutex;
  static pid_t tried_by = 0;
  static int result = 0;
  std::lock_guard lock(mutex);
  if (tried_by == ::getpid()) return result;
  tried_by = ::getpid();
  // Another perfspec or perf may have mounted it since the caller looked: one tracefs there is enough.
  if (is_tracefs(default_mountpoint)) return result = 0;
  result = ::mount("nodev", default_mountpoint, "tracefs", 0, nullptr) == 0 ? 0 : errno;
  // Something else mounted over it in the meantime, or the kernel has no tracefs under that name.
  if (result == 0 && !is_tracefs(default_mountpoint)) result = ENODEV;
  return result;
}

}  // namespace perfspec::spec::tracefs
