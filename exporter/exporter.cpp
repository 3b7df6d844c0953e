// SPDX-License-Identifier: MIT
// The Exporter: the configuration loaded and reloaded (what did not change keeps counting), scrapes
// served one read at a time (a scrape that waits too long gets the last read), and the exporter's own
// health series.
#include "exporter/exporter.hpp"

#include <cstdio>
#include <ctime>
#include <exception>

#include <fmt/format.h>

#include "exporter/process_metrics.hpp"
#include "exporter/set.hpp"
#include "spec/printable.hpp"

namespace perfspec::exporter {
namespace {

void gauge(std::vector<prometheus::MetricFamily>& out, const char* name, const char* help, double v,
           Labels l = {}) {
  auto f = family(name, help, prometheus::MetricType::Gauge);
  add(f, std::move(l), v);
  out.push_back(std::move(f));
}

void counter(std::vector<prometheus::MetricFamily>& out, const char* name, const char* help, double v) {
  auto f = family(name, help, prometheus::MetricType::Counter);
  add(f, {}, v);
  out.push_back(std::move(f));
}

}  // namespace

void log_to_stderr(std::string_view message) {
  std::fprintf(stderr, "perfspec exporter: %.*s\n", static_cast<int>(message.size()), message.data());
}

Exporter::Exporter(const spec::Machine& machine, std::string config_path, Log log)
    : machine_(machine),
      path_(std::move(config_path)),
      log_(std::move(log)),
      readers_(runtime::system_calls().online_cpus()) {}

std::string Exporter::reload() {
  std::unique_ptr<State> next;
  std::string error;
  // Whatever goes wrong before the new configuration is in place (a ConfigError, or memory) leaves the
  // running one counting; only the first load throws.
  try {
    next = State::prepare(load_config(path_), machine_, log_);
    next->open_new(state_.get());
  } catch (const ConfigError& e) {
    error = e.what();
    next.reset();
    if (!state_) throw;
  } catch (const std::exception& e) {
    error = fmt::format("{}: error: cannot load the configuration: {}\n", spec::printable(path_), e.what());
    next.reset();
    if (!state_) throw ConfigError(ErrorKind::io, error);
  }
  if (!next) {
    std::lock_guard lock(mutex_);
    last_reload_ = static_cast<double>(std::time(nullptr));
    ++reload_failed_;
    last_reload_succeeded_ = false;
    last_error_ = error.substr(0, error.find('\n'));
    return error;
  }
  // What is new was opened above while scrapes went on (only this thread swaps state_, and the sets'
  // keys never change); what did not change is taken over under the lock, and the old state is
  // closed after it (closing hundreds of tracepoints takes the kernel seconds).
  std::unique_ptr<State> old;
  {
    std::lock_guard lock(mutex_);
    if (state_) next->take_over(*state_);
    old = std::move(state_);
    state_ = std::move(next);
    ready_ = true;
    read_timeout_ = state_->config().read_timeout;
    last_reload_ = static_cast<double>(std::time(nullptr));
    ++reload_ok_;
    last_reload_succeeded_ = true;
    last_error_.clear();
  }
  old.reset();
  return {};
}

Config Exporter::config() const {
  std::lock_guard lock(mutex_);
  return state_ ? state_->config() : Config{};
}

bool Exporter::ready() const { return ready_.load(); }

std::string Exporter::summary() const {
  std::lock_guard lock(mutex_);
  return state_ ? state_->summary() : std::string();
}

std::vector<prometheus::MetricFamily> Exporter::Collect() const {
  std::vector<prometheus::MetricFamily> out;
  auto start = Clock::now();
  std::unique_lock lock(mutex_, std::defer_lock);
  const auto timeout = std::chrono::duration<double>(read_timeout_.load());
  if (!lock.try_lock_for(std::chrono::duration_cast<std::chrono::microseconds>(timeout))) {
    // Another scrape or a reload holds the counters longer than read_timeout: the last read, marked.
    {
      std::lock_guard cache(cache_mutex_);
      if (!last_.empty()) {
        ++busy_;
        out = last_;
        gauge(out, "perfspec_exporter_stale",
              "1 when this scrape waited too long and got the last read's series", 1);
        return out;
      }
    }
    lock.lock();  // nothing read yet: this scrape waits for the first read
  }
  std::size_t event_fds = 0;
  std::uint64_t read_errors = 0;
  if (state_) {
    out = state_->collect(&readers_);
    event_fds = state_->event_fds();
    read_errors = state_->read_errors();
  }
  const double read_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::uint64_t scrapes = ++scrapes_;
  health_series(out, event_fds, read_errors, read_seconds, scrapes);
  lock.unlock();
  std::lock_guard cache(cache_mutex_);
  if (scrapes > last_scrape_) {  // the counters only grow: a stale answer is never older than one given
    last_ = out;
    last_scrape_ = scrapes;
  }
  return out;
}

// The exporter's own series (under mutex_).
void Exporter::health_series(std::vector<prometheus::MetricFamily>& out, std::size_t event_fds,
                             std::uint64_t read_errors, double read_seconds, std::uint64_t scrapes) const {
  counter(out, "perfspec_exporter_scrapes_total", "Scrapes served with a fresh read",
          static_cast<double>(scrapes));
  counter(out, "perfspec_exporter_stale_scrapes_total",
          "Scrapes that waited longer than read_timeout and were served the last read",
          static_cast<double>(busy_.load()));
  counter(out, "perfspec_exporter_read_errors_total", "Counter reads that failed or came back short",
          static_cast<double>(read_errors));
  gauge(out, "perfspec_exporter_read_seconds", "How long this scrape's read of the counters took",
        read_seconds);
  gauge(out, "perfspec_exporter_event_fds", "Of process_open_fds, perf_event file descriptors",
        static_cast<double>(event_fds));
  auto f = family("perfspec_exporter_reloads_total", "Configuration loads, by result",
                  prometheus::MetricType::Counter);
  add(f, {{"result", "success"}}, static_cast<double>(reload_ok_));
  add(f, {{"result", "failure"}}, static_cast<double>(reload_failed_));
  out.push_back(std::move(f));
  gauge(out, "perfspec_exporter_last_reload_timestamp_seconds",
        "When the configuration was last loaded (Unix time)", last_reload_);
  gauge(out, "perfspec_exporter_last_reload_success", "1 when the last load of the configuration succeeded",
        last_reload_succeeded_ ? 1 : 0);
  if (!last_reload_succeeded_)
    gauge(
        out, "perfspec_exporter_config_error_info",
        "Why the last load of the configuration failed (the running one stays in place)", 1,
        {{"file", spec::printable(path_)}, {"error", last_error_}});  // a label is UTF-8: 0xff shown as \xff
  build_info_series(out);
  process_series(out);
}

}  // namespace perfspec::exporter
