// SPDX-License-Identifier: MIT
#pragma once
// How the `perfspec` command reports an error on stderr, in one place for every subcommand: as text
// (perf-style, a caret under the event string) or, under `--format json`, as one line of JSON of the
// schema perfspec-error/1 (docs/output-formats.md). The exit status is the same either way.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "perfspec/error.hpp"

namespace perfspec::tools {

enum class ErrorFormat { text, json };

/// The error format that goes with an output format: JSON errors for `--format json`, text for the
/// others (text, csv).
ErrorFormat error_format(std::string_view output_format);

/// The error format the command-line words ask for, before or without parsing them (CLI11's own errors
/// come before `--format` is parsed): JSON when the last `--format VALUE` or `--format=VALUE` before a
/// `--` says `json`. `words` are the words after the program's name; stat's command is not among them.
ErrorFormat error_format_of(const std::vector<std::string>& words);

/// An error about the event string `input`: perf-style with a caret in text, `input` and the error's
/// span in JSON. Returns the exit status of the error's kind (tools/exit_status.hpp).
int report_error(const Error& error, std::string_view input, ErrorFormat format);
/// An error with no event string in sight: `perfspec: error: MESSAGE` and `help: ...` in text, no
/// input and no span in JSON. Returns the exit status of the error's kind.
int report_error(const Error& error, ErrorFormat format);
/// An exception that is no perfspec::Error, a bug: `perfspec: internal error: WHAT` in text, kind
/// `internal` in JSON. Returns 70 (EX_SOFTWARE).
int report_internal(std::string_view what, ErrorFormat format);

/// Flushes `file` (named `what` in the error, e.g. "standard output") and throws Error (io) when
/// anything written to it was not: a full disk, /dev/full, a closed descriptor. Output that was lost
/// is an error, never a success.
void flush_output(std::FILE* file, std::string_view what);
/// A mistake on the command line found before a subcommand runs (by CLI11, or a misspelt subcommand):
/// the JSON line of kind `usage` with MESSAGE and HELP, for the caller to print.
std::string usage_json(std::string_view message, std::string_view help);

}  // namespace perfspec::tools
