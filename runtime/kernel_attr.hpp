// SPDX-License-Identifier: MIT
#pragma once
// perfspec::Attr -> the kernel's struct perf_event_attr (internal to runtime/).
#include <linux/perf_event.h>

#include "perfspec/attr.hpp"

namespace perfspec::runtime {

/// The layout passed to the kernel: the system header's struct plus config3 when the header predates
/// Linux 6.3 (PERF_ATTR_SIZE_VER8, 136 bytes).
struct KernelAttr {
  perf_event_attr attr;
#ifndef PERF_ATTR_SIZE_VER8
  __u64 config3;
#endif
};
static_assert(sizeof(KernelAttr) == attr_size_ver8, "perf_event_attr layout changed");

KernelAttr to_kernel(const Attr& a);

}  // namespace perfspec::runtime
