// SPDX-License-Identifier: MIT
// perf top's table (perf 6.12's hists browser as `perf top` draws it): a header line, the column
// names, and one row per entry of the sort keys with its share of the period, most first.
#include "perfspec/top.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "perfspec/error.hpp"

namespace perfspec {

namespace {

enum class Key : std::uint8_t { comm, pid, dso, sym };

struct Entry {
  std::uint64_t period = 0, samples = 0;
};

// perf's short name of a binary: its file name; the kernel as "[kernel]", as perf top names it.
std::string short_dso(std::string_view dso) {
  if (dso.empty()) return "[unknown]";
  if (dso == "[kernel.kallsyms]") return "[kernel]";
  if (dso.front() == '[') return std::string(dso);
  auto slash = dso.rfind('/');
  return std::string(slash == std::string_view::npos ? dso : dso.substr(slash + 1));
}

// 30K, 1M: perf's unit_number__scnprintf of a count.
std::string count_text(std::uint64_t n) {
  const char* units = " KMG";
  int u = 0;
  while (n >= 1000 && u < 3) {
    n /= 1000;
    ++u;
  }
  return u ? fmt::format("{}{}", n, units[u]) : fmt::format("{}", n);
}

}  // namespace

struct TopTable::Impl {
  TopOptions options;
  std::vector<Key> keys;
  std::map<std::vector<std::string>, Entry> entries;  // by the keys' texts
  std::uint64_t samples = 0;
};

TopTable::TopTable(TopOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  for (const auto& k : impl_->options.sort) {
    if (k == "comm")
      impl_->keys.push_back(Key::comm);
    else if (k == "pid")
      impl_->keys.push_back(Key::pid);
    else if (k == "dso")
      impl_->keys.push_back(Key::dso);
    else if (k == "sym" || k == "symbol")
      impl_->keys.push_back(Key::sym);
    else
      throw Error(ErrorKind::usage,
                  fmt::format("unknown --sort key: '{}' (perfspec top sorts by comm, pid, dso and sym)", k));
  }
  if (impl_->keys.empty()) throw Error(ErrorKind::usage, "--sort: no key");
}
TopTable::TopTable(TopTable&&) noexcept = default;
TopTable& TopTable::operator=(TopTable&&) noexcept = default;
TopTable::~TopTable() = default;

void TopTable::add(const TopSample& s) {
  Impl& m = *impl_;
  bool kernel = s.level == 'k';
  if ((kernel && m.options.hide_kernel) || (!kernel && m.options.hide_user)) return;
  std::vector<std::string> key;
  for (Key k : m.keys) {
    switch (k) {
      case Key::comm: key.emplace_back(s.comm); break;
      case Key::pid: key.push_back(fmt::format("{:>7}:{}", s.pid, s.comm)); break;
      case Key::dso: key.push_back(short_dso(s.dso)); break;
      case Key::sym:
        key.push_back(s.symbol.empty() ? fmt::format("[{}] {:#018x}", s.level, s.address)
                                       : fmt::format("[{}] {}", s.level, s.symbol));
        break;
    }
  }
  Entry& e = m.entries[key];
  e.period += s.period;
  ++e.samples;
  ++m.samples;
}

void TopTable::age() {
  Impl& m = *impl_;
  if (m.options.zero) {
    m.entries.clear();
    return;
  }
  for (auto it = m.entries.begin(); it != m.entries.end();) {
    it->second.period = it->second.period * 7 / 8;
    it->second.samples = it->second.samples * 7 / 8;
    it = it->second.period == 0 ? m.entries.erase(it) : std::next(it);
  }
}

std::string TopTable::screen(std::size_t columns, std::size_t lines, std::uint64_t lost,
                             std::uint64_t lost_total) const {
  const Impl& m = *impl_;
  std::uint64_t total = 0;
  for (const auto& [k, e] : m.entries) total += e.period;
  std::string out = fmt::format("Samples: {} of event '{}', ", count_text(m.samples), m.options.event);
  out += m.options.frequency ? fmt::format("{} Hz, ", m.options.frequency) : std::string();
  out += fmt::format("Event count (approx.): {} lost: {}/{} drop: 0/0", total, lost, lost_total);
  out = out.substr(0, columns) + "\n";
  // the column names, each column as wide as its widest text
  static const std::map<Key, std::string_view> names{{Key::comm, "Command"},
                                                     {Key::pid, "    Pid:Command"},
                                                     {Key::dso, "Shared Object"},
                                                     {Key::sym, "Symbol"}};
  std::vector<std::size_t> widths;
  for (std::size_t i = 0; i < m.keys.size(); ++i) {
    std::size_t w = names.at(m.keys[i]).size();
    for (const auto& [k, e] : m.entries) w = std::max(w, k[i].size());
    widths.push_back(w);
  }
  std::string head = "Overhead  ";
  if (m.options.show_nr_samples) head += "  Samples  ";
  for (std::size_t i = 0; i < m.keys.size(); ++i)
    head += i + 1 == m.keys.size() ? std::string(names.at(m.keys[i]))
                                   : fmt::format("{:<{}}  ", names.at(m.keys[i]), widths[i]);
  out += head.substr(0, columns) + "\n";
  std::vector<std::pair<const std::vector<std::string>*, const Entry*>> rows;
  for (const auto& [k, e] : m.entries) rows.emplace_back(&k, &e);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second->period > b.second->period; });
  std::size_t room = lines > 2 ? lines - 2 : 0;
  for (std::size_t r = 0; r < rows.size() && r < room; ++r) {
    const auto& [k, e] = rows[r];
    double pct = total ? 100.0 * static_cast<double>(e->period) / static_cast<double>(total) : 0.0;
    std::string row = fmt::format("{:>7.2f}%  ", pct);
    if (m.options.show_nr_samples) row += fmt::format("{:>9}  ", e->samples);
    for (std::size_t i = 0; i < k->size(); ++i)
      row += i + 1 == k->size() ? (*k)[i] : fmt::format("{:<{}}  ", (*k)[i], widths[i]);
    out += row.substr(0, columns) + "\n";
  }
  out.pop_back();  // a newline after the last line would scroll the header off a full terminal
  return out;
}

std::uint64_t TopTable::samples() const { return impl_->samples; }

}  // namespace perfspec
