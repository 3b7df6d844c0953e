// SPDX-License-Identifier: MIT
// `perfspec stat`: count a command, a process or CPUs, and print what was counted and what was not.
// The counting is the library's (StatCounting); this is perf stat's loop around it: runs, intervals,
// -D, --control, signals, and the layouts chosen.
#include "tools/stat.hpp"

#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "perfspec/perfspec.hpp"
#include "perfspec/stat_counting.hpp"
#include "spec/printable.hpp"
#include "tools/control.hpp"
#include "tools/live.hpp"
#include "tools/signals.hpp"
#include "tools/stat_request.hpp"

namespace perfspec::tools {

namespace {

using Clock = std::chrono::steady_clock;

// The digits of the environment's LC_NUMERIC locale (LC_ALL, else LC_NUMERIC, else LANG), as perf's
// setlocale(LC_ALL, "") makes printf write them: its decimal point, and with `%'` (-B, `group`) its
// thousands' groups; nullopt where they are C's, or the machine lacks that locale (setlocale fails and
// perf stays in C).
std::optional<DigitStyle> environment_digits(bool group) {
  locale_t numeric = ::newlocale(LC_NUMERIC_MASK, "", static_cast<locale_t>(nullptr));
  if (!numeric) return std::nullopt;
  DigitStyle d{::nl_langinfo_l(THOUSEP, numeric), ::nl_langinfo_l(GROUPING, numeric),
               ::nl_langinfo_l(RADIXCHAR, numeric)};
  ::freelocale(numeric);
  if (!group || d.separator.empty() || d.grouping.empty() || d.grouping[0] == 0 ||
      static_cast<unsigned char>(d.grouping[0]) >= 127)
    d.separator.clear();
  if (d.point.empty()) d.point = ".";
  if (d.separator.empty() && d.point == ".") return std::nullopt;
  return d;
}

// One `perfspec stat` invocation: its output, its request, each run's loop and what it prints.
class StatSession {
 public:
  explicit StatSession(const StatOptions& o) : o_(o), machine_(o.sysfs, o.machine) {}

  // -o FILE: closed, and an error when what was written did not reach it (a full disk); the counts on
  // standard error likewise (2>/dev/full: the exit status says what the lost text would have).
  void close_output() {
    if (!file_) {
      if (std::ferror(stderr)) throw Error(ErrorKind::io, "write failure on standard error");
      return;
    }
    out_ = stderr;
    std::FILE* f = file_.release();
    const bool failed = std::ferror(f) != 0;
    errno = 0;
    if (std::fclose(f) != 0 || failed)
      throw Error(ErrorKind::io, errno ? fmt::format("cannot write '{}': {}", o_.output, std::strerror(errno))
                                       : fmt::format("cannot write '{}'", o_.output));
  }

  int run() {
    open_output();
    check_stat_options(o_);
    if (o_.interval_clear && !::isatty(::fileno(out_)))  // perf's words
      throw Error(ErrorKind::usage, "--interval-clear does not work with output");
    if (int status = resolve_stat_request(o_, machine_, request_)) return status;
    target_ = stat_target(o_, request_);
    run_.cgroups = request_.cgroups;
    run_.digits = environment_digits(o_.big_num);
    control_.open(o_.control);
    catch_stop_signals();
    std::vector<StatReport> reports;
    std::vector<double> elapsed;
    int status = 0;
    for (int r = 0; r < std::max(1, o_.repeat); ++r) {
      // perf's run_perf_stat: --pre (a failure ends perf stat with its status), sync, the run, --post
      if (int pre = shell(o_.pre)) return pre;
      if (o_.sync) ::sync();
      auto one = run_once();
      if (!one) return status_;
      if (int post = shell(o_.post)) return post;
      status = status_;
      reports.push_back(std::move(*one));
      elapsed.push_back(run_.elapsed_seconds);
      if (signals_received) break;
    }
    if (o_.interval_ms && !o_.summary) return status;
    StatReport report = average(reports);
    StatRun r = run_;
    r.summary = o_.interval_ms != 0;  // --summary: the whole run after its intervals
    r.no_csv_summary = o_.no_csv_summary;
    if (reports.size() > 1) {
      auto [mean, sd] = mean_and_stddev(elapsed);
      r.elapsed_seconds = mean;
      r.elapsed_stddev = sd;
      if (o_.table) r.run_seconds = elapsed;
      r.user_seconds.reset();
      r.system_seconds.reset();
    }
    emit(report, r);
    return status;
  }

 private:
  void open_output() {
    if (o_.output.empty() || o_.quiet) return;  // perf's --quiet writes no -o file at all
    file_.reset(std::fopen(o_.output.c_str(), o_.append ? "a" : "w"));
    if (!file_)
      throw Error(ErrorKind::io, fmt::format("cannot write '{}': {}", o_.output, std::strerror(errno)));
    out_ = file_.get();
    // perf's first line of a -o file in its layouts but JSON (the text and -x): when the count started
    // (ctime(3)'s text, with its newline), and a blank line; not in perfspec's own CSV and JSON
    if (!o_.perf_json && (o_.field_separator || o_.format == "text")) {
      const std::time_t now = std::time(nullptr);
      char when[64];
      if (::ctime_r(&now, when)) std::fprintf(out_, "# started on %s\n", when);
    }
  }

  // system(3)'s status of a --pre/--post command as perf stat returns it (0: none, or it succeeded)
  static int shell(const std::string& command) {
    if (command.empty()) return 0;
    std::fflush(nullptr);
    const int status = std::system(command.c_str());
    if (status == -1)
      throw Error(ErrorKind::io, fmt::format("cannot run '{}': {}", command, std::strerror(errno)));
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }

  void emit(const StatReport& counted, const StatRun& r) {
    if (o_.quiet) return;  // perf's print_counters
    // -M: the metrics of what is shown (an interval's counts, the mean of runs), not of the totals.
    StatReport report = counted;
    if (!request_.plans.empty()) attach_metrics(report, request_.plans);
    const auto& events = counting_ ? counting_->events() : request_.set;
    StatRun shown = r;
    shown.metric_only = o_.metric_only;
    // perf colours on a terminal (util/color.c); here, when what is written is one.
    shown.color = o_.color == "always" || (o_.color == "auto" && ::isatty(::fileno(out_)));
    std::string text = o_.field_separator    ? stat_perf_csv(events, report, shown, *o_.field_separator)
                       : o_.perf_json        ? stat_perf_json(events, report, shown)
                       : o_.format == "json" ? stat_json(events, report, shown)
                       : o_.format == "csv"  ? stat_csv(events, report, shown, !csv_header_done_)
                                             : stat_text(events, report, shown);
    csv_header_done_ = true;
    // a failure stays in the stream's error flag, which close_output reports
    (void)write_through_signals(out_, text);
  }

  // The counts of the interval that ends now (since the last one printed, or since the start).
  void print_interval(StatReport now) {
    StatRun r = run_;
    r.interval_end = counting_->seconds();
    r.elapsed_seconds = *r.interval_end;
    // perf's print_header counts 0..25 before it prints the header again: every 26 intervals.
    r.print_interval_header = intervals_printed_ % 26 == 0 || o_.interval_clear;
    // perf's --interval-clear: the terminal cleared (CONSOLE_CLEAR and puts' newline on standard
    // output), the header again
    if (o_.interval_clear && !o_.quiet) std::fputs("\033[H\033[2J\n", stdout), std::fflush(stdout);
    emit(previous_.units.empty() ? now : interval_delta(now, previous_), r);
    ++intervals_printed_;
    previous_ = std::move(now);
  }

  void set_enabled(bool on) {
    if (o_.null_run || on == counting_->enabled()) return;
    if (on)
      counting_->enable();
    else
      counting_->disable();
    std::fputs(on ? "Events enabled\n" : "Events disabled\n", stderr);
  }

  void handle_control() {
    const auto commands = control_.poll();
    if (control_.take_dropped() && !said_dropped_) {  // once: a descriptor of garbage would say it forever
      std::fputs("perfspec stat: --control: a line longer than 4096 bytes was dropped (said once)\n", stderr);
      said_dropped_ = true;
    }
    for (const auto& cmd : commands) {
      if (cmd == "enable" || cmd == "e") {
        set_enabled(true);
      } else if (cmd == "disable" || cmd == "d") {
        set_enabled(false);
      } else if (cmd == "stop") {
        stop_ = true;
      } else if (cmd != "ping") {
        std::fprintf(stderr, "perfspec stat: --control: unknown command '%s' (enable, disable, ping, stop)\n",
                     cmd.c_str());
      }
      control_.ack();
    }
  }

  // Whether every event that failed is one this machine does not support: perf stat skips those
  // (its stat_handle_error: EINVAL, ENOSYS, ENOENT, ENXIO, EOPNOTSUPP) and counts on; another failure
  // (ESRCH: the process is gone; EACCES) stops it.
  static bool only_unsupported(const StatReport& report) {
    for (const auto& unit : report.units)
      for (const auto& cell : unit.cells)
        if (const auto& f = cell.count.failure) {
          const int e = f->error;
          if (e != EINVAL && e != ENOSYS && e != ENOENT && e != ENXIO && e != EOPNOTSUPP) return false;
        }
    return true;
  }

  // --filter: a filter the kernel refuses is the user's to mend, not an event to show <not supported>
  // (perf stat ends there too): each said, with the kernel's reason. Whether there was one.
  bool refused_filter(StatCounting& c) const {
    if (request_.filters.empty()) return false;
    const StatReport report = c.read();
    if (report.units.empty()) return false;
    std::vector<std::optional<runtime::Failure>> failures;
    for (const auto& cell : report.units.front().cells) failures.push_back(cell.count.failure);
    failures.resize(c.events().events.size());
    auto refused = [&](std::size_t i) { return failures[i] && failures[i]->filter_refused; };
    bool any = false;
    for (std::size_t i = 0; i < failures.size(); ++i) any = any || refused(i);
    if (any)
      (void)say_open_failures("stat", "count", c.events(), failures,
                              [&](std::size_t i) { return !refused(i); });
    return any;
  }

  // One run: open, count until done, read. nullopt: stop with status_ (nothing counted).
  std::optional<StatReport> run_once() {
    counting_.reset();  // the last run's counters closed before the next one's open
    counting_ = std::make_unique<StatCounting>(o_.null_run ? EventSet{} : request_.set, target_, machine_);
    StatCounting& c = *counting_;
    run_.target = stat_target_words(target_);
    // perf's wall time of every interval, the last partial one too: the period asked for (its
    // walltime_nsecs_stats in process_interval), what "CPUs utilized" divides by
    if (o_.interval_ms) run_.interval_seconds = static_cast<double>(o_.interval_ms) / 1000.0;
    // A group whose members count on other CPUs than its leader: each such member alone, said as perf
    // stat says it (once, before the first run).
    if (!ungroup_said_) {
      ungroup_said_ = true;
      std::fputs(ungroup_warning(c.ungrouped(), o_.verbose > 0).c_str(), stderr);
    }
    // -vv: the attrs opened, as perf stat -vv shows them.
    if (o_.verbose >= 2 && !o_.null_run) std::fputs(to_text(c.events()).c_str(), stderr);
    previous_ = StatReport{};
    intervals_printed_ = 0;
    stop_ = interval_count_reached_ = timed_out_ = false;
    if (refused_filter(c)) {  // perf stat's "failed to set filter" ends it before anything runs
      status_ = 3;
      return std::nullopt;
    }
    if (o_.delay_ms > 0 || o_.delay_ms == -1) std::fputs("Events disabled\n", stderr);
    if (int e = c.start()) {
      std::fprintf(stderr, "perfspec stat: cannot run '%s': %s\n", o_.command[0].c_str(), std::strerror(e));
      status_ = c.exit_status();
      return std::nullopt;
    }
    const auto& events = request_.set.events;
    const bool only_tool_events = std::all_of(
        events.begin(), events.end(), [](const ResolvedEvent& e) { return e.tool != ToolEvent::none; });
    if (!o_.null_run && !c.has_command() && c.open_fds() == 0 && !only_tool_events &&
        !only_unsupported(c.read())) {
      // Counting an existing process or CPUs with nothing open would wait for nothing (a zombie's pid
      // gives ESRCH for every event): the reasons, and a failure at once, as perf stops there too.
      // Events this machine does not support are shown <not supported> until the end instead, as perf
      // counts on past them.
      run_.elapsed_seconds = c.seconds();
      emit(c.read(), run_);
      std::fprintf(stderr, "perfspec stat: no event could be opened for %s: nothing to count\n",
                   run_.target.c_str());
      status_ = 1;
      return std::nullopt;
    }
    count_until_done(c);
    return finish(c);
  }

  // A signal while a command runs: the first is the command's to act on (it gets the same one:
  // SIGTERM stays SIGTERM); a second one means stop now (the command is killed, the counts so far
  // printed). The second may have come before the loop saw the first. Whether to stop.
  bool pass_signals(StatCounting& c, int& seen) {
    const int received = signals_received;
    if (received == seen) return false;
    const bool again = seen > 0 || received - seen >= 2;
    seen = received;
    if (again) {
      c.signal(SIGKILL);
      return true;
    }
    c.signal(last_signal);
    return false;
  }

  // Until the command ends, the process is gone, a signal or --control says stop, or the intervals
  // asked for were printed; with -I, an interval each step.
  void count_until_done(StatCounting& c) {
    const int step = o_.interval_ms ? static_cast<int>(o_.interval_ms) : 100;
    const int tick = control_.active() || o_.delay_ms > 0 ? std::min(step, 10) : step;
    // The signals this run has dealt with. run() stops after a run that got one, so each one counted
    // now came in this run, some perhaps while the command was being started: those are passed on too.
    int signals_seen = 0;
    const auto start = Clock::now();
    auto next_interval = start + std::chrono::milliseconds(step);
    const auto enable_at = start + std::chrono::milliseconds(std::max(0, o_.delay_ms));
    const auto stop_at = start + std::chrono::milliseconds(o_.timeout_ms);
    bool delay_over = o_.delay_ms <= 0;
    for (;;) {
      if (!delay_over && Clock::now() >= enable_at) {
        delay_over = true;
        set_enabled(true);
        c.restart_clock();  // perf's time elapsed counts from here
        next_interval = Clock::now() + std::chrono::milliseconds(step);
      }
      handle_control();
      if (stop_) break;
      int wait_ms = tick;
      if (o_.timeout_ms) {
        // not a moment early: the time left rounded up (perf's elapsed time is never under --timeout)
        const auto now = Clock::now();
        if (now >= stop_at) {
          timed_out_ = true;
          break;
        }
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(stop_at - now).count();
        wait_ms = static_cast<int>(std::min<long long>(wait_ms, left));
      }
      if (o_.interval_ms)
        wait_ms = static_cast<int>(std::clamp<long long>(
            std::chrono::duration_cast<std::chrono::milliseconds>(next_interval - Clock::now()).count(), 0,
            tick));
      if (c.wait(wait_ms)) break;
      if (c.has_command() ? pass_signals(c, signals_seen) : signals_received != 0) break;
      if (o_.interval_ms && Clock::now() >= next_interval) {
        print_interval(c.read());
        next_interval += std::chrono::milliseconds(step);
        if (o_.interval_count && intervals_printed_ >= static_cast<int>(o_.interval_count)) {
          interval_count_reached_ = true;
          break;
        }
      }
    }
  }

  StatReport finish(StatCounting& c) {
    // --interval-count ends the count, and the command with it (as perf stops it).
    StatReport report = c.finish(run_, interval_count_reached_ || timed_out_);
    run_.null_run = o_.null_run;
    if (c.has_command()) status_ = c.exit_status();
    if (timed_out_ && c.has_command()) {
      // perf's --timeout: the command ended by SIGTERM, said as psignal(3) says it, and no failure
      if (status_ > 128) std::fprintf(stderr, "%s: %s\n", o_.command[0].c_str(), strsignal(status_ - 128));
      status_ = 0;
    }
    if (o_.verbose) print_verbose(c, report);
    if (o_.interval_ms && !interval_count_reached_) {
      // The last, partial interval, as perf prints it; the only one when the run was shorter than -I.
      StatRun r = run_;
      r.interval_end = run_.elapsed_seconds;
      r.print_interval_header = intervals_printed_ % 26 == 0 || o_.interval_clear;
      // perf's --interval-clear: the terminal cleared (CONSOLE_CLEAR and puts' newline on standard
      // output), the header again
      if (o_.interval_clear && !o_.quiet) std::fputs("\033[H\033[2J\n", stdout), std::fflush(stdout);
      emit(previous_.units.empty() ? report : interval_delta(report, previous_), r);
    }
    return report;
  }

  // -v: each event's raw count, enabled and running times, per aggregate.
  static void print_verbose(const StatCounting& c, const StatReport& report) {
    const auto& events = c.events().events;
    for (std::size_t e = 0; e < events.size() && !report.units.empty(); ++e)
      for (const auto& u : report.units) {
        const auto& n = u.cells[e].count;
        std::fprintf(stderr, "%s%s%s: %llu %llu %llu\n", spec::printable(events[e].name).c_str(),
                     u.label.empty() ? "" : " ", u.label.c_str(), static_cast<unsigned long long>(n.raw),
                     static_cast<unsigned long long>(n.time_enabled),
                     static_cast<unsigned long long>(n.time_running));
      }
  }

  const StatOptions& o_;
  spec::Machine machine_;
  std::FILE* out_ = stderr;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_{nullptr, &std::fclose};
  StatRequest request_;
  StatTarget target_;
  StatRun run_;
  Control control_;
  bool said_dropped_ = false;
  std::unique_ptr<StatCounting> counting_;
  StatReport previous_;
  int intervals_printed_ = 0;
  bool interval_count_reached_ = false;
  bool timed_out_ = false;  // --timeout ended the run
  bool stop_ = false, csv_header_done_ = false;
  bool ungroup_said_ = false;
  int status_ = 0;
};

}  // namespace

int run_stat(const StatOptions& o) {
  int status = 0;
  {
    StatSession session(o);
    status = session.run();
    session.close_output();
  }
  if (o.command.empty()) end_by_stop_signal();  // the command's own status otherwise, as perf's
  return status;
}

}  // namespace perfspec::tools
