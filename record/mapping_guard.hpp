// SPDX-License-Identifier: MIT
#pragma once
// Files read through a mapping can shrink while they are read (a perf.data still being written, or
// truncated by another process): touching a page past the new end raises SIGBUS, which would kill
// the process. A guarded mapping instead gets zero pages over what is gone, and says so: the reader
// then sees bytes that do not decode and reports the file as truncated. The handler is installed once,
// and a SIGBUS outside every guarded mapping goes to the handler that was there before.
#include <cstddef>

namespace perfspec::record::detail {

class MappingGuard {
 public:
  MappingGuard() = default;
  /// Guards [start, start + size) (a whole mapping). Unguarded when every slot (64) is taken.
  MappingGuard(const void* start, std::size_t size);
  MappingGuard(MappingGuard&& other) noexcept;
  MappingGuard& operator=(MappingGuard&& other) noexcept;
  MappingGuard(const MappingGuard&) = delete;
  MappingGuard& operator=(const MappingGuard&) = delete;
  /// Stops guarding (before the mapping is unmapped).
  ~MappingGuard();

  /// Whether a page of the mapping was gone when touched (the file was truncated under the reader).
  bool truncated() const;

 private:
  void release() noexcept;
  int slot_ = -1;
};

}  // namespace perfspec::record::detail
