// SPDX-License-Identifier: MIT
#pragma once
// "did you mean ...?" for unknown names: the closest known names by edit distance, ASCII case
// ignored. Internal to resolver/.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace perfspec::resolver {

/// Names longer than any real event name get no suggestions: edit distance is quadratic, and a 100 KB
/// string against thousands of table names would take seconds (found by fuzzing).
inline constexpr std::size_t max_suggest_length = 128;

/// How often each character occurs, ASCII case ignored, in 64 classes (a class may hold more than one
/// character). Names that can be suggested are shorter than 256 characters, so a count fits in a byte.
using Counts = std::array<std::uint8_t, 64>;

/// Names that could be suggested, grouped by length: those of length L are names[starts[L] ..
/// starts[L+1]), with their character counts. Names longer than any suggestion can reach (a name is at
/// most a third longer than what it corrects) are left out. The views must outlive it.
struct ByLength {
  std::vector<std::string_view> names;
  std::vector<Counts> counts;
  std::vector<std::uint32_t> starts;
};
ByLength by_length(std::span<const std::string_view> candidates);

/// "did you mean 'a', 'b' or 'c'?": the three closest candidates within a third of the name's length
/// (at least 2), by distance and then name, each once; "" when none is that close.
std::string suggest(std::string_view name, const ByLength& candidates);
std::string suggest(std::string_view name, const std::vector<std::string>& candidates);

/// Levenshtein distance between `lower` (lower case) and `b` (any case): the table, row by row; any
/// value above `limit` when the distance is above it.
unsigned edit_distance(std::string_view lower, std::string_view b, unsigned limit);
/// The same distance by Myers' bit-vector algorithm, for `lower` of 1 to 64 characters.
unsigned bit_distance(std::string_view lower, std::string_view b);

}  // namespace perfspec::resolver
