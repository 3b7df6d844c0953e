// SPDX-License-Identifier: MIT
// The C API (include/perfspec/perfspec.h) over the C++ library: no exception crosses it.
#include "perfspec/perfspec.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "capi/capi.hpp"
#include "perfspec/perfspec.hpp"

struct perfspec_machine {
  std::unique_ptr<perfspec::spec::Machine> machine;
};
struct perfspec_event_set {
  perfspec::EventSet set;
};
struct perfspec_counters {
  perfspec::runtime::Counters counters;
  std::vector<perfspec::runtime::Count> last;
};
struct perfspec_metric_plan {
  perfspec::metric::Plan plan;
  perfspec_event_set events;                  // plan.events, as perfspec_open takes them
  std::vector<perfspec::metric::Value> last;  // of the last perfspec_metric_evaluate
};

namespace perfspec::capi {

namespace {
thread_local std::string last_message, last_rendered;
thread_local long last_offset = -1;
}  // namespace

int fail(int code, std::string message, std::string rendered, long offset) {
  last_message = std::move(message);
  last_rendered = rendered.empty() ? last_message + "\n" : std::move(rendered);
  last_offset = offset;
  return code;
}

void clear_error() {
  last_message.clear();
  last_rendered.clear();
  last_offset = -1;
}

int code_of(perfspec::ErrorKind kind) {
  switch (kind) {
    case perfspec::ErrorKind::syntax: return PERFSPEC_E_SYNTAX;
    case perfspec::ErrorKind::unknown_name: return PERFSPEC_E_UNKNOWN;
    case perfspec::ErrorKind::bad_value: return PERFSPEC_E_VALUE;
    case perfspec::ErrorKind::machine: return PERFSPEC_E_MACHINE;
    case perfspec::ErrorKind::io: return PERFSPEC_E_IO;
    case perfspec::ErrorKind::permission: return PERFSPEC_E_PERMISSION;
    case perfspec::ErrorKind::usage: return PERFSPEC_E_INVALID;
  }
  return PERFSPEC_E_INVALID;
}

}  // namespace perfspec::capi

using perfspec::capi::fail;
using perfspec::capi::guarded;
using perfspec::capi::last_message;
using perfspec::capi::last_offset;
using perfspec::capi::last_rendered;

namespace {

char* copy(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

}  // namespace

extern "C" {

const char* perfspec_last_error(void) { return last_message.c_str(); }
const char* perfspec_last_error_rendered(void) { return last_rendered.c_str(); }
long perfspec_last_error_offset(void) { return last_offset; }

perfspec_machine* perfspec_machine_new(const char* sysfs_root, const char* events_dir, const char* cpuid) {
  perfspec_machine* out = nullptr;
  guarded([&] {
    perfspec::spec::MachineOptions o;
    if (events_dir) o.events_dir = events_dir;
    if (cpuid) o.cpuid = cpuid;
    auto m = std::make_unique<perfspec_machine>();
    m->machine = std::make_unique<perfspec::spec::Machine>(sysfs_root ? sysfs_root : "/sys", o);
    out = m.release();
  });
  return out;
}

void perfspec_machine_free(perfspec_machine* machine) { delete machine; }

int perfspec_resolve(const perfspec_machine* machine, const char* text, perfspec_event_set** out) {
  if (!machine || !text || !out) return fail(PERFSPEC_E_INVALID, "perfspec_resolve: a NULL argument");
  *out = nullptr;
  return guarded(
      [&] {
        auto s = std::make_unique<perfspec_event_set>();
        s->set = perfspec::resolve(text, *machine->machine);
        *out = s.release();
      },
      text);
}

void perfspec_event_set_free(perfspec_event_set* set) { delete set; }

size_t perfspec_event_set_size(const perfspec_event_set* set) { return set ? set->set.events.size() : 0; }

const char* perfspec_event_name(const perfspec_event_set* set, size_t i) {
  return set && i < set->set.events.size() ? set->set.events[i].name.c_str() : nullptr;
}

const char* perfspec_event_pmu(const perfspec_event_set* set, size_t i) {
  return set && i < set->set.events.size() ? set->set.events[i].pmu.c_str() : nullptr;
}

size_t perfspec_event_leader(const perfspec_event_set* set, size_t i) {
  return set && i < set->set.events.size() ? set->set.events[i].leader : static_cast<size_t>(-1);
}

int perfspec_event_field(const perfspec_event_set* set, size_t i, const char* field, uint64_t* value) {
  if (!set || !field || !value || i >= set->set.events.size())
    return fail(PERFSPEC_E_INVALID, "perfspec_event_field: a NULL argument or an index out of range");
  const perfspec::AttrField* f = perfspec::find_attr_field(field);
  if (!f) return fail(PERFSPEC_E_INVALID, std::string("unknown attr field '") + field + "'");
  *value = f->get(set->set.events[i].attr);
  return PERFSPEC_OK;
}

char* perfspec_event_set_json(const perfspec_event_set* set) {
  char* out = nullptr;
  if (!set) return nullptr;
  guarded([&] { out = copy(perfspec::to_json(set->set)); });
  return out;
}

void perfspec_string_free(char* s) { std::free(s); }

char* perfspec_canonical(const char* text) {
  char* out = nullptr;
  if (!text) return nullptr;
  guarded([&] { out = copy(perfspec::to_string(perfspec::parse(text))); }, text);
  return out;
}

int perfspec_open(const perfspec_event_set* set, int pid, perfspec_counters** out) {
  if (!set || !out || pid < 0)
    return fail(PERFSPEC_E_INVALID, "perfspec_open: a NULL argument or a negative pid");
  *out = nullptr;
  return guarded([&] {
    auto target =
        pid == 0 ? perfspec::runtime::Target::self_thread() : perfspec::runtime::Target::process(pid);
    auto c = std::unique_ptr<perfspec_counters>(
        new perfspec_counters{perfspec::runtime::Counters::open(set->set, target), {}});
    *out = c.release();
  });
}

void perfspec_counters_free(perfspec_counters* counters) { delete counters; }

int perfspec_enable(perfspec_counters* c) {
  return c ? guarded([&] { c->counters.enable(); }) : fail(PERFSPEC_E_INVALID, "perfspec_enable: NULL");
}
int perfspec_disable(perfspec_counters* c) {
  return c ? guarded([&] { c->counters.disable(); }) : fail(PERFSPEC_E_INVALID, "perfspec_disable: NULL");
}
int perfspec_reset(perfspec_counters* c) {
  return c ? guarded([&] { c->counters.reset(); }) : fail(PERFSPEC_E_INVALID, "perfspec_reset: NULL");
}

int perfspec_read(perfspec_counters* c, perfspec_count* counts, size_t n) {
  if (!c || !counts) return fail(PERFSPEC_E_INVALID, "perfspec_read: a NULL argument");
  return guarded([&] {
    c->counters.read(c->last);
    if (n < c->last.size())
      throw perfspec::Error(perfspec::ErrorKind::usage,
                            "perfspec_read: the counts array is smaller than the event set");
    for (size_t i = 0; i < c->last.size(); ++i) {
      const auto& k = c->last[i];
      perfspec_count& o = counts[i];
      o.state = k.state == perfspec::runtime::Count::State::counted       ? PERFSPEC_COUNTED
                : k.state == perfspec::runtime::Count::State::not_counted ? PERFSPEC_NOT_COUNTED
                                                                          : PERFSPEC_NOT_SUPPORTED;
      o.error = k.failure ? k.failure->error : 0;
      o.raw = k.raw;
      o.time_enabled = k.time_enabled;
      o.time_running = k.time_running;
      o.scaled = k.scaled();
      o.error_name = k.failure ? k.failure->name.c_str() : "";
      o.hint = k.failure ? k.failure->hint.c_str() : "";
    }
  });
}

int perfspec_plan_metrics(const perfspec_machine* machine, const char* request, perfspec_metric_plan** out) {
  if (!machine || !request || !out) return fail(PERFSPEC_E_INVALID, "perfspec_plan_metrics: a NULL argument");
  *out = nullptr;
  return guarded(
      [&] {
        auto p = std::make_unique<perfspec_metric_plan>();
        p->plan = perfspec::metric::plan(request, *machine->machine);
        p->events.set = p->plan.events;
        *out = p.release();
      },
      request);
}

void perfspec_metric_plan_free(perfspec_metric_plan* plan) { delete plan; }

const perfspec_event_set* perfspec_metric_plan_events(const perfspec_metric_plan* plan) {
  return plan ? &plan->events : nullptr;
}

size_t perfspec_metric_plan_size(const perfspec_metric_plan* plan) {
  return plan ? plan->plan.metrics.size() : 0;
}

const char* perfspec_metric_name(const perfspec_metric_plan* plan, size_t i) {
  return plan && i < plan->plan.metrics.size() ? plan->plan.metrics[i].definition.name.c_str() : nullptr;
}

const char* perfspec_metric_unit(const perfspec_metric_plan* plan, size_t i) {
  return plan && i < plan->plan.metrics.size() ? plan->plan.metrics[i].scale.unit.c_str() : nullptr;
}

int perfspec_metric_evaluate(perfspec_metric_plan* plan, const perfspec_count* counts, size_t n,
                             double* values, size_t m) {
  if (!plan || !counts || !values)
    return fail(PERFSPEC_E_INVALID, "perfspec_metric_evaluate: a NULL argument");
  if (n < plan->plan.events.events.size())
    return fail(PERFSPEC_E_INVALID, "perfspec_metric_evaluate: fewer counts than the plan's events");
  if (m < plan->plan.metrics.size())
    return fail(PERFSPEC_E_INVALID, "perfspec_metric_evaluate: the values array is smaller than the plan");
  return guarded([&] {
    // As perfspec stat -M: a counted event's scaled value, NaN otherwise with its errno's name and hint.
    const std::size_t events = plan->plan.events.events.size();
    std::vector<double> in(events);
    std::vector<std::string> why(events);
    for (std::size_t i = 0; i < events; ++i) {
      const perfspec_count& c = counts[i];
      const bool ok = c.state == PERFSPEC_COUNTED;
      in[i] = ok ? c.scaled : std::nan("");
      if (!ok && c.error_name && *c.error_name)
        why[i] = std::string(c.error_name) + ": " + (c.hint ? c.hint : "");
    }
    plan->last = perfspec::metric::evaluate(plan->plan, in, why);
    for (std::size_t k = 0; k < plan->last.size(); ++k) values[k] = plan->last[k].value;
  });
}

const char* perfspec_metric_why(const perfspec_metric_plan* plan, size_t i) {
  if (!plan || i >= plan->plan.metrics.size()) return nullptr;
  return i < plan->last.size() ? plan->last[i].why.c_str() : "";
}

int perfspec_metric_over_threshold(const perfspec_metric_plan* plan, size_t i) {
  if (!plan || i >= plan->last.size() || !plan->last[i].over_threshold) return -1;
  return *plan->last[i].over_threshold ? 1 : 0;
}

}  // extern "C"

// ---- Sampling and records ----

struct perfspec_sampler {
  perfspec::runtime::Sampler sampler;
  perfspec::record::Formats formats;
  std::vector<std::size_t> event_of_attr;  // Formats index -> event index
  std::vector<std::byte> pending;          // records read from the buffers, not yet handed out
  std::size_t at = 0;
  perfspec::record::Record current;
};

namespace {

// A decoded record as the C struct.
void to_c(const perfspec::record::Record& r, const perfspec::record::Formats& formats, std::size_t event,
          perfspec_record* out) {
  using namespace perfspec::record;
  *out = perfspec_record{};
  out->type = r.type;
  out->misc = r.misc;
  out->size = r.size;
  out->event = event;
  out->pid = r.sample_id.pid, out->tid = r.sample_id.tid;
  out->time = r.sample_id.time, out->id = r.sample_id.id, out->cpu = r.sample_id.cpu;
  out->stream_id = r.sample_id.stream_id;
  if (const auto* s = r.get<Sample>()) {
    out->sample_type = s->type;
    out->ip = s->ip, out->addr = s->addr, out->id = s->has(sample_identifier) ? s->identifier : s->id;
    out->period = s->has(sample_period) ? s->period : formats.attr(r.attr).sample_period;
    out->callchain_size = s->callchain.size();
    out->bytes_ = s->callchain.bytes().data();
    out->raw = s->raw.data(), out->raw_size = static_cast<uint32_t>(s->raw.size());
  } else if (const auto* c = r.get<Comm>()) {
    out->pid = c->pid, out->tid = c->tid, out->name = c->comm.data();
  } else if (const auto* m = r.get<Mmap>()) {
    out->pid = m->pid, out->tid = m->tid, out->addr = m->addr, out->len = m->len, out->pgoff = m->pgoff;
    out->name = m->filename.data();
  } else if (const auto* m2 = r.get<Mmap2>()) {
    out->pid = m2->pid, out->tid = m2->tid, out->addr = m2->addr, out->len = m2->len, out->pgoff = m2->pgoff;
    out->name = m2->filename.data();
  } else if (const auto* t = r.get<Task>()) {
    out->pid = t->pid, out->tid = t->tid, out->time = t->time;
  } else if (const auto* l = r.get<Lost>()) {
    out->lost = l->lost, out->id = l->id;
  } else if (const auto* ls = r.get<LostSamples>()) {
    out->lost = ls->lost;
  }
}

}  // namespace

uint64_t perfspec_record_callchain(const perfspec_record* r, size_t i) {
  if (!r || !r->bytes_ || i >= r->callchain_size) return 0;
  uint64_t v;
  std::memcpy(&v, static_cast<const std::byte*>(r->bytes_) + i * 8, 8);
  return v;
}

namespace {

// 0 and 0: perf's default frequency, lowered as perf lowers it to the kernel's limit when that is lower
// (the kernel lowers its limit itself when sampling takes long).
std::uint64_t default_frequency() {
  namespace rt = perfspec::runtime;
  return std::min(rt::default_frequency, rt::max_sample_rate().value_or(rt::default_frequency));
}

}  // namespace

int perfspec_sampler_open(const perfspec_event_set* set, int pid, uint64_t period, uint64_t frequency,
                          uint64_t sample_type, perfspec_sampler** out) {
  perfspec_sampling o{};
  o.size = sizeof o;
  o.pid = pid, o.period = period, o.frequency = frequency, o.sample_type = sample_type;
  return perfspec_sampler_open_with(set, &o, out);
}

int perfspec_sampler_open_with(const perfspec_event_set* set, const perfspec_sampling* options,
                               perfspec_sampler** out) {
  if (!set || !out || !options)
    return fail(PERFSPEC_E_INVALID, "perfspec_sampler_open_with: a NULL argument");
  *out = nullptr;
  if (options->size < offsetof(perfspec_sampling, pages) + sizeof options->pages)
    return fail(PERFSPEC_E_INVALID,
                "perfspec_sampler_open_with: options of size " + std::to_string(options->size) +
                    ", at least " +
                    std::to_string(offsetof(perfspec_sampling, pages) + sizeof options->pages) +
                    " expected (set size to sizeof(perfspec_sampling))");
  const int pid = options->pid;
  if (pid < -1) return fail(PERFSPEC_E_INVALID, "perfspec_sampler_open: a pid below -1");
  if (options->pages & (options->pages - 1))
    return fail(PERFSPEC_E_INVALID, "perfspec_sampler_open_with: pages " + std::to_string(options->pages) +
                                        " is not a power of two");
  return guarded([&] {
    namespace rt = perfspec::runtime;
    rt::SamplingOptions o;
    o.period = options->period;
    o.frequency = options->period ? 0 : (options->frequency ? options->frequency : default_frequency());
    if (options->sample_type) o.sample_type = options->sample_type;
    o.pages = options->pages;
    auto target = pid == 0  ? rt::Target::self_thread()
                  : pid > 0 ? rt::Target::process(pid)
                            : rt::Target::system_wide();
    auto s = rt::Sampler::open(set->set, target, o);
    auto h = std::unique_ptr<perfspec_sampler>(new perfspec_sampler{std::move(s), {}, {}, {}, 0, {}});
    std::string why;
    for (std::size_t i = 0; i < set->set.events.size(); ++i) {
      if (!h->sampler.opened(i)) {
        const auto& f = h->sampler.failures()[i];
        if (why.empty() && f)
          why = set->set.events[i].name + ": " + f->name + " (" + f->meaning + ")" +
                (f->hint.empty() ? "" : "; " + f->hint);
        continue;
      }
      h->formats.add(h->sampler.attrs()[i], h->sampler.ids()[i]);
      h->event_of_attr.push_back(i);
    }
    if (h->event_of_attr.empty())
      throw perfspec::Error(perfspec::ErrorKind::io, "no event could be opened for sampling: " + why);
    *out = h.release();
  });
}

void perfspec_sampler_free(perfspec_sampler* s) { delete s; }

int perfspec_sampler_enable(perfspec_sampler* s) {
  if (!s) return fail(PERFSPEC_E_INVALID, "perfspec_sampler_enable: NULL");
  int err = s->sampler.enable();
  return err ? fail(PERFSPEC_E_SYSTEM, std::string("PERF_EVENT_IOC_ENABLE: ") + std::strerror(err)) : 0;
}

int perfspec_sampler_disable(perfspec_sampler* s) {
  if (!s) return fail(PERFSPEC_E_INVALID, "perfspec_sampler_disable: NULL");
  int err = s->sampler.disable();
  return err ? fail(PERFSPEC_E_SYSTEM, std::string("PERF_EVENT_IOC_DISABLE: ") + std::strerror(err)) : 0;
}

int perfspec_sampler_poll(perfspec_sampler* s, int timeout_ms) {
  if (!s) return fail(PERFSPEC_E_INVALID, "perfspec_sampler_poll: NULL");
  auto p = s->sampler.poll(timeout_ms);
  switch (p.state) {
    case perfspec::runtime::Wakeup::ready: return 1;
    case perfspec::runtime::Wakeup::timeout: return 0;
    case perfspec::runtime::Wakeup::target_gone: return 2;
    case perfspec::runtime::Wakeup::failed: break;
  }
  return fail(PERFSPEC_E_SYSTEM, std::string("poll: ") + std::strerror(p.error));
}

int perfspec_sampler_next(perfspec_sampler* s, perfspec_record* out) {
  if (!s || !out) return fail(PERFSPEC_E_INVALID, "perfspec_sampler_next: a NULL argument");
  int result = 0;
  int code = guarded([&] {
    if (s->at >= s->pending.size()) {  // everything handed out: take what the buffers hold now
      s->pending.clear();
      s->at = 0;
      s->sampler.read(
          [&](std::span<const std::byte> r) { s->pending.insert(s->pending.end(), r.begin(), r.end()); });
      if (s->pending.empty()) return;
    }
    auto rest = std::span<const std::byte>(s->pending).subspan(s->at);
    s->formats.decode(rest, s->at, s->current);
    s->at += s->current.size;
    std::size_t event =
        s->current.attr < s->event_of_attr.size() ? s->event_of_attr[s->current.attr] : SIZE_MAX;
    to_c(s->current, s->formats, event, out);
    result = 1;
  });
  return code ? code : result;
}

int perfspec_sampler_losses(const perfspec_sampler* s, uint64_t* lost, uint64_t* lost_samples,
                            uint64_t* throttles) {
  if (!s) return fail(PERFSPEC_E_INVALID, "perfspec_sampler_losses: NULL");
  auto l = s->sampler.losses();
  if (lost) *lost = l.lost;
  if (lost_samples) *lost_samples = l.lost_samples;
  if (throttles) *throttles = l.throttles;
  return 0;
}

int perfspec_sampler_dropped(const perfspec_sampler* s, uint64_t* dropped, int* counted, int* maybe) {
  if (!s) return fail(PERFSPEC_E_INVALID, "perfspec_sampler_dropped: NULL");
  auto l = s->sampler.losses();
  if (dropped) *dropped = l.dropped;
  if (counted) *counted = l.dropped_counted ? 1 : 0;
  if (maybe) *maybe = l.dropped > 0 || l.full_reads > 0 ? 1 : 0;
  return 0;
}

int perfspec_perf_data_open(const char* path, perfspec_perf_data** out) {
  if (!path || !out) return fail(PERFSPEC_E_INVALID, "perfspec_perf_data_open: a NULL argument");
  *out = nullptr;
  return guarded([&] {
    auto h = std::unique_ptr<perfspec_perf_data>(
        new perfspec_perf_data{perfspec::record::PerfData::open(path), perfspec::record::Record{}});
    *out = h.release();
  });
}

void perfspec_perf_data_free(perfspec_perf_data* f) { delete f; }

int perfspec_perf_data_next(perfspec_perf_data* f, perfspec_record* out) {
  if (!f || !out) return fail(PERFSPEC_E_INVALID, "perfspec_perf_data_next: a NULL argument");
  int result = 0;
  int code = guarded([&] {
    if (!f->file.next(f->current)) return;
    to_c(f->current, f->file.formats(),
         f->current.attr == perfspec::record::Record::npos ? SIZE_MAX : f->current.attr, out);
    result = 1;
  });
  return code ? code : result;
}

namespace {
struct WalkStopped {
  int value;
};
}  // namespace

int perfspec_perf_data_walk(perfspec_perf_data* f, int (*visit)(const perfspec_record* record, void* context),
                            void* context, int* in_time) {
  if (!f || !visit) return fail(PERFSPEC_E_INVALID, "perfspec_perf_data_walk: a NULL argument");
  namespace rec = perfspec::record;
  int result = 0;
  int code = guarded([&] {
    try {
      rec::Order order = rec::for_each_in_time_order(f->file, [&](const rec::Record& r) {
        perfspec_record out;
        to_c(r, f->file.formats(), r.attr == rec::Record::npos ? SIZE_MAX : r.attr, &out);
        f->visiting = &r;
        int value = visit(&out, context);
        f->visiting = nullptr;
        if (value > 0) throw WalkStopped{value};
        if (value < 0)
          throw perfspec::Error(perfspec::ErrorKind::usage,
                                "perfspec_perf_data_walk: a visit returned a negative value");
      });
      if (in_time) *in_time = order == rec::Order::time;
    } catch (const WalkStopped& stopped) {
      result = stopped.value;
    }
  });
  f->visiting = nullptr;
  return code ? code : result;
}

size_t perfspec_perf_data_events(const perfspec_perf_data* f) { return f ? f->file.events().size() : 0; }

const char* perfspec_perf_data_event_name(const perfspec_perf_data* f, size_t i) {
  return f && i < f->file.events().size() ? f->file.event_name(i).c_str() : nullptr;
}

int perfspec_record_command(const perfspec_machine* machine, const perfspec_event_set* set,
                            char* const argv[], const char* path, uint64_t period, uint64_t frequency,
                            int* exit_status, uint64_t* samples) {
  if (!machine || !set || !argv || !argv[0] || !path)
    return fail(PERFSPEC_E_INVALID, "perfspec_record_command: a NULL argument, or an empty command");
  namespace rt = perfspec::runtime;
  std::vector<std::string> command;
  for (char* const* a = argv; *a; ++a) command.emplace_back(*a);
  std::string none;  // why no event can sample
  int code = guarded([&] {
    rt::SamplingOptions o;
    o.period = period;
    o.frequency = period ? 0 : (frequency ? frequency : default_frequency());
    o.sample_type = perfspec::sample_ip | perfspec::sample_tid | perfspec::sample_time;
    if (!period) o.sample_type |= perfspec::sample_period;
    rt::Command cmd(command);
    auto rec = rt::Recording::open(*machine->machine, set->set, rt::Target::command(cmd, true),
                                   {.sampling = o, .cmdline = command});
    if (!rec.sampling()) {
      none = "no event could be opened for sampling";
      for (std::size_t i = 0; i < rec.failures().size(); ++i)
        if (const auto& f = rec.failures()[i]) {
          none += ": " + rec.events().events[i].name + ": " + f->name + " (" + f->meaning + ")" +
                  (f->hint.empty() ? "" : "; " + f->hint);
          break;
        }
      return;
    }
    auto out = perfspec::record::PerfDataWriter::create(path, rec.file_events());
    rec.begin(out);
    if (int err = cmd.start()) {
      out.finish();
      throw perfspec::Error(perfspec::ErrorKind::io,
                            "cannot run '" + command[0] + "': " + std::strerror(err));
    }
    rt::RecordingSummary summary;
    try {
      while (rec.drain(100) != rt::Wakeup::target_gone && !cmd.wait(0)) {
      }
      summary = rec.finish();
    } catch (...) {
      // The file cannot be written: the command is not left running unrecorded (nor waited for).
      cmd.signal(SIGTERM);
      throw;
    }
    cmd.wait();
    if (exit_status) *exit_status = cmd.exit_status();
    if (samples) *samples = summary.samples;
  });
  if (code == PERFSPEC_OK && !none.empty()) return fail(PERFSPEC_E_SYSTEM, none);
  return code;
}
