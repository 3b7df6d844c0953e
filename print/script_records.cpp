// SPDX-License-Identifier: MIT
// The records other than samples as perf script prints them after their start (perf's
// perf_event__fprintf): PERF_RECORD_NAME and what the record says.
#include <cstddef>
#include <cstdint>

#include <fmt/format.h>

#include "perfspec/record.hpp"
#include "print/script_session.hpp"

namespace perfspec::script {

using namespace perfspec::record;

namespace {
constexpr std::string_view namespace_names[] = {"net", "uts", "ipc", "pid", "user", "mnt", "cgroup"};

}  // namespace

// perf_event__fprintf_namespaces: four a line
void namespaces_text(fmt::memory_buffer& out, const Record& r) {
  auto it = std::back_inserter(out);
  if (auto* n = r.get<Namespaces>()) {
    fmt::format_to(it, " {}/{} - nr_namespaces: {}\n\t\t[", static_cast<std::int32_t>(n->pid),
                   static_cast<std::int32_t>(n->tid), n->size());
    for (std::size_t i = 0; i < n->size(); ++i) {
      if (i && i % 4 == 0) out.append(std::string_view("\n\t\t "));
      fmt::format_to(it, "{}/{}: {}/{}{}", i, i < std::size(namespace_names) ? namespace_names[i] : "UNKNOWN",
                     n->words[2 * i], CHex{n->words[2 * i + 1]}, i + 1 != n->size() ? ", " : "]\n");
    }
  }
}

// The record's type and what it says, as perf's perf_event__fprintf does.
void other_record_text(fmt::memory_buffer& out_, const Record& r) {
  auto name = type_name(r.type);
  auto it = std::back_inserter(out_);
  if (name.empty())
    fmt::format_to(it, "PERF_RECORD type {}", r.type);
  else
    fmt::format_to(it, "PERF_RECORD_{}", name);
  if (auto* m = r.get<Mmap>()) {
    fmt::format_to(it, " {}/{}: [{}({}) @ {}]: {} {}\n", static_cast<std::int32_t>(m->pid),
                   static_cast<std::int32_t>(m->tid), CHex{m->addr}, CHex{m->len}, CHex{m->pgoff},
                   (r.misc & misc_mmap_data) ? 'r' : 'x', m->filename);
  } else if (auto* m2 = r.get<Mmap2>()) {
    fmt::format_to(it, " {}/{}: [{}({}) @ {} ", static_cast<std::int32_t>(m2->pid),
                   static_cast<std::int32_t>(m2->tid), CHex{m2->addr}, CHex{m2->len}, CHex{m2->pgoff});
    if (r.misc & misc_mmap_build_id) {
      out_.push_back('<');
      for (std::byte b : m2->build_id) fmt::format_to(it, "{:02x}", std::to_integer<unsigned>(b));
      out_.push_back('>');
    } else {
      fmt::format_to(it, "{:02x}:{:02x} {} {}", m2->maj, m2->min, m2->ino, m2->ino_generation);
    }
    fmt::format_to(it, "]: {}{}{}{} {}\n", (m2->prot & 1) ? 'r' : '-', (m2->prot & 2) ? 'w' : '-',
                   (m2->prot & 4) ? 'x' : '-', (m2->flags & 1) ? 's' : 'p', m2->filename);
  } else if (auto* c = r.get<Comm>()) {
    fmt::format_to(it, "{}: {}:{}/{}\n", c->exec ? " exec" : "", c->comm, static_cast<std::int32_t>(c->pid),
                   static_cast<std::int32_t>(c->tid));
  } else if (auto* t = r.get<Task>()) {
    fmt::format_to(it, "({}:{}):({}:{})\n", static_cast<std::int32_t>(t->pid),
                   static_cast<std::int32_t>(t->tid), static_cast<std::int32_t>(t->ppid),
                   static_cast<std::int32_t>(t->ptid));
  } else if (auto* l = r.get<Lost>()) {
    fmt::format_to(it, " lost {}\n", l->lost);
  } else if (auto* ls = r.get<LostSamples>()) {
    fmt::format_to(it, " lost {}\n", ls->lost);
  } else if (auto* th = r.get<Throttle>()) {
    fmt::format_to(it, " {} id {} stream_id {}\n", th->time, th->id, th->stream_id);
  } else if (auto* sw = r.get<Switch>()) {
    fmt::format_to(it, " {}{}", sw->out ? "OUT" : "IN ", sw->preempt ? " preempt" : "        ");
    if (r.kind() == Type::switch_cpu_wide)
      fmt::format_to(it, "  {} pid/tid: {:>5}/{:<5}", sw->out ? "next" : "prev",
                     static_cast<std::int32_t>(sw->next_prev_pid),
                     static_cast<std::int32_t>(sw->next_prev_tid));
    out_.push_back('\n');
  } else if (auto* k = r.get<Ksymbol>()) {
    fmt::format_to(it, " addr {:x} len {} type {} flags {:#x} name {}\n", k->addr, k->len, k->ksym_type,
                   k->flags, k->name);
  } else if (auto* g = r.get<Cgroup>()) {
    fmt::format_to(it, " cgroup: {} {}\n", g->id, g->path);
  } else if (auto* a = r.get<Aux>()) {
    fmt::format_to(it, " offset: {:#x} size: {:#x} flags: {:#x}\n", a->aux_offset, a->aux_size, a->flags);
  } else if (auto* b = r.get<BpfEvent>()) {
    fmt::format_to(it, " type {}, flags {}, id {}\n", b->type, b->flags, b->id);
  } else if (r.get<Namespaces>()) {
    namespaces_text(out_, r);
  } else {
    out_.push_back('\n');
  }
}

}  // namespace perfspec::script
