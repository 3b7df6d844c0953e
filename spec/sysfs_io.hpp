// SPDX-License-Identifier: MIT
#pragma once
// Small-file helpers for sysfs reading (internal to spec/). Every read goes through a Jail: a file or
// folder is opened only if resolving its path, symlinks included, stays inside the tree's root.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perfspec/spec.hpp"

namespace perfspec::spec::io {

/// sysfs attributes are at most a page; anything much larger is not a sysfs attribute.
inline constexpr std::size_t max_file_size = 64 * 1024;

/// A tree that reads may not leave: a sysfs root, a fixture or a snapshot. sysfs itself is full of
/// relative symlinks that stay inside it (`devices/cpu -> ../../../devices/cpu`); a symlink that leads
/// out (`events/ev -> /etc/shadow`) is refused with an error naming it, and nothing is opened there.
/// openat2(RESOLVE_BENEATH) does the check in the kernel; without it (Linux < 5.6) the resolved path
/// is checked with realpath(3) before the open.
class Jail {
 public:
  /// How escapes are caught: `kernel` (openat2, falling back to `realpath` where the kernel lacks it),
  /// or `realpath` alone (for tests of the fallback).
  enum class Check { kernel, realpath };
  explicit Jail(std::string root, Check check = Check::kernel);
  ~Jail();
  Jail(const Jail&) = delete;
  Jail& operator=(const Jail&) = delete;
  const std::string& root() const { return root_; }
  /// Opens `path`, which must be the root or below it as a string, with `flags` (O_CLOEXEC added).
  /// Returns the fd, or -errno: -EXDEV when resolving it would leave the root.
  int open(const std::string& path, int flags) const;
  /// Whether open() resolves in the kernel (openat2), where O_NOFOLLOW on a symlink to nothing gives
  /// ELOOP: then ENOENT means that nothing has the name. False before the first open() and with the
  /// realpath fallback.
  bool kernel_resolves() const { return kernel_resolves_.load(std::memory_order_relaxed); }

 private:
  std::string root_;
  int fd_ = -1;  // O_PATH of the root, -1 when it does not exist
  Check check_;
  mutable std::atomic<bool> kernel_resolves_{false};
};

/// Contents of a file, nullopt when it does not exist (or is a folder); throws perfspec::Error naming
/// the file when it exists but cannot be read, is larger than `max` bytes, or lies outside the root.
std::optional<std::string> read_small_file(const Jail& jail, const std::string& path,
                                           std::size_t max = max_file_size);
/// Contents of a file that may be absent (an alias's `.scale`, a PMU's `caps/max_precise`): nullopt
/// only when nothing has that name. A name that is there but is no file to read (a folder, a symlink
/// to nothing) is an error naming it, never read as absent or empty.
std::optional<std::string> read_optional_file(const Jail& jail, const std::string& path);
/// The same for a file outside any tree (the event tables' mapfile, which the user names).
std::optional<std::string> read_small_file(const std::string& path);
/// The number a kernel knob in /proc or /sys holds (perf_event_paranoid, perf_event_mlock_kb,
/// perf_user_access, the cpu PMU's rdpmc), nullopt when it is absent, unreadable or no number.
std::optional<long> read_proc_number(const std::string& path);
std::string_view trim(std::string_view s);
/// Entries of a folder, sorted (or in the order readdir(3) gives them, as perf lists formats, when not
/// `sorted`); empty when it does not exist. `strict`: one that exists but cannot be listed (EACCES) is
/// an error naming it; otherwise it lists as empty. Outside the root is always an error.
std::vector<std::string> list_dir(const Jail& jail, const std::string& path, bool strict = false,
                                  bool sorted = true);
/// Whether `path` exists (lstat-like for the last component's target). Outside the root is an error.
bool exists(const Jail& jail, const std::string& path);
bool is_directory(const Jail& jail, const std::string& path);
bool is_regular_file(const Jail& jail, const std::string& path);

}  // namespace perfspec::spec::io

namespace perfspec::spec {

/// What a Pmu reads on first use (formats, the event files' names, aliases, caps), guarded so that
/// one Pmu may be shared between threads.
struct Pmu::Lazy {
  std::shared_ptr<const io::Jail> jail;  // the Machine's
  std::once_flag formats_once, aliases_once, alias_names_once, precise_once, alias_name_once;
  std::string alias_name;
  unsigned max_precise = 0;
  std::vector<Format> formats;
  std::uint64_t format_lengths = 0;  // bit n: a format name of n characters (63: 63 or more)
  std::vector<Alias> aliases;
  std::vector<Skipped> skipped;          // written with aliases
  std::vector<std::string> alias_names;  // event files, metadata excluded
  std::mutex alias_mutex;
  std::map<std::string, std::unique_ptr<Alias>, std::less<>> loaded;  // by file name
};

}  // namespace perfspec::spec
