// SPDX-License-Identifier: MIT
#include "exporter/config.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <unordered_set>

#include <fmt/format.h>

#define TOML_EXCEPTIONS 1
#include <toml++/toml.h>

#include "spec/printable.hpp"

namespace perfspec::exporter {

std::string_view grouping_name(Grouping g) {
  switch (g) {
    case Grouping::total: return "total";
    case Grouping::cpu: return "cpu";
    case Grouping::core: return "core";
    case Grouping::socket: return "socket";
  }
  return "total";
}

namespace {

// Byte offsets of the starts of the lines of `text`.
std::vector<std::size_t> line_starts(std::string_view text) {
  std::vector<std::size_t> out{0};
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') out.push_back(i + 1);
  return out;
}

std::string_view line_text(std::string_view text, std::uint32_t line) {
  std::size_t at = 0;
  for (std::uint32_t l = 1; l < line; ++l) {
    auto nl = text.find('\n', at);
    if (nl == std::string_view::npos) return {};
    at = nl + 1;
  }
  auto end = text.find('\n', at);
  auto s = text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xc0) == 0x80; }

// toml++ counts columns in code points; perfspec's are bytes (as its other file positions). `last` is
// the position asked for before and its offset: one further along the same line is walked to from
// there, so that the strings of one long line (5,000 events in one array) take linear time.
struct Walked {
  std::uint32_t line = 0, column = 0;
  std::size_t at = 0;
};
std::size_t offset_of(std::string_view text, const std::vector<std::size_t>& starts,
                      const toml::source_position& p, Walked& last) {
  if (p.line == 0 || p.line > starts.size()) return text.size();
  std::size_t at = starts[p.line - 1];
  std::uint32_t c = 1;
  if (last.line == p.line && last.column <= p.column && last.column > 0) {
    at = last.at;
    c = last.column;
  }
  for (; c < p.column && at < text.size() && text[at] != '\n'; ++c) {
    ++at;
    while (at < text.size() && continuation(text[at])) ++at;
  }
  last = {p.line, c, at};
  return at;
}

// A table's entries in the order the file writes them (toml::table keeps them sorted by key), so that
// the first error reported is the first in the file.
std::vector<std::pair<const toml::key*, const toml::node*>> in_file_order(const toml::table& table) {
  std::vector<std::pair<const toml::key*, const toml::node*>> out;
  for (auto&& [k, v] : table) out.emplace_back(&k, &v);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    const auto &x = a.first->source().begin, &y = b.first->source().begin;
    return x.line != y.line ? x.line < y.line : x.column < y.column;
  });
  return out;
}

class Parser {
 public:
  Parser(std::string_view text, const std::string& file) : text_(text), starts_(line_starts(text)) {
    config_.file = file;
    config_.text = std::string(text);
  }

  Config run() {
    toml::table root;
    try {
      root = toml::parse(text_, config_.file);
    } catch (const toml::parse_error& e) {
      auto at = position(e.source().begin);
      // A file that is not TOML (a wrong --config: /etc/shadow) is not shown, only the position: unless
      // its name says it is a TOML configuration, its lines are no one's to see in an error.
      if (!config_.file.ends_with(".toml")) config_.text.clear();
      fail_at(at, ErrorKind::syntax, fmt::format("TOML: {}", e.description()));
    }
    for (auto [key_at, node_at] : in_file_order(root)) {
      const toml::key& key = *key_at;
      const toml::node& node = *node_at;
      if (key == "exporter")
        exporter(node, key);
      else if (key == "metric")
        tables(node, key, [&](const toml::table& t) { metric(t); });
      else if (key == "set")
        tables(node, key, [&](const toml::table& t) { set(t); });
      else
        unknown_key(key, "exporter, metric, set");
    }
    if (config_.sets.empty())
      fail_at(Origin{config_.file, 1, 1}, ErrorKind::bad_value, "no [[set]] in the file: nothing to count",
              "a [[set]] names events or metrics to count; see the example configuration");
    return std::move(config_);
  }

 private:
  std::string_view text_;
  std::vector<std::size_t> starts_;
  mutable Walked walked_;
  Config config_;
  std::unordered_set<std::string> metric_names_;  // config_.metrics' names

  // A source position as a file Origin (byte column).
  Origin position(const toml::source_position& p) const {
    std::size_t off = offset_of(text_, starts_, p, walked_);
    std::uint32_t line = p.line ? p.line : 1;
    std::size_t start = line <= starts_.size() ? starts_[line - 1] : 0;
    return Origin{config_.file, line, static_cast<std::uint32_t>(off - std::min(off, start) + 1)};
  }

  [[noreturn]] void fail_at(const Origin& at, ErrorKind kind, std::string_view message,
                            std::string_view help = {}) const {
    throw error_at(config_, at, 0, kind, message, help);
  }
  [[noreturn]] void fail(const toml::node& node, std::string_view message, std::string_view help = {}) const {
    fail_at(position(node.source().begin), ErrorKind::bad_value, message, help);
  }
  [[noreturn]] void unknown_key(const toml::key& key, std::string_view known) const {
    fail_at(position(key.source().begin), ErrorKind::unknown_name,
            fmt::format("unknown key '{}'", spec::printable(key.str())),
            fmt::format("known keys here: {}", known));
  }

  template <typename F> void tables(const toml::node& node, const toml::key& key, F&& each) {
    const auto* array = node.as_array();
    if (!array || !array->is_array_of_tables())
      fail(node, fmt::format("'{}' is a list of tables: write each as [[{}]]", key.str(), key.str()));
    for (const auto& t : *array) each(*t.as_table());
  }

  // The string `node`, each byte located in the file.
  Located located(const toml::node& node, std::string_view what) const {
    const auto* s = node.as_string();
    if (!s) fail(node, fmt::format("{} must be a string", what));
    Located out;
    out.text = s->get();
    std::size_t at = offset_of(text_, starts_, node.source().begin, walked_);
    out.origin = position(node.source().begin);
    std::vector<std::uint32_t> lines, columns;
    if (scan_string(at, lines, columns) && columns.size() == out.text.size()) {
      out.origin.line = lines.empty() ? out.origin.line : lines.front();
      out.origin.column = columns.empty() ? out.origin.column + 1 : columns.front();
      bool one_line = std::all_of(lines.begin(), lines.end(), [&](auto l) { return l == out.origin.line; });
      out.origin.columns = std::move(columns);
      if (!one_line) out.origin.lines = std::move(lines);
    } else {
      out.origin.column += 1;  // past the quote, one column per byte
    }
    return out;
  }

  // The file line and column of each byte of the TOML string whose opening delimiter is at `at`, as
  // TOML decodes it: escapes (one source position for all the bytes they give), multi-line strings
  // (their first newline trimmed, a line-ending backslash trimming the blanks after it). False when
  // the text there is not a string as expected.
  bool scan_string(std::size_t at, std::vector<std::uint32_t>& lines,
                   std::vector<std::uint32_t>& columns) const {
    if (at >= text_.size()) return false;
    const char quote = text_[at];
    if (quote != '"' && quote != '\'') return false;
    const bool literal = quote == '\'';
    const bool multi = text_.substr(at, 3) == std::string_view(literal ? "'''" : "\"\"\"");
    std::size_t i = at + (multi ? 3 : 1);
    auto line_of = [&](std::size_t off) {
      return static_cast<std::uint32_t>(std::upper_bound(starts_.begin(), starts_.end(), off) -
                                        starts_.begin());
    };
    auto column_of = [&](std::size_t off) {
      return static_cast<std::uint32_t>(off - starts_[line_of(off) - 1] + 1);
    };
    auto emit = [&](std::size_t source, std::size_t count) {
      for (std::size_t k = 0; k < count; ++k) {
        lines.push_back(line_of(source));
        columns.push_back(column_of(source));
      }
    };
    if (multi) {  // a newline right after the delimiter is not part of the string
      if (text_.substr(i, 2) == "\r\n")
        i += 2;
      else if (i < text_.size() && text_[i] == '\n')
        ++i;
    }
    while (i < text_.size()) {
      char c = text_[i];
      if (c == quote) {
        if (!multi) return true;
        // A run of quotes: three of them close the string, up to two before those belong to it.
        std::size_t run = 0;
        while (i + run < text_.size() && text_[i + run] == quote) ++run;
        if (run >= 3) {
          for (std::size_t k = 0; k < std::min<std::size_t>(run - 3, 2); ++k) emit(i + k, 1);
          return true;
        }
        for (std::size_t k = 0; k < run; ++k) emit(i + k, 1);
        i += run;
        continue;
      }
      if (!multi && c == '\n') return false;
      if (c == '\\' && !literal) {
        if (i + 1 >= text_.size()) return false;
        char e = text_[i + 1];
        std::size_t bytes = 1, length = 2;
        if (e == 'u' || e == 'U') {
          length = e == 'u' ? 6 : 10;
          if (i + length > text_.size()) return false;
          unsigned long cp = std::strtoul(std::string(text_.substr(i + 2, length - 2)).c_str(), nullptr, 16);
          bytes = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        } else if (multi && (e == ' ' || e == '\t' || e == '\n' || e == '\r')) {
          // A line-ending backslash: it and every blank and newline after it vanish.
          std::size_t j = i + 1;
          while (j < text_.size() &&
                 (text_[j] == ' ' || text_[j] == '\t' || text_[j] == '\n' || text_[j] == '\r'))
            ++j;
          i = j;
          continue;
        }
        emit(i, bytes);
        i += length;
        continue;
      }
      if (multi && c == '\r' && i + 1 < text_.size() && text_[i + 1] == '\n') {
        emit(i + 1, 1);  // TOML gives a newline for CRLF
        i += 2;
        continue;
      }
      emit(i, 1);
      ++i;
    }
    return false;
  }

  std::vector<Located> strings(const toml::node& node, std::string_view what) const {
    std::vector<Located> out;
    if (node.is_string()) {
      out.push_back(located(node, what));
      return out;
    }
    const auto* array = node.as_array();
    if (!array) fail(node, fmt::format("{} must be a list of strings", what));
    for (const auto& e : *array) out.push_back(located(e, fmt::format("each of {}", what)));
    return out;
  }

  double seconds(const toml::node& node, std::string_view what) const {
    std::optional<double> v = node.value<double>();
    if (!v || !std::isfinite(*v) || *v <= 0 || *v > 3600)
      fail(node, fmt::format("{} must be a number of seconds, more than 0 and at most 3600", what));
    return *v;
  }

  void exporter(const toml::node& node, const toml::key& key) {
    const auto* table = node.as_table();
    if (!table) fail(node, fmt::format("'{}' must be a table: write [{}]", key.str(), key.str()));
    for (auto [k_at, v_at] : in_file_order(*table)) {
      const toml::key& k = *k_at;
      const toml::node& v = *v_at;
      if (k == "listen") {
        Located l = located(v, "listen");
        if (!valid_listen(l.text))
          fail_at(l.origin, ErrorKind::bad_value,
                  fmt::format("listen '{}' is not HOST:PORT", spec::printable(l.text)),
                  "127.0.0.1:9464 serves this machine only, 0.0.0.0:9464 every interface");
        config_.listen = std::move(l.text);
      } else if (k == "read_timeout")
        config_.read_timeout = seconds(v, "read_timeout");
      else if (k == "metric_window")
        config_.metric_window = seconds(v, "metric_window");
      else
        unknown_key(k, "listen, read_timeout, metric_window");
    }
  }

  void metric(const toml::table& table) {
    metric::Definition d;
    bool has_name = false, has_expr = false;
    for (auto [k_at, v_at] : in_file_order(table)) {
      const toml::key& k = *k_at;
      const toml::node& v = *v_at;
      if (k == "name") {
        d.name = located(v, "a metric's name").text;
        has_name = true;
        if (d.name.empty() || d.name.find_first_of(",= \t") != std::string::npos)
          fail(v, "a metric's name must be a non-empty word (no commas, '=' or blanks)");
      } else if (k == "expr") {
        Located e = located(v, "a metric's expr");
        d.expr = std::move(e.text);
        d.origin = std::move(e.origin);
        has_expr = true;
      } else if (k == "unit") {
        d.scale_unit = located(v, "a metric's unit").text;
      } else if (k == "threshold") {
        d.threshold = located(v, "a metric's threshold").text;
      } else if (k == "description") {
        d.description = located(v, "a metric's description").text;
      } else if (k == "groups") {
        for (const auto& g : strings(v, "a metric's groups"))
          d.groups += (d.groups.empty() ? "" : ";") + g.text;
      } else {
        unknown_key(k, "name, expr, unit, threshold, description, groups");
      }
    }
    if (!has_name || !has_expr)
      fail_at(position(table.source().begin), ErrorKind::bad_value,
              fmt::format("a [[metric]] needs a name and an expr (this one has no {})",
                          has_name ? "expr" : "name"));
    // by a set of the names: a file of many metrics is read in linear time, not quadratic
    if (!metric_names_.insert(d.name).second)
      fail(*table.get("name"), fmt::format("metric '{}' is defined twice", spec::printable(d.name)));
    config_.metrics.push_back(std::move(d));
  }

  static bool label_name(std::string_view s) {
    if (s.empty() || s.starts_with("__")) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      bool ok =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (i > 0 && c >= '0' && c <= '9');
      if (!ok) return false;
    }
    return true;
  }

  void set(const toml::table& table) {
    SetConfig s;
    const toml::node* name = nullptr;
    int targets = 0;
    for (auto [k_at, v_at] : in_file_order(table)) {
      const toml::key& k = *k_at;
      const toml::node& v = *v_at;
      if (k == "name") {
        Located n = located(v, "a set's name");
        s.name = std::move(n.text);
        s.name_at = std::move(n.origin);
        name = &v;
        if (s.name.empty()) fail(v, "a set's name must not be empty");
      } else if (k == "events") {
        s.events = strings(v, "events");
      } else if (k == "metrics") {
        s.metrics = strings(v, "metrics");
      } else if (k == "cgroup" || k == "pid" || k == "command") {
        if (++targets > 1)
          fail_at(position(k.source().begin), ErrorKind::bad_value,
                  "a set has one target: cgroup, pid or command (none: the whole system)");
        target(k, v, s);
      } else if (k == "cpus") {
        s.cpus = located(v, "cpus");
      } else if (k == "aggregation") {
        aggregation(v, s);
      } else if (k == "labels") {
        labels(v, s);
      } else {
        unknown_key(k, "name, events, metrics, cgroup, pid, command, cpus, aggregation, labels");
      }
    }
    if (!name) fail_at(position(table.source().begin), ErrorKind::bad_value, "a [[set]] needs a name");
    check_set(s, *name);
    config_.sets.push_back(std::move(s));
  }

  // A set's one target: `cgroup`, `command` or `pid`.
  void target(const toml::key& k, const toml::node& v, SetConfig& s) const {
    if (k == "cgroup") {
      s.target = SetConfig::Target::cgroup;
      s.cgroup = located(v, "cgroup");
      if (s.cgroup.text.empty()) fail(v, "cgroup must name a cgroup (\"/\" is the root)");
    } else if (k == "command") {
      s.target = SetConfig::Target::command;
      s.command = located(v, "command");
      if (s.command.text.empty() || s.command.text.size() > 15 ||
          s.command.text.find('/') != std::string::npos)
        fail(v, "command is a process's name as /proc/PID/comm shows it: 1 to 15 characters, no '/'");
    } else {
      s.target = SetConfig::Target::pid;
      std::optional<std::int64_t> pid = v.value<std::int64_t>();
      if (!v.is_integer() || !pid || *pid < 1 || *pid > 4194304)
        fail(v, "pid must be a process id (an integer from 1 to 4194304)");
      s.pid = static_cast<int>(*pid);
    }
  }

  void aggregation(const toml::node& v, SetConfig& s) const {
    Located a = located(v, "aggregation");
    s.grouping_at = a.origin;
    static constexpr Grouping all[] = {Grouping::total, Grouping::cpu, Grouping::core, Grouping::socket};
    for (Grouping g : all)
      if (a.text == grouping_name(g)) {
        s.grouping = g;
        return;
      }
    fail_at(a.origin, ErrorKind::bad_value, fmt::format("unknown aggregation '{}'", spec::printable(a.text)),
            "aggregation is one of total, cpu, core, socket");
  }

  void labels(const toml::node& v, SetConfig& s) const {
    const auto* labels = v.as_table();
    if (!labels) fail(v, "labels must be a table: labels = { team = \"db\" }");
    for (auto [lk_at, lv_at] : in_file_order(*labels)) {
      const toml::key& lk = *lk_at;
      if (!label_name(lk.str()))
        fail_at(position(lk.source().begin), ErrorKind::bad_value,
                fmt::format("'{}' is not a label name", spec::printable(lk.str())),
                "a label name is letters, digits and '_', not starting with a digit or '__'");
      static constexpr std::string_view reserved[] = {
          "set",    "event", "pmu",     "cpu",  "core",  "die",    "socket", "metric",
          "cgroup", "pid",   "command", "unit", "errno", "reason", "job",    "instance"};
      if (std::find(std::begin(reserved), std::end(reserved), lk.str()) != std::end(reserved))
        fail_at(position(lk.source().begin), ErrorKind::bad_value,
                fmt::format("label '{}' is one the exporter sets itself", lk.str()), "choose another name");
      s.labels.emplace_back(std::string(lk.str()), located(*lv_at, "a label's value").text);
    }
    std::sort(s.labels.begin(), s.labels.end());
  }

  // What a set must satisfy as a whole, once all its keys are read.
  void check_set(const SetConfig& s, const toml::node& name) const {
    if (s.events.empty() && s.metrics.empty())
      fail_at(s.name_at, ErrorKind::bad_value,
              fmt::format("set '{}' has no events and no metrics", spec::printable(s.name)));
    for (const auto& other : config_.sets)
      if (other.name == s.name)
        fail(name, fmt::format("set '{}' is defined twice", spec::printable(s.name)),
             fmt::format("its first definition is at line {}", other.name_at.line));
    bool process = s.target == SetConfig::Target::pid || s.target == SetConfig::Target::command;
    if (!s.cpus.text.empty() && process)
      fail_at(s.cpus.origin, ErrorKind::bad_value,
              "cpus counts on CPUs: a process is counted wherever it runs");
    if (s.grouping != Grouping::total && process)
      fail_at(s.grouping_at, ErrorKind::bad_value,
              fmt::format("aggregation '{}' needs counts per CPU: a process is counted as one total",
                          grouping_name(s.grouping)));
  }
};

}  // namespace

ConfigError error_at(const Config& config, const Origin& origin, std::uint32_t offset, ErrorKind kind,
                     std::string_view message, std::string_view help) {
  return error_in(config.file, config.text, origin.line_of(offset), origin.column_of(offset), kind, message,
                  help);
}

ConfigError error_in(std::string_view file, std::string_view text, std::uint32_t line, std::uint32_t column,
                     ErrorKind kind, std::string_view message, std::string_view help) {
  std::string out = fmt::format("{}:{}:{}: error: {}\n", spec::printable(file), line, column, message);
  std::string_view source = line_text(text, line);
  if (!source.empty()) {
    // The line as written (control characters shown as '?'), the caret under the column: tabs
    // before it kept, so that it lines up wherever the terminal's tab stops are. A long line is shown
    // around the column, cut at characters, "..." where it was cut.
    constexpr std::size_t around = 100;
    std::size_t begin = column > around + 1 ? column - 1 - around : 0;
    while (begin > 0 && begin < source.size() && continuation(source[begin])) --begin;
    std::size_t end = std::min(source.size(), std::size_t{column} + around);
    while (end < source.size() && continuation(source[end])) ++end;
    std::string shown(begin > 0 ? "..." : ""), pad(begin > 0 ? "   " : "");
    for (std::size_t i = begin; i < end; ++i) {
      char c = source[i];
      shown += (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f ? '?' : c;
    }
    if (end < source.size()) shown += "...";
    for (std::size_t i = begin; i + 1 < column && i < source.size(); ++i) {
      if (continuation(source[i])) continue;
      pad += source[i] == '\t' ? '\t' : ' ';
    }
    std::string number = fmt::format("{}", line);
    out += fmt::format(" {} | {}\n {} | {}^\n", number, shown, std::string(number.size(), ' '), pad);
  }
  if (!help.empty()) out += fmt::format("help: {}\n", help);
  return ConfigError(kind, out);
}

bool valid_listen(std::string_view s) {
  auto colon = s.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == s.size() || s.size() - colon - 1 > 5)
    return false;
  unsigned port = 0;
  for (std::size_t i = colon + 1; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    port = port * 10 + static_cast<unsigned>(s[i] - '0');
  }
  std::string_view host = s.substr(0, colon);
  if (host.front() == '[') return host.size() > 2 && host.back() == ']' && port <= 65535;
  return host.find_first_of(" \t:,[]") == std::string_view::npos && port <= 65535;
}

Config parse_config(std::string_view text, const std::string& file) { return Parser(text, file).run(); }

std::string read_config_file(const std::string& path, std::string_view what) {
  // read(2) rather than a stream: a folder or an unreadable file is an error with its errno.
  auto fail = [&](const std::string& why) {
    return ConfigError(ErrorKind::io,
                       fmt::format("{}: error: cannot read {}: {}\n", spec::printable(path), what, why));
  };
  // Not blocking: a FIFO named as the configuration must not hold the reload (and the signals) in
  // open(2). Only a regular file is read, and only so much of it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw fail(std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw fail(std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw fail(std::strerror(EISDIR));
  if (!S_ISREG(st.st_mode)) throw fail("not a regular file");
  if (static_cast<std::uint64_t>(st.st_size) > max_config_bytes)
    throw fail(
        fmt::format("{} bytes, more than a configuration may have ({})", st.st_size, max_config_bytes));
  std::string text;
  char buf[65536];
  for (;;) {
    if (text.size() > max_config_bytes)  // grew while read
      throw fail(fmt::format("more than a configuration may have ({} bytes)", max_config_bytes));
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw fail(std::strerror(errno));
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

Config load_config(const std::string& path) { return parse_config(read_config_file(path), path); }

}  // namespace perfspec::exporter
