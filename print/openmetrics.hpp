// SPDX-License-Identifier: MIT
#pragma once
// OpenMetrics 1.0.0 text for the exporter, beside prometheus-cpp's text format 0.0.4
// (prometheus::TextSerializer), and the Accept-header test that picks between the two.
#include <iosfwd>
#include <string_view>
#include <vector>

#include <prometheus/metric_family.h>
#include <prometheus/serializer.h>

namespace perfspec {

/// The Content-Type of what OpenMetricsSerializer writes.
constexpr std::string_view openmetrics_content_type =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// prometheus-cpp's metric families as OpenMetrics 1.0.0 text, ending with "# EOF\n".
///
/// Each family is a "# TYPE" line, a "# HELP" line when its help is not empty (no "# UNIT": the
/// families carry no unit), then its samples. HELP text and label values escape backslash, double
/// quote and line feed as \\, \" and \n. Family and label names are written as given: they are
/// assumed valid (prometheus-cpp's registry checks them), and strings are assumed UTF-8.
///
/// - Counter: the family is named the text-format way, with "_total"; the TYPE and HELP lines name
///   it without, and its samples are "<name>_total" (a name without "_total" gets it on its samples).
/// - Gauge: as is, except that a gauge named "<name>_info" whose values are all exactly 1 (so also
///   one with no metrics) is type info: "# TYPE <name> info" and samples "<name>_info{...} 1".
/// - Untyped: type unknown.
/// - Summary: "<name>{...,quantile="q"}" per quantile, then "<name>_count" and "<name>_sum".
/// - Histogram: "<name>_bucket{...,le="b"}" per bucket, and one with le="+Inf" (the count) when the
///   last is not +Inf, then "<name>_count" and "<name>_sum"; with a negative bucket bound neither
///   (the spec forbids a sum then, and a count only comes with a sum).
///
/// Values: integers below 2^53 in magnitude as integers ("12345"), others in the shortest form that
/// reads back exactly ("0.5", "1e+300"), and "NaN", "+Inf", "-Inf". The quantile and le labels
/// take the spec's canonical form (Go's %g, with ".0" added to integers: "1.0", "0.25", "1e+06").
/// A non-zero timestamp_ms follows the value as seconds ("1520879607.789").
///
/// Example: a counter family "requests_total" with one metric {path="/"} of value 3 gives
///   # TYPE requests counter
///   requests_total{path="/"} 3
///   # EOF
class OpenMetricsSerializer : public prometheus::Serializer {
 public:
  using prometheus::Serializer::Serialize;
  void Serialize(std::ostream& out, const std::vector<prometheus::MetricFamily>& families) const override;
};

/// True when an HTTP Accept header prefers OpenMetrics (application/openmetrics-text) to the text
/// format 0.0.4 (text/plain), the two formats the exporter can give.
///
/// The header is read as RFC 9110 says: comma-separated media ranges with ";"-separated parameters
/// (values may be quoted), each range's weight from "q=" (0 to 1, at most 3 decimals; 1 without),
/// and each format weighted by the most specific range that names it: type/subtype with a version
/// it has, then type/subtype without a version, then type/*, then */*. OpenMetrics matches
/// version 1.0.0, or 0.0.1 (Prometheus 2.x asks for it, and its parser reads 1.0.0 text), a little
/// less specifically than 1.0.0; text/plain matches version 0.0.4. Other parameters
/// (charset, escaping) are not looked at. A range that does not parse (a bad token, a "q=" that is
/// not a qvalue, a parameter without "=") is skipped, and so is any other version.
/// OpenMetrics wins only with a weight above zero and above text's: on a tie (as with "*/*"), with
/// an empty header, or when neither is acceptable, the answer is false, text being the default.
///
/// Example: wants_openmetrics("application/openmetrics-text;version=1.0.0,text/plain;q=0.5") is true;
/// wants_openmetrics("*/*") and wants_openmetrics("") are false.
bool wants_openmetrics(std::string_view accept_header);

}  // namespace perfspec
