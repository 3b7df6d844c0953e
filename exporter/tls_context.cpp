// SPDX-License-Identifier: MIT
// An OpenSSL server context from the web configuration's tls_server_config, as exporter-toolkit makes
// Go's tls.Config from it: versions, cipher suites (TLS 1.2 and below), curves, the server's
// preference, and the client-certificate policy (Go's ClientAuthType in OpenSSL's verify modes).
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstring>
#include <string>

#include <fmt/format.h>

#include "exporter/tls.hpp"
#include "spec/printable.hpp"

namespace perfspec::exporter {
namespace {

// The last OpenSSL error's reason, and the queue emptied.
std::string openssl_reason() {
  unsigned long e = ERR_peek_last_error();
  const char* reason = e ? ERR_reason_error_string(e) : nullptr;
  ERR_clear_error();
  return reason ? reason : "OpenSSL gave no reason";
}

using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;

// A PEM value: the file's bytes (read as the configuration is, with its errno), or the inline text.
std::string pem_text(const WebConfig& web, const std::string& file, const std::string& inline_text,
                     std::string_view key, const Place& at) {
  if (file.empty()) return inline_text;
  try {
    return read_config_file(file, fmt::format("{} '{}'", key, file));
  } catch (const ConfigError& e) {
    std::string why = e.what();
    why = why.substr(why.find(": error: ") + 9);
    if (!why.empty() && why.back() == '\n') why.pop_back();
    throw error_in(web.file, web.text, at.line, at.column, ErrorKind::io, why);
  }
}

// Client certificates requested but not verified (RequestClientCert, RequireAnyClientCert): any
// certificate is taken, as Go takes it.
int accept_any(int, X509_STORE_CTX*) { return 1; }

int tls_version(int v) {
  switch (v) {
    case 0x0301: return TLS1_VERSION;
    case 0x0302: return TLS1_1_VERSION;
    case 0x0303: return TLS1_2_VERSION;
    default: return TLS1_3_VERSION;
  }
}

}  // namespace

std::string_view tls_refusal_name(TlsRefusal why) {
  switch (why) {
    case TlsRefusal::plain_http: return "plain_http";
    case TlsRefusal::no_certificate: return "no_certificate";
    case TlsRefusal::bad_certificate: return "bad_certificate";
    case TlsRefusal::expired_certificate: return "expired_certificate";
    case TlsRefusal::san_not_allowed: return "san_not_allowed";
    case TlsRefusal::handshake: return "handshake";
    case TlsRefusal::timeout: return "timeout";
  }
  return "handshake";
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

namespace {

// The steps of TlsContext::make, each failing at the place in the web configuration it is about.
struct Maker {
  const WebConfig& web;
  const TlsConfig& t;
  SSL_CTX* ctx;

  ConfigError fail(const Place& at, std::string_view message) const {
    if (at.line == 0)
      return ConfigError(ErrorKind::bad_value,
                         fmt::format("{}: error: {}\n", spec::printable(web.file), message));
    return error_in(web.file, web.text, at.line, at.column, ErrorKind::bad_value, message);
  }

  // The certificate chain (the server's first), and its key.
  void certificate() const {
    const std::string cert = pem_text(web, t.cert_file, t.cert, "cert_file", t.cert_at);
    Bio bio(BIO_new_mem_buf(cert.data(), static_cast<int>(cert.size())), BIO_free);
    X509* leaf = PEM_read_bio_X509_AUX(bio.get(), nullptr, nullptr, nullptr);
    if (!leaf || SSL_CTX_use_certificate(ctx, leaf) != 1) {
      X509_free(leaf);
      throw fail(t.cert_at, fmt::format("not a PEM certificate: {}", openssl_reason()));
    }
    X509_free(leaf);
    while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr))
      if (SSL_CTX_add0_chain_cert(ctx, ca) != 1) X509_free(ca);
    ERR_clear_error();  // the end of the chain is a "no start line" error
    const std::string key = pem_text(web, t.key_file, t.key, "key_file", t.key_at);
    Bio key_bio(BIO_new_mem_buf(key.data(), static_cast<int>(key.size())), BIO_free);
    EVP_PKEY* pkey = PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr);
    if (!pkey) throw fail(t.key_at, fmt::format("not a PEM private key: {}", openssl_reason()));
    const bool used = SSL_CTX_use_PrivateKey(ctx, pkey) == 1 && SSL_CTX_check_private_key(ctx) == 1;
    EVP_PKEY_free(pkey);
    if (!used) {
      ERR_clear_error();
      throw fail(t.key_at, "the key is not the certificate's");
    }
  }

  // The client CAs (verified against, and named to clients as those it accepts), and the policy: Go's
  // ClientAuthType as OpenSSL's verify modes.
  void clients() const {
    const std::string ca = pem_text(web, t.client_ca_file, t.client_ca, "client_ca_file", t.client_ca_at);
    if (!ca.empty()) {
      Bio ca_bio(BIO_new_mem_buf(ca.data(), static_cast<int>(ca.size())), BIO_free);
      X509_STORE* store = SSL_CTX_get_cert_store(ctx);
      int n = 0;
      while (X509* c = PEM_read_bio_X509(ca_bio.get(), nullptr, nullptr, nullptr)) {
        X509_STORE_add_cert(store, c);
        SSL_CTX_add_client_CA(ctx, c);
        X509_free(c);
        ++n;
      }
      ERR_clear_error();
      if (n == 0) throw fail(t.client_ca_at, "no PEM certificate in the client CAs");
    } else if (t.client_auth == ClientAuth::verify_if_given ||
               t.client_auth == ClientAuth::require_and_verify) {
      SSL_CTX_set_default_verify_paths(ctx);  // Go verifies against the system's roots then
    }
    constexpr int required = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    switch (t.client_auth) {
      case ClientAuth::none: SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr); break;
      case ClientAuth::request: SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, accept_any); break;
      case ClientAuth::require_any: SSL_CTX_set_verify(ctx, required, accept_any); break;
      case ClientAuth::verify_if_given: SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr); break;
      case ClientAuth::require_and_verify: SSL_CTX_set_verify(ctx, required, nullptr); break;
    }
  }

  // Versions, cipher suites (TLS 1.2 and below), the server's preference, curves.
  void protocol() const {
    SSL_CTX_set_min_proto_version(ctx, tls_version(t.min_version));
    SSL_CTX_set_max_proto_version(ctx, tls_version(t.max_version));
    auto joined = [](const std::vector<std::string>& names) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ":") + n;
      return list;
    };
    if (!t.cipher_suites.empty() && SSL_CTX_set_cipher_list(ctx, joined(t.cipher_suites).c_str()) != 1)
      throw fail({}, fmt::format("OpenSSL has none of the cipher suites: {}", openssl_reason()));
    if (t.prefer_server_cipher_suites) SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
    if (!t.curve_preferences.empty() &&
        SSL_CTX_set1_groups_list(ctx, joined(t.curve_preferences).c_str()) != 1)
      throw fail({}, fmt::format("OpenSSL cannot use the curves {}: {}", joined(t.curve_preferences),
                                 openssl_reason()));
  }
};

}  // namespace

std::shared_ptr<TlsContext> TlsContext::make(const WebConfig& web) {
  std::shared_ptr<TlsContext> out(new TlsContext);
  out->config_ = *web.tls;
  ERR_clear_error();
  out->ctx_ = SSL_CTX_new(TLS_server_method());
  if (!out->ctx_)
    throw ConfigError(ErrorKind::io, fmt::format("{}: error: cannot make a TLS context: {}\n",
                                                 spec::printable(web.file), openssl_reason()));
  const Maker maker{web, out->config_, out->ctx_};
  maker.protocol();
  maker.certificate();
  maker.clients();
  return out;
}

}  // namespace perfspec::exporter
