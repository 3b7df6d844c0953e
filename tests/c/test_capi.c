// SPDX-License-Identifier: MIT
/* The C API, from C: resolve with positioned errors, fields, JSON, canonical text, and counting. */
#include <perfspec/perfspec.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(int argc, char** argv) {
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
  perfspec_machine_free(live);
  perfspec_machine_free(m);

  printf("%d passed, %d failed\n", passes, failures);
  return failures != 0;
}
