// SPDX-License-Identifier: MIT
// The exporter's web configuration (exporter/web_config.hpp): exporter-toolkit's file, its values and
// every refusal at its place in the file.
#include <doctest/doctest.h>

#include <string>

#include "exporter/web_config.hpp"

using namespace perfspec;
using namespace perfspec::exporter;

namespace {

std::string web_error(std::string_view text) {
  try {
    parse_web_config(text, "web.yml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

constexpr const char* hash = "$2y$10$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG";

}  // namespace

TEST_CASE("a web configuration: TLS, headers and users, as exporter-toolkit reads them") {
  const WebConfig c = parse_web_config(std::string("# node_exporter's\n"
                                                   "tls_server_config:\n"
                                                   "  cert_file: server.crt\n"
                                                   "  key_file: server.key\n"
                                                   "  client_auth_type: RequireAndVerifyClientCert\n"
                                                   "  client_ca_file: ca.crt\n"
                                                   "  client_allowed_sans: [prometheus.example]\n"
                                                   "  min_version: TLS13\n"
                                                   "  cipher_suites:\n"
                                                   "    - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n"
                                                   "  curve_preferences: [X25519, CurveP256]\n"
                                                   "  prefer_server_cipher_suites: false\n"
                                                   "http_server_config:\n"
                                                   "  http2: false\n"
                                                   "  headers:\n"
                                                   "    X-Frame-Options: deny\n"
                                                   "    Strict-Transport-Security: max-age=31536000\n"
                                                   "    X-XSS-Protection: ''\n"
                                                   "basic_auth_users:\n"
                                                   "  zoe: ") +
                                           hash + "\n  alice: " + hash + "\n",
                                       "web.yml");
  CHECK(c.file == "web.yml");
  REQUIRE(c.tls);
  CHECK(c.tls->cert_file == "server.crt");
  CHECK(c.tls->key_file == "server.key");
  CHECK(c.tls->client_auth == ClientAuth::require_and_verify);
  CHECK(c.tls->client_ca_file == "ca.crt");
  CHECK(c.tls->client_allowed_sans == std::vector<std::string>{"prometheus.example"});
  CHECK(c.tls->min_version == 0x0304);
  CHECK(c.tls->max_version == 0x0304);
  CHECK(c.tls->cipher_suites == std::vector<std::string>{"ECDHE-RSA-AES128-GCM-SHA256"});
  CHECK(c.tls->curve_preferences == std::vector<std::string>{"X25519", "P-256"});
  CHECK_FALSE(c.tls->prefer_server_cipher_suites);
  CHECK_FALSE(c.http2);
  // a blank value leaves its header unset
  CHECK(c.headers == std::vector<std::pair<std::string, std::string>>{
                         {"X-Frame-Options", "deny"}, {"Strict-Transport-Security", "max-age=31536000"}});
  CHECK(c.basic_auth_users ==
        std::vector<std::pair<std::string, std::string>>{{"alice", hash}, {"zoe", hash}});
  // an empty file, and sections left empty: plain HTTP, nobody asked for a password
  for (const char* empty : {"", "# nothing\n", "tls_server_config:\nbasic_auth_users:\n"}) {
    const WebConfig e = parse_web_config(empty, "web.yml");
    CHECK_FALSE(e.tls);
    CHECK(e.basic_auth_users.empty());
    CHECK(e.headers.empty());
  }
}

TEST_CASE("web configuration errors: each at its place in the file, with exporter-toolkit's refusals") {
  CHECK(web_error("tls_server_config:\n  cert_file: a\n   key_file: b\n") ==
        "web.yml:3:12: error: illegal map value\n"
        " 3 |    key_file: b\n"
        "   |            ^\n");
  CHECK(web_error("tls_server_config:\n  cert_file: a\n  key_fil: b\n") ==
        "web.yml:3:3: error: unknown key 'key_fil' in tls_server_config\n"
        " 3 |   key_fil: b\n"
        "   |   ^\n"
        "help: known keys here: cert_file, key_file, cert, key, client_auth_type, client_ca_file, client_ca, "
        "client_allowed_sans, min_version, max_version, cipher_suites, prefer_server_cipher_suites, "
        "curve_preferences\n");
  CHECK(web_error("tls_server_config:\n  cert_file: a\n") ==
        "web.yml:2:3: error: tls_server_config has no key_file (or key)\n"
        " 2 |   cert_file: a\n"
        "   |   ^\n");
  CHECK(web_error(
            "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireClientCert\n") ==
        "web.yml:4:21: error: unknown client_auth_type 'RequireClientCert'\n"
        " 4 |   client_auth_type: RequireClientCert\n"
        "   |                     ^\n"
        "help: one of: NoClientCert, RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven, "
        "RequireAndVerifyClientCert\n");
  CHECK(web_error("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: ca\n") ==
        "web.yml:4:3: error: client CAs are given but client_auth_type does not ask for client certificates\n"
        " 4 |   client_ca_file: ca\n"
        "   |   ^\n"
        "help: client_auth_type: RequireAndVerifyClientCert\n");
  CHECK(web_error("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS13\n  max_version: "
                  "TLS12\n") ==
        "web.yml:5:16: error: max_version is below min_version\n"
        " 5 |   max_version: TLS12\n"
        "   |                ^\n");
  CHECK(web_error(
            "tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n")
            .starts_with("web.yml:4:19: error: unknown cipher suite 'TLS_AES_128_GCM_SHA256'\n"));
  CHECK(web_error("http_server_config:\n  headers:\n    Server: perfspec\n") ==
        "web.yml:3:5: error: the header 'Server' cannot be set\n"
        " 3 |     Server: perfspec\n"
        "   |     ^\n"
        "help: the headers: Content-Security-Policy, Strict-Transport-Security, X-Content-Type-Options, "
        "X-Frame-Options, X-XSS-Protection\n");
  CHECK(web_error("http_server_config:\n  headers:\n    X-Frame-Options: DENY\n") ==
        "web.yml:3:22: error: X-Frame-Options cannot be 'DENY'\n"
        " 3 |     X-Frame-Options: DENY\n"
        "   |                      ^\n"
        "help: one of: deny, sameorigin\n");
  CHECK(web_error("http_server_config:\n  http2: maybe\n") ==
        "web.yml:2:10: error: expected true or false\n"
        " 2 |   http2: maybe\n"
        "   |          ^\n");
  CHECK(web_error("basic_auth_users:\n  alice: secret\n") ==
        "web.yml:2:10: error: the password of 'alice' is not a bcrypt hash\n"
        " 2 |   alice: secret\n"
        "   |          ^\n"
        "help: make one with: htpasswd -nBC 10 \"\" | tr -d ':\\n'\n");
  CHECK(web_error(std::string("basic_auth_users:\n  alice: ") + hash + "\n  alice: " + hash + "\n")
            .starts_with("web.yml:3:3: error: 'alice' is given twice in basic_auth_users\n"));
  CHECK(web_error(std::string("basic_auth_users:\n  \"a:b\": ") + hash + "\n")
            .starts_with("web.yml:2:3: error: the user name 'a:b' cannot be sent in basic authentication\n"));
  CHECK(web_error("rate_limit:\n  interval: 1s\n") ==
        "web.yml:1:1: error: rate_limit is not offered by perfspec's exporter\n"
        " 1 | rate_limit:\n"
        "   | ^\n"
        "help: leave it out, or limit the requests in a proxy before the exporter\n");
  CHECK(web_error("- a\n- b\n") ==
        "web.yml:1:1: error: the file must be a mapping of keys to values\n"
        " 1 | - a\n"
        "   | ^\n");
  // a value after a multi-byte character: the column counts bytes, as the TOML file's
  CHECK(
      web_error("basic_auth_users:\n  \xc3\xa9va: x\n").starts_with("web.yml:2:10: error: the password of"));
}
