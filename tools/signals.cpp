// SPDX-License-Identifier: MIT
#include "tools/signals.hpp"

#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <initializer_list>

namespace perfspec::tools {

// SIGINT, SIGTERM and SIGHUP to perfspec: how many came, and the last one.
volatile sig_atomic_t signals_received = 0;
volatile sig_atomic_t last_signal = 0;
namespace {
extern "C" void on_signal(int sig) {
  last_signal = sig;
  signals_received = signals_received + 1;
}

}  // namespace

void catch_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  ::sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    // SIGHUP ignored when perfspec started (nohup) stays ignored, by perfspec and by the command it
    // runs, as perf leaves it. SIGINT and SIGTERM are caught as perf catches them, even where the shell
    // ignores SIGINT for a background job.
    struct sigaction now {};
    if (sig == SIGHUP && ::sigaction(sig, nullptr, &now) == 0 && now.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &sa, nullptr);
  }
}

void end_by_stop_signal() {
  if (!signals_received) return;
  const int sig = last_signal;
  std::fflush(nullptr);
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  ::sigemptyset(&sa.sa_mask);
  ::sigaction(sig, &sa, nullptr);
  sigset_t one;
  ::sigemptyset(&one);
  ::sigaddset(&one, sig);
  ::sigprocmask(SIG_UNBLOCK, &one, nullptr);
  ::raise(sig);
}

bool write_through_signals(std::FILE* out, std::string_view text) {
  while (!text.empty()) {
    errno = 0;
    text.remove_prefix(std::fwrite(text.data(), 1, text.size(), out));
    if (text.empty()) break;
    if (errno != EINTR) return false;
    std::clearerr(out);
  }
  for (;;) {
    errno = 0;
    if (std::fflush(out) == 0) return true;
    if (errno != EINTR) return false;
    std::clearerr(out);
  }
}

extern "C" void on_broken_pipe(int) {}

volatile sig_atomic_t switch_signals = 0;
extern "C" void on_switch_signal(int) { switch_signals = switch_signals + 1; }

void catch_switch_signal() {
  struct sigaction sa {};
  sa.sa_handler = on_switch_signal;
  ::sigemptyset(&sa.sa_mask);
  ::sigaction(SIGUSR2, &sa, nullptr);
}

void catch_broken_pipe() {
  struct sigaction sa {};
  sa.sa_handler = on_broken_pipe;
  ::sigemptyset(&sa.sa_mask);
  ::sigaction(SIGPIPE, &sa, nullptr);
}

}  // namespace perfspec::tools
