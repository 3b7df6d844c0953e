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

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>

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

using Ssl = std::unique_ptr<SSL, decltype(&SSL_free)>;

// A TLS connection to 127.0.0.1:`port` (the server verified against the fixtures' CA, as localhost),
// with the client certificate `client` when given: the SSL (null when the handshake failed) on `fd`.
Ssl tls_connect(int port, int& fd, std::string_view client = {}) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  REQUIRE(SSL_CTX_load_verify_locations(ctx.get(), tls_file("ca.crt").c_str(), nullptr) == 1);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  if (!client.empty()) {
    REQUIRE(SSL_CTX_use_certificate_file(ctx.get(), tls_file(std::string(client) + ".crt").c_str(),
                                         SSL_FILETYPE_PEM) == 1);
    REQUIRE(SSL_CTX_use_PrivateKey_file(ctx.get(), tls_file(std::string(client) + ".key").c_str(),
                                        SSL_FILETYPE_PEM) == 1);
  }
  Ssl ssl(SSL_new(ctx.get()), SSL_free);  // holds its own reference to the context
  SSL_set_tlsext_host_name(ssl.get(), "localhost");
  SSL_set1_host(ssl.get(), "localhost");
  fd = connect_to(port);
  SSL_set_fd(ssl.get(), fd);
  if (SSL_connect(ssl.get()) != 1) ssl.reset();
  ERR_clear_error();
  return ssl;
}

// `request` over such a connection: the whole answer (until the server's close_notify or FIN), or ""
// when the server ended the connection without one.
std::string tls_exchange(SSL* ssl, const std::string& request) {
  std::string answer;
  if (ssl && SSL_write(ssl, request.data(), static_cast<int>(request.size())) > 0) {
    char buf[4096];
    for (int n; (n = SSL_read(ssl, buf, sizeof buf)) > 0;) answer.append(buf, static_cast<std::size_t>(n));
  }
  ERR_clear_error();
  return answer;
}

std::string tls_request(int port, const std::string& request, std::string_view client = {}) {
  int fd = -1;
  Ssl ssl = tls_connect(port, fd, client);
  std::string answer = tls_exchange(ssl.get(), request);
  ssl.reset();
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

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Writes a byte to `fd` every `every` until `stop` or until the peer has closed (a write fails):
// a client that keeps a connection busy without ever finishing what it sends.
void drip(int fd, std::chrono::milliseconds every, const std::atomic<bool>& stop) {
  while (!stop) {
    if (::send(fd, "\0", 1, MSG_NOSIGNAL) != 1) return;
    std::this_thread::sleep_for(every);
  }
}

// Whether the peer closed `fd` (read returns 0 or fails with a reset) within `seconds`.
bool closed_within(int fd, double seconds) {
  const auto start = Clock::now();
  char buf[256];
  while (seconds_since(start) < seconds) {
    timeval tv{0, 200000};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return true;
  }
  return false;
}

}  // namespace

// The front's threads (one here) each hold a connection from its handshake to its close, so both are
// bounded as a whole: 2 s for the handshake (civetweb's request timeout behind it), 1 s for the close
// after an answer, whatever a client sends meanwhile. The clients below keep sending for 8 s: a bound
// per read instead of in all would hold the thread until they stop.
TEST_CASE("TLS front: a handshake in 2 s in all, a close in 1 s, counted as timeouts; a stop ends them") {
  test::TempTree dir;
  auto e = engine(dir);
  const std::string yaml = fmt::format("tls_server_config:\n  cert_file: {}\n  key_file: {}\n",
                                       tls_file("server.crt"), tls_file("server.key"));
  auto server = std::make_unique<Server>(e, "127.0.0.1:0", 1, web(yaml));
  const int port = server->port();
  const auto drip_time = std::chrono::seconds(8);
  // a client that never says a word, and one that sends the start of a 512-byte record, then a byte
  // every 0.5 s: each closed once its 2 s are over (not before), and counted as a timeout
  for (bool dripping : {false, true}) {
    CAPTURE(dripping);
    const int fd = connect_to(port);
    std::atomic<bool> stop{false};
    std::thread sender;
    const auto start = Clock::now();
    if (dripping) {
      REQUIRE(::send(fd, "\x16\x03\x01\x02\x00", 5, MSG_NOSIGNAL) == 5);
      sender = std::thread(drip, fd, std::chrono::milliseconds(500), std::cref(stop));
    }
    CHECK(closed_within(fd, std::chrono::duration<double>(drip_time).count()));
    const double took = seconds_since(start);
    CHECK(took >= 1.9);
    CHECK(took < std::chrono::duration<double>(drip_time).count());
    stop = true;
    if (sender.joinable()) sender.join();
    ::close(fd);
  }
  // after an answer, a client that sends a byte every 0.3 s: the one thread is free for the next
  // client once the close's second is over, long before the client stops
  {
    int fd = -1;
    Ssl ssl = tls_connect(port, fd);
    REQUIRE(ssl);
    CHECK(tls_exchange(ssl.get(), get("/-/healthy")).starts_with("HTTP/1.1 200 OK\r\n"));
    std::atomic<bool> stop{false};
    std::thread sender(drip, fd, std::chrono::milliseconds(300), std::cref(stop));
    const auto start = Clock::now();
    CHECK(tls_request(port, get("/-/healthy")).starts_with("HTTP/1.1 200 OK\r\n"));
    CHECK(seconds_since(start) < std::chrono::duration<double>(drip_time).count() - 1);
    stop = true;
    sender.join();
    ssl.reset();
    ::close(fd);
  }
  std::string counted = tls_request(port, get("/metrics"));
  CHECK(series(counted, "perfspec_exporter_tls_refused_total{reason=\"timeout\"}") == 2);
  CHECK(series(counted, "perfspec_exporter_tls_refused_total{reason=\"handshake\"}") == 0);
  server.reset();
  // A front stopping while a handshake is being dripped: it does not wait for the handshake's 2 s (nor
  // for the client); civetweb behind a Server takes up to its own 2 s poll to stop, so the front alone.
  auto front = std::make_unique<TlsFront>(TlsContext::make(web(yaml)), "127.0.0.1:0", 1, 1);
  const int fd = connect_to(front->port());
  REQUIRE(::send(fd, "\x16\x03\x01\x02\x00", 5, MSG_NOSIGNAL) == 5);
  std::atomic<bool> stop{false};
  std::thread sender(drip, fd, std::chrono::milliseconds(100), std::cref(stop));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the handshake begun
  const auto start = Clock::now();
  front.reset();
  CHECK(seconds_since(start) < 1.0);  // not the rest of the handshake's 2 s
  stop = true;
  sender.join();
  ::close(fd);
}

namespace {

// The local ports this process listens on at 127.0.0.1 (/proc/self/net/tcp's LISTEN sockets whose
// inodes are among /proc/self/fd's).
std::set<int> own_listening_ports() {
  std::set<std::string> inodes;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
    if (!ec && target.starts_with("socket:[")) inodes.insert(target.substr(8, target.size() - 9));
  }
  std::set<int> ports;
  std::ifstream tcp("/proc/self/net/tcp");
  std::string line;
  std::getline(tcp, line);  // the header
  while (std::getline(tcp, line)) {
    std::istringstream in(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    in >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
    if (state == "0A" && local.starts_with("0100007F:") && inodes.contains(inode))
      ports.insert(std::stoi(local.substr(9), nullptr, 16));
  }
  return ports;
}

}  // namespace

// Each client_auth_type as exporter-toolkit (Go's crypto/tls) means it, against a client with no
// certificate, one of the trusted CA, one of another CA and an expired one: served, or refused with
// the reason counted.
TEST_CASE("TLS: every client_auth_type, with and without a certificate, trusted, foreign, expired") {
  test::TempTree dir;
  auto e = engine(dir);
  struct Row {
    const char* type;
    const char* none;  // "ok", or the refusal's reason
    const char* client;
    const char* stranger;
    const char* expired;
  };
  const Row rows[] = {
      {"NoClientCert", "ok", "ok", "ok", "ok"},
      {"RequestClientCert", "ok", "ok", "ok", "ok"},
      {"RequireAnyClientCert", "no_certificate", "ok", "ok", "ok"},
      {"VerifyClientCertIfGiven", "ok", "ok", "bad_certificate", "expired_certificate"},
      {"RequireAndVerifyClientCert", "no_certificate", "ok", "bad_certificate", "expired_certificate"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.type);
    const bool ca = std::string_view(row.type) != "NoClientCert";
    Server server(
        e, "127.0.0.1:0", 1,
        web(fmt::format("tls_server_config:\n  cert_file: {}\n  key_file: {}\n  client_auth_type: {}\n{}",
                        tls_file("server.crt"), tls_file("server.key"), row.type,
                        ca ? fmt::format("  client_ca_file: {}\n", tls_file("ca.crt")) : "")));
    std::map<std::string, int> refusals;
    for (auto [client, want] : {std::pair<std::string_view, std::string_view>{"", row.none},
                                {"client", row.client},
                                {"stranger", row.stranger},
                                {"expired-client", row.expired}}) {
      CAPTURE(client);
      const std::string answer = tls_request(server.port(), get("/-/healthy"), client);
      if (want == "ok") {
        CHECK(answer.starts_with("HTTP/1.1 200 OK\r\n"));
      } else {
        CHECK(answer.empty());
        ++refusals[std::string(want)];
      }
    }
    const std::string counted = tls_request(server.port(), get("/metrics"), "client");
    for (const char* reason : {"no_certificate", "bad_certificate", "expired_certificate", "handshake"})
      CHECK(series(counted, fmt::format("perfspec_exporter_tls_refused_total{{reason=\"{}\"}}", reason)) ==
            refusals[reason]);
  }
}

// Behind TLS, civetweb listens on a port of the loopback interface that answers only the front's own
// connections: another local process gets 403 and the port to use.
TEST_CASE("TLS: the server behind the front refuses what did not come through it") {
  test::TempTree dir;
  auto e = engine(dir);
  const std::set<int> before = own_listening_ports();
  Server server(e, "127.0.0.1:0", 1,
                web(fmt::format("tls_server_config:\n  cert_file: {}\n  key_file: {}\n",
                                tls_file("server.crt"), tls_file("server.key"))));
  std::set<int> added;
  for (int port : own_listening_ports())
    if (!before.contains(port) && port != server.port()) added.insert(port);
  REQUIRE(added.size() == 1);  // the backend
  const std::string answer = plain_request(*added.begin(), get("/metrics"));
  CHECK(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"));
  CHECK(answer.ends_with(fmt::format("\r\n\r\nconnect with TLS, on port {}\n", server.port())));
  CHECK(answer.find("perfspec_event_total") == std::string::npos);
  CHECK(tls_request(server.port(), get("/-/healthy")).starts_with("HTTP/1.1 200 OK\r\n"));  // through it
}
