// SPDX-License-Identifier: MIT
// The registers a sample can carry on this machine (runtime::sample_register_masks): the
// architecture's general registers, and the extended ones where the kernel is seen to sample them.
#include <linux/perf_event.h>
#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include <cstdint>

#include "perfspec/sampling.hpp"

namespace perfspec::runtime {

namespace {

// Whether the kernel opens a disabled user-space cycles event of this thread that samples every cycle
// with these registers (perf's probe): a PMU or kernel without them refuses it.
[[maybe_unused]] bool samples_registers(Syscalls& sys, std::uint64_t sample_type, std::uint64_t user,
                                        std::uint64_t intr, std::uint8_t precise) {
  Attr a;
  a.type = PERF_TYPE_HARDWARE;
  a.size = attr_size_ver8;
  a.config = PERF_COUNT_HW_CPU_CYCLES;
  a.sample_period = 1;
  a.sample_type = sample_type;
  a.sample_regs_user = user;
  a.sample_regs_intr = intr;
  a.precise_ip = precise;
  a.disabled = 1;
  a.exclude_kernel = 1;
  int fd = sys.perf_event_open(a, 0, -1, -1, 0);
  if (fd < 0) return false;
  sys.close(fd);
  return true;
}

}  // namespace

RegisterMasks sample_register_masks([[maybe_unused]] Syscalls& sys) {
  RegisterMasks m;
#if defined(__x86_64__)
  // <asm/perf_regs.h>: AX .. R15 are 0 .. 23, of which DS, ES, FS, GS (12 .. 15) are never sampled; the
  // XMM registers take two numbers each from 32 on, sampled at interrupts by PEBS-capable PMUs only
  constexpr std::uint64_t general = 0xff0fff;
  constexpr std::uint64_t xmm = ~((std::uint64_t{1} << 32) - 1);
  m = {general, general};
  if (samples_registers(sys, PERF_SAMPLE_REGS_INTR, 0, xmm, 1)) m.intr |= xmm;
#elif defined(__aarch64__)
  // x0 .. x30 (lr), sp and pc are 0 .. 32; vg (46), the SVE vector length, is a user register only
  constexpr std::uint64_t general = (std::uint64_t{1} << 33) - 1;
  constexpr std::uint64_t vg = std::uint64_t{1} << 46;
  m = {general, general};
#if defined(HWCAP_SVE)
  if ((::getauxval(AT_HWCAP) & HWCAP_SVE) &&
      samples_registers(sys, PERF_SAMPLE_REGS_USER, general | vg, 0, 0))
    m.user |= vg;
#endif
#endif
  return m;
}

}  // namespace perfspec::runtime
