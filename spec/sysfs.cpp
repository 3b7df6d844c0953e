// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/openat2.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/spec.hpp"
#include "perfspec/tables.hpp"
#include "spec/ascii.hpp"
#include "spec/sysfs_io.hpp"

namespace perfspec::spec {

bool safe_component(std::string_view name) {
  return !name.empty() && name.size() <= 255 && name != "." && name != ".." &&
         name.find('/') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

namespace io {

namespace {

ErrorKind kind_of_errno(int e) { return e == EACCES || e == EPERM ? ErrorKind::permission : ErrorKind::io; }

[[noreturn]] void outside(const Jail& jail, const std::string& path) {
  throw Error(
      ErrorKind::machine,
      fmt::format("'{}' leads outside the tree '{}' (a symlink out of it): not read", path, jail.root()));
}

}  // namespace

Jail::Jail(std::string root, Check check) : root_(std::move(root)), check_(check) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  fd_ = ::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
}

Jail::~Jail() {
  if (fd_ >= 0) ::close(fd_);
}

int Jail::open(const std::string& path, int flags) const {
  std::string rel;
  if (path == root_) {
    rel = ".";
  } else {
    bool below = path.size() > root_.size() && path.compare(0, root_.size(), root_) == 0 &&
                 (path[root_.size()] == '/' || root_ == "/");
    if (!below)
      throw Error(ErrorKind::machine,
                  fmt::format("internal error: '{}' is not below the tree '{}'", path, root_));
    rel = path.substr(root_.size());
    while (!rel.empty() && rel.front() == '/') rel.erase(0, 1);
    if (rel.empty()) rel = ".";
  }
  if (fd_ < 0) return -ENOENT;
  if (check_ == Check::kernel) {
    open_how how{};
    how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    long fd = ::syscall(SYS_openat2, fd_, rel.c_str(), &how, sizeof how);
    if (fd >= 0 || errno != ENOSYS) kernel_resolves_.store(true, std::memory_order_relaxed);
    if (fd >= 0) return static_cast<int>(fd);
    if (errno != ENOSYS) return -errno;
  }
  // No openat2 (Linux < 5.6, or a sandbox that hides it): resolve, check, then open.
  // The resolved path is what gets opened, so a link swapped after the check is not followed.
  char* real_root = ::realpath(root_.c_str(), nullptr);
  char* real = ::realpath(path.c_str(), nullptr);
  int err = real ? 0 : errno;
  std::string resolved = real ? real : "";
  bool inside = false;
  if (real && real_root) {
    std::string_view r(real_root), p(real);
    inside =
        p == r || (p.size() > r.size() && p.substr(0, r.size()) == r && (p[r.size()] == '/' || r == "/"));
  }
  std::free(real);
  std::free(real_root);
  if (err) return -err;
  if (!inside) return -EXDEV;
  int plain = ::openat(AT_FDCWD, resolved.c_str(), flags | O_CLOEXEC | O_NOFOLLOW);
  return plain >= 0 ? plain : -errno;
}

namespace {

// Reads an open file of at most `max` bytes, closing it.
std::optional<std::string> read_all(int fd, const std::string& path, std::size_t max = max_file_size) {
  std::string out;
  char buf[4096];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EISDIR && out.empty()) {
        ::close(fd);
        return std::nullopt;
      }
      int e = errno;
      ::close(fd);
      throw Error(kind_of_errno(e), fmt::format("cannot read '{}': {}", path, std::strerror(e)));
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > max) {
      ::close(fd);
      throw Error(ErrorKind::machine,
                  max == max_file_size
                      ? fmt::format("'{}' is larger than {} bytes; not a sysfs attribute", path, max)
                      : fmt::format("'{}' is larger than {} bytes", path, max));
    }
  }
  ::close(fd);
  return out;
}

std::optional<std::string> read_opened(int fd, const Jail* jail, const std::string& path,
                                       std::size_t max = max_file_size) {
  if (fd < 0) {
    if (fd == -ENOENT || fd == -ENOTDIR) return std::nullopt;
    if (fd == -EXDEV && jail) outside(*jail, path);
    throw Error(kind_of_errno(-fd), fmt::format("cannot read '{}': {}", path, std::strerror(-fd)));
  }
  return read_all(fd, path, max);
}

}  // namespace

std::optional<std::string> read_small_file(const Jail& jail, const std::string& path, std::size_t max) {
  // O_NOFOLLOW is not used: sysfs PMU folders are themselves symlinks into /sys/devices. The Jail keeps
  // every symlink inside the tree; names from user text are also checked with safe_component().
  return read_opened(jail.open(path, O_RDONLY | O_NONBLOCK), &jail, path, max);
}

namespace {

// Why a name read as absent is not a file to read (a folder, a symlink to nothing, ...): an error
// naming it. Looked at in its folder (opened inside the tree) without following it; nullopt when
// nothing has the name.
std::optional<std::string> why_not_read(const Jail& jail, const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return std::nullopt;
  int dir = jail.open(path.substr(0, slash), O_PATH | O_DIRECTORY);
  if (dir < 0) return std::nullopt;
  std::string name = path.substr(slash + 1);
  struct stat st {};
  int r = ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW);
  std::string target;
  if (r == 0 && S_ISLNK(st.st_mode)) {
    char buf[4096];
    ssize_t n = ::readlinkat(dir, name.c_str(), buf, sizeof buf);
    if (n > 0) target.assign(buf, static_cast<std::size_t>(n));
  }
  ::close(dir);
  if (r != 0) return std::nullopt;
  if (S_ISDIR(st.st_mode)) throw Error(ErrorKind::machine, fmt::format("'{}' is a folder, not a file", path));
  if (S_ISLNK(st.st_mode))
    throw Error(ErrorKind::machine, fmt::format("'{}' is a symlink to nothing ('{}')", path, target));
  throw Error(ErrorKind::io, fmt::format("'{}' cannot be read", path));
}

}  // namespace

std::optional<std::string> read_optional_file(const Jail& jail, const std::string& path) {
  // Most optional files are absent (a PMU's cpus, identifier, an alias's .scale): opened without
  // following a last symlink, ENOENT then means that nothing has the name (a symlink to nothing gives
  // ELOOP), with no more system calls. A symlink is followed by a second open.
  int fd = jail.open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
  if ((fd == -ENOENT || fd == -ENOTDIR) && jail.kernel_resolves()) return std::nullopt;
  if (fd >= 0) {
    if (auto text = read_all(fd, path)) return text;
    throw Error(ErrorKind::machine, fmt::format("'{}' is a folder, not a file", path));
  }
  if (fd != -ENOENT && fd != -ENOTDIR && fd != -ELOOP) read_opened(fd, &jail, path);  // throws
  if (auto text = read_small_file(jail, path)) return text;
  return why_not_read(jail, path);
}

std::optional<std::string> read_small_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  return read_opened(fd < 0 ? -errno : fd, nullptr, path);
}

std::optional<long> read_proc_number(const std::string& path) {
  std::ifstream in(path);
  long v = 0;
  if (in >> v) return v;
  return std::nullopt;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::strchr(" \t\r\n", s.back()) && s.back() != '\0') s.remove_suffix(1);
  while (!s.empty() && std::strchr(" \t\r\n", s.front()) && s.front() != '\0') s.remove_prefix(1);
  return s;
}

std::vector<std::string> list_dir(const Jail& jail, const std::string& path, bool strict, bool sorted) {
  std::vector<std::string> out;
  int fd = jail.open(path, O_RDONLY | O_DIRECTORY);
  if (fd < 0) {
    if (fd == -EXDEV) outside(jail, path);
    if (strict && fd != -ENOENT && fd != -ENOTDIR)
      throw Error(kind_of_errno(-fd), fmt::format("cannot read '{}': {}", path, std::strerror(-fd)));
    return out;
  }
  DIR* dir = ::fdopendir(fd);
  if (!dir) {
    ::close(fd);
    return out;
  }
  while (dirent* e = ::readdir(dir)) {
    std::string_view n = e->d_name;
    if (n != "." && n != "..") out.emplace_back(n);
  }
  ::closedir(dir);
  if (sorted) std::sort(out.begin(), out.end());
  return out;
}

namespace {
// stat of what `path` names (its symlinks followed, inside the tree), or nullopt when it is not there.
std::optional<struct stat> stat_in(const Jail& jail, const std::string& path) {
  int fd = jail.open(path, O_PATH);
  if (fd < 0) {
    if (fd == -EXDEV) outside(jail, path);
    return std::nullopt;
  }
  struct stat st {};
  int r = ::fstat(fd, &st);
  ::close(fd);
  if (r != 0) return std::nullopt;
  return st;
}
}  // namespace

bool exists(const Jail& jail, const std::string& path) { return stat_in(jail, path).has_value(); }

bool is_directory(const Jail& jail, const std::string& path) {
  auto st = stat_in(jail, path);
  return st && S_ISDIR(st->st_mode);
}

bool is_regular_file(const Jail& jail, const std::string& path) {
  auto st = stat_in(jail, path);
  return st && S_ISREG(st->st_mode);
}

}  // namespace io

Pmu::Pmu() : lazy_(std::make_unique<Lazy>()) {}
Pmu::~Pmu() = default;

const Format* Pmu::format(std::string_view term) const {
  // A PMU has a few dozen formats at most: a scan that rejects on length and first letter beats a
  // binary search of string comparisons (every term of every event asks).
  if (term.empty()) return nullptr;
  const auto& all = formats();
  if (!(lazy_->format_lengths >> std::min<std::size_t>(term.size(), 63) & 1))
    return nullptr;  // no name that long
  for (const auto& f : all)
    if (f.name.size() == term.size() && f.name[0] == term[0] && f.name == term) return &f;
  return nullptr;
}

const std::vector<Format>& Pmu::formats() const {
  std::call_once(lazy_->formats_once, [this] { load_formats(); });
  return lazy_->formats;
}

void Pmu::load_formats() const {
  std::vector<Format> out;
  std::string dir = dir_ + "/format";
  for (const auto& file : io::list_dir(*lazy_->jail, dir, true)) {
    std::string path = dir + "/" + file;
    auto text = io::read_optional_file(*lazy_->jail, path);
    if (!text) continue;  // gone since the folder was listed
    try {
      out.push_back(parse_format(file, *text));
    } catch (const Error& e) {
      throw Error(ErrorKind::machine,
                  fmt::format("pmu '{}': format file '{}': {}", name_, path, e.message()));
    }
  }
  std::sort(out.begin(), out.end(), [](const Format& a, const Format& b) { return a.name < b.name; });
  for (const auto& f : out)
    lazy_->format_lengths |= std::uint64_t{1} << std::min<std::size_t>(f.name.size(), 63);
  lazy_->formats = std::move(out);
}

namespace {
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
}  // namespace

const std::vector<std::string>& Pmu::alias_names() const {
  std::call_once(lazy_->alias_names_once, [this] {
    for (auto& file : io::list_dir(*lazy_->jail, dir_ + "/events", true))
      if (!ends_with(file, ".scale") && !ends_with(file, ".unit") && !ends_with(file, ".per-pkg") &&
          !ends_with(file, ".snapshot") && safe_component(file))
        lazy_->alias_names.push_back(std::move(file));
  });
  return lazy_->alias_names;
}

// Only the alias asked for is read (with its metadata): resolving `cpu/mem-loads/` does not read the
// other events of the PMU.
const Alias* Pmu::alias(std::string_view name) const {
  const auto& names = alias_names();
  auto it = std::find_if(names.begin(), names.end(), [&](const std::string& n) {
    return n.size() == name.size() && ::strncasecmp(n.data(), name.data(), name.size()) == 0;
  });
  if (it == names.end()) return nullptr;
  std::lock_guard lock(lazy_->alias_mutex);
  if (auto l = lazy_->loaded.find(*it); l != lazy_->loaded.end()) return l->second.get();
  auto a = std::make_unique<Alias>(load_alias(*it));
  const Alias* raw = a.get();
  lazy_->loaded.emplace(*it, std::move(a));
  return raw;
}

const std::vector<Alias>& Pmu::aliases() const {
  std::call_once(lazy_->aliases_once, [this] { load_aliases(); });
  return lazy_->aliases;
}

// An event file that cannot be used is left out of the list with its reason (skipped()); asked for by
// name, it is an error naming the file. Either way it never takes the PMU's other events down.
void Pmu::load_aliases() const {
  std::vector<Alias> out;
  for (const auto& file : alias_names()) {
    try {
      out.push_back(load_alias(file));
    } catch (const Error& e) {
      lazy_->skipped.push_back({dir_ + "/events/" + file, e.message()});
    }
  }
  lazy_->aliases = std::move(out);
}

const std::vector<Pmu::Skipped>& Pmu::skipped() const {
  aliases();
  return lazy_->skipped;
}

Alias Pmu::load_alias(const std::string& file) const {
  std::string path = dir_ + "/events/" + file;
  Alias a;
  auto text = io::read_optional_file(*lazy_->jail, path);
  if (!text) throw Error(ErrorKind::machine, fmt::format("'{}' is gone: it was listed, then removed", path));
  a.name = file;
  a.origin = path;
  a.terms = std::string(io::trim(*text));
  if (a.terms.find('\0') != std::string::npos)
    throw Error(ErrorKind::machine, fmt::format("pmu '{}': event file '{}' holds binary data", name_, path));
  auto companion = [&](const char* suffix) { return io::read_optional_file(*lazy_->jail, path + suffix); };
  if (auto sc = companion(".scale")) {
    a.scale_text = std::string(io::trim(*sc));
    const char* begin = a.scale_text.c_str();
    char* end = nullptr;
    errno = 0;
    a.scale = std::strtod(begin, &end);
    if (a.scale_text.empty() || end != begin + a.scale_text.size() || errno == ERANGE)
      throw Error(ErrorKind::machine, fmt::format("pmu '{}': scale file '{}.scale' holds '{}', not a number",
                                                  name_, path, a.scale_text));
  }
  if (auto u = companion(".unit")) a.unit = std::string(io::trim(*u));
  if (auto p = companion(".per-pkg")) a.per_pkg = io::trim(*p) == "1";
  if (auto p = companion(".snapshot")) a.snapshot = io::trim(*p) == "1";
  return a;
}

const std::string& Pmu::alias_name() const {
  std::call_once(lazy_->alias_name_once, [this] {
    // The first line of `alias`, as perf reads it.
    if (auto a = io::read_optional_file(*lazy_->jail, dir_ + "/alias")) {
      std::string_view first = *a;
      first = first.substr(0, first.find('\n'));
      lazy_->alias_name = std::string(io::trim(first));
    }
  });
  return lazy_->alias_name;
}

std::optional<std::string> Pmu::cap(std::string_view name) const {
  if (!safe_component(name)) return std::nullopt;
  auto text = io::read_optional_file(*lazy_->jail, dir_ + "/caps/" + std::string(name));
  if (!text) return std::nullopt;
  return std::string(io::trim(*text));
}

unsigned Pmu::max_precise() const {
  std::call_once(lazy_->precise_once, [this] {
    auto text = cap("max_precise");
    if (!text) return;
    unsigned v = 0;
    auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
    if (ec != std::errc{} || p != text->data() + text->size())
      throw Error(ErrorKind::machine, fmt::format("pmu '{}': '{}/caps/max_precise' holds '{}', not a number",
                                                  name_, dir_, *text));
    lazy_->max_precise = std::min(v, 3u);
  });
  return lazy_->max_precise;
}

namespace {

std::string_view without_uncore(std::string_view s) {
  constexpr std::string_view uncore = "uncore_";
  return s.starts_with(uncore) ? s.substr(uncore.size()) : s;
}

}  // namespace

bool pmu_name_matches(std::string_view pattern, std::string_view name) {
  std::string_view tok = without_uncore(pattern), n = without_uncore(name);
  // The suffix rule is the one table units use (table_pmu_matches without commas).
  if (tok.find(',') == std::string_view::npos && table_pmu_matches(tok, n)) return true;
  return has_glob(tok) && ::fnmatch(std::string(tok).c_str(), std::string(n).c_str(), 0) == 0;
}

MachineOptions MachineOptions::from_environment() {
  MachineOptions o;
  if (const char* d = std::getenv("PERFSPEC_EVENTS_DIR"); d && *d) o.events_dir = d;
  if (const char* c = std::getenv("PERFSPEC_CPUID"); c && *c)
    o.cpuid = c;
  else if (const char* p = std::getenv("PERF_CPUID"); p && *p)
    o.cpuid = p;
  return o;
}

}  // namespace perfspec::spec
