// SPDX-License-Identifier: MIT
// Writing perf.data in file mode: the layout perf record writes (perf.data-file-format.txt), which
// perf report and perf script read.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "perfspec/perf_data.hpp"

namespace perfspec::record {

namespace {

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
  std::vector<FileEvent> events;
  std::uint64_t data_offset = 0, data_size = 0;
  std::vector<std::byte> buffer;
  std::map<unsigned, std::vector<std::byte>> features;
  bool finished = false;

  ~Impl() {
    if (fd >= 0) ::close(fd);
  }
  [[noreturn]] void fail(std::string_view what, int err) const {
    throw Error(ErrorKind::io, fmt::format("cannot {} '{}': {}", what, path, std::strerror(err)));
  }
  void write_at(std::uint64_t offset, std::span<const std::byte> bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("write", errno);
      if (n == 0) fail("write", ENOSPC);
      done += static_cast<std::size_t>(n);
    }
  }
  void flush() {
    if (buffer.empty()) return;
    write_at(data_offset + data_size - buffer.size(), buffer);
    buffer.clear();
  }
  std::vector<std::byte> header(std::uint64_t attrs_offset, std::uint64_t attrs_size) const {
    std::vector<std::byte> h;
    put64(h, magic2);
    put64(h, header_size);
    put64(h, attr_size_ver8 + 16);  // an attr and its ids section
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

PerfDataWriter PerfDataWriter::create(const std::string& path, std::vector<FileEvent> events) {
  auto m = std::make_unique<Impl>();
  m->path = path;
  m->events = std::move(events);
  m->fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (m->fd < 0) m->fail("create", errno);
  // header, then the ids of every event, then the attrs (each with its ids section), then the data
  std::vector<std::byte> ids;
  std::vector<std::uint64_t> ids_at;
  std::uint64_t at = header_size;
  for (const auto& e : m->events) {
    ids_at.push_back(at + ids.size());
    for (auto id : e.ids) put64(ids, id);
  }
  std::uint64_t attrs_offset = at + ids.size();
  std::vector<std::byte> attrs;
  for (std::size_t i = 0; i < m->events.size(); ++i) {
    auto bytes = attr_to_bytes(m->events[i].attr);
    put_bytes(attrs, bytes.data(), bytes.size());
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

void PerfDataWriter::write(std::span<const std::byte> records) {
  Impl& m = *impl_;
  if (m.finished)
    throw Error(ErrorKind::usage, fmt::format("'{}' is finished: nothing more can be written", m.path));
  if (m.buffer.size() + records.size() > buffer_size) m.flush();
  if (records.size() >= buffer_size) {
    m.data_size += records.size();
    m.write_at(m.data_offset + m.data_size - records.size(), records);
    return;
  }
  m.buffer.insert(m.buffer.end(), records.begin(), records.end());
  m.data_size += records.size();
}

void PerfDataWriter::finish_round() {
  std::array<std::byte, 8> r{};
  std::uint32_t type = static_cast<std::uint32_t>(Type::finished_round);
  std::uint16_t size = 8;
  std::memcpy(r.data(), &type, 4);
  std::memcpy(r.data() + 6, &size, 2);
  write(r);
}

std::uint64_t PerfDataWriter::data_size() const { return impl_->data_size; }

void PerfDataWriter::set_string(Feature feature, std::string value) {
  std::vector<std::byte> b;
  put_string(b, value);
  impl_->features[static_cast<unsigned>(feature)] = std::move(b);
}

void PerfDataWriter::set_cmdline(std::vector<std::string> words) {
  std::vector<std::byte> b;
  put32(b, static_cast<std::uint32_t>(words.size()));
  for (const auto& w : words) put_string(b, w);
  impl_->features[static_cast<unsigned>(Feature::cmdline)] = std::move(b);
}

void PerfDataWriter::set_nr_cpus(std::uint32_t available, std::uint32_t online) {
  std::vector<std::byte> b;
  put32(b, available);
  put32(b, online);
  impl_->features[static_cast<unsigned>(Feature::nrcpus)] = std::move(b);
}

void PerfDataWriter::set_total_mem(std::uint64_t kb) {
  std::vector<std::byte> b;
  put64(b, kb);
  impl_->features[static_cast<unsigned>(Feature::total_mem)] = std::move(b);
}

void PerfDataWriter::set_sample_time(std::uint64_t first, std::uint64_t last) {
  std::vector<std::byte> b;
  put64(b, first);
  put64(b, last);
  impl_->features[static_cast<unsigned>(Feature::sample_time_range)] = std::move(b);
}

void PerfDataWriter::finish() {
  Impl& m = *impl_;
  if (m.finished) return;
  m.finished = true;
  m.flush();
  // HEADER_EVENT_DESC: u32 nr, u32 attr size, then per event its attr, u32 nr_ids, its name, its ids
  std::vector<std::byte> desc;
  put32(desc, static_cast<std::uint32_t>(m.events.size()));
  put32(desc, attr_size_ver8);
  for (const auto& e : m.events) {
    auto bytes = attr_to_bytes(e.attr);
    put_bytes(desc, bytes.data(), bytes.size());
    put32(desc, static_cast<std::uint32_t>(e.ids.size()));
    put_string(desc, e.name);
    for (auto id : e.ids) put64(desc, id);
  }
  m.features[static_cast<unsigned>(Feature::event_desc)] = std::move(desc);
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
  std::uint64_t attrs_offset = header_size;
  for (const auto& e : m.events) attrs_offset += e.ids.size() * 8;
  m.write_at(0, m.header(attrs_offset, m.events.size() * (attr_size_ver8 + 16)));
  if (::close(m.fd) != 0) {
    m.fd = -1;
    m.fail("write", errno);
  }
  m.fd = -1;
}

}  // namespace perfspec::record
