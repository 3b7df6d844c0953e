// SPDX-License-Identifier: MIT
#pragma once
// The `perfspec` command's exit status for an error, by its kind: scripts can tell their own event
// string from their command line from the machine they ran on.
#include "perfspec/error.hpp"

namespace perfspec::tools {

/// 1: the event string (syntax, unknown name, bad value); 2: the command line (usage); 3: the machine
/// (a malformed sysfs file or event table, a file that cannot be read, a permission).
inline int exit_status(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::syntax:
    case ErrorKind::unknown_name:
    case ErrorKind::bad_value: return 1;
    case ErrorKind::usage: return 2;
    case ErrorKind::machine:
    case ErrorKind::io:
    case ErrorKind::permission: return 3;
  }
  return 1;
}

}  // namespace perfspec::tools
