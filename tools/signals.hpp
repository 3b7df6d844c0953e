// SPDX-License-Identifier: MIT
#pragma once
// Signals to the command: SIGINT, SIGTERM and SIGHUP counted instead of ending perfspec while it
// runs or watches a workload (stat, record), and SIGPIPE made an error a write can report.
#include <csignal>
#include <cstdio>
#include <string_view>

namespace perfspec::tools {

/// SIGINT, SIGTERM and SIGHUP to perfspec: how many came, and the last one (catch_stop_signals).
extern volatile sig_atomic_t signals_received;
extern volatile sig_atomic_t last_signal;
/// Count those signals instead of dying of them; SIGHUP ignored when perfspec started (nohup) stays ignored.
void catch_stop_signals();
/// After a run with no command of its own (-a, -p, -t, or nothing named: the whole system) that a
/// stop signal ended, end perfspec by that signal, as perf stat and perf record do (their sig_atexit,
/// record__sig_exit): a shell loop around them sees the interrupt (status 128 + SIGINT). Does nothing
/// when no stop signal came.
void end_by_stop_signal();
/// SIGPIPE makes a write to a pipe whose reader left fail with EPIPE instead of ending perfspec, so that
/// it can say so and end its command. A handler, not SIG_IGN: a command perfspec runs gets the default
/// back at exec.
void catch_broken_pipe();
/// SIGUSR2 to perfspec (record --switch-output=signal): how many came, counted by catch_switch_signal's
/// handler instead of ending perfspec.
extern volatile sig_atomic_t switch_signals;
void catch_switch_signal();
/// Writes all of `text` to `out` and flushes it, again where a caught signal interrupted the write:
/// catch_stop_signals' handlers do not restart system calls (so that waiting ends at once), and stdio
/// gives up on a write that EINTR cut short. False, with errno, for another error (a full disk, EPIPE).
bool write_through_signals(std::FILE* out, std::string_view text);

}  // namespace perfspec::tools
