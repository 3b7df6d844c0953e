// SPDX-License-Identifier: MIT
#pragma once
// perf top's screen: samples gathered by their sort keys (command, pid, binary, symbol), aged at each
// refresh as perf top ages them, and drawn as perf top's table with its header line.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace perfspec {

/// Every member has an initializer, so that `TopOptions{.sort = {...}}` names only what it sets.
struct TopOptions {
  /// perf top's --sort keys, in order: comm, pid, dso, sym (its default: dso,sym).
  std::vector<std::string> sort{"dso", "sym"};
  bool show_nr_samples = false;  ///< -n: a Samples column
  bool hide_kernel = false;      ///< -K
  bool hide_user = false;        ///< -U
  bool zero = false;             ///< -z: each refresh starts from nothing (else entries decay by 7/8)
  std::string event;             ///< the event's name, for the header ("cpu-clock:ppp")
  std::uint64_t frequency = 0;   ///< its sampling frequency (0: a period)
};

/// One sample, where it lies.
struct TopSample {
  std::string_view comm;  ///< the thread's name
  int pid = 0;
  std::string_view dso;       ///< the binary as perf names it (Location::dso); empty when none maps it
  std::string_view symbol;    ///< empty when the binary has none there
  std::uint64_t address = 0;  ///< in the binary's terms (shown when there is no symbol)
  char level = '.';           ///< 'k' kernel, '.' user
  std::uint64_t period = 1;
};

/// perf top's table of entries.
///
/// Example:
/// ```
/// TopTable top({.event = "cpu-clock", .frequency = 4000});
/// top.add({.comm = "sh", .pid = 12, .dso = "/usr/bin/dash", .symbol = "main", .period = 250000});
/// std::fputs(top.screen(120, 30).c_str(), stdout);
/// top.age();
/// ```
class TopTable {
 public:
  /// Throws Error (usage) for a sort key perfspec top does not know.
  explicit TopTable(TopOptions options);
  TopTable(TopTable&&) noexcept;
  TopTable& operator=(TopTable&&) noexcept;
  ~TopTable();

  void add(const TopSample& sample);
  /// What a refresh does after drawing: periods and counts times 7/8 (entries reaching 0 go), or all
  /// gone with `zero`.
  void age();
  /// The screen, `columns` wide and at most `lines` high: the header line (samples, event, frequency,
  /// event count, records lost since the last screen and in all), the column names, and the entries by
  /// period, most first.
  std::string screen(std::size_t columns, std::size_t lines, std::uint64_t lost = 0,
                     std::uint64_t lost_total = 0) const;
  /// Samples added since the start.
  std::uint64_t samples() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfspec
