// SPDX-License-Identifier: MIT
#pragma once
// perf's --time: the stretches of a recording whose samples perf script and perf report keep.
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace perfspec::record {

/// Time ranges as perf's --time names them, in nanoseconds of the samples' clock.
///
/// Example:
/// ```
/// auto info = record::read_header_info(file);  // HEADER_SAMPLE_TIME: the first and last sample
/// auto ranges = record::TimeRanges::parse("10%/2", info.sample_time->first, info.sample_time->second);
/// if (ranges.keeps(sample.time)) ...
/// ```
class TimeRanges {
 public:
  /// Every time.
  TimeRanges() = default;
  /// Reads perf's forms: `START,STOP` in seconds with up to 9 decimals (either may be left out: from the
  /// start, to the end), several separated by spaces, in order and apart; or percents of the recording
  /// from `first` to `last` (its first and last sample): `10%/2` the second tenth, `0%-10%`, several
  /// separated by commas, `25%` the first quarter. A range of percents ends a nanosecond before the
  /// next one starts, but the last ends at `last`. Throws Error (usage) for a form perf refuses,
  /// naming it; `has_sample_time` false refuses percents (the file does not say its first and last
  /// sample).
  static TimeRanges parse(std::string_view text, std::uint64_t first, std::uint64_t last,
                          bool has_sample_time = true);

  /// Whether a sample at `time` is kept: one of time 0 (no time) always is.
  bool keeps(std::uint64_t time) const;
  /// The ranges, as (start, end): 0 is open (from the start, to the end).
  const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges() const { return ranges_; }

 private:
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges_;
};

}  // namespace perfspec::record
