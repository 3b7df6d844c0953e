// SPDX-License-Identifier: MIT
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
/// column of each byte of the string, so byte k is at `columns[k]`. A string that spans lines in its
/// file (a TOML `"""` string) passes `lines` too: the file line of each byte.
///
/// Example: `Origin{"bench.toml", 12, 9}` for a string whose first character is at line 12, column 9;
/// `render(e, text, origin)` then starts with `bench.toml:12:9+offset: error: ...`.
struct Origin {
  Origin() = default;
  Origin(std::string file_, std::uint32_t line_, std::uint32_t column_,
         std::vector<std::uint32_t> columns_ = {}, std::vector<std::uint32_t> lines_ = {})
      : file(std::move(file_)),
        line(line_),
        column(column_),
        columns(std::move(columns_)),
        lines(std::move(lines_)) {}
  std::string file;        ///< empty: the string came from the command line
  std::uint32_t line = 0;  ///< 1-based; 0 when unknown
  std::uint32_t column = 0;
  std::vector<std::uint32_t> columns;  ///< optional: file column of each byte of the string
  std::vector<std::uint32_t> lines;    ///< optional: file line of each byte (empty: all on `line`)
  /// The file column of byte `offset` of the string.
  std::uint32_t column_of(std::uint32_t offset) const {
    if (!columns.empty())
      return offset < columns.size()
                 ? columns[offset]
                 : columns.back() + (offset - static_cast<std::uint32_t>(columns.size()) + 1);
    return column + offset;
  }
  /// The file line of byte `offset` of the string (past its end: the line of its last byte).
  std::uint32_t line_of(std::uint32_t offset) const {
    if (lines.empty()) return line;
    return offset < lines.size() ? lines[offset] : lines.back();
  }
};

/// What kind of problem an Error reports, for programs that act on it: the C API returns a code per
/// kind and the `perfspec` command an exit status per kind.
enum class ErrorKind : std::uint8_t {
  syntax,        ///< the text does not follow the grammar (an event list, modifiers, JSON input)
  unknown_name,  ///< an event, PMU, term or tracepoint the machine does not have
  bad_value,     ///< a value out of range or of the wrong kind, or things that do not go together
  machine,       ///< the machine's description is malformed: a sysfs file, an event table, a mapfile
  io,            ///< a file or a system resource could not be read, written or created
  permission,    ///< this user may not read it
  usage,         ///< an argument a program passed is wrong (a negative pid, `-p` with `-a`)
};

/// Example: `error_kind_name(ErrorKind::unknown_name) == "unknown name"`.
std::string_view error_kind_name(ErrorKind kind);

/// The one error type for bad user input (event strings) and bad machine descriptions (sysfs files).
/// `span` is meaningful when `positioned` is true; `kind` says what kind of problem it is.
///
/// Example:
/// ```
/// try { resolve(text, machine); }
/// catch (const perfspec::Error& e) { std::cerr << e.message() << " at " << e.span().begin << '\n' <<
/// e.help(); }
/// ```
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message, Span span, std::string help = {})
      : std::runtime_error(message),
        message_(std::move(message)),
        help_(std::move(help)),
        span_(span),
        positioned_(true),
        kind_(kind) {}
  Error(ErrorKind kind, std::string message, std::string help = {})
      : std::runtime_error(message), message_(std::move(message)), help_(std::move(help)), kind_(kind) {}
  /// Without a kind: ErrorKind::bad_value.
  Error(std::string message, Span span, std::string help = {})
      : Error(ErrorKind::bad_value, std::move(message), span, std::move(help)) {}
  explicit Error(std::string message, std::string help = {})
      : Error(ErrorKind::bad_value, std::move(message), std::move(help)) {}

  ErrorKind kind() const noexcept { return kind_; }

  const std::string& message() const noexcept { return message_; }
  const std::string& help() const noexcept { return help_; }
  Span span() const noexcept { return span_; }
  bool positioned() const noexcept { return positioned_; }

 private:
  std::string message_;
  std::string help_;
  Span span_{};
  bool positioned_ = false;
  ErrorKind kind_ = ErrorKind::bad_value;
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
