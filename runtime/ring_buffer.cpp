// SPDX-License-Identifier: MIT
// The reader of one perf ring buffer (perf_event_open(2), "MMAP layout"; REFERENCE §11).
#include <linux/perf_event.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/sampling.hpp"

namespace perfspec::runtime {

namespace {

constexpr std::size_t header_size = sizeof(perf_event_header);
static_assert(header_size == sizeof(RecordHeader) && header_size == 8);

std::uint64_t* field(std::byte* meta, std::size_t offset) {
  return reinterpret_cast<std::uint64_t*>(meta + offset);
}

constexpr std::size_t head_at = offsetof(perf_event_mmap_page, data_head);
constexpr std::size_t tail_at = offsetof(perf_event_mmap_page, data_tail);

}  // namespace

RingBuffer::RingBuffer(void* base, std::size_t length, std::size_t page_size, Mode mode) : mode_(mode) {
  if (!base || page_size < sizeof(perf_event_mmap_page) || length <= page_size)
    throw Error(
        ErrorKind::usage,
        fmt::format("a ring buffer needs its metadata page and a data area: {} bytes with {}-byte pages",
                    length, page_size));
  meta_ = static_cast<std::byte*>(base);
  // data_offset and data_size are set by Linux 4.1+; before, the data area is the rest of the mapping.
  std::uint64_t offset = 0, size = 0;
  std::memcpy(&offset, meta_ + offsetof(perf_event_mmap_page, data_offset), sizeof offset);
  std::memcpy(&size, meta_ + offsetof(perf_event_mmap_page, data_size), sizeof size);
  if (size == 0) offset = page_size, size = length - page_size;
  const bool power_of_two = size >= header_size && (size & (size - 1)) == 0;
  if (!power_of_two || offset < sizeof(perf_event_mmap_page) || size > length || offset > length - size)
    throw Error(
        ErrorKind::usage,
        fmt::format("impossible ring buffer layout: data area of {} bytes at offset {} in a mapping of {}",
                    size, offset, length));
  data_ = meta_ + offset;
  data_size_ = static_cast<std::size_t>(size);
}

void RingBuffer::copy_out(std::uint64_t position, std::byte* to, std::size_t size) const {
  // size <= data_size_ always (checked by the callers): at most two pieces.
  const auto offset = static_cast<std::size_t>(position & (data_size_ - 1));
  const std::size_t first = std::min(size, data_size_ - offset);
  std::memcpy(to, data_ + offset, first);
  std::memcpy(to + first, data_, size - first);
}

void RingBuffer::skip_to_head(Problem why) {
  problem_ = why;
  if (why == Problem::overrun)
    ++stats_.overruns;
  else
    ++stats_.bad_records;
  stats_.skipped_bytes += stop_ - pos_;
  pos_ = stop_;
  last_ = 0;
  // Forward: the kernel's next record starts at data_head; giving it the space back resynchronizes.
  if (mode_ == Mode::forward) __atomic_store_n(field(meta_, tail_at), pos_, __ATOMIC_RELEASE);
}

std::size_t RingBuffer::begin() {
  problem_ = Problem::none;
  reading_ = true;
  last_ = 0;
  // Acquire: the records before data_head are read only after it.
  head_ = __atomic_load_n(field(meta_, head_at), __ATOMIC_ACQUIRE);
  if (mode_ == Mode::forward) {
    pos_ = __atomic_load_n(field(meta_, tail_at), __ATOMIC_RELAXED);  // the reader's own store
    stop_ = head_;
    const std::uint64_t waiting = head_ - pos_;
    if (waiting > data_size_) {
      // The kernel never writes over unread data in this mode: a head this far ahead means the tail
      // was not ours to trust. Nothing between them can be found record by record.
      skip_to_head(Problem::overrun);
      return 0;
    }
    // The room left only shrinks between reads: with room for any record now (one is at most 64 KiB,
    // its size being a u16), none was dropped since the last read; with less, some may have been.
    if (data_size_ - waiting < std::min<std::uint64_t>(data_size_, 1U << 16)) ++stats_.full_reads;
    return static_cast<std::size_t>(waiting);
  }
  // Overwrite: data_head counts down; the records written since the last read lie from data_head up
  // to where that read found it, newest first, and at most one buffer of them is still whole.
  pos_ = head_;
  std::uint64_t written = seen_ - head_;
  clipped_ = written > data_size_;
  if (clipped_) ++stats_.overwritten, written = data_size_;
  stop_ = head_ + written;
  return static_cast<std::size_t>(written);
}

std::optional<std::span<const std::byte>> RingBuffer::next() {
  if (!reading_) return std::nullopt;
  if (last_) {  // consume the record handed out before
    pos_ += last_;
    last_ = 0;
    if (mode_ == Mode::forward) __atomic_store_n(field(meta_, tail_at), pos_, __ATOMIC_RELEASE);
  }
  if (pos_ == stop_) return std::nullopt;
  const std::uint64_t left = stop_ - pos_;
  // Overwrite, a full buffer: the oldest record may run past what is still whole. Not an error: it was
  // overwritten (counted in stats().overwritten).
  const bool may_be_cut = mode_ == Mode::overwrite && clipped_;
  if (left < header_size) {
    if (may_be_cut)
      stop_ = pos_;
    else
      skip_to_head(Problem::bad_record);
    return std::nullopt;
  }
  RecordHeader h;
  copy_out(pos_, reinterpret_cast<std::byte*>(&h), header_size);
  const std::size_t size = h.size;
  if (size < header_size || size % 8 != 0 || size > data_size_) {
    skip_to_head(Problem::bad_record);
    return std::nullopt;
  }
  if (size > left) {
    if (may_be_cut)
      stop_ = pos_;
    else
      skip_to_head(Problem::bad_record);  // a record past data_head: the kernel has not written it
    return std::nullopt;
  }
  last_ = size;
  ++stats_.records;
  stats_.bytes += size;
  const auto offset = static_cast<std::size_t>(pos_ & (data_size_ - 1));
  if (offset + size <= data_size_) return std::span<const std::byte>(data_ + offset, size);
  // It wraps the end: one contiguous copy (the scratch buffer only grows, so reading allocates at most
  // once per larger record).
  if (scratch_.size() < size) scratch_.resize(size);
  copy_out(pos_, scratch_.data(), size);
  ++stats_.copied;
  return std::span<const std::byte>(scratch_.data(), size);
}

void RingBuffer::end() {
  if (!reading_) return;
  if (last_) {
    pos_ += last_;
    last_ = 0;
  }
  if (mode_ == Mode::forward)
    __atomic_store_n(field(meta_, tail_at), pos_, __ATOMIC_RELEASE);
  else
    seen_ = head_;
  reading_ = false;
}

}  // namespace perfspec::runtime
