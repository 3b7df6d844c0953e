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
#include "record/perf_data_impl.hpp"

namespace perfspec::record {

using namespace detail;

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
  int fd = -1;  // of the mapped file, kept open to see its size again
  std::vector<std::byte> owned;
};
Loaded load(int fd, const std::string& path) {
  Loaded l;
  struct stat st {};
  bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  auto fail = [&](std::string_view what) {
    int err = errno;
    if (fd != 0) ::close(fd);
    throw Error(ErrorKind::io, fmt::format("cannot {} '{}': {}", what, path, std::strerror(err)));
  };
  // The header's magic first: what is not perf.data (/dev/zero, an endless pipe, a 10 GB file of
  // anything) is refused before more of it is read or mapped.
  std::array<std::byte, 16> head{};
  std::size_t got = 0;
  while (got < head.size()) {
    ssize_t n = regular ? ::pread(fd, head.data() + got, head.size() - got, static_cast<off_t>(got))
                        : ::read(fd, head.data() + got, head.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("read");
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  try {
    check_magic(std::span<const std::byte>(head.data(), got));
  } catch (const DecodeError&) {
    if (fd != 0) ::close(fd);
    throw;
  }
  if (regular) {
    l.map_size = static_cast<std::size_t>(st.st_size);
    // Not populated: the header says which pages are read (PerfData::open populates the data section).
    void* p = ::mmap(nullptr, l.map_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) fail("map");
    l.map = p;
    l.fd = fd;
    return l;
  }
  l.owned.assign(head.begin(), head.begin() + static_cast<std::ptrdiff_t>(got));
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
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {  // perf writes none such
      ::close(fd);
      throw Error(ErrorKind::io, fmt::format("'{}' is not a regular file", path));
    }
    Stream s;
    s.name = file;
    s.path = path;
    s.base = virtual_end;
    if (st.st_size > 0) {
      s.map = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (s.map == MAP_FAILED) {
        int err = errno;
        ::close(fd);
        throw Error(ErrorKind::io, fmt::format("cannot map '{}': {}", path, std::strerror(err)));
      }
      s.map_size = static_cast<std::size_t>(st.st_size);
      s.guard = MappingGuard(s.map, s.map_size);
      s.fd = fd;
    } else {
      s.map = nullptr;
      ::close(fd);
    }
    s.bytes = {static_cast<const std::byte*>(s.map), s.map_size};
    virtual_end += s.map_size;
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
  impl->name = path == "-" ? "stdin" : header;
  try {
    Loaded l = load(fd, header);
    impl->map = l.map;
    impl->map_size = l.map_size;
    impl->map_fd = l.fd;
    impl->guard = MappingGuard(l.map, l.map_size);
    impl->owned = std::move(l.owned);
    impl->bytes = impl->map
                      ? std::span<const std::byte>(static_cast<const std::byte*>(impl->map), impl->map_size)
                      : std::span<const std::byte>(impl->owned);
    impl->parse();
    // The data section's pages mapped in one call, not by a page fault every few pages as a reader
    // walks them (on a 250 MB file: `perfspec script` system time about 0.14 -> 0.10 s). Linux 5.14's
    // MADV_POPULATE_READ; an older kernel's EINVAL only loses that.
    if (impl->map && impl->data_size > 0) {
#ifdef MADV_POPULATE_READ
      constexpr int populate_read = MADV_POPULATE_READ;
#else
      constexpr int populate_read = 22;  // glibc before 2.35 does not name it
#endif
      // the start rounded down to this machine's page (64 KiB on some arm64 kernels)
      const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
      auto from = reinterpret_cast<std::uintptr_t>(impl->bytes.data() + impl->data_offset) & ~(page - 1);
      auto to = reinterpret_cast<std::uintptr_t>(impl->bytes.data() + impl->data_offset + impl->data_size);
      ::madvise(reinterpret_cast<void*>(from), to - from, populate_read);
    }
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
      } else if (out.kind() == Type::event_update) {  // perf renames the event in file mode too
        m.apply_pipe_record(out);
      }
      return true;
    }
  } catch (const DecodeError& e) {
    if (m.truncated())  // the zeros where the file's pages were: not the file's fault
      throw Error(ErrorKind::io, fmt::format("'{}' was truncated while it was read", m.name));
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
  ++compressed_records;
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
    if (zstd_out + c.bytes.size() > decompressed_free + max_compression_ratio * (zstd_in + in.pos))
      bad(compressed.offset,
          fmt::format("COMPRESSED record at offset {:#x}: the compressed records decompress to more than "
                      "{} MiB and {} times their size (a zstd bomb?)",
                      compressed.offset, decompressed_free >> 20, max_compression_ratio));
    if (in.pos == before && out.pos == 0)
      bad(compressed.offset,
          fmt::format("COMPRESSED record at offset {:#x}: zstd makes no progress", compressed.offset));
  }
  zstd_in += in.size;
  zstd_out += c.bytes.size();
  held += c.bytes.size();
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
      if (pipe || out.kind() == Type::event_update) apply_pipe_record(out);
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
  m.zstd_in = m.zstd_out = m.held = m.compressed_records = 0;
  if (m.zstd) ZSTD_initDStream(m.zstd);
}

bool PerfData::decompressed(std::uint64_t offset) const {
  const Impl& m = *impl_;
  return m.next_base != 0 && offset >= std::max<std::uint64_t>(m.virtual_end, m.bytes.size());
}

void PerfData::release_decompressed_before(std::uint64_t offset) {
  Impl& m = *impl_;
  // the chunk being read stays: the rest of a record cut in two is carried over from it
  while (m.chunks.size() > 1 && m.chunks.front().base + m.chunks.front().bytes.size() <= offset) {
    m.held -= m.chunks.front().bytes.size();
    m.chunks.pop_front();
  }
}

std::uint64_t PerfData::decompressed_held() const { return impl_->held; }

std::uint64_t PerfData::compressed_records() const { return impl_->compressed_records; }

PerfData::Place PerfData::place(const Record& r) const {
  const Impl& m = *impl_;
  std::uint64_t offset = r.offset;
  // a decompressed record: its COMPRESSED record's place (the chunk being read, or an earlier one held)
  if (decompressed(offset))
    for (auto it = m.chunks.rbegin(); it != m.chunks.rend(); ++it)
      if (offset >= it->base) {
        offset = it->from;
        break;
      }
  if (m.pipe) return {"pipe", offset - m.data_offset};
  for (const auto& s : m.streams)
    if (offset >= s.base && offset - s.base < s.bytes.size()) return {s.path, offset - s.base};
  return {m.name, offset};
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

}  // namespace perfspec::record
