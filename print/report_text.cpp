// SPDX-License-Identifier: MIT
// `perf report --stdio` of Linux 6.12 (tools/perf/builtin-report.c, ui/stdio/hist.c, util/hist.c,
// util/sort.c): a profile's samples gathered into entries of the sort keys, sorted and printed.
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/report.hpp"
#include "print/report_graph.hpp"

namespace perfspec {
namespace {

using record::Frame;
using record::Profile;
using report_detail::FrameKeys;
using report_detail::Node;

// ipc_null: perf's column of a --sort that names `symbol` in full, which a recording without branch
// stacks leaves `-` (perf's sort_sym_ipc_null; it tells no entries apart that sym does not)
enum class Key { comm, pid, dso, sym, cpu, ipc_null };

std::vector<Key> sort_keys(const std::vector<std::string>& names) {
  std::vector<Key> keys;
  for (const std::string& n : names) {
    if (n == "comm")
      keys.push_back(Key::comm);
    else if (n == "pid")
      keys.push_back(Key::pid);
    else if (n == "dso")
      keys.push_back(Key::dso);
    else if (n.size() >= 3 && std::string_view("symbol").starts_with(n))  // perf takes a prefix of it
      keys.push_back(Key::sym);
    else if (n == "cpu")
      keys.push_back(Key::cpu);
    else
      throw Error(ErrorKind::usage, fmt::format("unknown --sort key: '{}'", n),
                  "perfspec report sorts by comm, pid, dso, sym (symbol) and cpu");
  }
  if (keys.empty()) throw Error(ErrorKind::usage, "--sort names no key", "for example: --sort comm,dso,sym");
  if (std::any_of(names.begin(), names.end(), [](const std::string& n) { return n == "symbol"; }))
    keys.push_back(Key::ipc_null);
  return keys;
}

// One row: what the sort keys tell apart, and what it weighs.
struct Entry {
  std::uint32_t comm = 0;
  std::int32_t tid = 0;  // the pid key's, and the thread whose samples made the entry
  std::uint32_t cpu = 0;
  bool has_cpu = false;
  const Frame* frame = nullptr;  // its binary and symbol
  std::uint64_t address = 0;     // without a symbol: the address shown
  char level = '.';
  std::uint64_t self = 0, children = 0, samples = 0;
  std::uint64_t sys = 0, usr = 0;  // of self: sampled in the kernel, in user space (a guest's in neither)
  std::size_t max_depth = 0;
  Node graph;
};

// perf's HIERARCHY_INDENT: the spaces of each level of --hierarchy
constexpr std::size_t hierarchy_indent = 3;

struct Widths {
  std::size_t comm = 7, pid = 15, dso = 13, sym = 6;
};

class Event {
 public:
  Event(const Profile& profile, const Profile::Event& event, const ReportOptions& options,
        const FrameKeys& keys)
      : profile_(profile), event_(event), options_(options), keys_(keys), sort_(sort_keys(options.sort)) {
    // perf report sets itself up before a pipe's events are known: as for a file without callchains
    // (no children, even asked for), but the graphs are drawn, in the order children would have had
    children_ = !profile.pipe() && options.children.value_or(event.callchains);
    graph_ = options.graph && event.callchains;
    caller_ = options.caller.value_or(profile.pipe() ? options.children.value_or(true) : children_);
    if (options.hierarchy) children_ = false;  // perf's report turns it off after choosing the order
  }
  void gather();
  void order();
  void print(std::string& out);

 private:
  std::size_t entry(const Profile::Stack& stack, std::uint32_t frame, bool self);
  void credit(const Profile::Stack& stack);
  int compare_key(Key k, const Entry& a, const Entry& b, bool collapsed) const;
  int compare_collapsed(const Entry& a, const Entry& b) const;
  int compare_output(const Entry& a, const Entry& b) const;
  void header(std::string& out, const Widths& w) const;
  void row(std::string& out, const Entry& e, const Widths& w) const;
  std::string cell(Key k, const Entry& e, const Widths& w) const;
  std::vector<std::pair<std::string_view, std::size_t>> overhead_columns() const;
  void overhead_cells(std::string& out, const Entry& e) const;
  // perf's --percent-limit: a row of this weight is left out
  bool under_limit(std::uint64_t weight) const {
    const double limit = options_.percent_limit;
    return limit > 0 && 100.0 * static_cast<double>(weight) < limit * static_cast<double>(event_.period);
  }
  void hierarchy_header(std::string& out, const Widths& w) const;
  bool hierarchy_level(std::string& out, const Widths& w, std::vector<Entry*> members, std::size_t depth,
                       report_detail::GraphStyle& style);
  Widths widths() const;

  const Profile& profile_;
  const Profile::Event& event_;
  const ReportOptions& options_;
  const FrameKeys& keys_;
  std::vector<Key> sort_;
  bool children_ = false, graph_ = false, caller_ = false;
  std::vector<Entry> entries_;
  std::unordered_map<std::string, std::size_t> index_;
  std::string key_;
  std::vector<std::uint32_t> chain_;
  std::vector<std::size_t> credited_;
};

template <typename T> void put(std::string& key, T value) {
  char bytes[sizeof value];
  std::memcpy(bytes, &value, sizeof value);
  key.append(bytes, sizeof value);
}

// The entry of `frame` for the stack's thread (made when new): the sample's own entry (`self`, an
// address without a symbol shown in its binary's terms) or one a callchain frame makes (its address
// as the kernel wrote it, as perf's fill_callchain_info leaves it).
std::size_t Event::entry(const Profile::Stack& stack, std::uint32_t frame, bool self) {
  const Frame& f = profile_.frame(frame);
  std::uint64_t address = self ? f.address : f.ip;
  key_.clear();
  for (Key k : sort_) {
    switch (k) {
      case Key::comm: put(key_, stack.comm); break;
      case Key::pid: put(key_, stack.tid); break;
      case Key::dso: key_.append(f.short_dso()), key_ += '\0'; break;
      case Key::sym:
        if (f.symbol && f.symbol->inlined)  // perf's _sort__sym_cmp: an inlined function by its name too
          put(key_, 'I'), key_.append(f.dso), put(key_, f.symbol->start), key_.append(f.symbol->name);
        else if (f.symbol)
          put(key_, 'S'), key_.append(f.dso), put(key_, f.symbol->start);
        else
          put(key_, 'A'), put(key_, address);
        break;
      case Key::cpu: put(key_, stack.cpu); break;
      case Key::ipc_null: break;
    }
  }
  auto [it, made] = index_.try_emplace(key_, entries_.size());
  if (made) {
    Entry& e = entries_.emplace_back();
    e.comm = stack.comm, e.tid = stack.tid, e.cpu = stack.cpu, e.has_cpu = event_.cpu;
    e.frame = &f, e.address = address;
    // a frame of no binary takes the sample's level (perf's fill_callchain_info leaves it)
    e.level = f.dso.empty() ? profile_.frame(stack.frames.front()).level : f.level;
  }
  return it->second;
}

// A stack's period to its own entry and, with children, once to every other entry its frames make.
void Event::credit(const Profile::Stack& stack) {
  const auto& frames = stack.frames;
  std::size_t own = entry(stack, stack.self, true);
  Entry& e = entries_[own];
  e.self += stack.period, e.samples += stack.samples, e.max_depth = std::max(e.max_depth, frames.size());
  // perf's he_stat__add_cpumode_period: by the sample's cpumode, which placed its own frame
  const char level = profile_.frame(stack.self).level;
  if (level == 'k') e.sys += stack.period;
  if (level == '.') e.usr += stack.period;
  if (children_) e.children += stack.period;
  if (graph_) {
    chain_.assign(frames.begin(), frames.end());
    if (caller_) std::reverse(chain_.begin(), chain_.end());
    report_detail::add_chain(e.graph, chain_, stack.period, keys_);
  }
  if (!children_) return;
  credited_.assign(1, own);
  for (std::size_t i = frames.size(); i-- > 0;) {  // from the outermost caller, as perf's iterator
    std::size_t at = entry(stack, frames[i], false);
    if (std::find(credited_.begin(), credited_.end(), at) != credited_.end()) continue;
    credited_.push_back(at);
    Entry& c = entries_[at];
    c.children += stack.period, c.max_depth = std::max(c.max_depth, i + 1);
    if (graph_) {  // the chain from this frame down to the sampled one
      chain_.assign(frames.begin(), frames.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      if (caller_) std::reverse(chain_.begin(), chain_.end());
      report_detail::add_chain(c.graph, chain_, stack.period, keys_);
    }
  }
}

void Event::gather() {
  auto listed = [](const std::vector<std::int32_t>& ids, std::int32_t id) {
    return ids.empty() || std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  for (const Profile::Stack& stack : event_.stacks)
    if (listed(options_.pids, stack.pid) && listed(options_.tids, stack.tid)) credit(stack);
}

template <typename T> int cmp(const T& a, const T& b) { return a < b ? -1 : b < a ? 1 : 0; }

// One sort key of two entries, as perf's collapsed tree (`collapsed`) or its output tree orders them.
// A binary before none, by name; a symbol before an address. Symbols: by start when collapsing, by name
// in the output; addresses: by the sign of their difference when collapsing (perf's _sort__addr_cmp:
// kernel addresses before user ones), a tie in the output (the collapsed order stands).
int Event::compare_key(Key k, const Entry& a, const Entry& b, bool collapsed) const {
  switch (k) {
    case Key::comm: return profile_.comm(a.comm).compare(profile_.comm(b.comm));
    case Key::pid: return cmp(a.tid, b.tid);
    case Key::dso:
      return a.frame->dso.empty() != b.frame->dso.empty()
                 ? (a.frame->dso.empty() ? 1 : -1)
                 : a.frame->short_dso().compare(b.frame->short_dso());
    case Key::sym:
      if (a.frame->symbol && b.frame->symbol) {
        const record::Symbol &l = *a.frame->symbol, &r = *b.frame->symbol;
        if (!collapsed) return l.name.compare(r.name);
        // perf's _sort__sym_cmp: an inlined function by its name, then the same if the ranges meet
        if (l.inlined || r.inlined) {
          if (int c = l.name.compare(r.name)) return c;
          if (l.start <= r.end && l.end >= r.start) return 0;
        }
        return cmp(l.start, r.start);
      }
      if (a.frame->symbol || b.frame->symbol) return a.frame->symbol ? -1 : 1;
      return collapsed ? cmp(static_cast<std::int64_t>(a.address - b.address), std::int64_t{0}) : 0;
    case Key::cpu: return cmp(a.cpu, b.cpu);
    case Key::ipc_null: return 0;
  }
  return 0;
}

int Event::compare_collapsed(const Entry& a, const Entry& b) const {
  for (Key k : sort_)
    if (int c = compare_key(k, a, b, true)) return c;
  return 0;
}

// perf's output order: Children (deeper chains first between entries of one thread, when graphs are
// shown), then Self, descending; then each key's sort.
int Event::compare_output(const Entry& a, const Entry& b) const {
  if (children_) {
    if (int c = cmp(b.children, a.children)) return c;
    if (graph_ && a.tid == b.tid)
      if (int c = cmp(b.max_depth, a.max_depth)) return c;
  }
  if (int c = cmp(b.self, a.self)) return c;
  for (Key k : sort_)
    if (int c = compare_key(k, a, b, false)) return c;
  return 0;
}

void Event::order() {
  std::sort(entries_.begin(), entries_.end(),
            [&](const Entry& a, const Entry& b) { return compare_collapsed(a, b) < 0; });
  std::stable_sort(entries_.begin(), entries_.end(),
                   [&](const Entry& a, const Entry& b) { return compare_output(a, b) < 0; });
}

Widths Event::widths() const {
  Widths w;
  for (const Entry& e : entries_) {
    // perf's thread__comm_len: the name its thread has last (an exec's), not the entry's own
    std::size_t comm = profile_.thread_name(e.tid).size();
    w.comm = std::max(w.comm, comm), w.pid = std::max(w.pid, comm + 8);
    if (!e.frame->dso.empty()) w.dso = std::max(w.dso, e.frame->short_dso().size());
    if (e.frame->symbol) {
      w.sym = std::max(w.sym, e.frame->symbol->name.size() + 4);
    } else {  // "[l] 0x" and 16 digits; the binary's column at least 16
      w.sym = std::max<std::size_t>(w.sym, 22), w.dso = std::max<std::size_t>(w.dso, 16);
    }
  }
  return w;
}

std::size_t width_of(Key k, const Widths& w) {
  switch (k) {
    case Key::comm: return w.comm;
    case Key::pid: return w.pid;
    case Key::dso: return w.dso;
    case Key::sym: return w.sym;
    case Key::cpu: return 3;
    case Key::ipc_null: return 20;
  }
  return 0;
}

std::string_view header_of(Key k) {
  switch (k) {
    case Key::comm: return "Command";
    case Key::pid: return "    Pid:Command";
    case Key::dso: return "Shared Object";
    case Key::sym: return "Symbol";
    case Key::cpu: return "CPU";
    case Key::ipc_null: return "IPC   [IPC Coverage]";
  }
  return {};
}

// A key's column: its cells' widest, at least its header
std::size_t column_width(Key k, const Widths& w) { return std::max(width_of(k, w), header_of(k).size()); }

// perf's convert_unit: 1000 and under as they are (a space for the unit), above by thousands
std::string samples_text(std::uint64_t n) {
  char unit = ' ';
  for (char u : {'K', 'M', 'G'})
    if (n > 1000) n /= 1000, unit = u;
  return fmt::format("{}{}", n, unit);
}

void Event::header(std::string& out, const Widths& w) const {
  fmt::format_to(
      std::back_inserter(out), "# Samples: {} of event '{}'{}\n# Event count (approx.): {}\n#\n",
      samples_text(event_.samples), event_.name,
      options_.time_slices.empty() ? std::string() : " (time slices: " + options_.time_slices + ")",
      event_.period);
  if (options_.hierarchy) return hierarchy_header(out, w);
  std::string names = "#", dots = "#";
  auto column = [&](std::string_view name, std::size_t width, bool right) {
    names += right ? fmt::format(" {:>{}}", name, width) : fmt::format(" {:<{}}", name, width);
    dots += ' ';
    dots.append(width, '.');
    names += ' ', dots += ' ';
  };
  for (auto [name, width] : overhead_columns()) column(name, width, true);
  for (Key k : sort_) column(header_of(k), column_width(k, w), false);
  names.pop_back(), dots.pop_back();
  out += names, out += '\n', out += dots, out += "\n#\n";
}

// perf's _hist_entry__sym_snprintf: the level, then the function, a data object with the offset of
// the entry's address into it, or the address (%#.16llx: 0x and 16 digits, but 0 has no 0x)
void sym_cell(std::string& cell, const Entry& e) {
  cell = fmt::format("[{}] ", e.level);
  if (const record::Symbol* s = e.frame->symbol) {
    cell += s->name;
    if (s->object) cell += fmt::format("+{:#x}", e.frame->address - s->start);
    if (s->inlined) cell += " (inlined)";
  } else {
    cell += e.address ? fmt::format("{:#018x}", e.address) : "0000000000000000";
  }
}

std::string Event::cell(Key k, const Entry& e, const Widths& w) const {
  std::string cell;
  switch (k) {
    // %-*.*s: cut to the column (whose width is of the threads' last names)
    case Key::comm: cell = profile_.comm(e.comm).substr(0, w.comm); break;
    // perf's hist_entry__thread_snprintf: the name the thread has last, not the entry's own
    case Key::pid:
      cell = fmt::format("{:>7}:{}", e.tid, profile_.thread_name(e.tid).substr(0, w.pid - 8));
      break;
    case Key::dso: cell = e.frame->dso.empty() ? "[unknown]" : e.frame->short_dso(); break;
    case Key::sym: sym_cell(cell, e); break;
    case Key::cpu: cell = e.has_cpu ? fmt::format("{:03}", e.cpu) : "-001"; break;
    case Key::ipc_null: cell = "-      -"; break;
  }
  return cell;
}

// The columns before the keys': their names and widths.
std::vector<std::pair<std::string_view, std::size_t>> Event::overhead_columns() const {
  std::vector<std::pair<std::string_view, std::size_t>> c;
  if (children_)
    c = {{"Children", 8}, {"Self", 8}};
  else
    c = {{"Overhead", 8}};
  if (options_.cpu_utilization) c.emplace_back("sys", 8), c.emplace_back("usr", 8);
  if (options_.samples) c.emplace_back("Samples", 12);
  return c;
}

void Event::overhead_cells(std::string& out, const Entry& e) const {
  auto percent = [&](std::uint64_t v) {
    double share = event_.period ? 100.0 * static_cast<double>(v) / static_cast<double>(event_.period) : 0;
    fmt::format_to(std::back_inserter(out), "   {:6.2f}%", share);
  };
  if (children_) percent(e.children);
  percent(e.self);
  if (options_.cpu_utilization) percent(e.sys), percent(e.usr);
  if (options_.samples) fmt::format_to(std::back_inserter(out), "   {:11}", e.samples);
}

void Event::row(std::string& out, const Entry& e, const Widths& w) const {
  overhead_cells(out, e);
  for (std::size_t i = 0; i < sort_.size(); ++i) {
    std::string cell = this->cell(sort_[i], e, w);
    out += "  ";
    out += cell;
    // perf pads every cell to its column but a symbol's, which only the columns after it pad
    std::size_t width = column_width(sort_[i], w);
    bool padded = sort_[i] != Key::sym || i + 1 < sort_.size();
    if (padded && cell.size() < width) out.append(width - cell.size(), ' ');
  }
  out += '\n';
}

// perf's print_hierarchy_headers: the overhead columns after room for the deepest level's indent, the
// keys' names joined by " / ", dots as wide as the widest level (its indent and its key's column)
void Event::hierarchy_header(std::string& out, const Widths& w) const {
  const std::size_t indent = (sort_.size() - 1) * hierarchy_indent;
  std::string names = "# " + std::string(indent, ' '), dots = "# " + std::string(indent, '.');
  bool first = true;
  for (auto [name, width] : overhead_columns()) {
    names += fmt::format("{:>{}}  ", name, width);
    if (!first) dots += "..";
    first = false;
    dots.append(width, '.');
  }
  std::string keys;
  std::size_t width = 0;
  for (std::size_t i = 0; i < sort_.size(); ++i) {
    std::string_view h = header_of(sort_[i]);
    h.remove_prefix(std::min(h.find_first_not_of(' '), h.size()));
    if (i) keys += " / ";
    keys += h;
    width = std::max(width, i * hierarchy_indent + column_width(sort_[i], w));
  }
  width = std::max(width, keys.size());
  out += names, out += keys, out += '\n';
  out += dots, out += "  ", out.append(width, '.'), out += "\n#\n";
}

// One level of perf's --hierarchy: the members (entries equal in the keys above) by this level's key,
// heaviest first; each with the level below under it, or its graph at the last level.
bool Event::hierarchy_level(std::string& out, const Widths& w, std::vector<Entry*> members, std::size_t depth,
                            report_detail::GraphStyle& style) {
  const Key k = sort_[depth];
  std::stable_sort(members.begin(), members.end(),
                   [&](const Entry* a, const Entry* b) { return compare_key(k, *a, *b, true) < 0; });
  struct Group {
    std::size_t begin = 0, end = 0;
    Entry sum;  // the first member's keys (not its graph), the members' sums
  };
  std::vector<Group> groups;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (groups.empty() || compare_key(k, *members[groups.back().begin], *members[i], true) != 0) {
      Group& g = groups.emplace_back();
      const Entry& m = *members[i];
      g.begin = i;
      g.sum.comm = m.comm, g.sum.tid = m.tid, g.sum.cpu = m.cpu, g.sum.has_cpu = m.has_cpu;
      g.sum.frame = m.frame, g.sum.address = m.address, g.sum.level = m.level;
    }
    Group& g = groups.back();
    g.end = i + 1;
    g.sum.self += members[i]->self, g.sum.samples += members[i]->samples;
    g.sum.sys += members[i]->sys, g.sum.usr += members[i]->usr;
  }
  std::stable_sort(groups.begin(), groups.end(), [&](const Group& a, const Group& b) {
    if (a.sum.self != b.sum.self) return a.sum.self > b.sum.self;
    return compare_key(k, a.sum, b.sum, false) < 0;
  });
  const bool leaf = depth + 1 == sort_.size();
  bool printed = false;
  for (const Group& g : groups) {
    if (under_limit(g.sum.self)) continue;
    printed = true;
    out.append(depth * hierarchy_indent, ' ');
    overhead_cells(out, g.sum);
    out.append((sort_.size() - 1) * hierarchy_indent, ' ');
    out += "  ";
    std::string c = cell(k, g.sum, w);
    std::size_t width = column_width(k, w);
    if (k != Key::sym && c.size() < width) c.append(width - c.size(), ' ');
    out.append(c, std::min(c.find_first_not_of(' '), c.size()));  // perf's skip_spaces
    out += '\n';
    if (leaf) {
      if (graph_) {
        style.parent = g.sum.self;
        report_detail::print_graph(out, members[g.begin]->graph, style, keys_);
      }
      continue;
    }
    std::vector<Entry*> below(members.begin() + static_cast<std::ptrdiff_t>(g.begin),
                              members.begin() + static_cast<std::ptrdiff_t>(g.end));
    if (!hierarchy_level(out, w, std::move(below), depth + 1, style)) {
      // perf's line for a level whose entries are all under --percent-limit
      std::size_t overhead = 0;
      for (auto [name, columns] : overhead_columns()) overhead += (overhead ? 2 : 0) + columns;
      out.append((sort_.size() + depth) * hierarchy_indent + overhead + 4, ' ');
      fmt::format_to(std::back_inserter(out), "no entry >= {:.2f}%\n", options_.percent_limit);
    }
  }
  return printed;
}

void Event::print(std::string& out) {
  Widths w = widths();
  if (!options_.quiet) header(out, w);
  double limit = options_.percent_limit;
  report_detail::GraphStyle style;
  style.total = event_.period;
  double graph_percent = limit > 0 ? limit : options_.graph_percent;
  style.min_hit = static_cast<std::uint64_t>(static_cast<double>(event_.period) * graph_percent / 100);
  style.skip_first = options_.sort.front().starts_with("sym");
  style.folded = options_.folded;
  if (options_.hierarchy) {
    std::vector<Entry*> all;
    for (Entry& e : entries_) all.push_back(&e);
    hierarchy_level(out, w, std::move(all), 0, style);
    out += "\n\n";
    return;
  }
  for (Entry& e : entries_) {
    std::uint64_t weight = children_ ? e.children : e.self;
    if (under_limit(weight)) continue;
    row(out, e, w);
    if (!graph_) continue;
    style.parent = weight;
    report_detail::print_graph(out, e.graph, style, keys_);
  }
  out += "\n\n";
}

}  // namespace

void check_report_options(const ReportOptions& options) {
  sort_keys(options.sort);
  if (!(options.percent_limit >= 0 && options.percent_limit <= 100))
    throw Error(ErrorKind::usage, fmt::format("--percent-limit {} is no percentage", options.percent_limit));
  if (!(options.graph_percent >= 0 && options.graph_percent <= 100))
    throw Error(ErrorKind::usage,
                fmt::format("a graph threshold of {}% is no percentage", options.graph_percent));
}

std::string report_text(const Profile& profile, const ReportOptions& options) {
  check_report_options(options);  // before anything is printed
  std::string out;
  if (!options.quiet && !options.header_shown)
    out += "# To display the perf.data header info, please use --header/--header-only options.\n#\n";
  bool any = false;
  for (const Profile::Event& e : profile.events()) any = any || e.samples > 0;
  if (!any) return out;
  if (!options.quiet)
    fmt::format_to(std::back_inserter(out), "#\n# Total Lost Samples: {}\n#\n", profile.lost());
  FrameKeys keys(profile, options.hierarchy);
  for (const Profile::Event& e : profile.events()) {
    if (e.samples == 0) continue;  // perf skips an event without samples
    Event event(profile, e, options, keys);
    event.gather();
    event.order();
    event.print(out);
  }
  return out;
}

std::string thread_counts_text(const Profile& profile) {
  // perf's perf_read_values__display_pretty
  const Profile::Reads& reads = profile.reads();
  std::size_t pid_width = 3, tid_width = 3;
  std::vector<std::size_t> widths;
  for (const auto& name : reads.counters) widths.push_back(name.size());
  for (const auto& t : reads.threads) {
    pid_width = std::max(pid_width, fmt::formatted_size("{}", t.pid));
    tid_width = std::max(tid_width, fmt::formatted_size("{}", t.tid));
    for (std::size_t j = 0; j < t.values.size(); ++j)
      widths[j] = std::max(widths[j], fmt::formatted_size("{}", t.values[j]));
  }
  std::string out = fmt::format("# {:>{}}  {:>{}}", "PID", pid_width, "TID", tid_width);
  for (std::size_t j = 0; j < widths.size(); ++j)
    out += fmt::format("  {:>{}}", reads.counters[j], widths[j]);
  out += '\n';
  for (const auto& t : reads.threads) {
    out += fmt::format("  {:>{}}  {:>{}}", t.pid, pid_width, t.tid, tid_width);
    for (std::size_t j = 0; j < widths.size(); ++j)
      out += fmt::format("  {:>{}}", j < t.values.size() ? t.values[j] : 0, widths[j]);
    out += '\n';
  }
  return out;
}

}  // namespace perfspec
