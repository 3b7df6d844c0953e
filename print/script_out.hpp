// SPDX-License-Identifier: MIT
#pragma once
// What perf script's layouts are written into: a buffer handed to the caller's writer in pieces, and
// the text layout's fast writer of its hot fields.
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace perfspec::script {

// C's %#lx, as perf prints addresses: 0 is written "0", not "0x0".
struct CHex {
  std::uint64_t v;
};

// The text of the records so far, handed to the writer when it has grown past 64 KiB and at the end.
// Per event (perf's --per-event-dump): each sample's text to its event's writer, the rest to `write`,
// and the samples of each event counted.
class Buffer {
 public:
  using EventWriter = std::function<void(std::size_t, std::string_view)>;
  static constexpr std::size_t others = ~std::size_t{0};
  explicit Buffer(const std::function<void(std::string_view)>& write,
                  const EventWriter* write_event = nullptr)
      : write_(write), write_event_(write_event) {}
  fmt::memory_buffer& text() { return text_; }
  auto it() { return std::back_inserter(text_); }
  void flush() {
    if (text_.size()) {
      std::string_view t(text_.data(), text_.size());
      if (to_ == others)
        write_(t);
      else
        (*write_event_)(to_, t);
    }
    text_.clear();
  }
  void maybe_flush() {
    if (text_.size() > (1 << 16)) flush();
  }
  // What is written next is a sample of event `event` (others: another record's text). Nothing may be
  // writing into text() meanwhile (no Out on it).
  void route(std::size_t event) {
    if (!write_event_) return;
    if (event != others) {
      if (samples_.size() <= event) samples_.resize(event + 1);
      ++samples_[event];
    }
    if (event == to_) return;
    flush();
    to_ = event;
  }
  // Per event: the samples routed to each event, by index (events of none left out at the end).
  const std::vector<std::uint64_t>& samples() const { return samples_; }

 private:
  const std::function<void(std::string_view)>& write_;
  const EventWriter* write_event_;
  std::size_t to_ = others;
  std::vector<std::uint64_t> samples_;
  fmt::memory_buffer text_;
};

// The text path's hot fields, written straight into the output buffer: fmt::format_to parses its
// format string and pads through its width machinery for each of them, which was most of the time of
// `perfspec script` over a large file. Each writes exactly what the fmt specification in its comment does.
class Out {
 public:
  // Writes from the end of `b`, into its spare capacity (grown as needed); the size is set when the Out
  // ends. Nothing else may write to `b` while an Out on it lives.
  explicit Out(fmt::memory_buffer& b) : b_(b), p_(b.data() + b.size()), end_(b.data() + b.capacity()) {}
  Out(const Out&) = delete;
  Out& operator=(const Out&) = delete;
  ~Out() { b_.resize(size()); }

  std::size_t size() const { return static_cast<std::size_t>(p_ - b_.data()); }
  void cut(std::size_t size) { p_ = b_.data() + size; }  // back to an earlier size()
  // What was written since an earlier size(); valid until the next write.
  std::string_view since(std::size_t size) const { return {b_.data() + size, this->size() - size}; }
  void put(char c) {
    need(1);
    *p_++ = c;
  }
  void put(std::string_view s) {
    need(s.size());
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  // What fmt formats, for the fields written seldom: through the buffer itself, then on from there.
  template <typename... A> void format(fmt::format_string<A...> f, A&&... args) {
    b_.resize(size());
    fmt::format_to(std::back_inserter(b_), f, std::forward<A>(args)...);
    p_ = b_.data() + b_.size();
    end_ = b_.data() + b_.capacity();
  }
  // "{:>W}" of a string: fmt pads by display width, which is the byte count for ASCII; other strings go
  // through fmt.
  void right_str(std::string_view s, std::size_t width) {
    if (!ascii(s)) return format("{:>{}}", s, width);
    if (s.size() < width) fill(' ', width - s.size());
    put(s);
  }
  // "{:>W}" / "{:0W}" / "{:<W}" of an integer
  template <typename T> void right(T v, std::size_t width, char pad = ' ') {
    fmt::format_int d(v);
    if (d.size() < width) fill(pad, width - d.size());
    put(std::string_view(d.data(), d.size()));
  }
  template <typename T> void left(T v, std::size_t width) {
    fmt::format_int d(v);
    put(std::string_view(d.data(), d.size()));
    if (d.size() < width) fill(' ', width - d.size());
  }
  // "{:>16x}": two digits a step, from a table of the 256 byte values
  void hex16(std::uint64_t v) {
    static constexpr auto pairs = [] {
      std::array<char, 512> t{};
      for (int i = 0; i < 256; ++i) {
        t[2 * i] = "0123456789abcdef"[i >> 4];
        t[2 * i + 1] = "0123456789abcdef"[i & 15];
      }
      return t;
    }();
    need(16);
    char digits[16];
    for (int i = 7; i >= 0; --i, v >>= 8) std::memcpy(digits + 2 * i, &pairs[2 * (v & 0xff)], 2);
    std::size_t zeros = 0;  // leading zeros become spaces; 0 itself is "0"
    while (zeros < 15 && digits[zeros] == '0') ++zeros;
    std::memset(p_, ' ', zeros);
    std::memcpy(p_ + zeros, digits + zeros, 16 - zeros);
    p_ += 16;
  }
  // "{:#x}"
  void hex0x(std::uint64_t v) {
    char digits[16];
    int n = 0;
    do {
      digits[15 - n++] = "0123456789abcdef"[v & 15];
      v >>= 4;
    } while (v);
    need(18);
    *p_++ = '0';
    *p_++ = 'x';
    std::memcpy(p_, digits + 16 - n, static_cast<std::size_t>(n));
    p_ += n;
  }

 private:
  fmt::memory_buffer& b_;
  char* p_;
  char* end_;
  static bool ascii(std::string_view s) {
    for (char c : s)
      if (static_cast<unsigned char>(c) >= 0x80) return false;
    return true;
  }
  void need(std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) < n) [[unlikely]]
      grow(n);
  }
  [[gnu::noinline]] void grow(std::size_t n) {
    std::size_t used = size();
    b_.resize(used);
    b_.reserve(used + n + 4096);
    p_ = b_.data() + used;
    end_ = b_.data() + b_.capacity();
  }
  void fill(char c, std::size_t n) {
    need(n);
    std::memset(p_, c, n);
    p_ += n;
  }
};

}  // namespace perfspec::script

template <> struct fmt::formatter<perfspec::script::CHex> : fmt::formatter<std::string_view> {
  auto format(perfspec::script::CHex h, fmt::format_context& ctx) const {
    return h.v ? fmt::format_to(ctx.out(), "{:#x}", h.v) : fmt::format_to(ctx.out(), "0");
  }
};
