// SPDX-License-Identifier: MIT
#pragma once
// perf's --control: commands arrive on a file descriptor or a FIFO, one per line; an ack FIFO or fd
// gets "ack\n" after each.
#include <string>
#include <utility>
#include <vector>

namespace perfspec::tools {

class Control {
 public:
  Control() = default;
  Control(const Control&) = delete;
  Control& operator=(const Control&) = delete;
  ~Control();
  /// `fifo:CTL[,ACK]` or `fd:CTL[,ACK]`; empty: no control. Throws Error (usage).
  void open(const std::string& spec);
  bool active() const { return ctl_ >= 0; }
  /// The commands that arrived since the last call (at most 64 KiB of them a call).
  std::vector<std::string> poll();
  /// How many lines longer than 4096 bytes poll() dropped since this was last asked.
  std::size_t take_dropped() { return std::exchange(dropped_, 0); }
  void ack();

 private:
  int ctl_ = -1, ack_ = -1, owned_ctl_ = -1, owned_ack_ = -1;
  std::string pending_;
  std::size_t dropped_ = 0;
};

/// `s` cut at each comma (an empty string is one empty word).
std::vector<std::string> split_commas(const std::string& s);

}  // namespace perfspec::tools
