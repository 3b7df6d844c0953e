#pragma once
// Positioned errors: every diagnostic perfspec produces about user text carries the byte span of the
// text that caused it, and one renderer draws it perf-style (input line, caret, message, help).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace perfspec {

/// A half-open byte range [begin, end) into the event string that was parsed.
struct Span {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  friend bool operator==(const Span&, const Span&) = default;
};

/// Where an event string came from, so diagnostics can point into the user's file.
///
/// Offsets in errors are bytes of the string perfspec was given. When the string sits in the file as
/// written, its byte k is at `column + k` of `line`. When the host format removed escapes first (TOML
/// `"cpu/name=\"x\"/"` is 2 bytes longer in the file than the string), pass `columns`: the file
/// column of each byte of the string, so byte k is at `columns[k]`.
///
/// Example: `Origin{"bench.toml", 12, 9}` for a string whose first character is at line 12, column 9;
/// `render(e, text, origin)` then starts with `bench.toml:12:9+offset: error: ...`.
struct Origin {
  Origin() = default;
  Origin(std::string file_, std::uint32_t line_, std::uint32_t column_, std::vector<std::uint32_t> columns_ = {})
      : file(std::move(file_)), line(line_), column(column_), columns(std::move(columns_)) {}
  std::string file;        ///< empty: the string came from the command line
  std::uint32_t line = 0;  ///< 1-based; 0 when unknown
  std::uint32_t column = 0;
  std::vector<std::uint32_t> columns;  ///< optional: file column of each byte of the string
  /// The file column of byte `offset` of the string.
  std::uint32_t column_of(std::uint32_t offset) const {
    if (!columns.empty()) return offset < columns.size() ? columns[offset] : columns.back() + (offset - static_cast<std::uint32_t>(columns.size()) + 1);
    return column + offset;
  }
};

/// The one error type for bad user input (event strings) and bad machine descriptions (sysfs files).
/// `span` is meaningful when `positioned` is true.
///
/// Example:
/// ```
/// try { resolve(text, machine); }
/// catch (const perfspec::Error& e) { std::cerr << e.message() << " at " << e.span().begin << '\n' << e.help(); }
/// ```
class Error : public std::runtime_error {
 public:
  Error(std::string message, Span span, std::string help = {})
      : std::runtime_error(message), message_(std::move(message)), help_(std::move(help)), span_(span), positioned_(true) {}
  explicit Error(std::string message, std::string help = {})
      : std::runtime_error(message), message_(std::move(message)), help_(std::move(help)) {}

  const std::string& message() const noexcept { return message_; }
  const std::string& help() const noexcept { return help_; }
  Span span() const noexcept { return span_; }
  bool positioned() const noexcept { return positioned_; }

 private:
  std::string message_;
  std::string help_;
  Span span_{};
  bool positioned_ = false;
};

/// Render an error perf-style:
/// ```
/// event syntax error: 'cpu/foo=1/'
///                          \___ unknown term 'foo' for pmu 'cpu'
/// ```
/// followed by a `help:` line when the error has one. With an origin, a first line
/// `bench.toml:12:13: error: ...` names the file position of the offending character.
///
/// Example: `std::fputs(perfspec::render(e, text).c_str(), stderr);`
std::string render(const Error& error, std::string_view input, const Origin& origin = {});

}  // namespace perfspec
