// SPDX-License-Identifier: MIT
#pragma once
// Internal to spec/: the compiled index file of an events table, and the cache folder that holds it.
//
// The folder is used only when it is this user's and no one else may write to it; every file in it is
// opened relative to that checked folder, created with O_EXCL|O_NOFOLLOW and renamed into place, so a
// link planted in a shared folder can neither be written through nor read. The file is checked before
// it is trusted without reading all of it: its length against its header, its header against its own
// checksum, and each 16 KiB block of the rest against the block's checksum when a lookup first reads
// it (XXH3). A file that fails any check is rebuilt from the JSON.
//
// A tables folder may also hold a bundled index (EventTables::write_bundled_index, run by the build for
// the tables it installs): read-only, never written at run time, and trusted as the tables beside it
// are, when it and its folder belong to root, this user or the owner of the tables folder and no one
// else may write to them.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perfspec/tables.hpp"

namespace perfspec::spec::detail {

/// A cache folder that may be used, or why not.
class CacheFolder {
 public:
  /// `path` "none" is no folder and no problem. A missing folder is created (mode 0700).
  explicit CacheFolder(const std::string& path);
  /// The bundled-index folder of a tables folder whose owner is `tables_owner`: opened, never created;
  /// not usable (and no problem to report) when it is missing or fails the checks above.
  struct Bundled {
    unsigned tables_owner;
  };
  CacheFolder(const std::string& path, Bundled bundled);
  ~CacheFolder();
  CacheFolder(const CacheFolder&) = delete;
  CacheFolder& operator=(const CacheFolder&) = delete;
  bool usable() const { return fd_ >= 0; }
  /// Whether a file of this folder may be trusted by its owner: this user's alone for a cache
  /// folder; root's, this user's or the tables folder owner's for a bundled one.
  bool trusted_owner(unsigned uid) const;
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  /// Why the folder is not used ("" when it is, or when none was asked for).
  const std::string& problem() const { return problem_; }

 private:
  std::string path_, problem_;
  int fd_ = -1;
  std::optional<unsigned> tables_owner_;  // set for a bundled folder
};

/// The XXH3 of a file's contents, or nullopt when it cannot be read (bundled indexes record it).
std::optional<std::uint64_t> file_hash(const std::string& path);

/// The bytes of an index file: the header (with the checksums of `payload`'s blocks and its own) and
/// the payload, which holds `diagnostics` lines, then `lines` offsets from `offsets_at`, then the body
/// from `body_at`. IndexFile::write uses it; the fuzz target gives it payloads of its own.
std::string index_image(std::string_view sig, std::string_view payload, std::size_t lines,
                        std::size_t diagnostics, std::size_t offsets_at, std::size_t body_at);

/// Thrown by IndexFile when a block does not match its checksum: the caller rebuilds from the JSON.
struct CorruptIndex {};

/// A mapped index file whose header has been checked; its lines are checked as they are read.
class IndexFile {
 public:
  /// The index `name` in `folder` built from files with signature `sig`, or nullptr when there is
  /// none, it is another user's or writable by others, or its header, length or signature do not hold.
  static std::unique_ptr<IndexFile> open(const CacheFolder& folder, const std::string& name,
                                         std::string_view sig);
  /// The same, with the signature recorded in the file accepted by `accept` (asked only once the
  /// header has passed its own checksum).
  static std::unique_ptr<IndexFile> open(const CacheFolder& folder, const std::string& name,
                                         const std::function<bool(std::string_view)>& accept);
  /// Write an index of `lines` (sorted by their first field) and `diagnostics` atomically. False (and
  /// nothing left behind) when it cannot be written.
  static bool write(const CacheFolder& folder, const std::string& name, std::string_view sig,
                    const std::vector<std::string>& lines, const std::vector<TableDiagnostic>& diagnostics);
  ~IndexFile();
  IndexFile(const IndexFile&) = delete;
  IndexFile& operator=(const IndexFile&) = delete;

  std::size_t size() const { return lines_; }
  /// Line `i` (without its newline), its blocks checked on first use. Throws CorruptIndex.
  std::string_view line(std::size_t i) const;
  /// Check every block now (before reading every line). Throws CorruptIndex.
  void check_all() const;
  const std::vector<TableDiagnostic>& diagnostics() const { return diagnostics_; }

 private:
  IndexFile() = default;
  void check(std::size_t begin, std::size_t end) const;  // payload range
  bool map_file(const CacheFolder& folder, const std::string& name);
  bool read_header(const std::function<bool(std::string_view)>& accept, std::size_t& diagnostics);
  bool read_diagnostics(std::size_t count);
  void* map_ = nullptr;
  std::size_t map_size_ = 0;
  const char* payload_ = nullptr;  // after the header
  std::size_t payload_size_ = 0, lines_ = 0, offsets_at_ = 0, body_at_ = 0;
  std::vector<std::uint64_t> sums_;
  mutable std::mutex mutex_;
  mutable std::vector<std::uint8_t> checked_;  // per block: 0 not yet, 1 good
  std::vector<TableDiagnostic> diagnostics_;
};

}  // namespace perfspec::spec::detail
