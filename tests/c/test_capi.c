// SPDX-License-Identifier: MIT
/* The C API, from C: resolve with positioned errors, fields, JSON, canonical text, counting, and
 * metrics (planned, counted, evaluated).
 *   perfspec_c_test FIXTURE [EVENTS_DIR]   (EVENTS_DIR: perf's x86 tables, for a table metric) */
#define _GNU_SOURCE
#include <perfspec/perfspec.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int failures = 0, passes = 0;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (cond)                                                                  \
      ++passes;                                                                \
    else {                                                                     \
      ++failures;                                                              \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

/* Touch `pages` fresh anonymous pages, 4 KiB each (no transparent huge page): one page fault each. */
__attribute__((no_sanitize_address)) static void touch_pages(size_t pages) {
  size_t size = pages * 4096;
  char* p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;
  madvise(p, size, MADV_NOHUGEPAGE);
  for (size_t i = 0; i < size; i += 4096) ((volatile char*)p)[i] = 1;
  munmap(p, size);
}

static perfspec_count counted(double scaled) {
  perfspec_count c;
  memset(&c, 0, sizeof c);
  c.state = PERFSPEC_COUNTED;
  c.raw = (uint64_t)scaled;
  c.time_enabled = c.time_running = 1000;
  c.scaled = scaled;
  c.error_name = c.hint = "";
  return c;
}

/* An ad hoc metric over software events: planned, counted for real, evaluated from injected counts. */
static void ad_hoc_metric(const perfspec_machine* live) {
  perfspec_metric_plan* plan = NULL;
  CHECK(perfspec_plan_metrics(live, "faults_per_msec = page\\-faults / task\\-clock * 1e6", &plan) == 0);
  if (!plan) return;
  CHECK(perfspec_metric_plan_size(plan) == 1);
  CHECK(strcmp(perfspec_metric_name(plan, 0), "faults_per_msec") == 0);
  CHECK(strcmp(perfspec_metric_unit(plan, 0), "") == 0);
  CHECK(perfspec_metric_name(plan, 1) == NULL && perfspec_metric_unit(plan, 1) == NULL);
  CHECK(perfspec_metric_over_threshold(plan, 0) == -1); /* not evaluated yet */
  CHECK(strcmp(perfspec_metric_why(plan, 0), "") == 0);
  /* Its events: one weak group, page-faults leading (software: type 1, configs 2 and 1). */
  const perfspec_event_set* events = perfspec_metric_plan_events(plan);
  CHECK(perfspec_event_set_size(events) == 2);
  CHECK(strcmp(perfspec_event_name(events, 0), "page-faults") == 0);
  CHECK(strcmp(perfspec_event_name(events, 1), "task-clock") == 0);
  CHECK(perfspec_event_leader(events, 0) == 0 && perfspec_event_leader(events, 1) == 0);
  uint64_t v = 0;
  CHECK(perfspec_event_field(events, 0, "type", &v) == 0 && v == 1);
  CHECK(perfspec_event_field(events, 0, "config", &v) == 0 && v == 2);
  CHECK(perfspec_event_field(events, 1, "config", &v) == 0 && v == 1);

  /* Counted for real around 256 page faults (the code that counts has run before, in main: it faults
   * in no page of its own). Not reset and enabled again: on Linux 6.18 a task-clock in a group led by
   * page-faults then sometimes reads 0 after the second round. */
  perfspec_counters* c = NULL;
  CHECK(perfspec_open(events, 0, &c) == 0);
  perfspec_count counts[2];
  double values[1];
  if (c) {
    CHECK(perfspec_enable(c) == 0);
    touch_pages(256);
    CHECK(perfspec_disable(c) == 0);
    CHECK(perfspec_read(c, counts, 2) == 0);
    CHECK(counts[0].state == PERFSPEC_COUNTED && counts[0].raw == 256);
    CHECK(counts[1].state == PERFSPEC_COUNTED && counts[1].raw > 0);
    CHECK(perfspec_metric_evaluate(plan, counts, 2, values, 1) == 0);
    /* As `perfspec stat -M` computes it: the counts scaled for multiplexing. */
    CHECK(values[0] == counts[0].scaled / counts[1].scaled * 1e6);
    CHECK(strcmp(perfspec_metric_why(plan, 0), "") == 0);
    perfspec_counters_free(c);
  }

  /* Injected counts: 64 faults in 2^20 ns is 61.03515625 per ms, exactly. A multiplexed count is
   * taken scaled (raw 32, running half the time), not raw. */
  counts[0] = counted(64);
  counts[1] = counted(1048576);
  CHECK(perfspec_metric_evaluate(plan, counts, 2, values, 1) == 0);
  CHECK(values[0] == 61.03515625);
  counts[0].raw = 32;
  counts[0].time_running = 500;
  CHECK(perfspec_metric_evaluate(plan, counts, 2, values, 1) == 0);
  CHECK(values[0] == 61.03515625);
  /* An input not counted: NaN, never a number, and why. */
  counts[1].state = PERFSPEC_NOT_SUPPORTED;
  counts[1].error = 2;
  counts[1].error_name = "ENOENT";
  counts[1].hint = "no such event";
  CHECK(perfspec_metric_evaluate(plan, counts, 2, values, 1) == 0);
  CHECK(isnan(values[0]));
  CHECK(strcmp(perfspec_metric_why(plan, 0), "'task-clock' was not counted: ENOENT: no such event") == 0);
  counts[1].state = PERFSPEC_NOT_COUNTED; /* never ran: no errno */
  counts[1].error_name = NULL;
  counts[1].hint = NULL;
  CHECK(perfspec_metric_evaluate(plan, counts, 2, values, 1) == 0);
  CHECK(isnan(values[0]));
  CHECK(strcmp(perfspec_metric_why(plan, 0), "'task-clock' was not counted") == 0);
  counts[1] = counted(0); /* a division by zero */
  CHECK(perfspec_metric_evaluate(plan, counts, 2, values, 1) == 0);
  CHECK(isnan(values[0]));
  CHECK(strcmp(perfspec_metric_why(plan, 0), "no number: the expression divides by zero or is NaN") == 0);
  CHECK(perfspec_metric_why(plan, 1) == NULL);
  CHECK(perfspec_metric_over_threshold(plan, 0) == -1); /* an ad hoc metric has no threshold */

  /* Bad arguments. */
  values[0] = 7;
  CHECK(perfspec_metric_evaluate(plan, counts, 1, values, 1) == PERFSPEC_E_INVALID);
  CHECK(strcmp(perfspec_last_error(), "perfspec_metric_evaluate: fewer counts than the plan's events") == 0);
  CHECK(perfspec_metric_evaluate(plan, counts, 2, values, 0) == PERFSPEC_E_INVALID);
  CHECK(perfspec_metric_evaluate(plan, NULL, 2, values, 1) == PERFSPEC_E_INVALID);
  CHECK(perfspec_metric_evaluate(NULL, counts, 2, values, 1) == PERFSPEC_E_INVALID);
  CHECK(values[0] == 7);
  perfspec_metric_plan_free(plan);
}

/* A tool event: not opened, reported as such, and given a value by the caller (ns; metrics see s). */
static void tool_event_metric(const perfspec_machine* live) {
  perfspec_metric_plan* plan = NULL;
  CHECK(perfspec_plan_metrics(live, "twice = duration_time * 2", &plan) == 0);
  if (!plan) return;
  const perfspec_event_set* events = perfspec_metric_plan_events(plan);
  CHECK(perfspec_event_set_size(events) == 1);
  CHECK(strcmp(perfspec_event_name(events, 0), "duration_time") == 0);
  perfspec_counters* c = NULL;
  perfspec_count count;
  double value = 0;
  CHECK(perfspec_open(events, 0, &c) == 0);
  CHECK(perfspec_read(c, &count, 1) == 0);
  CHECK(count.state == PERFSPEC_NOT_SUPPORTED && strcmp(count.error_name, "tool event") == 0);
  CHECK(perfspec_metric_evaluate(plan, &count, 1, &value, 1) == 0);
  CHECK(isnan(value));
  CHECK(strcmp(perfspec_metric_why(plan, 0),
               "'duration_time' was not counted: tool event: counted by perfspec stat, not by "
               "runtime::Counters") == 0);
  count = counted(2e9); /* 2 s */
  CHECK(perfspec_metric_evaluate(plan, &count, 1, &value, 1) == 0);
  CHECK(value == 4);
  perfspec_counters_free(c);
  perfspec_metric_plan_free(plan);
}

/* Metrics that do not plan: the error drawn under the metric's text, the offset in that text. */
static void metric_errors(const perfspec_machine* m) {
  perfspec_metric_plan* plan = (perfspec_metric_plan*)&plan; /* not NULL: an error must set it */
  CHECK(perfspec_plan_metrics(m, "ipc = instructions / cyclez", &plan) == PERFSPEC_E_UNKNOWN);
  CHECK(plan == NULL);
  CHECK(strcmp(perfspec_last_error(), "unknown event 'cyclez'") == 0);
  CHECK(strcmp(perfspec_last_error_rendered(),
               "metric 'ipc': 'instructions / cyclez'\n"
               "                              \\___ unknown event 'cyclez'\n"
               "help: did you mean 'cycles'?\n") == 0);
  CHECK(perfspec_last_error_offset() == 15);
  CHECK(perfspec_plan_metrics(m, "ipc = (instructions / cycles", &plan) == PERFSPEC_E_SYNTAX);
  CHECK(strcmp(perfspec_last_error_rendered(),
               "metric 'ipc': '(instructions / cycles'\n"
               "                                     \\___ expected ')'\n") == 0);
  CHECK(perfspec_last_error_offset() == 22);
  /* A name that is neither a metric nor a group: about the request. */
  CHECK(perfspec_plan_metrics(m, "nosuch", &plan) == PERFSPEC_E_UNKNOWN);
  CHECK(perfspec_last_error_offset() == 0);
  CHECK(strcmp(perfspec_last_error_rendered(),
               "metrics: 'nosuch'\n"
               "          \\___ unknown metric or metric group 'nosuch'\n"
               "help: this machine has no metric tables (see --events-dir)\n") == 0);
  /* Nothing asked for, or a definition without its name or expression: about the request. */
  CHECK(perfspec_plan_metrics(m, "", &plan) == PERFSPEC_E_SYNTAX && plan == NULL);
  CHECK(strcmp(perfspec_last_error(), "expected a metric or metric group name") == 0);
  CHECK(perfspec_plan_metrics(m, "x =", &plan) == PERFSPEC_E_SYNTAX);
  CHECK(perfspec_last_error_offset() == 2);
  CHECK(strcmp(perfspec_last_error(), "expected the expression of metric 'x' after '='") == 0);
  CHECK(perfspec_plan_metrics(NULL, "ipc = cycles", &plan) == PERFSPEC_E_INVALID);
  CHECK(perfspec_plan_metrics(m, NULL, &plan) == PERFSPEC_E_INVALID);
  CHECK(perfspec_plan_metrics(m, "ipc = cycles", NULL) == PERFSPEC_E_INVALID);
  CHECK(perfspec_metric_plan_events(NULL) == NULL);
  CHECK(perfspec_metric_plan_size(NULL) == 0);
  CHECK(perfspec_metric_name(NULL, 0) == NULL);
  CHECK(perfspec_metric_why(NULL, 0) == NULL);
  CHECK(perfspec_metric_over_threshold(NULL, 0) == -1);
  perfspec_metric_plan_free(NULL);
}

/* Table metrics of perf's skylakex tables on the Skylake-X fixture: the events their plans open, and
 * their values (exact in binary) from injected counts. */
static void table_metrics(const char* fixture, const char* events_dir) {
  char mapfile[4096];
  snprintf(mapfile, sizeof mapfile, "%s/mapfile.csv", events_dir);
  FILE* f = fopen(mapfile, "r");
  if (!f) {
    printf("no %s: table metrics skipped\n", mapfile);
    return;
  }
  fclose(f);
  perfspec_machine* skx = perfspec_machine_new(fixture, events_dir, "GenuineIntel-6-55-4");
  CHECK(skx != NULL);
  perfspec_metric_plan* plan = NULL;
  /* 1 / tma_info_thread_ipc, which is INST_RETIRED.ANY / tma_info_thread_clks (CPU_CLK_UNHALTED.THREAD). */
  CHECK(perfspec_plan_metrics(skx, "TMA_INFO_THREAD_CPI", &plan) == 0);
  if (plan) {
    const perfspec_event_set* events = perfspec_metric_plan_events(plan);
    CHECK(perfspec_metric_plan_size(plan) == 1);
    CHECK(strcmp(perfspec_metric_name(plan, 0), "tma_info_thread_cpi") == 0);
    CHECK(strcmp(perfspec_metric_unit(plan, 0), "") == 0);
    CHECK(perfspec_event_set_size(events) == 2);
    CHECK(strcmp(perfspec_event_name(events, 0), "INST_RETIRED.ANY") == 0);
    CHECK(strcmp(perfspec_event_name(events, 1), "CPU_CLK_UNHALTED.THREAD") == 0);
    CHECK(strcmp(perfspec_event_pmu(events, 0), "cpu") == 0);
    CHECK(perfspec_event_leader(events, 1) == 0);
    uint64_t v = 0;
    CHECK(perfspec_event_field(events, 0, "type", &v) == 0 && v == 4);
    CHECK(perfspec_event_field(events, 0, "config", &v) == 0 && v == 0xc0);
    CHECK(perfspec_event_field(events, 1, "config", &v) == 0 && v == 0x3c);
    perfspec_count counts[2] = {counted(3000), counted(1500)};
    double value = 0;
    CHECK(perfspec_metric_evaluate(plan, counts, 2, &value, 1) == 0);
    CHECK(value == 0.5);
    perfspec_metric_plan_free(plan);
  }
  /* A percentage with a threshold (tma_frontend_bound > 0.15): IDQ_UOPS_NOT_DELIVERED.CORE over the
   * slots, 4 * CPU_CLK_UNHALTED.THREAD / 2 * (1 + ONE_THREAD_ACTIVE / REF_XCLK) with SMT on. */
  plan = NULL;
  CHECK(perfspec_plan_metrics(skx, "tma_frontend_bound", &plan) == 0);
  if (plan) {
    const perfspec_event_set* events = perfspec_metric_plan_events(plan);
    CHECK(strcmp(perfspec_metric_unit(plan, 0), "%") == 0);
    CHECK(perfspec_event_set_size(events) == 4);
    CHECK(strcmp(perfspec_event_name(events, 0), "IDQ_UOPS_NOT_DELIVERED.CORE") == 0);
    CHECK(strcmp(perfspec_event_name(events, 1), "CPU_CLK_UNHALTED.THREAD") == 0);
    CHECK(strcmp(perfspec_event_name(events, 2), "CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE") == 0);
    CHECK(strcmp(perfspec_event_name(events, 3), "CPU_CLK_UNHALTED.REF_XCLK") == 0);
    perfspec_count counts[4] = {counted(2048), counted(4096), counted(0), counted(1)};
    double value = 0;
    CHECK(perfspec_metric_evaluate(plan, counts, 4, &value, 1) == 0);
    CHECK(value == 25); /* 2048 of 8192 slots */
    CHECK(perfspec_metric_over_threshold(plan, 0) == 1);
    counts[0] = counted(1024);
    CHECK(perfspec_metric_evaluate(plan, counts, 4, &value, 1) == 0);
    CHECK(value == 12.5);
    CHECK(perfspec_metric_over_threshold(plan, 0) == 0);
    counts[3].state = PERFSPEC_NOT_COUNTED;
    CHECK(perfspec_metric_evaluate(plan, counts, 4, &value, 1) == 0);
    CHECK(isnan(value));
    CHECK(strcmp(perfspec_metric_why(plan, 0), "'CPU_CLK_UNHALTED.REF_XCLK' was not counted") == 0);
    CHECK(perfspec_metric_over_threshold(plan, 0) == -1);
    perfspec_metric_plan_free(plan);
  }
  perfspec_machine_free(skx);
}

/* Sampling from C: page faults at period 1 on pages this thread touches, each with its address. */
static void sampling(const perfspec_machine* live) {
  perfspec_event_set* set = NULL;
  CHECK(perfspec_resolve(live, "page-faults", &set) == 0);
  perfspec_sampler* s = NULL;
  /* IP|TID|TIME|ADDR */
  CHECK(perfspec_sampler_open(set, 0, 1, 0, 1 | 2 | 4 | 8, &s) == 0);
  if (!s) {
    fprintf(stderr, "sampling: %s\n", perfspec_last_error());
    perfspec_event_set_free(set);
    return;
  }
  enum { pages = 32 };
  char* p = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(perfspec_sampler_enable(s) == 0);
  for (int i = 0; i < pages; ++i) ((volatile char*)p)[i * 4096] = 1;
  CHECK(perfspec_sampler_disable(s) == 0);
  perfspec_record r;
  int on_pages = 0, others = 0, rc;
  while ((rc = perfspec_sampler_next(s, &r)) == 1) {
    if (r.type != 9) continue;
    CHECK(r.event == 0);
    CHECK(r.pid == (uint32_t)getpid());
    CHECK(r.period == 1); /* the fixed period: the samples carry no PERIOD */
    if (r.addr >= (uint64_t)(uintptr_t)p && r.addr < (uint64_t)(uintptr_t)p + pages * 4096)
      ++on_pages;
    else
      ++others;
  }
  CHECK(rc == 0);
  CHECK(on_pages == pages);
  uint64_t lost = 1, lost_samples = 1;
  CHECK(perfspec_sampler_losses(s, &lost, &lost_samples, NULL) == 0 && lost == 0 && lost_samples == 0);
  munmap(p, pages * 4096);
  perfspec_sampler_free(s);
  CHECK(perfspec_sampler_open(NULL, 0, 1, 0, 0, &s) == PERFSPEC_E_INVALID);
  perfspec_event_set_free(set);
}

/* The buffer's size from C, and what a full one dropped: 4096 page faults at period 1 into one data page
 * (a few dozen samples), read only after disabling: every fault is a sample read back or counted in
 * perfspec_sampler_dropped. Then 2048 pages hold them all: nothing dropped. */
static void sampling_dropped(const perfspec_machine* live) {
  perfspec_event_set* set = NULL;
  CHECK(perfspec_resolve(live, "page-faults:u", &set) == 0);
  for (int round = 0; round < 2; ++round) {
    perfspec_sampling o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.period = 1;
    o.sample_type = 1 | 2 | 4 | 8; /* IP|TID|TIME|ADDR */
    o.pages = round == 0 ? 1 : 2048;
    perfspec_sampler* s = NULL;
    CHECK(perfspec_sampler_open_with(set, &o, &s) == 0);
    if (!s) {
      fprintf(stderr, "sampling_dropped: %s\n", perfspec_last_error());
      break;
    }
    enum { pages = 4096 };
    char* p = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    madvise(p, pages * 4096, MADV_NOHUGEPAGE);
    CHECK(perfspec_sampler_enable(s) == 0);
    for (int i = 0; i < pages; ++i) ((volatile char*)p)[i * 4096] = 1;
    CHECK(perfspec_sampler_disable(s) == 0);
    perfspec_record r;
    uint64_t on_pages = 0;
    while (perfspec_sampler_next(s, &r) == 1)
      if (r.type == 9 && r.addr >= (uint64_t)(uintptr_t)p && r.addr < (uint64_t)(uintptr_t)p + pages * 4096)
        ++on_pages;
    uint64_t dropped = 7;
    int counted = -1, maybe = -1;
    CHECK(perfspec_sampler_dropped(s, &dropped, &counted, &maybe) == 0);
    CHECK(counted == 1);
    if (round == 0) {
      CHECK(dropped > 0 && maybe == 1);
      CHECK(on_pages + dropped >= pages);
    } else {
      CHECK(dropped == 0 && maybe == 0);
      CHECK(on_pages == pages);
    }
    munmap(p, pages * 4096);
    perfspec_sampler_free(s);
  }
  perfspec_sampling bad;
  memset(&bad, 0, sizeof bad);
  bad.size = sizeof bad;
  bad.pages = 3;
  perfspec_sampler* s = NULL;
  CHECK(perfspec_sampler_open_with(set, &bad, &s) == PERFSPEC_E_INVALID && s == NULL);
  CHECK(strcmp(perfspec_last_error(), "perfspec_sampler_open_with: pages 3 is not a power of two") == 0);
  bad.pages = 0;
  bad.size = 8;
  CHECK(perfspec_sampler_open_with(set, &bad, &s) == PERFSPEC_E_INVALID);
  perfspec_event_set_free(set);
}

/* A perf.data file perf 6.12 wrote: 55 page-fault samples with data addresses. */
static void perf_data(const char* fixture) {
  char path[4096];
  snprintf(path, sizeof path, "%s/../perf_data/addr.data", fixture);
  perfspec_perf_data* f = NULL;
  CHECK(perfspec_perf_data_open(path, &f) == 0);
  if (!f) return;
  CHECK(perfspec_perf_data_events(f) == 1);
  CHECK(strcmp(perfspec_perf_data_event_name(f, 0), "page-faults") == 0);
  CHECK(perfspec_perf_data_event_name(f, 1) == NULL);
  perfspec_record r;
  int samples = 0, comms = 0, rc;
  while ((rc = perfspec_perf_data_next(f, &r)) == 1) {
    if (r.type == 9) {
      ++samples;
      CHECK(r.event == 0 && r.period == 1 && (r.sample_type & 8) != 0);
    }
    if (r.type == 3 && r.name && strcmp(r.name, "true") == 0) ++comms;
  }
  CHECK(rc == 0);
  CHECK(samples == 55);
  CHECK(comms == 1);
  perfspec_perf_data_free(f);
  snprintf(path, sizeof path, "%s/../perf_data/make.sh", fixture);
  CHECK(perfspec_perf_data_open(path, &f) == PERFSPEC_E_IO);
  CHECK(strstr(perfspec_last_error(), "not a perf.data file (no PERFILE2 magic)") != NULL);
}

struct located_samples {
  perfspec_perf_data* file;
  perfspec_symbolizer* sym;
  uint64_t read, located, named;
};

static int locate_sample(const perfspec_record* r, void* context) {
  struct located_samples* c = context;
  CHECK(perfspec_symbolizer_follow(c->sym, c->file) == PERFSPEC_OK);
  if (r->type != 9) return 0;
  ++c->read;
  perfspec_location where;
  if (perfspec_symbolizer_locate(c->sym, r->pid, r->ip, r->misc, &where) == 1) {
    ++c->located;
    CHECK(where.dso != NULL && (where.dso[0] == '/' || where.dso[0] == '['));
    if (where.symbol) ++c->named;
    /* a mapping covers it: a line ("file.c:42", "??:0") or the binary's short name and address */
    char line[256], cut[4];
    CHECK(perfspec_symbolizer_srcline(c->sym, r->pid, r->ip, r->misc, line, sizeof line) == 1);
    size_t n = strlen(line);
    CHECK(n > 0 && (strchr(line, ':') != NULL || line[n - 1] == ']'));
    CHECK(perfspec_symbolizer_srcline(c->sym, r->pid, r->ip, r->misc, cut, sizeof cut) == 1);
    CHECK(strlen(cut) == (n < 3 ? n : 3) && strncmp(cut, line, strlen(cut)) == 0);
  }
  return 0;
}

struct times {
  uint64_t last, records, late, stop_after;
};

static int count_late(const perfspec_record* r, void* context) {
  struct times* t = context;
  if (r->time < t->last) ++t->late;
  t->last = r->time;
  ++t->records;
  return t->records == t->stop_after ? 7 : 0;
}

#define WALK_FIXTURE "rounds.data"
/* A file perf 6.12 wrote with -a, whose records are in time order only within rounds: the walk
 * hands them over in time order, as perf script shows them; a visit ends it with its own value. */
static void perf_data_walk(const char* fixture) {
  char path[4096];
  snprintf(path, sizeof path, "%s/../perf_data/" WALK_FIXTURE, fixture);
  perfspec_perf_data* f = NULL;
  CHECK(perfspec_perf_data_open(path, &f) == 0);
  if (!f) return;
  struct times in_file = {0, 0, 0, 0};
  perfspec_record r;
  while (perfspec_perf_data_next(f, &r) == 1)
    if (r.type < 64) count_late(&r, &in_file);
  perfspec_perf_data_free(f);
  CHECK(in_file.late > 0);
  CHECK(perfspec_perf_data_open(path, &f) == 0);
  struct times walked = {0, 0, 0, 0};
  int in_time = -1;
  CHECK(perfspec_perf_data_walk(f, count_late, &walked, &in_time) == 0);
  CHECK(in_time == 1);
  CHECK(walked.late == 0);
  CHECK(walked.records == in_file.records);
  perfspec_perf_data_free(f);
  CHECK(perfspec_perf_data_open(path, &f) == 0);
  struct times stopped = {0, 0, 0, 3};
  CHECK(perfspec_perf_data_walk(f, count_late, &stopped, NULL) == 7);
  CHECK(stopped.records == 3);
  CHECK(perfspec_perf_data_walk(NULL, count_late, &stopped, NULL) == PERFSPEC_E_INVALID);
  perfspec_perf_data_free(f);
}

/* A command recorded into a perf.data file, read back through the C API: this program run again with
 * --exit3 (so that the binary recorded has its symbol table, wherever the test runs). */
static void record_command(const perfspec_machine* live) {
  perfspec_event_set* set = NULL;
  CHECK(perfspec_resolve(live, "page-faults:u", &set) == 0);
  char path[] = "/tmp/perfspec-capi-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  CHECK(n > 0);
  self[n > 0 ? n : 0] = '\0';
  char* argv[] = {self, "--exit3", NULL};
  int status = -1;
  uint64_t samples = 0;
  CHECK(perfspec_record_command(live, set, argv, path, 1, 0, &status, &samples) == PERFSPEC_OK);
  CHECK(status == 3);
  CHECK(samples > 0); /* its own page faults, each a sample */
  perfspec_perf_data* f = NULL;
  CHECK(perfspec_perf_data_open(path, &f) == 0);
  CHECK(perfspec_perf_data_events(f) == 1 &&
        strcmp(perfspec_perf_data_event_name(f, 0), "page-faults:u") == 0);
  /* each sample's address in a binary the program mapped, named where the binary has a symbol there */
  struct located_samples c = {f, NULL, 0, 0, 0};
  CHECK(perfspec_symbolizer_open(NULL, NULL, &c.sym) == PERFSPEC_OK);
  CHECK(perfspec_symbolizer_read_build_ids(c.sym, f) == PERFSPEC_OK);
  int in_time = -1;
  CHECK(perfspec_perf_data_walk(f, locate_sample, &c, &in_time) == 0);
  CHECK(in_time == 1);
  perfspec_symbolizer* sym = c.sym;
  uint64_t read = c.read, located = c.located, named = c.named;
  CHECK(read == samples);
  CHECK(located == samples);
  CHECK(named > 0);
  const unsigned char nobody[20] = {0};
  perfspec_location where;
  CHECK(perfspec_symbolizer_locate_build_id(sym, nobody, sizeof nobody, 0x1000, &where) == 0);
  CHECK(perfspec_symbolizer_locate(sym, 1, 0, 2, NULL) == PERFSPEC_E_INVALID);
  char none_line[8] = "x";
  CHECK(perfspec_symbolizer_srcline(sym, 999999, 0x10, 2, none_line, sizeof none_line) == 0 &&
        none_line[0] == 0);
  CHECK(perfspec_symbolizer_srcline(sym, 1, 0, 2, NULL, 8) == PERFSPEC_E_INVALID);
  CHECK(perfspec_symbolizer_srcline(sym, 1, 0, 2, none_line, 0) == PERFSPEC_E_INVALID);
  perfspec_symbolizer_free(sym);
  perfspec_perf_data_free(f);

  char* missing[] = {"/nonexistent/perfspec-command", NULL};
  CHECK(perfspec_record_command(live, set, missing, path, 1, 0, &status, NULL) == PERFSPEC_E_IO);
  CHECK(strcmp(perfspec_last_error(),
               "cannot run '/nonexistent/perfspec-command': No such file or directory") == 0);
  char* none[] = {NULL};
  CHECK(perfspec_record_command(live, set, none, path, 1, 0, NULL, NULL) == PERFSPEC_E_INVALID);
  unlink(path);
  perfspec_event_set_free(set);
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "--exit3") == 0) return 3; /* the command record_command records */
  const char* fixture = argc > 1 ? argv[1] : "tests/fixtures/intel_skx";
  perfspec_machine* m = perfspec_machine_new(fixture, NULL, NULL);
  CHECK(m != NULL);

  perfspec_event_set* set = NULL;
  CHECK(perfspec_resolve(m, "{cpu/event=0x2,inv,ldlat=3/u,instructions}:k", &set) == PERFSPEC_OK);
  CHECK(perfspec_event_set_size(set) == 2);
  uint64_t v = 0;
  CHECK(perfspec_event_field(set, 0, "config", &v) == 0 && v == 0x800002);
  CHECK(perfspec_event_field(set, 0, "bp_addr", &v) == 0 && v == 3); /* config1 under its union name */
  CHECK(perfspec_event_field(set, 0, "exclude_hv", &v) == 0 && v == 1);
  CHECK(perfspec_event_field(set, 0, "nonsense", &v) == PERFSPEC_E_INVALID);
  CHECK(strcmp(perfspec_last_error(), "unknown attr field 'nonsense'") == 0);
  CHECK(strcmp(perfspec_event_pmu(set, 1), "cpu") == 0);
  CHECK(perfspec_event_leader(set, 1) == 0);
  CHECK(perfspec_event_name(set, 5) == NULL);
  char* json = perfspec_event_set_json(set);
  CHECK(json != NULL && strstr(json, "\"config\":8388610") != NULL);
  perfspec_string_free(json);
  perfspec_event_set_free(set);

  set = NULL;
  CHECK(perfspec_resolve(m, "cycles,cpu/umsk=1/", &set) == PERFSPEC_E_UNKNOWN);
  CHECK(set == NULL);
  CHECK(perfspec_last_error_offset() == 11);
  CHECK(strcmp(perfspec_last_error(), "unknown term 'umsk' for pmu 'cpu'") == 0);
  CHECK(strstr(perfspec_last_error_rendered(), "event syntax error: 'cycles,cpu/umsk=1/'\n") != NULL);

  /* Each kind of error has its code. */
  CHECK(perfspec_resolve(m, "cycles,", &set) == PERFSPEC_E_SYNTAX);
  CHECK(perfspec_resolve(m, "cpu/event=0x1ff/", &set) == PERFSPEC_E_VALUE);
  CHECK(perfspec_resolve(m, "nosuchpmu/event=1/", &set) == PERFSPEC_E_UNKNOWN);
  CHECK(perfspec_resolve(m, "{cycles:D,instructions:D}", &set) == PERFSPEC_E_VALUE);
  CHECK(perfspec_resolve(NULL, "cycles", &set) == PERFSPEC_E_INVALID);
  CHECK(set == NULL);

  char* canon = perfspec_canonical("{ cycles , cpu/event=60,inv/u }");
  CHECK(canon != NULL && strcmp(canon, "{cycles,cpu/event=0x3c,inv/u}") == 0);
  perfspec_string_free(canon);
  CHECK(perfspec_canonical("cycles,") == NULL);

  /* Counting software events on the live machine. */
  perfspec_machine* live = perfspec_machine_new("/sys", NULL, NULL);
  CHECK(perfspec_resolve(live, "{task-clock,page-faults},cycles", &set) == 0);
  perfspec_counters* c = NULL;
  CHECK(perfspec_open(set, 0, &c) == 0);
  CHECK(perfspec_enable(c) == 0);
  volatile char* p = malloc(1 << 20);
  for (int i = 0; i < (1 << 20); i += 4096) p[i] = 1;
  free((void*)p);
  CHECK(perfspec_disable(c) == 0);
  perfspec_count counts[3];
  CHECK(perfspec_read(c, counts, 3) == 0);
  CHECK(counts[0].state == PERFSPEC_COUNTED && counts[0].raw > 0);
  CHECK(counts[1].state == PERFSPEC_COUNTED);
  CHECK(counts[2].state == PERFSPEC_COUNTED ||
        (counts[2].state == PERFSPEC_NOT_SUPPORTED && counts[2].error != 0 && counts[2].hint[0] != '\0'));
  CHECK(perfspec_read(c, counts, 2) == PERFSPEC_E_INVALID);
  perfspec_counters_free(c);
  perfspec_event_set_free(set);

  ad_hoc_metric(live);
  tool_event_metric(live);
  metric_errors(m);
  table_metrics(fixture, argc > 2 ? argv[2] : "../shared/pmu-events/x86");
  sampling(live);
  sampling_dropped(live);
  perf_data(fixture);
  perf_data_walk(fixture);
  record_command(live);
  perfspec_machine_free(live);
  perfspec_machine_free(m);

  printf("%d passed, %d failed\n", passes, failures);
  return failures != 0;
}
