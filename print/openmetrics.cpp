// SPDX-License-Identifier: MIT
#include "print/openmetrics.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <optional>
#include <ostream>
#include <string>

#include <fmt/format.h>

namespace perfspec {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

constexpr double two_to_53 = 9007199254740992.0;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

/// Backslash, double quote and line feed escaped as the spec's escaped-string says.
void append_escaped(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '\\': out.append("\\\\"); break;
      case '"': out.append("\\\""); break;
      case '\n': out.append("\\n"); break;
      default: out.push_back(c);
    }
  }
}

bool append_non_finite(std::string& out, double v) {
  if (std::isnan(v)) {
    out.append("NaN");
  } else if (std::isinf(v)) {
    out.append(v > 0 ? "+Inf" : "-Inf");
  } else {
    return false;
  }
  return true;
}

/// A sample's value: an integer as one, anything else in its shortest exact form.
void append_value(std::string& out, double v) {
  if (append_non_finite(out, v)) return;
  if (std::fabs(v) < two_to_53 && v == std::trunc(v))
    fmt::format_to(std::back_inserter(out), "{}", static_cast<std::int64_t>(v));
  else
    fmt::format_to(std::back_inserter(out), "{}", v);
}

/// The spec's canonical number for le and quantile labels: Go's %g of the shortest exact digits
/// (exponent form below 1e-4 and from 1e+6, with at least two exponent digits), ".0" added when
/// that has neither a point nor an exponent. Example: 1 -> "1.0", 1e-05 -> "1e-05", 1e6 -> "1e+06".
void append_canonical(std::string& out, double v) {
  if (append_non_finite(out, v)) return;
  // The shortest digits, as d.ddde±xx.
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view s(buf, static_cast<std::size_t>(result.ptr - buf));
  if (!s.empty() && s.front() == '-') {
    out.push_back('-');
    s.remove_prefix(1);
  }
  auto e = s.find('e');
  if (e == std::string_view::npos || e == 0 ||
      e + 2 >= s.size()) {  // not what to_chars writes; keep it readable
    out.append(s);
    return;
  }
  std::string digits;
  for (char c : s.substr(0, e))
    if (c != '.') digits.push_back(c);
  std::string_view exp_text = s.substr(e + 2);
  int exp = 0;
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exp);
  if (s[e + 1] == '-') exp = -exp;

  if (exp < -4 || exp >= 6) {
    out.push_back(digits[0]);
    if (digits.size() > 1) {
      out.push_back('.');
      out.append(digits, 1);
    }
    fmt::format_to(std::back_inserter(out), "e{}{:02}", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  } else if (exp < 0) {
    out.append("0.");
    out.append(static_cast<std::size_t>(-exp - 1), '0');
    out.append(digits);
  } else if (digits.size() <= static_cast<std::size_t>(exp) + 1) {
    out.append(digits);
    out.append(static_cast<std::size_t>(exp) + 1 - digits.size(), '0');
    out.append(".0");
  } else {
    out.append(digits, 0, static_cast<std::size_t>(exp) + 1);
    out.push_back('.');
    out.append(digits, static_cast<std::size_t>(exp) + 1);
  }
}

/// Milliseconds as seconds: "1520879607.789", "12.5", "3".
void append_timestamp(std::string& out, std::int64_t ms) {
  std::uint64_t magnitude = static_cast<std::uint64_t>(ms);
  if (ms < 0) {
    out.push_back('-');
    magnitude = 0 - magnitude;
  }
  fmt::format_to(std::back_inserter(out), "{}", magnitude / 1000);
  if (auto fraction = magnitude % 1000; fraction != 0) {
    auto digits = fmt::format(".{:03}", fraction);
    while (digits.back() == '0') digits.pop_back();
    out.append(digits);
  }
}

/// A sample line up to its value: name, suffix, the metric's labels and one more label when
/// extra_name is not empty (le, quantile), then a space.
void append_head(std::string& out, std::string_view name, std::string_view suffix, const ClientMetric& metric,
                 std::string_view extra_name = {}, std::string_view extra_value = {}) {
  out.append(name);
  out.append(suffix);
  if (!metric.label.empty() || !extra_name.empty()) {
    out.push_back('{');
    bool first = true;
    auto label = [&](std::string_view label_name, std::string_view value) {
      if (!first) out.push_back(',');
      first = false;
      out.append(label_name);
      out.append("=\"");
      append_escaped(out, value);
      out.push_back('"');
    };
    for (const auto& l : metric.label) label(l.name, l.value);
    if (!extra_name.empty()) label(extra_name, extra_value);
    out.push_back('}');
  }
  out.push_back(' ');
}

/// The end of a sample line: the timestamp when there is one.
void append_tail(std::string& out, const ClientMetric& metric) {
  if (metric.timestamp_ms != 0) {
    out.push_back(' ');
    append_timestamp(out, metric.timestamp_ms);
  }
  out.push_back('\n');
}

void append_sample(std::string& out, std::string_view name, std::string_view suffix,
                   const ClientMetric& metric, double value) {
  append_head(out, name, suffix, metric);
  append_value(out, value);
  append_tail(out, metric);
}

void append_count(std::string& out, std::string_view name, std::string_view suffix,
                  const ClientMetric& metric, std::uint64_t count, std::string_view extra_name = {},
                  std::string_view extra_value = {}) {
  append_head(out, name, suffix, metric, extra_name, extra_value);
  fmt::format_to(std::back_inserter(out), "{}", count);
  append_tail(out, metric);
}

void append_summary(std::string& out, std::string_view name, const ClientMetric& metric) {
  std::string quantile;
  for (const auto& q : metric.summary.quantile) {
    quantile.clear();
    append_canonical(quantile, q.quantile);
    append_head(out, name, "", metric, "quantile", quantile);
    append_value(out, q.value);
    append_tail(out, metric);
  }
  append_count(out, name, "_count", metric, metric.summary.sample_count);
  append_sample(out, name, "_sum", metric, metric.summary.sample_sum);
}

void append_histogram(std::string& out, std::string_view name, const ClientMetric& metric) {
  const auto& histogram = metric.histogram;
  std::string le;
  bool negative = false;
  bool last_is_inf = false;
  for (const auto& bucket : histogram.bucket) {
    le.clear();
    append_canonical(le, bucket.upper_bound);
    append_count(out, name, "_bucket", metric, bucket.cumulative_count, "le", le);
    negative = negative || bucket.upper_bound < 0;
    last_is_inf = std::isinf(bucket.upper_bound) && bucket.upper_bound > 0;
  }
  if (!last_is_inf) append_count(out, name, "_bucket", metric, histogram.sample_count, "le", "+Inf");
  // A sum only without negative bounds, and the count only with the sum.
  if (negative) return;
  append_count(out, name, "_count", metric, histogram.sample_count);
  append_sample(out, name, "_sum", metric, histogram.sample_sum);
}

bool is_info(const MetricFamily& family) {
  return family.type == MetricType::Gauge && ends_with(family.name, "_info") &&
         std::all_of(family.metric.begin(), family.metric.end(),
                     [](const ClientMetric& m) { return m.gauge.value == 1.0; });
}

void append_family(std::string& out, const MetricFamily& family) {
  std::string_view name = family.name;
  std::string_view type = "unknown";
  switch (family.type) {
    case MetricType::Counter:
      type = "counter";
      if (ends_with(name, "_total")) name.remove_suffix(6);
      break;
    case MetricType::Gauge:
      type = "gauge";
      if (is_info(family)) {
        type = "info";
        name.remove_suffix(5);
      }
      break;
    case MetricType::Summary: type = "summary"; break;
    case MetricType::Histogram: type = "histogram"; break;
    case MetricType::Untyped: break;
  }
  fmt::format_to(std::back_inserter(out), "# TYPE {} {}\n", name, type);
  if (!family.help.empty()) {
    fmt::format_to(std::back_inserter(out), "# HELP {} ", name);
    append_escaped(out, family.help);
    out.push_back('\n');
  }
  for (const auto& metric : family.metric) {
    switch (family.type) {
      case MetricType::Counter: append_sample(out, name, "_total", metric, metric.counter.value); break;
      case MetricType::Gauge:
        append_sample(out, name, type == "info" ? "_info" : "", metric, metric.gauge.value);
        break;
      case MetricType::Summary: append_summary(out, name, metric); break;
      case MetricType::Histogram: append_histogram(out, name, metric); break;
      case MetricType::Untyped: append_sample(out, name, "", metric, metric.untyped.value); break;
    }
  }
}

// The Accept header (RFC 9110, sections 5.6 and 12.5.1).

bool is_ows(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
  return s;
}

bool is_tchar(char c) {
  constexpr std::string_view others = "!#$%&'*+-.^_`|~";
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         others.find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar); }

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

/// Calls f with each part of s between separators that are not inside a quoted string.
template <class F> void split_unquoted(std::string_view s, char separator, F&& f) {
  std::size_t start = 0;
  bool quoted = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quoted) {
      if (c == '\\')
        ++i;  // the escaped character (past the end, the loop ends)
      else if (c == '"')
        quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == separator) {
      f(s.substr(start, i - start));
      start = i + 1;
    }
  }
  f(s.substr(start));
}

/// A parameter's value: a token, or a quoted string unescaped; nullopt when it is neither.
std::optional<std::string> parameter_value(std::string_view v) {
  if (v.empty() || v.front() != '"') return is_token(v) ? std::optional<std::string>(v) : std::nullopt;
  std::string value;
  for (std::size_t i = 1; i < v.size(); ++i) {
    if (v[i] == '"') return i + 1 == v.size() ? std::optional<std::string>(std::move(value)) : std::nullopt;
    if (v[i] == '\\' && ++i == v.size()) break;
    value.push_back(v[i]);
  }
  return std::nullopt;  // no closing quote
}

/// A qvalue in thousandths: "0", "0.", "0.75", "1", "1.000"; nullopt for anything else.
std::optional<int> qvalue(std::string_view v) {
  if (v.empty() || (v[0] != '0' && v[0] != '1')) return std::nullopt;
  std::string_view decimals;
  if (v.size() > 1) {
    if (v[1] != '.' || v.size() > 5) return std::nullopt;
    decimals = v.substr(2);
  }
  int thousandths = 0;
  int scale = 100;
  for (char c : decimals) {
    if (c < '0' || c > '9') return std::nullopt;
    thousandths += (c - '0') * scale;
    scale /= 10;
  }
  if (v[0] == '1') return thousandths == 0 ? std::optional<int>(1000) : std::nullopt;
  return thousandths;
}

struct MediaRange {
  std::string_view type, subtype;
  std::optional<std::string> version;
  int q = 1000;
};

std::optional<MediaRange> media_range(std::string_view element) {
  MediaRange range;
  bool first = true, valid = true, weighed = false;
  split_unquoted(element, ';', [&](std::string_view part) {
    part = trim(part);
    if (!valid) return;
    if (first) {
      first = false;
      auto slash = part.find('/');
      if (slash == std::string_view::npos) {
        valid = false;
        return;
      }
      range.type = part.substr(0, slash);
      range.subtype = part.substr(slash + 1);
      valid = is_token(range.type) && is_token(range.subtype) && (range.type != "*" || range.subtype == "*");
      return;
    }
    if (part.empty()) return;  // "a/b;;q=1": nothing between the semicolons
    auto equals = part.find('=');
    if (equals == std::string_view::npos) {
      valid = false;
      return;
    }
    auto name = trim(part.substr(0, equals));
    auto value = parameter_value(trim(part.substr(equals + 1)));
    if (!is_token(name) || !value) {
      valid = false;
    } else if (weighed) {
      // after the weight: accept-ext, of no meaning here
    } else if (iequals(name, "q")) {
      auto q = qvalue(*value);
      valid = q.has_value();
      range.q = q.value_or(0);
      weighed = true;
    } else if (iequals(name, "version")) {
      valid = !range.version;  // twice is not a media type
      range.version = std::move(value);
    }
  });
  if (!valid || first) return std::nullopt;
  return range;
}

/// A format the exporter gives, and the versions of it a range may name.
struct Offer {
  std::string_view type, subtype, version, alias;
};

/// How specifically a range names an offer: -1 not at all, 0 */*, 1 type/*, 2 without version,
/// 3 the offer's alias version, 4 its version.
int specificity(const MediaRange& range, const Offer& offer) {
  if (range.type == "*") return 0;
  if (!iequals(range.type, offer.type)) return -1;
  if (range.subtype == "*") return 1;
  if (!iequals(range.subtype, offer.subtype)) return -1;
  if (!range.version) return 2;
  if (*range.version == offer.version) return 4;
  if (!offer.alias.empty() && *range.version == offer.alias) return 3;
  return -1;
}

/// An offer's weight: that of the most specific range naming it (the highest of equally specific
/// ones), 0 when none does.
struct Weight {
  int best = -1;  ///< the specificity of the range q is from
  int q = 0;
  void consider(const MediaRange& range, const Offer& offer) {
    int s = specificity(range, offer);
    if (s < 0 || s < best) return;
    q = s > best ? range.q : std::max(q, range.q);
    best = s;
  }
};

}  // namespace

void OpenMetricsSerializer::Serialize(std::ostream& out, const std::vector<MetricFamily>& families) const {
  std::string text;
  for (const auto& family : families) append_family(text, family);
  text.append("# EOF\n");
  out << text;
}

bool wants_openmetrics(std::string_view accept_header) {
  constexpr Offer openmetrics{"application", "openmetrics-text", "1.0.0", "0.0.1"};
  constexpr Offer text{"text", "plain", "0.0.4", ""};
  Weight openmetrics_weight, text_weight;
  split_unquoted(accept_header, ',', [&](std::string_view element) {
    if (trim(element).empty()) return;
    if (auto range = media_range(element)) {
      openmetrics_weight.consider(*range, openmetrics);
      text_weight.consider(*range, text);
    }
  });
  return openmetrics_weight.q > 0 && openmetrics_weight.q > text_weight.q;
}

}  // namespace perfspec
