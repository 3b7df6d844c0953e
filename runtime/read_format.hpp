// SPDX-License-Identifier: MIT
#pragma once
// What read(2) on a perf event fd returns, by the event's read_format (perf_event_open(2), "Reading
// results"); a PERF_SAMPLE_READ sample carries the same layout. Internal to runtime/.
//   without PERF_FORMAT_GROUP: value, [time_enabled], [time_running], [id], [lost]
//   with PERF_FORMAT_GROUP:    nr, [time_enabled], [time_running], nr x {value, [id], [lost]}
#include <linux/perf_event.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "spec/abi.hpp"

namespace perfspec::runtime {

/// A view of one read's words. Holds no storage; `size()` counts only the values the words hold in
/// full, so a short read can never be indexed past its end.
///
/// Example: for read_format GROUP|TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID and the words
/// `{2, 100, 50, 7, 11, 9, 12}`: `size() == 2`, `time_running() == 50`, `value(1) == 9`, `id(1) == 12`.
class ReadFormatView {
 public:
  ReadFormatView(std::uint64_t read_format, const std::uint64_t* words, std::size_t count) : words_(words) {
    const bool group = read_format & PERF_FORMAT_GROUP;
    enabled_at_ = read_format & PERF_FORMAT_TOTAL_TIME_ENABLED ? header_++ : none;
    running_at_ = read_format & PERF_FORMAT_TOTAL_TIME_RUNNING ? header_++ : none;
    id_offset_ = read_format & PERF_FORMAT_ID ? stride_++ : none;
    lost_offset_ = read_format & spec::format_lost ? stride_++ : none;
    if (!group) {
      // value first, then the times, then id and lost: one "record" starting at word 0.
      first_ = 0;
      if (id_offset_ != none) id_offset_ += header_ - 1;
      if (lost_offset_ != none) lost_offset_ += header_ - 1;
      size_ = count >= header_ - 1 + stride_ ? 1 : 0;
      return;
    }
    first_ = header_;
    std::size_t whole = count >= header_ ? (count - header_) / stride_ : 0;
    size_ = count == 0 ? 0 : static_cast<std::size_t>(std::min<std::uint64_t>(words[0], whole));
  }

  /// The values held in full.
  std::size_t size() const { return size_; }
  /// Words one read of `values` values takes.
  static std::size_t words_for(std::uint64_t read_format, std::size_t values) {
    std::size_t per = 1 + !!(read_format & PERF_FORMAT_ID) + !!(read_format & spec::format_lost);
    std::size_t head =
        !!(read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(read_format & PERF_FORMAT_TOTAL_TIME_RUNNING);
    return read_format & PERF_FORMAT_GROUP ? 1 + head + per * values : head + per;
  }
  std::uint64_t time_enabled() const { return enabled_at_ == none ? 0 : words_[enabled_at_]; }
  std::uint64_t time_running() const { return running_at_ == none ? 0 : words_[running_at_]; }
  std::uint64_t value(std::size_t k) const { return words_[first_ + k * stride_]; }
  /// The id of value k (PERF_FORMAT_ID); 0 without it.
  std::uint64_t id(std::size_t k) const {
    return id_offset_ == none ? 0 : words_[first_ + k * stride_ + id_offset_];
  }
  /// Samples lost by value k's event (spec::format_lost); 0 without it.
  std::uint64_t lost(std::size_t k) const {
    return lost_offset_ == none ? 0 : words_[first_ + k * stride_ + lost_offset_];
  }

 private:
  static constexpr std::size_t none = ~std::size_t{0};
  const std::uint64_t* words_;
  std::size_t header_ = 1;  // nr (group) or value (single), then the times
  std::size_t stride_ = 1;  // words per value
  std::size_t first_ = 0, size_ = 0;
  std::size_t enabled_at_ = none, running_at_ = none, id_offset_ = none, lost_offset_ = none;
};

}  // namespace perfspec::runtime
