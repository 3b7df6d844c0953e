// SPDX-License-Identifier: MIT
#pragma once
// tests/workload/workload.c `--wait touch N`, exec'd (a forked copy of the test would fault on its
// copy-on-write pages now and then): it touches N fresh pages when told, and nothing else faults
// between its "ready" and its "done". For tests that count a process's page faults exactly.
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace test {

class WaitingWorkload {
 public:
  explicit WaitingWorkload(int pages) {
    int go[2], done[2];
    if (::pipe(go) != 0) throw std::runtime_error("pipe");
    if (::pipe(done) != 0) {
      ::close(go[0]);
      ::close(go[1]);
      throw std::runtime_error("pipe");
    }
    const std::string n = std::to_string(pages);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(go[0], 0);
      ::dup2(done[1], 1);
      for (int fd : {go[0], go[1], done[0], done[1]}) ::close(fd);
      ::execl(PERFSPEC_WORKLOAD, "workload", "--wait", "touch", n.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(go[0]);
    ::close(done[1]);
    go_ = go[1];
    done_ = done[0];
  }
  ~WaitingWorkload() {
    end();
    if (done_ >= 0) ::close(done_);
  }
  WaitingWorkload(const WaitingWorkload&) = delete;
  WaitingWorkload& operator=(const WaitingWorkload&) = delete;

  pid_t pid() const { return pid_; }  ///< -1 once reaped
  /// Its next line on standard output ("ready", "done").
  std::string said() const {
    std::string line;
    char c;
    while (::read(done_, &c, 1) == 1 && c != '\n') line += c;
    return line;
  }
  /// Tells it to touch its pages. False when it could not be told.
  bool go() const { return ::write(go_, "go\n", 3) == 3; }
  /// Until it is asleep again in read(2): what it does on the way is counted before.
  void asleep() const {
    for (int i = 0; i < 30000; ++i) {  // 30 s at most; then the counts say what was missed
      std::ifstream stat(fmt::format("/proc/{}/stat", pid_));
      std::string all((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
      auto paren = all.rfind(')');
      if (paren != std::string::npos && paren + 2 < all.size() && all[paren + 2] == 'S') return;
      ::usleep(1000);
    }
  }
  /// The end of its standard input: it ends (a zombie until end() or the destructor reaps it).
  void close_input() {
    if (go_ >= 0) ::close(go_);
    go_ = -1;
  }
  /// Ends it and reaps it.
  void end() {
    close_input();
    if (pid_ > 0) {
      int status;
      ::waitpid(pid_, &status, 0);
      pid_ = -1;
    }
  }

 private:
  pid_t pid_ = -1;
  int go_ = -1, done_ = -1;
};

}  // namespace test
