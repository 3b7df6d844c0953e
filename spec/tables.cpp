#include <fcntl.h>
#include <regex.h>
#include <sys/mman.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "perfspec/error.hpp"
#include "perfspec/tables.hpp"
#include "spec/ascii.hpp"
#include "spec/sysfs_io.hpp"

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

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool is_full_cpuid(std::string_view id) { return std::count(id.begin(), id.end(), '-') == 3; }

std::optional<std::uint64_t> number(std::string_view text) {
  std::string t(io::trim(text));
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(t.c_str(), &end, 0);
  if (errno == ERANGE || end != t.c_str() + t.size() || t.front() == '-') return std::nullopt;
  return v;
}

}  // namespace

std::string detect_cpuid(const std::string& cpuinfo, const std::string& midr) {
  std::ifstream in(cpuinfo);
  std::string line, vendor;
  long family = -1, model = -1, stepping = -1;
  while (std::getline(in, line)) {
    if (line.empty()) break;  // the first processor is enough
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key(io::trim(std::string_view(line).substr(0, colon)));
    std::string value(io::trim(std::string_view(line).substr(colon + 1)));
    if (key == "vendor_id") vendor = value;
    else if (key == "cpu family") family = std::strtol(value.c_str(), nullptr, 10);
    else if (key == "model") model = std::strtol(value.c_str(), nullptr, 10);
    else if (key == "stepping") stepping = std::strtol(value.c_str(), nullptr, 10);
  }
  if (!vendor.empty() && family >= 0 && model >= 0 && stepping >= 0)
    return fmt::format("{}-{}-{:X}-{:X}", vendor, family, model, stepping);
  // arm64: perf uses the MIDR of the first CPU.
  std::ifstream m(midr);
  std::string id;
  if (m >> id) return id;
  return {};
}

bool cpuid_matches(std::string_view pattern, std::string_view cpuid) {
  bool full_pattern = is_full_cpuid(pattern), full_id = is_full_cpuid(cpuid);
  if (full_pattern && !full_id) return false;
  std::string p(pattern), id(cpuid);
  regex_t re;
  if (::regcomp(&re, p.c_str(), REG_EXTENDED) != 0) return false;
  regmatch_t m[1];
  bool found = ::regexec(&re, id.c_str(), 1, m, 0) == 0;
  ::regfree(&re);
  if (!found || m[0].rm_so != 0) return false;
  // A pattern without a stepping matches the id up to its last '-'.
  std::size_t want = !full_pattern && full_id ? id.rfind('-') : id.size();
  return static_cast<std::size_t>(m[0].rm_eo) == want;
}

std::optional<std::string> find_model(const std::string& dir, const std::string& cpuid) {
  std::string path = dir + "/mapfile.csv";
  auto text = io::read_small_file(path);
  if (!text) throw Error(fmt::format("events directory '{}' has no mapfile.csv", dir));
  std::istringstream in(*text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    std::string_view l = io::trim(line);
    if (l.empty() || l.front() == '#' || l.starts_with("Family-model")) continue;
    std::vector<std::string> fields;
    std::string field;
    std::istringstream ls{std::string(l)};
    while (std::getline(ls, field, ',')) fields.push_back(std::string(io::trim(field)));
    if (fields.size() < 3 || fields[0].empty() || fields[2].empty())
      throw Error(fmt::format("'{}' line {}: expected 'cpuid,version,folder,type', got '{}'", path, lineno, l));
    if (fields.size() >= 4 && !fields[3].empty() && fields[3] != "core") continue;
    if (cpuid_matches(fields[0], cpuid)) {
      if (!safe_component(fields[2]) && fields[2].find("..") != std::string::npos)
        throw Error(fmt::format("'{}' line {}: folder '{}' leaves the events directory", path, lineno, fields[2]));
      return fields[2];
    }
  }
  return std::nullopt;
}

std::string table_unit_pmu(std::string_view unit) {
  // perf's jevents names these PMUs explicitly; every other unit is `uncore_<unit>` in lower case.
  static constexpr std::pair<std::string_view, std::string_view> named[] = {
      {"CBO", "uncore_cbox"},   {"QPI LL", "uncore_qpi"}, {"SBO", "uncore_sbox"}, {"iMPH-U", "uncore_arb"},
      {"UPI LL", "uncore_upi"}, {"L3PMC", "amd_l3"},      {"DFPMC", "amd_df"},    {"UMCPMC", "amd_umc"},
      {"cpu_core", "cpu_core"}, {"cpu_atom", "cpu_atom"}, {"CPU-M-CF", "cpum_cf"}, {"CPU-M-SF", "cpum_sf"},
  };
  if (unit.empty()) return {};
  for (const auto& [u, pmu] : named)
    if (u == unit) return std::string(pmu);
  std::string out = "uncore_" + ascii_lowered(unit);
  std::replace(out.begin(), out.end(), ' ', '_');
  return out;
}

std::string table_terms(const TableFields& f) {
  auto need = [](std::string_view what, std::string_view text) {
    auto v = number(text);
    if (!v) throw Error(fmt::format("{} '{}' is not a number", what, text));
    return *v;
  };
  std::string terms;
  if (!f.config_code.empty()) {
    terms = fmt::format("config={:#x}", need("ConfigCode", f.config_code));
  } else {
    // "0xB7, 0xBB": events that need either of two codes take the first, as perf does.
    std::string_view code = f.event_code;
    code = code.substr(0, code.find(','));
    std::uint64_t event = code.empty() ? 0 : need("EventCode", code);
    if (!f.ext_sel.empty()) event |= need("ExtSel", f.ext_sel) << 8;
    terms = fmt::format("event={:#x}", event);
  }
  auto add = [&](std::string_view key, std::string_view term, std::string_view value) {
    if (value.empty()) return;
    if (need(key, value) == 0) return;  // zero fields are left out
    terms += fmt::format(",{}={}", term, io::trim(value));
  };
  add("AnyThread", "any", f.any_thread);
  add("PortMask", "ch_mask", f.port_mask);
  add("CounterMask", "cmask", f.counter_mask);
  add("EdgeDetect", "edge", f.edge_detect);
  add("FCMask", "fc_mask", f.fc_mask);
  add("Invert", "inv", f.invert);
  add("SampleAfterValue", "period", f.sample_after_value);
  add("UMask", "umask", f.umask);
  if (!f.filter.empty()) terms += "," + std::string(io::trim(f.filter));
  if (!f.msr_index.empty()) {
    std::string_view first = f.msr_index;
    first = io::trim(first.substr(0, first.find(',')));
    std::uint64_t index = need("MSRIndex", first);
    const char* term = index == 0x3F6 ? "ldlat" : index == 0x1A6 || index == 0x1A7 ? "offcore_rsp" : index == 0x3F7 ? "frontend" : nullptr;
    if (term && !f.msr_value.empty()) terms += fmt::format(",{}={:#x}", term, need("MSRValue", f.msr_value));
  }
  return terms;
}

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

// The compiled index, mapped: one line per entry, sorted by its first field (the lower-case name):
//   key \t name \t pmu \t topic \t terms \t scale \t unit \t flags(per_pkg deprecated)
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

// Split an index line into its 8 fields; false when it is not one.
bool split_index_line(std::string_view l, std::string_view (&f)[8]) {
  for (int k = 0; k < 8; ++k) {
    auto tab = l.find('\t');
    if (k < 7 && tab == std::string_view::npos) return false;
    f[k] = l.substr(0, tab);
    l = tab == std::string_view::npos ? std::string_view{} : l.substr(tab + 1);
  }
  return !f[1].empty() && !f[4].empty() && f[7].size() == 2;
}

TableEvent from_index_line(std::string_view (&f)[8]) {
  TableEvent ev;
  ev.alias.name = std::string(f[1]);
  ev.pmu = std::string(f[2]);
  ev.topic = std::string(f[3]);
  ev.alias.terms = std::string(f[4]);
  ev.alias.source = Source::json;
  ev.alias.origin = ev.topic + ".json";
  if (!f[5].empty()) {
    ev.alias.scale_text = std::string(f[5]);
    ev.alias.scale = std::strtod(ev.alias.scale_text.c_str(), nullptr);
  }
  ev.alias.unit = std::string(f[6]);
  ev.alias.per_pkg = f[7][0] == '1';
  ev.deprecated = f[7][1] == '1';
  return ev;
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
    std::string_view f[8];
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
      std::string_view f[8];
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

// The JSON files of a model, sorted, with what identifies their content for the index.
std::vector<fs::path> model_files(const std::string& dir, const std::string& model) {
  fs::path folder = fs::path(dir) / model;
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) throw Error(fmt::format("events directory has no folder '{}'", folder.string()));
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(folder, ec))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string signature(const std::vector<fs::path>& files) {
  std::string sig = "v1";
  for (const auto& f : files) {
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

std::string field(const nlohmann::json& entry, const char* key, const std::string& where) {
  auto it = entry.find(key);
  if (it == entry.end() || it->is_null()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_unsigned() || it->is_number_integer()) return std::to_string(it->get<std::int64_t>());
  throw Error(fmt::format("{}: '{}' must be a string, not {}", where, key, it->type_name()));
}

void parse_scale_unit(const std::string& text, Alias& a) {
  // "6.103515625E-5MiB", "1Joules", "64Bytes"
  const char* begin = text.c_str();
  char* end = nullptr;
  double v = std::strtod(begin, &end);
  if (end == begin) return;
  a.scale = v;
  a.scale_text = std::string(begin, static_cast<std::size_t>(end - begin));
  a.unit = std::string(io::trim(std::string_view(end)));
}

// Control characters have no place in names, terms or units, and would break the index's lines.
bool has_control(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

std::vector<TableEvent> parse_model(const std::vector<fs::path>& files, bool descriptions) {
  std::vector<TableEvent> out;
  for (const auto& path : files) {
    std::string text = read_file(path.string());
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      throw Error(fmt::format("events table '{}': invalid JSON at byte {}", path.string(), e.byte));
    } catch (const nlohmann::json::exception& e) {  // e.g. a number out of range (1e400)
      throw Error(fmt::format("events table '{}': invalid JSON: {}", path.string(), e.what()));
    }
    if (!doc.is_array()) throw Error(fmt::format("events table '{}': expected a JSON array of events", path.string()));
    std::string topic = path.stem().string();
    if (has_control(topic)) throw Error(fmt::format("events table '{}': the file name has control characters", path.string()));
    for (std::size_t i = 0; i < doc.size(); ++i) {
      const auto& entry = doc[i];
      std::string where = fmt::format("events table '{}': entry {}", path.string(), i);
      if (!entry.is_object()) throw Error(fmt::format("{}: expected an object", where));
      std::string name = field(entry, "EventName", where);
      if (name.empty()) {
        if (entry.contains("MetricName") || entry.contains("MetricExpr") || entry.contains("ArchStdEvent")) continue;
        throw Error(fmt::format("{}: no EventName", where));
      }
      where += fmt::format(" ({})", name);
      TableFields f;
      f.event_code = field(entry, "EventCode", where);
      f.umask = field(entry, "UMask", where);
      f.counter_mask = field(entry, "CounterMask", where);
      f.invert = field(entry, "Invert", where);
      f.edge_detect = field(entry, "EdgeDetect", where);
      f.any_thread = field(entry, "AnyThread", where);
      f.sample_after_value = field(entry, "SampleAfterValue", where);
      f.msr_index = field(entry, "MSRIndex", where);
      f.msr_value = field(entry, "MSRValue", where);
      f.filter = field(entry, "Filter", where);
      f.config_code = field(entry, "ConfigCode", where);
      f.ext_sel = field(entry, "ExtSel", where);
      f.port_mask = field(entry, "PortMask", where);
      f.fc_mask = field(entry, "FCMask", where);
      if (f.event_code.empty() && f.config_code.empty()) throw Error(fmt::format("{}: no EventCode or ConfigCode", where));
      if (has_control(f.filter)) throw Error(fmt::format("{}: Filter has control characters", where));
      TableEvent ev;
      try {
        ev.alias.terms = table_terms(f);
      } catch (const Error& e) {
        throw Error(fmt::format("{}: {}", where, e.message()));
      }
      if (name.find_first_of(",/{}:= \t") != std::string::npos || has_control(name))
        throw Error(fmt::format("{}: the name cannot be written in an event string", where));
      ev.alias.name = name;
      ev.alias.source = Source::json;
      ev.alias.origin = path.filename().string();
      std::string unit = field(entry, "Unit", where);
      if (has_control(unit)) throw Error(fmt::format("{}: Unit has control characters", where));
      ev.pmu = table_unit_pmu(unit);
      ev.topic = topic;
      if (auto su = field(entry, "ScaleUnit", where); !su.empty()) {
        if (has_control(su)) throw Error(fmt::format("{}: ScaleUnit has control characters", where));
        parse_scale_unit(su, ev.alias);
      }
      ev.alias.per_pkg = field(entry, "PerPkg", where) == "1";
      ev.deprecated = field(entry, "Deprecated", where) == "1";
      if (descriptions) ev.description = field(entry, "BriefDescription", where);
      out.push_back(std::move(ev));
    }
  }
  return out;
}

constexpr std::string_view index_magic = "perfspec-event-index 2";

}  // namespace

std::shared_ptr<const EventTables> EventTables::load_full(const std::string& dir, const std::string& model) {
  auto t = std::make_shared<EventTables>();
  t->model_ = model;
  t->events_ = parse_model(model_files(dir, model), true);
  t->sort_and_key();
  return t;
}

std::shared_ptr<const EventTables> EventTables::load(const std::string& dir, const std::string& model,
                                                     const Options& options) {
  auto files = model_files(dir, model);
  std::string sig = signature(files);
  std::string cdir = cache_dir(options);
  std::string cache = cdir == "none" ? std::string{} : fmt::format("{}/{:016x}.idx", cdir, fnv1a(sig));
  auto t = std::make_shared<EventTables>();
  t->model_ = model;
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
        if (all.starts_with(header) && (all.size() == header.size() || all.ends_with('\n'))) {
          ix->body = all.substr(header.size());
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
            return t;
          }
        }
      }
    }
    if (fd >= 0) ::close(fd);
  }
  t->events_ = parse_model(files, false);
  t->sort_and_key();
  if (!cache.empty()) {
    std::error_code ec;
    fs::create_directories(cdir, ec);
    std::string tmp = fmt::format("{}.{}.tmp", cache, ::getpid());
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << index_magic << '\n' << sig << '\n';
      for (std::size_t i = 0; i < t->events_.size(); ++i) {
        const auto& e = t->events_[i];
        out << t->keys_[i] << '\t' << e.alias.name << '\t' << e.pmu << '\t' << e.topic << '\t' << e.alias.terms << '\t' << e.alias.scale_text
            << '\t' << e.alias.unit << '\t' << (e.alias.per_pkg ? '1' : '0') << (e.deprecated ? '1' : '0') << '\n';
      }
      if (!out) ec = std::make_error_code(std::errc::io_error);
    }
    // A cache that cannot be written is not an error: the next run parses again.
    if (ec || ::rename(tmp.c_str(), cache.c_str()) != 0) ::unlink(tmp.c_str());
  }
  return t;
}

}  // namespace perfspec::spec
