// SPDX-License-Identifier: MIT
#include "exporter/basic_auth.hpp"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace perfspec::exporter {
namespace {

// `Basic BASE64` decoded: "user:password"; empty when the header is not that.
std::string credentials(std::string_view header) {
  constexpr std::string_view scheme = "Basic ";
  if (header.size() <= scheme.size()) return {};
  for (std::size_t i = 0; i < scheme.size() - 1; ++i)  // the scheme is case-insensitive (RFC 7617)
    if ((header[i] | 0x20) != (scheme[i] | 0x20)) return {};
  if (header[scheme.size() - 1] != ' ') return {};
  std::string_view text = header.substr(scheme.size());
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.empty() || text.size() % 4 != 0 || text.size() > 4096) return {};
  std::string out(text.size() / 4 * 3, '\0');
  const int n =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                      reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return {};
  // EVP_DecodeBlock counts the padding's bytes as decoded zeros
  std::size_t size = static_cast<std::size_t>(n);
  for (std::size_t i = text.size(); i > 0 && text[i - 1] == '='; --i) --size;
  out.resize(size);
  return out;
}

std::string sha256(std::string_view a, std::string_view b, std::string_view c) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  std::string out;
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return out;
  for (std::string_view part : {a, std::string_view("\0", 1), b, std::string_view("\0", 1), c})
    EVP_DigestUpdate(ctx.get(), part.data(), part.size());
  if (EVP_DigestFinal_ex(ctx.get(), digest, &size) != 1) return out;
  return std::string(reinterpret_cast<char*>(digest), size);
}

// A hash of a password nobody has, checked for an unknown user so that a wrong name takes as long to
// refuse as a wrong password (exporter-toolkit does the same).
constexpr const char* nobody_hash = "$2b$10$TeRCWVb/d4K0.3Yn0I9Nq.qMkAdRq/w4Y2PeDIyobF2M7HVLOdeF2";

}  // namespace

bool bcrypt_matches(std::string_view password, const std::string& hash) {
  if (password.find('\0') != std::string_view::npos) return false;
  auto data = std::make_unique<crypt_data>();  // 32 KiB: not on a server thread's stack
  const std::string pw(password);
  const char* out = crypt_r(pw.c_str(), hash.c_str(), data.get());
  // crypt_r fails with a string starting '*' (never a hash), or null
  return out && out[0] != '*' && hash.size() == std::strlen(out) &&
         CRYPTO_memcmp(out, hash.data(), hash.size()) == 0;
}

BasicAuth::BasicAuth(std::vector<std::pair<std::string, std::string>> users) : users_(std::move(users)) {
  std::sort(users_.begin(), users_.end());
}

BasicAuth::Verdict BasicAuth::check(const char* authorization) {
  if (users_.empty()) return Verdict::allowed;
  if (!authorization) return Verdict::no_credentials;
  const std::string pair = credentials(authorization);
  const auto colon = pair.find(':');
  if (colon == std::string::npos) return Verdict::no_credentials;
  const std::string_view user = std::string_view(pair).substr(0, colon),
                         password = std::string_view(pair).substr(colon + 1);
  auto found = std::lower_bound(users_.begin(), users_.end(), user,
                                [](const auto& u, std::string_view name) { return u.first < name; });
  if (found == users_.end() || found->first != user) {
    (void)bcrypt_matches(password, nobody_hash);
    return Verdict::unknown_user;
  }
  const std::string key = sha256(user, found->second, password);
  {
    std::lock_guard lock(mutex_);
    if (!key.empty() && good_.contains(key)) return Verdict::allowed;
  }
  if (!bcrypt_matches(password, found->second)) return Verdict::wrong_password;
  std::lock_guard lock(mutex_);
  if (good_.size() >= 256) good_.clear();  // bounded: a few users' good passwords
  if (!key.empty()) good_.insert(key);
  return Verdict::allowed;
}

}  // namespace perfspec::exporter
