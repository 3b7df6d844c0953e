// SPDX-License-Identifier: MIT
#pragma once
// The exporter's configuration file (TOML, read with toml++): named sets of event strings and metrics,
// each with its target, aggregation and labels. Every value keeps where it is written in the file, so
// that an error found later (an event string that does not resolve, a metric that does not exist, a
// cgroup that is not there) points at the character in the user's file.
//
// Example file:
// ```
// [exporter]
// listen = "127.0.0.1:9464"
//
// [[metric]]
// name = "faults_per_second"
// expr = "page-faults / duration_time"
//
// [[set]]
// name = "system"
// events = ["task-clock", "page-faults"]
// metrics = ["faults_per_second"]
// aggregation = "cpu"
// labels = { team = "db" }
// ```
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "perfspec/error.hpp"
#include "perfspec/metric.hpp"

namespace perfspec::exporter {

/// A string value of the file and where each of its bytes is written there (escapes and all).
struct Located {
  std::string text;
  Origin origin;
};

/// How a set's counts are summed into series.
enum class Grouping { total, cpu, core, socket };
std::string_view grouping_name(Grouping g);

/// One `[[set]]`.
struct SetConfig {
  std::string name;
  Origin name_at;
  std::vector<Located> events;
  std::vector<Located> metrics;  ///< metric names or groups, as -M takes them
  enum class Target { system, cgroup, pid, command };
  Target target = Target::system;
  Located cgroup;   ///< Target::cgroup: the path under the cgroup file system's root
  int pid = 0;      ///< Target::pid
  Located command;  ///< Target::command: a process's name as /proc/PID/comm has it
  Located cpus;     ///< Target::system, Target::cgroup: a CPU list ("0-3,8"); empty: every online CPU
  Grouping grouping = Grouping::total;
  Origin grouping_at;
  std::vector<std::pair<std::string, std::string>> labels;  ///< extra labels, sorted by name
};

/// The whole file.
struct Config {
  std::string file;
  std::string text;            ///< the file's contents, for showing its lines in errors
  std::string listen;          ///< `[exporter] listen`; empty: not given
  double read_timeout = 0.5;   ///< seconds a scrape waits for the counters before serving the last read
  double metric_window = 1.0;  ///< seconds: the shortest interval a metric's gauge is computed over
  std::vector<metric::Definition> metrics;  ///< `[[metric]]` definitions, origins in the file
  std::vector<SetConfig> sets;
};

/// A configuration that cannot be used: `what()` is the whole rendered report, a first line
/// `FILE:LINE:COLUMN: error: MESSAGE`, the file's line with a caret under the column, and a
/// `help:` line when there is help.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(ErrorKind kind, const std::string& rendered) : std::runtime_error(rendered), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

/// Whether `address` is HOST:PORT as the exporter listens on it (`127.0.0.1:9464`, `[::1]:9464`,
/// `0.0.0.0:0`; port 0: any free port).
bool valid_listen(std::string_view address);

/// Parse the configuration text `text` of file `file` (the name errors give). Checks the file's own
/// rules (TOML syntax, known keys, value types, one target per set, unique set names, label names, at
/// least one set);
/// event strings, metrics and cgroups are checked against the machine by the exporter. Throws
/// ConfigError.
Config parse_config(std::string_view text, const std::string& file);
/// The largest configuration read: 16 MiB (a file of 20,000 metrics has about 1 MiB).
inline constexpr std::uint64_t max_config_bytes = std::uint64_t{16} << 20;
/// Read and parse the file at `path`: a regular file of at most max_config_bytes, opened without
/// blocking (a FIFO is refused, not waited on). Throws ConfigError (ErrorKind::io when it cannot be read).
Config load_config(const std::string& path);

/// The report of an error about byte `offset` of a value written at `origin` in `config`'s file: a
/// first line `FILE:LINE:COLUMN: error: MESSAGE`, the file's line with a caret, a `help:` line.
ConfigError error_at(const Config& config, const Origin& origin, std::uint32_t offset, ErrorKind kind,
                     std::string_view message, std::string_view help = {});
/// The same for any file of the exporter's (its web configuration too): `FILE:LINE:COLUMN: error:
/// MESSAGE`, the line of `text` with a caret under the column (1-based, bytes), then `help:` when given.
ConfigError error_in(std::string_view file, std::string_view text, std::uint32_t line, std::uint32_t column,
                     ErrorKind kind, std::string_view message, std::string_view help = {});
/// A configuration file's bytes: a regular file of at most max_config_bytes, opened without blocking.
/// Throws ConfigError (io): `FILE: error: cannot read WHAT: REASON`.
std::string read_config_file(const std::string& path, std::string_view what = "the configuration");

}  // namespace perfspec::exporter
