// SPDX-License-Identifier: MIT
#pragma once
// What a tracefs format file must look like before libtraceevent 1.7.1 (Debian 12's) may parse it,
// and what a payload must hold before it may print it (print_fault, below); the faults no rule here
// foresees are caught by parsing in a child process first (parse_in_child, below).
//
// The format files of a perf.data file are the file's author's text, and libtraceevent 1.7.1 is not
// safe on all of them:
// - sizeof(int), sizeof(unsigned int), sizeof([unsigned] long long) and sizeof(REC->field) of a
//   field that is not an array read a freed token and free it twice (process_sizeof, fixed upstream
//   in 1.7.2). The guard writes the size these give in a fixed libtraceevent in their place ("4",
//   "8", the field's size), and a sizeof that a fixed libtraceevent refuses as a type it does not
//   know, so that libtraceevent refuses it there too, as it would.
// - REC->name of no field of the event, read while __print_flags or __print_symbolic has just
//   begun, dereferences a null field (process_entry; libtraceevent keeps "a flag field is next" in a
//   global). Such a file is refused, with the line.
// - Parsing is not thread-safe (those globals): every parse of a format happens under
//   format_parse_mutex(), and the guard first parses a format of its own whose print fmt reads a
//   field twice, which leaves neither global set by an earlier file that failed half-way.
// The event's fields are libtraceevent's own: the guard parses the file with an empty print fmt
// first (in a tep_handle of its own), then reads the print fmt against them.
// The tokens are read as libtraceevent reads them: words of letters, digits and '_'; strings in
// single or double quotes, a backslash keeping the next quote; '->' one token; the newlines and
// spaces of the print fmt between tokens.
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>

struct tep_event;

namespace perfspec::record {

/// Held around every tep_parse_format (libtraceevent's parser keeps state in globals).
std::mutex& format_parse_mutex();

/// The text to give libtraceevent for `format`, a format file of `system`: `format` itself, or with
/// the sizeof()s libtraceevent 1.7.1 cannot take replaced as above. Throws perfspec::Error
/// (bad_value) for a file it must not be given. The caller holds format_parse_mutex().
std::string guard_format(std::string_view format, std::string_view system);

/// The rest of libtraceevent 1.7.1's faults on bad text cannot all be foreseen (a null token after
/// "[" at the end of a field, a null operand after "?:" and an operator it does not know, a constant
/// division by zero, ...). So the files are parsed first in a child process, a copy of this one made
/// by fork(2) in which the same parse of the same text meets the same memory: parse(i) for each i
/// below n, in order, the child telling which it begins. The result is the index of the file whose
/// parse ended the child, and how ("SIGSEGV", "exit status 1"; a parse taking longer than `timeout`
/// is killed), or nullopt when every parse returned (what parse(i) throws is the caller's to see
/// again in this process). Without a child (fork fails), nullopt. The caller holds
/// format_parse_mutex(), so no other thread is inside libtraceevent when the child is made.
struct ChildFault {
  std::size_t index = 0;
  std::string how;
};
std::optional<ChildFault> parse_in_child(std::size_t n, const std::function<void(std::size_t)>& parse,
                                         int timeout_ms = 10000);

/// Why libtraceevent 1.7.1 must not print `event` on this payload (the record's raw bytes, its fields
/// already checked against them), or nullopt. Its printing reads what the print fmt says with no
/// bound: __print_hex, __print_hex_str and __print_array read as many bytes as their length argument
/// gives, an index past 2 GiB passes its own check, a field argument that is neither a field nor a
/// dynamic array is read as one, and '/' and '%' divide by what the payload holds. The print fmt's
/// arguments are evaluated here as libtraceevent evaluates them (eval_num_arg, print_str_arg: the
/// branch of a ?: the payload takes), and a read past the payload, a division by zero, or a length
/// that cannot be known here (a symbol, an address) is the answer.
std::optional<std::string> print_fault(const tep_event* event, std::span<const std::byte> raw);

}  // namespace perfspec::record
