// SPDX-License-Identifier: MIT
#pragma once
// What a PerfData holds (internal to record/): the file's bytes or mapping, its header's facts, the
// decompression and --threads streams being read; and the bounds-checked reads of the header.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <zstd.h>

#include "perfspec/perf_data.hpp"
#include "perfspec/tracepoint.hpp"
#include "record/mapping_guard.hpp"

namespace perfspec::record {

namespace detail {

inline constexpr std::uint64_t magic2 = 0x32454c4946524550ULL;  // "PERFILE2" read as a little-endian u64
inline constexpr std::size_t file_header_size = 104;            // struct perf_file_header
inline constexpr std::size_t pipe_header_size = 16;             // struct perf_pipe_file_header
inline constexpr unsigned feature_bits = 256;
inline constexpr std::size_t max_decompressed = std::size_t{256} << 20;  // of one COMPRESSED record
// Of all of a file's COMPRESSED records: this many bytes, and past them this many times what they
// were compressed to (perf's zstd at its level 1 packs records 3 to 30 times); more is a zstd bomb,
// whose every chunk would be kept (a 178 KB file expanded to 2 GB).
inline constexpr std::uint64_t decompressed_free = std::uint64_t{256} << 20;
inline constexpr std::uint64_t max_compression_ratio = 200;

inline std::uint64_t u64_at(std::span<const std::byte> b, std::size_t at) {
  std::uint64_t v;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}
inline std::uint32_t u32_at(std::span<const std::byte> b, std::size_t at) {
  std::uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}

[[noreturn]] inline void bad(std::uint64_t offset, const std::string& message) {
  throw DecodeError(offset, message);
}

// The same error, named after the file it is about.
[[noreturn]] inline void rethrow_in(const std::string& name, const DecodeError& e) {
  throw DecodeError(e.offset(), fmt::format("{}: {}", name, e.message()));
}

// A section [offset, offset + size) that must lie inside the file.
inline std::span<const std::byte> section(std::span<const std::byte> file, std::uint64_t offset,
                                          std::uint64_t size, std::string_view what, std::uint64_t where) {
  if (offset > file.size() || size > file.size() - offset)
    bad(where, fmt::format("the {} section [{:#x}, +{:#x}) runs past the end of the file ({} bytes)", what,
                           offset, size, file.size()));
  return file.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(size));
}

// A perf_header_string at the start of `b` (u32 len, then len bytes holding a NUL-terminated
// string); advances `b` past it.
inline std::string header_string(std::span<const std::byte>& b, std::uint64_t where, std::string_view what) {
  if (b.size() < 4) bad(where, fmt::format("{}: a string's length is cut off", what));
  std::uint32_t len = u32_at(b, 0);
  if (len > b.size() - 4)
    bad(where, fmt::format("{}: a string of {} bytes runs past its section", what, len));
  const auto* p = reinterpret_cast<const char*>(b.data() + 4);
  std::string s(p, strnlen(p, len));
  b = b.subspan(4 + len);
  return s;
}

// The first 16 bytes of a perf.data file or stream (its magic and header size): throws DecodeError
// when they are not perf.data's, saying what they are when it can.
void check_magic(std::span<const std::byte> head);

}  // namespace detail

struct PerfData::Impl {
  std::string name = "perf.data";  // for errors
  std::vector<std::byte> owned;
  void* map = nullptr;
  std::size_t map_size = 0;
  detail::MappingGuard guard;  // of `map`: a file truncated while read is an error, not SIGBUS
  int map_fd = -1;             // the mapped file (0: standard input, not closed here)
  std::span<const std::byte> bytes;
  bool pipe = false;
  std::uint64_t data_offset = 0, data_size = 0;
  std::vector<FileEvent> events;
  Formats formats;
  std::array<std::span<const std::byte>, detail::feature_bits> features{};
  std::array<bool, detail::feature_bits> present{};
  std::span<const std::byte> tracing;
  std::uint64_t pos = 0;
  std::vector<bool> named;  // by the file: HEADER_EVENT_DESC, EVENT_UPDATE
  // The tracing data's tracepoints, parsed on first use (or the error that parsing them met).
  mutable std::unique_ptr<Tracepoints> tracepoints;
  mutable std::exception_ptr tracepoints_error;
  mutable bool tracepoints_read = false;

  // perf record -z: the records of COMPRESSED records, decompressed with one zstd stream for the whole
  // file (perf flushes, not ends, its frame per record). Each chunk is kept, at a stable address, until
  // a reader releases it (records view it; decode_at finds it again); its records are numbered from
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
  std::uint64_t zstd_in = 0,
                zstd_out = 0;            // the bytes of every COMPRESSED record so far, and of their chunks
  std::uint64_t held = 0;                // of the chunks not released (release_decompressed_before)
  std::uint64_t compressed_records = 0;  // COMPRESSED records read (next() yields their records instead)

  // A folder of perf record --threads: the records of its data.N files after the header file's data
  // section, each file's numbered from `base` (offsets past the end of the header file; decode_at finds
  // them again), its errors named by the file and its own offsets.
  struct Stream {
    std::string name;  // "data.1"
    std::string path;  // "folder/data.1"
    std::uint64_t base = 0;
    void* map = nullptr;
    std::size_t map_size = 0;
    detail::MappingGuard guard;
    int fd = -1;
    std::span<const std::byte> bytes;
  };
  std::vector<Stream> streams;
  std::size_t stream = 0;         // next() reads: 0 the header file's data section, i streams[i - 1]
  std::uint64_t virtual_end = 0;  // past the header file and every stream: where chunks are numbered

  ~Impl() {
    guard = {};  // unguarded before unmapped: the addresses may be mapped again at once
    if (map) ::munmap(map, map_size);
    if (map_fd > 0) ::close(map_fd);
    for (auto& s : streams) {
      s.guard = {};
      if (s.map) ::munmap(s.map, s.map_size);
      if (s.fd >= 0) ::close(s.fd);
    }
    if (zstd) ZSTD_freeDStream(zstd);
  }
  void open_streams(const std::string& folder);
  // Whether a mapped file was truncated while read (its missing pages read as zeros).
  // (The last page of a file cut short reads as zeros past its new end, without SIGBUS: its size says.)
  bool truncated() const {
    auto shorter = [](int fd, std::size_t mapped) {
      struct stat st {};
      return fd >= 0 && ::fstat(fd, &st) == 0 && static_cast<std::uint64_t>(st.st_size) < mapped;
    };
    if (guard.truncated() || shorter(map_fd, map_size)) return true;
    for (const auto& s : streams)
      if (s.guard.truncated() || shorter(s.fd, s.map_size)) return true;
    return false;
  }
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

}  // namespace perfspec::record
