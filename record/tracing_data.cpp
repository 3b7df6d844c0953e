// SPDX-License-Identifier: MIT
// perf's tracing data (HEADER_TRACING_DATA, and what follows a TRACING_DATA record in pipe mode), as
// perf's trace-event-info.c lays it out:
//
//   "\027\010\104tracing"  version "0.6\0"  endianness (1: big)  long size  page size (u32)
//   "header_page\0" u64 size, bytes      "header_event\0" u64 size, bytes
//   u32 count of ftrace format files, each u64 size, bytes
//   u32 count of systems, each: name "\0", u32 count of format files, each u64 size, bytes
//   u32 size, /proc/kallsyms      u32 size, printk formats      (0.6 and later) u64 size, saved_cmdlines
//
// Numbers are in the byte order the endianness byte gives. Every length is checked against what is
// left before anything is taken.
#include <bit>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "perfspec/tracepoint.hpp"

namespace perfspec::record {

namespace {

class Reader {
 public:
  Reader(std::span<const std::byte> bytes, std::uint64_t offset) : bytes_(bytes), offset_(offset) {}
  bool big_endian = false;

  std::uint64_t where() const { return offset_ + pos_; }
  std::size_t position() const { return pos_; }

  [[noreturn]] void fail(std::uint64_t at, const std::string& what) const {
    throw DecodeError(at, fmt::format("tracing data at offset {:#x}: {}", at, what));
  }
  std::span<const std::byte> take(std::uint64_t n, std::string_view what) {
    if (n > bytes_.size() - pos_)
      fail(where(), fmt::format("{} of {} bytes runs past the end of the tracing data ({} bytes left)", what,
                                n, bytes_.size() - pos_));
    auto s = bytes_.subspan(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return s;
  }
  std::uint64_t number(std::size_t size, std::string_view what) {
    auto b = take(size, what);
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < size; ++i) {
      auto byte = std::to_integer<std::uint64_t>(b[big_endian ? i : size - 1 - i]);
      v = v << 8 | byte;
    }
    return v;
  }
  std::uint32_t u32(std::string_view what) { return static_cast<std::uint32_t>(number(4, what)); }
  std::uint64_t u64(std::string_view what) { return number(8, what); }
  std::string string(std::string_view what) {
    const auto* p = reinterpret_cast<const char*>(bytes_.data() + pos_);
    const void* nul = std::memchr(p, 0, bytes_.size() - pos_);
    if (!nul) fail(where(), fmt::format("{} is not terminated before the end of the tracing data", what));
    std::size_t n = static_cast<std::size_t>(static_cast<const char*>(nul) - p);
    pos_ += n + 1;
    return {p, n};
  }
  // A tag perf writes with its NUL ("header_page\0").
  void expect(std::string_view tag) {
    std::uint64_t at = where();
    auto b = take(tag.size() + 1, fmt::format("the '{}' tag", tag));
    if (std::memcmp(b.data(), tag.data(), tag.size()) != 0 || b[tag.size()] != std::byte{0})
      fail(at, fmt::format("'{}' expected", tag));
  }
  // `count` files, each a u64 size then its bytes.
  std::vector<std::span<const std::byte>> files(std::uint32_t count, std::string_view what) {
    std::vector<std::span<const std::byte>> out;
    for (std::uint32_t i = 0; i < count; ++i) {
      std::uint64_t size = u64(fmt::format("the size of {} {}", what, i));
      out.push_back(take(size, fmt::format("{} {}", what, i)));
    }
    return out;
  }

 private:
  std::span<const std::byte> bytes_;
  std::uint64_t offset_;
  std::size_t pos_ = 0;
};

// atof(version) >= 0.6, as perf decides whether saved_cmdlines follow: the leading number of the
// version string ("0.6", "0.5").
bool has_saved_cmdlines(const std::string& version) {
  double v = 0;
  auto [p, ec] = std::from_chars(version.data(), version.data() + version.size(), v);
  (void)p;
  return ec == std::errc{} && v >= 0.6;
}

}  // namespace

TracingFiles read_tracing_data(std::span<const std::byte> bytes, std::uint64_t offset) {
  Reader r(bytes, offset);
  TracingFiles t;
  constexpr std::string_view magic("\027\010\104tracing", 10);
  auto m = r.take(magic.size(), "the magic");
  if (std::memcmp(m.data(), magic.data(), magic.size()) != 0)
    r.fail(offset, "no tracing data magic (\\027\\010\\104tracing)");
  t.version = r.string("the version");
  auto endian = r.take(1, "the endianness byte")[0];
  if (endian != std::byte{0} && endian != std::byte{1})
    r.fail(r.where() - 1, fmt::format("endianness byte {} (0 little, 1 big)", std::to_integer<int>(endian)));
  t.big_endian = endian == std::byte{1};
  r.big_endian = t.big_endian;
  t.long_size = std::to_integer<std::uint8_t>(r.take(1, "the long size")[0]);
  if (t.long_size != 4 && t.long_size != 8) r.fail(r.where() - 1, fmt::format("long size {}", t.long_size));
  std::uint64_t at = r.where();
  t.page_size = r.u32("the page size");
  if (t.page_size == 0 || (t.page_size & (t.page_size - 1)) != 0)
    r.fail(at, fmt::format("page size {} is not a power of two", t.page_size));
  r.expect("header_page");
  t.header_page = r.take(r.u64("the size of header_page"), "header_page");
  r.expect("header_event");
  t.header_event = r.take(r.u64("the size of header_event"), "header_event");
  t.ftrace_formats = r.files(r.u32("the count of ftrace formats"), "ftrace format");
  std::uint32_t systems = r.u32("the count of systems");
  for (std::uint32_t i = 0; i < systems; ++i) {
    TracingFiles::System s;
    s.name = r.string(fmt::format("the name of system {}", i));
    s.formats =
        r.files(r.u32(fmt::format("the count of {}'s formats", s.name)), fmt::format("{} format", s.name));
    t.systems.push_back(std::move(s));
  }
  t.kallsyms = r.take(r.u32("the size of kallsyms"), "kallsyms");
  t.printk_formats = r.take(r.u32("the size of the printk formats"), "the printk formats");
  if (has_saved_cmdlines(t.version))
    t.saved_cmdlines = r.take(r.u64("the size of saved_cmdlines"), "saved_cmdlines");
  t.size = r.position();
  return t;
}

namespace {

class Writer {
 public:
  explicit Writer(bool big_endian) : big_(big_endian) {}
  std::vector<std::byte> out;
  void bytes(std::span<const std::byte> b) { out.insert(out.end(), b.begin(), b.end()); }
  void text(std::string_view s) {  // with its NUL
    bytes(std::as_bytes(std::span(s.data(), s.size())));
    out.push_back(std::byte{0});
  }
  void number(std::uint64_t v, std::size_t size) {
    for (std::size_t i = 0; i < size; ++i) {
      std::size_t shift = 8 * (big_ ? size - 1 - i : i);
      out.push_back(static_cast<std::byte>(v >> shift & 0xff));
    }
  }
  void sized(std::span<const std::byte> b, std::size_t size_bytes) {
    number(b.size(), size_bytes);
    bytes(b);
  }

 private:
  bool big_;
};

}  // namespace

std::vector<std::byte> write_tracing_data(const TracingFiles& t) {
  auto fits = [](std::span<const std::byte> b, std::string_view what) {
    if (b.size() > 0xffffffffU)
      throw Error(ErrorKind::usage,
                  fmt::format("tracing data: {} of {} bytes does not fit its u32 size", what, b.size()));
  };
  fits(t.kallsyms, "kallsyms");
  fits(t.printk_formats, "the printk formats");
  if (t.version.find('\0') != std::string::npos || t.version.empty())
    throw Error(ErrorKind::usage, "tracing data: a version is a string without NUL");
  Writer w(t.big_endian);
  w.bytes(std::as_bytes(std::span("\027\010\104tracing", 10)));
  w.text(t.version);
  w.out.push_back(std::byte{t.big_endian ? std::uint8_t{1} : std::uint8_t{0}});
  w.out.push_back(std::byte{t.long_size});
  w.number(t.page_size, 4);
  w.text("header_page");
  w.sized(t.header_page, 8);
  w.text("header_event");
  w.sized(t.header_event, 8);
  w.number(t.ftrace_formats.size(), 4);
  for (auto f : t.ftrace_formats) w.sized(f, 8);
  w.number(t.systems.size(), 4);
  for (const auto& s : t.systems) {
    w.text(s.name);
    w.number(s.formats.size(), 4);
    for (auto f : s.formats) w.sized(f, 8);
  }
  w.sized(t.kallsyms, 4);
  w.sized(t.printk_formats, 4);
  if (has_saved_cmdlines(t.version)) w.sized(t.saved_cmdlines, 8);
  return std::move(w.out);
}

}  // namespace perfspec::record
