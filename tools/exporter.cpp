// SPDX-License-Identifier: MIT
// `perfspec exporter`: the exporter layer's engine and server (exporter/exporter.hpp) run as a daemon:
// --check, the listen address, SIGHUP to reload, SIGINT and SIGTERM to stop, and what it says.
#include "tools/exporter.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "exporter/exporter.hpp"
#include "exporter/tls.hpp"
#include "exporter/web_config.hpp"
#include "spec/printable.hpp"
#include "tools/exit_status.hpp"

namespace perfspec::tools::exporter {

using namespace perfspec::exporter;

namespace {

// "TLS (client certificates: RequireAndVerifyClientCert), 2 users, 1 header", or "plain HTTP, ...".
std::string web_summary(const WebConfig& web) {
  std::string out = web.tls
                        ? fmt::format("TLS (client certificates: {})", client_auth_name(web.tls->client_auth))
                        : std::string("plain HTTP");
  const auto n = web.basic_auth_users.size(), h = web.headers.size();
  out += n ? fmt::format(", {} user{}", n, n == 1 ? "" : "s") : ", no basic authentication";
  if (h) out += fmt::format(", {} header{}", h, h == 1 ? "" : "s");
  return out;
}

// --check: load and resolve the file, open nothing, print a summary.
int check(const ExporterOptions& o, const spec::Machine& machine) {
  try {
    auto checked = State::prepare(load_config(o.config), machine);
    if (!o.web_config.empty()) {  // its TLS files read and made into a context, as serving would
      const WebConfig web = load_web_config(o.web_config);
      if (web.tls) (void)TlsContext::make(web);
      std::printf("%s: %s\n", spec::printable(o.web_config).c_str(), web_summary(web).c_str());
    }
    std::printf("%s: %s\n", spec::printable(o.config).c_str(), checked->summary().c_str());
  } catch (const ConfigError& e) {
    std::fputs(e.what(), stderr);
    return exit_status(e.kind());
  }
  return 0;
}

// Until SIGINT or SIGTERM: SIGHUP reloads, and says how it went.
void serve_signals(const sigset_t& signals, Exporter& exporter, Server& server, const ExporterOptions& o,
                   const std::string& listen) {
  for (;;) {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0) continue;
    if (sig != SIGHUP) {
      std::fprintf(stderr, "perfspec exporter: %s, stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
      return;
    }
    std::string error = exporter.reload();
    if (!o.web_config.empty()) {  // the web configuration too: a bad one keeps the running one
      try {
        server.reload_web(load_web_config(o.web_config));
      } catch (const ConfigError& e) {
        server.web_reload_failed(e.what());
        std::fprintf(stderr, "perfspec exporter: web configuration reload failed, the running one stays:\n%s",
                     e.what());
      }
    }
    if (error.empty()) {
      const Config now = exporter.config();
      std::fprintf(stderr, "perfspec exporter: reloaded %s (%s)\n", spec::printable(o.config).c_str(),
                   exporter.summary().c_str());
      if (!now.listen.empty() && now.listen != listen && o.listen.empty())
        std::fprintf(stderr, "perfspec exporter: still listening on %s: a new address needs a restart\n",
                     listen.c_str());
    } else {
      std::fprintf(stderr, "perfspec exporter: reload failed, the running configuration stays:\n%s",
                   error.c_str());
    }
    std::fflush(stderr);
  }
}

}  // namespace

int run(const ExporterOptions& o) {
  spec::Machine machine(o.sysfs, o.machine);
  if (o.check) return check(o, machine);
  if (!o.listen.empty() && !valid_listen(o.listen)) {
    std::fprintf(
        stderr,
        "perfspec exporter: error: --listen '%s': give HOST:PORT (0.0.0.0:9464 for every interface)\n",
        spec::printable(o.listen).c_str());
    return 2;
  }
  // Signals are waited for by this thread only: blocked before civetweb starts its threads.
  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : {SIGHUP, SIGINT, SIGTERM}) sigaddset(&signals, sig);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  // The soft RLIMIT_NOFILE raised to the hard one, as Go raises it for node_exporter: counters take a
  // descriptor per event and CPU, and a set that would leave too few for serving is not opened.
  if (rlimit l{}; ::getrlimit(RLIMIT_NOFILE, &l) == 0 && l.rlim_cur < l.rlim_max) {
    l.rlim_cur = l.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &l);
  }
  // The file read for its address, the server listening (its /-/ready says 503, /metrics too), then
  // the configuration resolved and opened, which may take seconds (hundreds of tracepoints).
  auto exporter = std::make_shared<Exporter>(machine, o.config);
  std::string listen;
  std::unique_ptr<Server> server;
  bool tls = false;
  try {
    const Config config = load_config(o.config);
    listen = !o.listen.empty() ? o.listen : !config.listen.empty() ? config.listen : "127.0.0.1:9464";
    const WebConfig web = o.web_config.empty() ? WebConfig{} : load_web_config(o.web_config);
    tls = web.tls.has_value();
    server = std::make_unique<Server>(exporter, listen, o.threads, web);
    exporter->reload();
  } catch (const ConfigError& e) {
    std::fputs(e.what(), stderr);
    return exit_status(e.kind());
  } catch (const Error& e) {
    std::fprintf(stderr, "perfspec exporter: error: %s\n", e.message().c_str());
    return 3;
  }
  std::string host = listen.substr(0, listen.rfind(':'));
  std::fprintf(stderr, "perfspec exporter: serving %s:%d/metrics%s (%s from %s)\n", host.c_str(),
               server->port(), tls ? " over TLS" : "", exporter->summary().c_str(),
               spec::printable(o.config).c_str());
  std::fflush(stderr);
  serve_signals(signals, *exporter, *server, o, listen);
  return 0;
}

}  // namespace perfspec::tools::exporter
