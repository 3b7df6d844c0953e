// perf-format JSON event tables: the compiled index that makes a lookup cheap, and EventTables.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <deque>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/tables.hpp"
#include "spec/ascii.hpp"
#include "spec/sysfs_io.hpp"
#include "spec/table_json.hpp"

namespace perfspec::spec {

namespace fs = std::filesystem;
using detail::jevents_number;

std::string_view source_name(Source source) {
  switch (source) {
    case Source::sysfs: return "sysfs";
    case Source::json: return "json";
    case Source::libpfm4: return "libpfm4";
    case Source::builtin: return "builtin";
  }
  return "?";
}

std::string TableDiagnostic::text() const {
  std::string out = file;
  if (entry) out += fmt::format(": entry {}", *entry);
  if (!name.empty()) out += fmt::format(" ({})", name);
  return out + ": " + message;
}

// --------------------------------------------------------------------------------- the index

void EventTables::sort_and_key() {
  std::vector<std::size_t> order(events_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::vector<std::string> keys;
  keys.reserve(events_.size());
  for (const auto& e : events_) keys.push_back(ascii_lowered(e.alias.name));
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
  std::vector<TableEvent> sorted;
  sorted.reserve(events_.size());
  keys_.clear();
  for (std::size_t i : order) {
    sorted.push_back(std::move(events_[i]));
    keys_.push_back(std::move(keys[i]));
  }
  events_ = std::move(sorted);
}

// The compiled index, mapped: a header, the diagnostics of the files it was built from, then one line
// per entry, sorted by its first field (the lower-case name):
//   key \t name \t pmu \t file \t terms \t scale \t unit \t flags(per_pkg deprecated sys) \t compat
struct EventTables::Index {
  void* map = MAP_FAILED;
  std::size_t size = 0;
  std::string_view body;                 // the entries
  std::vector<std::uint32_t> lines;      // offset of each line in body
  mutable std::mutex mutex;
  mutable std::deque<TableEvent> parsed; // stable addresses for find()'s pointers
  mutable std::map<std::string, std::vector<const TableEvent*>, std::less<>> found;
  ~Index() {
    if (map != MAP_FAILED) ::munmap(map, size);
  }
  std::string_view line(std::size_t i) const {
    std::size_t begin = lines[i], end = i + 1 < lines.size() ? lines[i + 1] - 1 : body.size();
    return body.substr(begin, end - begin);
  }
  static std::string_view key(std::string_view line) { return line.substr(0, line.find('\t')); }
};

namespace {

constexpr int index_fields = 9;

// Split an index line into its fields; false when it is not one.
bool split_index_line(std::string_view l, std::string_view (&f)[index_fields]) {
  for (int k = 0; k < index_fields; ++k) {
    auto tab = l.find('\t');
    if (k < index_fields - 1 && tab == std::string_view::npos) return false;
    f[k] = l.substr(0, tab);
    l = tab == std::string_view::npos ? std::string_view{} : l.substr(tab + 1);
  }
  return !f[1].empty() && !f[4].empty() && f[7].size() == 3;
}

TableEvent from_index_line(std::string_view (&f)[index_fields]) {
  TableEvent ev;
  ev.alias.name = std::string(f[1]);
  ev.pmu = std::string(f[2]);
  ev.alias.origin = std::string(f[3]);
  ev.topic = detail::table_topic(ev.alias.origin);
  ev.alias.terms = std::string(f[4]);
  ev.alias.source = Source::json;
  if (!f[5].empty()) {
    ev.alias.scale_text = std::string(f[5]);
    ev.alias.scale = std::strtod(ev.alias.scale_text.c_str(), nullptr);
  }
  ev.alias.unit = std::string(f[6]);
  ev.alias.per_pkg = f[7][0] == '1';
  ev.deprecated = f[7][1] == '1';
  ev.sys = f[7][2] == '1';
  ev.compat = std::string(f[8]);
  return ev;
}

// A diagnostic on one line of the index (its fields cannot hold tabs or newlines).
std::string one_line(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return out;
}

}  // namespace

EventTables::EventTables() = default;
EventTables::~EventTables() = default;

std::vector<const TableEvent*> EventTables::find(std::string_view name) const {
  std::string key = ascii_lowered(name);
  if (!index_) {
    events();
    auto [lo, hi] = std::equal_range(keys_.begin(), keys_.end(), key);
    std::vector<const TableEvent*> out;
    for (auto it = lo; it != hi; ++it) out.push_back(&events_[static_cast<std::size_t>(it - keys_.begin())]);
    return out;
  }
  const Index& ix = *index_;
  std::lock_guard lock(ix.mutex);
  if (auto it = ix.found.find(key); it != ix.found.end()) return it->second;
  std::size_t lo = 0, hi = ix.lines.size();
  while (lo < hi) {  // first line whose key is not less than `key`
    std::size_t mid = lo + (hi - lo) / 2;
    if (Index::key(ix.line(mid)) < key) lo = mid + 1;
    else hi = mid;
  }
  std::vector<const TableEvent*> out;
  for (std::size_t i = lo; i < ix.lines.size() && Index::key(ix.line(i)) == key; ++i) {
    std::string_view f[index_fields];
    if (!split_index_line(ix.line(i), f)) break;
    ix.parsed.push_back(from_index_line(f));
    out.push_back(&ix.parsed.back());
  }
  ix.found.emplace(key, out);
  return out;
}

const std::vector<TableEvent>& EventTables::events() const {
  std::call_once(all_once_, [this] {
    if (!index_ || !events_.empty()) return;
    for (std::size_t i = 0; i < index_->lines.size(); ++i) {
      std::string_view f[index_fields];
      if (!split_index_line(index_->line(i), f)) continue;
      keys_.emplace_back(f[0]);
      events_.push_back(from_index_line(f));
    }
  });
  return events_;
}

std::vector<std::string_view> EventTables::names() const {
  std::vector<std::string_view> out;
  if (index_) {
    for (std::size_t i = 0; i < index_->lines.size(); ++i) {
      std::string_view l = index_->line(i);
      auto a = l.find('\t'), b = l.find('\t', a + 1);
      if (a != std::string_view::npos && b != std::string_view::npos) out.push_back(l.substr(a + 1, b - a - 1));
    }
    return out;
  }
  for (const auto& e : events()) out.push_back(e.alias.name);
  return out;
}

namespace {

std::string signature(const detail::TableFiles& files) {
  std::string sig = "v1";
  for (const auto* list : {&files.std_files, &files.files})
    for (const auto& f : *list) {
      struct stat st {};
      if (::stat(f.c_str(), &st) != 0) continue;
      sig += fmt::format("|{}:{}:{}.{}", fs::absolute(f).string(), st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    }
  return sig;
}

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

std::string cache_dir(const EventTables::Options& o) {
  if (!o.cache_dir.empty()) return o.cache_dir;
  if (const char* d = std::getenv("PERFSPEC_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/perfspec";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/perfspec";
  return "none";
}

constexpr std::string_view index_magic = "perfspec-event-index 3";

// The diagnostics section of a mapped index, after its header: `diagnostics N` then N lines of
// `file \t entry \t name \t message`. Returns where the entries begin, or npos when it is malformed.
std::size_t read_diagnostics(std::string_view all, std::size_t at, std::vector<TableDiagnostic>& out) {
  auto next_line = [&](std::string_view& line) {
    auto nl = all.find('\n', at);
    if (nl == std::string_view::npos) return false;
    line = all.substr(at, nl - at);
    at = nl + 1;
    return true;
  };
  std::string_view line;
  if (!next_line(line) || !line.starts_with("diagnostics ")) return std::string_view::npos;
  auto count = jevents_number(line.substr(12));
  if (!count || *count > all.size()) return std::string_view::npos;
  for (std::uint64_t i = 0; i < *count; ++i) {
    if (!next_line(line)) return std::string_view::npos;
    std::string_view f[4];
    for (int k = 0; k < 4; ++k) {
      auto tab = line.find('\t');
      if (k < 3 && tab == std::string_view::npos) return std::string_view::npos;
      f[k] = line.substr(0, tab);
      line = tab == std::string_view::npos ? std::string_view{} : line.substr(tab + 1);
    }
    TableDiagnostic d{std::string(f[0]), std::nullopt, std::string(f[2]), std::string(f[3])};
    if (f[1] != "-") {
      auto entry = jevents_number(f[1]);
      if (!entry) return std::string_view::npos;
      d.entry = static_cast<std::size_t>(*entry);
    }
    out.push_back(std::move(d));
  }
  return at;
}

}  // namespace

std::shared_ptr<const EventTables> EventTables::load_full(const std::string& dir, const std::string& model) {
  auto t = std::make_shared<EventTables>();
  t->model_ = model;
  detail::LoadedTables l = detail::parse_table_files(detail::table_files(dir, model, model.empty()), true);
  t->events_ = std::move(l.events);
  for (auto& e : t->events_) e.sys = model.empty();
  t->metrics_ = std::move(l.metrics);
  t->counters_ = std::move(l.counters);
  t->metric_groups_ = std::move(l.groups);
  t->diagnostics_ = std::move(l.diagnostics);
  t->sort_and_key();
  return t;
}

std::shared_ptr<const EventTables> EventTables::load(const std::string& dir, const std::string& model,
                                                     const Options& options) {
  return load_files(dir, model, options, false);
}

std::shared_ptr<const EventTables> EventTables::load_sys(const std::string& dir, const Options& options) {
  return load_files(dir, "", options, true);
}

std::shared_ptr<const EventTables> EventTables::load_files(const std::string& dir, const std::string& model,
                                                           const Options& options, bool sys) {
  detail::TableFiles files = detail::table_files(dir, model, sys);
  auto t = std::make_shared<EventTables>();
  t->model_ = model;
  if (sys && files.files.empty()) return t;  // no sys folders: nothing to parse or keep
  std::string sig = signature(files);
  std::string cdir = cache_dir(options);
  std::string cache = cdir == "none" ? std::string{} : fmt::format("{}/{:016x}.idx", cdir, fnv1a(sig));
  if (!cache.empty()) {
    int fd = ::open(cache.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd >= 0 && ::fstat(fd, &st) == 0 && st.st_size > 0) {
      auto ix = std::make_unique<Index>();
      ix->size = static_cast<std::size_t>(st.st_size);
      ix->map = ::mmap(nullptr, ix->size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (ix->map != MAP_FAILED) {
        std::string_view all(static_cast<const char*>(ix->map), ix->size);
        std::string header = fmt::format("{}\n{}\n", index_magic, sig);
        std::vector<TableDiagnostic> diagnostics;
        std::size_t begin = all.starts_with(header) ? read_diagnostics(all, header.size(), diagnostics)
                                                    : std::string_view::npos;
        if (begin != std::string_view::npos && (all.size() == begin || all.ends_with('\n'))) {
          ix->body = all.substr(begin);
          if (!ix->body.empty()) ix->body.remove_suffix(1);  // the last newline (an empty table has none)
          if (!ix->body.empty()) {
            ix->lines.push_back(0);
            for (const char* p = ix->body.data(); (p = static_cast<const char*>(
                                                       std::memchr(p, '\n', ix->body.data() + ix->body.size() - p)));
                 ++p)
              ix->lines.push_back(static_cast<std::uint32_t>(p + 1 - ix->body.data()));
          }
          bool sorted = true;
          for (std::size_t i = 1; i < ix->lines.size() && sorted; ++i)
            sorted = Index::key(ix->line(i - 1)) <= Index::key(ix->line(i));
          if (sorted) {
            ::close(fd);
            t->index_ = std::move(ix);
            t->diagnostics_ = std::move(diagnostics);
            return t;
          }
        }
      }
    }
    if (fd >= 0) ::close(fd);
  }
  detail::LoadedTables l = detail::parse_table_files(files, false);
  t->events_ = std::move(l.events);
  for (auto& e : t->events_) e.sys = sys;
  t->diagnostics_ = std::move(l.diagnostics);
  t->sort_and_key();
  if (!cache.empty()) {
    std::error_code ec;
    fs::create_directories(cdir, ec);
    std::string tmp = fmt::format("{}.{}.tmp", cache, ::getpid());
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << index_magic << '\n' << sig << '\n' << "diagnostics " << t->diagnostics_.size() << '\n';
      for (const auto& d : t->diagnostics_)
        out << one_line(d.file) << '\t' << (d.entry ? std::to_string(*d.entry) : "-") << '\t' << one_line(d.name)
            << '\t' << one_line(d.message) << '\n';
      for (std::size_t i = 0; i < t->events_.size(); ++i) {
        const auto& e = t->events_[i];
        out << t->keys_[i] << '\t' << e.alias.name << '\t' << e.pmu << '\t' << e.alias.origin << '\t' << e.alias.terms << '\t'
            << e.alias.scale_text << '\t' << e.alias.unit << '\t' << (e.alias.per_pkg ? '1' : '0')
            << (e.deprecated ? '1' : '0') << (e.sys ? '1' : '0') << '\t' << e.compat << '\n';
      }
      if (!out) ec = std::make_error_code(std::errc::io_error);
    }
    // A cache that cannot be written is not an error: the next run parses again.
    if (ec || ::rename(tmp.c_str(), cache.c_str()) != 0) ::unlink(tmp.c_str());
  }
  return t;
}

}  // namespace perfspec::spec
