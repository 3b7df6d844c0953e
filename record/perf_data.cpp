// SPDX-License-Identifier: MIT
// perf.data files: the header (struct perf_file_header), the attrs with their ids, the feature
// sections after the data, and pipe mode, where the same facts arrive as records.
#include "perfspec/perf_data.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <deque>
#include <exception>

#include <fmt/format.h>
#include <zstd.h>

#include "perfspec/tracepoint.hpp"

namespace perfspec::record {

namespace {

constexpr std::uint64_t magic2 = 0x32454c4946524550ULL;  // "PERFILE2" read as a little-endian u64
constexpr std::size_t file_header_size = 104;            // struct perf_file_header
constexpr std::size_t pipe_header_size = 16;             // struct perf_pipe_file_header
constexpr unsigned feature_bits = 256;
constexpr std::size_t max_decompressed = std::size_t{256} << 20;  // of one COMPRESSED record

constexpr std::string_view feature_names[] = {"",
                                              "tracing_data",
                                              "build_id",
                                              "hostname",
                                              "osrelease",
                                              "version",
                                              "arch",
                                              "nrcpus",
                                              "cpudesc",
                                              "cpuid",
                                              "total_mem",
                                              "cmdline",
                                              "event_desc",
                                              "cpu_topology",
                                              "numa_topology",
                                              "branch_stack",
                                              "pmu_mappings",
                                              "group_desc",
                                              "auxtrace",
                                              "stat",
                                              "cache",
                                              "sample_time",
                                              "mem_topology",
                                              "clockid",
                                              "dir_format",
                                              "bpf_prog_info",
                                              "bpf_btf",
                                              "compressed",
                                              "cpu_pmu_caps",
                                              "clock_data",
                                              "hybrid_topology",
                                              "pmu_caps"};

std::uint64_t u64_at(std::span<const std::byte> b, std::size_t at) {
  std::uint64_t v;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}
std::uint32_t u32_at(std::span<const std::byte> b, std::size_t at) {
  std::uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}

[[noreturn]] void bad(std::uint64_t offset, const std::string& message) {
  throw DecodeError(offset, message);
}

// The same error, named after the file it is about.
[[noreturn]] void rethrow_in(const std::string& name, const DecodeError& e) {
  throw DecodeError(e.offset(), fmt::format("{}: {}", name, e.message()));
}

// A section [offset, offset + size) that must lie inside the file.
std::span<const std::byte> section(std::span<const std::byte> file, std::uint64_t offset, std::uint64_t size,
                                   std::string_view what, std::uint64_t where) {
  if (offset > file.size() || size > file.size() - offset)
    bad(where, fmt::format("the {} section [{:#x}, +{:#x}) runs past the end of the file ({} bytes)", what,
                           offset, size, file.size()));
  return file.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(size));
}

// A perf_header_string at the start of `b` (u32 len, then len bytes holding a NUL-terminated
// string); advances `b` past it.
std::string header_string(std::span<const std::byte>& b, std::uint64_t where, std::string_view what) {
  if (b.size() < 4) bad(where, fmt::format("{}: a string's length is cut off", what));
  std::uint32_t len = u32_at(b, 0);
  if (len > b.size() - 4)
    bad(where, fmt::format("{}: a string of {} bytes runs past its section", what, len));
  const auto* p = reinterpret_cast<const char*>(b.data() + 4);
  std::string s(p, strnlen(p, len));
  b = b.subspan(4 + len);
  return s;
}

}  // namespace

std::string_view feature_name(Feature feature) {
  auto i = static_cast<unsigned>(feature);
  return i < std::size(feature_names) ? feature_names[i] : std::string_view{};
}

struct PerfData::Impl {
  std::string name = "perf.data";  // for errors
  std::vector<std::byte> owned;
  void* map = nullptr;
  std::size_t map_size = 0;
  std::span<const std::byte> bytes;
  bool pipe = false;
  std::uint64_t data_offset = 0, data_size = 0;
  std::vector<FileEvent> events;
  Formats formats;
  std::array<std::span<const std::byte>, feature_bits> features{};
  std::array<bool, feature_bits> present{};
  std::span<const std::byte> tracing;
  std::uint64_t pos = 0;
  std::vector<bool> named;  // by the file: HEADER_EVENT_DESC, EVENT_UPDATE
  // The tracing data's tracepoints, parsed on first use (or the error that parsing them met).
  mutable std::unique_ptr<Tracepoints> tracepoints;
  mutable std::exception_ptr tracepoints_error;
  mutable bool tracepoints_read = false;

  // perf record -z: the records of COMPRESSED records, decompressed with one zstd stream for the whole
  // file (perf flushes, not ends, its frame per record). Each chunk is kept, at a stable address, for
  // the file's lifetime (records view it; decode_at finds it again); its records are numbered from
  // `base`, offsets past the end of the file. A record cut between two chunks is carried over.
  struct Chunk {
    std::uint64_t base;
    std::uint64_t from;  // the COMPRESSED record it came from
    std::vector<std::byte> bytes;
  };
  std::deque<Chunk> chunks;
  ZSTD_DStream* zstd = nullptr;
  bool in_chunk = false;
  std::size_t chunk_pos = 0;
  std::uint64_t next_base = 0;

  // A folder of perf record --threads: the records of its data.N files after the header file's data
  // section, each file's numbered from `base` (offsets past the end of the header file; decode_at finds
  // them again), its errors named by the file and its own offsets.
  struct Stream {
    std::string name;  // "data.1"
    std::uint64_t base = 0;
    void* map = nullptr;
    std::size_t map_size = 0;
    std::span<const std::byte> bytes;
  };
  std::vector<Stream> streams;
  std::size_t stream = 0;         // next() reads: 0 the header file's data section, i streams[i - 1]
  std::uint64_t virtual_end = 0;  // past the header file and every stream: where chunks are numbered

  ~Impl() {
    if (map) ::munmap(map, map_size);
    for (auto& s : streams)
      if (s.map) ::munmap(s.map, s.map_size);
    if (zstd) ZSTD_freeDStream(zstd);
  }
  void open_streams(const std::string& folder);
  void decompress(const Record& compressed);
  bool next_decompressed(Record& out);

  void parse();
  void parse_file_header();
  void parse_event_desc();
  void add_event(FileEvent e, std::uint64_t where);
  void apply_pipe_record(const Record& r);
  const Tracepoints* get_tracepoints() const;
  void name_tracepoints();
};

const Tracepoints* PerfData::Impl::get_tracepoints() const {
  if (tracing.empty()) return nullptr;
  if (!tracepoints_read) {
    tracepoints_read = true;
    try {
      try {
        tracepoints = std::make_unique<Tracepoints>(Tracepoints::from_tracing_data(
            tracing, static_cast<std::uint64_t>(tracing.data() - bytes.data())));
      } catch (const DecodeError& e) {
        rethrow_in(name, e);
      }
    } catch (...) {
      tracepoints_error = std::current_exception();
    }
  }
  if (tracepoints_error) std::rethrow_exception(tracepoints_error);
  return tracepoints.get();
}

// perf names a tracepoint event the file does not name after its format in the tracing data
// (evsel__prepare_tracepoint_event). Tracing data that cannot be read leaves the name as it was:
// the error is for whoever asks for the tracepoints.
void PerfData::Impl::name_tracepoints() {
  if (tracing.empty()) return;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (named[i] || events[i].attr.type != 2) continue;
    try {
      if (const Tracepoint* tp = get_tracepoints() ? get_tracepoints()->find(events[i].attr) : nullptr)
        events[i].name = tp->full_name();
    } catch (const Error&) {
      return;
    }
  }
}

void PerfData::Impl::parse() {
  if (bytes.size() < pipe_header_size)
    bad(0, fmt::format("{} bytes: too short for a perf.data header", bytes.size()));
  std::uint64_t magic = u64_at(bytes, 0);
  if (magic != magic2) {
    if (magic == __builtin_bswap64(magic2))
      bad(0, "written on a machine of the other byte order: perfspec reads native-endian files only");
    if (std::memcmp(bytes.data(), "PERFFILE", 8) == 0)
      bad(0, "a version 1 file (PERFFILE): only PERFILE2 files are read");
    bad(0, "not a perf.data file (no PERFILE2 magic)");
  }
  std::uint64_t size = u64_at(bytes, 8);
  if (size == pipe_header_size) {
    pipe = true;
    data_offset = pipe_header_size;
    data_size = bytes.size() - pipe_header_size;
    pos = data_offset;
    return;
  }
  parse_file_header();
  pos = data_offset;
}

void PerfData::Impl::parse_file_header() {
  std::uint64_t size = u64_at(bytes, 8);
  if (size < file_header_size || bytes.size() < file_header_size || size > bytes.size())
    bad(8, fmt::format("header size {} (a file header is {} bytes, the file {})", size, file_header_size,
                       bytes.size()));
  std::uint64_t attr_size = u64_at(bytes, 16);
  auto attrs = section(bytes, u64_at(bytes, 24), u64_at(bytes, 32), "attrs", 24);
  auto data = section(bytes, u64_at(bytes, 40), u64_at(bytes, 48), "data", 40);
  data_offset = u64_at(bytes, 40);
  data_size = data.size();
  // attrs: perf_event_attr (attr_size - 16 bytes) then a perf_file_section of its ids
  if (attr_size < 64 + 16 || attr_size % 8 != 0 || attr_size > 4096)
    bad(16, fmt::format("attr_size {} is not the size of an attr and its ids section", attr_size));
  if (attrs.size() % attr_size != 0)
    bad(24, fmt::format("the attrs section ({} bytes) is not a whole number of {}-byte attrs", attrs.size(),
                        attr_size));
  for (std::size_t at = 0; at < attrs.size(); at += attr_size) {
    std::uint64_t where = u64_at(bytes, 24) + at;
    auto entry = attrs.subspan(at, attr_size);
    auto attr_bytes = entry.first(attr_size - 16);
    std::uint32_t own = u32_at(attr_bytes, 4);
    if (own > attr_bytes.size())
      bad(where, fmt::format("an attr says it is {} bytes, the file gives it {}", own, attr_bytes.size()));
    FileEvent e;
    e.attr = attr_from_bytes(attr_bytes);
    auto ids = section(bytes, u64_at(entry, attr_size - 16), u64_at(entry, attr_size - 8), "ids", where);
    if (ids.size() % 8 != 0)
      bad(where, fmt::format("an ids section of {} bytes is not whole u64s", ids.size()));
    e.ids.resize(ids.size() / 8);
    if (!e.ids.empty()) std::memcpy(e.ids.data(), ids.data(), ids.size());
    add_event(std::move(e), where);
  }
  // features: one perf_file_section per set bit, in bit order, right after the data section
  std::uint64_t at = data_offset + data_size;
  // A data size of 0 is what perf record (and PerfDataWriter) leave in the header until the recording
  // ends, when the features are written after the data: a file that says so, and has no features or
  // more than them after the data offset, was never finished (perf killed, a full disk). Its records
  // cannot be told from its features: refused, saying so.
  auto unfinished = [&] {
    bad(48,
        "the header's data size is 0, as perf record leaves it until the recording ends: the recording was "
        "not finished (was 'perf record' properly terminated?)");
  };
  std::uint64_t features_end = at;
  bool any_feature = false;
  try {
    for (unsigned bit = 0; bit < feature_bits; ++bit) {
      if (!(u64_at(bytes, 72 + 8 * (bit / 64)) >> (bit % 64) & 1)) continue;
      auto s = section(bytes, at, 16, "feature index", 72);
      features[bit] =
          section(bytes, u64_at(s, 0), u64_at(s, 8),
                  feature_name(static_cast<Feature>(bit)).empty() ? std::string_view("feature")
                                                                  : feature_name(static_cast<Feature>(bit)),
                  at);
      present[bit] = true;
      any_feature = true;
      at += 16;
      features_end = std::max({features_end, at, u64_at(s, 0) + u64_at(s, 8)});
    }
  } catch (const DecodeError&) {
    if (data_size == 0) unfinished();
    throw;
  }
  if (data_size == 0 && (!any_feature || features_end != bytes.size())) unfinished();
  if (present[static_cast<unsigned>(Feature::tracing_data)])
    tracing = features[static_cast<unsigned>(Feature::tracing_data)];
  parse_event_desc();
  name_tracepoints();
}

void PerfData::Impl::add_event(FileEvent e, std::uint64_t where) {
  try {
    formats.add(e.attr, e.ids);
  } catch (const DecodeError&) {
    throw;
  } catch (const Error& err) {
    bad(where, err.message());
  }
  named.push_back(!e.name.empty());
  if (e.name.empty()) e.name = attr_name(e.attr);
  events.push_back(std::move(e));
  if (tracepoints_read) name_tracepoints();
}

// HEADER_EVENT_DESC: the events' names, matched to the attrs by their first id (else by order).
void PerfData::Impl::parse_event_desc() {
  constexpr auto bit = static_cast<unsigned>(Feature::event_desc);
  if (!present[bit]) return;
  auto b = features[bit];
  std::uint64_t where = static_cast<std::uint64_t>(b.data() - bytes.data());
  if (b.size() < 8) bad(where, "event_desc: too short");
  std::uint32_t nr = u32_at(b, 0), attr_size = u32_at(b, 4);
  b = b.subspan(8);
  for (std::uint32_t i = 0; i < nr; ++i) {
    if (b.size() < std::size_t{attr_size} + 4) bad(where, fmt::format("event_desc: event {} is cut off", i));
    b = b.subspan(attr_size);
    std::uint32_t nr_ids = u32_at(b, 0);
    b = b.subspan(4);
    std::string event = header_string(b, where, "event_desc");
    if (nr_ids > b.size() / 8)
      bad(where, fmt::format("event_desc: {} ids of event {} run past the section", nr_ids, i));
    std::uint64_t first = nr_ids ? u64_at(b, 0) : 0;
    b = b.subspan(std::size_t{nr_ids} * 8);
    std::size_t target = i < events.size() ? i : Record::npos;
    if (nr_ids) {
      std::size_t by_id = formats.attr_of_id(first);
      if (by_id != Record::npos) target = by_id;
    }
    if (target != Record::npos) {
      events[target].name = std::move(event);
      named[target] = true;
    }
  }
}

void PerfData::Impl::apply_pipe_record(const Record& r) {
  switch (r.kind()) {
    case Type::header_attr: {
      const auto& h = *r.get<HeaderAttr>();
      FileEvent e;
      e.attr = h.attr;
      for (std::uint64_t id : h.ids) e.ids.push_back(id);
      add_event(std::move(e), r.offset);
      break;
    }
    case Type::header_feature: {
      const auto& f = *r.get<HeaderFeature>();
      if (f.feature < feature_bits) {
        features[f.feature] = f.data;
        present[f.feature] = true;
        if (f.feature == static_cast<unsigned>(Feature::event_desc)) parse_event_desc();
      }
      break;
    }
    case Type::event_update: {
      // struct perf_record_event_update: u64 type, u64 id, then the payload; type 2 (NAME) is a
      // string (0 UNIT, 1 SCALE, 3 CPUS)
      auto body = r.bytes.subspan(8);
      if (body.size() >= 16 && u64_at(body, 0) == 2) {
        auto s = body.subspan(16);
        const auto* p = reinterpret_cast<const char*>(s.data());
        std::size_t at = formats.attr_of_id(u64_at(body, 8));
        if (at != Record::npos) {
          events[at].name.assign(p, strnlen(p, s.size()));
          named[at] = true;
        }
      }
      break;
    }
    default: break;
  }
}

PerfData::PerfData(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PerfData::PerfData(PerfData&&) noexcept = default;
PerfData& PerfData::operator=(PerfData&&) noexcept = default;
PerfData::~PerfData() = default;

PerfData PerfData::from_bytes(std::vector<std::byte> bytes) {
  auto impl = std::make_unique<Impl>();
  impl->owned = std::move(bytes);
  impl->bytes = impl->owned;
  try {
    impl->parse();
  } catch (const DecodeError& e) {
    rethrow_in(impl->name, e);
  }
  return PerfData(std::move(impl));
}

namespace {

// The bytes of a file: mapped (a regular file), else read whole (a pipe, standard input). Closes `fd`
// unless it is standard input.
struct Loaded {
  void* map = nullptr;
  std::size_t map_size = 0;
  std::vector<std::byte> owned;
};
Loaded load(int fd, const std::string& path) {
  Loaded l;
  struct stat st {};
  bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (regular && st.st_size > 0) {
    l.map_size = static_cast<std::size_t>(st.st_size);
    // MAP_POPULATE: the pages are mapped in one call, not by a page fault every few pages as a reader
    // walks them (on a 250 MB file: `perfspec script` system time about 0.14 -> 0.10 s).
    void* p = ::mmap(nullptr, l.map_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    int err = errno;
    if (fd != 0) ::close(fd);
    if (p == MAP_FAILED)
      throw Error(ErrorKind::io, fmt::format("cannot map '{}': {}", path, std::strerror(err)));
    l.map = p;
    return l;
  }
  std::byte buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      if (fd != 0) ::close(fd);
      throw Error(ErrorKind::io, fmt::format("cannot read '{}': {}", path, std::strerror(err)));
    }
    if (n == 0) break;
    l.owned.insert(l.owned.end(), buf, buf + n);
  }
  if (fd != 0) ::close(fd);
  return l;
}

// The data.N files of a folder, in the order of N (then by name).
std::vector<std::string> data_files(const std::string& folder) {
  std::vector<std::pair<std::uint64_t, std::string>> found;
  if (DIR* d = ::opendir(folder.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string_view n = e->d_name;
      if (!n.starts_with("data.")) continue;
      std::uint64_t number = ~std::uint64_t{0};
      auto rest = n.substr(5);
      auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), number);
      if (ec != std::errc{} || p != rest.data() + rest.size()) number = ~std::uint64_t{0};
      found.emplace_back(number, std::string(n));
    }
    ::closedir(d);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

}  // namespace

void PerfData::Impl::open_streams(const std::string& folder) {
  virtual_end = bytes.size();
  for (const auto& file : data_files(folder)) {
    std::string path = folder + "/" + file;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(ErrorKind::io, fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
    Loaded l = load(fd, path);
    if (!l.owned.empty())  // not a regular file: perf writes none such
      throw Error(ErrorKind::io, fmt::format("'{}' is not a regular file", path));
    Stream s;
    s.name = file;
    s.base = virtual_end;
    s.map = l.map;
    s.map_size = l.map_size;
    s.bytes = {static_cast<const std::byte*>(l.map), l.map_size};
    virtual_end += l.map_size;
    streams.push_back(std::move(s));
  }
}

PerfData PerfData::open(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  // A folder: perf record --threads, its header in `data`, its records in data.N beside it.
  struct stat st {};
  const bool folder = path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  const std::string header = folder ? path + "/data" : path;
  int fd = path == "-" ? 0 : ::open(header.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (folder && err == ENOENT)
      throw Error(ErrorKind::io, fmt::format("'{}' is a folder with no 'data' file: not a perf.data folder "
                                             "(perf record --threads writes its header there)",
                                             path));
    throw Error(ErrorKind::io, fmt::format("cannot open '{}': {}", header, std::strerror(err)));
  }
  Loaded l = load(fd, header);
  impl->map = l.map;
  impl->map_size = l.map_size;
  impl->owned = std::move(l.owned);
  impl->bytes = impl->map
                    ? std::span<const std::byte>(static_cast<const std::byte*>(impl->map), impl->map_size)
                    : std::span<const std::byte>(impl->owned);
  impl->name = path == "-" ? "stdin" : header;
  try {
    impl->parse();
    constexpr auto dir = static_cast<unsigned>(Feature::dir_format);
    if (!impl->pipe && impl->present[dir] != folder) {
      if (folder)
        bad(72, "no HEADER_DIR_FORMAT: not the header of a perf.data folder (perf record --threads)");
      auto slash = path.rfind('/');
      bad(72, fmt::format("the header of a perf.data folder written by perf record --threads "
                          "(HEADER_DIR_FORMAT): its records are in the data.N files beside it; read the "
                          "folder '{}'",
                          slash == std::string::npos ? std::string(".") : path.substr(0, slash)));
    }
    if (folder) {
      auto version = impl->features[dir];
      std::uint64_t where = static_cast<std::uint64_t>(version.data() - impl->bytes.data());
      if (version.size() < 8) bad(where, "dir_format: too short for its version");
      if (u64_at(version, 0) != 1)  // PERF_DIR_VERSION
        bad(where, fmt::format("dir_format: version {}, perf's is 1", u64_at(version, 0)));
    }
  } catch (const DecodeError& e) {
    rethrow_in(impl->name, e);
  }
  if (folder) impl->open_streams(path);
  return PerfData(std::move(impl));
}

bool PerfData::pipe() const { return impl_->pipe; }
const std::vector<FileEvent>& PerfData::events() const { return impl_->events; }
const Formats& PerfData::formats() const { return impl_->formats; }
std::uint64_t PerfData::data_offset() const { return impl_->data_offset; }
std::uint64_t PerfData::data_size() const { return impl_->data_size; }

const std::string& PerfData::event_name(std::size_t index) const {
  static const std::string unknown = "unknown";
  return index < impl_->events.size() ? impl_->events[index].name : unknown;
}

bool PerfData::next(Record& out) {
  Impl& m = *impl_;
  try {
    for (;;) {
      if (m.in_chunk && m.next_decompressed(out)) return true;
      if (m.stream > 0) {  // a data.N file of a folder
        const Impl::Stream& s = m.streams[m.stream - 1];
        std::uint64_t at = m.pos - s.base;
        if (at >= s.bytes.size()) {
          if (m.stream == m.streams.size()) return false;
          m.pos = m.streams[m.stream++].base;
          continue;
        }
        auto rest = s.bytes.subspan(static_cast<std::size_t>(at));
        try {
          if (rest.size() < 8)
            bad(at,
                fmt::format("the data ends {} bytes into a record header at offset {:#x}", rest.size(), at));
          m.formats.decode(rest, at, out);
        } catch (const DecodeError& e) {
          throw DecodeError(m.pos, fmt::format("{}: {}", s.name, e.message()));
        }
        out.offset = m.pos;
        m.pos += out.size;
        if (out.kind() == Type::compressed) {
          m.decompress(out);
          continue;
        }
        return true;
      }
      std::uint64_t end = m.data_offset + m.data_size;
      if (m.pos >= end) {
        if (!m.chunks.empty() && m.chunks.back().bytes.size() > m.chunk_pos && !m.in_chunk)
          bad(m.chunks.back().from, "the compressed data ends inside a record");
        if (!m.streams.empty()) {
          m.stream = 1;
          m.pos = m.streams[0].base;
          continue;
        }
        return false;
      }
      auto rest = m.bytes.subspan(static_cast<std::size_t>(m.pos), static_cast<std::size_t>(end - m.pos));
      if (rest.size() < 8)
        bad(m.pos,
            fmt::format("the data ends {} bytes into a record header at offset {:#x}", rest.size(), m.pos));
      // Records are read in file order: the bytes a few records on are asked for now, so that they are
      // in the cache when their turn comes (a large file is read at memory speed, not memory latency).
      if (rest.size() > 1024) __builtin_prefetch(rest.data() + 1024);
      m.formats.decode(rest, m.pos, out);
      m.pos += out.size;
      if (out.kind() == Type::compressed) {  // its records come next, from the decompressed bytes
        m.decompress(out);
        continue;
      }
      if (m.pipe) {
        if (auto* t = out.get<TracingData>()) {  // the tracing data follows the record in the stream
          if (t->size > end - m.pos)
            bad(out.offset, fmt::format("TRACING_DATA of {} bytes runs past the end of the stream", t->size));
          m.tracing = m.bytes.subspan(static_cast<std::size_t>(m.pos), t->size);
          m.pos += t->size;
          m.tracepoints.reset();
          m.tracepoints_error = nullptr;
          m.tracepoints_read = false;
          m.name_tracepoints();
        }
        m.apply_pipe_record(out);
      }
      return true;
    }
  } catch (const DecodeError& e) {
    rethrow_in(m.name, e);
  }
}

// A COMPRESSED record's data through the file's zstd stream, into a new chunk that starts with what
// the previous chunk left of a record cut in two.
void PerfData::Impl::decompress(const Record& compressed) {
  if (!zstd) {
    zstd = ZSTD_createDStream();
    if (!zstd || ZSTD_isError(ZSTD_initDStream(zstd)))
      throw Error(ErrorKind::io, "zstd: cannot make a stream");
  }
  Chunk c;
  c.from = compressed.offset;
  if (!chunks.empty() && chunk_pos < chunks.back().bytes.size()) {
    const auto& last = chunks.back().bytes;
    c.bytes.assign(last.begin() + static_cast<std::ptrdiff_t>(chunk_pos), last.end());
  }
  auto in_bytes = compressed.bytes.subspan(8);
  ZSTD_inBuffer in{in_bytes.data(), in_bytes.size(), 0};
  for (;;) {
    std::size_t at = c.bytes.size();
    std::size_t room = std::max<std::size_t>(ZSTD_DStreamOutSize(), 4 * (in.size - in.pos));
    c.bytes.resize(at + room);
    ZSTD_outBuffer out{c.bytes.data() + at, room, 0};
    std::size_t before = in.pos;
    std::size_t r = ZSTD_decompressStream(zstd, &out, &in);
    c.bytes.resize(at + out.pos);
    if (ZSTD_isError(r))
      bad(compressed.offset, fmt::format("COMPRESSED record at offset {:#x}: zstd: {}", compressed.offset,
                                         ZSTD_getErrorName(r)));
    if (in.pos == in.size && out.pos < room) break;  // all input taken, all output given
    // perf compresses one read of a ring buffer per record: more than this is a lie (a zstd bomb)
    if (c.bytes.size() > max_decompressed)
      bad(compressed.offset,
          fmt::format("COMPRESSED record at offset {:#x}: decompresses to more than {} MiB",
                      compressed.offset, max_decompressed >> 20));
    if (in.pos == before && out.pos == 0)
      bad(compressed.offset,
          fmt::format("COMPRESSED record at offset {:#x}: zstd makes no progress", compressed.offset));
  }
  if (next_base == 0) next_base = std::max<std::uint64_t>(virtual_end, bytes.size());
  c.base = next_base;
  next_base += c.bytes.size();
  chunks.push_back(std::move(c));
  chunk_pos = 0;
  in_chunk = true;
}

// The next whole record of the current chunk; false (and the rest carried over) when none is left.
bool PerfData::Impl::next_decompressed(Record& out) {
  const Chunk& c = chunks.back();
  std::size_t left = c.bytes.size() - chunk_pos;
  if (left >= 8) {
    std::uint16_t size;
    std::memcpy(&size, c.bytes.data() + chunk_pos + 6, 2);
    if (size < 8)
      bad(c.base + chunk_pos,
          fmt::format("a record decompressed from the COMPRESSED record at offset {:#x} has size {}", c.from,
                      size));
    if (size <= left) {
      formats.decode(std::span<const std::byte>(c.bytes).subspan(chunk_pos, size), c.base + chunk_pos, out);
      chunk_pos += size;
      if (pipe) apply_pipe_record(out);
      return true;
    }
  }
  in_chunk = false;  // chunk_pos stays: the start of what is carried into the next chunk
  return false;
}

void PerfData::rewind() {
  Impl& m = *impl_;
  m.pos = m.data_offset;
  m.stream = 0;
  m.chunks.clear();
  m.in_chunk = false;
  m.chunk_pos = 0;
  m.next_base = 0;
  if (m.zstd) ZSTD_initDStream(m.zstd);
}

void PerfData::decode_at(std::uint64_t offset, Record& out) const {
  const Impl& m = *impl_;
  std::uint64_t end = m.data_offset + m.data_size;
  try {
    for (const auto& s : m.streams) {  // a record of a folder's data.N
      if (offset < s.base || offset - s.base >= s.bytes.size()) continue;
      std::uint64_t at = offset - s.base;
      try {
        m.formats.decode(s.bytes.subspan(static_cast<std::size_t>(at)), at, out);
      } catch (const DecodeError& e) {
        throw DecodeError(offset, fmt::format("{}: {}", s.name, e.message()));
      }
      out.offset = offset;
      return;
    }
    if (offset >= m.bytes.size() && !m.chunks.empty()) {  // a record of a decompressed chunk
      auto it = std::upper_bound(m.chunks.begin(), m.chunks.end(), offset,
                                 [](std::uint64_t o, const Impl::Chunk& c) { return o < c.base; });
      if (it != m.chunks.begin()) {
        const auto& c = *std::prev(it);
        if (offset - c.base + 8 <= c.bytes.size()) {
          m.formats.decode(
              std::span<const std::byte>(c.bytes).subspan(static_cast<std::size_t>(offset - c.base)), offset,
              out);
          return;
        }
      }
    }
    // end - offset, not offset + 8: an offset near 2^64 would wrap past the check.
    if (m.pipe || offset < m.data_offset || offset > end || end - offset < 8)
      bad(offset, fmt::format("no record can start at offset {:#x}", offset));
    m.formats.decode(
        m.bytes.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(end - offset)), offset,
        out);
  } catch (const DecodeError& e) {
    rethrow_in(m.name, e);
  }
}

bool PerfData::has_feature(Feature f) const {
  auto i = static_cast<unsigned>(f);
  return i < feature_bits && impl_->present[i];
}

std::span<const std::byte> PerfData::feature(Feature f) const {
  return has_feature(f) ? impl_->features[static_cast<unsigned>(f)] : std::span<const std::byte>{};
}

std::optional<std::string> PerfData::feature_string(Feature f) const {
  if (!has_feature(f)) return std::nullopt;
  auto b = feature(f);
  return header_string(b, static_cast<std::uint64_t>(b.data() - impl_->bytes.data()), feature_name(f));
}

std::vector<std::string> PerfData::cmdline() const {
  std::vector<std::string> out;
  auto b = feature(Feature::cmdline);
  if (b.size() < 4) return out;
  std::uint64_t where = static_cast<std::uint64_t>(b.data() - impl_->bytes.data());
  std::uint32_t nr = u32_at(b, 0);
  b = b.subspan(4);
  for (std::uint32_t i = 0; i < nr; ++i) out.push_back(header_string(b, where, "cmdline"));
  return out;
}

std::optional<std::pair<std::uint32_t, std::uint32_t>> PerfData::nr_cpus() const {
  auto b = feature(Feature::nrcpus);
  if (b.size() < 8) return std::nullopt;
  return std::pair{u32_at(b, 0), u32_at(b, 4)};
}

std::optional<std::uint64_t> PerfData::total_mem() const {
  auto b = feature(Feature::total_mem);
  if (b.size() < 8) return std::nullopt;
  return u64_at(b, 0);
}

std::span<const std::byte> PerfData::tracing_data() const { return impl_->tracing; }

const Tracepoints* PerfData::tracepoints() const { return impl_->get_tracepoints(); }

}  // namespace perfspec::record
