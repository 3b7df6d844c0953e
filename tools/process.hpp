// SPDX-License-Identifier: MIT
#pragma once
// Processes and signals, as the commands that run or watch a workload (stat, record) see them.
#include <csignal>
#include <optional>
#include <string>
#include <vector>

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

/// The numbered entries of a /proc folder: the processes of /proc, the threads of /proc/PID/task.
std::vector<int> numbered_entries(const std::string& dir);
std::vector<int> threads_of(int pid);
/// Every thread of every process, as perf lists them from /proc.
std::vector<int> all_threads();

enum class Process { running, zombie, gone };
/// Whether `pid` still runs. A zombie counts nothing, and its parent may never reap it.
Process process_state(int pid);
inline bool alive(int pid) { return process_state(pid) == Process::running; }

/// A thread's name now (/proc/TID/comm, without its newline); nullopt once it is gone.
std::optional<std::string> comm_of(int tid);

/// Where cgroups are: a cgroup v1 hierarchy with the perf_event controller, else the cgroup2 mount,
/// from /proc/mounts (as perf finds it); empty when neither is mounted.
std::string cgroup_root();

}  // namespace perfspec::tools
