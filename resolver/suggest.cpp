// SPDX-License-Identifier: MIT
// Suggestions for unknown names (resolver/suggest.hpp).
#include "resolver/suggest.hpp"

#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "spec/ascii.hpp"

namespace perfspec::resolver {

namespace {

// A column of the table per character of `b`, in a few word operations: Myers' bit-vector algorithm
// as Hyyrö states it for edit distance. `eq` holds, for each byte, the positions where the
// (lower-case) pattern has it.
struct BitPattern {
  std::array<std::uint64_t, 256> eq{};
  std::size_t length = 0;
  explicit BitPattern(std::string_view lower) : length(lower.size()) {
    for (std::size_t i = 0; i < lower.size(); ++i)
      eq[static_cast<unsigned char>(lower[i])] |= std::uint64_t{1} << i;
  }
  unsigned distance(std::string_view b) const {
    const std::uint64_t top = std::uint64_t{1} << (length - 1);
    std::uint64_t pv = ~std::uint64_t{0}, mv = 0;
    unsigned score = static_cast<unsigned>(length);
    for (char ch : b) {
      const std::uint64_t e = eq[static_cast<unsigned char>(spec::ascii_lower(ch))];
      const std::uint64_t xv = e | mv;
      const std::uint64_t xh = (((e & pv) + pv) ^ pv) | e;
      std::uint64_t ph = mv | ~(xh | pv);
      std::uint64_t mh = pv & xh;
      if (ph & top)
        ++score;
      else if (mh & top)
        --score;
      ph = (ph << 1) | 1;  // the first row grows by one per character of b
      mh <<= 1;
      pv = mh | ~(xv | ph);
      mv = ph & xv;
    }
    return score;
  }
};

static_assert(max_suggest_length + max_suggest_length / 3 < 256, "Counts hold a count in a byte");

// An edit changes the character counts by at most 2 in all (a substitution takes one away and adds
// another), so half the difference between two names' counts is a lower bound on their distance, and
// a cheap one to test.
Counts counts_of(std::string_view text) {
  Counts h{};
  for (char ch : text) ++h[static_cast<unsigned char>(spec::ascii_lower(ch)) & 63];
  return h;
}
// The sum of |a[k] - b[k]|: the test every candidate name takes, so it is done 16 bytes at a time where
// the CPU can (GCC 12 vectorizes the plain loop on its own, but not inside this file's search loop).
unsigned counts_apart(const Counts& a, const Counts& b) {
#if defined(__SSE2__) && defined(__x86_64__)
  __m128i sum = _mm_setzero_si128();
  for (std::size_t k = 0; k < a.size(); k += 16) {
    __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a.data() + k));
    __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.data() + k));
    sum = _mm_add_epi64(sum, _mm_sad_epu8(x, y));
  }
  return static_cast<unsigned>(_mm_cvtsi128_si64(sum) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(sum, sum)));
#else
  unsigned apart = 0;
  for (std::size_t k = 0; k < a.size(); ++k) apart += static_cast<unsigned>(std::abs(int{a[k]} - int{b[k]}));
  return apart;
#endif
}

}  // namespace

// A row whose cells all exceed `limit` ends the search, since later rows cannot be smaller.
unsigned edit_distance(std::string_view a, std::string_view b, unsigned limit) {
  thread_local std::vector<unsigned> prev, cur;
  prev.resize(b.size() + 1);
  cur.resize(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<unsigned>(j);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<unsigned>(i);
    unsigned row_min = cur[0];
    for (std::size_t j = 1; j <= b.size(); ++j) {
      unsigned sub = prev[j - 1] + (a[i - 1] == spec::ascii_lower(b[j - 1]) ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      row_min = std::min(row_min, cur[j]);
    }
    if (row_min > limit) return limit + 1;
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

unsigned bit_distance(std::string_view lower, std::string_view b) { return BitPattern(lower).distance(b); }

ByLength by_length(std::span<const std::string_view> candidates) {
  constexpr std::size_t longest = max_suggest_length + max_suggest_length / 3;
  ByLength out;
  out.starts.assign(longest + 2, 0);
  for (auto c : candidates)
    if (c.size() <= longest) ++out.starts[c.size() + 1];
  for (std::size_t l = 1; l < out.starts.size(); ++l) out.starts[l] += out.starts[l - 1];
  out.names.resize(out.starts.back());
  out.counts.resize(out.starts.back());
  std::vector<std::uint32_t> next(out.starts.begin(), out.starts.end() - 1);
  for (auto c : candidates)
    if (c.size() <= longest) {
      out.counts[next[c.size()]] = counts_of(c);
      out.names[next[c.size()]++] = c;
    }
  return out;
}

std::string suggest(std::string_view name, const ByLength& candidates) {
  if (name.size() > max_suggest_length) return {};
  const unsigned limit = std::max<unsigned>(2, static_cast<unsigned>(name.size() / 3));
  const std::string lower = spec::ascii_lowered(name);
  const Counts mine = counts_of(lower);
  std::optional<BitPattern> bits;
  if (!lower.empty() && lower.size() <= 64) bits.emplace(lower);
  // The closest three so far, distinct, ordered by distance and then name. Once there are three, a
  // candidate must be no farther than the third. The distance is at least the difference in length,
  // so names are taken by that difference, 0 first: close names come early, the bound shrinks, and the
  // search ends when the difference passes it. The answer does not depend on the order.
  std::vector<std::pair<unsigned, std::string_view>> best;
  auto bound = [&] { return best.size() == 3 ? best.back().first : limit; };
  auto consider = [&](std::string_view c, const Counts& theirs) {
    const unsigned within = bound();
    if ((counts_apart(mine, theirs) + 1) / 2 > within) return;
    unsigned d = bits ? bits->distance(c) : edit_distance(lower, c, within);
    if (d > within) return;
    std::pair<unsigned, std::string_view> entry{d, c};
    auto at = std::lower_bound(best.begin(), best.end(), entry);
    if (at != best.end() && *at == entry) return;  // the same name again (an alias on several PMUs)
    best.insert(at, entry);
    if (best.size() > 3) best.pop_back();
  };
  auto take_length = [&](std::size_t l) {
    if (l + 1 >= candidates.starts.size()) return;
    for (auto i = candidates.starts[l]; i < candidates.starts[l + 1]; ++i)
      consider(candidates.names[i], candidates.counts[i]);
  };
  for (std::size_t diff = 0; diff <= bound(); ++diff) {
    if (diff <= name.size()) take_length(name.size() - diff);
    if (diff > 0) take_length(name.size() + diff);
  }
  if (best.empty()) return {};
  std::string out = "did you mean ";
  for (std::size_t i = 0; i < best.size(); ++i)
    out += fmt::format("{}'{}'", i ? (i + 1 == best.size() ? " or " : ", ") : "", best[i].second);
  return out + "?";
}

std::string suggest(std::string_view name, const std::vector<std::string>& candidates) {
  std::vector<std::string_view> views(candidates.begin(), candidates.end());
  return suggest(name, by_length(views));
}

}  // namespace perfspec::resolver
