// SPDX-License-Identifier: MIT
// The HTTP side: prometheus-cpp's exposer (civetweb) serves the text format; a request callback
// answers /metrics with OpenMetrics 1.0.0 first when the scraper's Accept header prefers it.
#include <atomic>
#include <cstring>
#include <sstream>
#include <string>
#include <string_view>

#include <CivetServer.h>
#include <civetweb.h>
#include <fmt/format.h>
#include <prometheus/exposer.h>

#include "exporter/exporter.hpp"
#include "perfspec/error.hpp"
#include "print/openmetrics.hpp"
#include "spec/printable.hpp"

namespace perfspec::exporter {
namespace {

// The exporter the request callback serves: civetweb's callbacks get no context of ours through
// prometheus-cpp's exposer, so there is one Server a process at a time. Set before its exposer starts
// its threads, cleared after they have stopped.
std::atomic<Exporter*> serving{nullptr};

// A short answer with no body, the connection closed after it.
int answer(mg_connection* conn, int status, const char* reason, const char* headers = "") {
  mg_printf(conn, "HTTP/1.1 %d %s\r\n%sContent-Length: 0\r\nConnection: close\r\n\r\n", status, reason,
            headers);
  return status;
}

// What civetweb would answer oddly: HEAD /metrics (404), OPTIONS (nothing), a WebSocket upgrade (a body
// with no status line). Then OpenMetrics when the scraper prefers it (prometheus-cpp serves only the
// text format); 0: let the text handler answer.
int begin_request(mg_connection* conn) {
  const mg_request_info* info = mg_get_request_info(conn);
  if (!info || !info->request_method) return 0;
  const std::string_view method = info->request_method;
  if (mg_get_header(conn, "Upgrade"))
    return answer(conn, 400, "Bad Request");  // nothing here is served over WebSocket or HTTP/2
  if (method == "OPTIONS") return answer(conn, 200, "OK", "Allow: GET, HEAD, OPTIONS\r\n");
  if (!info->local_uri || std::strcmp(info->local_uri, "/metrics") != 0) return 0;
  if (method == "HEAD") {  // what a GET would answer, without its body (load balancers' checks)
    const char* accept = mg_get_header(conn, "Accept");
    const bool om = accept && wants_openmetrics(accept);
    mg_printf(conn, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nConnection: close\r\n\r\n",
              om ? std::string(openmetrics_content_type).c_str()
                 : "text/plain; charset=utf-8");  // prometheus-cpp's
    return 200;
  }
  if (method != "GET") return 0;
  const char* accept = mg_get_header(conn, "Accept");
  if (!accept || !wants_openmetrics(accept)) return 0;
  Exporter* exporter = serving.load();
  if (!exporter) return 0;
  std::ostringstream body;
  OpenMetricsSerializer().Serialize(body, exporter->Collect());
  const std::string text = body.str();
  mg_printf(conn, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n\r\n",
            std::string(openmetrics_content_type).c_str(), text.size());
  mg_write(conn, text.data(), text.size());
  return 200;
}

}  // namespace

struct Server::Impl {
  std::shared_ptr<Exporter> exporter;
  std::unique_ptr<prometheus::Exposer> exposer;
};

Server::Server(std::shared_ptr<Exporter> exporter, const std::string& listen, int threads)
    : impl_(std::make_unique<Impl>()) {
  Exporter* none = nullptr;
  if (!serving.compare_exchange_strong(none, exporter.get()))
    throw Error(ErrorKind::usage, "another exporter::Server is serving in this process");
  impl_->exporter = exporter;
  CivetCallbacks callbacks{};
  callbacks.begin_request = begin_request;
  try {
    impl_->exposer = std::make_unique<prometheus::Exposer>(
        std::vector<std::string>{"listening_ports", listen, "num_threads", std::to_string(threads),
                                 // No keep-alive: a connection holds an HTTP thread for one request (or
                                 // 2 s of waiting for it), never for a client's series of requests, so
                                 // that clients which keep asking cannot hold every thread.
                                 "request_timeout_ms", "2000", "enable_keep_alive", "no", "tcp_nodelay", "1"},
        &callbacks);
  } catch (const std::exception& e) {
    serving = nullptr;
    throw Error(ErrorKind::io, fmt::format("cannot listen on {}: {}", spec::printable(listen), e.what()));
  }
  impl_->exposer->RegisterCollectable(exporter);
}

Server::~Server() {
  impl_->exposer.reset();  // its threads are gone before the callback's exporter is
  serving = nullptr;
}

int Server::port() const {
  auto ports = impl_->exposer->GetListeningPorts();
  return ports.empty() ? 0 : ports[0];
}

}  // namespace perfspec::exporter
