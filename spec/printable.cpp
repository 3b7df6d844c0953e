// SPDX-License-Identifier: MIT
#include "spec/printable.hpp"

#include <fmt/format.h>

namespace perfspec::spec {

namespace {

// The length of the UTF-8 sequence at text[i] that is fine to print, or 0: a control character, a
// C1 control, an overlong form, a surrogate, past U+10FFFF or cut short.
std::size_t printable_sequence(std::string_view text, std::size_t i) {
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned c = b(i);
  if (c >= 0x20 && c < 0x7f) return 1;
  std::size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xc0) != 0x80) return 0;
  unsigned second = b(i + 1);
  if (c == 0xc2 && second < 0xa0) return 0;   // C1 controls
  if (c == 0xe0 && second < 0xa0) return 0;   // overlong
  if (c == 0xed && second >= 0xa0) return 0;  // surrogates
  if (c == 0xf0 && second < 0x90) return 0;   // overlong
  if (c == 0xf4 && second >= 0x90) return 0;  // past U+10FFFF
  return n;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (std::size_t n = printable_sequence(text, i)) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
      ++i;
    }
  }
  return out;
}

}  // namespace perfspec::spec
