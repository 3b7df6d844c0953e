// SPDX-License-Identifier: MIT
#include "record/mapping_guard.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

namespace perfspec::record::detail {

namespace {

// What the handler reads: lock-free atomics only (it may run at any point of any thread).
struct Slot {
  std::atomic<std::uintptr_t> start{0};
  std::atomic<std::size_t> size{0};
  std::atomic<bool> truncated{false};
};
std::array<Slot, 64> slots;
std::uintptr_t page_size = 4096;
struct sigaction previous {};

extern "C" void on_sigbus(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (auto& s : slots) {
    const std::uintptr_t start = s.start.load(std::memory_order_acquire);
    const std::size_t size = s.size.load(std::memory_order_acquire);
    if (start == 0 || addr < start || addr >= start + size) continue;
    // Zero pages from the one touched to the mapping's end: what the file no longer has.
    const std::uintptr_t page = addr & ~(page_size - 1);
    void* p = ::mmap(reinterpret_cast<void*>(page), start + size - page, PROT_READ,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p == MAP_FAILED) break;  // the default action below
    s.truncated.store(true, std::memory_order_release);
    return;
  }
  // Not ours: as before this handler was installed.
  if (previous.sa_flags & SA_SIGINFO) {
    if (previous.sa_sigaction) return previous.sa_sigaction(sig, info, context);
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    return previous.sa_handler(sig);
  }
  // The default action: the fault happens again on return, now deadly.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigemptyset(&dfl.sa_mask);
  ::sigaction(SIGBUS, &dfl, nullptr);
}

void install() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (long p = ::sysconf(_SC_PAGESIZE); p > 0) page_size = static_cast<std::uintptr_t>(p);
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    ::sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &previous);
  });
}

}  // namespace

MappingGuard::MappingGuard(const void* start, std::size_t size) {
  if (!start || size == 0) return;
  install();
  for (std::size_t i = 0; i < slots.size(); ++i) {
    std::uintptr_t free = 0;
    if (slots[i].start.compare_exchange_strong(free, ~std::uintptr_t{0})) {  // taken, not yet valid
      slots[i].truncated.store(false);
      slots[i].size.store(size, std::memory_order_release);
      slots[i].start.store(reinterpret_cast<std::uintptr_t>(start), std::memory_order_release);
      slot_ = static_cast<int>(i);
      return;
    }
  }
}

MappingGuard::MappingGuard(MappingGuard&& other) noexcept : slot_(other.slot_) { other.slot_ = -1; }

MappingGuard& MappingGuard::operator=(MappingGuard&& other) noexcept {
  if (this != &other) {
    release();
    slot_ = other.slot_;
    other.slot_ = -1;
  }
  return *this;
}

MappingGuard::~MappingGuard() { release(); }

void MappingGuard::release() noexcept {
  if (slot_ < 0) return;
  auto& s = slots[static_cast<std::size_t>(slot_)];
  s.size.store(0, std::memory_order_release);
  s.start.store(0, std::memory_order_release);
  slot_ = -1;
}

bool MappingGuard::truncated() const {
  return slot_ >= 0 && slots[static_cast<std::size_t>(slot_)].truncated.load(std::memory_order_acquire);
}

}  // namespace perfspec::record::detail
