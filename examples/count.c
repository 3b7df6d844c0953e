// SPDX-License-Identifier: MIT
/* Count a loop of this program through the C API:  count_c 'task-clock,page-faults' */
#include <perfspec/perfspec.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  const char* events = argc > 1 ? argv[1] : "task-clock,page-faults";
  perfspec_machine* m = perfspec_machine_new("/sys", NULL, NULL);
  perfspec_event_set* set = NULL;
  if (!m || perfspec_resolve(m, events, &set) != PERFSPEC_OK) {
    fputs(perfspec_last_error_rendered(), stderr);
    return 1;
  }
  perfspec_counters* c = NULL;
  if (perfspec_open(set, 0, &c) != PERFSPEC_OK) {
    fprintf(stderr, "%s\n", perfspec_last_error());
    return 1;
  }
  perfspec_enable(c);
  size_t n = 1 << 20;
  volatile char* p = malloc(n);
  for (size_t i = 0; i < n; i += 4096) p[i] = (char)i;
  free((void*)p);
  perfspec_disable(c);
  size_t count = perfspec_event_set_size(set);
  perfspec_count* counts = calloc(count, sizeof *counts);
  perfspec_read(c, counts, count);
  for (size_t i = 0; i < count; ++i) {
    if (counts[i].state == PERFSPEC_COUNTED)
      printf("%20.0f  %s\n", counts[i].scaled, perfspec_event_name(set, i));
    else
      printf("%20s  %s  (%s %s)\n", "<not supported>", perfspec_event_name(set, i), counts[i].error_name,
             counts[i].hint);
  }
  free(counts);
  perfspec_counters_free(c);
  perfspec_event_set_free(set);
  perfspec_machine_free(m);
  return 0;
}
