// SPDX-License-Identifier: MIT
#pragma once
// The exporter's engine, the layer's public header: a configuration's event sets and metrics kept
// open and read on each scrape into Prometheus series (prometheus-cpp's metric families), reloads
// that keep what did not change, and the HTTP server that serves them (civetweb; text format 0.0.4 or
// OpenMetrics 1.0.0 as the scraper asks). `perfspec exporter` is this and a
// command line; a program of its own can serve its counters the same way.
//
// Example:
// ```
// spec::Machine machine("/sys");
// auto engine = std::make_shared<exporter::Exporter>(machine, "exporter.toml");
// engine->reload();                         // throws ConfigError for a file that cannot be used
// exporter::Server server(engine, "127.0.0.1:9464", 8);
// ... // until the program ends; engine->reload() again on SIGHUP
// ```
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "exporter/config.hpp"
#include "exporter/cpu_readers.hpp"
#include "exporter/web_config.hpp"
#include "perfspec/resolve.hpp"
#include "perfspec/spec.hpp"

namespace perfspec::exporter {

/// Where the engine says what it found while opening (an event that cannot be counted, a group split
/// by CPUs): one message a call, without a newline. The default writes `perfspec exporter: MESSAGE`
/// to standard error.
using Log = std::function<void(std::string_view message)>;
void log_to_stderr(std::string_view message);

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

/// Everything one configuration opened: resolved and ready, then kept open between scrapes.
class State {
 public:
  /// Resolve every set of `config` against `machine` (event strings, metrics, cgroups and CPU lists),
  /// throwing ConfigError at the first that does not resolve; nothing is opened.
  static std::unique_ptr<State> prepare(Config config, const spec::Machine& machine, Log log = log_to_stderr);
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
  void read_all(CpuReaders* readers);
  Config config_;
  const spec::Machine* machine_ = nullptr;
  Log log_;
  std::vector<std::unique_ptr<SetState>> sets_;
};

/// The exporter's state and its health, shared between the HTTP threads (collect) and the thread that
/// reloads. Scrapes are served one at a time from one read each, so every scrape is consistent; one
/// that waits longer than the configuration's read_timeout for another is served the last read.
class Exporter : public prometheus::Collectable {
 public:
  Exporter(const spec::Machine& machine, std::string config_path, Log log = log_to_stderr);
  /// Load the configuration and open it. The first load throws ConfigError; later ones (reload) keep
  /// the running configuration on error and return the rendered error (empty: loaded), which the
  /// health series show too.
  std::string reload();
  std::vector<prometheus::MetricFamily> Collect() const override;
  /// The configuration in use.
  Config config() const;
  /// State::summary() of it.
  std::string summary() const;
  /// Whether a configuration is open (the first reload() succeeded): what /-/ready says.
  bool ready() const;

 private:
  const spec::Machine& machine_;
  std::string path_;
  Log log_;
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
  std::atomic<bool> ready_{false};  ///< a configuration is open (without mutex_, which reads hold)

  void health_series(std::vector<prometheus::MetricFamily>& out, std::size_t event_fds,
                     std::uint64_t read_errors, double read_seconds, std::uint64_t scrapes) const;
};

/// Serves an Exporter over HTTP (civetweb) until destroyed: /metrics in the Prometheus text format
/// 0.0.4, or OpenMetrics 1.0.0 when the scraper's Accept header prefers it, gzipped when its
/// Accept-Encoding takes gzip (503 until the Exporter is ready()); `/` a page saying what this is and
/// what its configuration counts; `/-/healthy` (200 while it serves) and `/-/ready` (200 once ready(),
/// else 503). Other paths are 404, other methods 405; each answer closes its connection.
///
/// With a web configuration (web_config.hpp): every request must pass its basic authentication (401
/// with `WWW-Authenticate: Basic` else), every answer carries its headers, and with a TLS section the
/// server is reached over TLS only (TlsFront, on `listen`; civetweb then listens on the loopback
/// interface and answers only the front's connections). What it refused is counted in its series.
class Server {
 public:
  /// Listen on `listen` (HOST:PORT, valid_listen) with `threads` worker threads. Throws Error (io)
  /// when it cannot listen there, ConfigError when the web configuration's TLS files cannot be used.
  /// `exporter` may be loaded after: the server answers 503 until then.
  Server(std::shared_ptr<Exporter> exporter, const std::string& listen, int threads,
         const WebConfig& web = {});
  /// Use a web configuration read again (SIGHUP): its users, headers, certificates and policy for the
  /// requests and connections to come. Throws ConfigError, the running one kept, when its TLS files
  /// cannot be used or it turns TLS on or off (a restart).
  void reload_web(const WebConfig& web);
  /// Say (in the series) that reading the web configuration again failed: `error`'s first line.
  void web_reload_failed(const std::string& error);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  /// The port it listens on (the one chosen for port 0).
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfspec::exporter
