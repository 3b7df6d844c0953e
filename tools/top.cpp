// SPDX-License-Identifier: MIT
// `perfspec top`: the events sampled across the system (or -p/-t/-C) with a runtime::Sampler, each
// sample placed by a record::Symbolizer (fed what existed before, as perf synthesizes it, and the
// records as they come), gathered in a TopTable and drawn every -d seconds, perf top's way: the
// screen cleared, its header, the entries most first. q quits on a terminal, as Ctrl-C does anywhere.
#include "tools/top.hpp"

#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "perfspec/record.hpp"
#include "perfspec/resolve.hpp"
#include "perfspec/runtime.hpp"
#include "perfspec/sampling.hpp"
#include "perfspec/symbols.hpp"
#include "perfspec/top.hpp"
#include "runtime/cpulist.hpp"
#include "runtime/process.hpp"
#include "tools/control.hpp"
#include "tools/live.hpp"
#include "tools/report.hpp"
#include "tools/signals.hpp"

namespace perfspec::tools {

namespace {

// The terminal on standard input in non-canonical mode without echo while top runs (a key is read as
// it is pressed), put back as it was on every way out.
class KeyboardMode {
 public:
  KeyboardMode() {
    if (!::isatty(STDIN_FILENO) || ::tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    active_ = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  ~KeyboardMode() {
    if (active_) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
  KeyboardMode(const KeyboardMode&) = delete;
  KeyboardMode& operator=(const KeyboardMode&) = delete;
  // Whether q or Q was pressed.
  bool quit() const {
    if (!active_) return false;
    char c = 0;
    while (::read(STDIN_FILENO, &c, 1) == 1)
      if (c == 'q' || c == 'Q') return true;
    return false;
  }

 private:
  termios saved_{};
  bool active_ = false;
};

runtime::Target target_of(const TopCliOptions& o) {
  if (!o.pids.empty() || !o.tids.empty()) return processes_target(o.pids, o.tids, true);
  return runtime::Target::system_wide(o.cpus.empty() ? std::vector<int>{} : runtime::parse_cpu_list(o.cpus));
}

class Top {
 public:
  explicit Top(const TopCliOptions& o) : o_(o), machine_(o.sysfs, o.machine) {}
  int run();

 private:
  const TopCliOptions& o_;
  spec::Machine machine_;
  record::Symbolizer symbols_;
  record::Threads threads_;
  record::Formats formats_;

  runtime::Sampler open(EventSet& set, const runtime::Target& t, const runtime::SamplingOptions& so);
  void place(std::span<const std::byte> bytes, record::Record& r, TopTable& table);
  void loop(runtime::Sampler& sampler, TopTable& table);
};

// perf's fallback for cycles where the machine has no such counter: cpu-clock with its modifiers.
runtime::Sampler Top::open(EventSet& set, const runtime::Target& t, const runtime::SamplingOptions& so) {
  auto sampler = runtime::Sampler::open(set, t, so);
  const bool cpus = t.kind == runtime::Target::Kind::cpus;
  bool changed = false;
  for (std::size_t i = 0; i < set.events.size(); ++i) {
    Attr& a = set.events[i].attr;
    if (sampler.opened(i) || !fall_back_from_cycles(a, sampler.failures()[i], cpus)) continue;
    // named as perf names it then: by the attr, `P` having asked for the most precise (3), which a
    // software event takes
    if (set.events[i].precise_max) a.precise_ip = 3;
    set.events[i].name = std::string(cpus ? "cpu-clock" : "task-clock") +
                         (a.precise_ip ? ":" + std::string(a.precise_ip, 'p') : std::string());
    set.events[i].pmu = "software";
    changed = true;
  }
  if (changed) sampler = runtime::Sampler::open(set, t, so);
  (void)say_open_failures("top", "sample", set, sampler.failures(),
                          [&](std::size_t i) { return sampler.opened(i); });
  return sampler;
}

// The terminal's size, 80x24 when standard output is none.
std::pair<std::size_t, std::size_t> screen_size() {
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0)
    return {ws.ws_col, ws.ws_row};
  return {80, 24};
}

// One record: the threads' names and the address spaces follow it; a sample goes to its entry.
void Top::place(std::span<const std::byte> bytes, record::Record& r, TopTable& table) {
  try {
    formats_.decode(bytes, 0, r);
  } catch (const record::DecodeError&) {
    return;
  }
  symbols_.apply(r);
  threads_.apply(r);
  const auto* s = r.get<record::Sample>();
  if (!s) return;
  record::Location where = symbols_.locate(s->pid, s->ip, r.misc);
  char level = record::cpumode_letter(r.misc);
  table.add({.comm = threads_.name(static_cast<std::int32_t>(s->pid), static_cast<std::int32_t>(s->tid)),
             .pid = static_cast<int>(s->pid),
             .dso = where.dso,
             .symbol = where.symbol ? std::string_view(where.symbol->name) : std::string_view(),
             .address = where.dso.empty() ? s->ip : where.dso_address,
             .level = level == 'u' ? '.' : level,
             .period = s->has(record::sample_period) ? s->period : 1});
}

// Until Ctrl-C, q or the processes watched are gone: the records read as they come, the screen drawn
// every -d seconds, then aged.
void Top::loop(runtime::Sampler& sampler, TopTable& table) {
  catch_stop_signals();
  KeyboardMode keyboard;
  sampler.enable();
  record::Record r;
  auto consume = [&](std::span<const std::byte> bytes) { place(bytes, r, table); };
  auto next =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<long>(o_.delay * 1000));
  bool gone = false;
  std::uint64_t lost_before = 0;
  while (!signals_received && !gone && !keyboard.quit()) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(next - std::chrono::steady_clock::now());
    auto p = sampler.poll(static_cast<int>(std::clamp<long long>(left.count(), 0, 100)));
    sampler.read(consume);
    gone = p.state == runtime::Wakeup::target_gone || p.state == runtime::Wakeup::failed;
    if (std::chrono::steady_clock::now() < next) continue;
    auto [columns, lines] = screen_size();
    if (o_.entries) lines = o_.entries + 2;
    std::uint64_t lost_total = std::max(sampler.losses().lost, sampler.losses().dropped);
    std::string screen = "\033[H\033[2J" + table.screen(columns, lines, lost_total - lost_before, lost_total);
    lost_before = lost_total;
    std::fwrite(screen.data(), 1, screen.size(), stdout);
    std::fflush(stdout);
    table.age();
    next += std::chrono::milliseconds(static_cast<long>(o_.delay * 1000));
  }
}

int Top::run() {
  if (o_.period && (o_.frequency || o_.frequency_max))
    throw Error(ErrorKind::usage, "-c and -F cannot go together: a period or a frequency");
  EventSet set;
  std::vector<std::string> lists = o_.events;
  if (lists.empty()) lists.push_back("cycles:P");
  for (const auto& text : lists) {
    try {
      set.append(resolve(text, machine_));
    } catch (const Error& e) {
      return report_error(e, text, ErrorFormat::text);
    }
  }
  std::vector<std::string> keys = split_commas(o_.sort);
  (void)TopTable({.sort = keys,
                  .show_nr_samples = false,
                  .hide_kernel = false,
                  .hide_user = false,
                  .zero = false,
                  .event = {},
                  .frequency = 0});  // a key top does not know, before anything opens
  std::uint64_t frequency =
      o_.period ? 0 : sampling_frequency("top", o_.frequency, o_.frequency_max, false, false);
  runtime::Target t = target_of(o_);
  runtime::SamplingOptions so;
  so.period = o_.period;
  so.frequency = frequency;
  so.sample_type = record::sample_ip | record::sample_tid | record::sample_time | record::sample_period;
  if (o_.callgraph) so.sample_type |= record::sample_callchain;
  so.pages = o_.pages;
  auto sampler = open(set, t, so);
  std::size_t opened = 0;
  for (std::size_t i = 0; i < set.events.size(); ++i) {
    if (!sampler.opened(i)) continue;
    formats_.add(sampler.attrs()[i], sampler.ids()[i]);
    ++opened;
  }
  if (!opened) return 3;
  const auto& first = *std::find_if(set.events.begin(), set.events.end(), [&](const ResolvedEvent& e) {
    return sampler.opened(&e - set.events.data());
  });
  TopTable table({.sort = keys,
                  .show_nr_samples = o_.show_nr_samples,
                  .hide_kernel = o_.hide_kernel,
                  .hide_user = o_.hide_user,
                  .zero = o_.zero,
                  .event = sampler.events().events[static_cast<std::size_t>(&first - set.events.data())].name,
                  .frequency = frequency});
  follow_existing(sampler, formats_, t, symbols_, &threads_);
  loop(sampler, table);
  sampler.disable();
  return 0;
}

}  // namespace

int run_top(const TopCliOptions& options) {
  int status = 0;
  {
    Top top(options);
    status = top.run();
  }
  end_by_stop_signal();
  return status;
}

}  // namespace perfspec::tools
