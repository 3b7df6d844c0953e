#pragma once
// Positioned errors: every diagnostic perfspec produces about user text carries the byte span of the
// text that caused it, and one renderer draws it perf-style (input line, caret, message, help).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace perfspec {

/// A half-open byte range [begin, end) into the event string that was parsed.
struct Span {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  friend bool operator==(const Span&, const Span&) = default;
};

/// Where an event string came from, so diagnostics can point into the user's file.
/// Example: `Origin{"bench.toml", 12, 9}` for a string whose first character is at line 12, column 9.
struct Origin {
  std::string file;        ///< empty: the string came from the command line
  std::uint32_t line = 0;  ///< 1-based; 0 when unknown
  std::uint32_t column = 0;
};

/// The one error type for bad user input (event strings) and bad machine descriptions (sysfs files).
/// `span` is meaningful when `positioned` is true.
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
std::string render(const Error& error, std::string_view input, const Origin& origin = {});

}  // namespace perfspec
