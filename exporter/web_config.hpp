// SPDX-License-Identifier: MIT
#pragma once
// The exporter's web configuration (`--web.config.file`): the file every exporter built on Prometheus's
// exporter-toolkit reads, in its format and meaning (docs/web-configuration.md there): TLS
// (`tls_server_config`), the answers' extra headers (`http_server_config.headers`) and users allowed
// in by basic authentication with bcrypt hashes (`basic_auth_users`). YAML, read with yaml-cpp; every
// error names FILE:LINE:COLUMN, as for the TOML configuration.
//
// Example file:
// ```
// tls_server_config:
//   cert_file: /etc/perfspec/exporter.crt
//   key_file: /etc/perfspec/exporter.key
//   client_auth_type: RequireAndVerifyClientCert
//   client_ca_file: /etc/perfspec/prometheus-ca.crt
// http_server_config:
//   headers:
//     X-Frame-Options: deny
// basic_auth_users:
//   prometheus: $2b$10$...
// ```
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "exporter/config.hpp"

namespace perfspec::exporter {

/// Go's crypto/tls ClientAuthType, by the names the file uses.
enum class ClientAuth { none, request, require_any, verify_if_given, require_and_verify };
std::string_view client_auth_name(ClientAuth a);

/// Where a value is written in the file (1-based line and byte column), for errors found when it is used.
struct Place {
  std::uint32_t line = 0, column = 0;
};

struct TlsConfig {
  // The certificate chain and key (PEM), each from a file or given inline (`cert`, `key`).
  std::string cert_file, key_file, cert, key;
  Place cert_at, key_at, client_ca_at;  ///< the values of cert(_file), key(_file), client_ca(_file)
  ClientAuth client_auth = ClientAuth::none;
  std::string client_ca_file, client_ca;  ///< the CAs client certificates are verified against
  std::vector<std::string>
      client_allowed_sans;  ///< a client certificate must hold one (DNS, IP, e-mail, URI)
  int min_version = 0x0303, max_version = 0x0304;  ///< TLS 1.2 to 1.3 (the protocol's numbers)
  std::vector<std::string> cipher_suites;          ///< IANA names (Go's), up to TLS 1.2; empty: OpenSSL's
  bool prefer_server_cipher_suites = true;
  std::vector<std::string> curve_preferences;  ///< OpenSSL's group names (P-256, X25519), mapped from Go's
};

struct WebConfig {
  std::string file;
  std::string text;  ///< the file's contents, for showing its lines in errors
  std::optional<TlsConfig> tls;
  bool http2 = true;  ///< read and kept: perfspec's exporter answers HTTP/1.1 only
  std::vector<std::pair<std::string, std::string>> headers;           ///< added to every answer
  std::vector<std::pair<std::string, std::string>> basic_auth_users;  ///< user, bcrypt hash; sorted
};

/// Parse `text` (the file `file`'s). Throws ConfigError (bad_value: FILE:LINE:COLUMN) for YAML that
/// does not parse, an unknown key, a value of the wrong type, or what exporter-toolkit refuses: a
/// TLS section without its certificate or key (or with both a file and an inline one), an unknown
/// client_auth_type or TLS version, client CAs without a client_auth_type that asks for certificates,
/// client_allowed_sans without one that requires them, a header it does not allow (or a value it
/// does not), a password that is not a bcrypt hash. Files named in it are not read here; a relative
/// name is taken in `file`'s folder, as exporter-toolkit takes it.
WebConfig parse_web_config(std::string_view text, const std::string& file);
/// Read (read_config_file) and parse.
WebConfig load_web_config(const std::string& path);

}  // namespace perfspec::exporter
