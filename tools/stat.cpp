// SPDX-License-Identifier: MIT
// `perfspec stat`: count a command, a process or CPUs, and print what was counted and what was not.
#include "tools/stat.hpp"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "perfspec/perfspec.hpp"
#include "perfspec/runtime.hpp"
#include "runtime/cpulist.hpp"
#include "tools/exit_status.hpp"

namespace perfspec::tools {
namespace {

// SIGINT, SIGTERM and SIGHUP to perfspec: how many came, and the last one.
volatile sig_atomic_t signals_received = 0;
volatile sig_atomic_t last_signal = 0;
extern "C" void on_signal(int sig) {
  last_signal = sig;
  signals_received = signals_received + 1;
}

void catch_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  ::sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

std::string shell_words(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

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

enum class Process { running, zombie, gone };

// Whether `pid` still runs. A zombie counts nothing, and its parent may never reap it.
Process process_state(int pid) {
  if (::kill(pid, 0) != 0 && errno != EPERM) return Process::gone;
  std::FILE* f = std::fopen(fmt::format("/proc/{}/stat", pid).c_str(), "r");
  if (!f) return Process::running;
  char buf[512];
  std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  // "pid (comm) S ...": the state follows the last ')' (comm may hold parentheses).
  const char* close = std::strrchr(buf, ')');
  bool dead = close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X');
  return dead ? Process::zombie : Process::running;
}

bool alive(int pid) { return process_state(pid) == Process::running; }

std::vector<runtime::Count> delta(const std::vector<runtime::Count>& now,
                                  const std::vector<runtime::Count>& before) {
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

// One `perfspec stat` run: its output, its events, its target, the counting loop and the last print.
class StatSession {
 public:
  explicit StatSession(const StatOptions& o) : o_(o), machine_(o.sysfs, o.machine) {}

  int run() {
    open_output();
    check_target_options();
    if (int status = resolve_events()) return status;
    choose_target();
    counters_.emplace(runtime::Counters::open(set_, target_, runtime::OpenOptions{}));
    catch_stop_signals();
    start_ = std::chrono::steady_clock::now();
    if (!target_.enable_on_exec) counters_->enable();
    if (child_)
      if (int e = child_->start()) {
        std::fprintf(stderr, "perfspec stat: cannot run '%s': %s\n", o_.command[0].c_str(), std::strerror(e));
        child_->wait();
        return child_->exit_status();
      }
    if (!child_ && counters_->open_fds() == 0) {
      // Counting an existing process or CPUs with nothing open would wait for nothing (a zombie's pid
      // gives ESRCH for every event): the reasons, and a failure at once, as perf stops there too.
      run_.elapsed_seconds = seconds_since_start();
      emit(counters_->read(), run_);
      std::fprintf(stderr, "perfspec stat: no event could be opened for %s: nothing to count\n",
                   run_.target.c_str());
      return 1;
    }
    count_until_done();
    return finish();
  }

 private:
  void open_output() {
    if (o_.output.empty()) return;
    file_.reset(std::fopen(o_.output.c_str(), "w"));
    if (!file_)
      throw Error(ErrorKind::io, fmt::format("cannot write '{}': {}", o_.output, std::strerror(errno)));
    out_ = file_.get();
  }

  void check_target_options() const {
    if (o_.pid && (o_.all_cpus || !o_.cpus.empty()))
      throw Error(ErrorKind::usage, "-p cannot be combined with -a or -C");
    if (o_.pid && !o_.command.empty())
      throw Error(ErrorKind::usage, "-p counts an existing process: give no command");
    if (!o_.pid && !o_.all_cpus && o_.cpus.empty() && o_.command.empty())
      throw Error(ErrorKind::usage, "nothing to count: give a command, -p PID, -a or -C CPUS");
  }

  // Every -e list into one set; a list that does not resolve is shown with its caret. 0, or the status.
  int resolve_events() {
    std::vector<std::string> lists = o_.events;
    if (lists.empty()) lists.push_back(default_stat_events);
    for (const auto& text : lists) {
      try {
        set_.append(resolve(text, machine_));
      } catch (const Error& e) {
        std::fputs(render(e, text).c_str(), stderr);
        return exit_status(e.kind());
      }
    }
    return 0;
  }

  void choose_target() {
    if (o_.interval_ms) run_.interval_seconds = o_.interval_ms / 1000.0;
    if (o_.pid) {
      switch (process_state(*o_.pid)) {
        case Process::gone: throw Error(ErrorKind::usage, fmt::format("no process with pid {}", *o_.pid));
        case Process::zombie:
          throw Error(
              ErrorKind::usage,
              fmt::format("process {} has exited (a zombie its parent has not reaped): nothing to count",
                          *o_.pid));
        case Process::running: break;
      }
      target_ = runtime::Target::process(*o_.pid, o_.inherit);
      target_.threads = threads_of(*o_.pid);
      run_.target = fmt::format("process id '{}'", *o_.pid);
    } else if (o_.all_cpus || !o_.cpus.empty()) {
      target_ = runtime::Target::system_wide(o_.cpus.empty() ? std::vector<int>{}
                                                             : runtime::parse_cpu_list(o_.cpus));
      run_.target = o_.cpus.empty() ? "'system wide'" : fmt::format("'CPU(s) {}'", o_.cpus);
    }
    if (!o_.command.empty()) {
      child_ = std::make_unique<runtime::Command>(o_.command);
      if (!o_.all_cpus && o_.cpus.empty()) target_ = runtime::Target::command(*child_, o_.inherit);
      run_.target = fmt::format("'{}'", shell_words(o_.command));
    }
  }

  double seconds_since_start() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  void emit(const std::vector<runtime::Count>& counts, const StatRun& r) {
    const auto& events = counters_->events();
    std::string text = o_.field_separator    ? stat_perf_csv(events, counts, r, *o_.field_separator)
                       : o_.format == "json" ? stat_json(events, counts, r)
                       : o_.format == "csv"  ? stat_csv(events, counts, r)
                                             : stat_text(events, counts, r);
    std::fputs(text.c_str(), out_);
    std::fflush(out_);
  }

  // The counts of the interval that ends now (since the last one printed, or since the start).
  void print_interval(std::vector<runtime::Count> now) {
    StatRun r = run_;
    r.interval_end = seconds_since_start();
    r.elapsed_seconds = *r.interval_end;
    emit(previous_.empty() ? now : delta(now, previous_), r);
    previous_ = std::move(now);
  }

  // Until the command ends, the process is gone, or a signal says stop; with -I, an interval each step.
  void count_until_done() {
    const int step = o_.interval_ms ? static_cast<int>(o_.interval_ms) : 100;
    int signals_seen = 0;
    for (;;) {
      if (child_) {
        if (child_->wait(step)) break;
        if (signals_received != signals_seen) {
          // The first signal is the command's to act on: it gets the same one (SIGTERM stays SIGTERM).
          // A second one means stop now: the command is killed, and the counts so far are printed.
          bool again = signals_seen > 0;
          signals_seen = signals_received;
          if (again) {
            child_->signal(SIGKILL);
            child_->wait();
            break;
          }
          child_->signal(last_signal);
        }
      } else {
        ::usleep(static_cast<useconds_t>(std::min(step, 100)) * 1000);
        if (signals_received) break;
        if (o_.pid && !alive(*o_.pid)) break;
      }
      if (o_.interval_ms) print_interval(counters_->read());
    }
  }

  int finish() {
    counters_->disable();
    auto counts = counters_->read();
    run_.elapsed_seconds = seconds_since_start();
    int exit_code = 0;
    if (child_) {
      run_.user_seconds = child_->user_seconds();
      run_.system_seconds = child_->system_seconds();
      exit_code = child_->exit_status();
      run_.exit_status = exit_code;
    }
    if (o_.interval_ms) {
      // The last, partial interval, as perf prints it; the only one when the run was shorter than -I.
      StatRun r = run_;
      r.interval_end = run_.elapsed_seconds;
      emit(previous_.empty() ? counts : delta(counts, previous_), r);
    } else {
      emit(counts, run_);
    }
    return exit_code;
  }

  const StatOptions& o_;
  spec::Machine machine_;
  std::FILE* out_ = stderr;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_{nullptr, &std::fclose};
  EventSet set_;
  runtime::Target target_;
  StatRun run_;
  std::unique_ptr<runtime::Command> child_;
  std::optional<runtime::Counters> counters_;
  std::chrono::steady_clock::time_point start_;
  std::vector<runtime::Count> previous_;
};

}  // namespace

int run_stat(const StatOptions& o) { return StatSession(o).run(); }

}  // namespace perfspec::tools
