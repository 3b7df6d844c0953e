// `perfspec stat`: count a command, a process or CPUs, and print what was counted and what was not.
#include "tools/stat.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "perfspec/perfspec.hpp"
#include "perfspec/runtime.hpp"
#include "runtime/cpulist.hpp"

namespace perfspec::tools {
namespace {

volatile sig_atomic_t interrupted = 0;
extern "C" void on_interrupt(int) { interrupted = 1; }

std::string shell_words(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

// A child held before exec until the counters are open (enable_on_exec then starts them at exec).
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv) {
    int go[2], err[2];
    if (::pipe2(go, O_CLOEXEC) < 0 || ::pipe2(err, O_CLOEXEC) < 0)
      throw Error(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
    pid_ = ::fork();
    if (pid_ < 0) throw Error(fmt::format("cannot fork: {}", std::strerror(errno)));
    if (pid_ == 0) {
      ::close(go[1]);
      ::close(err[0]);
      char c;
      if (::read(go[0], &c, 1) != 1) ::_exit(127);  // the parent gave up before starting us
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::signal(SIGINT, SIG_DFL);
      ::execvp(args[0], args.data());
      int e = errno;
      (void)!::write(err[1], &e, sizeof e);
      ::_exit(e == ENOENT ? 127 : 126);
    }
    ::close(go[0]);
    ::close(err[1]);
    go_ = go[1];
    err_ = err[0];
  }
  ~Child() {
    if (go_ >= 0) ::close(go_);  // never started: the child exits 127
    if (err_ >= 0) ::close(err_);
    if (!reaped_ && pid_ > 0) {
      int st;
      ::waitpid(pid_, &st, 0);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  int pid() const { return pid_; }
  /// Let the child exec; returns the exec errno, 0 on success.
  int start() {
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
    return n == sizeof e ? e : 0;
  }
  /// Wait up to `timeout_ms` (-1: forever). Returns true when it exited; fills status and rusage.
  bool wait(int timeout_ms, int& status, rusage& usage) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      pid_t r = ::wait4(pid_, &status, timeout_ms < 0 && !interrupted ? 0 : WNOHANG, &usage);
      if (r == pid_) {
        reaped_ = true;
        return true;
      }
      if (r < 0 && errno != EINTR) {
        reaped_ = true;
        return true;
      }
      if (interrupted) {
        ::kill(pid_, SIGINT);  // forward Ctrl-C sent to us alone; the child decides
        interrupted = 0;
      }
      if (timeout_ms >= 0 && std::chrono::steady_clock::now() >= deadline) return false;
      if (r == 0) ::usleep(1000);
    }
  }

 private:
  pid_t pid_ = -1;
  int go_ = -1, err_ = -1;
  bool reaped_ = false;
};

std::vector<int> threads_of(int pid) {
  std::vector<int> out;
  std::string dir = fmt::format("/proc/{}/task", pid);
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') out.push_back(std::atoi(e->d_name));
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool alive(int pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

std::vector<runtime::Count> delta(const std::vector<runtime::Count>& now, const std::vector<runtime::Count>& before) {
  auto out = now;
  for (std::size_t i = 0; i < out.size() && i < before.size(); ++i) {
    out[i].raw -= std::min(out[i].raw, before[i].raw);
    out[i].time_enabled -= std::min(out[i].time_enabled, before[i].time_enabled);
    out[i].time_running -= std::min(out[i].time_running, before[i].time_running);
    if (out[i].state == runtime::Count::State::counted && out[i].time_running == 0)
      out[i].state = runtime::Count::State::not_counted;
  }
  return out;
}

}  // namespace

int run_stat(const StatOptions& o) {
  std::FILE* out = stderr;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(nullptr, &std::fclose);
  if (!o.output.empty()) {
    file.reset(std::fopen(o.output.c_str(), "w"));
    if (!file) throw Error(fmt::format("cannot write '{}': {}", o.output, std::strerror(errno)));
    out = file.get();
  }
  if (o.pid && (o.all_cpus || !o.cpus.empty())) throw Error("-p cannot be combined with -a or -C");
  if (o.pid && !o.command.empty()) throw Error("-p counts an existing process: give no command");
  if (!o.pid && !o.all_cpus && o.cpus.empty() && o.command.empty())
    throw Error("nothing to count: give a command (after --), -p PID, -a or -C CPUS");

  spec::Machine machine(o.sysfs);
  std::vector<std::string> lists = o.events;
  if (lists.empty()) lists.push_back(default_stat_events);
  EventSet set;
  for (const auto& text : lists) {
    EventSet part;
    try {
      part = resolve(text, machine);
    } catch (const Error& e) {
      std::fputs(render(e, text).c_str(), stderr);
      return 1;
    }
    std::size_t base = set.events.size(), gbase = set.groups.size();
    for (auto& e : part.events) e.leader += base, e.group += gbase, set.events.push_back(std::move(e));
    for (auto& g : part.groups) {
      for (auto& m : g.members) m += base;
      set.groups.push_back(std::move(g));
    }
  }

  runtime::Target target;
  StatRun run;
  std::unique_ptr<Child> child;
  if (o.pid) {
    if (!alive(*o.pid)) throw Error(fmt::format("no process with pid {}", *o.pid));
    target = runtime::Target::process(*o.pid, o.inherit);
    target.threads = threads_of(*o.pid);
    run.target = fmt::format("process id '{}'", *o.pid);
  } else if (o.all_cpus || !o.cpus.empty()) {
    target = runtime::Target::system_wide(o.cpus.empty() ? std::vector<int>{} : runtime::parse_cpu_list(o.cpus));
    run.target = o.cpus.empty() ? "'system wide'" : fmt::format("'CPU(s) {}'", o.cpus);
  }
  if (!o.command.empty()) {
    child = std::make_unique<Child>(o.command);
    if (!o.all_cpus && o.cpus.empty()) {
      target = runtime::Target::process(child->pid(), o.inherit);
      target.enable_on_exec = true;
    }
    run.target = fmt::format("'{}'", shell_words(o.command));
  }

  runtime::OpenOptions open_options;
  open_options.sysfs_root = o.sysfs;
  auto counters = runtime::Counters::open(set, target, open_options);

  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  ::sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);

  auto start = std::chrono::steady_clock::now();
  if (!target.enable_on_exec) counters.enable();
  int status = 0;
  rusage usage{};
  bool exited = false;
  if (child) {
    if (int e = child->start()) {
      std::fprintf(stderr, "perfspec stat: cannot run '%s': %s\n", o.command[0].c_str(), std::strerror(e));
      child->wait(-1, status, usage);
      return e == ENOENT ? 127 : 126;
    }
  }
  auto seconds_since_start = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  auto emit = [&](const std::vector<runtime::Count>& counts, StatRun r) {
    std::string text = o.format == "json"  ? stat_json(counters.events(), counts, r)
                       : o.format == "csv" ? stat_csv(counters.events(), counts, r)
                                           : stat_text(counters.events(), counts, r);
    std::fputs(text.c_str(), out);
    std::fflush(out);
  };

  std::vector<runtime::Count> previous;
  auto tick = [&] {
    auto now = counters.read();
    StatRun r = run;
    r.interval_end = seconds_since_start();
    r.elapsed_seconds = *r.interval_end;
    emit(previous.empty() ? now : delta(now, previous), r);
    previous = std::move(now);
  };
  int step = o.interval_ms ? static_cast<int>(o.interval_ms) : 100;
  for (;;) {
    if (child) {
      exited = child->wait(step, status, usage);
      if (exited) break;
    } else {
      ::usleep(static_cast<useconds_t>(std::min(step, 100)) * 1000);
      if (interrupted) break;
      if (o.pid && !alive(*o.pid)) break;
    }
    if (o.interval_ms) tick();
  }
  counters.disable();
  auto counts = counters.read();
  run.elapsed_seconds = seconds_since_start();
  if (child) {
    run.user_seconds = static_cast<double>(usage.ru_utime.tv_sec) + static_cast<double>(usage.ru_utime.tv_usec) / 1e6;
    run.system_seconds = static_cast<double>(usage.ru_stime.tv_sec) + static_cast<double>(usage.ru_stime.tv_usec) / 1e6;
  }
  int exit_code = 0;
  if (exited) exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 0;
  if (child) run.exit_status = exit_code;
  if (o.interval_ms) {
    if (!previous.empty()) {
      StatRun r = run;
      r.interval_end = run.elapsed_seconds;
      emit(delta(counts, previous), r);
    }
  } else {
    emit(counts, run);
  }
  return exit_code;
}

}  // namespace perfspec::tools
