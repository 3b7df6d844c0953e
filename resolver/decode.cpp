// SPDX-License-Identifier: MIT
#include <algorithm>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "perfspec/decode.hpp"
#include "perfspec/error.hpp"
#include "perfspec/event_source.hpp"
#include "perfspec/resolve.hpp"
#include "perfspec/tables.hpp"
#include "spec/abi.hpp"
#include "spec/ascii.hpp"
#include "spec/builtin.hpp"

namespace perfspec {

namespace {

std::string modifiers(const Attr& a, std::vector<std::string>& notes) {
  std::string m;
  // u/k/h: letters name what is counted when anything is excluded (REFERENCE.md section 6).
  if (a.exclude_user || a.exclude_kernel || a.exclude_hv) {
    if (a.exclude_user && a.exclude_kernel && a.exclude_hv)
      notes.push_back("user, kernel and hypervisor are all excluded: nothing counts");
    else {
      if (!a.exclude_user) m += 'u';
      if (!a.exclude_kernel) m += 'k';
      if (!a.exclude_hv) m += 'h';
    }
  }
  if (a.exclude_host || a.exclude_guest) {
    if (a.exclude_host && a.exclude_guest)
      notes.push_back("both host and guest are excluded");
    else
      m += a.exclude_guest ? 'H' : 'G';
  }
  if (a.exclude_idle) m += 'I';
  m += std::string(a.precise_ip, 'p');
  if (a.pinned) m += 'D';
  if (a.exclusive) m += 'e';
  return m;
}

// Built-in terms that carry what formats cannot: the sampling period/frequency.
std::vector<std::string> builtin_terms(const Attr& a) {
  std::vector<std::string> t;
  if (a.sample_period) t.push_back(fmt::format("{}={}", a.freq ? "freq" : "period", a.sample_period));
  return t;
}

std::string with_terms(std::string base, const std::vector<std::string>& terms, bool slash_form) {
  if (terms.empty()) return base;
  if (slash_form) {  // base ends with '/'
    base.pop_back();
    return fmt::format("{}{}{}/", base, base.back() == '/' ? "" : ",", fmt::join(terms, ","));
  }
  return fmt::format("{}/{}/", base, fmt::join(terms, ","));
}

// The config words an alias encodes to on `pmu`, or nullopt when it does not resolve there.
std::optional<std::array<std::uint64_t, 4>> alias_words(const spec::Machine& m, const spec::Pmu& pmu,
                                                        const std::string& name) {
  try {
    auto set = resolve(fmt::format("{}/{}/", pmu.name(), name), m);
    if (set.events.size() != 1) return std::nullopt;
    const Attr& a = set.events[0].attr;
    return std::array<std::uint64_t, 4>{a.config, a.config1, a.config2, a.config3};
  } catch (const Error&) {
    return std::nullopt;
  }
}

// The format terms that write `words` on `pmu`, in the order of their lowest bit; `covered` gets
// the bits the chosen formats cover. Formats may overlap (Intel's ldlat, frontend and offcore_rsp all
// sit in config1): of a group of overlapping formats, the narrowest that holds all of the word's bits
// in the group is used.
std::vector<std::string> format_terms(const spec::Pmu& pmu, const std::array<std::uint64_t, 4>& words,
                                      std::array<std::uint64_t, 4>& covered) {
  auto formats = pmu.formats();
  std::stable_sort(formats.begin(), formats.end(), [](const spec::Format& x, const spec::Format& y) {
    if (x.word != y.word) return x.word < y.word;
    return x.width() < y.width();
  });
  std::vector<std::pair<unsigned, std::size_t>> order;  // chosen formats by their lowest bit
  for (std::size_t i = 0; i < formats.size(); ++i) {
    const auto& f = formats[i];
    if (covered[f.word] & f.mask()) continue;
    std::uint64_t group = f.mask();
    for (const auto& g : formats)
      if (g.word == f.word && (g.mask() & f.mask())) group |= g.mask();
    if ((words[f.word] & group & ~f.mask()) != 0) continue;  // a wider format of the group holds it all
    covered[f.word] |= group;
    order.emplace_back(f.word * 64 + f.ranges.front().lo, i);
  }
  std::sort(order.begin(), order.end());
  std::vector<std::string> out;
  for (auto [_, i] : order) {
    const auto& f = formats[i];
    std::uint64_t v = f.gather(words[f.word]);
    if (v) out.push_back(f.width() == 1 ? f.name : fmt::format("{}={:#x}", f.name, v));
  }
  return out;
}

// One attr to its best event string: by its type, then checked by resolving the answer again.
class Decoder {
 public:
  Decoder(const Attr& a, const spec::Machine& m)
      : a_(a), m_(m), terms_(builtin_terms(a)), mods_(modifiers(a, d_.notes)) {}
  Decoded run();

 private:
  const Attr& a_;
  const spec::Machine& m_;
  Decoded d_;
  std::vector<std::string> terms_;
  std::string mods_;

  std::string literal() const;
  Decoded finish(std::string base, bool slash_form);
  Decoded raw(std::string base) {
    d_.how = "raw";
    return finish(std::move(base), false);
  }
  Decoded hardware_or_cache();
  Decoded software();
  Decoded tracepoint();
  Decoded breakpoint();
  Decoded pmu_event();
  std::optional<Decoded> by_name(const spec::Pmu& pmu);
  Decoded by_formats(const spec::Pmu& pmu);
};

// `type:config` with configN= terms: what any attr can be written as.
std::string Decoder::literal() const {
  std::vector<std::string> t = terms_;
  if (a_.config1) t.push_back(fmt::format("config1={:#x}", a_.config1));
  if (a_.config2) t.push_back(fmt::format("config2={:#x}", a_.config2));
  if (a_.config3) t.push_back(fmt::format("config3={:#x}", a_.config3));
  std::string base = with_terms(fmt::format("{}:{:#x}", a_.type, a_.config), t, false);
  return mods_.empty() ? base : base + (base.back() == '/' ? "" : ":") + mods_;
}

// Every answer is checked by resolving it again: a name that would come back as another encoding
// (`cpu_atom/instructions/` is the PMU's own alias, not the generic event) gives way to the literal
// `type:config` form.
Decoded Decoder::finish(std::string base, bool slash_form) {
  base = with_terms(std::move(base), terms_, slash_form);
  if (!mods_.empty()) base += (base.back() == '/' ? "" : ":") + mods_;
  bool same = false;
  try {
    auto set = resolve(base, m_);
    const Attr* b = set.events.size() == 1 ? &set.events[0].attr : nullptr;
    same = b && b->type == a_.type && b->config == a_.config && b->config1 == a_.config1 &&
           b->config2 == a_.config2 && b->config3 == a_.config3 && b->bp_type == a_.bp_type;
  } catch (const Error&) {
  }
  if (!same) {
    d_.notes.push_back(fmt::format("'{}' would not resolve to exactly this encoding here", base));
    d_.how = "raw";
    base = literal();
  }
  d_.event = std::move(base);
  return std::move(d_);
}

Decoded Decoder::run() {
  switch (a_.type) {
    case spec::type_hardware:
    case spec::type_hw_cache: return hardware_or_cache();
    case spec::type_software: return software();
    case spec::type_tracepoint: return tracepoint();
    case spec::type_breakpoint: return breakpoint();
    default: return pmu_event();
  }
}

Decoded Decoder::hardware_or_cache() {
  const auto ext = static_cast<std::uint32_t>(a_.config >> 32);
  const std::uint64_t low = a_.config & 0xffffffffULL;
  std::string prefix;
  if (ext) {  // extended type: the core PMU of a hybrid machine
    const spec::Pmu* p = m_.pmu_of_type(ext);
    if (!p)
      d_.notes.push_back(fmt::format("extended type {} names no PMU of this machine", ext));
    else
      prefix = p->name();
  }
  std::string name;
  if (a_.type == spec::type_hardware) {
    name = std::string(spec::symbol_name(spec::type_hardware, low));
  } else {
    unsigned cache = low & 0xff, op = (low >> 8) & 0xff, result = (low >> 16) & 0xff;
    if (cache < 7 && op < 3 && result < 2 && (low >> 24) == 0)
      name = spec::cache_event_name(spec::CacheEvent{cache, op, result});
  }
  if (name.empty()) return raw(fmt::format("{}:{:#x}", a_.type, a_.config));
  d_.how = "symbol";
  if (!prefix.empty()) return finish(fmt::format("{}/{}/", prefix, name), true);
  return finish(name, false);
}

Decoded Decoder::software() {
  if (auto name = spec::symbol_name(spec::type_software, a_.config); !name.empty()) {
    d_.how = "symbol";
    return finish(std::string(name), false);
  }
  return raw(fmt::format("1:{:#x}", a_.config));
}

Decoded Decoder::tracepoint() {
  for (const auto& [sys, ev] : m_.tracepoints("*", "*"))
    if (m_.tracepoint_id(sys, ev) == a_.config) {
      d_.how = "tracepoint";
      if (a_.sample_period == 1) terms_.clear();  // the tracepoint default
      return finish(fmt::format("{}:{}", sys, ev), false);
    }
  d_.notes.push_back(fmt::format("no tracepoint of this machine has id {}", a_.config));
  return raw(fmt::format("2:{}", a_.config));
}

Decoded Decoder::breakpoint() {
  d_.how = "breakpoint";
  std::string access;
  if (a_.bp_type & spec::breakpoint_r) access += 'r';
  if (a_.bp_type & spec::breakpoint_w) access += 'w';
  if (a_.bp_type & spec::breakpoint_x) access += 'x';
  if (a_.sample_period == 1) terms_.clear();
  std::string base = fmt::format("mem:{:#x}/{}", a_.config1, a_.config2);
  if (!access.empty()) base += ":" + access;
  if (a_.config || a_.config3)
    d_.notes.push_back("a breakpoint's config and config3 cannot be written in an event string");
  return finish(base, false);
}

// A PMU by its type: an alias or table event with exactly these words, else its formats.
Decoded Decoder::pmu_event() {
  const spec::Pmu* pmu = m_.pmu_of_type(a_.type);
  if (!pmu) {
    d_.notes.push_back(fmt::format("no PMU of this machine has type {}", a_.type));
    if (a_.config1) terms_.push_back(fmt::format("config1={:#x}", a_.config1));
    if (a_.config2) terms_.push_back(fmt::format("config2={:#x}", a_.config2));
    if (a_.config3) terms_.push_back(fmt::format("config3={:#x}", a_.config3));
    return raw(fmt::format("{}:{:#x}", a_.type, a_.config));
  }
  if (auto named = by_name(*pmu)) return std::move(*named);
  return by_formats(*pmu);
}

// A sysfs alias or table event of `pmu` whose encoding has exactly these config words.
std::optional<Decoded> Decoder::by_name(const spec::Pmu& pmu) {
  const std::array<std::uint64_t, 4> words{a_.config, a_.config1, a_.config2, a_.config3};
  // The sources' names, sysfs aliases first and then the others in the Machine's order; table events
  // are named in lower case, as perf lists them.
  std::vector<std::string> candidates;
  std::vector<bool> from_sysfs;
  for (bool sysfs : {true, false})
    for (const spec::EventSource* source : m_.sources())
      if ((source->kind() == spec::Source::sysfs) == sysfs) {
        source->names(pmu, candidates, false);
        from_sysfs.resize(candidates.size(), sysfs);
      }
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    auto w = alias_words(m_, pmu, candidates[i]);
    if (!w || *w != words) continue;
    d_.how = from_sysfs[i] ? "alias" : "table";
    std::string name = from_sysfs[i] ? candidates[i] : spec::ascii_lowered(candidates[i]);
    // The bare name only when it means exactly this event: not a built-in symbol (`cpu-cycles`), and
    // on no other PMU.
    bool bare = false;
    try {
      auto set = resolve(name, m_);
      const Attr* b = set.events.size() == 1 ? &set.events[0].attr : nullptr;
      bare = b && b->type == a_.type && b->config == a_.config && b->config1 == a_.config1 &&
             b->config2 == a_.config2 && b->config3 == a_.config3;
    } catch (const Error&) {
    }
    if (bare) return finish(name, false);
    return finish(fmt::format("{}/{}/", pmu.name(), name), true);
  }
  return std::nullopt;
}

// `pmu/term=value,.../` gathered through the formats; what no format covers is reported, and kept
// with configN=.
Decoded Decoder::by_formats(const spec::Pmu& pmu) {
  d_.how = "formats";
  const std::array<std::uint64_t, 4> words{a_.config, a_.config1, a_.config2, a_.config3};
  std::array<std::uint64_t, 4> covered{};
  std::vector<std::string> fterms = format_terms(pmu, words, covered);
  const char* word_names[] = {"config", "config1", "config2", "config3"};
  for (int w = 0; w < 4; ++w) {
    std::uint64_t left = words[w] & ~covered[w];
    if (!left) continue;
    d_.leftovers.push_back(
        fmt::format("{} bits {:#x} are covered by no format of pmu '{}'", word_names[w], left, pmu.name()));
    // Keep the encoding exact: the whole word, then the format terms on top of it.
    fterms.insert(fterms.begin(), fmt::format("{}={:#x}", word_names[w], words[w]));
  }
  if (fterms.empty()) fterms.push_back("config=0");
  fterms.insert(fterms.end(), terms_.begin(), terms_.end());
  terms_.clear();
  return finish(fmt::format("{}/{}/", pmu.name(), fmt::join(fterms, ",")), true);
}

}  // namespace

Decoded decode(const Attr& a, const spec::Machine& m) { return Decoder(a, m).run(); }

std::string to_string(const ResolvedEvent& event, const spec::Machine& machine) {
  return decode(event.attr, machine).event;
}

namespace {

// The byte at which JSON text first nests deeper than `max`, or npos. A scan of brackets outside
// strings: nlohmann's parser would build every level of `[[[[...` (10 MB of them: 5 s, 750 MB).
std::size_t too_deep_at(std::string_view text, int max) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string_view::npos;
}

// Every field under its name and its union aliases (resolve's JSON has both: `config1` and `bp_addr`).
// A value that does not fit its field (`"exclude_user": 2`, a negative config), or names of one field
// that disagree, are errors: cutting them down would decode another attr than the one given.
Attr attr_from_json(const nlohmann::json& attr, std::size_t index) {
  if (!attr.is_object())
    throw Error(ErrorKind::bad_value, fmt::format("stdin: event {} has no 'attr' object", index));
  Attr a;
  for (const auto& f : attr_fields()) {
    std::optional<std::uint64_t> value;
    std::string_view first;
    std::vector<std::string_view> names{f.name};
    names.insert(names.end(), f.aliases.begin(), f.aliases.end());
    for (std::string_view name : names) {
      auto it = attr.find(std::string(name));
      if (it == attr.end()) continue;
      if (!it->is_number_integer())
        throw Error(ErrorKind::bad_value,
                    fmt::format("stdin: event {}: attr field '{}' is not an integer", index, name));
      std::uint64_t v = 0;
      bool fits = true;
      if (it->is_number_unsigned()) {
        v = it->get<std::uint64_t>();
        fits = f.bits >= 64 || (f.is_signed ? v < std::uint64_t{1} << (f.bits - 1) : (v >> f.bits) == 0);
      } else {
        const auto n = it->get<std::int64_t>();
        v = static_cast<std::uint64_t>(n);
        fits = f.is_signed && n >= -(std::int64_t{1} << (f.bits - 1));
      }
      if (!fits)
        throw Error(ErrorKind::bad_value,
                    fmt::format("stdin: event {}: attr field '{}' is {}, which does not fit a {}{}-bit field",
                                index, name, it->dump(), f.is_signed ? "signed " : "", f.bits));
      if (value && *value != v)
        throw Error(ErrorKind::bad_value,
                    fmt::format("stdin: event {}: '{}' and '{}' are one attr field, given different values",
                                index, first, name));
      value = v;
      if (first.empty()) first = name;
    }
    if (value) f.set(a, *value);
  }
  return a;
}

std::vector<Attr> parse_attr_json(std::string_view text) {
  if (auto at = too_deep_at(text, attr_input_max_depth); at != std::string_view::npos)
    throw Error(ErrorKind::bad_value, fmt::format("stdin: JSON nested deeper than {} levels at byte {}",
                                                  attr_input_max_depth, at + 1));
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(ErrorKind::syntax, fmt::format("stdin: invalid JSON at byte {}", e.byte));
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::syntax, fmt::format("stdin: invalid JSON: {}", e.what()));
  }
  // resolve's JSON names its schema (docs/output-formats.md); another version, or another command's
  // document (decode's own output has "events" too), is refused rather than misread.
  if (doc.is_object() && doc.contains("schema")) {
    const auto& schema = doc["schema"];
    if (!schema.is_string() || schema.get<std::string>() != "perfspec-resolve/1")
      throw Error(ErrorKind::bad_value,
                  fmt::format("stdin: schema {} is not one decode reads (perfspec-resolve/1, as 'perfspec "
                              "resolve --format json' prints)",
                              schema.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
  }
  const nlohmann::json* events = doc.is_object() && doc.contains("events") ? &doc["events"] : &doc;
  if (!events->is_array())
    throw Error(ErrorKind::bad_value,
                "stdin: expected {\"events\":[...]} as 'perfspec resolve --format json' prints");
  std::vector<Attr> out;
  out.reserve(events->size());
  for (const auto& e : *events)
    out.push_back(attr_from_json(e.is_object() && e.contains("attr") ? e["attr"] : e, out.size()));
  return out;
}

}  // namespace

namespace {

std::vector<Attr> attr_input(std::string_view text, const spec::Machine* machine) {
  if (text.size() > attr_input_max_bytes)
    throw Error(ErrorKind::bad_value,
                fmt::format("stdin: more than {} MiB of input", attr_input_max_bytes >> 20));
  std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos)
    throw Error(ErrorKind::usage,
                "no input: give attr fields as options, or JSON or perf stat -vv text on stdin");
  if (text[first] == '{' || text[first] == '[') return parse_attr_json(text);
  auto out = machine ? parse_perf_attr_text(text, *machine) : parse_perf_attr_text(text);
  if (out.empty())
    throw Error(ErrorKind::bad_value,
                "stdin: no 'perf_event_attr:' block found (perf stat -vv output expected)");
  return out;
}

}  // namespace

std::vector<Attr> parse_attr_input(std::string_view text) { return attr_input(text, nullptr); }

std::vector<Attr> parse_attr_input(std::string_view text, const spec::Machine& machine) {
  return attr_input(text, &machine);
}

std::optional<std::string> config_name(const spec::Machine& machine, const spec::Pmu& pmu,
                                       std::uint64_t config) {
  for (bool sysfs : {true, false}) {
    std::vector<std::string> names;
    for (const spec::EventSource* source : machine.sources())
      if ((source->kind() == spec::Source::sysfs) == sysfs) source->names(pmu, names, false);
    for (const auto& name : names)
      if (auto w = alias_words(machine, pmu, name); w && (*w)[0] == config)
        return sysfs ? name : spec::ascii_lowered(name);
  }
  return std::nullopt;
}

std::optional<std::string> tracepoint_name(const spec::Machine& machine, std::uint64_t id) {
  for (const auto& [sys, ev] : machine.tracepoints("*", "*"))
    if (machine.tracepoint_id(sys, ev) == id) return fmt::format("{}:{}", sys, ev);
  return std::nullopt;
}

}  // namespace perfspec
