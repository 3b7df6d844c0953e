// SPDX-License-Identifier: MIT
/* perfspec C API: parse, resolve, open, read and print Linux perf event strings.
 *
 * Opaque handles; every function that can fail returns 0 on success or a negative PERFSPEC_E_*
 * code, and perfspec_last_error() describes the failure of the calling thread's last call (with the
 * byte offset of the offending text for event-string errors). No C++ exception crosses this API.
 *
 *   perfspec_machine *m = perfspec_machine_new("/sys", NULL, NULL);
 *   perfspec_event_set *set;
 *   if (perfspec_resolve(m, "{cycles,instructions}:u", &set) != 0)
 *     fprintf(stderr, "%s", perfspec_last_error_rendered());
 */
#ifndef PERFSPEC_PERFSPEC_H
#define PERFSPEC_PERFSPEC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  PERFSPEC_OK = 0,
  PERFSPEC_E_INVALID = -1,    /* a bad argument to this API (NULL, an index out of range, a bad pid) */
  PERFSPEC_E_SYSTEM = -2,     /* a system call failed, or no memory (see perfspec_last_error) */
  PERFSPEC_E_INTERNAL = -3,   /* a bug in perfspec */
  PERFSPEC_E_SYNTAX = -4,     /* the event string does not follow the grammar */
  PERFSPEC_E_UNKNOWN = -5,    /* an event, PMU, term or tracepoint the machine does not have */
  PERFSPEC_E_VALUE = -6,      /* a value out of range or of the wrong kind, or terms that clash */
  PERFSPEC_E_MACHINE = -7,    /* the machine's description (a sysfs file, an event table) is malformed */
  PERFSPEC_E_IO = -8,         /* a file could not be read */
  PERFSPEC_E_PERMISSION = -9, /* this user may not read it (a tracefs file, a sysfs file) */
};

typedef struct perfspec_machine perfspec_machine;
typedef struct perfspec_event_set perfspec_event_set;
typedef struct perfspec_counters perfspec_counters;

/* The calling thread's last error: the message, the rendered perf-style diagnostic (input, caret,
 * message), and the byte offset in the event string (-1 when the error is not about one). */
const char* perfspec_last_error(void);
const char* perfspec_last_error_rendered(void);
long perfspec_last_error_offset(void);

/* A machine description: a sysfs root ("/sys", a fixture or a snapshot), optional perf-format JSON
 * tables and CPU id (NULL: none / this machine's). NULL on error. Safe to share between threads. */
perfspec_machine* perfspec_machine_new(const char* sysfs_root, const char* events_dir, const char* cpuid);
void perfspec_machine_free(perfspec_machine* machine);

/* Parse and resolve an event list. On success *out owns the result. */
int perfspec_resolve(const perfspec_machine* machine, const char* text, perfspec_event_set** out);
void perfspec_event_set_free(perfspec_event_set* set);
size_t perfspec_event_set_size(const perfspec_event_set* set);
/* Event i: its display name, PMU, group leader index; NULL / (size_t)-1 when i is out of range. */
const char* perfspec_event_name(const perfspec_event_set* set, size_t i);
const char* perfspec_event_pmu(const perfspec_event_set* set, size_t i);
size_t perfspec_event_leader(const perfspec_event_set* set, size_t i);
/* A perf_event_attr field of event i by its kernel name ("config", "bp_addr", "exclude_kernel"). */
int perfspec_event_field(const perfspec_event_set* set, size_t i, const char* field, uint64_t* value);
/* The whole set as `perfspec resolve --format json` prints it; free with perfspec_string_free. */
char* perfspec_event_set_json(const perfspec_event_set* set);
void perfspec_string_free(char* s);
/* The canonical event string of a parsed list (parses back to the same tree); free with
 * perfspec_string_free. NULL on a syntax error. */
char* perfspec_canonical(const char* text);

/* Open the set for the calling thread (pid 0) or a process (pid > 0); events that cannot be opened
 * are reported by perfspec_read, not here. */
int perfspec_open(const perfspec_event_set* set, int pid, perfspec_counters** out);
void perfspec_counters_free(perfspec_counters* counters);
int perfspec_enable(perfspec_counters* counters);
int perfspec_disable(perfspec_counters* counters);
int perfspec_reset(perfspec_counters* counters);

enum { PERFSPEC_COUNTED = 0, PERFSPEC_NOT_COUNTED = 1, PERFSPEC_NOT_SUPPORTED = 2 };
typedef struct perfspec_count {
  int state; /* PERFSPEC_COUNTED, _NOT_COUNTED (never ran), _NOT_SUPPORTED (see errno) */
  int error; /* errno of a failed open, 0 otherwise */
  uint64_t raw, time_enabled, time_running;
  double scaled;          /* raw * time_enabled / time_running */
  const char* error_name; /* "ENOENT", or "" */
  const char* hint;       /* what to do about error, or "" (valid until the next perfspec_read) */
} perfspec_count;
/* Read every event: `counts` must have room for perfspec_event_set_size() entries. */
int perfspec_read(perfspec_counters* counters, perfspec_count* counts, size_t n);

/* Metrics: perf's MetricExpr language (REFERENCE.md section 10), from the machine's tables or ad hoc.
 *
 *   perfspec_metric_plan *plan;
 *   if (perfspec_plan_metrics(m, "ipc = instructions / cycles", &plan) != 0)
 *     fprintf(stderr, "%s", perfspec_last_error_rendered());
 *   perfspec_open(perfspec_metric_plan_events(plan), 0, &c);  ... perfspec_read(c, counts, n);
 *   perfspec_metric_evaluate(plan, counts, n, values, perfspec_metric_plan_size(plan));
 */
typedef struct perfspec_metric_plan perfspec_metric_plan;

/* Plan `request`: metric names and metric groups of the machine's tables, comma-separated and
 * case-insensitive (as perf's -M), or one ad hoc metric `NAME = EXPR` (write `page\-faults` for the
 * event page-faults: '-' is minus). Planned for counting threads or processes (#core_wide is 0).
 * On success *out owns the plan. On an error in a metric's text (PERFSPEC_E_UNKNOWN for
 * `instructions / cyclez`, PERFSPEC_E_SYNTAX, ...), perfspec_last_error_rendered() draws the caret
 * under that metric's text and perfspec_last_error_offset() is the byte offset in that text (the
 * expression after '=' for an ad hoc metric; the metric may be another one it refers to); for a name
 * that is neither a metric nor a group, both are about `request`. */
int perfspec_plan_metrics(const perfspec_machine* machine, const char* request, perfspec_metric_plan** out);
void perfspec_metric_plan_free(perfspec_metric_plan* plan);
/* The events to open for the plan (with perfspec_open), owned by the plan. Tool events
 * (duration_time, user_time, system_time) are not opened: perfspec_read reports them
 * PERFSPEC_NOT_SUPPORTED with error_name "tool event"; fill their count in (PERFSPEC_COUNTED, scaled in
 * ns) before perfspec_metric_evaluate to give them a value. NULL when plan is NULL. */
const perfspec_event_set* perfspec_metric_plan_events(const perfspec_metric_plan* plan);
/* The number of metrics planned, in the order asked for. */
size_t perfspec_metric_plan_size(const perfspec_metric_plan* plan);
/* Metric i: its name, and the unit of its value after its ScaleUnit ("%", "GHz", "" for none); NULL when
 * i is out of range. */
const char* perfspec_metric_name(const perfspec_metric_plan* plan, size_t i);
const char* perfspec_metric_unit(const perfspec_metric_plan* plan, size_t i);
/* Compute every metric from one count per event of perfspec_metric_plan_events() (n at least its size),
 * as `perfspec stat -M` does: a PERFSPEC_COUNTED event's value is its `scaled` (raw scaled for
 * multiplexing), any other state is not counted. values[i] (m at least perfspec_metric_plan_size()) is
 * metric i scaled by its ScaleUnit, or NaN when an input it needs was not counted or the arithmetic has
 * no number (a division by zero): never a made-up figure. The plan keeps each metric's why and threshold
 * verdict for the calls below: evaluate one plan from one thread at a time. */
int perfspec_metric_evaluate(perfspec_metric_plan* plan, const perfspec_count* counts, size_t n,
                             double* values, size_t m);
/* Why metric i had no value at the last perfspec_metric_evaluate ("'cycles' was not counted: ENOENT: ...",
 * "" when it computed or before the first evaluate); valid until the next evaluate. NULL when i is out of
 * range. */
const char* perfspec_metric_why(const perfspec_metric_plan* plan, size_t i);
/* The MetricThreshold's verdict at the last evaluate: 1 when perf marks the value, 0 when not, -1 when
 * there is none (no threshold, its inputs not counted, not evaluated yet, i out of range). */
int perfspec_metric_over_threshold(const perfspec_metric_plan* plan, size_t i);

#ifdef __cplusplus
}
#endif

#endif /* PERFSPEC_PERFSPEC_H */
