// SPDX-License-Identifier: MIT
// The program tests/cli/perf_trace_side_by_side.py traces with perf 6.12 and with perfspec: built static,
// it makes the same system calls inside perf's chroot and outside it. Each call is one perf trace names
// the arguments of (flags, modes, fds, signals), two fail (ENOENT), and one sleeps 5 ms (--duration).
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(void) {
  int fd = open("/nonexistent/file", O_RDONLY);
  fd = open("/nonexistent/other", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  char buf[64];
  if (fd >= 0) {
    (void)!read(fd, buf, sizeof buf);
    close(fd);
  }
  void* p = mmap(0, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  mprotect(p, 4096, PROT_NONE);
  munmap(p, 8192);
  (void)!write(2, "", 0);
  access("/", R_OK | X_OK);
  lseek(0, 0, SEEK_CUR);
  kill(getpid(), 0);
  struct timespec ts = {0, 5000000};
  nanosleep(&ts, 0);
  getppid();
  return 0;
}
