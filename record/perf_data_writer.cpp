// SPDX-License-Identifier: MIT
// Writing perf.data: the layouts perf record writes (perf.data-file-format.txt), which perf report and
// perf script read. File mode: header, ids, attrs, data, then the feature sections, the header rewritten
// at the end. Pipe mode (`perf record -o -`): a short header, then everything as records in one stream.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <map>

#include <fmt/format.h>
#include <zstd.h>

#include "perfspec/perf_data.hpp"

namespace perfspec::record {

namespace {

// perf record -z: the records of a round, or this much of them, make one zstd frame
constexpr std::uint32_t compress_chunk = 128 * 1024;

constexpr std::uint64_t magic2 = 0x32454c4946524550ULL;  // "PERFILE2"
constexpr std::size_t header_size = 104;
constexpr std::size_t buffer_size = std::size_t{1} << 20;

void put64(std::vector<std::byte>& b, std::uint64_t v) {
  auto at = b.size();
  b.resize(at + 8);
  std::memcpy(b.data() + at, &v, 8);
}
void put32(std::vector<std::byte>& b, std::uint32_t v) {
  auto at = b.size();
  b.resize(at + 4);
  std::memcpy(b.data() + at, &v, 4);
}
void put_bytes(std::vector<std::byte>& b, const void* p, std::size_t n) {
  auto at = b.size();
  b.resize(at + n);
  if (n) std::memcpy(b.data() + at, p, n);
}
// struct perf_event_header
void put_header(std::vector<std::byte>& b, Type type, std::size_t size) {
  put32(b, static_cast<std::uint32_t>(type));
  std::uint16_t misc = 0, sz = static_cast<std::uint16_t>(size);
  put_bytes(b, &misc, 2);
  put_bytes(b, &sz, 2);
}
// perf_header_string: u32 len, then the string with its NUL, padded to 64 bytes as perf writes it.
void put_string(std::vector<std::byte>& b, std::string_view s) {
  std::uint32_t len = static_cast<std::uint32_t>((s.size() + 1 + 63) / 64 * 64);
  put32(b, len);
  auto at = b.size();
  b.resize(at + len);
  std::memcpy(b.data() + at, s.data(), s.size());
  std::memset(b.data() + at + s.size(), 0, len - s.size());
}

}  // namespace

struct PerfDataWriter::Impl {
  std::string path;
  int fd = -1;
  bool pipe = false;
  bool own_fd = true;
  bool features_sent = false;  // pipe mode: the features and tracing data are in the stream
  std::vector<std::byte> tracing;
  std::vector<FileEvent> events;
  // The size of every attr in the file (the attrs section and HEADER_EVENT_DESC): the smallest
  // PERF_ATTR_SIZE_VER* that holds each attr's non-zero fields. perf reads a shorter attr zero-filled, and
  // perf 6.1 refuses any attr longer than its 128 bytes, as perf 6.12's own 136 are.
  std::uint32_t attr_size = 64;
  std::uint64_t data_offset = 0, data_size = 0;
  // File mode: the bytes of the data section in the file as whole records. After a failed write (a full
  // disk) the header says this much, so what was written reads back.
  std::uint64_t data_written = 0;
  std::size_t last_done = 0;  // the bytes the last write_at wrote before it failed
  std::vector<std::byte> buffer;
  std::map<unsigned, std::vector<std::byte>> features;
  bool finished = false;
  // compress(): the records gathered for the next frame, and the bytes before and after compression
  struct Zstd {
    ZSTD_CCtx* cctx = nullptr;
    int level = 1;
    std::vector<std::byte> pending, out;
    std::uint64_t original = 0, compressed = 0;
  } zstd;

  ~Impl() {
    if (fd >= 0 && own_fd) ::close(fd);
    if (zstd.cctx) ZSTD_freeCCtx(zstd.cctx);
  }
  // perf record -z: what was gathered, as one zstd frame in PERF_RECORD_COMPRESSED records of at most
  // 64 KiB (each record's data a piece of the frame; a reader decompresses them as one stream)
  void compress_pending() {
    if (zstd.pending.empty()) return;
    zstd.out.resize(ZSTD_compressBound(zstd.pending.size()));
    std::size_t n = ZSTD_compressCCtx(zstd.cctx, zstd.out.data(), zstd.out.size(), zstd.pending.data(),
                                      zstd.pending.size(), zstd.level);
    if (ZSTD_isError(n))
      throw Error(ErrorKind::io,
                  fmt::format("cannot compress the records of '{}': {}", path, ZSTD_getErrorName(n)));
    zstd.original += zstd.pending.size();
    zstd.pending.clear();
    constexpr std::size_t most = 0xffff - 8;
    for (std::size_t at = 0; at < n; at += most) {
      std::size_t piece = std::min(most, n - at);
      std::vector<std::byte> r;
      r.reserve(8 + piece);
      put_header(r, Type::compressed, 8 + piece);
      // sized, then copied: GCC 14's -Warray-bounds misreads an insert after the 8-byte header
      r.resize(8 + piece);
      std::memcpy(r.data() + 8, zstd.out.data() + at, piece);
      append(r);
      zstd.compressed += r.size();
    }
  }
  // HEADER_COMPRESSED as perf 6.12 writes it: version 0, type 1 (zstd), the level, the ratio (whole),
  // the length a reader's decompression buffer needs (perf's: its ring buffers')
  std::vector<std::byte> compressed_feature() const {
    std::vector<std::byte> b;
    put32(b, 0);
    put32(b, 1);
    put32(b, static_cast<std::uint32_t>(zstd.level));
    put32(b, static_cast<std::uint32_t>(zstd.compressed ? zstd.original / zstd.compressed : 0));
    put32(b, 2 * compress_chunk);  // a frame's records, after at most a record carried over
    return b;
  }
  [[noreturn]] void fail(std::string_view what, int err) const {
    throw Error(ErrorKind::io, fmt::format("cannot {} '{}': {}", what, path, std::strerror(err)));
  }
  void write_at(std::uint64_t offset, std::span<const std::byte> bytes) {
    std::size_t done = 0;
    last_done = 0;
    while (done < bytes.size()) {
      ssize_t n =
          pipe ? ::write(fd, bytes.data() + done, bytes.size() - done)
               : ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("write", errno);
      if (n == 0) fail("write", ENOSPC);
      done += static_cast<std::size_t>(n);
      last_done = done;
    }
  }
  // Records at `at` in the data section.
  void write_data(std::uint64_t at, std::span<const std::byte> records) {
    try {
      write_at(data_offset + at, records);
    } catch (const Error&) {
      // the whole records among the bytes that were written
      std::size_t whole = 0;
      while (whole + 8 <= last_done) {
        std::uint16_t size = 0;
        std::memcpy(&size, records.data() + whole + 6, 2);
        if (size < 8 || whole + size > last_done) break;
        whole += size;
      }
      data_written = at + whole;
      throw;
    }
    data_written = at + records.size();
  }
  void flush() {
    if (buffer.empty()) return;
    write_data(data_size - buffer.size(), buffer);
    buffer.clear();
  }
  // File mode, after a write failed: the header with the data that reached the file (and no features,
  // which may not), so that the file reads as far as it was written. Errors are not reported again.
  void salvage() noexcept {
    if (pipe || fd < 0) return;
    data_size = data_written;
    features.clear();
    try {
      write_at(0, header(attrs_offset(), events.size() * (attr_size + 16)));
    } catch (...) {  // the first error is the one said
    }
    ::close(fd);
    fd = -1;
  }
  void finish_file();
  void start_pipe();
  std::uint64_t attrs_offset() const {
    std::uint64_t at = header_size;
    for (const auto& e : events) at += e.ids.size() * 8;
    return at;
  }
  // Pipe mode: the features set so far as HEADER_FEATURE records (with HEADER_EVENT_DESC), then the
  // tracing data as perf sends it: a TRACING_DATA record, the data, zeros to a multiple of 8. Before the
  // first data record, as perf sends them; a feature set later follows in its own record where it is set.
  void send_features() {
    if (!pipe || features_sent) return;
    features_sent = true;
    features[static_cast<unsigned>(Feature::event_desc)] = event_desc();
    for (const auto& [bit, bytes] : features) append_feature(bit, bytes);
    // The events' names, as perf sends them in pipe mode (its readers name pipe events from these, not
    // from HEADER_EVENT_DESC): an EVENT_UPDATE of type NAME for the event's first id.
    for (const auto& e : events) {
      if (e.ids.empty() || e.name.empty()) continue;
      std::size_t size = 24 + (e.name.size() + 1 + 7) / 8 * 8;
      if (size > 0xffff) continue;  // a name of 64 KiB: left to HEADER_EVENT_DESC
      std::vector<std::byte> r;
      put_header(r, Type::event_update, size);
      put64(r, 2);  // PERF_EVENT_UPDATE__NAME
      put64(r, e.ids.front());
      put_bytes(r, e.name.data(), e.name.size());
      r.resize(size);
      append(r);
    }
    if (!tracing.empty()) {
      std::uint64_t padded = (tracing.size() + 7) / 8 * 8;
      std::vector<std::byte> r;
      put_header(r, Type::header_tracing_data, 16);
      put32(r, static_cast<std::uint32_t>(padded));
      put32(r, 0);
      r.insert(r.end(), tracing.begin(), tracing.end());
      r.resize(16 + padded);
      append(r);
    }
  }
  void append_feature(unsigned bit, const std::vector<std::byte>& bytes) {
    std::vector<std::byte> r;
    std::size_t size = 16 + (bytes.size() + 7) / 8 * 8;
    if (size > 0xffff)
      throw Error(ErrorKind::usage,
                  fmt::format("'{}': feature {} of {} bytes does not fit a record", path, bit, bytes.size()));
    put_header(r, Type::header_feature, size);
    put64(r, bit);
    put_bytes(r, bytes.data(), bytes.size());
    r.resize(size);
    append(r);
  }
  // Into the data stream (buffered).
  void append(std::span<const std::byte> records) {
    if (buffer.size() + records.size() > buffer_size) flush();
    if (records.size() >= buffer_size) {
      data_size += records.size();
      write_data(data_size - records.size(), records);
      return;
    }
    buffer.insert(buffer.end(), records.begin(), records.end());
    data_size += records.size();
  }
  // HEADER_EVENT_DESC: u32 nr, u32 attr size, then per event its attr, u32 nr_ids, its name, its ids.
  std::vector<std::byte> event_desc() const {
    std::vector<std::byte> desc;
    put32(desc, static_cast<std::uint32_t>(events.size()));
    put32(desc, attr_size);
    for (const auto& e : events) {
      auto bytes = attr_to_bytes(e.attr, attr_size);
      put_bytes(desc, bytes.data(), attr_size);
      put32(desc, static_cast<std::uint32_t>(e.ids.size()));
      put_string(desc, e.name);
      for (auto id : e.ids) put64(desc, id);
    }
    return desc;
  }
  std::vector<std::byte> header(std::uint64_t attrs_offset, std::uint64_t attrs_size) const {
    std::vector<std::byte> h;
    put64(h, magic2);
    put64(h, header_size);
    put64(h, attr_size + 16);  // an attr and its ids section
    put64(h, attrs_offset);
    put64(h, attrs_size);
    put64(h, data_offset);
    put64(h, data_size);
    put64(h, 0);  // event_types: unused
    put64(h, 0);
    std::array<std::uint64_t, 4> bits{};
    for (const auto& [bit, bytes] : features) bits[bit / 64] |= std::uint64_t{1} << (bit % 64);
    for (auto w : bits) put64(h, w);
    return h;
  }
};

PerfDataWriter::PerfDataWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PerfDataWriter::PerfDataWriter(PerfDataWriter&&) noexcept = default;
PerfDataWriter& PerfDataWriter::operator=(PerfDataWriter&&) noexcept = default;
PerfDataWriter::~PerfDataWriter() {
  if (impl_ && !impl_->finished) {
    try {
      finish();
    } catch (const Error&) {  // the caller did not ask: the file reads as far as it was written
    }
  }
}

// Pipe mode's start: the short header, then each event as a HEADER_ATTR record.
void PerfDataWriter::Impl::start_pipe() {
  Impl& m = *this;
  m.pipe = true;
  // perf's reader takes a HEADER_ATTR's attr as a whole struct perf_event_attr of its own size (136
  // bytes in perf 6.12), whatever the record's attr says: a shorter attr would be read with the ids
  // after it as its last fields. So every attr has 136 bytes here (perf 6.1 reads its 128 of them and
  // finds the ids after the 136 the attr says, as perf 6.12 does).
  m.attr_size = attr_size_ver8;
  m.buffer.reserve(buffer_size);
  std::vector<std::byte> head;
  put64(head, magic2);
  put64(head, 16);  // struct perf_pipe_file_header
  m.write_at(0, head);
  for (const auto& e : m.events) {
    std::vector<std::byte> r;
    std::size_t size = 8 + attr_size_ver8 + 8 * e.ids.size();
    if (size > 0xffff)
      throw Error(ErrorKind::usage, fmt::format("'{}': event '{}' has {} ids, more than an ATTR record holds",
                                                m.path, e.name, e.ids.size()));
    put_header(r, Type::header_attr, size);
    auto bytes = attr_to_bytes(e.attr);
    put_bytes(r, bytes.data(), bytes.size());
    for (auto id : e.ids) put64(r, id);
    m.append(r);
  }
}

PerfDataWriter PerfDataWriter::create(const std::string& path, std::vector<FileEvent> events) {
  auto m = std::make_unique<Impl>();
  m->path = path;
  m->events = std::move(events);
  m->fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (m->fd < 0) m->fail("create", errno);
  // A device, a FIFO or a socket is written as a stream: pipe mode (nothing in it can be gone back to).
  struct stat st {};
  if (::fstat(m->fd, &st) != 0) m->fail("create", errno);
  if (!S_ISREG(st.st_mode)) {
    m->start_pipe();
    return PerfDataWriter(std::move(m));
  }
  // header, then the ids of every event, then the attrs (each with its ids section), then the data
  std::vector<std::byte> ids;
  std::vector<std::uint64_t> ids_at;
  std::uint64_t at = header_size;
  for (const auto& e : m->events) {
    ids_at.push_back(at + ids.size());
    for (auto id : e.ids) put64(ids, id);
  }
  std::uint64_t attrs_offset = at + ids.size();
  for (const auto& e : m->events) m->attr_size = std::max(m->attr_size, attr_size_needed(e.attr));
  std::vector<std::byte> attrs;
  for (std::size_t i = 0; i < m->events.size(); ++i) {
    auto bytes = attr_to_bytes(m->events[i].attr, m->attr_size);
    put_bytes(attrs, bytes.data(), m->attr_size);
    put64(attrs, ids_at[i]);
    put64(attrs, m->events[i].ids.size() * 8);
  }
  m->data_offset = attrs_offset + attrs.size();
  // The header says there is no data until finish() says how much: a file whose writer died is
  // read as empty, never with a size that does not hold.
  m->write_at(0, m->header(attrs_offset, attrs.size()));
  m->write_at(header_size, ids);
  m->write_at(attrs_offset, attrs);
  m->buffer.reserve(buffer_size);
  return PerfDataWriter(std::move(m));
}

PerfDataWriter PerfDataWriter::create_pipe(int fd, std::vector<FileEvent> events, std::string name) {
  auto m = std::make_unique<Impl>();
  m->path = std::move(name);
  m->events = std::move(events);
  m->fd = fd;
  m->own_fd = false;
  m->start_pipe();
  return PerfDataWriter(std::move(m));
}

bool PerfDataWriter::pipe() const { return impl_->pipe; }

void PerfDataWriter::write(std::span<const std::byte> records) {
  Impl& m = *impl_;
  if (m.finished)
    throw Error(ErrorKind::usage, fmt::format("'{}' is finished: nothing more can be written", m.path));
  m.send_features();
  if (!m.zstd.cctx) return m.append(records);
  m.zstd.pending.insert(m.zstd.pending.end(), records.begin(), records.end());
  if (m.zstd.pending.size() >= compress_chunk) m.compress_pending();
}

void PerfDataWriter::compress(int level) {
  Impl& m = *impl_;
  if (m.zstd.cctx) return;
  m.zstd.cctx = ZSTD_createCCtx();
  if (!m.zstd.cctx) throw Error(ErrorKind::io, "cannot start zstd compression: out of memory");
  m.zstd.level = std::clamp(level, 1, ZSTD_maxCLevel());
  // a pipe's features go first, as perf sends them: its ratio is not known yet (0)
  if (m.pipe && !m.features_sent)
    m.features[static_cast<unsigned>(Feature::compressed)] = m.compressed_feature();
}

std::pair<std::uint64_t, std::uint64_t> PerfDataWriter::compressed_sizes() const {
  return {impl_->zstd.original, impl_->zstd.compressed};
}

void PerfDataWriter::finish_round() {
  std::array<std::byte, 8> r{};
  std::uint32_t type = static_cast<std::uint32_t>(Type::finished_round);
  std::uint16_t size = 8;
  std::memcpy(r.data(), &type, 4);
  std::memcpy(r.data() + 6, &size, 2);
  if (impl_->zstd.cctx && !impl_->finished) {  // the round's records in a frame, the round's end as it is
    impl_->send_features();
    impl_->compress_pending();
    impl_->append(r);
  } else {
    write(r);
  }
  // A pipe's reader reads as the recording goes (perf script -i -): each round reaches it at once.
  if (impl_->pipe) impl_->flush();
}

std::uint64_t PerfDataWriter::data_size() const { return impl_->data_size; }

void PerfDataWriter::set_feature(Feature feature, std::vector<std::byte> bytes) {
  Impl& m = *impl_;
  if (m.finished)
    throw Error(ErrorKind::usage, fmt::format("'{}' is finished: nothing more can be written", m.path));
  auto bit = static_cast<unsigned>(feature);
  if (m.features_sent) m.append_feature(bit, bytes);
  m.features[bit] = std::move(bytes);
}

void PerfDataWriter::set_string(Feature feature, std::string value) {
  std::vector<std::byte> b;
  put_string(b, value);
  set_feature(feature, std::move(b));
}

void PerfDataWriter::set_cmdline(std::vector<std::string> words) {
  std::vector<std::byte> b;
  put32(b, static_cast<std::uint32_t>(words.size()));
  for (const auto& w : words) put_string(b, w);
  set_feature(Feature::cmdline, std::move(b));
}

void PerfDataWriter::set_nr_cpus(std::uint32_t available, std::uint32_t online) {
  std::vector<std::byte> b;
  put32(b, available);
  put32(b, online);
  set_feature(Feature::nrcpus, std::move(b));
}

void PerfDataWriter::set_total_mem(std::uint64_t kb) {
  std::vector<std::byte> b;
  put64(b, kb);
  set_feature(Feature::total_mem, std::move(b));
}

void PerfDataWriter::set_sample_time(std::uint64_t first, std::uint64_t last) {
  std::vector<std::byte> b;
  put64(b, first);
  put64(b, last);
  set_feature(Feature::sample_time_range, std::move(b));
}

void PerfDataWriter::set_cpu_topology(const spec::SiblingLists& lists,
                                      const std::vector<spec::CpuTopology>& cpus, std::uint32_t available) {
  std::vector<std::byte> b;
  auto put_list = [&](const std::vector<std::string>& l) {
    put32(b, static_cast<std::uint32_t>(l.size()));
    for (const auto& text : l) put_string(b, text);
  };
  auto cpu = [&](std::uint32_t n) {
    auto it =
        std::find_if(cpus.begin(), cpus.end(), [&](const auto& t) { return t.cpu == static_cast<int>(n); });
    return it == cpus.end() ? spec::CpuTopology{} : *it;
  };
  put_list(lists.packages);
  put_list(lists.cores);
  for (std::uint32_t n = 0; n < available; ++n) {
    const spec::CpuTopology t = cpu(n);
    put32(b, static_cast<std::uint32_t>(t.core));
    put32(b, static_cast<std::uint32_t>(t.socket));
  }
  if (!lists.dies.empty()) {
    put_list(lists.dies);
    for (std::uint32_t n = 0; n < available; ++n) put32(b, static_cast<std::uint32_t>(cpu(n).die));
  }
  set_feature(Feature::cpu_topology, std::move(b));
}

void PerfDataWriter::set_numa_topology(const std::vector<spec::NumaNode>& nodes) {
  std::vector<std::byte> b;
  put32(b, static_cast<std::uint32_t>(nodes.size()));
  for (const auto& n : nodes) {
    put32(b, static_cast<std::uint32_t>(n.node));
    put64(b, n.mem_total_kb);
    put64(b, n.mem_free_kb);
    put_string(b, n.cpus);
  }
  set_feature(Feature::numa_topology, std::move(b));
}

void PerfDataWriter::set_pmu_mappings(const std::vector<std::pair<std::uint32_t, std::string>>& pmus) {
  std::vector<std::byte> b;
  put32(b, static_cast<std::uint32_t>(pmus.size()));
  for (const auto& [type, name] : pmus) {
    put32(b, type);
    put_string(b, name);
  }
  set_feature(Feature::pmu_mappings, std::move(b));
}

void PerfDataWriter::set_group_desc(const std::vector<GroupDescription>& groups) {
  std::vector<std::byte> b;
  put32(b, static_cast<std::uint32_t>(groups.size()));
  for (const auto& g : groups) {
    put_string(b, g.name);
    put32(b, g.leader);
    put32(b, g.members);
  }
  set_feature(Feature::group_desc, std::move(b));
}

void PerfDataWriter::set_tracing_data(std::vector<std::byte> bytes) {
  Impl& m = *impl_;
  if (m.finished || m.features_sent)
    throw Error(ErrorKind::usage,
                fmt::format("'{}': the tracing data must be given before the first record", m.path));
  if (bytes.size() > 0xffffffffU - 7)
    throw Error(ErrorKind::usage, fmt::format("'{}': tracing data of {} bytes", m.path, bytes.size()));
  m.tracing = std::move(bytes);
  if (!m.pipe) m.features[static_cast<unsigned>(Feature::tracing_data)] = m.tracing;
}

void PerfDataWriter::finish() {
  Impl& m = *impl_;
  if (m.finished) return;
  if (m.zstd.cctx) {
    m.send_features();
    m.compress_pending();
    if (!m.pipe) m.features[static_cast<unsigned>(Feature::compressed)] = m.compressed_feature();
  }
  if (m.pipe) {  // nothing to go back to: what is in the stream is the file
    m.send_features();
    m.finished = true;
    m.flush();
    return;
  }
  m.finished = true;
  try {
    m.finish_file();
  } catch (const Error&) {
    m.salvage();
    throw;
  }
}

void PerfDataWriter::Impl::finish_file() {
  Impl& m = *this;
  m.flush();
  m.features[static_cast<unsigned>(Feature::event_desc)] = m.event_desc();
  // the feature index (one section per feature, in bit order) right after the data, then the features
  std::uint64_t index_at = m.data_offset + m.data_size;
  std::uint64_t at = index_at + 16 * m.features.size();
  std::vector<std::byte> index, bodies;
  for (const auto& [bit, bytes] : m.features) {
    put64(index, at + bodies.size());
    put64(index, bytes.size());
    put_bytes(bodies, bytes.data(), bytes.size());
  }
  m.write_at(index_at, index);
  m.write_at(at, bodies);
  m.write_at(0, m.header(m.attrs_offset(), m.events.size() * (m.attr_size + 16)));
  if (::close(m.fd) != 0) {
    m.fd = -1;
    m.fail("write", errno);
  }
  m.fd = -1;
}

}  // namespace perfspec::record
