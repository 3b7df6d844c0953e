// SPDX-License-Identifier: MIT
// TLS in front of civetweb: an accepting thread, `threads` workers each serving one connection at a
// time (handshake, the client-certificate policy, then a relay to the HTTP server on the loopback
// interface until it has answered and closed).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "exporter/tls.hpp"
#include "perfspec/error.hpp"
#include "spec/printable.hpp"

namespace perfspec::exporter {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto handshake_time =
    std::chrono::seconds(2);                            // the whole handshake: civetweb's request_timeout_ms
constexpr auto closing_time = std::chrono::seconds(1);  // the whole close after an answer
constexpr int idle_ms = 10000;             // a relay with nothing moving either way for this long ends
constexpr std::size_t max_waiting = 1024;  // connections accepted and not yet served; more are closed

// Milliseconds left until `deadline` (0 once past it), for poll(2).
int ms_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(std::min<long long>(left, 1 << 30)) : 0;
}

void set_blocking(int fd, bool blocking) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK);
}

void set_timeouts(int fd, int seconds) {
  timeval tv{seconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool ssl_write_all(SSL* ssl, const char* data, std::size_t size) {
  while (size > 0) {
    int n = SSL_write(ssl, data, static_cast<int>(std::min<std::size_t>(size, 1 << 20)));
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// The answer sent, the connection closed without a reset: what the client still sends (its
// close_notify, crossing ours) is read and dropped until it closes too, a second at most in all (a
// client that keeps sending cannot hold the thread longer). A close(2) with unread data would send a
// reset, which can take the answer's end with it.
void close_gracefully(int fd) {
  ::shutdown(fd, SHUT_WR);
  const auto deadline = Clock::now() + closing_time;
  char sink[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, ms_left(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || ::recv(fd, sink, sizeof sink, MSG_DONTWAIT) <= 0) return;
  }
}

// A listening socket on HOST:PORT (IPv6 in brackets), or throws Error (io).
int listen_on(const std::string& address) {
  const auto colon = address.rfind(':');
  std::string host = address.substr(0, colon), port = address.substr(colon + 1);
  if (host.size() > 1 && host.front() == '[') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int e = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found); e != 0)
    throw Error(ErrorKind::io,
                fmt::format("cannot listen on {}: {}", spec::printable(address), ::gai_strerror(e)));
  int error = 0;
  for (addrinfo* a = found; a; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) {
      ::freeaddrinfo(found);
      return fd;
    }
    error = errno;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  throw Error(ErrorKind::io,
              fmt::format("cannot listen on {}: {}", spec::printable(address), std::strerror(error)));
}

// Whether one of the certificate's subject alternative names (DNS, IP, e-mail, URI) is in `allowed`.
bool san_allowed(SSL* ssl, const std::vector<std::string>& allowed) {
  X509* peer = SSL_get1_peer_certificate(ssl);
  if (!peer) return false;
  auto* names = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(peer, NID_subject_alt_name, nullptr, nullptr));
  bool ok = false;
  for (int i = 0; names && !ok && i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(names, i);
    std::string text;
    if (n->type == GEN_DNS || n->type == GEN_EMAIL || n->type == GEN_URI) {
      const ASN1_IA5STRING* s = n->d.ia5;
      text.assign(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                  static_cast<std::size_t>(ASN1_STRING_length(s)));
    } else if (n->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* s = n->d.iPAddress;
      char buf[INET6_ADDRSTRLEN] = "";
      const int len = ASN1_STRING_length(s);
      if (len == 4 || len == 16)
        ::inet_ntop(len == 4 ? AF_INET : AF_INET6, ASN1_STRING_get0_data(s), buf, sizeof buf);
      text = buf;
    }
    ok = !text.empty() && std::find(allowed.begin(), allowed.end(), text) != allowed.end();
  }
  GENERAL_NAMES_free(names);
  X509_free(peer);
  return ok;
}

}  // namespace

struct TlsFront::Impl {
  int listener = -1;
  int stop[2] = {-1, -1};  // a pipe: written once to stop the threads
  int port = 0;
  int backend = 0;
  mutable std::mutex mutex;  // guards context, waiting, relays
  std::condition_variable work;
  std::shared_ptr<TlsContext> context;
  std::deque<int> waiting;
  std::set<int> relays;  // local ports of the connections to the backend
  bool stopping = false;
  std::array<std::atomic<std::uint64_t>, tls_refusals> refused{};
  std::vector<std::thread> threads;

  void accept_loop();
  void worker();
  void stop_all();  // the threads stopped and joined, the descriptors closed
  void serve(int fd);
  int handshake(SSL* ssl, int fd);
  TlsRefusal why_refused(SSL* ssl, int fd);  // after SSL_ERROR_SSL or SSL_ERROR_SYSCALL
  void relay(SSL* ssl, int client, int server);
  int connect_backend();
};

// SSL_accept on the socket made non-blocking, waited for as the handshake asks, until it is done, is
// refused, or its two seconds in all are over (a client that sends a byte now and then included): 1
// done, 0 refused and counted, -1 the front stops. The socket is blocking again when it is done.
int TlsFront::Impl::handshake(SSL* ssl, int fd) {
  set_blocking(fd, false);
  const auto deadline = Clock::now() + handshake_time;
  for (;;) {
    const int r = SSL_accept(ssl);
    if (r == 1) break;
    const int kind = SSL_get_error(ssl, r);
    if (kind != SSL_ERROR_WANT_READ && kind != SSL_ERROR_WANT_WRITE) {
      ++refused[static_cast<std::size_t>(why_refused(ssl, fd))];
      return 0;
    }
    pollfd p[2] = {{fd, static_cast<short>(kind == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), 0},
                   {stop[0], POLLIN, 0}};
    const int n = ::poll(p, 2, ms_left(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n > 0 && p[1].revents) return -1;
    if (n <= 0) {
      ++refused[static_cast<std::size_t>(TlsRefusal::timeout)];
      return 0;
    }
  }
  set_blocking(fd, true);
  return 1;
}

TlsRefusal TlsFront::Impl::why_refused(SSL* ssl, int fd) {
  const unsigned long e = ERR_peek_last_error();
  const int reason = ERR_GET_REASON(e);
  const long verify = SSL_get_verify_result(ssl);
  ERR_clear_error();
  if (reason == SSL_R_HTTP_REQUEST || reason == SSL_R_HTTPS_PROXY_REQUEST) {
    // Go's answer to it, which curl and browsers show
    constexpr std::string_view text =
        "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";
    set_blocking(fd, true);
    set_timeouts(fd, 1);
    (void)write_all(fd, text.data(), text.size());
    close_gracefully(fd);  // the rest of the request read, not reset away with the answer
    return TlsRefusal::plain_http;
  }
  if (reason == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE) return TlsRefusal::no_certificate;
  if (verify == X509_V_ERR_CERT_HAS_EXPIRED || verify == X509_V_ERR_CERT_NOT_YET_VALID)
    return TlsRefusal::expired_certificate;
  if (verify != X509_V_OK) return TlsRefusal::bad_certificate;
  return TlsRefusal::handshake;
}

int TlsFront::Impl::connect_backend() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(backend));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sockaddr_in local{};
  socklen_t size = sizeof local;
  // The local port is known (bound) before the request can reach the server.
  if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &size) != 0) {
    ::close(fd);
    return -1;
  }
  {
    std::lock_guard lock(mutex);
    relays.insert(ntohs(local.sin_port));
  }
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    std::lock_guard lock(mutex);
    relays.erase(ntohs(local.sin_port));
    ::close(fd);
    return -1;
  }
  int on = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  return fd;
}

void TlsFront::Impl::relay(SSL* ssl, int client, int server) {
  char buf[16384];
  bool client_open = true;
  for (;;) {
    pollfd p[3] = {
        {client, static_cast<short>(client_open ? POLLIN : 0), 0}, {server, POLLIN, 0}, {stop[0], POLLIN, 0}};
    if (!(client_open && SSL_pending(ssl) > 0) && ::poll(p, 3, idle_ms) <= 0) return;  // idle, or failed
    if (p[2].revents) return;                                                          // the front stops
    if (client_open && (SSL_pending(ssl) > 0 || p[0].revents)) {
      const int n = SSL_read(ssl, buf, sizeof buf);
      const int error = n > 0 ? SSL_ERROR_NONE : SSL_get_error(ssl, n);
      if (n > 0) {
        if (!write_all(server, buf, static_cast<std::size_t>(n))) return;
      } else if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
        ERR_clear_error();  // a record that was not data (a ticket, a key update), or not whole yet
      } else {              // the client sent all it will (or failed): the server still answers
        client_open = false;
        ::shutdown(server, SHUT_WR);
      }
    }
    if (p[1].revents) {
      const ssize_t n = ::recv(server, buf, sizeof buf, 0);
      if (n <= 0) return;  // the server answered and closed
      if (!ssl_write_all(ssl, buf, static_cast<std::size_t>(n))) return;
    }
  }
}

void TlsFront::Impl::serve(int fd) {
  std::shared_ptr<TlsContext> ctx;
  {
    std::lock_guard lock(mutex);
    ctx = context;
  }
  SSL* ssl = SSL_new(ctx->get());
  if (!ssl) return;
  SSL_set_fd(ssl, fd);
  if (handshake(ssl, fd) != 1) {
    // refused (counted), or the front stops
  } else if (!ctx->config().client_allowed_sans.empty() &&
             !san_allowed(ssl, ctx->config().client_allowed_sans)) {
    ++refused[static_cast<std::size_t>(TlsRefusal::san_not_allowed)];
  } else {
    set_timeouts(fd, idle_ms / 1000);  // from here: a slow reader of the answer, records in pieces
    if (const int server = connect_backend(); server >= 0) {
      sockaddr_in local{};
      socklen_t size = sizeof local;
      ::getsockname(server, reinterpret_cast<sockaddr*>(&local), &size);
      relay(ssl, fd, server);
      {
        std::lock_guard lock(mutex);
        relays.erase(ntohs(local.sin_port));
      }
      ::close(server);
      SSL_shutdown(ssl);
      close_gracefully(fd);
    }
  }
  ERR_clear_error();
  SSL_free(ssl);
}

void TlsFront::Impl::worker() {
  for (;;) {
    int fd = -1;
    {
      std::unique_lock lock(mutex);
      work.wait(lock, [&] { return stopping || !waiting.empty(); });
      if (stopping) return;
      fd = waiting.front();
      waiting.pop_front();
    }
    serve(fd);
    ::close(fd);
  }
}

void TlsFront::Impl::accept_loop() {
  for (;;) {
    pollfd p[2] = {{listener, POLLIN, 0}, {stop[0], POLLIN, 0}};
    if (::poll(p, 2, -1) < 0 && errno != EINTR) return;
    if (p[1].revents) return;
    if (!(p[0].revents & POLLIN)) continue;
    int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;  // the client left first, or no descriptor left for now
    int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    std::lock_guard lock(mutex);
    if (waiting.size() >= max_waiting) {
      ::close(fd);
      continue;
    }
    waiting.push_back(fd);
    work.notify_one();
  }
}

TlsFront::TlsFront(std::shared_ptr<TlsContext> context, const std::string& listen, int backend, int threads)
    : impl_(std::make_unique<Impl>()) {
  Impl& I = *impl_;
  I.context = std::move(context);
  I.backend = backend;
  I.listener = listen_on(listen);
  sockaddr_storage addr{};
  socklen_t size = sizeof addr;
  ::getsockname(I.listener, reinterpret_cast<sockaddr*>(&addr), &size);
  I.port = ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  if (::pipe2(I.stop, O_CLOEXEC) != 0) {
    ::close(I.listener);
    throw Error(ErrorKind::io, fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  try {
    for (int i = 0; i < std::max(threads, 1); ++i) I.threads.emplace_back([&I] { I.worker(); });
    I.threads.emplace_back([&I] { I.accept_loop(); });
  } catch (...) {  // no thread for one more (EAGAIN): those started stopped, every descriptor closed
    I.stop_all();
    throw;
  }
}

TlsFront::~TlsFront() { impl_->stop_all(); }

void TlsFront::Impl::stop_all() {
  Impl& I = *this;
  {
    std::lock_guard lock(I.mutex);
    I.stopping = true;
  }
  I.work.notify_all();
  (void)!::write(I.stop[1], "x", 1);
  for (auto& t : I.threads) t.join();
  for (int fd : I.waiting) ::close(fd);
  for (int fd : {I.listener, I.stop[0], I.stop[1]}) ::close(fd);
}

void TlsFront::use(std::shared_ptr<TlsContext> context) {
  std::lock_guard lock(impl_->mutex);
  impl_->context = std::move(context);
}

int TlsFront::port() const { return impl_->port; }

bool TlsFront::ours(int port) const {
  std::lock_guard lock(impl_->mutex);
  return impl_->relays.contains(port);
}

std::uint64_t TlsFront::refused(TlsRefusal why) const {
  return impl_->refused[static_cast<std::size_t>(why)].load();
}

}  // namespace perfspec::exporter
