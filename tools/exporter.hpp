// SPDX-License-Identifier: MIT
#pragma once
// `perfspec exporter`: a daemon that keeps the event sets and metrics of its configuration open and
// serves them to Prometheus. The HTTP side and the file format are prometheus-cpp's (civetweb) and
// toml++'s; this file holds what is perfspec's: opening each set for its target, reading on the
// scrape, the series and their labels, reloads that keep what did not change.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "perfspec/spec.hpp"
#include "tools/exporter_config.hpp"

namespace perfspec::tools::exporter {

struct ExporterOptions {
  std::string config;  ///< --config FILE
  std::string listen;  ///< --listen ADDR (wins over the file's); empty: the file's, else 127.0.0.1:9464
  bool check = false;  ///< --check: load and resolve the file, open nothing, print a summary
  int threads = 8;     ///< HTTP worker threads
  std::string sysfs = "/sys";
  spec::MachineOptions machine;
};

/// Run the exporter until SIGINT or SIGTERM; SIGHUP reloads. Returns the exit status.
int run(const ExporterOptions& options);

/// How an event's count is given in Prometheus's base units: raw * factor / divisor, in the family
/// `perfspec_event_<family>` (nanoseconds are divided by 1e9 rather than multiplied by 1e-9, which
/// would print 1.0738211640000002 for 1073821164).
struct BaseUnit {
  const char* family;    ///< "total", "seconds_total", "joules_total", "bytes_total", "scaled_total"
  double factor;         ///< multiplies the raw count (the alias's scale, and the unit's size)
  std::string unit;      ///< scaled_total: the alias's unit, as the `unit` label
  double divisor = 1.0;  ///< then divides it
};
/// Example: task-clock is {"seconds_total", 1, "", 1e9}; RAPL's energy-pkg {"joules_total", 2^-32}.
BaseUnit base_unit(const ResolvedEvent& event);

struct SetState;

/// One thread per CPU, each bound to its CPU, that run a piece of work together: the exporter reads
/// each CPU's counters on that CPU (a read of a counter counting on another CPU interrupts that CPU,
/// which costs a virtual machine dearly) and the CPUs' reads in parallel. A thread that cannot be
/// bound to its CPU (offline, outside this process's cpuset) still runs its work, from anywhere.
class CpuReaders {
 public:
  explicit CpuReaders(std::vector<int> cpus);
  ~CpuReaders();
  CpuReaders(const CpuReaders&) = delete;
  CpuReaders& operator=(const CpuReaders&) = delete;
  /// Run `work(cpu)` for every CPU, each on its thread; returns once all have returned.
  void run(const std::function<void(int cpu)>& work);
  /// Whether `cpu` has a thread here.
  bool serves(int cpu) const;

 private:
  void loop(std::size_t index);
  std::vector<int> cpus_;
  std::vector<std::thread> threads_;
  std::mutex m_;
  std::condition_variable go_, done_;
  const std::function<void(int)>* work_ = nullptr;
  std::uint64_t generation_ = 0;
  std::size_t pending_ = 0;
  bool stop_ = false;
};

/// Everything one configuration opened: resolved and ready, then kept open between scrapes.
class State {
 public:
  /// Resolve every set of `config` against `machine` (event strings, metrics, cgroups and CPU lists),
  /// throwing ConfigError at the first that does not resolve; nothing is opened.
  static std::unique_ptr<State> prepare(Config config, const spec::Machine& machine);
  ~State();

  /// Open what `prepare` resolved. A set whose key (its target, and every event's attr and group)
  /// equals one of `previous`'s takes that set's open counters and window instead of opening again (a
  /// reload keeps them counting): open_new() then take_over().
  void open(State* previous);
  /// Open the sets that no set of `previous` has the key of (without touching `previous`).
  void open_new(const State* previous);
  /// Take over `previous`'s counters for the other sets (and open those whose old target was down).
  /// The caller holds whatever keeps `previous` from being read meanwhile.
  void take_over(State& previous);

  /// Read every set now and give its series. With `readers`, each CPU's counters are read on that
  /// CPU; without, here.
  std::vector<prometheus::MetricFamily> collect(CpuReaders* readers = nullptr);

  const Config& config() const;
  /// Events and metrics the file asks for (resolved: a group string counts its members, a metric
  /// group its metrics), and how many file descriptors are open.
  std::size_t events() const;
  std::size_t metrics() const;
  /// "N sets, N events, N metrics", as --check and the log say it.
  std::string summary() const;
  std::size_t event_fds() const;
  /// Read failures since opened.
  std::uint64_t read_errors() const;

 private:
  State();
  Config config_;
  const spec::Machine* machine_ = nullptr;
  std::vector<std::unique_ptr<SetState>> sets_;
};

/// A lock that can be waited for with a time limit, made of a mutex and a condition variable
/// (std::timed_mutex waits in pthread_mutex_clocklock, which ThreadSanitizer does not see, so that
/// every access under it would be reported as a race). Meets Lockable and TimedLockable's try_lock_for.
class TimedLock {
 public:
  void lock() {
    std::unique_lock l(m_);
    free_.wait(l, [this] { return !held_; });
    held_ = true;
  }
  bool try_lock() {
    std::lock_guard l(m_);
    if (held_) return false;
    held_ = true;
    return true;
  }
  template <typename Rep, typename Period> bool try_lock_for(std::chrono::duration<Rep, Period> d) {
    std::unique_lock l(m_);
    if (!free_.wait_for(l, d, [this] { return !held_; })) return false;
    held_ = true;
    return true;
  }
  void unlock() {
    {
      std::lock_guard l(m_);
      held_ = false;
    }
    free_.notify_one();
  }

 private:
  std::mutex m_;
  std::condition_variable free_;
  bool held_ = false;
};

/// The exporter's state and its health, shared between the HTTP threads (collect) and the thread that
/// reloads. Scrapes are served one at a time from one read each, so every scrape is consistent; one
/// that waits longer than the configuration's read_timeout for another is served the last read.
class Exporter : public prometheus::Collectable {
 public:
  Exporter(const spec::Machine& machine, std::string config_path);
  /// Load the configuration and open it. The first load throws ConfigError; later ones (reload) keep
  /// the running configuration on error and return the rendered error (empty: loaded), which the
  /// health series show too.
  std::string reload();
  std::vector<prometheus::MetricFamily> Collect() const override;
  /// The configuration in use.
  Config config() const;
  /// State::summary() of it.
  std::string summary() const;

 private:
  const spec::Machine& machine_;
  std::string path_;
  mutable CpuReaders readers_;  ///< used under mutex_
  mutable TimedLock mutex_;     ///< held while reading, and while swapping a reload in
  std::unique_ptr<State> state_;
  mutable std::mutex cache_mutex_;                      ///< guards last_
  mutable std::vector<prometheus::MetricFamily> last_;  ///< the last fresh scrape's series
  mutable std::uint64_t last_scrape_ = 0;               ///< its number (scrapes_ when it read): a slower
                                                        ///< scrape that read earlier never replaces it
  mutable std::uint64_t scrapes_ = 0;                   ///< under mutex_
  mutable std::atomic<std::uint64_t> busy_{0};
  std::uint64_t reload_ok_ = 0, reload_failed_ = 0;
  double last_reload_ = 0;  ///< Unix time of the last reload attempt
  bool last_reload_succeeded_ = true;
  std::string last_error_;  ///< the first line of the last failed reload's error
  std::atomic<double> read_timeout_{0.5};
};

}  // namespace perfspec::tools::exporter
