// SPDX-License-Identifier: MIT
// The reader of `perf stat -vv` text for `perfspec decode`: the `perf_event_attr:` blocks that perf's
// perf_event_attr__fprintf() prints (tools/perf/util/perf_event_attr_fprintf.c), in the forms of
// perf 6.1 (plain numbers; type and config only when they are not 0) and of perf 6.12 (type and
// config always, with an annotation: `type 1 (software)`, `config 0x2 (PERF_COUNT_SW_PAGE_FAULTS)`),
// and of `perfspec resolve --format text`. Whatever it cannot read is an error naming the line and
// column, never a field left at 0.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "perfspec/decode.hpp"
#include "perfspec/error.hpp"
#include "perfspec/resolve.hpp"
#include "spec/abi.hpp"
#include "spec/perf_enum_names.hpp"

namespace perfspec {

namespace {

struct Named {
  std::string_view name;
  std::uint64_t value;
};

// The PMUs the kernel registers with a fixed type (kernel/events/core.c: perf_swevent, perf_tracepoint,
// and hw_breakpoint.c's perf_breakpoint): perf names them by their sysfs names.
constexpr Named fixed_pmus[] = {{"software", 1}, {"tracepoint", 2}, {"breakpoint", 5}};
template <std::size_t N> std::optional<std::uint64_t> lookup(const Named (&table)[N], std::string_view name) {
  for (const auto& n : table)
    if (n.name == name) return n.value;
  return std::nullopt;
}

// The labels perf prints for union members (PRINT_ATTRn); perfspec prints the same.
struct Label {
  std::string_view text;
  std::string_view field;
};
constexpr Label union_labels[] = {{"{ sample_period, sample_freq }", "sample_period"},
                                  {"{ wakeup_events, wakeup_watermark }", "wakeup_events"},
                                  {"{ bp_addr, config1 }", "config1"},
                                  {"{ bp_len, config2 }", "config2"}};

bool is_space(char c) { return c == ' ' || c == '\t'; }
bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// A PMU name as sysfs holds it, an event name of sysfs or a table, or a tracepoint's sys:name: no
// spaces, and none of the characters that separate the parts of an event string.
bool plain_name(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ':' ||
          c == '@' || c == '+'))
      return false;
  return true;
}

// At most 100 bytes of the input in a message (perf's longest annotation, a hw cache triple, is 93):
// a line can be megabytes long.
std::string cut(std::string_view s) {
  return s.size() <= 100 ? std::string(s) : std::string(s.substr(0, 100)) + "...";
}

// An annotation, where it stands and what the block says next to it.
struct Note {
  std::string_view text;  // between the parentheses
  std::size_t line = 0, column = 0;
};

class Reader {
 public:
  Reader(std::string_view text, const spec::Machine* machine) : text_(text), machine_(machine) {}
  std::vector<Attr> run();

 private:
  std::string_view text_;
  const spec::Machine* machine_;
  std::vector<Attr> out_;
  // the block being read
  bool in_block_ = false;
  std::size_t block_line_ = 0, fields_ = 0;
  std::vector<std::size_t> seen_on_ = std::vector<std::size_t>(attr_fields().size());  // line of each field
  std::optional<Note> type_note_, config_note_;

  [[noreturn]] void fail(ErrorKind kind, std::size_t line, std::size_t column, const std::string& what,
                         std::string help = {}) const {
    throw Error(kind, fmt::format("stdin:{}:{}: {}", line, column, what), std::move(help));
  }
  void open_block(std::size_t line);
  void close_block();
  void field(std::string_view l, std::size_t line);
  std::uint64_t number(std::string_view v, const AttrField& f, std::string_view label, std::size_t line,
                       std::size_t column, std::size_t& used) const;
  std::uint64_t bits(std::string_view v, const AttrField& f, std::string_view label, std::size_t line,
                     std::size_t column) const;
  void check_type(const Note& n, std::uint32_t type) const;
  void check_config(const Note& n, std::uint32_t type, std::uint64_t config) const;
  void check_cache_config(const Note& n, std::uint32_t type, std::uint64_t config) const;
  void check_enum_config(const Note& n, std::uint32_t type, std::uint64_t config) const;
  void check_tracepoint_config(const Note& n, std::uint64_t config) const;
  void check_alias_config(const Note& n, std::uint32_t type, std::uint64_t config) const;
  [[noreturn]] void config_mismatch(const Note& n, std::uint64_t config, std::string_view what) const;
};

std::vector<Attr> Reader::run() {
  std::size_t line_no = 0;
  for (std::size_t at = 0; at < text_.size();) {
    std::size_t nl = text_.find('\n', at);
    std::string_view line = text_.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
    at = nl == std::string_view::npos ? text_.size() : nl + 1;
    ++line_no;
    std::string_view l = line;
    while (!l.empty() && (is_space(l.back()) || l.back() == '\r')) l.remove_suffix(1);
    if (l == "perf_event_attr:") {
      if (in_block_) close_block();
      open_block(line_no);
      continue;
    }
    if (!in_block_) continue;  // perf's other output: "Using CPUID ...", counts, warnings
    std::string_view body = l;
    while (!body.empty() && is_space(body.front())) body.remove_prefix(1);
    if (body.empty()) continue;
    if (body.find_first_not_of('-') == std::string_view::npos && body.size() >= 3) {
      close_block();  // the rule perf prints after the block
      continue;
    }
    field(l, line_no);
  }
  if (in_block_) close_block();
  return std::move(out_);
}

void Reader::open_block(std::size_t line) {
  in_block_ = true;
  block_line_ = line;
  fields_ = 0;
  std::fill(seen_on_.begin(), seen_on_.end(), 0);
  type_note_.reset();
  config_note_.reset();
  out_.emplace_back();
}

void Reader::close_block() {
  in_block_ = false;
  if (fields_ == 0) fail(ErrorKind::syntax, block_line_, 1, "this 'perf_event_attr:' block has no fields");
  const Attr& a = out_.back();
  if (type_note_) check_type(*type_note_, a.type);
  if (config_note_) check_config(*config_note_, a.type, a.config);
}

// "  exclude_kernel                   1", "  { bp_addr, config1 }             0x1000",
// "  type                             4 (cpu)", "  sample_type                      IP|TID"
void Reader::field(std::string_view l, std::size_t line) {
  std::size_t pos = 0;
  while (pos < l.size() && is_space(l[pos])) ++pos;
  const std::size_t key_at = pos;
  std::string_view label, name;
  if (l[pos] == '{') {
    std::size_t close = l.find('}', pos);
    label = l.substr(pos, close == std::string_view::npos ? std::string_view::npos : close + 1 - pos);
    for (const auto& u : union_labels)
      if (u.text == label) name = u.field;
    if (name.empty())
      fail(ErrorKind::syntax, line, key_at + 1,
           fmt::format("'{}' is not one of the union labels perf prints ({}, {}, {}, {})", cut(label),
                       union_labels[0].text, union_labels[1].text, union_labels[2].text,
                       union_labels[3].text));
  } else {
    std::size_t end = pos;
    while (end < l.size() && (std::isalnum(static_cast<unsigned char>(l[end])) || l[end] == '_')) ++end;
    if (end == pos)
      fail(ErrorKind::syntax, line, key_at + 1,
           fmt::format("expected an attr field name, found '{}'", l.substr(pos, 20)));
    label = name = l.substr(pos, end - pos);
  }
  pos = key_at + label.size();
  const AttrField* f = find_attr_field(name);
  if (!f)
    fail(ErrorKind::unknown_name, line, key_at + 1,
         fmt::format("'{}' is not a perf_event_attr field perfspec knows (perf 6.1 and 6.12 print none other "
                     "than perfspec's; a newer perf's field cannot be left out silently)",
                     cut(label)));
  const auto index = static_cast<std::size_t>(f - attr_fields().data());
  if (seen_on_[index])
    fail(ErrorKind::syntax, line, key_at + 1,
         label == f->name
             ? fmt::format("'{}' is given twice in this block (first on line {})", label, seen_on_[index])
             : fmt::format("'{}' ({}) is given twice in this block (first on line {})", label, f->name,
                           seen_on_[index]));
  seen_on_[index] = line;
  ++fields_;
  if (pos < l.size() && !is_space(l[pos]))
    fail(ErrorKind::syntax, line, pos + 1,
         fmt::format("expected a space after '{}', found '{}'", label, l.substr(pos, 1)));
  while (pos < l.size() && is_space(l[pos])) ++pos;
  if (pos == l.size()) fail(ErrorKind::syntax, line, pos + 1, fmt::format("'{}' has no value", label));
  std::string_view value = l.substr(pos);
  Attr& a = out_.back();
  if (!attr_bit_names(f->name).empty()) {
    f->set(a, bits(value, *f, label, line, pos + 1));
    return;
  }
  std::size_t used = 0;
  std::uint64_t v = number(value, *f, label, line, pos + 1, used);
  std::string_view rest = value.substr(used);
  if (!rest.empty()) {
    std::size_t gap = 0;
    while (gap < rest.size() && is_space(rest[gap])) ++gap;
    const std::size_t at = pos + used + gap + 1;  // column of what follows the number
    const bool annotated = f->name == "type" || f->name == "config";
    if (gap == 0 || !annotated || rest[gap] != '(')
      fail(ErrorKind::syntax, line, at,
           fmt::format("unexpected '{}' after the value of '{}'", cut(rest.substr(gap)), label),
           annotated ? "perf 6.12 annotates a value as 'NUMBER (NAME)'" : "");
    std::string_view note = rest.substr(gap + 1);
    if (note.empty() || note.back() != ')')
      fail(ErrorKind::syntax, line, at,
           fmt::format("the annotation '{}' of '{}' has no closing ')'", cut(rest.substr(gap)), label));
    note.remove_suffix(1);
    if (note.empty() || is_space(note.front()) || is_space(note.back()))
      fail(ErrorKind::syntax, line, at,
           fmt::format("'{}' is not an annotation perf prints", cut(rest.substr(gap))));
    (f->name == "type" ? type_note_ : config_note_) = Note{note, line, at};
  }
  f->set(a, v);
}

// A decimal or 0x-hex number at the start of `v` (clockid also negative), that fits the field;
// `used` is how many characters it took.
std::uint64_t Reader::number(std::string_view v, const AttrField& f, std::string_view label, std::size_t line,
                             std::size_t column, std::size_t& used) const {
  bool negative = f.is_signed && v.starts_with('-');
  std::size_t at = negative ? 1 : 0;
  int base = 10;
  if (v.substr(at).starts_with("0x")) {
    base = 16;
    at += 2;
  }
  std::size_t end = at;
  while (end < v.size() && (base == 16 ? is_hex(v[end]) : (v[end] >= '0' && v[end] <= '9'))) ++end;
  std::size_t token = end;  // the whole word, for the message
  while (token < v.size() && !is_space(v[token])) ++token;
  if (end == at || token != end)
    fail(ErrorKind::syntax, line, column,
         fmt::format("'{}' is not a number (the value of '{}': decimal, or hex with 0x{})",
                     cut(v.substr(0, token)), label, f.is_signed ? ", or negative" : ""));
  std::uint64_t n = 0;
  auto [p, ec] = std::from_chars(v.data() + at, v.data() + end, n, base);
  if (ec != std::errc{} || p != v.data() + end)
    fail(ErrorKind::bad_value, line, column,
         fmt::format("'{}' does not fit in 64 bits (the value of '{}')", cut(v.substr(0, end)), label));
  used = end;
  if (f.is_signed) {  // clockid: a __s32 perf prints with %PRId64
    const std::uint64_t limit =
        negative ? std::uint64_t{1} << (f.bits - 1) : (std::uint64_t{1} << f.bits) - 1;
    if (n > limit || (!negative && base == 10 && n >= std::uint64_t{1} << (f.bits - 1)))
      fail(ErrorKind::bad_value, line, column,
           fmt::format("'{}' does not fit '{}' (a signed {}-bit field)", cut(v.substr(0, end)), label,
                       f.bits));
    return negative ? static_cast<std::uint64_t>(-static_cast<std::int64_t>(n)) : n;
  }
  if (f.bits < 64 && (n >> f.bits) != 0)
    fail(ErrorKind::bad_value, line, column,
         fmt::format("{} does not fit '{}' (a {}-bit field)", cut(v.substr(0, end)), label, f.bits));
  return n;
}

// sample_type, read_format, branch_sample_type: a number, or names joined with '|' as perf prints
// them (in perf's order, which is not always the bits'), or perfspec's: bits without a name as hex.
std::uint64_t Reader::bits(std::string_view v, const AttrField& f, std::string_view label, std::size_t line,
                           std::size_t column) const {
  if (v.front() >= '0' && v.front() <= '9') {
    std::size_t used = 0;
    std::uint64_t n = number(v, f, label, line, column, used);
    if (used != v.size())
      fail(ErrorKind::syntax, line, column + used,
           fmt::format("unexpected '{}' after the value of '{}'", cut(v.substr(used)), label));
    return n;
  }
  const auto names = attr_bit_names(f.name);
  std::uint64_t word = 0;
  std::size_t at = 0;
  while (true) {
    std::size_t bar = v.find('|', at);
    std::string_view part = v.substr(at, bar == std::string_view::npos ? std::string_view::npos : bar - at);
    std::uint64_t bit = 0;
    if (part.starts_with("0x")) {
      std::size_t used = 0;
      bit = number(part, f, label, line, column + at, used);
      if (used != part.size())
        fail(ErrorKind::syntax, line, column + at + used,
             fmt::format("unexpected '{}' in the value of '{}'", cut(part.substr(used)), label));
    } else {
      auto it = std::find(names.begin(), names.end(), part);
      if (it == names.end())
        fail(ErrorKind::syntax, line, column + at,
             part.empty() ? fmt::format("an empty name in '{}' ('{}')", cut(v), label)
                          : fmt::format("'{}' is not a bit of '{}' (its bits: {})", cut(part), label,
                                        fmt::join(names, ", ")));
      bit = std::uint64_t{1} << (it - names.begin());
    }
    if (word & bit)
      fail(ErrorKind::syntax, line, column + at,
           fmt::format("'{}' is named twice in '{}'", cut(part), label));
    word |= bit;
    if (bar == std::string_view::npos) break;
    at = bar + 1;
  }
  return word;
}

// `type N (NAME)`: an enum name of perf's when no PMU of perf's machine has the type, else the PMU's
// name. The enum names and the three PMUs of fixed type are checked here; another PMU's name against
// the machine decode runs for, when it has a PMU of that name or type.
void Reader::check_type(const Note& n, std::uint32_t type) const {
  const std::string help =
      "the annotation and the number disagree: was the text edited? A text made on another machine "
      "is decoded with --sysfs naming that machine's sysfs (or a 'perfspec snapshot' of it)";
  std::optional<std::uint64_t> want;
  if (n.text.starts_with("PERF_TYPE_")) {
    want = spec::perf_value(spec::perf_type_names, n.text);
    if (!want)
      fail(ErrorKind::syntax, n.line, n.column, fmt::format("'{}' is not a perf_type_id", cut(n.text)));
  } else if (!plain_name(n.text)) {
    fail(ErrorKind::syntax, n.line, n.column, fmt::format("'{}' is not a PMU name", cut(n.text)));
  } else {
    want = lookup(fixed_pmus, n.text);
  }
  if (want && *want != type)
    fail(ErrorKind::bad_value, n.line, n.column,
         fmt::format("type {} does not match its annotation '{}' (type {})", type, cut(n.text), *want), help);
  if (want) return;
  // No PMU has type 0 or 3, and those of types 1, 2 and 5 have the names above: only another type
  // (PERF_TYPE_RAW's 4 or a dynamic one) can be annotated with another PMU's name.
  if (type <= spec::type_breakpoint && type != spec::type_raw)
    fail(ErrorKind::bad_value, n.line, n.column,
         fmt::format("type {} is not a PMU '{}' can have: perf annotates it '{}'", type, cut(n.text),
                     spec::perf_type_names[type]),
         help);
  if (!machine_) return;
  const spec::Pmu* by_type = machine_->pmu_of_type(type);
  const spec::Pmu* by_name = machine_->pmu(n.text);
  if (by_type && by_type->name() != n.text)
    fail(ErrorKind::bad_value, n.line, n.column,
         fmt::format("type {} is pmu '{}' on this machine, but the text names '{}'", type, by_type->name(),
                     cut(n.text)),
         help);
  if (!by_type && by_name)
    fail(ErrorKind::bad_value, n.line, n.column,
         fmt::format("pmu '{}' has type {} on this machine, not {}", cut(n.text), by_name->type(), type),
         help);
}

constexpr std::string_view config_help =
    "the annotation and the number disagree: was the text edited? A text made on another machine "
    "is decoded with --sysfs naming that machine's sysfs (or a 'perfspec snapshot' of it)";

void Reader::config_mismatch(const Note& n, std::uint64_t config, std::string_view what) const {
  fail(ErrorKind::bad_value, n.line, n.column,
       fmt::format("config {:#x} does not match its annotation '{}' ({})", config, cut(n.text), what),
       std::string(config_help));
}

// `config X (NAME)`: perf names the config by the first alias of the type's PMU that encodes to it,
// else by the enums of the generic types, else a tracepoint by its id.
void Reader::check_config(const Note& n, std::uint32_t type, std::uint64_t config) const {
  if (n.text.find(" | ") != std::string_view::npos) return check_cache_config(n, type, config);
  if (n.text.starts_with("PERF_COUNT_HW_") || n.text.starts_with("PERF_COUNT_SW_"))
    return check_enum_config(n, type, config);
  if (n.text.starts_with("PERF_"))
    fail(ErrorKind::syntax, n.line, n.column,
         fmt::format("'{}' is not a name perf gives a config", cut(n.text)));
  if (!plain_name(n.text))
    fail(ErrorKind::syntax, n.line, n.column, fmt::format("'{}' is not an event name", cut(n.text)));
  // No PMU has type 0, 1, 3 or 5 events of its own (the software and breakpoint PMUs have no events/
  // folder): perf names their configs by the enums or not at all.
  if (type == spec::type_hardware || type == spec::type_software || type == spec::type_hw_cache ||
      type == spec::type_breakpoint)
    fail(ErrorKind::bad_value, n.line, n.column,
         fmt::format("perf names no config of type {} '{}': the annotation does not go with the type", type,
                     cut(n.text)),
         std::string(config_help));
  if (type == spec::type_tracepoint) return check_tracepoint_config(n, config);
  check_alias_config(n, type, config);
}

// "RESULT | OP | CACHE"
void Reader::check_cache_config(const Note& n, std::uint32_t type, std::uint64_t config) const {
  std::vector<std::string_view> part;
  for (std::size_t at = 0;;) {
    std::size_t bar = n.text.find(" | ", at);
    part.push_back(n.text.substr(at, bar == std::string_view::npos ? std::string_view::npos : bar - at));
    if (bar == std::string_view::npos) break;
    at = bar + 3;
  }
  part.resize(std::max<std::size_t>(part.size(), 3));
  auto result = spec::perf_value(spec::perf_cache_result_names, part[0]);
  auto op = spec::perf_value(spec::perf_cache_op_names, part[1]);
  auto cache = spec::perf_value(spec::perf_cache_names, part[2]);
  if (!result || !op || !cache || part.size() != 3)
    fail(ErrorKind::syntax, n.line, n.column,
         fmt::format("'{}' is not a hardware cache event as perf names it (RESULT | OP | CACHE)",
                     cut(n.text)));
  if (type != spec::type_hw_cache)
    fail(ErrorKind::bad_value, n.line, n.column,
         fmt::format("the annotation '{}' names a hardware cache event, but type is {}, not 3", cut(n.text),
                     type),
         std::string(config_help));
  // perf names the low three bytes; the extended type above them (a hybrid machine's PMU) is not named
  const std::uint64_t want = *cache | *op << 8 | *result << 16;
  if ((config & 0xffffff) != want) config_mismatch(n, config, fmt::format("{:#x} in the low 24 bits", want));
}

// PERF_COUNT_HW_* and PERF_COUNT_SW_*
void Reader::check_enum_config(const Note& n, std::uint32_t type, std::uint64_t config) const {
  const bool hw = n.text.starts_with("PERF_COUNT_HW_");
  auto want =
      hw ? spec::perf_value(spec::perf_hw_names, n.text) : spec::perf_value(spec::perf_sw_names, n.text);
  if (!want)
    fail(ErrorKind::syntax, n.line, n.column,
         fmt::format("'{}' is not a {} perf names", cut(n.text), hw ? "perf_hw_id" : "perf_sw_ids"));
  const std::uint32_t want_type = hw ? spec::type_hardware : spec::type_software;
  if (type != want_type)
    fail(ErrorKind::bad_value, n.line, n.column,
         fmt::format("the annotation '{}' names a {} event, but type is {}, not {}", cut(n.text),
                     hw ? "hardware" : "software", type, want_type),
         std::string(config_help));
  if (config != *want) config_mismatch(n, config, fmt::format("{:#x}", *want));
}

// SYSTEM:EVENT, checked against this machine's tracefs where there is a machine.
void Reader::check_tracepoint_config(const Note& n, std::uint64_t config) const {
  std::size_t colon = n.text.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == n.text.size() ||
      n.text.find(':', colon + 1) != std::string_view::npos)
    fail(ErrorKind::syntax, n.line, n.column,
         fmt::format("'{}' is not a tracepoint name (perf prints SYSTEM:EVENT)", cut(n.text)));
  if (!machine_) return;
  auto id = machine_->tracepoint_id(n.text.substr(0, colon), n.text.substr(colon + 1));
  if (id && *id != config)
    fail(ErrorKind::bad_value, n.line, n.column,
         fmt::format("config {:#x} is not tracepoint '{}', whose id is {:#x} on this machine", config,
                     cut(n.text), *id),
         std::string(config_help));
}

// An alias of the type's PMU, resolved on this machine where there is one.
void Reader::check_alias_config(const Note& n, std::uint32_t type, std::uint64_t config) const {
  if (!machine_) return;
  const spec::Pmu* pmu = machine_->pmu_of_type(type);
  if (!pmu) return;
  std::optional<std::uint64_t> encoded;
  try {  // a name this machine does not have (no event table loaded, say) cannot be checked
    auto set = resolve(fmt::format("{}/{}/", pmu->name(), cut(n.text)), *machine_);
    if (set.events.size() == 1) encoded = set.events[0].attr.config;
  } catch (const Error&) {
  }
  if (encoded && *encoded != config)
    fail(ErrorKind::bad_value, n.line, n.column,
         fmt::format("config {:#x} is not '{}', which is config {:#x} on pmu '{}' of this machine", config,
                     cut(n.text), *encoded, pmu->name()),
         std::string(config_help));
}

}  // namespace

std::vector<Attr> parse_perf_attr_text(std::string_view text) { return Reader(text, nullptr).run(); }

std::vector<Attr> parse_perf_attr_text(std::string_view text, const spec::Machine& machine) {
  return Reader(text, &machine).run();
}

}  // namespace perfspec
