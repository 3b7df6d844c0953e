// SPDX-License-Identifier: MIT
// Fuzz target: metric expressions (perfspec::metric::parse, perf's MetricExpr language).
//
// An expression that parses must round-trip: its canonical text (to_string) parses to the same tree,
// and that tree prints the same text again; every node's span lies within the input and within its
// parent's. A violation aborts (a logic bug). perfspec::Error is the expected rejection of bad input,
// always positioned within the input (or just past its end); it is rendered with and without an origin.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "perfspec/metric.hpp"

namespace {

using perfspec::metric::Expr;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "metric invariant violated: %s\n", what);
    std::abort();
  }
}

bool same(const Expr& a, const Expr& b) {
  if (a.kind != b.kind || a.args.size() != b.args.size() || a.name != b.name || a.text != b.text)
    return false;
  if (a.kind == Expr::Kind::number && a.number != b.number) return false;
  if (a.kind == Expr::Kind::binary && a.op != b.op) return false;
  if (a.kind == Expr::Kind::call && a.fn != b.fn) return false;
  for (std::size_t i = 0; i < a.args.size(); ++i)
    if (!same(a.args[i], b.args[i])) return false;
  return true;
}

void check_spans(const Expr& e, perfspec::Span outer) {
  check(e.span.begin < e.span.end, "a node's span is not empty");
  check(outer.begin <= e.span.begin && e.span.end <= outer.end, "a node's span lies within its parent's");
  for (const auto& a : e.args) check_spans(a, e.span);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Expr e;
  try {
    e = perfspec::metric::parse(text);
  } catch (const perfspec::Error& err) {
    check(err.positioned(), "a syntax error has a position");
    check(err.span().begin <= text.size(), "a syntax error points into the input");
    (void)perfspec::metric::render(err, "fuzz", text);
    (void)perfspec::metric::render(err, "fuzz", text, perfspec::Origin{"fuzz.json", 3, 20});
    return 0;
  }
  check_spans(e, perfspec::Span{0, static_cast<std::uint32_t>(text.size())});
  std::string canonical = perfspec::metric::to_string(e);
  Expr again;
  try {
    again = perfspec::metric::parse(canonical);
  } catch (const perfspec::Error& err) {
    std::fprintf(stderr, "canonical text '%s' does not parse: %s\n", canonical.c_str(), err.what());
    std::abort();
  }
  check(same(e, again), "the canonical text parses to the same tree");
  check(perfspec::metric::to_string(again) == canonical, "the canonical text is a fixed point");
  return 0;
}
