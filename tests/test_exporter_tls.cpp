// SPDX-License-Identifier: MIT
// The exporter's Server with a web configuration: TLS (tests/fixtures/tls, made by its make.sh) with
// each client-certificate policy, basic authentication, the extra headers, what is refused and how
// it is counted, and a reload. The client is OpenSSL, as curl's.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <cerrno>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "exporter/basic_auth.hpp"
#include "exporter/exporter.hpp"
#include "exporter/tls.hpp"
#include "exporter/web_config.hpp"
#include "tests/support.hpp"

using namespace perfspec;
using namespace perfspec::exporter;

namespace {

constexpr const char* secret_hash =
    "$2b$04$abcdefghijklmnopqrstuu2r9OfJnfCsdneAXAGHnS4UpFFP8WIrW";  // "secret"
constexpr const char* other_hash = "$2y$05$ABCDEFGHIJKLMNOPQRSTUuy7.SRQp6zzmDqpwAozFshLprLplpb1m";  // "other"

std::string tls_file(std::string_view name) { return test::fixture("tls/" + std::string(name)); }

int connect_to(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

// `request` over TLS to 127.0.0.1:`port` (the server verified against the fixtures' CA, as
// localhost), with the client certificate `client` when given: the whole answer, or "" when the
// server ended the connection without one.
std::string tls_request(int port, const std::string& request, std::string_view client = {}) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  REQUIRE(SSL_CTX_load_verify_locations(ctx.get(), tls_file("ca.crt").c_str(), nullptr) == 1);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  if (!client.empty()) {
    REQUIRE(SSL_CTX_use_certificate_file(ctx.get(), tls_file(std::string(client) + ".crt").c_str(),
                                         SSL_FILETYPE_PEM) == 1);
    REQUIRE(SSL_CTX_use_PrivateKey_file(ctx.get(), tls_file(std::string(client) + ".key").c_str(),
                                        SSL_FILETYPE_PEM) == 1);
  }
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), SSL_free);
  SSL_set_tlsext_host_name(ssl.get(), "localhost");
  SSL_set1_host(ssl.get(), "localhost");
  const int fd = connect_to(port);
  SSL_set_fd(ssl.get(), fd);
  std::string answer;
  if (SSL_connect(ssl.get()) == 1 &&
      SSL_write(ssl.get(), request.data(), static_cast<int>(request.size())) > 0) {
    char buf[4096];
    for (int n; (n = SSL_read(ssl.get(), buf, sizeof buf)) > 0;)
      answer.append(buf, static_cast<std::size_t>(n));
  }
  ERR_clear_error();
  ::close(fd);
  return answer;
}

std::string get(std::string_view path, std::string_view authorization = {}) {
  return fmt::format("GET {} HTTP/1.1\r\nHost: localhost\r\n{}Connection: close\r\n\r\n", path,
                     authorization.empty() ? "" : fmt::format("Authorization: {}\r\n", authorization));
}

// A plain TCP exchange: the whole answer.
std::string plain_request(int port, const std::string& request) {
  const int fd = connect_to(port);
  REQUIRE(::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size()));
  std::string answer;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) answer.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return answer;
}

// The value of the series `name` (labels and all, as the text format writes them) in an answer, or -1.
double series(const std::string& answer, const std::string& name) {
  auto at = answer.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::stod(answer.substr(at + name.size() + 2));
}

WebConfig web(std::string_view yaml) { return parse_web_config(yaml, tls_file("web.yml")); }

std::shared_ptr<Exporter> engine(const test::TempTree& dir) {
  dir.write("exp.toml",
            fmt::format("[[set]]\nname = \"self\"\npid = {}\nevents = [\"page-faults\"]\n", ::getpid()));
  static spec::Machine kept("/sys", test::no_libpfm4());
  auto e = std::make_shared<Exporter>(kept, dir.root() + "/exp.toml", [](std::string_view) {});
  REQUIRE(e->reload().empty());
  return e;
}

}  // namespace

TEST_CASE("basic authentication: bcrypt hashes through crypt_r, each refusal by its reason") {
  CHECK(bcrypt_matches("secret", secret_hash));
  CHECK_FALSE(bcrypt_matches("Secret", secret_hash));
  CHECK(bcrypt_matches("other", other_hash));  // htpasswd's $2y$
  CHECK_FALSE(bcrypt_matches("secret", "not a hash"));
  BasicAuth none;
  CHECK(none.check(nullptr) == BasicAuth::Verdict::allowed);
  BasicAuth auth({{"prometheus", secret_hash}, {"grafana", other_hash}});
  using V = BasicAuth::Verdict;
  CHECK(auth.check(nullptr) == V::no_credentials);
  CHECK(auth.check("Bearer abc") == V::no_credentials);
  CHECK(auth.check("Basic !!!!") == V::no_credentials);
  CHECK(auth.check("Basic cHJvbWV0aGV1cw==") == V::no_credentials);   // "prometheus": no colon
  CHECK(auth.check("Basic cHJvbWV0aGV1czpzZWNyZXQ=") == V::allowed);  // prometheus:secret
  CHECK(auth.check("basic   cHJvbWV0aGV1czpzZWNyZXQ=  ") == V::allowed);
  CHECK(auth.check("Basic cHJvbWV0aGV1czpzZWNyZXQ=") == V::allowed);         // again, remembered
  CHECK(auth.check("Basic cHJvbWV0aGV1czpvdGhlcg==") == V::wrong_password);  // prometheus:other
  CHECK(auth.check("Basic Z3JhZmFuYTpvdGhlcg==") == V::allowed);             // grafana:other
  CHECK(auth.check("Basic YWxpY2U6c2VjcmV0") == V::unknown_user);            // alice:secret
}

TEST_CASE("TLS with client certificates and basic authentication: served, refused, counted") {
  test::TempTree dir;
  auto e = engine(dir);
  const WebConfig config = web(fmt::format(
      "tls_server_config:\n  cert_file: {}\n  key_file: {}\n  client_auth_type: RequireAndVerifyClientCert\n"
      "  client_ca_file: {}\nhttp_server_config:\n  headers:\n    X-Frame-Options: deny\n"
      "basic_auth_users:\n  prometheus: {}\n",
      tls_file("server.crt"), tls_file("server.key"), tls_file("ca.crt"), secret_hash));
  Server server(e, "127.0.0.1:0", 2, config);
  const int port = server.port();
  REQUIRE(port > 0);
  const std::string good = "Basic cHJvbWV0aGV1czpzZWNyZXQ=";
  std::string ok = tls_request(port, get("/metrics", good), "client");
  CHECK(
      ok.starts_with("HTTP/1.1 200 OK\r\nX-Frame-Options: deny\r\nContent-Type: text/plain; version=0.0.4"));
  CHECK(ok.find("\nperfspec_event_total{set=\"self\"") != std::string::npos);
  // refused: a wrong password and none (401, with the header that asks for one), no certificate, an
  // expired one, one of another CA, plain HTTP
  std::string wrong = tls_request(port, get("/metrics", "Basic cHJvbWV0aGV1czpvdGhlcg=="), "client");
  CHECK(wrong ==
        "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic\r\nX-Frame-Options: deny\r\nContent-Type: "
        "text/plain; "
        "charset=utf-8\r\nContent-Length: 13\r\nConnection: close\r\n\r\nUnauthorized\n");
  CHECK(tls_request(port, get("/-/healthy"), "client").starts_with("HTTP/1.1 401 Unauthorized\r\n"));
  CHECK(tls_request(port, get("/metrics", good)).empty());
  CHECK(tls_request(port, get("/metrics", good), "expired-client").empty());
  CHECK(tls_request(port, get("/metrics", good), "stranger").empty());
  CHECK(plain_request(port, get("/metrics", good)) ==
        "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n");
  // the civetweb port behind the front answers only the front: not reachable from here but through it
  std::string counted = tls_request(port, get("/metrics", good), "client");
  CHECK(series(counted, "perfspec_exporter_tls_refused_total{reason=\"plain_http\"}") == 1);
  CHECK(series(counted, "perfspec_exporter_tls_refused_total{reason=\"no_certificate\"}") == 1);
  CHECK(series(counted, "perfspec_exporter_tls_refused_total{reason=\"expired_certificate\"}") == 1);
  CHECK(series(counted, "perfspec_exporter_tls_refused_total{reason=\"bad_certificate\"}") == 1);
  CHECK(series(counted, "perfspec_exporter_tls_refused_total{reason=\"san_not_allowed\"}") == 0);
  CHECK(series(counted, "perfspec_exporter_auth_refused_total{reason=\"wrong_password\"}") == 1);
  CHECK(series(counted, "perfspec_exporter_auth_refused_total{reason=\"no_credentials\"}") == 1);
  CHECK(series(counted, "perfspec_exporter_auth_refused_total{reason=\"unknown_user\"}") == 0);
  CHECK(series(counted, "perfspec_exporter_web_config_last_reload_success") == 1);
  // A reload: another user and SANs allowed; the running connections' settings are not the new ones'
  server.reload_web(web(fmt::format(
      "tls_server_config:\n  cert_file: {}\n  key_file: {}\n  client_auth_type: RequireAndVerifyClientCert\n"
      "  client_ca_file: {}\n  client_allowed_sans: [grafana.example]\nbasic_auth_users:\n  grafana: {}\n",
      tls_file("server.crt"), tls_file("server.key"), tls_file("ca.crt"), other_hash)));
  CHECK(tls_request(port, get("/metrics", "Basic Z3JhZmFuYTpvdGhlcg=="), "client").empty());  // its SAN
  server.reload_web(web(fmt::format(
      "tls_server_config:\n  cert_file: {}\n  key_file: {}\n  client_auth_type: RequireAndVerifyClientCert\n"
      "  client_ca_file: {}\n  client_allowed_sans: [prometheus.example]\nbasic_auth_users:\n  grafana: {}\n",
      tls_file("server.crt"), tls_file("server.key"), tls_file("ca.crt"), other_hash)));
  std::string after = tls_request(port, get("/metrics", "Basic Z3JhZmFuYTpvdGhlcg=="), "client");
  CHECK(after.starts_with("HTTP/1.1 200 OK\r\nContent-Type:"));  // no extra header any more
  CHECK(series(after, "perfspec_exporter_tls_refused_total{reason=\"san_not_allowed\"}") == 1);
  CHECK(series(after, "perfspec_exporter_web_config_reloads_total{result=\"success\"}") == 2);
  // turning TLS off needs a restart: refused, the running configuration kept
  try {
    server.reload_web(web("basic_auth_users:\n"));
    FAIL("TLS was turned off by a reload");
  } catch (const ConfigError& err) {
    CHECK(std::string(err.what())
              .find("TLS is turned off by the new web configuration: that needs a restart") !=
          std::string::npos);
  }
  server.web_reload_failed("web.yml:1:1: error: x\n 1 | ...");
  after = tls_request(port, get("/metrics", "Basic Z3JhZmFuYTpvdGhlcg=="), "client");
  CHECK(series(after, "perfspec_exporter_web_config_last_reload_success") == 0);
  CHECK(series(after, "perfspec_exporter_web_config_reloads_total{result=\"failure\"}") == 1);
}

TEST_CASE("TLS without client certificates; files that cannot be used are errors at their place") {
  test::TempTree dir;
  auto e = engine(dir);
  Server server(e, "127.0.0.1:0", 1,
                web(fmt::format("tls_server_config:\n  cert_file: {}\n  key_file: {}\n",
                                tls_file("server.crt"), tls_file("server.key"))));
  CHECK(tls_request(server.port(), get("/-/ready")).starts_with("HTTP/1.1 200 OK\r\n"));
  CHECK(
      tls_request(server.port(), get("/-/ready"), "client").starts_with("HTTP/1.1 200 OK\r\n"));  // not asked
  auto make_error = [&](const std::string& yaml) {
    try {
      (void)TlsContext::make(parse_web_config(yaml, "web.yml"));
    } catch (const ConfigError& err) {
      return std::string(err.what());
    }
    return std::string("(no error)");
  };
  CHECK(make_error("tls_server_config:\n  cert_file: /nonexistent/x.crt\n  key_file: k\n") ==
        "web.yml:2:14: error: cannot read cert_file '/nonexistent/x.crt': No such file or directory\n"
        " 2 |   cert_file: /nonexistent/x.crt\n"
        "   |              ^\n");
  CHECK(make_error(fmt::format("tls_server_config:\n  cert_file: {}\n  key_file: {}\n",
                               tls_file("server.crt"), tls_file("client.key")))
            .starts_with("web.yml:3:13: error: the key is not the certificate's\n"));
  CHECK(make_error(fmt::format("tls_server_config:\n  cert_file: {}\n  key_file: {}\n",
                               tls_file("server.key"), tls_file("server.key")))
            .starts_with("web.yml:2:14: error: not a PEM certificate: "));
}
