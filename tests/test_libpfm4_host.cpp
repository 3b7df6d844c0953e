// SPDX-License-Identifier: MIT
// The libpfm4 provider without LIBPFM_FORCE_PMU (ctest's unit.libpfm4.host unsets it): libpfm4's model
// is then this host's, so a Machine told it is another CPU (a cpuid no CPU has) is not asked
// libpfm4's names, and the error says why and what picks a model.
#include <doctest/doctest.h>

#include "perfspec/perfspec.hpp"
#include "perfspec/tables.hpp"
#include "spec/libpfm4.hpp"
#include "tests/support.hpp"

using namespace perfspec;

TEST_CASE("libpfm4 is not asked for a machine of another CPU unless LIBPFM_FORCE_PMU picks the model") {
  REQUIRE(spec::pfm::available());
  REQUIRE_FALSE(spec::pfm::models().forced);
  spec::MachineOptions o;
  o.cpuid = "GenuineIntel-6-FF-F";  // no CPU's
  spec::Machine other(test::fixture("intel_skx"), o);
  CHECK_FALSE(spec::pfm::describes(other));
  CHECK(test::error_of("skx::INST_RETIRED:ANY_P", other) ==
        "event syntax error: 'skx::INST_RETIRED:ANY_P'\n"
        "                     \\___ unknown event 'skx::INST_RETIRED:ANY_P'\n"
        "help: libpfm4 knows this host's CPU, and the machine here is another (GenuineIntel-6-FF-F): "
        "LIBPFM_FORCE_PMU names the model for libpfm4 to take (e.g. 'skx', 'amd64_fam19h_zen3')\n");
  // this host's own cpuid (read from /proc, or given as it is): libpfm4's model is its
  CHECK(spec::pfm::describes(spec::Machine(test::fixture("intel_skx"))));
  o.cpuid = spec::detect_cpuid();
  CHECK(spec::pfm::describes(spec::Machine(test::fixture("intel_skx"), o)));
}
