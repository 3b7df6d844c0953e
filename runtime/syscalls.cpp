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
#include "spec/sysfs_io.hpp"

namespace perfspec::runtime {

// attr_to_bytes writes the uapi offsets out; the system header must agree with them.
static_assert(offsetof(perf_event_attr, config) == 8 && offsetof(perf_event_attr, read_format) == 32 &&
              offsetof(perf_event_attr, wakeup_events) == 48 && offsetof(perf_event_attr, config1) == 56 &&
              offsetof(perf_event_attr, branch_sample_type) == 72 &&
              offsetof(perf_event_attr, sample_stack_user) == 88 &&
              offsetof(perf_event_attr, clockid) == 92 && offsetof(perf_event_attr, sample_regs_intr) == 96 &&
              offsetof(perf_event_attr, aux_watermark) == 104 &&
              offsetof(perf_event_attr, sample_max_stack) == 108 &&
              offsetof(perf_event_attr, aux_sample_size) == 112 &&
              offsetof(perf_event_attr, sig_data) == 120);

KernelAttr to_kernel(const Attr& a) {
  KernelAttr k;
  auto bytes = attr_to_bytes(a);
  static_assert(sizeof bytes == sizeof k);
  std::memcpy(&k, bytes.data(), sizeof k);
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

bool Syscalls::user_access_off() {
#if defined(__aarch64__)
  const char* path = "/proc/sys/kernel/perf_user_access";
#else
  const char* path = "/sys/bus/event_source/devices/cpu/rdpmc";
#endif
  return spec::io::read_proc_number(path) == 0;
}

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

bool event_opens(std::uint32_t type, std::uint64_t config, Syscalls& sys) {
  Attr attr;
  attr.type = type;
  attr.size = attr_size_ver8;
  attr.config = config;
  attr.disabled = 1;
  for (int tries = 0; tries < 3; ++tries) {
    if (tries == 1) attr.exclude_kernel = 1;
    if (tries == 2) attr.exclude_guest = 1;
    int fd = sys.perf_event_open(attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd >= 0) {
      sys.close(fd);
      return true;
    }
  }
  return false;
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
