// SPDX-License-Identifier: MIT
#pragma once
// The bodies of records other than samples (internal to record/): kernel records between header and
// sample_id trailer, perf's own records after the header.
#include <cstdint>

#include "perfspec/record.hpp"
#include "record/cursor.hpp"

namespace perfspec::record::detail {

/// read_format's values, as a READ record and a sample's READ field lay them out.
ReadValues read_values(Cursor& c, std::uint64_t format);
/// The body of a kernel record of `type` (not a sample), `attr` the format its id names.
void kernel_body(Cursor& c, std::uint32_t type, std::uint16_t misc, const Attr& attr, Body& body);
/// The body of one of perf's own records (PERF_RECORD_HEADER_ATTR and after).
void user_body(Cursor& c, std::uint32_t type, std::uint16_t misc, Body& body);

}  // namespace perfspec::record::detail
