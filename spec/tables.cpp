// SPDX-License-Identifier: MIT
// perf-format JSON event tables: the compiled index that makes a lookup cheap, and EventTables.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/tables.hpp"
#include "spec/ascii.hpp"
#include "spec/sysfs_io.hpp"
#include "spec/table_index.hpp"
#include "spec/table_json.hpp"

namespace perfspec::spec {

namespace fs = std::filesystem;

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
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
  std::vector<TableEvent> sorted;
  sorted.reserve(events_.size());
  keys_.clear();
  for (std::size_t i : order) {
    sorted.push_back(std::move(events_[i]));
    keys_.push_back(std::move(keys[i]));
  }
  events_ = std::move(sorted);
}

// The compiled index (spec/table_index.hpp): a header, the diagnostics of the files it was built from,
// then one line per entry, sorted by its first field (the lower-case name):
//   key \t name \t pmu \t file \t terms \t scale \t unit \t flags(per_pkg deprecated sys) \t compat
// A block that fails its checksum when first read makes the table read its JSON instead (`rebuilt`),
// and writes the index again.
struct EventTables::Index {
  std::unique_ptr<detail::IndexFile> file;
  mutable std::mutex mutex;
  mutable std::deque<TableEvent> parsed;  // stable addresses for find()'s pointers
  mutable std::map<std::string, std::vector<const TableEvent*>, std::less<>> found;
  // Set when the file proved corrupt: the JSON's entries, sorted, with their keys.
  mutable std::unique_ptr<EventTables> rebuilt;
  std::string dir, model, cache;
  bool sys = false;
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

std::string index_line(const std::string& key, const TableEvent& e) {
  return fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}{}{}\t{}", key, e.alias.name, e.pmu, e.alias.origin,
                     e.alias.terms, e.alias.scale_text, e.alias.unit, e.alias.per_pkg ? '1' : '0',
                     e.deprecated ? '1' : '0', e.sys ? '1' : '0', e.compat);
}

}  // namespace

EventTables::EventTables() = default;
EventTables::~EventTables() = default;

const EventTables* EventTables::rebuilt() const {
  // Called with index_->mutex held, after a block failed its checksum.
  if (!index_->rebuilt) {
    auto t = std::make_unique<EventTables>();
    t->model_ = model_;
    t->signature_ = signature_;
    t->index_name_ = index_name_;
    detail::LoadedTables l =
        detail::parse_table_files(detail::table_files(index_->dir, index_->model, index_->sys), false);
    t->events_ = std::move(l.events);
    for (auto& e : t->events_) e.sys = index_->sys;
    t->diagnostics_ = std::move(l.diagnostics);
    t->sort_and_key();
    t->write_index(index_->cache);  // the next process finds a good one
    index_->rebuilt = std::move(t);
  }
  return index_->rebuilt.get();
}

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
  std::vector<const TableEvent*> out;
  if (ix.rebuilt) {
    out = ix.rebuilt->find(name);
  } else {
    try {
      const detail::IndexFile& f = *ix.file;
      std::size_t lo = 0, hi = f.size();
      while (lo < hi) {  // first line whose key is not less than `key`
        std::size_t mid = lo + (hi - lo) / 2;
        if (Index::key(f.line(mid)) < key)
          lo = mid + 1;
        else
          hi = mid;
      }
      for (std::size_t i = lo; i < f.size() && Index::key(f.line(i)) == key; ++i) {
        std::string_view fields[index_fields];
        if (!split_index_line(f.line(i), fields)) throw detail::CorruptIndex{};
        ix.parsed.push_back(from_index_line(fields));
        out.push_back(&ix.parsed.back());
      }
    } catch (const detail::CorruptIndex&) {
      out = rebuilt()->find(name);
    }
  }
  ix.found.emplace(key, out);
  return out;
}

const std::vector<TableEvent>& EventTables::events() const {
  std::call_once(all_once_, [this] {
    if (!index_ || !events_.empty()) return;
    std::lock_guard lock(index_->mutex);
    try {
      index_->file->check_all();
      for (std::size_t i = 0; i < index_->file->size(); ++i) {
        std::string_view f[index_fields];
        if (!split_index_line(index_->file->line(i), f)) throw detail::CorruptIndex{};
        keys_.emplace_back(f[0]);
        events_.push_back(from_index_line(f));
      }
    } catch (const detail::CorruptIndex&) {
      keys_ = rebuilt()->keys_;
      events_ = rebuilt()->events_;
    }
  });
  return events_;
}

std::vector<std::string_view> EventTables::names() const {
  // The names of events(): from the index, every line is read (and checked) once either way.
  std::vector<std::string_view> out;
  for (const auto& e : events()) out.push_back(e.alias.name);
  return out;
}

const std::vector<TableDiagnostic>& EventTables::diagnostics() const {
  if (index_) {
    std::lock_guard lock(index_->mutex);
    if (index_->rebuilt) return index_->rebuilt->diagnostics_;
  }
  return diagnostics_;
}

namespace {

std::string signature(const detail::TableFiles& files) {
  std::string sig = "v1";
  for (const auto* list : {&files.std_files, &files.files})
    for (const auto& f : *list) {
      struct stat st {};
      if (::stat(f.c_str(), &st) != 0) continue;
      sig += fmt::format("|{}:{}:{}.{}", fs::absolute(f).string(), st.st_size, st.st_mtim.tv_sec,
                         st.st_mtim.tv_nsec);
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

}  // namespace

// ------------------------------------------------------------------------- the bundled index

namespace {

// The bundled index of a tables folder: `perfspec-index/<model>.idx` (a model's `/` as `+`) and
// `perfspec-index/sys.idx`, written by the build and never at run time. Its signature records each file
// relative to the tables folder, with its size, modification time (seconds: an installation copies the
// time without its nanoseconds) and the XXH3 of its contents: it is current when every file is there
// with that size, and either that time or (after a copy that did not keep times) those contents.
constexpr std::string_view bundled_folder = "perfspec-index", bundled_magic = "bundled v1";

std::string bundled_name(const std::string& model, bool sys) {
  if (sys) return "sys.idx";
  std::string name = model;
  std::replace(name.begin(), name.end(), '/', '+');
  return name + ".idx";
}

fs::path tables_base(const std::string& dir) {
  fs::path base = fs::path(dir).lexically_normal();
  if (!base.has_filename() && base.has_parent_path()) base = base.parent_path();
  return base;
}

std::string relative_to(const fs::path& base, const std::string& file) {
  return fs::path(file).lexically_normal().lexically_relative(base).string();
}

std::vector<fs::path> all_files(const detail::TableFiles& files) {
  std::vector<fs::path> out = files.std_files;
  out.insert(out.end(), files.files.begin(), files.files.end());
  return out;
}

// The signature the build writes; nullopt when a file cannot be read.
std::optional<std::string> bundled_signature(const std::string& dir, const detail::TableFiles& files) {
  const fs::path base = tables_base(dir);
  std::string sig(bundled_magic);
  for (const auto& f : all_files(files)) {
    struct stat st {};
    auto sum = detail::file_hash(f.string());
    if (::stat(f.c_str(), &st) != 0 || !sum) return std::nullopt;
    sig +=
        fmt::format("|{}:{}:{}:{:016x}", relative_to(base, f.string()), st.st_size, st.st_mtim.tv_sec, *sum);
  }
  return sig;
}

// Whether `recorded` (a bundled index's signature) describes `files` as they are now.
bool bundled_signature_holds(std::string_view recorded, const std::string& dir,
                             const detail::TableFiles& files) {
  const fs::path base = tables_base(dir);
  const std::vector<fs::path> all = all_files(files);
  if (!recorded.starts_with(bundled_magic)) return false;
  recorded.remove_prefix(bundled_magic.size());
  for (const auto& f : all) {
    if (!recorded.starts_with('|')) return false;
    recorded.remove_prefix(1);
    std::string_view entry = recorded.substr(0, recorded.find('|'));
    recorded.remove_prefix(entry.size());
    // path:size:time:sum, the path being the rest
    std::string_view fields[3];
    for (int k = 2; k >= 0; --k) {
      auto colon = entry.rfind(':');
      if (colon == std::string_view::npos) return false;
      fields[k] = entry.substr(colon + 1);
      entry = entry.substr(0, colon);
    }
    struct stat st {};
    if (entry != relative_to(base, f.string()) || ::stat(f.c_str(), &st) != 0 ||
        fields[0] != std::to_string(st.st_size))
      return false;
    if (fields[1] == std::to_string(st.st_mtim.tv_sec)) continue;
    auto sum = detail::file_hash(f.string());
    if (!sum || fields[2] != fmt::format("{:016x}", *sum)) return false;
  }
  return recorded.empty();
}

// The bundled index of these files, when the tables folder has a current one.
std::unique_ptr<detail::IndexFile> open_bundled(const std::string& dir, const std::string& model, bool sys,
                                                const detail::TableFiles& files) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return nullptr;
  detail::CacheFolder folder(fmt::format("{}/{}", dir, bundled_folder),
                             detail::CacheFolder::Bundled{static_cast<unsigned>(st.st_uid)});
  return detail::IndexFile::open(folder, bundled_name(model, sys), [&](std::string_view recorded) {
    return bundled_signature_holds(recorded, dir, files);
  });
}

}  // namespace

bool EventTables::write_index(const std::string& cache_path) const {
  detail::CacheFolder folder(cache_path);
  if (!folder.usable()) return false;
  std::vector<std::string> lines;
  lines.reserve(events_.size());
  for (std::size_t i = 0; i < events_.size(); ++i) lines.push_back(index_line(keys_[i], events_[i]));
  // A cache that cannot be written is not an error: the next run parses again.
  return detail::IndexFile::write(folder, index_name_, signature_, lines, diagnostics_);
}

std::size_t EventTables::write_bundled_index(const std::string& dir) {
  const fs::path base = tables_base(dir);
  const std::string folder_path = fmt::format("{}/{}", dir, bundled_folder);
  std::size_t written = 0;
  auto write = [&](const std::string& model, bool sys) {
    detail::TableFiles files = detail::table_files(dir, model, sys);
    if (sys && files.files.empty()) return;
    auto sig = bundled_signature(dir, files);
    if (!sig)
      throw Error(ErrorKind::machine, fmt::format("the tables of '{}' in '{}' cannot be read", model, dir));
    EventTables t;
    t.model_ = model;
    detail::LoadedTables l = detail::parse_table_files(files, false);
    t.events_ = std::move(l.events);
    for (auto& e : t.events_) e.sys = sys;
    t.diagnostics_ = std::move(l.diagnostics);
    for (auto& d : t.diagnostics_) d.file = relative_to(base, d.file);  // named where the tables are
    t.sort_and_key();
    t.signature_ = std::move(*sig);
    t.index_name_ = bundled_name(model, sys);
    if (!t.write_index(folder_path))
      throw Error(ErrorKind::machine,
                  fmt::format("the index '{}/{}' cannot be written", folder_path, t.index_name_));
    ++written;
  };
  std::error_code ec;
  fs::remove_all(folder_path, ec);  // nothing of an earlier build stays behind; write_index makes it again
  for (const auto& model : detail::mapfile_models(dir)) write(model, false);
  write("", true);
  return written;
}

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
  auto use = [&](std::unique_ptr<detail::IndexFile> file, std::string cache, const std::string& files_in) {
    t->index_ = std::make_unique<Index>();
    t->index_->file = std::move(file);
    t->index_->dir = dir;
    t->index_->model = model;
    t->index_->sys = sys;
    t->index_->cache = std::move(cache);
    t->diagnostics_ = t->index_->file->diagnostics();
    for (auto& d : t->diagnostics_) d.file = files_in + d.file;
  };
  // The bundled index first: it is read-only, so a corrupt one is not rewritten ("none"), and no cache
  // folder is created or written when it is current.
  if (auto file = open_bundled(dir, model, sys, files)) {
    use(std::move(file), "none", tables_base(dir).string() + "/");
    return t;
  }
  t->signature_ = signature(files);
  t->index_name_ = fmt::format("{:016x}.idx", fnv1a(t->signature_));
  const std::string cache = cache_dir(options);
  {
    detail::CacheFolder folder(cache);
    t->cache_problem_ = folder.problem();
    if (auto file = detail::IndexFile::open(folder, t->index_name_, t->signature_)) {
      use(std::move(file), cache, "");
      return t;
    }
  }
  detail::LoadedTables l = detail::parse_table_files(files, false);
  t->events_ = std::move(l.events);
  for (auto& e : t->events_) e.sys = sys;
  t->diagnostics_ = std::move(l.diagnostics);
  t->sort_and_key();
  t->write_index(cache);
  return t;
}

}  // namespace perfspec::spec
