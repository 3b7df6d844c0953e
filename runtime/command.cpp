// SPDX-License-Identifier: MIT
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/runtime.hpp"

namespace perfspec::runtime {

Target Target::command(const Command& command, bool inherit) {
  Target t = process(command.pid(), inherit);
  t.enable_on_exec = true;
  return t;
}

Command::Command(const std::vector<std::string>& argv, int stdout_fd) {
  if (argv.empty()) throw Error(ErrorKind::usage, "no command to run");
  // Build everything the child needs before fork: after it, only async-signal-safe calls.
  std::vector<std::string> words = argv;
  std::vector<char*> args;
  for (auto& a : words) args.push_back(a.data());
  args.push_back(nullptr);
  // go: the parent lets the child exec; err: the errno of a failed exec; ready: closed by the child once
  // it has its name
  int pipes[3][2];
  for (int i = 0; i < 3; ++i)
    if (::pipe2(pipes[i], O_CLOEXEC) < 0) {
      int e = errno;
      for (int j = 0; j < i; ++j) ::close(pipes[j][0]), ::close(pipes[j][1]);
      throw Error(ErrorKind::io, fmt::format("cannot create a pipe: {}", std::strerror(e)));
    }
  int(&go)[2] = pipes[0];
  int(&err)[2] = pipes[1];
  int(&ready)[2] = pipes[2];
  pid_ = ::fork();
  if (pid_ < 0) {
    int e = errno;
    for (auto& p : pipes) ::close(p[0]), ::close(p[1]);
    throw Error(ErrorKind::io, fmt::format("cannot fork: {}", std::strerror(e)));
  }
  if (pid_ == 0) {
    ::close(go[1]);
    ::close(err[0]);
    ::close(ready[0]);
    // perf's name for its command before the exec: a recording's first COMM names the samples taken
    // between the exec enabling the events and the exec's own COMM (and no sample is a perfspec's)
    ::prctl(PR_SET_NAME, "perf-exec", 0, 0, 0);
    ::close(ready[1]);
    char c;
    ssize_t n;
    do n = ::read(go[0], &c, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1) ::_exit(127);  // the parent gave up before starting us
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    if (stdout_fd >= 0 && stdout_fd != 1 && ::dup2(stdout_fd, 1) < 0) {
      int e = errno;
      (void)!::write(err[1], &e, sizeof e);
      ::_exit(126);
    }
    ::execvp(args[0], args.data());
    int e = errno;
    (void)!::write(err[1], &e, sizeof e);
    ::_exit(e == ENOENT ? 127 : 126);
  }
  ::close(go[0]);
  ::close(err[1]);
  ::close(ready[1]);
  char c;
  ssize_t n;
  do n = ::read(ready[0], &c, 1);  // end of file: the child has its name (or is gone)
  while (n < 0 && errno == EINTR);
  ::close(ready[0]);
  go_ = go[1];
  err_ = err[0];
  // A pidfd becomes readable when the child exits, so that a bounded wait sleeps until then instead of
  // waking every millisecond to ask (Linux 5.3; without it, wait() polls wait4).
#ifdef SYS_pidfd_open
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
  if (pidfd_ >= 0) ::fcntl(pidfd_, F_SETFD, FD_CLOEXEC);
#endif
}

Command::~Command() {
  if (go_ >= 0) ::close(go_);  // never started: the child exits 127
  if (err_ >= 0) ::close(err_);
  while (!reaped_ && pid_ > 0) wait(-1);
  if (pidfd_ >= 0) ::close(pidfd_);
}

int Command::start() {
  if (go_ < 0) return 0;
  char c = 'g';
  (void)!::write(go_, &c, 1);
  ::close(go_);
  go_ = -1;
  int e = 0;
  ssize_t n;
  do n = ::read(err_, &e, sizeof e);
  while (n < 0 && errno == EINTR);
  ::close(err_);
  err_ = -1;
  return n == static_cast<ssize_t>(sizeof e) ? e : 0;
}

bool Command::wait(int timeout_ms) {
  if (reaped_) return true;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
  for (;;) {
    int st = 0;
    rusage usage{};
    pid_t r = ::wait4(pid_, &st, timeout_ms < 0 ? 0 : WNOHANG, &usage);
    if (r == pid_) {
      reaped_ = true;
      status_ = st;
      user_ = static_cast<double>(usage.ru_utime.tv_sec) + static_cast<double>(usage.ru_utime.tv_usec) / 1e6;
      system_ =
          static_cast<double>(usage.ru_stime.tv_sec) + static_cast<double>(usage.ru_stime.tv_usec) / 1e6;
      return true;
    }
    if (r < 0 && errno == EINTR) {
      if (timeout_ms < 0) continue;
      return false;  // let the caller look at why it was interrupted
    }
    if (r < 0) {  // ECHILD: someone else reaped it
      reaped_ = true;
      return true;
    }
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    if (pidfd_ >= 0) {
      pollfd p{pidfd_, POLLIN, 0};
      auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
      if (::poll(&p, 1, static_cast<int>(left)) < 0 && errno == EINTR) return false;
    } else {
      ::usleep(1000);
    }
  }
}

int Command::exit_status() const {
  if (WIFEXITED(status_)) return WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) return 128 + WTERMSIG(status_);
  return 0;
}

double Command::user_seconds() const { return user_; }
double Command::system_seconds() const { return system_; }

void Command::signal(int sig) {
  if (!reaped_ && pid_ > 0) ::kill(pid_, sig);
}

}  // namespace perfspec::runtime
