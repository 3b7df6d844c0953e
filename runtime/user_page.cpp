// SPDX-License-Identifier: MIT
#include "runtime/user_page.hpp"

#include <linux/perf_event.h>

#include <cstdint>

namespace perfspec::runtime {
namespace {

#if defined(__x86_64__)
std::uint64_t read_pmc(unsigned counter) {
  std::uint32_t lo, hi;
  asm volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
  return (std::uint64_t{hi} << 32) | lo;
}
std::uint64_t read_cycles() {
  std::uint32_t lo, hi;
  asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return (std::uint64_t{hi} << 32) | lo;
}
constexpr bool supported = true;
#elif defined(__aarch64__)
// arm64 (seeds/004): index 32 (counter 31) is the cycle counter PMCCNTR_EL0; the others are selected
// through PMSELR_EL0 and read from PMXEVCNTR_EL0. PMSELR_EL0 is zeroed whenever the seqlock changes,
// which the caller's retry handles.
std::uint64_t read_pmc(unsigned counter) {
  std::uint64_t v;
  if (counter == 31) {
    asm volatile("mrs %0, pmccntr_el0" : "=r"(v));
  } else {
    asm volatile("msr pmselr_el0, %0" : : "r"(static_cast<std::uint64_t>(counter)));
    asm volatile("isb" ::: "memory");
    asm volatile("mrs %0, pmxevcntr_el0" : "=r"(v));
  }
  return v;
}
std::uint64_t read_cycles() {
  std::uint64_t v;
  asm volatile("mrs %0, cntvct_el0" : "=r"(v));
  return v;
}
constexpr bool supported = true;
#else
std::uint64_t read_pmc(unsigned) { return 0; }
std::uint64_t read_cycles() { return 0; }
constexpr bool supported = false;
#endif

// The read side of the page's seqlock, as the kernel's own user-space readers do it: on x86 (TSO) a
// compiler barrier, on arm64 a load-load barrier.
inline void read_barrier() {
#if defined(__x86_64__)
  asm volatile("" ::: "memory");
#elif defined(__aarch64__)
  asm volatile("dmb ishld" ::: "memory");
#else
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
#endif
}

}  // namespace

std::optional<UserRead> read_mapped_page(const void* mapped) {
  if (!supported || !mapped) return std::nullopt;
  const volatile auto* pg = static_cast<const volatile perf_event_mmap_page*>(mapped);
  auto load = [pg] {
    UserPage p;
    p.lock = pg->lock;
    read_barrier();
    p.index = pg->index;
    p.offset = pg->offset;
    p.time_enabled = pg->time_enabled;
    p.time_running = pg->time_running;
    std::uint64_t caps = pg->capabilities;
    // bit 0: cap_bit0, 1: cap_bit0_is_deprecated, 2: cap_user_rdpmc, 3: cap_user_time
    p.cap_user_rdpmc = (caps >> 2) & 1;
    p.cap_user_time = (caps >> 3) & 1;
    p.pmc_width = pg->pmc_width;
    p.time_shift = pg->time_shift;
    p.time_mult = pg->time_mult;
    p.time_offset = pg->time_offset;
    read_barrier();
    return p;
  };
  return read_user_page(load, read_pmc, read_cycles);
}

Note::Obstacle user_read_obstacle(const void* mapped, bool access_off) {
  if (!supported) return Note::Obstacle::architecture;
  if (!mapped) return Note::Obstacle::not_granted;
  const volatile auto* pg = static_cast<const volatile perf_event_mmap_page*>(mapped);
  const bool granted = (pg->capabilities >> 2) & 1;
  const bool on_counter = pg->index != 0;
  if (granted && on_counter) return Note::Obstacle::none;
  // The switch off explains either: x86 clears cap_user_rdpmc, arm64 keeps it and gives index 0.
  if (access_off) {
#if defined(__aarch64__)
    return Note::Obstacle::perf_user_access_off;
#else
    return Note::Obstacle::rdpmc_off;
#endif
  }
  return granted ? Note::Obstacle::not_on_counter : Note::Obstacle::not_granted;
}

}  // namespace perfspec::runtime
