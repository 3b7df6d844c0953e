// SPDX-License-Identifier: MIT
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "perfspec/errno_facts.hpp"
#include "perfspec/runtime.hpp"
#include "runtime/cpulist.hpp"
#include "runtime/kernel_attr.hpp"

namespace perfspec::runtime {

KernelAttr to_kernel(const Attr& a) {
  KernelAttr k;
  std::memset(&k, 0, sizeof k);
  perf_event_attr& p = k.attr;
  p.type = a.type;
  p.size = sizeof(KernelAttr);
  p.config = a.config;
  p.sample_period = a.sample_period;
  p.sample_type = a.sample_type;
  p.read_format = a.read_format;
  // The flag bits (disabled .. sigtrap) form one __u64 right after read_format; bit-fields are
  // allocated from the least significant bit on the little-endian ABIs Linux perf runs on. They are
  // packed from the field table, in kernel order, so the two cannot drift apart.
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "flag packing assumes little-endian bit-fields");
  std::uint64_t flags = 0;
  unsigned bit = 0;
  bool in_flags = false;
  for (const auto& f : attr_fields()) {
    if (f.name == "disabled") in_flags = true;
    if (!in_flags) continue;
    flags |= (f.get(a) & ((std::uint64_t{1} << f.bits) - 1)) << bit;
    bit += f.bits;
    if (f.name == "sigtrap") break;
  }
  std::memcpy(reinterpret_cast<char*>(&p) + offsetof(perf_event_attr, read_format) + sizeof(p.read_format),
              &flags, sizeof flags);
  p.wakeup_events = a.wakeup_events;
  p.bp_type = a.bp_type;
  p.config1 = a.config1;
  p.config2 = a.config2;
  p.branch_sample_type = a.branch_sample_type;
  p.sample_regs_user = a.sample_regs_user;
  p.sample_stack_user = a.sample_stack_user;
  p.clockid = a.clockid;
  p.sample_regs_intr = a.sample_regs_intr;
  p.aux_watermark = a.aux_watermark;
  p.sample_max_stack = a.sample_max_stack;
  p.aux_sample_size = a.aux_sample_size;
  p.sig_data = a.sig_data;
#ifdef PERF_ATTR_SIZE_VER8
  p.config3 = a.config3;
#else
  k.config3 = a.config3;
#endif
  return k;
}

namespace {

class RealSyscalls final : public Syscalls {
 public:
  int perf_event_open(const Attr& attr, int pid, int cpu, int group_fd, unsigned long flags) override {
    KernelAttr k = to_kernel(attr);
    long fd = ::syscall(SYS_perf_event_open, &k, pid, cpu, group_fd, flags);
    return fd < 0 ? -errno : static_cast<int>(fd);
  }
  // EINTR is returned, not retried: Counters retries reads and ioctls for every Syscalls (and bounds it).
  long read(int fd, void* buffer, std::size_t size) override {
    ssize_t n = ::read(fd, buffer, size);
    return n < 0 ? -errno : n;
  }
  int ioctl(int fd, unsigned long request, unsigned long argument) override {
    return ::ioctl(fd, request, argument) < 0 ? -errno : 0;
  }
  int close(int fd) override { return ::close(fd) < 0 ? -errno : 0; }
  void* mmap(int fd, std::size_t length, int prot) override {
    void* p = ::mmap(nullptr, length, prot, MAP_SHARED, fd, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  int munmap(void* address, std::size_t length) override {
    return ::munmap(address, length) < 0 ? -errno : 0;
  }
};

}  // namespace

std::optional<int> Syscalls::perf_event_paranoid() { return spec::read_paranoid(); }

bool Syscalls::privileged() { return ::geteuid() == 0; }

std::optional<long> Syscalls::fd_limit() {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return std::nullopt;
  return static_cast<long>(rl.rlim_cur);
}

int Syscalls::poll(::pollfd* fds, std::size_t count, int timeout_ms) {
  int n = ::poll(fds, static_cast<nfds_t>(count), timeout_ms);
  return n < 0 ? -errno : n;
}

std::size_t Syscalls::page_size() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

std::vector<int> Syscalls::online_cpus() { return runtime::online_cpus(); }

Syscalls& system_calls() {
  static RealSyscalls real;
  return real;
}

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    reset();
    sys_ = o.sys_;
    fd_ = o.release();
  }
  return *this;
}

void Fd::reset() {
  if (fd_ >= 0 && sys_) sys_->close(fd_);
  fd_ = -1;
}

}  // namespace perfspec::runtime
