// SPDX-License-Identifier: MIT
// A workload whose user-space instruction count is known: `spin N` runs a loop of two instructions
// (subs, b.ne) N times; `spin N S` also makes S getppid system calls (kernel work) first.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline)) static void spin(uint64_t n) {
#if defined(__aarch64__)
  __asm__ volatile("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(n) : : "cc");
#else
  while (n--) __asm__ volatile("" : "+r"(n));
#endif
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: spin ITERATIONS [SYSCALLS]\n");
    return 2;
  }
  uint64_t n = strtoull(argv[1], NULL, 0);
  long s = argc > 2 ? strtol(argv[2], NULL, 0) : 0;
  for (long i = 0; i < s; ++i) syscall(SYS_getppid);
  if (n) spin(n);
  return 0;
}
