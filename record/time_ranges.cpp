// SPDX-License-Identifier: MIT
// perf's --time (tools/perf/util/time-utils.c behaviour): absolute ranges in seconds, or percents of the
// recording's span from its first to its last sample.
#include "perfspec/time_ranges.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "perfspec/error.hpp"

namespace perfspec::record {

namespace {

using Range = std::pair<std::uint64_t, std::uint64_t>;

[[noreturn]] void invalid(std::string_view text, std::string_view why) {
  throw Error(
      ErrorKind::usage,
      fmt::format("--time '{}': {} (START,STOP in seconds, several apart by spaces; or percents of the "
                  "recording: 10%/2, 0%-10%,30%-40%, 25%)",
                  text, why));
}

// SECONDS[.NANOSECONDS] (at most 9 decimals), as perf's parse_nsec_time reads it.
std::optional<std::uint64_t> seconds(std::string_view s) {
  s.remove_prefix(std::min(s.find_first_not_of(" \t\n"), s.size()));
  auto dot = s.find('.');
  std::string_view whole = s.substr(0, dot);
  std::uint64_t sec = 0;
  if (!whole.empty()) {
    auto [end, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), sec);
    if (ec != std::errc{} || end != whole.data() + whole.size()) return std::nullopt;
  }
  std::uint64_t nsec = 0;
  if (dot != std::string_view::npos) {
    std::string_view frac = s.substr(dot + 1);
    if (frac.size() > 9 ||
        !std::all_of(frac.begin(), frac.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    std::string padded(frac);
    padded.resize(9, '0');
    nsec = std::strtoull(padded.c_str(), nullptr, 10);
  }
  if (sec > (~std::uint64_t{0} - nsec) / 1000000000) return std::nullopt;
  return sec * 1000000000 + nsec;
}

// START,STOP: either may be empty (0: open).
std::optional<Range> absolute(std::string_view piece) {
  auto comma = piece.find(',');
  std::string_view start = piece.substr(0, comma);
  std::string_view stop = comma == std::string_view::npos ? std::string_view{} : piece.substr(comma + 1);
  Range r{0, 0};
  if (!start.empty()) {
    auto v = seconds(start);
    if (!v) return std::nullopt;
    r.first = *v;
  }
  if (!stop.empty()) {
    auto v = seconds(stop);
    if (!v) return std::nullopt;
    r.second = *v;
  }
  if (r.second && r.second < r.first) return std::nullopt;
  return r;
}

// NN% as a fraction; what follows the '%' is not looked at (as perf's parse_percent).
std::optional<double> percent(std::string_view s) {
  auto pct = s.find('%');
  if (pct == std::string_view::npos) return std::nullopt;
  std::string number(s.substr(0, pct));
  if (number.empty()) return std::nullopt;
  char* end = nullptr;
  double d = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size()) return std::nullopt;
  return d / 100.0;
}

// The share [from, to] of [first, last], rounded to the nanosecond; it ends a nanosecond before the next
// share starts, unless it ends at `last`.
std::optional<Range> share(double from, double to, std::uint64_t first, std::uint64_t last) {
  if (from < 0.0 || from > 1.0 || to < 0.0 || to > 1.0) return std::nullopt;
  const double total = static_cast<double>(last - first);
  Range r{first + static_cast<std::uint64_t>(std::llround(from * total)),
          first + static_cast<std::uint64_t>(std::llround(to * total))};
  if (r.second > r.first && r.second != last) r.second -= 1;
  return r;
}

// P%/N: the N-th slice of P percent.
std::optional<Range> slash(std::string_view piece, std::uint64_t first, std::uint64_t last) {
  auto slash_at = piece.find('/');
  if (slash_at == std::string_view::npos) return std::nullopt;
  auto p = percent(piece.substr(0, slash_at));
  std::string_view n_text = piece.substr(slash_at + 1);
  long n = 0;
  auto [end, ec] = std::from_chars(n_text.data(), n_text.data() + n_text.size(), n);
  if (!p || ec != std::errc{} || end != n_text.data() + n_text.size() || *p <= 0.0) return std::nullopt;
  return share(*p * static_cast<double>(n - 1), *p * static_cast<double>(n), first, last);
}

// A%-B%.
std::optional<Range> dash(std::string_view piece, std::uint64_t first, std::uint64_t last) {
  auto dash_at = piece.find('-');
  if (dash_at == std::string_view::npos) return std::nullopt;
  auto from = percent(piece.substr(0, dash_at));
  auto to = percent(piece.substr(dash_at + 1));
  if (!from || !to) return std::nullopt;
  return share(*from, *to, first, last);
}

std::vector<std::string_view> split(std::string_view text, char by) {
  std::vector<std::string_view> out;
  for (;;) {
    auto at = text.find(by);
    out.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return out;
    text.remove_prefix(at + 1);
  }
}

}  // namespace

TimeRanges TimeRanges::parse(std::string_view text, std::uint64_t first, std::uint64_t last,
                             bool has_sample_time) {
  TimeRanges t;
  if (text.find('%') != std::string_view::npos) {
    if (!has_sample_time || (first == 0 && last == 0))
      invalid(text,
              "percents need the first and last sample's time, which the file does not have "
              "(HEADER_SAMPLE_TIME)");
    if (last < first) invalid(text, "the file's last sample is before its first");
    const bool by_slash = text.find('/') != std::string_view::npos;
    const bool by_dash = !by_slash && text.find('-') != std::string_view::npos;
    if (!by_slash && !by_dash && text.back() != '%') invalid(text, "a percent ends with '%'");
    auto pieces = split(text, ',');
    if (pieces.size() > 1 && pieces.back().empty()) pieces.pop_back();  // "10%/1," as perf reads it
    for (std::string_view piece : pieces) {
      std::optional<Range> r = by_slash  ? slash(piece, first, last)
                               : by_dash ? dash(piece, first, last)
                                         : share(0.0, percent(piece).value_or(-1.0), first, last);
      if (!r) invalid(text, fmt::format("'{}' is not a share of the recording", piece));
      t.ranges_.push_back(*r);
    }
    return t;
  }
  // START,STOP ranges apart by spaces: as many as there are commas
  const auto commas = static_cast<std::size_t>(std::count(text.begin(), text.end(), ','));
  if (commas == 0) invalid(text, "a range is START,STOP");
  std::string_view rest = text;
  for (std::size_t i = 0; i < commas; ++i) {
    std::string_view piece = rest;
    if (i + 1 < commas) {  // this range ends at the first space after its comma
      auto value = rest.find_first_not_of(" \t\n", rest.find(',') + 1);
      auto space = value == std::string_view::npos ? value : rest.find_first_of(" \t\n", value);
      if (space == std::string_view::npos) invalid(text, "ranges are apart by spaces");
      piece = rest.substr(0, space);
      rest = rest.substr(space);
      rest.remove_prefix(std::min(rest.find_first_not_of(" \t\n"), rest.size()));
    }
    auto r = absolute(piece);
    if (!r) invalid(text, fmt::format("'{}' is not START,STOP (seconds, at most 9 decimals)", piece));
    t.ranges_.push_back(*r);
  }
  for (std::size_t i = 0; i + 1 < t.ranges_.size(); ++i)
    if (t.ranges_[i].second >= t.ranges_[i + 1].first)
      invalid(text, "the ranges overlap or are out of order");
  return t;
}

bool TimeRanges::keeps(std::uint64_t time) const {
  if (ranges_.empty() || time == 0) return true;
  if (ranges_.size() == 1) {
    auto [start, end] = ranges_.front();
    return !((start && time < start) || (end && time > end));
  }
  return std::any_of(ranges_.begin(), ranges_.end(),
                     [&](const Range& r) { return time >= r.first && (time <= r.second || !r.second); });
}

}  // namespace perfspec::record
