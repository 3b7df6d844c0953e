// SPDX-License-Identifier: MIT
#pragma once
// Finding the real tracefs (internal to spec/). A fixture or snapshot tree holds its tracepoints at
// `kernel/tracing/events`; the real machine's are in tracefs, a filesystem of its own that may be
// mounted anywhere or nowhere. perf looks for it in a few known places and in /proc/mounts, and mounts
// it at /sys/kernel/tracing when it finds none; so does this.
#include <string>
#include <string_view>
#include <vector>

namespace perfspec::spec::tracefs {

/// Where tracefs is mounted when nobody chose another place, and where perfspec (as perf) mounts it.
inline constexpr const char* default_mountpoint = "/sys/kernel/tracing";

/// True when `root` is this machine's sysfs: `/sys`, and statfs says it is sysfs. Only then is
/// tracefs looked for (and mounted); a fixture or snapshot root has its own tracepoints folder or none.
bool is_real_sysfs(std::string_view root);

/// True when statfs says `dir` is the root of a tracefs mount.
bool is_tracefs(const std::string& dir);

/// The mount points of the filesystems of type `type` in `mounts`, a /proc/mounts text, in its order.
/// The kernel writes a space, tab, newline or backslash in a path as an octal escape (`\040`); these
/// are decoded.
///
/// Example: `mount_points("nodev /sys/kernel/tracing tracefs rw 0 0\n", "tracefs")` is
/// `{"/sys/kernel/tracing"}`.
std::vector<std::string> mount_points(std::string_view mounts, std::string_view type);

/// Where tracefs is mounted, "" when nowhere. Looked for in perf's order: the known mount points
/// (/sys/kernel/tracing, /sys/kernel/debug/tracing, /tracing, /trace), then the first tracefs line of
/// /proc/mounts, then `tracing` in a debugfs mounted elsewhere (the kernel mounts tracefs there on
/// first access).
std::string find_mount();

/// Mounts tracefs at default_mountpoint, at most once per process (a forked child is a new process
/// and may try again): 0, or the errno of the one attempt. The caller checks that nothing is mounted
/// and that it runs as root.
int mount_once();

}  // namespace perfspec::spec::tracefs
