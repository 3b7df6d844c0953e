// SPDX-License-Identifier: MIT
#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/metric.hpp"
#include "spec/printable.hpp"

namespace perfspec {

namespace {
// Show at most this many characters of a long input around the error, as perf does with `..`.
constexpr std::size_t window = 72;

// A message or help names things from trees and tables, which may hold control bytes: each line of
// it is escaped (a help may hold several lines).
std::string shown_lines(std::string_view text) {
  std::string out;
  for (std::size_t begin = 0;;) {
    std::size_t end = text.find('\n', begin);
    out += spec::printable(text.substr(begin, end == std::string_view::npos ? end : end - begin));
    if (end == std::string_view::npos) return out;
    out += '\n';
    begin = end + 1;
  }
}
}  // namespace

std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::syntax: return "syntax";
    case ErrorKind::unknown_name: return "unknown name";
    case ErrorKind::bad_value: return "bad value";
    case ErrorKind::machine: return "machine description";
    case ErrorKind::io: return "I/O";
    case ErrorKind::permission: return "permission";
    case ErrorKind::usage: return "usage";
  }
  return "bad value";
}

namespace {

// The columns a terminal gives `text`: one per character (UTF-8 continuation bytes take none).
std::size_t width(std::string_view text) {
  std::size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  return n;
}

// An error rendered under `input`, which the line `head'<input>'` shows (head is `event syntax error: `
// for an event list, `metric 'NAME': ` for a metric); `topic` leads the message of an error without a
// position.
std::string render_under(const Error& error, std::string_view input, const Origin& origin,
                         std::string_view head, std::string_view topic) {
  std::string out;
  if (!error.positioned()) {
    if (!origin.file.empty())
      out += origin.line ? fmt::format("{}:{}:{}: ", spec::printable(origin.file), origin.line, origin.column)
                         : fmt::format("{}: ", spec::printable(origin.file));
    out += fmt::format("error: {}{}\n", topic, shown_lines(error.message()));
    if (!error.help().empty()) out += fmt::format("help: {}\n", shown_lines(error.help()));
    return out;
  }
  std::size_t at = std::min<std::size_t>(error.span().begin, input.size());
  if (!origin.file.empty()) {
    // Offsets are bytes into the string as the host format delivered it (escapes already removed);
    // Origin::column_of maps them back to the file.
    // A file position, when the origin knows the line (a file named without one: just the file).
    if (origin.line)
      out += fmt::format("{}:{}:{}: error: {}\n", spec::printable(origin.file),
                         origin.line_of(static_cast<std::uint32_t>(at)),
                         origin.column_of(static_cast<std::uint32_t>(at)), shown_lines(error.message()));
    else
      out += fmt::format("{}: error: {}\n", spec::printable(origin.file), shown_lines(error.message()));
  }
  std::size_t first = 0;
  std::string shown(input);
  std::string prefix = fmt::format("{}'", head);
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
  for (auto& c : shown)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  out += fmt::format("{}{}'\n", prefix, shown);
  out +=
      fmt::format("{}\\___ {}\n", std::string(width(prefix) + at - first, ' '), shown_lines(error.message()));
  if (!error.help().empty()) out += fmt::format("help: {}\n", shown_lines(error.help()));
  return out;
}

}  // namespace

std::string render(const Error& error, std::string_view input, const Origin& origin) {
  return render_under(error, input, origin, "event syntax error: ", "");
}

std::string metric::render(const Error& error, std::string_view metric_name, std::string_view expr,
                           const Origin& origin) {
  // No name: the error is in a request for metrics (`-M ipc,nosuch`), not in a metric.
  if (metric_name.empty()) return render_under(error, expr, origin, "metrics: ", "metrics: ");
  std::string name = spec::printable(metric_name);
  return render_under(error, expr, origin, fmt::format("metric '{}': ", name),
                      fmt::format("metric '{}': ", name));
}

}  // namespace perfspec
