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

void EventTables::write_index(const std::string& cache_path) const {
  detail::CacheFolder folder(cache_path);
  if (!folder.usable()) return;
  std::vector<std::string> lines;
  lines.reserve(events_.size());
  for (std::size_t i = 0; i < events_.size(); ++i) lines.push_back(index_line(keys_[i], events_[i]));
  // A cache that cannot be written is not an error: the next run parses again.
  detail::IndexFile::write(folder, index_name_, signature_, lines, diagnostics_);
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
  t->signature_ = signature(files);
  t->index_name_ = fmt::format("{:016x}.idx", fnv1a(t->signature_));
  const std::string cache = cache_dir(options);
  {
    detail::CacheFolder folder(cache);
    t->cache_problem_ = folder.problem();
    if (auto file = detail::IndexFile::open(folder, t->index_name_, t->signature_)) {
      t->index_ = std::make_unique<Index>();
      t->index_->file = std::move(file);
      t->index_->dir = dir;
      t->index_->model = model;
      t->index_->sys = sys;
      t->index_->cache = cache;
      t->diagnostics_ = t->index_->file->diagnostics();
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
