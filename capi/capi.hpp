// SPDX-License-Identifier: MIT
#pragma once
// What the C API's files share: the handles they both use, and the rule that no exception crosses
// the API (an error code, and the message perfspec_last_error() returns). Internal to capi/.
#include <string>
#include <string_view>

#include "perfspec/perfspec.h"
#include "perfspec/perfspec.hpp"

struct perfspec_perf_data {
  perfspec::record::PerfData file;
  perfspec::record::Record current;
  const perfspec::record::Record* visiting = nullptr;  // during perfspec_perf_data_walk: its record

  const perfspec::record::Record& record() const { return visiting ? *visiting : current; }
};

namespace perfspec::capi {

/// Keeps the error for perfspec_last_error() and friends; returns `code`.
int fail(int code, std::string message, std::string rendered = {}, long offset = -1);
/// A success: no error kept.
void clear_error();
int code_of(perfspec::ErrorKind kind);

// Run `f`, turning every exception into an error code and a message.
template <typename F> int guarded(F&& f, std::string_view text = {}) {
  try {
    f();
    clear_error();
    return PERFSPEC_OK;
  } catch (const perfspec::metric::MetricError& e) {
    // Drawn under the metric's text (which may be another metric than the one asked for), the offset
    // in that text.
    return fail(code_of(e.kind()), e.message(), e.rendered(),
                e.positioned() ? static_cast<long>(e.span().begin) : -1);
  } catch (const perfspec::Error& e) {
    return fail(code_of(e.kind()), e.message(), perfspec::render(e, text),
                e.positioned() ? static_cast<long>(e.span().begin) : -1);
  } catch (const std::bad_alloc&) {
    return fail(PERFSPEC_E_SYSTEM, "out of memory");
  } catch (const std::exception& e) {
    return fail(PERFSPEC_E_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(PERFSPEC_E_INTERNAL, "internal error");
  }
}

}  // namespace perfspec::capi
