// SPDX-License-Identifier: MIT
#pragma once
// perfspec: parse, resolve and print Linux perf event strings.
#include "perfspec/ast.hpp"
#include "perfspec/attr.hpp"
#include "perfspec/catalog.hpp"
#include "perfspec/decode.hpp"
#include "perfspec/error.hpp"
#include "perfspec/event_set.hpp"
#include "perfspec/event_source.hpp"
#include "perfspec/metric.hpp"
#include "perfspec/parse.hpp"
#include "perfspec/print.hpp"
#include "perfspec/resolve.hpp"
#include "perfspec/runtime.hpp"
#include "perfspec/sampling.hpp"
#include "perfspec/spec.hpp"
#include "perfspec/tables.hpp"
