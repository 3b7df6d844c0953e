// SPDX-License-Identifier: MIT
#pragma once
// `perfspec top`: perf top's live profile, redrawn every few seconds on the terminal.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "perfspec/spec.hpp"

namespace perfspec::tools {

struct TopCliOptions {
  std::vector<std::string> events;              ///< -e (default cycles:P, else cpu-clock as perf falls back)
  std::uint64_t period = 0;                     ///< -c
  std::optional<std::uint64_t> frequency;       ///< -F (default 4000, lowered to the kernel's limit)
  bool frequency_max = false;                   ///< -F max: the kernel's limit
  std::string pids, tids, cpus;                 ///< -p, -t, -C
  bool all_cpus = false;                        ///< -a (the default without -p/-t)
  double delay = 2;                             ///< -d: seconds between refreshes
  std::string sort = "dso,sym";                 ///< -s
  bool show_nr_samples = false;                 ///< -n
  bool hide_kernel = false, hide_user = false;  ///< -K, -U
  bool zero = false;                            ///< -z
  bool callgraph = false;   ///< -g: callchains recorded (the table shows each sample's own place)
  std::size_t entries = 0;  ///< -E: the most rows (0: the terminal's height)
  std::size_t pages = 0;    ///< -m
  std::string sysfs = "/sys";
  spec::MachineOptions machine;
};

/// Runs `perfspec top` until q, Ctrl-C or the processes it watches are gone.
int run_top(const TopCliOptions& options);

}  // namespace perfspec::tools
