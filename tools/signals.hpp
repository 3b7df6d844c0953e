// SPDX-License-Identifier: MIT
#pragma once
// Signals to the command: SIGINT, SIGTERM and SIGHUP counted instead of ending perfspec while it
// runs or watches a workload (stat, record), and SIGPIPE made an error a write can report.
#include <csignal>

namespace perfspec::tools {

/// SIGINT, SIGTERM and SIGHUP to perfspec: how many came, and the last one (catch_stop_signals).
extern volatile sig_atomic_t signals_received;
extern volatile sig_atomic_t last_signal;
/// Count those signals instead of dying of them.
void catch_stop_signals();
/// SIGPIPE makes a write to a pipe whose reader left fail with EPIPE instead of ending perfspec, so that
/// it can say so and end its command. A handler, not SIG_IGN: a command perfspec runs gets the default
/// back at exec.
void catch_broken_pipe();

}  // namespace perfspec::tools
