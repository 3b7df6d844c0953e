// SPDX-License-Identifier: MIT
// `perfspec script --format json`: a first line with the file's events, then one JSON object per
// record in file order, every decoded field by its name in the kernel's ABI (docs/output-formats.md).
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "perfspec/error.hpp"
#include "print/script_session.hpp"

namespace perfspec::script {
namespace {

using namespace perfspec::record;

std::string json_string(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

class JsonPrinter : Layout {
 public:
  JsonPrinter(Session& session, Buffer& out) : Layout(session, out) {}

  void run();

 private:
  void json_header();
  void json(const Record& r);
  bool json_task_record(const Record& r);
  void json_other_record(const Record& r);
  void json_sample(const Record& r, const Sample& s, const Attr& attr);
  void json_read(const ReadValues& read);
  void json_raw(const Record& rec, const Sample& s, const Attr& attr);
  void json_branches(const BranchStack& branches);
  void json_sample_id(const SampleId& s);
};

// In file order; in pipe mode each ATTR's event is checked as it comes (a file's ATTR records in its
// data section add none: the header's attrs are the file's).
void JsonPrinter::run() {
  json_header();
  Record r;
  while (file_.next(r)) {
    if (r.kind() == Type::header_attr && file_.pipe()) s_.pipe_attr(file_.events().size() - 1);
    if (const auto* s = r.get<Sample>(); s ? !s_.keeps(*s) : !s_.keeps_other(r))
      continue;  // --time, --cpu...
    json(r);
    b_.maybe_flush();
  }
}

// The first line of --format json: the schema, and the events the file describes up front.
void JsonPrinter::json_header() {
  auto it = std::back_inserter(out_);
  fmt::format_to(it, "{{\"schema\":\"{}\",\"pipe\":{},\"events\":[", script_schema, file_.pipe());
  for (std::size_t i = 0; i < file_.events().size(); ++i) {
    const auto& e = file_.events()[i];
    fmt::format_to(
        it, "{}{{\"name\":{},\"type\":{},\"config\":{},\"sample_type\":{},\"read_format\":{},\"ids\":[",
        i ? "," : "", json_string(e.name), e.attr.type, e.attr.config, e.attr.sample_type,
        e.attr.read_format);
    for (std::size_t k = 0; k < e.ids.size(); ++k) fmt::format_to(it, "{}{}", k ? "," : "", e.ids[k]);
    out_.append(std::string_view("]}"));
  }
  out_.append(std::string_view("]}\n"));
}

void JsonPrinter::json_sample(const Record& rec, const Sample& s, const Attr& attr) {
  auto it = std::back_inserter(out_);
  if (s.has(sample_identifier)) fmt::format_to(it, ",\"identifier\":{}", s.identifier);
  if (s.has(sample_ip)) fmt::format_to(it, ",\"ip\":{}", s.ip);
  if (s.has(sample_tid))
    fmt::format_to(it, ",\"pid\":{},\"tid\":{}", static_cast<std::int32_t>(s.pid),
                   static_cast<std::int32_t>(s.tid));
  if (s.has(sample_time)) fmt::format_to(it, ",\"time\":{}", s.time);
  if (s.has(sample_addr)) fmt::format_to(it, ",\"addr\":{}", s.addr);
  if (s.has(sample_id)) fmt::format_to(it, ",\"id\":{}", s.id);
  if (s.has(sample_stream_id)) fmt::format_to(it, ",\"stream_id\":{}", s.stream_id);
  if (s.has(sample_cpu)) fmt::format_to(it, ",\"cpu\":{}", s.cpu);
  if (s.has(sample_period)) fmt::format_to(it, ",\"period\":{}", s.period);
  if (s.has(sample_read)) json_read(s.read);
  if (s.has(sample_callchain)) {
    fmt::format_to(it, ",\"callchain\":[");
    bool first = true;
    for (std::uint64_t ip : s.callchain)
      fmt::format_to(it, "{}{}", std::exchange(first, false) ? "" : ",", ip);
    out_.push_back(']');
  }
  if (s.has(sample_raw)) json_raw(rec, s, attr);
  if (s.has(sample_branch_stack)) json_branches(s.branches);
  auto regs = [&](const char* name, const Registers& r) {
    fmt::format_to(it, ",\"{}\":{{\"abi\":{},\"mask\":{},\"values\":[", name, r.abi, r.mask);
    bool first = true;
    for (std::uint64_t v : r.values) fmt::format_to(it, "{}{}", std::exchange(first, false) ? "" : ",", v);
    fmt::format_to(it, "]}}");
  };
  if (s.has(sample_regs_user)) regs("regs_user", s.regs_user);
  if (s.has(sample_stack_user))
    fmt::format_to(it, ",\"stack_user\":{{\"size\":{},\"dyn_size\":{}}}", s.stack_user.data.size(),
                   s.stack_user.dyn_size);
  if (s.has(sample_weight)) fmt::format_to(it, ",\"weight\":{}", s.weight.full);
  if (s.has(sample_weight_struct))
    fmt::format_to(it, ",\"weight\":{{\"var1_dw\":{},\"var2_w\":{},\"var3_w\":{}}}", s.weight.var1_dw(),
                   s.weight.var2_w(), s.weight.var3_w());
  if (s.has(sample_data_src)) fmt::format_to(it, ",\"data_src\":{}", s.data_src);
  if (s.has(sample_transaction)) fmt::format_to(it, ",\"transaction\":{}", s.transaction);
  if (s.has(sample_regs_intr)) regs("regs_intr", s.regs_intr);
  if (s.has(sample_phys_addr)) fmt::format_to(it, ",\"phys_addr\":{}", s.phys_addr);
  if (s.has(sample_cgroup)) fmt::format_to(it, ",\"cgroup\":{}", s.cgroup);
  if (s.has(sample_data_page_size)) fmt::format_to(it, ",\"data_page_size\":{}", s.data_page_size);
  if (s.has(sample_code_page_size)) fmt::format_to(it, ",\"code_page_size\":{}", s.code_page_size);
  if (s.has(sample_aux)) fmt::format_to(it, ",\"aux_size\":{}", s.aux.size());
}

void JsonPrinter::json_read(const ReadValues& read) {
  auto it = std::back_inserter(out_);
  fmt::format_to(it, ",\"read\":{{");
  if (read.format & 1) fmt::format_to(it, "\"time_enabled\":{},", read.time_enabled);
  if (read.format & 2) fmt::format_to(it, "\"time_running\":{},", read.time_running);
  fmt::format_to(it, "\"values\":[");
  for (std::size_t i = 0; i < read.size(); ++i) {
    ReadValue v = read[i];
    fmt::format_to(it, "{}{{\"value\":{}", i ? "," : "", v.value);
    if (read.format & 4) fmt::format_to(it, ",\"id\":{}", v.id);
    if (read.format & 16) fmt::format_to(it, ",\"lost\":{}", v.lost);
    out_.push_back('}');
  }
  fmt::format_to(it, "]}}");
}

// The payload in hex, and its fields by the tracepoint's format when the file has one.
void JsonPrinter::json_raw(const Record& rec, const Sample& s, const Attr& attr) {
  auto it = std::back_inserter(out_);
  fmt::format_to(it, ",\"raw\":\"");
  for (std::byte b : s.raw) fmt::format_to(it, "{:02x}", std::to_integer<unsigned>(b));
  out_.push_back('"');
  const Tracepoint* tp = s_.tracepoint_of(attr);
  if (!tp) return;
  fmt::format_to(it, ",\"fields\":{{");
  bool first = true;
  for (const TracepointField& f : tp->decode(s.raw, false, rec.offset)) {
    fmt::format_to(it, "{}{}:", std::exchange(first, false) ? "" : ",", json_string(f.name));
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>) {
            out_.append(json_string(v));
          } else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint64_t>) {
            fmt::format_to(it, "{}", v);
          } else {
            fmt::format_to(it, "[{}]", fmt::join(v, ","));
          }
        },
        f.value);
  }
  out_.push_back('}');
}

void JsonPrinter::json_branches(const BranchStack& branches) {
  auto it = std::back_inserter(out_);
  fmt::format_to(it, ",\"branch_stack\":{{");
  if (branches.hw_idx) fmt::format_to(it, "\"hw_idx\":{},", *branches.hw_idx);
  fmt::format_to(it, "\"entries\":[");
  for (std::size_t i = 0; i < branches.size(); ++i) {
    Branch b = branches[i];
    fmt::format_to(it, "{}{{\"from\":{},\"to\":{},\"flags\":{}", i ? "," : "", b.from, b.to, b.flags);
    if (!branches.counters.empty()) fmt::format_to(it, ",\"counters\":{}", branches.counters[i]);
    out_.push_back('}');
  }
  fmt::format_to(it, "]}}");
}

void JsonPrinter::json(const Record& r) {
  auto it = std::back_inserter(out_);
  auto name = type_name(r.type);
  fmt::format_to(it, "{{\"offset\":{},\"type\":\"{}\",\"misc\":{},\"size\":{}", r.offset,
                 name.empty() ? fmt::format("{}", r.type) : std::string(name), r.misc, r.size);
  if (r.type < user_type_start) {
    fmt::format_to(it, ",\"cpumode\":\"{}\"", cpumode_letter(r.misc));
    if (r.attr != Record::npos)
      fmt::format_to(it, ",\"event\":{}", json_string(file_.event_name(r.attr)));
    else
      fmt::format_to(it, ",\"event\":null");
  }
  if (!json_task_record(r)) json_other_record(r);
  if (r.sample_id.fields && !r.get<Sample>()) json_sample_id(r.sample_id);
  out_.append(std::string_view("}\n"));
}

// The records of samples and of tasks: what they say, after the record's header.
bool JsonPrinter::json_task_record(const Record& r) {
  auto it = std::back_inserter(out_);
  if (auto* s = r.get<Sample>()) {
    json_sample(r, *s, file_.formats().attr(r.attr));
  } else if (auto* m = r.get<Mmap>()) {
    fmt::format_to(it, ",\"pid\":{},\"tid\":{},\"addr\":{},\"len\":{},\"pgoff\":{},\"filename\":{}",
                   static_cast<std::int32_t>(m->pid), static_cast<std::int32_t>(m->tid), m->addr, m->len,
                   m->pgoff, json_string(m->filename));
  } else if (auto* m2 = r.get<Mmap2>()) {
    fmt::format_to(it, ",\"pid\":{},\"tid\":{},\"addr\":{},\"len\":{},\"pgoff\":{}",
                   static_cast<std::int32_t>(m2->pid), static_cast<std::int32_t>(m2->tid), m2->addr, m2->len,
                   m2->pgoff);
    if (r.misc & misc_mmap_build_id) {
      fmt::format_to(it, ",\"build_id\":\"");
      for (std::byte b : m2->build_id) fmt::format_to(it, "{:02x}", std::to_integer<unsigned>(b));
      out_.push_back('"');
    } else {
      fmt::format_to(it, ",\"maj\":{},\"min\":{},\"ino\":{},\"ino_generation\":{}", m2->maj, m2->min, m2->ino,
                     m2->ino_generation);
    }
    fmt::format_to(it, ",\"prot\":{},\"flags\":{},\"filename\":{}", m2->prot, m2->flags,
                   json_string(m2->filename));
  } else if (auto* c = r.get<Comm>()) {
    fmt::format_to(it, ",\"pid\":{},\"tid\":{},\"comm\":{},\"exec\":{}", static_cast<std::int32_t>(c->pid),
                   static_cast<std::int32_t>(c->tid), json_string(c->comm), c->exec);
  } else if (auto* t = r.get<Task>()) {
    fmt::format_to(it, ",\"pid\":{},\"ppid\":{},\"tid\":{},\"ptid\":{},\"time\":{}",
                   static_cast<std::int32_t>(t->pid), static_cast<std::int32_t>(t->ppid),
                   static_cast<std::int32_t>(t->tid), static_cast<std::int32_t>(t->ptid), t->time);
  } else if (auto* l = r.get<Lost>()) {
    fmt::format_to(it, ",\"id\":{},\"lost\":{}", l->id, l->lost);
  } else if (auto* ls = r.get<LostSamples>()) {
    fmt::format_to(it, ",\"lost\":{}", ls->lost);
  } else if (auto* th = r.get<Throttle>()) {
    fmt::format_to(it, ",\"time\":{},\"id\":{},\"stream_id\":{}", th->time, th->id, th->stream_id);
  } else if (auto* rd = r.get<Read>()) {
    fmt::format_to(it, ",\"pid\":{},\"tid\":{},\"values\":[", static_cast<std::int32_t>(rd->pid),
                   static_cast<std::int32_t>(rd->tid));
    for (std::size_t i = 0; i < rd->values.size(); ++i)
      fmt::format_to(it, "{}{{\"value\":{},\"id\":{}}}", i ? "," : "", rd->values[i].value, rd->values[i].id);
    out_.push_back(']');
  } else if (auto* sw = r.get<Switch>()) {
    fmt::format_to(it, ",\"out\":{},\"preempt\":{}", sw->out, sw->preempt);
    if (r.kind() == Type::switch_cpu_wide)
      fmt::format_to(it, ",\"next_prev_pid\":{},\"next_prev_tid\":{}",
                     static_cast<std::int32_t>(sw->next_prev_pid),
                     static_cast<std::int32_t>(sw->next_prev_tid));
  } else {
    return false;
  }
  return true;
}

// The other records: side-band of the kernel's and of perf's own.
void JsonPrinter::json_other_record(const Record& r) {
  auto it = std::back_inserter(out_);
  if (auto* a = r.get<Aux>()) {
    fmt::format_to(it, ",\"aux_offset\":{},\"aux_size\":{},\"flags\":{}", a->aux_offset, a->aux_size,
                   a->flags);
  } else if (auto* is = r.get<ItraceStart>()) {
    fmt::format_to(it, ",\"pid\":{},\"tid\":{}", static_cast<std::int32_t>(is->pid),
                   static_cast<std::int32_t>(is->tid));
  } else if (auto* ns = r.get<Namespaces>()) {
    fmt::format_to(it, ",\"pid\":{},\"tid\":{},\"namespaces\":[", static_cast<std::int32_t>(ns->pid),
                   static_cast<std::int32_t>(ns->tid));
    for (std::size_t i = 0; i < ns->size(); ++i)
      fmt::format_to(it, "{}{{\"dev\":{},\"inode\":{}}}", i ? "," : "", ns->words[2 * i],
                     ns->words[2 * i + 1]);
    out_.push_back(']');
  } else if (auto* k = r.get<Ksymbol>()) {
    fmt::format_to(it, ",\"addr\":{},\"len\":{},\"ksym_type\":{},\"flags\":{},\"name\":{}", k->addr, k->len,
                   k->ksym_type, k->flags, json_string(k->name));
  } else if (auto* b = r.get<BpfEvent>()) {
    fmt::format_to(it, ",\"bpf_type\":{},\"flags\":{},\"id\":{},\"tag\":\"", b->type, b->flags, b->id);
    for (auto v : b->tag) fmt::format_to(it, "{:02x}", v);
    out_.push_back('"');
  } else if (auto* g = r.get<Cgroup>()) {
    fmt::format_to(it, ",\"id\":{},\"path\":{}", g->id, json_string(g->path));
  } else if (auto* tp = r.get<TextPoke>()) {
    fmt::format_to(it, ",\"addr\":{},\"old_len\":{},\"new_len\":{}", tp->addr, tp->old_bytes.size(),
                   tp->new_bytes.size());
  } else if (auto* hw = r.get<AuxOutputHwId>()) {
    fmt::format_to(it, ",\"hw_id\":{}", hw->hw_id);
  } else if (auto* x = r.get<IdIndex>()) {
    fmt::format_to(it, ",\"entries\":[");
    for (std::size_t i = 0; i < x->size(); ++i) {
      IdIndexEntry e = (*x)[i];
      fmt::format_to(it, "{}{{\"id\":{},\"idx\":{},\"cpu\":{},\"tid\":{}}}", i ? "," : "", e.id, e.idx,
                     static_cast<std::int64_t>(e.cpu), static_cast<std::int64_t>(e.tid));
    }
    out_.push_back(']');
  } else if (auto* tc = r.get<TimeConv>()) {
    fmt::format_to(it, ",\"time_shift\":{},\"time_mult\":{},\"time_zero\":{}", tc->time_shift, tc->time_mult,
                   tc->time_zero);
  } else if (auto* tm = r.get<ThreadMap>()) {
    fmt::format_to(it, ",\"threads\":[");
    for (std::size_t i = 0; i < tm->nr; ++i) {
      ThreadMapEntry e = (*tm)[i];
      fmt::format_to(it, "{}{{\"pid\":{},\"comm\":{}}}", i ? "," : "", static_cast<std::int64_t>(e.pid),
                     json_string(e.comm));
    }
    out_.push_back(']');
  } else if (auto* f = r.get<HeaderFeature>()) {
    fmt::format_to(it, ",\"feature\":{},\"data_size\":{}", f->feature, f->data.size());
  } else if (auto* ha = r.get<HeaderAttr>()) {
    fmt::format_to(it, ",\"attr_type\":{},\"config\":{},\"ids\":[", ha->attr.type, ha->attr.config);
    bool first = true;
    for (std::uint64_t id : ha->ids) fmt::format_to(it, "{}{}", std::exchange(first, false) ? "" : ",", id);
    out_.push_back(']');
  }
}

// A record's sample_id (sample_id_all), for a record that is not a sample.
void JsonPrinter::json_sample_id(const SampleId& s) {
  auto it = std::back_inserter(out_);
  fmt::format_to(it, ",\"sample_id\":{{");
  bool first = true;
  auto sep = [&] { return std::exchange(first, false) ? "" : ","; };
  if (s.has(sample_tid))
    fmt::format_to(it, "{}\"pid\":{},\"tid\":{}", sep(), static_cast<std::int32_t>(s.pid),
                   static_cast<std::int32_t>(s.tid));
  if (s.has(sample_time)) fmt::format_to(it, "{}\"time\":{}", sep(), s.time);
  if (s.has(sample_id) || s.has(sample_identifier)) fmt::format_to(it, "{}\"id\":{}", sep(), s.id);
  if (s.has(sample_stream_id)) fmt::format_to(it, "{}\"stream_id\":{}", sep(), s.stream_id);
  if (s.has(sample_cpu)) fmt::format_to(it, "{}\"cpu\":{}", sep(), s.cpu);
  out_.push_back('}');
}

}  // namespace

void print_json(Session& session, Buffer& out) { JsonPrinter(session, out).run(); }

}  // namespace perfspec::script
