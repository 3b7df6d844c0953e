#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <regex.h>
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

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/spec.hpp"
#include "perfspec/tables.hpp"
#include "spec/ascii.hpp"
#include "spec/libpfm4.hpp"
#include "spec/sysfs_io.hpp"
#include "spec/tracefs.hpp"

namespace perfspec::spec {


bool safe_component(std::string_view name) {
  return !name.empty() && name.size() <= 255 && name != "." && name != ".." &&
         name.find('/') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

namespace io {

namespace {

ErrorKind kind_of_errno(int e) { return e == EACCES || e == EPERM ? ErrorKind::permission : ErrorKind::io; }

[[noreturn]] void outside(const Jail& jail, const std::string& path) {
  throw Error(ErrorKind::machine, fmt::format("'{}' leads outside the tree '{}' (a symlink out of it): not read", path, jail.root()));
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
    if (!below) throw Error(ErrorKind::machine, fmt::format("internal error: '{}' is not below the tree '{}'", path, root_));
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
    inside = p == r || (p.size() > r.size() && p.substr(0, r.size()) == r && (p[r.size()] == '/' || r == "/"));
  }
  std::free(real);
  std::free(real_root);
  if (err) return -err;
  if (!inside) return -EXDEV;
  int plain = ::openat(AT_FDCWD, resolved.c_str(), flags | O_CLOEXEC | O_NOFOLLOW);
  return plain >= 0 ? plain : -errno;
}

namespace {

// Reads an open file of at most max_file_size bytes, closing it.
std::optional<std::string> read_all(int fd, const std::string& path) {
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
    if (out.size() > max_file_size) {
      ::close(fd);
      throw Error(ErrorKind::machine, fmt::format("'{}' is larger than {} bytes; not a sysfs attribute", path, max_file_size));
    }
  }
  ::close(fd);
  return out;
}

std::optional<std::string> read_opened(int fd, const Jail* jail, const std::string& path) {
  if (fd < 0) {
    if (fd == -ENOENT || fd == -ENOTDIR) return std::nullopt;
    if (fd == -EXDEV && jail) outside(*jail, path);
    throw Error(kind_of_errno(-fd), fmt::format("cannot read '{}': {}", path, std::strerror(-fd)));
  }
  return read_all(fd, path);
}

}  // namespace

std::optional<std::string> read_small_file(const Jail& jail, const std::string& path) {
  // O_NOFOLLOW is not used: sysfs PMU folders are themselves symlinks into /sys/devices. The Jail keeps
  // every symlink inside the tree; names from user text are also checked with safe_component().
  return read_opened(jail.open(path, O_RDONLY | O_NONBLOCK), &jail, path);
}

std::optional<std::string> read_optional_file(const Jail& jail, const std::string& path) {
  if (auto text = read_small_file(jail, path)) return text;
  // Nothing was read: say why unless nothing has that name. The name is looked at in its folder
  // (opened inside the tree) without following it.
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
  if (S_ISLNK(st.st_mode)) throw Error(ErrorKind::machine, fmt::format("'{}' is a symlink to nothing ('{}')", path, target));
  throw Error(ErrorKind::io, fmt::format("'{}' cannot be read", path));
}

std::optional<std::string> read_small_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  return read_opened(fd < 0 ? -errno : fd, nullptr, path);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::strchr(" \t\r\n", s.back()) && s.back() != '\0') s.remove_suffix(1);
  while (!s.empty() && std::strchr(" \t\r\n", s.front()) && s.front() != '\0') s.remove_prefix(1);
  return s;
}

std::vector<std::string> list_dir(const Jail& jail, const std::string& path, bool strict) {
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
  std::sort(out.begin(), out.end());
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


const Format* Pmu::format(std::string_view term) const {
  // A PMU has a few dozen formats at most: a scan that rejects on length and first letter beats a
  // binary search of string comparisons (every term of every event asks).
  if (term.empty()) return nullptr;
  const auto& all = formats();
  if (!(format_lengths_ >> std::min<std::size_t>(term.size(), 63) & 1)) return nullptr;  // no name that long
  for (const auto& f : all)
    if (f.name.size() == term.size() && f.name[0] == term[0] && f.name == term) return &f;
  return nullptr;
}

const std::vector<Format>& Pmu::formats() const {
  std::call_once(formats_once_, [this] { load_formats(); });
  return formats_;
}

void Pmu::load_formats() const {
  std::vector<Format> out;
  std::string dir = dir_ + "/format";
  for (const auto& file : io::list_dir(*jail_, dir, true)) {
    std::string path = dir + "/" + file;
    auto text = io::read_optional_file(*jail_, path);
    if (!text) continue;  // gone since the folder was listed
    try {
      out.push_back(parse_format(file, *text));
    } catch (const Error& e) {
      throw Error(ErrorKind::machine, fmt::format("pmu '{}': format file '{}': {}", name_, path, e.message()));
    }
  }
  std::sort(out.begin(), out.end(), [](const Format& a, const Format& b) { return a.name < b.name; });
  for (const auto& f : out) format_lengths_ |= std::uint64_t{1} << std::min<std::size_t>(f.name.size(), 63);
  formats_ = std::move(out);
}

namespace {
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
}  // namespace

const std::vector<std::string>& Pmu::alias_names() const {
  std::call_once(alias_names_once_, [this] {
    for (auto& file : io::list_dir(*jail_, dir_ + "/events", true))
      if (!ends_with(file, ".scale") && !ends_with(file, ".unit") && !ends_with(file, ".per-pkg") &&
          !ends_with(file, ".snapshot") && safe_component(file))
        alias_names_.push_back(std::move(file));
  });
  return alias_names_;
}

// Only the alias asked for is read (with its metadata): resolving `cpu/mem-loads/` does not read the
// other events of the PMU.
const Alias* Pmu::alias(std::string_view name) const {
  const auto& names = alias_names();
  auto it = std::find_if(names.begin(), names.end(), [&](const std::string& n) {
    return n.size() == name.size() && ::strncasecmp(n.data(), name.data(), name.size()) == 0;
  });
  if (it == names.end()) return nullptr;
  std::lock_guard lock(alias_mutex_);
  if (auto l = loaded_.find(*it); l != loaded_.end()) return l->second.get();
  auto a = std::make_unique<Alias>(load_alias(*it));
  const Alias* raw = a.get();
  loaded_.emplace(*it, std::move(a));
  return raw;
}

const std::vector<Alias>& Pmu::aliases() const {
  std::call_once(aliases_once_, [this] { load_aliases(); });
  return aliases_;
}

// An event file that cannot be used is left out of the list with its reason (skipped()); asked for by
// name, it is an error naming the file. Either way it never takes the PMU's other events down.
void Pmu::load_aliases() const {
  std::vector<Alias> out;
  for (const auto& file : alias_names()) {
    try {
      out.push_back(load_alias(file));
    } catch (const Error& e) {
      skipped_.push_back({dir_ + "/events/" + file, e.message()});
    }
  }
  aliases_ = std::move(out);
}

const std::vector<Pmu::Skipped>& Pmu::skipped() const {
  aliases();
  return skipped_;
}

Alias Pmu::load_alias(const std::string& file) const {
  std::string path = dir_ + "/events/" + file;
  Alias a;
  auto text = io::read_optional_file(*jail_, path);
  if (!text) throw Error(ErrorKind::machine, fmt::format("'{}' is gone: it was listed, then removed", path));
  a.name = file;
  a.origin = path;
  a.terms = std::string(io::trim(*text));
  if (a.terms.find('\0') != std::string::npos)
    throw Error(ErrorKind::machine, fmt::format("pmu '{}': event file '{}' holds binary data", name_, path));
  auto companion = [&](const char* suffix) { return io::read_optional_file(*jail_, path + suffix); };
  if (auto sc = companion(".scale")) {
    a.scale_text = std::string(io::trim(*sc));
    const char* begin = a.scale_text.c_str();
    char* end = nullptr;
    errno = 0;
    a.scale = std::strtod(begin, &end);
    if (a.scale_text.empty() || end != begin + a.scale_text.size() || errno == ERANGE)
      throw Error(ErrorKind::machine, fmt::format("pmu '{}': scale file '{}.scale' holds '{}', not a number", name_, path, a.scale_text));
  }
  if (auto u = companion(".unit")) a.unit = std::string(io::trim(*u));
  if (auto p = companion(".per-pkg")) a.per_pkg = io::trim(*p) == "1";
  if (auto p = companion(".snapshot")) a.snapshot = io::trim(*p) == "1";
  return a;
}

const std::string& Pmu::alias_name() const {
  std::call_once(alias_name_once_, [this] {
    // The first line of `alias`, as perf reads it.
    if (auto a = io::read_optional_file(*jail_, dir_ + "/alias")) {
      std::string_view first = *a;
      first = first.substr(0, first.find('\n'));
      alias_name_ = std::string(io::trim(first));
    }
  });
  return alias_name_;
}

std::optional<std::string> Pmu::cap(std::string_view name) const {
  if (!safe_component(name)) return std::nullopt;
  auto text = io::read_optional_file(*jail_, dir_ + "/caps/" + std::string(name));
  if (!text) return std::nullopt;
  return std::string(io::trim(*text));
}

unsigned Pmu::max_precise() const {
  std::call_once(precise_once_, [this] {
    auto text = cap("max_precise");
    if (!text) return;
    unsigned v = 0;
    auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
    if (ec != std::errc{} || p != text->data() + text->size())
      throw Error(ErrorKind::machine, fmt::format("pmu '{}': '{}/caps/max_precise' holds '{}', not a number", name_, dir_, *text));
    max_precise_ = std::min(v, 3u);
  });
  return max_precise_;
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
  if (const char* c = std::getenv("PERFSPEC_CPUID"); c && *c) o.cpuid = c;
  else if (const char* p = std::getenv("PERF_CPUID"); p && *p) o.cpuid = p;
  return o;
}

Machine::Machine(std::string sysfs_root, MachineOptions options)
    : root_(std::move(sysfs_root)), options_(std::move(options)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  devices_ = root_ + "/bus/event_source/devices";
  jail_ = std::make_shared<const io::Jail>(root_);
}

Machine::~Machine() = default;

const Pmu* Machine::pmu(std::string_view name) const {
  if (!safe_component(name)) return nullptr;
  std::lock_guard lock(mutex_);
  if (auto it = pmus_.find(name); it != pmus_.end()) return it->second.get();
  if (absent_.contains(name)) return nullptr;
  std::string dir = devices_ + "/" + std::string(name);
  auto type_text = io::read_small_file(*jail_, dir + "/type");
  if (!type_text) {
    // Kept, since a wildcard (`uncore_imc/.../`) asks for its absent prefix on every resolve; but only
    // so many, since every unknown name a long-lived program is given would otherwise stay.
    if (absent_.size() < 4096) absent_.emplace(std::string(name), true);
    return nullptr;
  }
  auto t = io::trim(*type_text);
  std::uint32_t type = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), type);
  if (t.empty() || ec != std::errc{} || p != t.data() + t.size())
    throw Error(ErrorKind::machine, fmt::format("pmu '{}': '{}/type' holds '{}', not a PMU type number", name, dir,
                            t.substr(0, 40)));
  auto pmu = std::make_unique<Pmu>();
  pmu->name_ = std::string(name);
  pmu->dir_ = dir;
  pmu->jail_ = jail_;
  pmu->type_ = type;
  if (auto m = io::read_optional_file(*jail_, dir + "/cpumask")) {
    pmu->cpumask_ = std::string(io::trim(*m));
    pmu->uncore_ = true;
  }
  auto cpus = io::read_optional_file(*jail_, dir + "/cpus");
  if (cpus) pmu->cpus_ = std::string(io::trim(*cpus));
  pmu->core_ = name == "cpu" || name == "cpum_cf" || cpus.has_value();
  // perf reads the identifier of uncore PMUs only.
  if (pmu->uncore_)
    if (auto id = io::read_optional_file(*jail_, dir + "/identifier")) pmu->identifier_ = std::string(io::trim(*id));
  const Pmu* raw = pmu.get();
  pmus_.emplace(std::string(name), std::move(pmu));
  return raw;
}

const Pmu* Machine::pmu_of_type(std::uint32_t type) const {
  for (const auto& n : pmu_names())
    if (const Pmu* p = pmu(n); p && p->type() == type) return p;
  return nullptr;
}

const std::vector<std::string>& Machine::pmu_names() const {
  std::call_once(names_once_, [this] {
    for (auto& n : io::list_dir(*jail_, devices_))
      if (safe_component(n)) names_.push_back(n);
  });
  return names_;
}

const std::vector<const Pmu*>& Machine::core_pmus() const {
  // Only core candidates are loaded, so a broken uncore PMU cannot disturb `cycles`; a broken core PMU
  // is an error (thrown on every call until it reads), since skipping it would silently change the
  // encoding of every hardware event.
  std::call_once(cores_once_, [this] {
    std::vector<const Pmu*> out;
    for (const auto& n : pmu_names())
      if (n == "cpu" || io::exists(*jail_, devices_ + "/" + n + "/cpus"))
        if (const Pmu* p = pmu(n); p && p->is_core()) out.push_back(p);
    cores_ = std::move(out);
  });
  return cores_;
}

const Pmu* Machine::find_pmu(std::string_view name) const {
  if (const Pmu* p = pmu(name)) return p;
  if (name.empty()) return nullptr;
  // perf_pmus__find: a name that is no PMU folder may be another PMU's `alias`. The aliases are
  // collected once (wildcards like `uncore_imc/.../` ask here on every resolve).
  std::call_once(alias_names_once_, [this] {
    for (const auto& n : pmu_names()) {
      try {
        if (const Pmu* p = pmu(n); p && !p->alias_name().empty()) pmu_aliases_.emplace(p->alias_name(), p);
      } catch (const Error&) {
        // an unreadable PMU is not the one asked for by another name
      }
    }
  });
  auto it = pmu_aliases_.find(name);
  return it == pmu_aliases_.end() ? nullptr : it->second;
}

bool Machine::pmu_matches(std::string_view pattern, const Pmu& p) const {
  return pmu_name_matches(pattern, p.name()) || (!p.alias_name().empty() && pmu_name_matches(pattern, p.alias_name()));
}

namespace {

// The first CPU of a sysfs CPU list ("0-15", "8,12"), or -1.
int first_cpu(std::string_view list) {
  list = io::trim(list);
  int cpu = 0;
  auto [p, ec] = std::from_chars(list.data(), list.data() + list.size(), cpu);
  return ec == std::errc{} && p != list.data() ? cpu : -1;
}

// The architecture folder perf compiled in for this CPU id: `dir` itself when it holds mapfile.csv,
// else its subfolder for the id's architecture (`--events-dir pmu-events` as well as `pmu-events/x86`).
std::string arch_folder(const std::string& dir, const std::string& cpuid) {
  std::error_code ec;
  if (std::filesystem::exists(dir + "/mapfile.csv", ec)) return dir;
  const char* name = nullptr;
  switch (table_arch("", cpuid)) {
    case TableArch::x86: name = "x86"; break;
    case TableArch::arm64: name = "arm64"; break;
    default:
#if defined(__x86_64__) || defined(__i386__)
      name = "x86";
#elif defined(__aarch64__)
      name = "arm64";
#elif defined(__powerpc__)
      name = "powerpc";
#elif defined(__s390__)
      name = "s390";
#elif defined(__riscv)
      name = "riscv";
#endif
      break;
  }
  if (name && std::filesystem::exists(fmt::format("{}/{}/mapfile.csv", dir, name), ec)) return fmt::format("{}/{}", dir, name);
  return dir;  // find_model names the missing mapfile.csv
}

}  // namespace

const std::string& Machine::cpuid() const {
  tables();
  return cpuid_;
}

std::string Machine::midr_of(int cpu) const {
  if (cpu < 0) return {};
  auto text = io::read_small_file(*jail_, fmt::format("{}/devices/system/cpu/cpu{}/regs/identification/midr_el1", root_, cpu));
  return text ? std::string(io::trim(*text)) : std::string{};
}

const EventTables* Machine::tables() const {
  std::call_once(tables_once_, [this] {
    // The CPU id: the option, else the one a snapshot recorded, else this machine's: the MIDR of the
    // first core CPU under the root (arm64 keeps it in sysfs), else what perf reads from /proc.
    cpuid_ = options_.cpuid;
    if (cpuid_.empty())
      if (auto recorded = io::read_small_file(*jail_, root_ + "/perfspec-snapshot/cpuid")) cpuid_ = std::string(io::trim(*recorded));
    cpuid_given_ = !cpuid_.empty();
    if (cpuid_.empty()) {
      int cpu = 0;
      try {
        for (const Pmu* p : core_pmus())
          if (int c = first_cpu(p->cpus().empty() ? p->cpumask() : p->cpus()); c >= 0) {
            cpu = c;
            break;
          }
      } catch (const Error&) {
        // a broken core PMU is reported where it is used
      }
      cpuid_ = midr_of(cpu);
    }
    if (cpuid_.empty()) cpuid_ = detect_cpuid();
    if (options_.events_dir.empty()) return;
    arch_dir_ = arch_folder(options_.events_dir, cpuid_);
    arm64_ = table_arch(arch_dir_, cpuid_) == TableArch::arm64;
    auto model = find_model(arch_dir_, cpuid_);
    if (!model) return;
    tables_ = EventTables::load(arch_dir_, *model, EventTables::Options{options_.cache_dir});
  });
  return tables_.get();
}

const std::string& Machine::tables_folder() const {
  tables();
  return arch_dir_;
}

const EventTables* Machine::tables_for_cpuid(const std::string& cpuid) const {
  if (cpuid == cpuid_) return tables_.get();
  {
    std::lock_guard lock(mutex_);
    if (auto it = tables_by_cpuid_.find(cpuid); it != tables_by_cpuid_.end()) return it->second.get();
  }
  std::shared_ptr<const EventTables> t;
  if (auto model = find_model(arch_dir_, cpuid))
    t = EventTables::load(arch_dir_, *model, EventTables::Options{options_.cache_dir});
  std::lock_guard lock(mutex_);
  return tables_by_cpuid_.emplace(cpuid, std::move(t)).first->second.get();
}

const EventTables* Machine::tables_for(const Pmu& pmu) const {
  const EventTables* machine_tables = tables();
  if (!arm64_ || cpuid_given_ || arch_dir_.empty()) return machine_tables;
  // perf asks each PMU for its CPU id on arm64: the MIDR of the first CPU of its `cpus` (core) or
  // `cpumask` (uncore); a PMU with neither has no CPU and no model tables.
  const std::string& cpus = pmu.is_core() && !pmu.cpus().empty() ? pmu.cpus() : pmu.cpumask();
  if (cpus.empty()) return pmu.is_core() ? machine_tables : nullptr;
  std::string midr = midr_of(first_cpu(cpus));
  return midr.empty() ? machine_tables : tables_for_cpuid(midr);
}

const EventTables* Machine::sys_tables() const {
  tables();
  std::call_once(sys_once_, [this] {
    if (!arch_dir_.empty()) sys_tables_ = EventTables::load_sys(arch_dir_, EventTables::Options{options_.cache_dir});
  });
  return sys_tables_.get();
}

namespace {

// perf's pmu_uncore_identifier_match: the Compat regex matches the whole identifier.
bool identifier_matches(const std::string& compat, const std::string& id) {
  regex_t re;
  if (::regcomp(&re, compat.c_str(), REG_EXTENDED) != 0) return false;
  regmatch_t m[1];
  bool found = ::regexec(&re, id.c_str(), 1, m, 0) == 0;
  ::regfree(&re);
  return found && m[0].rm_so == 0 && static_cast<std::size_t>(m[0].rm_eo) == id.size();
}

}  // namespace

bool Machine::table_event_applies(const TableEvent& e, const Pmu& pmu) const {
  if (e.sys)
    return pmu.is_uncore() && !pmu.identifier().empty() && !e.pmu.empty() && !e.compat.empty() &&
           table_pmu_matches(e.pmu, pmu.name()) && identifier_matches(e.compat, pmu.identifier());
  if (e.pmu.empty()) return pmu.is_core();
  return e.pmu == pmu.name() || (pmu.is_uncore() && table_pmu_matches(e.pmu, pmu.name()));
}

const TableEvent* Machine::table_event(const Pmu& pmu, std::string_view name, bool sys) const {
  if (sys && (!pmu.is_uncore() || pmu.identifier().empty())) return nullptr;
  const EventTables* t = sys ? sys_tables() : tables_for(pmu);
  if (!t) return nullptr;
  for (const TableEvent* e : t->find(name))
    if (table_event_applies(*e, pmu)) return e;
  return nullptr;
}

std::vector<const TableEvent*> Machine::table_events(const Pmu& pmu) const {
  std::vector<const TableEvent*> out;
  for (const EventTables* t : {tables_for(pmu), pmu.is_uncore() && !pmu.identifier().empty() ? sys_tables() : nullptr})
    if (t)
      for (const auto& e : t->events())
        if (table_event_applies(e, pmu)) out.push_back(&e);
  return out;
}

std::string Machine::table_cache_problem() const {
  if (const EventTables* t = tables(); t && !t->cache_problem().empty()) return t->cache_problem();
  std::lock_guard lock(mutex_);
  for (const auto& [id, t] : tables_by_cpuid_)
    if (t && !t->cache_problem().empty()) return t->cache_problem();
  return {};  // the sys tables use the same folder: what is wrong with it shows above
}

std::vector<TableDiagnostic> Machine::table_problems() const {
  std::vector<TableDiagnostic> out;
  auto add = [&](const EventTables* t) {
    if (t)
      for (const auto& d : t->diagnostics())
        if (!d.entry) out.push_back(d);
  };
  add(tables());
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, t] : tables_by_cpuid_) add(t.get());
  }
  add(sys_tables());
  return out;
}

const Alias* Machine::named_event(const Pmu& pmu, std::string_view name) const {
  // perf 6.12 adds a PMU's `sys` table events when it loads the PMU, before its sysfs aliases: they win.
  if (const TableEvent* s = table_event(pmu, name, true)) return &s->alias;
  const TableEvent* t = table_event(pmu, name, false);
  const Alias* a = pmu.alias(name);
  if (!a) return t ? &t->alias : nullptr;
  if (!t) return a;
  // A sysfs alias that the model tables also define takes the table's encoding and per-pkg, and its
  // scale and unit when the entry has them (perf's update_alias); the rest stays the sysfs file's.
  std::string key = fmt::format("{}/{}", pmu.name(), ascii_lowered(name));
  std::lock_guard lock(mutex_);
  if (auto it = merged_.find(key); it != merged_.end()) return it->second.get();
  auto m = std::make_unique<Alias>(*a);
  m->terms = t->alias.terms;
  m->per_pkg = t->alias.per_pkg;
  if (!t->alias.scale_text.empty() || !t->alias.unit.empty()) {
    m->scale = t->alias.scale;
    m->scale_text = t->alias.scale_text;
    m->unit = t->alias.unit;
  }
  m->source = Source::json;
  m->origin = fmt::format("{} (over the sysfs file '{}')", t->alias.origin, a->origin);
  return merged_.emplace(key, std::move(m)).first->second.get();
}

const Alias* Machine::alias(const Pmu& pmu, std::string_view name) const {
  if (const Alias* a = named_event(pmu, name)) return a;
  // libpfm4 knows events by `PMU_EVENT:UMASK` and the dotted vendor form; only names that look like
  // one go there, and only for the PMU its encoding targets.
  if (!options_.libpfm4 || !pmu.is_core() || name.find_first_of(".:") == std::string_view::npos) return nullptr;
  std::string key = fmt::format("{}/{}", pmu.name(), name);
  {
    std::lock_guard lock(mutex_);
    if (auto it = pfm_aliases_.find(key); it != pfm_aliases_.end()) return it->second.get();
  }
  auto enc = pfm::encode(name);
  if (!enc || (enc->type != pmu.type() && !(enc->type == 4 && pmu.type() == 4))) return nullptr;
  auto a = std::make_unique<Alias>();
  a->name = std::string(name);
  a->terms = fmt::format("config={:#x}", enc->config);
  if (enc->config1) a->terms += fmt::format(",config1={:#x}", enc->config1);
  if (enc->config2) a->terms += fmt::format(",config2={:#x}", enc->config2);
  a->source = Source::libpfm4;
  if (enc->exclude_kernel != enc->exclude_user) a->modifiers = enc->exclude_kernel ? "u" : "k";
  a->origin = enc->canonical;
  std::lock_guard lock(mutex_);
  return pfm_aliases_.emplace(key, std::move(a)).first->second.get();
}

const std::vector<std::pair<const Pmu*, const Alias*>>& Machine::aliases_named(std::string_view name) const {
  // Kept per name: a bare name is looked up on every PMU, and event strings repeat names. The key is
  // the lower-cased name, built in a per-thread buffer so that a lookup does not allocate.
  thread_local std::string key;
  key.assign(name);
  for (char& c : key) c = ascii_lower(c);
  {
    std::lock_guard lock(mutex_);
    if (auto it = named_.find(key); it != named_.end()) return it->second;
  }
  std::string lower = key;  // the buffer is only for the lookup above
  std::vector<std::pair<const Pmu*, const Alias*>> out;
  // A PMU that cannot be read does not hide the name on the others; when the name is found nowhere,
  // the first such error is the answer (that PMU may be the one that has it).
  std::optional<Error> unreadable;
  for (const auto& n : pmu_names()) {
    try {
      const Pmu* pmu = this->pmu(n);
      if (!pmu) continue;
      if (const Alias* a = named_event(*pmu, name)) out.emplace_back(pmu, a);
    } catch (const Error& e) {
      if (!unreadable) unreadable = e;
    }
  }
  if (out.empty() && options_.libpfm4 && name.find_first_of(".:") != std::string_view::npos)
    for (const Pmu* pmu : core_pmus())
      if (const Alias* a = alias(*pmu, name)) out.emplace_back(pmu, a);
  if (out.empty() && unreadable) throw *unreadable;  // not kept: the tree may be mended
  // A name found nowhere is not kept either: it is an error, and keeping every unknown name a
  // long-lived program is given would grow without bound.
  static const std::vector<std::pair<const Pmu*, const Alias*>> none;
  if (out.empty()) return none;
  std::lock_guard lock(mutex_);
  return named_.emplace(std::move(lower), std::move(out)).first->second;  // or the answer another thread kept
}

const std::string& Machine::tracefs_events() const {
  std::call_once(tracefs_once_, [this] {
    tracefs_jail_ = jail_;
    if (tracefs::is_real_sysfs(root_)) {
      // This machine's tracepoints: tracefs is a filesystem of its own, mounted anywhere or nowhere.
      std::string mount = tracefs::find_mount();
      if (mount.empty() && ::geteuid() == 0) {
        if (int err = tracefs::mount_once()) {
          tracefs_missing_ = {TracefsProblem::Kind::mount_failed,
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

Machine::TracefsProblem Machine::tracefs_problem(std::string_view sys, std::string_view name) const {
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
            : fmt::format("run as root, or let a group this user is in read tracefs: "
                          "'mount -o remount,mode=755,gid=GROUP {}'",
                          tracefs_mount_);
    return {TracefsProblem::Kind::denied, fmt::format("no permission to read '{}'", path), std::move(remedy)};
  }
  return {};
}

const std::vector<std::string>& Machine::tracefs_listing(const std::string& dir) const {
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
  std::vector<std::string> out;
  if (tracefs_events().empty()) return out;
  for (const auto& sys : tracefs_listing(tracefs_events())) {
    if (!safe_component(sys)) continue;
    // Files beside the tracepoint folders, which perf skips too; a file lists as an empty folder.
    for (const auto& ev : tracefs_listing(tracefs_events() + "/" + sys))
      if (safe_component(ev) && ev != "enable" && ev != "filter") out.push_back(sys + ":" + ev);
  }
  return out;
}

std::optional<std::uint64_t> Machine::tracepoint_id(std::string_view sys, std::string_view name) const {
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

std::optional<std::uint64_t> Machine::read_tracepoint_id(std::string_view sys, std::string_view name) const {
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
    throw Error(ErrorKind::machine, fmt::format("tracepoint id file '{}' holds '{}', not a number", path, t.substr(0, 40)));
  return id;
}

std::vector<std::pair<std::string, std::string>> Machine::tracepoints(std::string_view sys_glob,
                                                                      std::string_view name_glob) const {
  std::vector<std::pair<std::string, std::string>> out;
  if (tracefs_events().empty()) return out;
  std::string sg(sys_glob), ng(name_glob);
  for (const auto& sys : tracefs_listing(tracefs_events())) {
    if (!safe_component(sys) || ::fnmatch(sg.c_str(), sys.c_str(), 0) != 0) continue;
    std::string sdir = tracefs_events() + "/" + sys;
    for (const auto& ev : tracefs_listing(sdir)) {
      if (!safe_component(ev) || ::fnmatch(ng.c_str(), ev.c_str(), 0) != 0) continue;
      if (tracepoint_id(sys, ev)) out.emplace_back(sys, ev);
    }
  }
  return out;
}

}  // namespace perfspec::spec
