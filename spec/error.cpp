#include <fmt/format.h>

#include "perfspec/error.hpp"

namespace perfspec {

namespace {
// Show at most this many characters of a long input around the error, as perf does with `..`.
constexpr std::size_t window = 72;
}  // namespace

std::string render(const Error& error, std::string_view input, const Origin& origin) {
  std::string out;
  if (!error.positioned()) {
    if (!origin.file.empty()) out += fmt::format("{}:{}:{}: ", origin.file, origin.line, origin.column);
    out += fmt::format("error: {}\n", error.message());
    if (!error.help().empty()) out += fmt::format("help: {}\n", error.help());
    return out;
  }
  std::size_t at = std::min<std::size_t>(error.span().begin, input.size());
  if (!origin.file.empty()) {
    // Offsets are bytes into the string as the host format delivered it (escapes already removed);
    // Origin::column_of maps them back to the file.
    out += fmt::format("{}:{}:{}: error: {}\n", origin.file, origin.line,
                       origin.column_of(static_cast<std::uint32_t>(at)), error.message());
  }
  std::size_t first = 0;
  std::string shown(input);
  std::string prefix = "event syntax error: '";
  if (input.size() > window) {
    first = at > window / 2 ? at - window / 2 : 0;
    shown = std::string(input.substr(first, window));
    if (first > 0) {
      shown = ".." + shown;
      at += 2;  // the caret moves right by the two dots
    }
    if (first + window < input.size()) shown += "..";
  }
  // Control characters would shift the caret; show them as '?'.
  for (auto& c : shown) if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  out += fmt::format("{}{}'\n", prefix, shown);
  out += fmt::format("{}\\___ {}\n", std::string(prefix.size() + at - first, ' '), error.message());
  if (!error.help().empty()) out += fmt::format("help: {}\n", error.help());
  return out;
}

}  // namespace perfspec
