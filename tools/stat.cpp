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
    if (!file) throw Error(perfspec::ErrorKind::io, fmt::format("cannot write '{}': {}", o.output, std::strerror(errno)));
    out = file.get();
  }
  if (o.pid && (o.all_cpus || !o.cpus.empty())) throw Error(perfspec::ErrorKind::usage, "-p cannot be combined with -a or -C");
  if (o.pid && !o.command.empty()) throw Error(perfspec::ErrorKind::usage, "-p counts an existing process: give no command");
  if (!o.pid && !o.all_cpus && o.cpus.empty() && o.command.empty())
    throw Error(perfspec::ErrorKind::usage, "nothing to count: give a command, -p PID, -a or -C CPUS");

  spec::Machine machine(o.sysfs, o.machine);
  std::vector<std::string> lists = o.events;
  if (lists.empty()) lists.push_back(default_stat_events);
  EventSet set;
  for (const auto& text : lists) {
    try {
      set.append(resolve(text, machine));
    } catch (const Error& e) {
      std::fputs(render(e, text).c_str(), stderr);
      return exit_status(e.kind());
    }
  }

  runtime::Target target;
  StatRun run;
  if (o.interval_ms) run.interval_seconds = o.interval_ms / 1000.0;
  std::unique_ptr<runtime::Command> child;
  if (o.pid) {
    switch (process_state(*o.pid)) {
      case Process::gone: throw Error(perfspec::ErrorKind::usage, fmt::format("no process with pid {}", *o.pid));
      case Process::zombie:
        throw Error(perfspec::ErrorKind::usage, fmt::format("process {} has exited (a zombie its parent has not reaped): nothing to count", *o.pid));
      case Process::running: break;
    }
    target = runtime::Target::process(*o.pid, o.inherit);
    target.threads = threads_of(*o.pid);
    run.target = fmt::format("process id '{}'", *o.pid);
  } else if (o.all_cpus || !o.cpus.empty()) {
    target = runtime::Target::system_wide(o.cpus.empty() ? std::vector<int>{} : runtime::parse_cpu_list(o.cpus));
    run.target = o.cpus.empty() ? "'system wide'" : fmt::format("'CPU(s) {}'", o.cpus);
  }
  if (!o.command.empty()) {
    child = std::make_unique<runtime::Command>(o.command);
    if (!o.all_cpus && o.cpus.empty()) target = runtime::Target::command(*child, o.inherit);
    run.target = fmt::format("'{}'", shell_words(o.command));
  }

  runtime::OpenOptions open_options;
  auto counters = runtime::Counters::open(set, target, open_options);
  catch_stop_signals();

  auto start = std::chrono::steady_clock::now();
  if (!target.enable_on_exec) counters.enable();
  if (child) {
    if (int e = child->start()) {
      std::fprintf(stderr, "perfspec stat: cannot run '%s': %s\n", o.command[0].c_str(), std::strerror(e));
      child->wait();
      return child->exit_status();
    }
  }
  auto seconds_since_start = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  auto emit = [&](const std::vector<runtime::Count>& counts, StatRun r) {
    std::string text = o.field_separator ? stat_perf_csv(counters.events(), counts, r, *o.field_separator)
                       : o.format == "json" ? stat_json(counters.events(), counts, r)
                       : o.format == "csv"  ? stat_csv(counters.events(), counts, r)
                                            : stat_text(counters.events(), counts, r);
    std::fputs(text.c_str(), out);
    std::fflush(out);
  };

  if (!child && counters.open_fds() == 0) {
    // Counting an existing process or CPUs with nothing open would wait for nothing (a zombie's pid
    // gives ESRCH for every event): the reasons, and a failure at once, as perf stops there too.
    run.elapsed_seconds = seconds_since_start();
    emit(counters.read(), run);
    std::fprintf(stderr, "perfspec stat: no event could be opened for %s: nothing to count\n", run.target.c_str());
    return 1;
  }
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
  int signals_seen = 0;
  for (;;) {
    if (child) {
      if (child->wait(step)) break;
      if (signals_received != signals_seen) {
        // The first signal is the command's to act on: it gets the same one (SIGTERM stays SIGTERM).
        // A second one means stop now: the command is killed, and the counts so far are printed.
        bool again = signals_seen > 0;
        signals_seen = signals_received;
        if (again) {
          child->signal(SIGKILL);
          child->wait();
          break;
        }
        child->signal(last_signal);
      }
    } else {
      ::usleep(static_cast<useconds_t>(std::min(step, 100)) * 1000);
      if (signals_received) break;
      if (o.pid && !alive(*o.pid)) break;
    }
    if (o.interval_ms) tick();
  }
  counters.disable();
  auto counts = counters.read();
  run.elapsed_seconds = seconds_since_start();
  int exit_code = 0;
  if (child) {
    run.user_seconds = child->user_seconds();
    run.system_seconds = child->system_seconds();
    exit_code = child->exit_status();
    run.exit_status = exit_code;
  }
  if (o.interval_ms) {
    // The last, partial interval, as perf prints it; the only one when the run was shorter than -I.
    StatRun r = run;
    r.interval_end = run.elapsed_seconds;
    emit(previous.empty() ? counts : delta(counts, previous), r);
  } else {
    emit(counts, run);
  }
  return exit_code;
}

}  // namespace perfspec::tools
