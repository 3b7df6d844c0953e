// SPDX-License-Identifier: MIT
// A Machine's tracepoints: where tracefs is (found as perf finds it, mounted as root when it is
// mounted nowhere), why a tracepoint cannot be looked up, ids and listings.
#include <fcntl.h>
#include <fnmatch.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "spec/machine_impl.hpp"
#include "spec/tracefs.hpp"

namespace perfspec::spec {

const std::string& Machine::Impl::tracefs_events() const {
  std::call_once(tracefs_once_, [this] {
    tracefs_jail_ = jail_;
    if (tracefs::is_real_sysfs(root_)) {
      // This machine's tracepoints: tracefs is a filesystem of its own, mounted anywhere or nowhere.
      std::string mount = tracefs::find_mount();
      if (mount.empty() && ::geteuid() == 0) {
        if (int err = tracefs::mount_once()) {
          tracefs_missing_ = {
              TracefsProblem::Kind::mount_failed,
              fmt::format("tracefs is not mounted, and mounting it at {} failed: {}",
                          tracefs::default_mountpoint, std::strerror(err)),
              fmt::format("mount it yourself where mounting is allowed: 'mount -t tracefs nodev {}'",
                          tracefs::default_mountpoint)};
          return;
        }
        // Mounted now, or by this process earlier and unmounted since: then it is not mounted again.
        if (tracefs::is_tracefs(tracefs::default_mountpoint)) mount = tracefs::default_mountpoint;
      }
      if (mount.empty()) {
        tracefs_missing_ = {
            TracefsProblem::Kind::not_mounted, "tracefs is not mounted",
            fmt::format("run as root so that perfspec mounts it, or mount it: 'mount -t tracefs nodev {}'",
                        tracefs::default_mountpoint)};
        return;
      }
      tracefs_mount_ = mount;
      tracefs_ = mount + "/events";
      // A Jail holds its root open, which would keep the mount busy; one below /sys needs none of its own.
      if (!mount.starts_with(root_ + "/")) tracefs_jail_ = std::make_shared<const io::Jail>(mount);
      return;
    }
    // A folder this user may not enter is still the one in use: tracefs_problem() says so.
    auto denied = [this](const std::string& dir) {
      int fd = jail_->open(dir, O_PATH | O_DIRECTORY);
      if (fd >= 0) ::close(fd);
      return fd == -EACCES;
    };
    for (const char* candidate : {"/kernel/tracing/events", "/kernel/debug/tracing/events"}) {
      std::string dir = root_ + candidate;
      if (io::is_directory(*jail_, dir) || denied(dir)) {
        tracefs_ = std::move(dir);
        return;
      }
    }
    tracefs_missing_ = {TracefsProblem::Kind::absent, "",
                        fmt::format("no tracefs events folder under '{}' (kernel/tracing/events)", root_)};
  });
  return tracefs_;
}

Machine::TracefsProblem Machine::Impl::tracefs_problem(std::string_view sys, std::string_view name) const {
  const std::string& events = tracefs_events();
  if (events.empty()) return tracefs_missing_;
  std::vector<std::pair<std::string, int>> steps = {{events, O_RDONLY | O_DIRECTORY}};
  if (safe_component(sys)) {
    steps.emplace_back(fmt::format("{}/{}", events, sys), O_RDONLY | O_DIRECTORY);
    if (safe_component(name)) steps.emplace_back(fmt::format("{}/{}/{}/id", events, sys, name), O_RDONLY);
  }
  for (const auto& [path, flags] : steps) {
    int fd = tracefs_jail_->open(path, flags | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
    if (fd != -EACCES && fd != -EPERM) continue;
    std::string remedy =
        tracefs_mount_.empty()
            ? fmt::format("run as a user who may read it, or make it readable: 'chmod -R a+rX {}'",
                          events.substr(0, events.rfind('/')))
            // Recent kernels leave the "other" bits off tracefs files (an id is 0440): perf's hint, mode=755
            // alone, opens the folders but not the files; a group of this user's must be let in too.
            : fmt::format(
                  "run as root, or let a group this user is in read tracefs: "
                  "'mount -o remount,mode=755,gid=GROUP {}'",
                  tracefs_mount_);
    return {TracefsProblem::Kind::denied, fmt::format("no permission to read '{}'", path), std::move(remedy)};
  }
  return {};
}

const std::vector<std::string>& Machine::Impl::tracefs_listing(const std::string& dir) const {
  // Folder listings are kept: globs over tracefs are common and it has thousands of entries.
  {
    std::lock_guard lock(mutex_);
    if (auto it = tracefs_dirs_.find(dir); it != tracefs_dirs_.end()) return it->second;
  }
  auto l = io::list_dir(*tracefs_jail_, dir);
  std::lock_guard lock(mutex_);
  return tracefs_dirs_.emplace(dir, std::move(l)).first->second;
}

std::vector<std::string> Machine::tracepoint_names() const {
  const Impl& I = *impl_;
  std::vector<std::string> out;
  if (I.tracefs_events().empty()) return out;
  for (const auto& sys : I.tracefs_listing(I.tracefs_events())) {
    if (!safe_component(sys)) continue;
    // Files beside the tracepoint folders, which perf skips too; a file lists as an empty folder.
    for (const auto& ev : I.tracefs_listing(I.tracefs_events() + "/" + sys))
      if (safe_component(ev) && ev != "enable" && ev != "filter") out.push_back(sys + ":" + ev);
  }
  return out;
}

std::optional<std::uint64_t> Machine::Impl::tracepoint_id(std::string_view sys, std::string_view name) const {
  if (!safe_component(sys) || !safe_component(name) || tracefs_events().empty()) return std::nullopt;
  std::string key = fmt::format("{}/{}", sys, name);
  {
    std::lock_guard lock(mutex_);
    if (auto it = tracepoint_ids_.find(key); it != tracepoint_ids_.end()) return it->second;
  }
  std::optional<std::uint64_t> id = read_tracepoint_id(sys, name);
  // Only ids found are kept: a tracepoint can appear later (a module loads), and keeping every name
  // asked for would grow without bound.
  if (!id) return id;
  std::lock_guard lock(mutex_);
  tracepoint_ids_.emplace(key, id);
  return id;
}

std::optional<std::uint64_t> Machine::Impl::read_tracepoint_id(std::string_view sys,
                                                               std::string_view name) const {
  std::string path = fmt::format("{}/{}/{}/id", tracefs_events(), sys, name);
  std::optional<std::string> text;
  try {
    text = io::read_small_file(*tracefs_jail_, path);
  } catch (const Error&) {
    // Not readable by this user: not found, as for perf; tracefs_problem() tells the caller why. A
    // name that is not a tracepoint at all (libpfm4's `INST_RETIRED:ANY_P`) then still gets its turn.
    int fd = tracefs_jail_->open(path, O_RDONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
    if (fd == -EACCES || fd == -EPERM) return std::nullopt;
    throw;
  }
  if (!text) return std::nullopt;
  auto t = io::trim(*text);
  std::uint64_t id = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), id);
  if (t.empty() || ec != std::errc{} || p != t.data() + t.size())
    throw Error(ErrorKind::machine,
                fmt::format("tracepoint id file '{}' holds '{}', not a number", path, t.substr(0, 40)));
  return id;
}

std::vector<std::pair<std::string, std::string>> Machine::tracepoints(std::string_view sys_glob,
                                                                      std::string_view name_glob) const {
  const Impl& I = *impl_;
  std::vector<std::pair<std::string, std::string>> out;
  if (I.tracefs_events().empty()) return out;
  std::string sg(sys_glob), ng(name_glob);
  for (const auto& sys : I.tracefs_listing(I.tracefs_events())) {
    if (!safe_component(sys) || ::fnmatch(sg.c_str(), sys.c_str(), 0) != 0) continue;
    std::string sdir = I.tracefs_events() + "/" + sys;
    for (const auto& ev : I.tracefs_listing(sdir)) {
      if (!safe_component(ev) || ::fnmatch(ng.c_str(), ev.c_str(), 0) != 0) continue;
      if (I.tracepoint_id(sys, ev)) out.emplace_back(sys, ev);
    }
  }
  return out;
}

std::optional<std::string> Machine::tracepoint_format(std::string_view sys, std::string_view name) const {
  const Impl& I = *impl_;
  if (!safe_component(sys) || !safe_component(name) || I.tracefs_events().empty()) return std::nullopt;
  return io::read_small_file(*I.tracefs_jail_, fmt::format("{}/{}/{}/format", I.tracefs_events(), sys, name));
}

std::optional<std::string> Machine::tracefs_file(std::string_view name) const {
  const Impl& I = *impl_;
  const std::string& events = I.tracefs_events();
  if (events.empty()) return std::nullopt;
  std::string path;
  if (name == "header_page" || name == "header_event")
    path = fmt::format("{}/{}", events, name);
  else if (name == "printk_formats" || name == "saved_cmdlines")  // beside events/
    path = fmt::format("{}/{}", events.substr(0, events.rfind('/')), name);
  else
    return std::nullopt;
  // printk_formats lists every trace_printk format of the kernel and its modules: larger than a sysfs
  // attribute, bounded all the same.
  return io::read_small_file(*I.tracefs_jail_, path, std::size_t{16} << 20);
}

const std::string& Machine::tracefs_events() const { return impl_->tracefs_events(); }

Machine::TracefsProblem Machine::tracefs_problem(std::string_view sys, std::string_view name) const {
  return impl_->tracefs_problem(sys, name);
}

std::optional<std::uint64_t> Machine::tracepoint_id(std::string_view sys, std::string_view name) const {
  return impl_->tracepoint_id(sys, name);
}

}  // namespace perfspec::spec
