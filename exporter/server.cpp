// SPDX-License-Identifier: MIT
// The HTTP side, on civetweb: /metrics in the Prometheus text format 0.0.4 or OpenMetrics 1.0.0, as
// the scraper's Accept header prefers (gzip when it accepts it), a landing page at /, and /-/healthy
// and /-/ready; basic authentication and the extra headers of the web configuration, and TLS through
// TlsFront. Every request is answered from civetweb's begin_request callback, and every answer closes
// its connection.
#include <civetweb.h>

#include <array>
#include <atomic>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <prometheus/text_serializer.h>

#include "exporter/basic_auth.hpp"
#include "exporter/build_info.hpp"
#include "exporter/exporter.hpp"
#include "exporter/set.hpp"
#include "exporter/tls.hpp"
#include "perfspec/error.hpp"
#include "print/gzip.hpp"
#include "print/openmetrics.hpp"
#include "spec/printable.hpp"

namespace perfspec::exporter {
namespace {

constexpr std::string_view text_content_type = "text/plain; version=0.0.4; charset=utf-8";
constexpr std::string_view plain = "text/plain; charset=utf-8";

constexpr std::array<std::string_view, 3> auth_refusals{"no_credentials", "unknown_user", "wrong_password"};

// What a Server's requests see (civetweb's user data): the exporter, and the web configuration in use.
struct Serving {
  std::shared_ptr<Exporter> exporter;
  bool tls = false;                       // requests come only through the TLS front
  std::atomic<TlsFront*> front{nullptr};  // it, once it listens (Server::Impl owns it)
  mutable std::mutex mutex;               // guards auth, headers, web_error
  std::shared_ptr<BasicAuth> auth;
  std::string headers;    // the web configuration's extra headers, each line ending in CRLF
  bool web = false;       // a web configuration was given
  std::string web_error;  // the first line of its last failed reload
  double web_reloads_ok = 0, web_reloads_failed = 0;
  std::array<std::atomic<std::uint64_t>, 3> auth_refused{};

  std::string extra_headers() const {
    std::lock_guard lock(mutex);
    return headers;
  }
  std::shared_ptr<BasicAuth> authenticator() const {
    std::lock_guard lock(mutex);
    return auth;
  }
};

Serving& serving(mg_connection* conn) {
  return *static_cast<Serving*>(mg_get_user_data(mg_get_context(conn)));
}

// An answer: the status line, `headers` (each ending in CRLF) and the web configuration's, the body's
// type and length, the body, and the connection closed after it. For HEAD the body is not sent (and a
// HEAD whose body was not made says no length). Returns the status, as begin_request's.
int answer(mg_connection* conn, int status, std::string_view reason, std::string_view body = {},
           std::string_view type = plain, std::string_view headers = {}, bool head = false) {
  std::string top =
      fmt::format("HTTP/1.1 {} {}\r\n{}{}", status, reason, headers, serving(conn).extra_headers());
  if (!type.empty()) top += fmt::format("Content-Type: {}\r\n", type);
  if (!head || !body.empty()) top += fmt::format("Content-Length: {}\r\n", body.size());
  top += "Connection: close\r\n\r\n";
  mg_write(conn, top.data(), top.size());
  if (!head && !body.empty()) mg_write(conn, body.data(), body.size());
  return status;
}

// Whether an Accept-Encoding header takes gzip: listed with a q-value that is not 0 (or as `*`).
bool accepts_gzip(const char* header) {
  if (!header) return false;
  std::string_view rest = header;
  while (!rest.empty()) {
    auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    auto semi = item.find(';');
    std::string_view coding = item.substr(0, semi);
    while (!coding.empty() && coding.front() == ' ') coding.remove_prefix(1);
    while (!coding.empty() && coding.back() == ' ') coding.remove_suffix(1);
    if (coding != "gzip" && coding != "*") continue;
    if (semi == std::string_view::npos) return true;
    std::string_view params = item.substr(semi + 1);
    auto q = params.find("q=");
    if (q == std::string_view::npos) return true;
    std::string_view value = params.substr(q + 2);
    // q=0, q=0.0, q=0.00...: refused; anything else taken
    bool zero = !value.empty() && value.front() == '0';
    for (std::size_t i = 1; zero && i < value.size() && value[i] != ' '; ++i)
      zero = value[i] == '.' || value[i] == '0';
    return !zero;
  }
  return false;
}

std::string html_escaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string target_words(const SetConfig& s) {
  switch (s.target) {
    case SetConfig::Target::cgroup: return "cgroup " + s.cgroup.text;
    case SetConfig::Target::pid: return "process " + std::to_string(s.pid);
    case SetConfig::Target::command: return "command " + s.command.text;
    case SetConfig::Target::system: break;
  }
  return s.cpus.text.empty() ? "every CPU" : "CPUs " + s.cpus.text;
}

template <typename List> std::string joined(const List& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i.text;
  return out;
}

// The landing page: what this is, its build, the configuration's sets, and the links.
std::string landing_page(const Exporter& exporter) {
  const Config config = exporter.config();
  std::string sets;
  for (const auto& s : config.sets) {
    sets += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                        html_escaped(spec::printable(s.name)), html_escaped(spec::printable(target_words(s))),
                        grouping_name(s.grouping), html_escaped(spec::printable(joined(s.events))),
                        html_escaped(spec::printable(joined(s.metrics))));
  }
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>perfspec "
      "exporter</title></head>\n"
      "<body>\n<h1>perfspec exporter</h1>\n<p>Performance counters of this machine, for Prometheus. Version "
      "{} "
      "(revision {}).</p>\n<ul>\n<li><a href=\"metrics\">Metrics</a></li>\n<li><a "
      "href=\"-/healthy\">Health</a>"
      "</li>\n<li><a href=\"-/ready\">Readiness</a></li>\n</ul>\n<h2>Configuration</h2>\n<p>{}: {}</p>\n"
      "<table>\n<tr><th>set</th><th>target</th><th>aggregation</th><th>events</th><th>metrics</th></tr>\n{}"
      "</table>\n</body>\n</html>\n",
      build_version, build_revision, html_escaped(spec::printable(config.file)),
      html_escaped(exporter.summary()), sets);
}

// The server's own series: refusals of TLS connections and of credentials, the web configuration's
// reloads.
void server_series(const Serving& s, std::vector<prometheus::MetricFamily>& out) {
  using prometheus::MetricType;
  if (TlsFront* front = s.front.load()) {
    auto f = family("perfspec_exporter_tls_refused_total", "TLS connections refused, by reason",
                    MetricType::Counter);
    for (std::size_t i = 0; i < tls_refusals; ++i) {
      const auto why = static_cast<TlsRefusal>(i);
      add(f, {{"reason", std::string(tls_refusal_name(why))}}, static_cast<double>(front->refused(why)));
    }
    out.push_back(std::move(f));
  }
  if (s.authenticator()->enabled()) {
    auto f = family("perfspec_exporter_auth_refused_total",
                    "Requests refused by basic authentication, by reason", MetricType::Counter);
    for (std::size_t i = 0; i < auth_refusals.size(); ++i)
      add(f, {{"reason", std::string(auth_refusals[i])}}, static_cast<double>(s.auth_refused[i].load()));
    out.push_back(std::move(f));
  }
  if (!s.web) return;
  std::lock_guard lock(s.mutex);
  auto f = family("perfspec_exporter_web_config_reloads_total",
                  "Loads of the web configuration on SIGHUP, by result", MetricType::Counter);
  add(f, {{"result", "success"}}, s.web_reloads_ok);
  add(f, {{"result", "failure"}}, s.web_reloads_failed);
  out.push_back(std::move(f));
  auto g = family("perfspec_exporter_web_config_last_reload_success",
                  "1 when the last load of the web configuration succeeded", MetricType::Gauge);
  add(g, {}, s.web_error.empty() ? 1 : 0);
  out.push_back(std::move(g));
}

// /metrics: the series, in the format and encoding the scraper asks for.
int metrics(mg_connection* conn, const Exporter& exporter, bool head) {
  if (!exporter.ready())
    return answer(conn, 503, "Service Unavailable", "the configuration is not open yet\n", plain, {}, head);
  const char* accept = mg_get_header(conn, "Accept");
  const bool om = accept && wants_openmetrics(accept);
  const std::string type(om ? openmetrics_content_type : text_content_type);
  const bool gz = accepts_gzip(mg_get_header(conn, "Accept-Encoding"));
  if (head)  // what a GET would answer, without reading the counters (load balancers' checks)
    return answer(conn, 200, "OK", {}, type, gz ? "Content-Encoding: gzip\r\n" : "", true);
  std::ostringstream body;
  auto families = exporter.Collect();
  server_series(serving(conn), families);
  if (om)
    OpenMetricsSerializer().Serialize(body, families);
  else
    prometheus::TextSerializer().Serialize(body, families);
  if (!gz) return answer(conn, 200, "OK", body.str(), type);
  return answer(conn, 200, "OK", gzip(body.str()), type, "Content-Encoding: gzip\r\n");
}

int begin_request(mg_connection* conn) {
  const mg_request_info* info = mg_get_request_info(conn);
  Serving& s = serving(conn);
  const Exporter* exporter = s.exporter.get();
  if (!info || !info->request_method) return answer(conn, 400, "Bad Request", {}, {});
  // Behind TLS the server listens on the loopback interface: what did not come through the front
  // (another local process) is refused.
  if (s.tls) {
    TlsFront* front = s.front.load();
    if (!front || !front->ours(info->remote_port))
      return answer(conn, 403, "Forbidden",
                    front ? fmt::format("connect with TLS, on port {}\n", front->port()) : "");
  }
  const std::string_view method = info->request_method, path = info->local_uri ? info->local_uri : "";
  if (auto verdict = s.authenticator()->check(mg_get_header(conn, "Authorization"));
      verdict != BasicAuth::Verdict::allowed) {
    ++s.auth_refused[static_cast<std::size_t>(verdict) - 1];
    return answer(conn, 401, "Unauthorized", "Unauthorized\n", plain, "WWW-Authenticate: Basic\r\n",
                  method == "HEAD");
  }
  if (mg_get_header(conn, "Upgrade"))
    return answer(conn, 400, "Bad Request", {}, {});  // nothing here is served over WebSocket or HTTP/2
  const bool known = path == "/metrics" || path == "/" || path == "/-/healthy" || path == "/-/ready";
  if (!known) return answer(conn, 404, "Not Found", "404 page not found\n", plain, {}, method == "HEAD");
  if (method == "OPTIONS") return answer(conn, 200, "OK", {}, {}, "Allow: GET, HEAD, OPTIONS\r\n");
  if (method != "GET" && method != "HEAD")
    return answer(conn, 405, "Method Not Allowed", "the method is not allowed here\n", plain,
                  "Allow: GET, HEAD, OPTIONS\r\n");
  const bool head = method == "HEAD";
  try {
    if (path == "/metrics") return metrics(conn, *exporter, head);
    if (path == "/")
      return answer(conn, 200, "OK", landing_page(*exporter), "text/html; charset=utf-8", {}, head);
    if (path == "/-/healthy")
      return answer(conn, 200, "OK", "perfspec exporter is healthy.\n", plain, {}, head);
    if (exporter->ready()) return answer(conn, 200, "OK", "perfspec exporter is ready.\n", plain, {}, head);
    return answer(conn, 503, "Service Unavailable",
                  "perfspec exporter is not ready: the configuration is not open yet.\n", plain, {}, head);
  } catch (const std::exception& e) {  // memory, or zlib: the server goes on
    return answer(conn, 500, "Internal Server Error", fmt::format("{}\n", e.what()));
  }
}

}  // namespace

struct Server::Impl {
  Serving serving;
  mg_context* context = nullptr;
  std::unique_ptr<TlsFront> front;
};

namespace {

// The web configuration's headers as lines.
std::string header_lines(const WebConfig& web) {
  std::string out;
  for (const auto& [name, value] : web.headers) out += fmt::format("{}: {}\r\n", name, value);
  return out;
}

}  // namespace

Server::Server(std::shared_ptr<Exporter> exporter, const std::string& listen, int threads,
               const WebConfig& web)
    : impl_(std::make_unique<Impl>()) {
  Serving& s = impl_->serving;
  s.exporter = std::move(exporter);
  s.auth = std::make_shared<BasicAuth>(web.basic_auth_users);
  s.headers = header_lines(web);
  s.web = !web.file.empty();
  s.tls = web.tls.has_value();
  std::shared_ptr<TlsContext> tls = web.tls ? TlsContext::make(web) : nullptr;  // (ConfigError)
  mg_init_library(0);
  mg_callbacks callbacks{};
  callbacks.begin_request = begin_request;
  const std::string thread_count = std::to_string(threads);
  // Behind TLS, a port of the loopback interface that only the front's connections are answered on.
  const std::string http = tls ? "127.0.0.1:0" : listen;
  // No keep-alive: a connection holds an HTTP thread for one request (or 2 s of waiting for it), never
  // for a client's series of requests, so that clients which keep asking cannot hold every thread.
  const char* options[] = {"listening_ports",
                           http.c_str(),
                           "num_threads",
                           thread_count.c_str(),
                           "request_timeout_ms",
                           "2000",
                           "enable_keep_alive",
                           "no",
                           "tcp_nodelay",
                           "1",
                           nullptr};
  char error[256] = "";
  mg_error_data errors{};
  errors.text = error;
  errors.text_buffer_size = sizeof error;
  mg_init_data init{};
  init.callbacks = &callbacks;
  init.user_data = &s;
  init.configuration_options = options;
  impl_->context = mg_start2(&init, &errors);
  if (!impl_->context) {
    mg_exit_library();
    throw Error(ErrorKind::io, fmt::format("cannot listen on {}: {}", spec::printable(http),
                                           *error ? error : "civetweb could not start"));
  }
  if (!tls) return;
  try {
    mg_server_port ports[1] = {};
    mg_get_server_ports(impl_->context, 1, ports);
    impl_->front = std::make_unique<TlsFront>(tls, listen, ports[0].port, threads);
    s.front = impl_->front.get();
  } catch (...) {
    mg_stop(impl_->context);
    mg_exit_library();
    throw;
  }
}

Server::~Server() {
  mg_stop(impl_->context);  // its threads are gone before the front and the exporter may be
  impl_->serving.front = nullptr;
  impl_->front.reset();  // then no more relayed connections
  mg_exit_library();
}

void Server::reload_web(const WebConfig& web) {
  Serving& s = impl_->serving;
  if (web.tls.has_value() != s.tls)
    throw ConfigError(
        ErrorKind::bad_value,
        fmt::format("{}: error: TLS is turned {} by the new web configuration: that needs a restart\n",
                    spec::printable(web.file), web.tls ? "on" : "off"));
  std::shared_ptr<TlsContext> tls = web.tls ? TlsContext::make(web) : nullptr;
  auto auth = std::make_shared<BasicAuth>(web.basic_auth_users);
  if (tls) impl_->front->use(tls);
  std::lock_guard lock(s.mutex);
  s.auth = std::move(auth);
  s.headers = header_lines(web);
  s.web_error.clear();
  ++s.web_reloads_ok;
}

void Server::web_reload_failed(const std::string& error) {
  Serving& s = impl_->serving;
  std::lock_guard lock(s.mutex);
  s.web_error = error.substr(0, error.find('\n'));
  ++s.web_reloads_failed;
}

int Server::port() const {
  if (impl_->front) return impl_->front->port();
  mg_server_port ports[4] = {};
  const int n = mg_get_server_ports(impl_->context, 4, ports);
  return n > 0 ? ports[0].port : 0;
}

}  // namespace perfspec::exporter
