// SPDX-License-Identifier: MIT
/* Compute metrics of a loop of this program through the C API:
 *   metrics_c 'faults_per_msec = page\-faults / task\-clock * 1e6'   an ad hoc metric
 *   PERFSPEC_EVENTS_DIR=.../pmu-events/x86 metrics_c NAME|GROUP      metrics of perf's tables for this
 *                                             CPU (`perfspec list --metrics` lists them) */
#include <perfspec/perfspec.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  const char* request = argc > 1 ? argv[1] : "faults_per_msec = page\\-faults / task\\-clock * 1e6";
  perfspec_machine* m = perfspec_machine_new("/sys", getenv("PERFSPEC_EVENTS_DIR"), NULL);
  perfspec_metric_plan* plan = NULL;
  if (!m || perfspec_plan_metrics(m, request, &plan) != PERFSPEC_OK) {
    fputs(perfspec_last_error_rendered(), stderr); /* the caret under the metric's text */
    perfspec_machine_free(m);
    return 1;
  }
  const perfspec_event_set* events = perfspec_metric_plan_events(plan);
  perfspec_counters* c = NULL;
  if (perfspec_open(events, 0, &c) != PERFSPEC_OK) {
    fprintf(stderr, "%s\n", perfspec_last_error());
    perfspec_metric_plan_free(plan);
    perfspec_machine_free(m);
    return 1;
  }
  perfspec_enable(c);
  size_t n = 1 << 22;
  volatile char* p = malloc(n);
  for (size_t i = 0; p && i < n; i += 4096) p[i] = (char)i;
  free((void*)p);
  perfspec_disable(c);

  int status = 0;
  size_t count = perfspec_event_set_size(events), metrics = perfspec_metric_plan_size(plan);
  perfspec_count* counts = calloc(count, sizeof *counts);
  double* values = calloc(metrics, sizeof *values);
  if (counts && values && perfspec_read(c, counts, count) == PERFSPEC_OK &&
      perfspec_metric_evaluate(plan, counts, count, values, metrics) == PERFSPEC_OK) {
    for (size_t i = 0; i < metrics; ++i) {
      if (isnan(values[i])) /* never a made-up number: say why */
        printf("%s: no value (%s)\n", perfspec_metric_name(plan, i), perfspec_metric_why(plan, i));
      else
        printf("%s = %.3f%s%s\n", perfspec_metric_name(plan, i), values[i],
               *perfspec_metric_unit(plan, i) ? " " : "", perfspec_metric_unit(plan, i));
    }
  } else {
    fprintf(stderr, "%s\n", perfspec_last_error());
    status = 1;
  }
  free(values);
  free(counts);
  perfspec_counters_free(c);
  perfspec_metric_plan_free(plan);
  perfspec_machine_free(m);
  return status;
}
