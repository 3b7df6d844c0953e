// SPDX-License-Identifier: MIT
#pragma once
// TLS for the exporter, with OpenSSL. civetweb as Debian builds it cannot serve TLS with OpenSSL 3 (it
// loads OpenSSL 1.1's SSL_get_peer_certificate by name, which OpenSSL 3 no longer exports: Debian 12's
// 1.15 calls a null pointer on the first connection, 1.16 refuses to start), so TLS is terminated here
// and each connection, once its handshake passed the web configuration's client-certificate policy,
// is relayed to civetweb on the loopback interface.
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "exporter/web_config.hpp"

typedef struct ssl_ctx_st SSL_CTX;

namespace perfspec::exporter {

/// Why a TLS connection was refused, as counted (perfspec_exporter_tls_refused_total{reason}).
enum class TlsRefusal : std::uint8_t {
  plain_http,           ///< plain HTTP sent to the TLS port (answered 400, as Go's servers answer it)
  no_certificate,       ///< the policy requires a client certificate and none was sent
  bad_certificate,      ///< the client's certificate did not verify against the client CAs
  expired_certificate,  ///< ... because it has expired (or is not valid yet)
  san_not_allowed,      ///< no subject alternative name of it is in client_allowed_sans
  handshake,            ///< any other failed handshake (versions, ciphers, garbage)
  timeout,              ///< no handshake within 2 s
};
inline constexpr std::size_t tls_refusals = 7;
std::string_view tls_refusal_name(TlsRefusal why);

/// An OpenSSL server context made from a web configuration's TLS section: its certificate chain and
/// key (files read now: a renewed certificate is taken on reload), versions, cipher suites, curves and
/// client-certificate policy.
class TlsContext {
 public:
  /// Throws ConfigError naming the place in the web configuration of the file or value that cannot be
  /// used (a missing file, PEM that does not parse, a key that is not the certificate's).
  static std::shared_ptr<TlsContext> make(const WebConfig& web);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;
  SSL_CTX* get() const { return ctx_; }
  const TlsConfig& config() const { return config_; }

 private:
  TlsContext() = default;
  SSL_CTX* ctx_ = nullptr;
  TlsConfig config_;
};

/// TLS in front of an HTTP server: accepts on `listen` (HOST:PORT), and relays each connection whose
/// handshake passed to 127.0.0.1:`backend` over a connection whose local port ours() then knows (the
/// server answers nothing else there). `threads` connections are served at once (the others wait),
/// each with 2 s for its handshake and for each read after.
class TlsFront {
 public:
  /// Throws Error (io) when it cannot listen on `listen`.
  TlsFront(std::shared_ptr<TlsContext> context, const std::string& listen, int backend, int threads);
  ~TlsFront();
  TlsFront(const TlsFront&) = delete;
  TlsFront& operator=(const TlsFront&) = delete;
  /// New connections use `context` (a reload); those under way keep theirs.
  void use(std::shared_ptr<TlsContext> context);
  int port() const;
  /// Whether a connection to the backend from local port `port` is one this front made.
  bool ours(int port) const;
  std::uint64_t refused(TlsRefusal why) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfspec::exporter
