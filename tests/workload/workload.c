// SPDX-License-Identifier: MIT
// A workload with known behaviour, for sampling tests: its own functions on the stack, an exact
// number of page faults at known addresses, a child process.
//
//   workload spin MS      burn the CPU in spin_outer -> spin_middle -> spin_inner for MS milliseconds
//   workload burn MS      the same until this process has had MS milliseconds of CPU time (however long
//                         that takes on a loaded machine)
//   workload touch N      map N fresh pages, print "region START END" on stderr, write one byte to each
//   workload fork MS      a child burns MS milliseconds of its own CPU time, the parent waits for it
//   workload write K      write the variable `watched` K times, in write_watched (built -no-pie, its
//                         address is known before it runs: a breakpoint's target)
//   workload loop N       a fixed amount of work: N calls of spin_inner (for overhead measurements);
//                         prints "cpu_ms USER SYSTEM" on stderr, the CPU time it took
//
// `workload --wait MODE N` does the same when told, for a counter that is already watching it: it
// goes once through the same code on one page (touch) or one write (write), prints "ready" on
// stdout, waits for a line on stdin, does the work, prints "done", and exits at the end of stdin.
// Between "ready" and "done" nothing else faults: touch N costs exactly N page faults there.
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double clock_ms(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
static double now_ms(void) { return clock_ms(CLOCK_MONOTONIC); }

volatile uint64_t sink;
volatile long watched;

__attribute__((noinline)) void write_watched(long k) {
  for (long i = 0; i < k; ++i) watched = i;
}

// One fault per page touched, whatever /sys/kernel/mm/transparent_hugepage/enabled says: with
// "always" (Debian's arm64 cloud kernel) a 2 MB-aligned region faults once per huge page.
static void no_huge_pages(void* p, size_t length) { (void)madvise(p, length, MADV_NOHUGEPAGE); }

__attribute__((noinline)) void touch_pages(char* p, long n, long page) {
  for (long i = 0; i < n; ++i) p[i * page] = 1;
}

__attribute__((noinline)) void spin_inner(void) {
  for (int i = 0; i < 100000; ++i) sink += (uint64_t)i * 2654435761u;
}
__attribute__((noinline)) void spin_middle(void) { spin_inner(); }
// Until `clock` (the wall clock, or this process's CPU time) has gone MS milliseconds on.
__attribute__((noinline)) void spin_outer(double ms, clockid_t clock) {
  double end = clock_ms(clock) + ms;
  while (clock_ms(clock) < end) spin_middle();
}

// One line of stdin, read with read(2) into a buffer already touched: stdio's first read would fault
// in its buffer in the middle of the measured work. 0 at the end of input.
static int read_line(void) {
  char c = 0;
  long got;
  while ((got = read(0, &c, 1)) == 1 && c != '\n') {
  }
  return got == 1;
}

static int waiting(const char* mode, long n) {
  long page = sysconf(_SC_PAGESIZE);
  char* p = NULL;
  // Every page mapped so far present and kept so (the kernel may otherwise unmap a clean page of libc's
  // text, whose next use is a fault in the middle of the work). Best effort: without the right to lock
  // memory a stray fault stays possible. The pages to touch are mapped after, and not locked.
  (void)mlockall(MCL_CURRENT);
  if (strcmp(mode, "touch") == 0) {
    p = mmap(NULL, (size_t)((n + 1) * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    no_huge_pages(p, (size_t)((n + 1) * page));
    touch_pages(p + n * page, 1, page);  // the code and the stack, once
  } else if (strcmp(mode, "write") == 0) {
    write_watched(1);
  } else {
    return 2;
  }
  char none;
  if (read(0, &none, 0) < 0) return 3;  // read(2) called once: its symbol bound before "ready"
  printf("ready\n");
  fflush(stdout);
  if (!read_line()) return 3;
  if (p)
    touch_pages(p, n, page);
  else
    write_watched(n);
  printf("done\n");
  fflush(stdout);
  while (read_line()) {
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "--wait") == 0) return waiting(argv[2], strtol(argv[3], NULL, 10));
  if (argc != 3) {
    fprintf(stderr, "usage: workload spin|burn|touch|fork|write|loop N\n");
    return 2;
  }
  long n = strtol(argv[2], NULL, 10);
  if (strcmp(argv[1], "spin") == 0) {
    spin_outer((double)n, CLOCK_MONOTONIC);
  } else if (strcmp(argv[1], "burn") == 0) {
    spin_outer((double)n - clock_ms(CLOCK_PROCESS_CPUTIME_ID), CLOCK_PROCESS_CPUTIME_ID);
  } else if (strcmp(argv[1], "touch") == 0) {
    long page = sysconf(_SC_PAGESIZE);
    char* p = mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    no_huge_pages(p, (size_t)(n * page));
    fprintf(stderr, "region %p %p\n", (void*)p, (void*)(p + n * page));
    touch_pages(p, n, page);
  } else if (strcmp(argv[1], "write") == 0) {
    write_watched(n);
  } else if (strcmp(argv[1], "loop") == 0) {
    for (long i = 0; i < n; ++i) spin_middle();
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    fprintf(stderr, "cpu_ms %.1f %.1f\n", u.ru_utime.tv_sec * 1e3 + u.ru_utime.tv_usec / 1e3,
            u.ru_stime.tv_sec * 1e3 + u.ru_stime.tv_usec / 1e3);
  } else if (strcmp(argv[1], "fork") == 0) {
    pid_t c = fork();
    if (c == 0) {
      spin_outer((double)n, CLOCK_PROCESS_CPUTIME_ID);  // MS of its own CPU time
      _exit(0);
    }
    int status;
    waitpid(c, &status, 0);
  } else {
    return 2;
  }
  return 0;
}
