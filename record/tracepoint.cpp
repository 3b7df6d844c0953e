// SPDX-License-Identifier: MIT
// Tracepoint payloads with libtraceevent: it parses the format files and prints the events' print
// fmts (as perf script does: tep_print_event with TEP_PRINT_INFO); the fields are read out of the
// payload here, each checked against the payload's size before it is read.
#include "perfspec/tracepoint.hpp"

#include <event-parse.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <span>

#include <fmt/format.h>

#include "format_guard.hpp"
#include "perfspec/spec.hpp"
#include "spec/printable.hpp"

namespace perfspec::record {

namespace {

tep_event* ev(void* p) { return static_cast<tep_event*>(p); }

[[noreturn]] void bad_payload(std::uint64_t offset, const tep_event* e, const std::string& what) {
  throw DecodeError(offset, fmt::format("{}:{} payload: {}", e->system, e->name, what));
}

// Where a field's bytes are in the payload, checked: a fixed field, or the bytes a __data_loc /
// __rel_loc word points to.
struct Place {
  std::size_t at = 0, size = 0;
};

std::uint64_t read_number(const tep_event* e, const std::byte* p, std::size_t size) {
  std::uint64_t v = 0;
  bool big = tep_is_file_bigendian(e->tep);
  for (std::size_t i = 0; i < size; ++i)
    v = v << 8 | std::to_integer<std::uint64_t>(p[big ? i : size - 1 - i]);
  return v;
}

Place place(const tep_event* e, const tep_format_field* f, std::span<const std::byte> raw,
            std::uint64_t offset) {
  auto at = static_cast<std::size_t>(f->offset), size = static_cast<std::size_t>(f->size);
  if (f->offset < 0 || f->size < 0 || at > raw.size() || size > raw.size() - at)
    bad_payload(offset, e,
                fmt::format("field '{}' at [{}, +{}) runs past the payload ({} bytes)", f->name, f->offset,
                            f->size, raw.size()));
  if (!(f->flags & TEP_FIELD_IS_DYNAMIC)) return {at, size};
  // A dynamic field is a u32: the data's length in the high half, its offset in the low half (from the
  // start of the payload, or for __rel_loc from the end of this field).
  if (size != 4)
    bad_payload(offset, e,
                fmt::format("dynamic field '{}' is {} bytes (a data_loc word is 4)", f->name, size));
  std::uint64_t word = read_number(e, raw.data() + at, size);
  std::size_t data_at = static_cast<std::size_t>(word & 0xffff);
  std::size_t data_size = static_cast<std::size_t>(word >> 16);
  if (f->flags & TEP_FIELD_IS_RELATIVE) data_at += at + size;
  if (data_at > raw.size() || data_size > raw.size() - data_at)
    bad_payload(offset, e,
                fmt::format("dynamic field '{}' points at [{}, +{}), past the payload ({} bytes)", f->name,
                            data_at, data_size, raw.size()));
  return {data_at, data_size};
}

TracepointField field_value(const tep_event* e, const tep_format_field* f, std::span<const std::byte> raw,
                            std::uint64_t offset) {
  TracepointField out{f->name, f->type, std::uint64_t{0}};
  Place p = place(e, f, raw, offset);
  const std::byte* data = raw.data() + p.at;
  bool is_signed = (f->flags & TEP_FIELD_IS_SIGNED) != 0;
  bool array = (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) != 0;
  if (array && (f->flags & TEP_FIELD_IS_STRING)) {
    const void* nul = std::memchr(data, 0, p.size);
    std::size_t n = nul ? static_cast<std::size_t>(static_cast<const std::byte*>(nul) - data) : p.size;
    out.value = std::string(reinterpret_cast<const char*>(data), n);
    return out;
  }
  auto integer = [&](const std::byte* at, std::size_t size) -> std::uint64_t {
    std::uint64_t v = read_number(e, at, size);
    if (is_signed && size < 8 && (v >> (size * 8 - 1) & 1)) v |= ~std::uint64_t{0} << (size * 8);
    return v;
  };
  if (!array && (p.size == 1 || p.size == 2 || p.size == 4 || p.size == 8)) {
    std::uint64_t v = integer(data, p.size);
    if (is_signed)
      out.value = static_cast<std::int64_t>(v);
    else
      out.value = v;
    return out;
  }
  // An array (or a scalar of an odd size, kept as its bytes): elements of the element size the
  // format gives, else bytes.
  std::size_t el = f->elementsize;
  if (el != 1 && el != 2 && el != 4 && el != 8) el = 1;
  if (p.size % el != 0) el = 1;
  if (el == 1) is_signed = is_signed && array;
  if (is_signed) {
    std::vector<std::int64_t> v;
    for (std::size_t i = 0; i < p.size; i += el)
      v.push_back(static_cast<std::int64_t>(integer(data + i, el)));
    out.value = std::move(v);
  } else {
    std::vector<std::uint64_t> v;
    for (std::size_t i = 0; i < p.size; i += el) v.push_back(integer(data + i, el));
    out.value = std::move(v);
  }
  return out;
}

// perf's parse_saved_cmdline: lines of "%d %16s".
void register_comms(tep_handle* tep, std::string_view text) {
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; };
    std::size_t at = 0;
    while (at < line.size() && space(line[at])) ++at;
    int pid = 0;
    auto [p, ec] = std::from_chars(line.data() + at, line.data() + line.size(), pid);
    if (ec != std::errc{}) continue;
    at = static_cast<std::size_t>(p - line.data());
    while (at < line.size() && space(line[at])) ++at;
    std::size_t start = at;
    while (at < line.size() && at - start < 16 && !space(line[at]) && line[at] != '\0') ++at;
    if (at == start) continue;
    tep_register_comm(tep, std::string(line.substr(start, at - start)).c_str(), pid);
  }
}

// perf's parse_ftrace_printk: lines of "ADDR : FMT", the address in hex.
void register_printk(tep_handle* tep, std::string_view text) {
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon + 1 >= line.size()) continue;
    std::string_view addr = line.substr(0, colon);
    while (!addr.empty() && addr.front() == ' ') addr.remove_prefix(1);
    if (addr.starts_with("0x") || addr.starts_with("0X")) addr.remove_prefix(2);
    unsigned long long a = 0;
    std::from_chars(addr.data(), addr.data() + addr.size(), a, 16);
    // the format follows ": ", one space skipped
    std::string format(line.substr(colon + 2 <= line.size() ? colon + 2 : line.size()));
    // libtraceevent 1.7.1 takes off a '"' at each end and a "\n" before the last, and reads before its
    // copy of a format shorter than 3 bytes (after the first '"'): such a format ("\"\"", "\"a\"") is
    // left out. Only bprint events print from these formats, and kernel ones are longer.
    if (std::strlen(format.c_str() + (format.starts_with('"') ? 1 : 0)) < 3) continue;
    tep_register_print_string(tep, format.c_str(), a);
  }
}

// "NAME: " of a format file's "name: NAME" line, or "".
std::string event_name_of(std::string_view format) {
  if (format.substr(0, 5) != "name:") return {};
  std::string_view name = format.substr(5, format.find('\n') - 5);
  while (!name.empty() && (name.front() == ' ' || name.front() == '\t')) name.remove_prefix(1);
  if (name.empty()) return {};
  return spec::printable(name.substr(0, 64)) + ": ";
}

std::string_view text_of(std::span<const std::byte> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

}  // namespace

struct Tracepoints::Impl {
  tep_handle* tep = nullptr;
  std::map<std::uint64_t, Tracepoint> by_id;
  Impl() : tep(tep_alloc()) {
    if (!tep) throw std::bad_alloc();
    tep_set_local_bigendian(tep,
                            std::endian::native == std::endian::big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
    tep_set_file_bigendian(tep, std::endian::native == std::endian::big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
    tep_set_long_size(tep, static_cast<int>(sizeof(long)));
    tep_set_page_size(tep, static_cast<int>(::sysconf(_SC_PAGESIZE)));
    tep_set_flag(tep, TEP_NSEC_OUTPUT);
  }
  ~Impl() { tep_free(tep); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  struct Format {
    std::string_view system, text;
  };
  // One file, through the guard; the caller holds format_parse_mutex().
  const Tracepoint& parse(const Format& file) {
    std::string text = guard_format(file.text, file.system);
    std::string sys(file.system);
    tep_event* event = nullptr;
    enum tep_errno err = tep_parse_format(tep, &event, text.data(), text.size(), sys.c_str());
    // A print fmt libtraceevent cannot follow still leaves the event and its fields (printed as
    // "[FAILED TO PARSE]", as perf prints it); without the event, the file was no format file.
    if (!event) {
      char buf[128] = {};
      tep_strerror(tep, err, buf, sizeof buf);
      throw Error(ErrorKind::bad_value,
                  fmt::format("a {} format file libtraceevent cannot parse: {}", file.system, buf));
    }
    auto id = static_cast<std::uint64_t>(static_cast<std::uint32_t>(event->id));
    return by_id.try_emplace(id, Tracepoint(event)).first->second;
  }
  // The files in order, each first in a child process (format_guard.hpp): the first that cannot be
  // parsed, or that ends the child, throws Error, its index in `failed`. Returns the last one's
  // tracepoint.
  const Tracepoint& add_formats(std::span<const Format> files, std::size_t& failed) {
    std::lock_guard lock(format_parse_mutex());
    auto fault = parse_in_child(files.size(), [&](std::size_t i) { (void)parse(files[i]); });
    const Tracepoint* last = nullptr;
    for (failed = 0; failed < files.size(); ++failed) {
      if (fault && fault->index == failed)
        throw Error(ErrorKind::bad_value,
                    fmt::format("a {} format file libtraceevent cannot parse: {}parsing it ended a child "
                                "process that tried it first ({})",
                                files[failed].system, event_name_of(files[failed].text), fault->how));
      last = &parse(files[failed]);
    }
    return *last;
  }
};

Tracepoints::Tracepoints() : impl_(std::make_unique<Impl>()) {}
Tracepoints::Tracepoints(Tracepoints&&) noexcept = default;
Tracepoints& Tracepoints::operator=(Tracepoints&&) noexcept = default;
Tracepoints::~Tracepoints() = default;

const Tracepoint& Tracepoints::add_format(std::string_view system, std::string_view format) {
  const Impl::Format file{system, format};
  std::size_t failed = 0;
  return impl_->add_formats({&file, 1}, failed);
}

std::vector<const Tracepoint*> Tracepoints::add_formats(std::string_view system,
                                                        std::span<const std::string> formats) {
  std::vector<const Tracepoint*> out(formats.size(), nullptr);
  std::size_t next = 0;
  while (next < formats.size()) {
    std::vector<Impl::Format> files;
    for (std::size_t i = next; i < formats.size(); ++i) files.push_back({system, formats[i]});
    std::size_t failed = 0;
    try {
      (void)impl_->add_formats(files, failed);
      failed = files.size();
    } catch (const Error&) {  // files before `failed` were added; that one is left out
    }
    for (std::size_t i = 0; i < failed; ++i) {  // found again by the id of the file, parsed once
      std::string_view text = files[i].text;
      std::size_t at = text.find("\nID: ");
      if (at == std::string_view::npos) continue;
      out[next + i] = find(std::strtoull(std::string(text.substr(at + 5, 20)).c_str(), nullptr, 10));
    }
    next += failed + 1;
  }
  return out;
}

Tracepoints Tracepoints::from_tracing_data(std::span<const std::byte> bytes, std::uint64_t offset) {
  TracingFiles files = read_tracing_data(bytes, offset);
  Tracepoints t;
  tep_handle* tep = t.impl_->tep;
  tep_set_file_bigendian(tep, files.big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
  tep_set_long_size(tep, files.long_size);
  tep_set_page_size(tep, static_cast<int>(files.page_size));
  // The header page's commit field is a long of the traced kernel: its size wins, as for perf.
  std::string header(text_of(files.header_page));
  if (tep_parse_header_page(tep, header.data(), header.size(), files.long_size) == 0)
    tep_set_long_size(tep, tep_get_header_page_size(tep));
  auto where = [&](std::span<const std::byte> part) {
    return offset + static_cast<std::uint64_t>(part.data() - bytes.data());
  };
  std::vector<Impl::Format> formats;
  std::vector<std::span<const std::byte>> parts;
  auto add = [&](std::string_view system, std::span<const std::byte> file) {
    formats.push_back({system, text_of(file)});
    parts.push_back(file);
  };
  for (auto file : files.ftrace_formats) add("ftrace", file);
  for (const auto& s : files.systems)
    for (auto file : s.formats) add(s.name, file);
  std::size_t failed = 0;
  try {
    if (!formats.empty()) (void)t.impl_->add_formats(formats, failed);
  } catch (const DecodeError&) {
    throw;
  } catch (const Error& e) {
    throw DecodeError(where(parts[failed]),
                      fmt::format("tracing data at offset {:#x}: {}", where(parts[failed]), e.message()));
  }
  // kallsyms is skipped, as perf skips it (it resolves kernel addresses from its own symbols).
  register_printk(tep, text_of(files.printk_formats));
  register_comms(tep, text_of(files.saved_cmdlines));
  return t;
}

Tracepoints Tracepoints::from_tracefs(const spec::Machine& machine, const EventSet& set) {
  struct File {
    std::string_view system, name;
    std::string text;
  };
  std::vector<File> files;
  std::set<std::string_view> seen;
  for (const auto& e : set.events) {
    if (e.attr.type != 2 || e.tracepoint.empty() || !seen.insert(e.tracepoint).second) continue;
    std::size_t colon = e.tracepoint.find(':');
    std::string_view sys = std::string_view(e.tracepoint).substr(0, colon);
    std::string_view name =
        colon == std::string::npos ? std::string_view{} : std::string_view(e.tracepoint).substr(colon + 1);
    auto text = machine.tracepoint_format(sys, name);
    if (!text)
      throw Error(ErrorKind::unknown_name, fmt::format("no format file for tracepoint '{}' in {}",
                                                       e.tracepoint, machine.tracefs_events()));
    files.push_back({sys, name, std::move(*text)});
  }
  Tracepoints t;
  std::vector<Impl::Format> formats;
  for (const auto& f : files) formats.push_back({f.system, f.text});
  std::size_t failed = 0;
  try {
    if (!formats.empty()) (void)t.impl_->add_formats(formats, failed);
  } catch (const Error& err) {
    throw Error(err.kind(), fmt::format("{}/{}/{}/format: {}", machine.tracefs_events(), files[failed].system,
                                        files[failed].name, err.message()));
  }
  return t;
}

std::vector<std::byte> tracing_data_of(const spec::Machine& machine, const EventSet& set) {
  auto need = [&](std::string_view name) {
    auto text = machine.tracefs_file(name);
    if (!text)
      throw Error(
          ErrorKind::machine,
          fmt::format("no {} file beside {}: perf's tracing data cannot be written without it", name,
                      machine.tracefs_events().empty() ? "tracefs's events" : machine.tracefs_events()));
    return std::move(*text);
  };
  std::string header_page = need("header_page"), header_event = need("header_event");
  std::string printk = machine.tracefs_file("printk_formats").value_or("");
  std::string cmdlines = machine.tracefs_file("saved_cmdlines").value_or("");
  // The format files, read once each, grouped by system in the order the set first names them.
  std::vector<std::pair<std::string, std::vector<std::string>>> systems;
  std::set<std::string_view> seen;
  for (const auto& e : set.events) {
    if (e.attr.type != 2 || e.tracepoint.empty() || !seen.insert(e.tracepoint).second) continue;
    std::size_t colon = e.tracepoint.find(':');
    if (colon == std::string::npos) continue;
    std::string sys = e.tracepoint.substr(0, colon), name = e.tracepoint.substr(colon + 1);
    auto text = machine.tracepoint_format(sys, name);
    if (!text)
      throw Error(ErrorKind::unknown_name, fmt::format("no format file for tracepoint '{}' in {}",
                                                       e.tracepoint, machine.tracefs_events()));
    auto it = std::find_if(systems.begin(), systems.end(), [&](const auto& s) { return s.first == sys; });
    if (it == systems.end()) it = systems.insert(systems.end(), {sys, {}});
    it->second.push_back(std::move(*text));
  }
  auto bytes = [](const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); };
  TracingFiles t;
  t.version = "0.6";
  t.big_endian = std::endian::native == std::endian::big;
  t.long_size = static_cast<std::uint8_t>(sizeof(long));
  t.page_size = static_cast<std::uint32_t>(::sysconf(_SC_PAGESIZE));
  t.header_page = bytes(header_page);
  t.header_event = bytes(header_event);
  for (const auto& [sys, formats] : systems) {
    std::vector<std::span<const std::byte>> files;
    for (const auto& f : formats) files.push_back(bytes(f));
    if (sys == "ftrace")
      t.ftrace_formats = std::move(files);
    else
      t.systems.push_back({sys, std::move(files)});
  }
  t.printk_formats = bytes(printk);
  t.saved_cmdlines = bytes(cmdlines);
  return write_tracing_data(t);
}

const Tracepoint* Tracepoints::find(std::uint64_t id) const {
  auto it = impl_->by_id.find(id);
  return it == impl_->by_id.end() ? nullptr : &it->second;
}

const Tracepoint* Tracepoints::find(const Attr& attr) const {
  return attr.type == 2 ? find(attr.config) : nullptr;
}

std::size_t Tracepoints::size() const { return impl_->by_id.size(); }

std::uint64_t Tracepoint::id() const { return static_cast<std::uint32_t>(ev(event_)->id); }
std::string_view Tracepoint::system() const { return ev(event_)->system; }
std::string_view Tracepoint::name() const { return ev(event_)->name; }
std::string Tracepoint::full_name() const { return fmt::format("{}:{}", system(), name()); }

namespace {

// A member (name, type) of each field of `e`, in format order, the common fields first when asked.
std::vector<std::string_view> field_texts(const tep_event* e, bool common, char* tep_format_field::*member) {
  std::vector<std::string_view> out;
  if (common)
    for (const tep_format_field* f = e->format.common_fields; f; f = f->next) out.emplace_back(f->*member);
  for (const tep_format_field* f = e->format.fields; f; f = f->next) out.emplace_back(f->*member);
  return out;
}

}  // namespace

std::vector<std::string_view> Tracepoint::field_names(bool common) const {
  return field_texts(ev(event_), common, &tep_format_field::name);
}

std::vector<std::string_view> Tracepoint::field_types(bool common) const {
  return field_texts(ev(event_), common, &tep_format_field::type);
}

std::vector<TracepointField> Tracepoint::decode(std::span<const std::byte> raw, bool common,
                                                std::uint64_t offset) const {
  std::vector<TracepointField> out;
  const tep_event* e = ev(event_);
  if (common)
    for (const tep_format_field* f = e->format.common_fields; f; f = f->next)
      out.push_back(field_value(e, f, raw, offset));
  for (const tep_format_field* f = e->format.fields; f; f = f->next)
    out.push_back(field_value(e, f, raw, offset));
  return out;
}

std::string Tracepoint::print(std::span<const std::byte> raw, int cpu, std::uint64_t offset) const {
  tep_event* e = ev(event_);
  // libtraceevent prints the event the payload's common_type names (as for perf): that event's fields
  // are the ones to check.
  if (const tep_format_field* type = tep_find_common_field(e, "common_type")) {
    Place p = place(e, type, raw, offset);
    auto id = static_cast<int>(read_number(e, raw.data() + p.at, p.size));
    if (tep_event* other = tep_find_event(e->tep, id)) e = other;
  }
  for (const tep_format_field* f = e->format.common_fields; f; f = f->next) place(e, f, raw, offset);
  for (const tep_format_field* f = e->format.fields; f; f = f->next) place(e, f, raw, offset);
  if (auto fault = print_fault(e, raw)) bad_payload(offset, e, *fault);
  // An aligned copy with NULs after it: a string field without its terminator ends there.
  std::vector<std::uint64_t> copy(raw.size() / 8 + 2, 0);
  if (!raw.empty()) std::memcpy(copy.data(), raw.data(), raw.size());
  tep_record record{};
  record.cpu = cpu;
  record.size = static_cast<int>(raw.size());
  record.data = copy.data();
  trace_seq s;
  trace_seq_init(&s);
  tep_print_event(e->tep, &s, &record, "%s", TEP_PRINT_INFO);
  std::string out(s.buffer, s.len);
  trace_seq_destroy(&s);
  return out;
}

}  // namespace perfspec::record
