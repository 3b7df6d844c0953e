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

/* ---- Sampling and records ----
 *
 * A sampler opens an event set for sampling and reads its ring buffers; a perf.data file is read
 * with the same record type. Records are decoded: perfspec_record holds the fields of a sample (those
 * whose PERF_SAMPLE_* bit is in `sample_type`) and of the common other records. Its pointers are valid
 * until the next call on the same sampler or file.
 *
 *   perfspec_sampler *s;
 *   perfspec_sampler_open(set, 0, 0, 1000, 0, &s);   // this thread, 1000 Hz, IP|TID|TIME|PERIOD
 *   perfspec_sampler_enable(s);
 *   work();
 *   perfspec_sampler_disable(s);
 *   perfspec_record r;
 *   while (perfspec_sampler_next(s, &r) == 1)
 *     if (r.type == 9) printf("%s %llx\n", perfspec_event_name(set, r.event), (unsigned long long)r.ip);
 */
typedef struct perfspec_sampler perfspec_sampler;
typedef struct perfspec_perf_data perfspec_perf_data;

typedef struct perfspec_record {
  uint32_t type;        /* PERF_RECORD_*: 9 a sample, 3 COMM, 10 MMAP2, 2 LOST, ... */
  uint16_t misc;        /* PERF_RECORD_MISC_*: the cpumode is misc & 7 */
  uint16_t size;        /* of the whole record */
  size_t event;         /* the event it belongs to (an index of the set or file), (size_t)-1 when none */
  uint64_t sample_type; /* samples: which fields below are set */
  uint64_t ip;
  uint32_t pid, tid; /* samples; COMM, MMAP, MMAP2, FORK, EXIT: the record's own */
  uint64_t time;     /* samples, and other records with sample_id_all and TIME */
  uint64_t addr;     /* samples: PERF_SAMPLE_ADDR; MMAP, MMAP2: the start */
  uint64_t id, stream_id;
  uint32_t cpu;
  uint64_t period;       /* samples; for events of a fixed period without PERF_SAMPLE_PERIOD, that period */
  size_t callchain_size; /* entries of perfspec_record_callchain, markers included */
  const void* raw;       /* PERF_SAMPLE_RAW: the tracepoint payload */
  uint32_t raw_size;
  uint64_t len, pgoff; /* MMAP, MMAP2 */
  const char* name;    /* COMM: the name; MMAP, MMAP2: the file; NULL otherwise */
  uint64_t lost;       /* LOST, LOST_SAMPLES: how many */
  const void* bytes_;  /* internal */
} perfspec_record;

/* Entry i of a sample's callchain (PERF_CONTEXT_* markers as the kernel wrote them), 0 when out of range. */
uint64_t perfspec_record_callchain(const perfspec_record* record, size_t i);

/* Open `set` for sampling: pid 0 this thread, pid > 0 that process and the children it makes, pid -1
 * every process on every CPU. `period` samples every N events; else `frequency` samples N times a
 * second (0 and 0: perf's default, 4000 Hz, or the kernel's perf_event_max_sample_rate when lower);
 * an event whose string says period= or freq= keeps its own. `sample_type` is the PERF_SAMPLE_* bits
 * every sample holds (0: IP|TID|TIME|PERIOD). Events that cannot be opened are left out
 * (PERFSPEC_E_SYSTEM when none could be, with the reason in perfspec_last_error()). */
int perfspec_sampler_open(const perfspec_event_set* set, int pid, uint64_t period, uint64_t frequency,
                          uint64_t sample_type, perfspec_sampler** out);
/* The same with every option, the size of the ring buffers among them. Zero the struct, set `size`
 * to sizeof(perfspec_sampling) (later versions add fields after these), then what you need:
 *
 *   perfspec_sampling o = {sizeof o};
 *   o.frequency = 1000;
 *   o.pages = 1024;  // 4 MiB per buffer: room for a burst read only at the end
 *   perfspec_sampler_open_with(set, &o, &s);
 */
typedef struct perfspec_sampling {
  size_t size;          /* sizeof(perfspec_sampling) */
  int pid;              /* 0 this thread, > 0 that process and its children, -1 every process */
  uint64_t period;      /* as perfspec_sampler_open */
  uint64_t frequency;   /* as perfspec_sampler_open (0 and 0: perf's default) */
  uint64_t sample_type; /* as perfspec_sampler_open (0: IP|TID|TIME|PERIOD) */
  size_t pages;         /* data pages of each ring buffer, a power of two; 0: 512 KiB worth, as perf */
} perfspec_sampling;
int perfspec_sampler_open_with(const perfspec_event_set* set, const perfspec_sampling* options,
                               perfspec_sampler** out);
void perfspec_sampler_free(perfspec_sampler* sampler);
int perfspec_sampler_enable(perfspec_sampler* sampler);
int perfspec_sampler_disable(perfspec_sampler* sampler);
/* Wait up to timeout_ms (-1: forever) for records: 1 some are ready, 0 none came, 2 the target is gone
 * (read what is left, then stop), or a negative error. */
int perfspec_sampler_poll(perfspec_sampler* sampler, int timeout_ms);
/* The next record of any buffer: 1 and *out set, 0 when none is left for now, or a negative error. */
int perfspec_sampler_next(perfspec_sampler* sampler, perfspec_record* out);
/* What was not recorded: records the kernel dropped (LOST), samples the PMU dropped (LOST_SAMPLES),
 * times sampling was throttled; any pointer may be NULL. */
int perfspec_sampler_losses(const perfspec_sampler* sampler, uint64_t* lost, uint64_t* lost_samples,
                            uint64_t* throttles);
/* Records the kernel could not write because a buffer was full, counted by the events themselves:
 * exact however the sampler is read (reading only after perfspec_sampler_disable keeps at most one
 * buffer's worth, and this says how many more there were; the LOST records of
 * perfspec_sampler_losses come only when the buffer is read while the events run). *counted is 1 when
 * every event counts them (Linux 6.0 and later), 0 when one cannot: then *maybe is 1 when a buffer was
 * found with too little room for a record, so that some may have been dropped. Any pointer may be NULL. */
int perfspec_sampler_dropped(const perfspec_sampler* sampler, uint64_t* dropped, int* counted, int* maybe);

/* Open a perf.data file (perf's or perfspec's; "-" reads a pipe-mode stream on stdin). */
int perfspec_perf_data_open(const char* path, perfspec_perf_data** out);
void perfspec_perf_data_free(perfspec_perf_data* file);
/* The next record in file order: 1 and *out set, 0 at the end, or a negative error (PERFSPEC_E_IO for a
 * record that does not follow the format, with its offset in perfspec_last_error()). */
int perfspec_perf_data_next(perfspec_perf_data* file, perfspec_record* out);
/* Every record of the kernel's not yet read by perfspec_perf_data_next, in time order as perf script
 * and perf report take them (a file's records are in time order only within the rounds of its
 * buffers: a thread that moved between CPUs has its records in more than one): `visit` is called
 * with each and returns 0 to go on, a positive value to stop; perfspec_symbolizer_follow(sym, file)
 * inside it follows that record. *in_time (may be NULL) is set to 1 when the records came in time
 * order, 0 when in file order (some event's records carry no time). Returns 0 when every record was
 * visited, the positive value a visit stopped with, or a negative error (PERFSPEC_E_IO for a record
 * that does not follow the format: those before it were visited). */
int perfspec_perf_data_walk(perfspec_perf_data* file,
                            int (*visit)(const perfspec_record* record, void* context), void* context,
                            int* in_time);
size_t perfspec_perf_data_events(const perfspec_perf_data* file);
const char* perfspec_perf_data_event_name(const perfspec_perf_data* file, size_t i);

/* Symbols: where an address of a recording lies, the binary and the function, as perf script names
 * them (perf 6.12's rules: the binaries' ELF symbol tables or separate debug files, of the build the
 * recording names; the kernel's kallsyms; a JIT's /tmp/perf-PID.map). Feed it a file's records in
 * time order (perfspec_symbolizer_follow for each record perfspec_perf_data_walk visits; in file
 * order a sample can come before the mapping it lies in), then ask where an address lies. Strings
 * stay valid as long as the symbolizer.
 *
 *   struct both { perfspec_perf_data *file; perfspec_symbolizer *sym; };
 *   static int show(const perfspec_record *r, void *context) {
 *     struct both *b = context;
 *     perfspec_symbolizer_follow(b->sym, b->file);
 *     perfspec_location where;
 *     if (r->type == 9 && perfspec_symbolizer_locate(b->sym, r->pid, r->ip, r->misc, &where) == 1)
 *       printf("%s+%#llx (%s)\n", where.symbol ? where.symbol : "[unknown]",
 *              (unsigned long long)where.offset, where.dso);
 *     return 0;
 *   }
 *   struct both b = {file, NULL};
 *   perfspec_symbolizer_open(NULL, NULL, &b.sym);
 *   perfspec_symbolizer_read_build_ids(b.sym, file);
 *   perfspec_perf_data_walk(file, show, &b, NULL);
 */
typedef struct perfspec_symbolizer perfspec_symbolizer;
typedef struct perfspec_location {
  const char* dso;      /* the binary as perf names it ("/usr/bin/ls", "[kernel.kallsyms]", "[vdso]") */
  const char* symbol;   /* the function (C++ demangled), NULL when the binary has none there */
  uint64_t offset;      /* of the address past the symbol's start (perf's symoff) */
  uint64_t dso_address; /* the address in the binary's terms (a file offset for an ELF binary) */
} perfspec_location;
/* `symfs` (binaries looked up under it) and `kallsyms` (the kernel's symbols) may be NULL: the paths as
 * recorded, /proc/kallsyms (perf's --symfs and --kallsyms). */
int perfspec_symbolizer_open(const char* symfs, const char* kallsyms, perfspec_symbolizer** out);
void perfspec_symbolizer_free(perfspec_symbolizer* symbolizer);
/* The build ids of the file's header (HEADER_BUILD_ID): binaries of another build are then not read. */
int perfspec_symbolizer_read_build_ids(perfspec_symbolizer* symbolizer, const perfspec_perf_data* file);
/* Follow the record perfspec_perf_data_next last returned (MMAP, MMAP2, FORK and build ids matter). */
int perfspec_symbolizer_follow(perfspec_symbolizer* symbolizer, const perfspec_perf_data* file);
/* Where `address` of process `pid` lies, by the cpumode of `misc` (a record's): 1 and *out set when a
 * mapping covers it, 0 when none does, or a negative error. */
int perfspec_symbolizer_locate(perfspec_symbolizer* symbolizer, uint32_t pid, uint64_t address, uint16_t misc,
                               perfspec_location* out);
/* perf's srcline of `address` (the arguments of perfspec_symbolizer_locate): "file.c:42" from the
 * binary's line table, "??:0", or the binary's short name and address ("libc.so.6[8ba7f]"), written
 * NUL-terminated into the `size` bytes at `buf` (cut to fit): 1 when a mapping covers the address, 0
 * (and "") when none does, or a negative error (PERFSPEC_E_INVALID for a NULL `buf` or a `size` of 0).
 *
 *   char line[256];
 *   if (perfspec_symbolizer_srcline(sym, r->pid, r->ip, r->misc, line, sizeof line) == 1) puts(line);
 */
int perfspec_symbolizer_srcline(perfspec_symbolizer* symbolizer, uint32_t pid, uint64_t address,
                                uint16_t misc, char* buf, size_t size);
/* The symbol at file offset `offset` of the binary whose build id is the `size` bytes at `build_id`,
 * from perf's build-id cache or /usr/lib/debug/.build-id: 1 and *out set when such a file is found, 0
 * when none is, or a negative error. */
int perfspec_symbolizer_locate_build_id(perfspec_symbolizer* symbolizer, const void* build_id, size_t size,
                                        uint64_t offset, perfspec_location* out);

/* Record a command into the perf.data file `path`, as `perfspec record -e ... -c/-F ... -o path --
 * argv...` does: the events of `set` (resolved on `machine`) sampled every `period` events, else
 * `frequency` times a second (0 and 0: as perfspec_sampler_open), samples with IP|TID|TIME (and
 * PERIOD with a frequency), the records perf writes beside them. `argv` is the command and its
 * arguments, NULL terminated (argv[0] looked up in PATH). Blocks until the command exits.
 * `*exit_status` (may be NULL) is its exit status (128+N when killed by signal N), `*samples` (may be
 * NULL) the samples written. PERFSPEC_E_SYSTEM when no event can sample, PERFSPEC_E_IO when the file cannot
 * be written or the command cannot be run, each with the reason in perfspec_last_error().
 *
 *   char* argv[] = {"make", "-j8", NULL};
 *   int status;
 *   perfspec_record_command(machine, set, argv, "perf.data", 0, 999, &status, NULL);
 */
int perfspec_record_command(const perfspec_machine* machine, const perfspec_event_set* set,
                            char* const argv[], const char* path, uint64_t period, uint64_t frequency,
                            int* exit_status, uint64_t* samples);

#ifdef __cplusplus
}
#endif

#endif /* PERFSPEC_PERFSPEC_H */
