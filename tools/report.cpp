// SPDX-License-Identifier: MIT
#include "tools/report.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "perfspec/print.hpp"
#include "tools/exit_status.hpp"

namespace perfspec::tools {

ErrorFormat error_format(std::string_view output_format) {
  return output_format == "json" ? ErrorFormat::json : ErrorFormat::text;
}

ErrorFormat error_format_of(const std::vector<std::string>& words) {
  std::string_view format;
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string_view w = words[i];
    if (w == "--") break;
    if (w == "--format" && i + 1 < words.size())
      format = words[++i];
    else if (w.starts_with("--format="))
      format = w.substr(9);
  }
  return error_format(format);
}

int report_error(const Error& error, std::string_view input, ErrorFormat format) {
  std::string shown = format == ErrorFormat::json ? error_json(error, input) : render(error, input);
  std::fputs(shown.c_str(), stderr);
  return exit_status(error.kind());
}

int report_error(const Error& error, ErrorFormat format) {
  // No event string in sight: the error is shown without its position, as render() shows an
  // unpositioned one ("error: ...", "help: ..."), after the program's name.
  const Error shown = error.positioned() ? Error(error.kind(), error.message(), error.help()) : error;
  std::string text = format == ErrorFormat::json ? error_json(shown) : "perfspec: " + render(shown, {});
  std::fputs(text.c_str(), stderr);
  return exit_status(error.kind());
}

void flush_output(std::FILE* file, std::string_view what) {
  errno = 0;
  const bool failed = std::fflush(file) != 0;
  const int error = errno;
  if (!failed && !std::ferror(file)) return;
  throw Error(ErrorKind::io, error != 0 ? fmt::format("write failure on {}: {}", what, std::strerror(error))
                                        : fmt::format("write failure on {}", what));
}

int report_internal(std::string_view what, ErrorFormat format) {
  std::string text = "perfspec: internal error: " + std::string(what) + "\n";
  if (format == ErrorFormat::json) {
    // The error document with the one kind that is no ErrorKind: written by the same printer.
    auto j = nlohmann::ordered_json::parse(error_json(Error(std::string(what))));
    j["kind"] = "internal";
    text = j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  }
  std::fputs(text.c_str(), stderr);
  return 70;
}

std::string usage_json(std::string_view message, std::string_view help) {
  return error_json(Error(ErrorKind::usage, std::string(message), std::string(help)));
}

}  // namespace perfspec::tools
