// SPDX-License-Identifier: MIT
#pragma once
// HTTP basic authentication against bcrypt hashes (the web configuration's basic_auth_users), checked
// with the system's crypt_r (libxcrypt: $2a$, $2b$, $2y$). A bcrypt check takes tens of milliseconds
// by design: a user and password found good are remembered (as a SHA-256 of the three, never the
// password), so that a scrape every few seconds costs one check in all.
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perfspec::exporter {

class BasicAuth {
 public:
  /// `users`: user name, bcrypt hash. None: every request is allowed.
  explicit BasicAuth(std::vector<std::pair<std::string, std::string>> users = {});
  enum class Verdict : std::uint8_t { allowed, no_credentials, unknown_user, wrong_password };
  /// The request's Authorization header (null when it has none).
  Verdict check(const char* authorization);
  bool enabled() const { return !users_.empty(); }

 private:
  std::vector<std::pair<std::string, std::string>> users_;  // sorted by name
  std::mutex mutex_;
  std::set<std::string> good_;  // SHA-256 of user, hash and password found good
};

/// A bcrypt check of `password` against `hash` (crypt_r): true when they match.
bool bcrypt_matches(std::string_view password, const std::string& hash);

}  // namespace perfspec::exporter
