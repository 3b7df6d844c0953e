// SPDX-License-Identifier: MIT
// The compiled index file and its cache folder (see table_index.hpp).
#include "spec/table_index.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "spec/hash.hpp"

#define XXH_INLINE_ALL  // header-only: the library keeps no run-time dependency on libxxhash
#include <xxhash.h>

namespace perfspec::spec::detail {

namespace {

constexpr std::string_view magic = "perfspec-event-index 4";
constexpr std::size_t block_size = 16 * 1024;
// An index is a few MiB at most (every x86 model's events take 0.6 MiB); anything much larger is not one.
constexpr std::size_t max_index_size = 256u * 1024 * 1024;
constexpr std::size_t max_header_size = 1u * 1024 * 1024;

std::uint64_t hash(const char* data, std::size_t size) { return hash_bytes({data, size}); }

// Fields cannot hold tabs or newlines: the index is line-based.
std::string one_line(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return out;
}

template <typename T> bool parse_number(std::string_view s, T& out, int base = 10) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc{} && p == s.data() + s.size() && !s.empty();
}

// Splits `s` at each `sep`.
void split(std::string_view s, char sep, std::vector<std::string_view>& out) {
  out.clear();
  while (true) {
    auto at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return;
    s.remove_prefix(at + 1);
  }
}

}  // namespace

std::string index_image(std::string_view sig, std::string_view payload, std::size_t lines,
                        std::size_t diagnostics, std::size_t offsets_at, std::size_t body_at) {
  std::string image = fmt::format("{}\n{}\nlayout {} {} {} {} {} {}\nsums", magic, sig, payload.size(), lines,
                                  diagnostics, offsets_at, body_at, block_size);
  for (std::size_t b = 0; b * block_size < payload.size(); ++b)
    image += fmt::format(" {:016x}", hash(payload.data() + b * block_size,
                                          std::min(block_size, payload.size() - b * block_size)));
  image += '\n';
  image += fmt::format("check {:016x}\n", hash(image.data(), image.size()));
  image += payload;
  return image;
}

CacheFolder::CacheFolder(const std::string& path) : path_(path) {
  if (path.empty() || path == "none") return;
  std::error_code ec;
  std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    problem_ = fmt::format("the cache folder '{}' cannot be created: {}", path, std::strerror(errno));
    return;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    problem_ = fmt::format("the cache folder '{}' cannot be opened: {}", path, std::strerror(errno));
    return;
  }
  // What is written and read here is trusted later: the folder must be this user's alone. The checks
  // are on the open folder, and every file is opened relative to it, so the path cannot be swapped.
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    problem_ = fmt::format("the cache folder '{}' cannot be examined: {}", path, std::strerror(errno));
  } else if (st.st_uid != ::geteuid()) {
    problem_ =
        fmt::format("the cache folder '{}' is not used: it belongs to uid {}, not to this user (uid {})",
                    path, st.st_uid, ::geteuid());
  } else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    problem_ = fmt::format("the cache folder '{}' is not used: others may write to it (mode {:04o})", path,
                           st.st_mode & 07777);
  }
  if (!problem_.empty()) {
    problem_ +=
        "; named events are read from the JSON tables each time (set PERFSPEC_CACHE_DIR to a folder of your "
        "own)";
    ::close(fd);
    return;
  }
  fd_ = fd;
}

CacheFolder::CacheFolder(const std::string& path, Bundled bundled) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  tables_owner_ = bundled.tables_owner;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !trusted_owner(st.st_uid) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
    ::close(fd);
    return;
  }
  fd_ = fd;
}

bool CacheFolder::trusted_owner(unsigned uid) const {
  if (uid == ::geteuid()) return true;
  return tables_owner_ && (uid == 0 || uid == *tables_owner_);
}

std::optional<std::uint64_t> file_hash(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<std::uint64_t> out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    char buffer[64 * 1024];
    while (true) {
      ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) break;
      if (n == 0) {
        out = XXH3_64bits_digest(&state);
        break;
      }
      XXH3_64bits_update(&state, buffer, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return out;
}

CacheFolder::~CacheFolder() {
  if (fd_ >= 0) ::close(fd_);
}

std::unique_ptr<IndexFile> IndexFile::open(const CacheFolder& folder, const std::string& name,
                                           std::string_view sig) {
  return open(folder, name, [sig](std::string_view recorded) { return recorded == sig; });
}

std::unique_ptr<IndexFile> IndexFile::open(const CacheFolder& folder, const std::string& name,
                                           const std::function<bool(std::string_view)>& accept) {
  if (!folder.usable()) return nullptr;
  std::unique_ptr<IndexFile> ix(new IndexFile);
  std::size_t diagnostics = 0;
  if (!ix->map_file(folder, name) || !ix->read_header(accept, diagnostics) ||
      !ix->read_diagnostics(diagnostics))
    return nullptr;
  return ix;
}

// Maps the file when it is a regular file of an owner the folder trusts (this user, for a cache folder),
// writable by no one else, of a size an index can have.
bool IndexFile::map_file(const CacheFolder& folder, const std::string& name) {
  int fd = ::openat(folder.fd(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && folder.trusted_owner(st.st_uid) &&
            !(st.st_mode & (S_IWGRP | S_IWOTH)) && st.st_size > 0 &&
            static_cast<std::size_t>(st.st_size) <= max_index_size;
  if (ok) {
    map_size_ = static_cast<std::size_t>(st.st_size);
    map_ = ::mmap(nullptr, map_size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map_ == MAP_FAILED) map_ = nullptr, ok = false;
  }
  ::close(fd);
  return ok;
}

// The header: five lines, the last the checksum of the four before it; the layout must fit the file.
bool IndexFile::read_header(const std::function<bool(std::string_view)>& accept, std::size_t& diagnostics) {
  std::string_view all(static_cast<const char*>(map_), map_size_);
  std::string_view head = all.substr(0, std::min(all.size(), max_header_size));
  std::string_view lines[5];
  std::size_t at = 0;
  for (auto& l : lines) {
    auto nl = head.find('\n', at);
    if (nl == std::string_view::npos) return false;
    l = head.substr(at, nl - at);
    at = nl + 1;
  }
  const std::size_t checked_part = static_cast<std::size_t>(lines[4].data() - all.data());
  std::uint64_t check = 0;
  if (lines[0] != magic || !lines[4].starts_with("check ") || !parse_number(lines[4].substr(6), check, 16) ||
      check != hash(all.data(), checked_part) || !accept(lines[1]))
    return false;
  std::vector<std::string_view> f;
  split(lines[2], ' ', f);
  std::size_t block = 0;
  if (f.size() != 7 || f[0] != "layout" || !parse_number(f[1], payload_size_) ||
      !parse_number(f[2], lines_) || !parse_number(f[3], diagnostics) || !parse_number(f[4], offsets_at_) ||
      !parse_number(f[5], body_at_) || !parse_number(f[6], block) || block != block_size)
    return false;
  // Its length is the header's and the payload's: a file cut short or grown is not trusted.
  if (at + payload_size_ != all.size() || offsets_at_ > body_at_ || body_at_ > payload_size_ ||
      body_at_ - offsets_at_ != 8 * lines_ || lines_ > payload_size_)
    return false;
  split(lines[3], ' ', f);
  std::size_t blocks = (payload_size_ + block_size - 1) / block_size;
  if (f.empty() || f[0] != "sums" || f.size() != blocks + 1) return false;
  sums_.resize(blocks);
  for (std::size_t b = 0; b < blocks; ++b)
    if (f[b + 1].size() != 16 || !parse_number(f[b + 1], sums_[b], 16)) return false;
  checked_.assign(blocks, 0);
  payload_ = all.data() + at;
  return true;
}

// The diagnostics, checked now (they are small and read at once).
bool IndexFile::read_diagnostics(std::size_t count) {
  try {
    check(0, offsets_at_);
  } catch (const CorruptIndex&) {
    return false;
  }
  std::string_view diag(payload_, offsets_at_);
  std::vector<std::string_view> f;
  for (std::size_t i = 0; i < count; ++i) {
    auto nl = diag.find('\n');
    if (nl == std::string_view::npos) return false;
    split(diag.substr(0, nl), '\t', f);
    diag.remove_prefix(nl + 1);
    if (f.size() != 4) return false;
    TableDiagnostic d{std::string(f[0]), std::nullopt, std::string(f[2]), std::string(f[3])};
    if (f[1] != "-") {
      std::size_t entry = 0;
      if (!parse_number(f[1], entry)) return false;
      d.entry = entry;
    }
    diagnostics_.push_back(std::move(d));
  }
  return diag.empty();
}

IndexFile::~IndexFile() {
  if (map_) ::munmap(map_, map_size_);
}

void IndexFile::check(std::size_t begin, std::size_t end) const {
  if (begin >= end) return;
  std::lock_guard lock(mutex_);
  for (std::size_t b = begin / block_size; b <= (end - 1) / block_size; ++b) {
    if (checked_[b]) continue;
    std::size_t from = b * block_size, size = std::min(block_size, payload_size_ - from);
    if (hash(payload_ + from, size) != sums_[b]) throw CorruptIndex{};
    checked_[b] = 1;
  }
}

void IndexFile::check_all() const { check(0, payload_size_); }

std::string_view IndexFile::line(std::size_t i) const {
  if (i >= lines_) throw CorruptIndex{};
  auto offset = [&](std::size_t k) {
    std::size_t at = offsets_at_ + 8 * k;
    check(at, at + 8);
    std::uint32_t v = 0;
    if (!parse_number(std::string_view(payload_ + at, 8), v, 16)) throw CorruptIndex{};
    return static_cast<std::size_t>(v);
  };
  const std::size_t body_size = payload_size_ - body_at_;
  std::size_t begin = offset(i), end = i + 1 < lines_ ? offset(i + 1) : body_size;
  // Each line ends with its newline, inside the body.
  if (begin >= end || end > body_size) throw CorruptIndex{};
  check(body_at_ + begin, body_at_ + end);
  if (payload_[body_at_ + end - 1] != '\n') throw CorruptIndex{};
  return {payload_ + body_at_ + begin, end - 1 - begin};
}

bool IndexFile::write(const CacheFolder& folder, const std::string& name, std::string_view sig,
                      const std::vector<std::string>& lines,
                      const std::vector<TableDiagnostic>& diagnostics) {
  if (!folder.usable()) return false;
  std::string payload;
  for (const auto& d : diagnostics)
    payload += fmt::format("{}\t{}\t{}\t{}\n", one_line(d.file), d.entry ? std::to_string(*d.entry) : "-",
                           one_line(d.name), one_line(d.message));
  const std::size_t offsets_at = payload.size();
  std::size_t body = 0;
  for (const auto& l : lines) {
    if (body > 0xffffffffu) return false;
    payload += fmt::format("{:08x}", body);
    body += l.size() + 1;
  }
  const std::size_t body_at = payload.size();
  for (const auto& l : lines) {
    payload += l;
    payload += '\n';
  }
  const std::string image = index_image(sig, payload, lines.size(), diagnostics.size(), offsets_at, body_at);

  // A name no one can guess, created only if nothing (a file, a link) is there, then renamed over the
  // index: rename replaces a link planted at that name instead of writing through it.
  std::uint64_t nonce = 0;
  if (::getrandom(&nonce, sizeof nonce, 0) != sizeof nonce)
    nonce = static_cast<std::uint64_t>(::getpid()) << 20;
  std::string tmp = fmt::format("{}.{:016x}.tmp", name, nonce);
  int fd = ::openat(folder.fd(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  bool ok = true;
  for (std::string_view part = image; ok && !part.empty();) {
    ssize_t n = ::write(fd, part.data(), part.size());
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) part.remove_prefix(static_cast<std::size_t>(n));
  }
  ok = ::close(fd) == 0 && ok;
  ok = ok && ::renameat(folder.fd(), tmp.c_str(), folder.fd(), name.c_str()) == 0;
  if (!ok) ::unlinkat(folder.fd(), tmp.c_str(), 0);
  return ok;
}

}  // namespace perfspec::spec::detail

namespace perfspec::spec {
std::uint64_t hash_bytes(std::string_view bytes) noexcept { return XXH3_64bits(bytes.data(), bytes.size()); }
}  // namespace perfspec::spec
