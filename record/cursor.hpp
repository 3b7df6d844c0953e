// SPDX-License-Identifier: MIT
#pragma once
// A bounds-checked reader over the bytes of one record (internal to record/). Every read checks that
// the bytes are there and throws DecodeError naming the record's offset and what was being read.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include <fmt/format.h>

#include "perfspec/record.hpp"

namespace perfspec::record::detail {

class Cursor {
 public:
  /// `bytes` is the part to read; `record_offset` where the record starts in the stream (for errors);
  /// `type` its type (named in errors).
  Cursor(std::span<const std::byte> bytes, std::uint64_t record_offset, std::uint32_t type)
      : bytes_(bytes), offset_(record_offset), type_(type) {}

  std::size_t position() const { return pos_; }
  std::size_t left() const { return bytes_.size() - pos_; }

  template <typename T> T get(std::string_view what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::uint64_t u64(std::string_view what) { return get<std::uint64_t>(what); }
  std::uint32_t u32(std::string_view what) { return get<std::uint32_t>(what); }
  std::uint16_t u16(std::string_view what) { return get<std::uint16_t>(what); }

  std::span<const std::byte> take(std::uint64_t n, std::string_view what) {
    need(n, what);
    auto s = bytes_.subspan(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return s;
  }
  /// `count` u64 values; the count comes from the record, so it is checked before it is multiplied.
  U64s u64s(std::uint64_t count, std::string_view what) {
    if (count > left() / 8) too_short(count > (std::uint64_t{1} << 60) ? ~std::uint64_t{0} : count * 8, what);
    U64s v(bytes_.data() + pos_, static_cast<std::size_t>(count));
    pos_ += static_cast<std::size_t>(count) * 8;
    return v;
  }
  /// A NUL-terminated string in the next `n` bytes (padding after the NUL is skipped).
  std::string_view string(std::uint64_t n, std::string_view what) {
    auto s = take(n, what);
    const auto* p = reinterpret_cast<const char*>(s.data());
    const void* nul = std::memchr(p, 0, s.size());
    if (!nul) fail(fmt::format("{} is not terminated within its {} bytes", what, s.size()));
    return {p, static_cast<std::size_t>(static_cast<const char*>(nul) - p)};
  }
  /// The rest as a NUL-terminated string.
  std::string_view rest_string(std::string_view what) { return string(left(), what); }

  [[noreturn]] void fail(const std::string& message) const {
    throw DecodeError(offset_, fmt::format("{} record at offset {:#x}: {}", name(), offset_, message));
  }

 private:
  std::span<const std::byte> bytes_;
  std::uint64_t offset_;
  std::uint32_t type_;
  std::size_t pos_ = 0;

  std::string name() const {
    auto n = type_name(type_);
    return n.empty() ? fmt::format("type {}", type_) : std::string(n);
  }
  void need(std::uint64_t n, std::string_view what) {
    if (n > left()) too_short(n, what);
  }
  [[noreturn]] void too_short(std::uint64_t n, std::string_view what) const {
    if (n == ~std::uint64_t{0})
      fail(fmt::format("{} does not fit in the record ({} bytes left)", what, left()));
    fail(fmt::format("{} needs {} bytes, {} are left", what, n, left()));
  }
};

}  // namespace perfspec::record::detail
