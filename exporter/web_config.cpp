// SPDX-License-Identifier: MIT
// The web configuration file, read with yaml-cpp into WebConfig and checked as exporter-toolkit checks
// it (its web/tls_config.go), each error at the key or value it is about.
#include "exporter/web_config.hpp"

#include <algorithm>
#include <array>
#include <map>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace perfspec::exporter {
namespace {

// Go's names of the TLS 1.0-1.2 cipher suites crypto/tls counts secure (tls.CipherSuites()), and
// OpenSSL's names of the same suites.
constexpr std::array<std::pair<std::string_view, std::string_view>, 14> cipher_names{{
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"},
}};

// Go's curve names, OpenSSL's group names.
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> curve_names{
    {{"CurveP256", "P-256"}, {"CurveP384", "P-384"}, {"CurveP521", "P-521"}, {"X25519", "X25519"}}};

constexpr std::array<std::pair<std::string_view, int>, 4> tls_versions{
    {{"TLS10", 0x0301}, {"TLS11", 0x0302}, {"TLS12", 0x0303}, {"TLS13", 0x0304}}};

constexpr std::array<std::pair<std::string_view, ClientAuth>, 5> client_auths{{
    {"NoClientCert", ClientAuth::none},
    {"RequestClientCert", ClientAuth::request},
    {"RequireAnyClientCert", ClientAuth::require_any},
    {"VerifyClientCertIfGiven", ClientAuth::verify_if_given},
    {"RequireAndVerifyClientCert", ClientAuth::require_and_verify},
}};

// The headers exporter-toolkit lets a file add, and the values it allows (none listed: any).
const std::map<std::string_view, std::vector<std::string_view>> allowed_headers{
    {"Strict-Transport-Security", {}},
    {"X-Content-Type-Options", {"nosniff"}},
    {"X-Frame-Options", {"deny", "sameorigin"}},
    {"X-XSS-Protection", {}},
    {"Content-Security-Policy", {}},
};

template <typename Table> std::string names_of(const Table& table) {
  std::string out;
  for (const auto& [name, value] : table) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

// bcrypt's modular crypt format: $2a$, $2b$ or $2y$, a cost of 04 to 31, $, 53 characters of its base64.
bool bcrypt_hash(std::string_view h) {
  if (h.size() != 60 || h[0] != '$' || h[1] != '2' || (h[2] != 'a' && h[2] != 'b' && h[2] != 'y') ||
      h[3] != '$' || h[6] != '$')
    return false;
  if (h[4] < '0' || h[4] > '3' || h[5] < '0' || h[5] > '9') return false;
  const int cost = (h[4] - '0') * 10 + (h[5] - '0');
  if (cost < 4 || cost > 31) return false;
  return std::all_of(h.begin() + 7, h.end(), [](char c) {
    return c == '.' || c == '/' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  });
}

class Reader {
 public:
  Reader(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  WebConfig run() {
    WebConfig c;
    c.file = file_;
    c.text = std::string(text_);
    YAML::Node root;
    try {
      root = YAML::Load(std::string(text_));
    } catch (const YAML::Exception& e) {
      throw fail(e.mark, e.msg);
    }
    if (root.IsNull()) return c;  // an empty file: HTTP, no authentication
    for (auto& [key, at, value] :
         entries(root, "the file",
                 {"tls_server_config", "http_server_config", "basic_auth_users", "rate_limit"})) {
      if (key == "tls_server_config") {
        if (!value.IsNull()) c.tls = tls(value);
      } else if (key == "http_server_config") {
        if (!value.IsNull()) http(value, c);
      } else if (key == "basic_auth_users") {
        if (!value.IsNull()) users(value, c);
      } else {
        throw fail(at, "rate_limit is not offered by perfspec's exporter",
                   "leave it out, or limit the requests in a proxy before the exporter");
      }
    }
    return c;
  }

 private:
  std::string_view text_;
  const std::string& file_;

  // A mark's place, its column in bytes as the TOML file's (yaml-cpp counts characters).
  Place place(const YAML::Mark& at) const {
    if (at.is_null() || at.line < 0 || at.column < 0) return {};
    std::size_t start = 0;
    for (int line = 0; line < at.line && start != std::string_view::npos; ++line) {
      start = text_.find('\n', start);
      if (start != std::string_view::npos) ++start;
    }
    std::uint32_t bytes = 0;
    if (start != std::string_view::npos)
      for (int chars = 0; start + bytes < text_.size() && text_[start + bytes] != '\n';) {
        if ((static_cast<unsigned char>(text_[start + bytes]) & 0xc0) != 0x80 && chars++ == at.column) break;
        ++bytes;
      }
    return {static_cast<std::uint32_t>(at.line + 1), bytes + 1};
  }

  ConfigError fail(const YAML::Mark& at, std::string_view message, std::string_view help = {}) const {
    const Place p = place(at);
    return error_in(file_, text_, p.line, p.column, ErrorKind::bad_value, message, help);
  }

  struct Entry {
    std::string key;
    YAML::Mark at;  // the key's
    YAML::Node value;
  };

  // A mapping's keys (strings, each once, among `known` unless it is empty) with their values, in the
  // file's order.
  std::vector<Entry> entries(const YAML::Node& map, std::string_view where,
                             std::initializer_list<std::string_view> known) const {
    if (!map.IsMap()) throw fail(map.Mark(), fmt::format("{} must be a mapping of keys to values", where));
    std::vector<Entry> out;
    for (const auto& kv : map) {
      const std::string key = scalar(kv.first, "a key");
      if (known.size() && std::find(known.begin(), known.end(), key) == known.end()) {
        std::string names;
        for (auto k : known) names += (names.empty() ? "" : ", ") + std::string(k);
        throw fail(kv.first.Mark(), fmt::format("unknown key '{}' in {}", key, where),
                   "known keys here: " + names);
      }
      if (std::any_of(out.begin(), out.end(), [&](const Entry& e) { return e.key == key; }))
        throw fail(kv.first.Mark(), fmt::format("'{}' is given twice in {}", key, where));
      out.push_back({key, kv.first.Mark(), kv.second});
    }
    return out;
  }

  std::string scalar(const YAML::Node& n, std::string_view what) const {
    if (n.IsNull()) return {};
    if (!n.IsScalar()) throw fail(n.Mark(), fmt::format("expected {}, a string", what));
    return n.Scalar();
  }

  bool boolean(const YAML::Node& n) const {
    bool b = false;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, b)) throw fail(n.Mark(), "expected true or false");
    return b;
  }

  std::vector<std::string> list(const YAML::Node& n, std::string_view what) const {
    std::vector<std::string> out;
    if (n.IsNull()) return out;
    if (!n.IsSequence()) throw fail(n.Mark(), fmt::format("expected a list of {}", what));
    for (const auto& item : n) out.push_back(scalar(item, what));
    return out;
  }

  // A list of names, each the value `table` gives it.
  template <typename Table>
  std::vector<std::string> mapped(const Table& table, const YAML::Node& n, std::string_view what) const {
    std::vector<std::string> out;
    if (n.IsNull()) return out;
    if (!n.IsSequence()) throw fail(n.Mark(), fmt::format("expected a list of {}s", what));
    for (const auto& item : n) out.emplace_back(lookup(table, item, what));
    return out;
  }

  template <typename Table>
  auto lookup(const Table& table, const YAML::Node& n, std::string_view what) const {
    const std::string name = scalar(n, what);
    for (const auto& [key, value] : table)
      if (key == name) return value;
    throw fail(n.Mark(), fmt::format("unknown {} '{}'", what, name), "one of: " + names_of(table));
  }

  TlsConfig tls(const YAML::Node& node) const {
    TlsConfig t;
    YAML::Mark at = node.Mark(), ca_at, sans_at;
    YAML::Node min_node, max_node;
    for (auto& [key, key_at, v] :
         entries(node, "tls_server_config",
                 {"cert_file", "key_file", "cert", "key", "client_auth_type", "client_ca_file", "client_ca",
                  "client_allowed_sans", "min_version", "max_version", "cipher_suites",
                  "prefer_server_cipher_suites", "curve_preferences"})) {
      if (key == "cert_file") t.cert_file = scalar(v, "a file name");
      if (key == "key_file") t.key_file = scalar(v, "a file name");
      if (key == "cert") t.cert = scalar(v, "a PEM certificate");
      if (key == "key") t.key = scalar(v, "a PEM key");
      if (key == "cert_file" || key == "cert") t.cert_at = place(v.Mark());
      if (key == "key_file" || key == "key") t.key_at = place(v.Mark());
      if (key == "client_auth_type") t.client_auth = lookup(client_auths, v, "client_auth_type");
      if (key == "client_ca_file" || key == "client_ca") {
        (key == "client_ca" ? t.client_ca : t.client_ca_file) = scalar(v, "a CA certificate");
        ca_at = key_at;
        t.client_ca_at = place(v.Mark());
      }
      if (key == "client_allowed_sans") {
        t.client_allowed_sans = list(v, "names");
        sans_at = key_at;
      }
      if (key == "min_version") t.min_version = lookup(tls_versions, min_node = v, "TLS version");
      if (key == "max_version") t.max_version = lookup(tls_versions, max_node = v, "TLS version");
      if (key == "cipher_suites") t.cipher_suites = mapped(cipher_names, v, "cipher suite");
      if (key == "prefer_server_cipher_suites") t.prefer_server_cipher_suites = boolean(v);
      if (key == "curve_preferences") t.curve_preferences = mapped(curve_names, v, "curve");
    }
    if (t.cert_file.empty() && t.cert.empty()) throw fail(at, "tls_server_config has no cert_file (or cert)");
    if (t.key_file.empty() && t.key.empty()) throw fail(at, "tls_server_config has no key_file (or key)");
    if (!t.cert_file.empty() && !t.cert.empty())
      throw fail(at, "tls_server_config gives both cert_file and cert");
    if (!t.key_file.empty() && !t.key.empty())
      throw fail(at, "tls_server_config gives both key_file and key");
    if (!t.client_ca_file.empty() && !t.client_ca.empty())
      throw fail(ca_at, "tls_server_config gives both client_ca_file and client_ca");
    if ((!t.client_ca_file.empty() || !t.client_ca.empty()) && t.client_auth == ClientAuth::none)
      throw fail(ca_at, "client CAs are given but client_auth_type does not ask for client certificates",
                 "client_auth_type: RequireAndVerifyClientCert");
    if (!t.client_allowed_sans.empty() && t.client_auth != ClientAuth::require_any &&
        t.client_auth != ClientAuth::require_and_verify)
      throw fail(sans_at, "client_allowed_sans needs client certificates required",
                 "client_auth_type: RequireAndVerifyClientCert (or RequireAnyClientCert)");
    if (t.min_version > t.max_version)
      throw fail(max_node ? max_node.Mark() : min_node.Mark(), "max_version is below min_version");
    return t;
  }

  void http(const YAML::Node& node, WebConfig& c) const {
    for (auto& [key, key_at, v] : entries(node, "http_server_config", {"http2", "headers"})) {
      if (key == "http2") c.http2 = boolean(v);
      if (key != "headers" || v.IsNull()) continue;
      for (auto& [name, name_at, value] : entries(v, "headers", {})) {
        auto allowed = allowed_headers.find(name);
        if (allowed == allowed_headers.end())
          throw fail(name_at, fmt::format("the header '{}' cannot be set", name),
                     "the headers: " + names_of(allowed_headers));
        const std::string text = scalar(value, "a header's value");
        const auto& values = allowed->second;
        if (!values.empty() && std::find(values.begin(), values.end(), text) == values.end()) {
          std::string names;
          for (auto n : values) names += (names.empty() ? "" : ", ") + std::string(n);
          throw fail(value.Mark(), fmt::format("{} cannot be '{}'", name, text), "one of: " + names);
        }
        if (!text.empty()) c.headers.emplace_back(name, text);  // blank: unset, as exporter-toolkit's
      }
    }
  }

  void users(const YAML::Node& node, WebConfig& c) const {
    for (auto& [user, user_at, hash] : entries(node, "basic_auth_users", {})) {
      if (user.empty() || user.find(':') != std::string::npos)
        throw fail(user_at, fmt::format("the user name '{}' cannot be sent in basic authentication", user),
                   "a user name is not empty and has no ':'");
      const std::string h = scalar(hash, "a bcrypt hash");
      if (!bcrypt_hash(h))
        throw fail(hash.Mark(), fmt::format("the password of '{}' is not a bcrypt hash", user),
                   "make one with: htpasswd -nBC 10 \"\" | tr -d ':\\n'");
      c.basic_auth_users.emplace_back(user, h);
    }
    std::sort(c.basic_auth_users.begin(), c.basic_auth_users.end());
  }
};

}  // namespace

std::string_view client_auth_name(ClientAuth a) {
  for (const auto& [name, value] : client_auths)
    if (value == a) return name;
  return "NoClientCert";
}

WebConfig parse_web_config(std::string_view text, const std::string& file) {
  WebConfig c = Reader(text, file).run();
  // Relative file names are the file's folder's, as exporter-toolkit takes them.
  const auto slash = file.rfind('/');
  if (c.tls && slash != std::string::npos)
    for (std::string* name : {&c.tls->cert_file, &c.tls->key_file, &c.tls->client_ca_file})
      if (!name->empty() && name->front() != '/') *name = file.substr(0, slash + 1) + *name;
  return c;
}

WebConfig load_web_config(const std::string& path) {
  return parse_web_config(read_config_file(path, "the web configuration"), path);
}

}  // namespace perfspec::exporter
