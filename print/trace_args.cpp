// SPDX-License-Identifier: MIT
// perf trace's argument printers (perf 6.12's builtin-trace.c and trace/beauty/): the rule by a
// field's type and name, and the system calls whose arguments perf names. The flag and value names
// are the kernel's UAPI constants (linux/mman.h, fcntl.h, futex.h, ...), written as perf prints them,
// without their prefixes.
#include "print/trace_args.hpp"
#include "print/trace_flags.hpp"

#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace perfspec::trace_detail {

namespace {

enum class Fmt : std::uint8_t {
  generic,  // by the field's type and name
  dec,
  int32,
  hex,
  ptr,
  fd,
  fdat,
  close_fd,
  filename,
  pid,
  mode,
  accmode,
  open_flags,
  mmap_prot,
  mmap_flags,
  mremap_flags,
  madvise,
  futex_op,
  signum,
  getrandom,
  fs_at_flags,
  waitid,
  pipe_flags,
  clone_flags,
  values,
  bits,
};

struct ArgFmt {
  Fmt fmt = Fmt::generic;
  const Values* values = nullptr;
  const Bits* bits = nullptr;
  bool show_zero = false;
};
struct SyscallFmt {
  std::string_view name;
  ReturnStyle ret = ReturnStyle::decimal;
  std::vector<std::pair<int, ArgFmt>> args;
};

ArgFmt f(Fmt fmt, bool show_zero = false) { return {fmt, nullptr, nullptr, show_zero}; }
ArgFmt v(const Values& values) { return {Fmt::values, &values, nullptr, false}; }
ArgFmt b(const Bits& bits) { return {Fmt::bits, nullptr, &bits, false}; }

// perf 6.12's syscall_fmts, for the arguments whose printers are here; sorted by name.
const std::vector<SyscallFmt>& syscall_fmts() {
  static const std::vector<SyscallFmt> all = {
      {"access", {}, {{1, f(Fmt::accmode)}}},
      {"arch_prctl", {}, {{0, f(Fmt::values)}, {1, f(Fmt::ptr)}}},
      {"bind", {}, {{0, f(Fmt::int32)}, {2, f(Fmt::int32)}}},
      {"brk", ReturnStyle::hex, {{0, f(Fmt::ptr)}}},
      {"clock_gettime", {}, {{0, v(clockids)}}},
      {"clone",
       ReturnStyle::pid,
       {{0, f(Fmt::clone_flags)}, {1, f(Fmt::hex)}, {2, f(Fmt::hex)}, {3, f(Fmt::hex)}, {4, f(Fmt::hex)}}},
      {"close", {}, {{0, f(Fmt::close_fd)}}},
      {"connect", {}, {{0, f(Fmt::int32)}, {2, f(Fmt::int32)}}},
      {"epoll_ctl", {}, {{1, v(epoll_ctl_ops)}}},
      {"faccessat", {}, {{0, f(Fmt::fdat)}, {1, f(Fmt::filename)}, {2, f(Fmt::accmode)}}},
      {"faccessat2", {}, {{0, f(Fmt::fdat)}, {1, f(Fmt::filename)}, {2, f(Fmt::accmode)}}},
      {"fchmodat", {}, {{0, f(Fmt::fdat)}}},
      {"fchownat", {}, {{0, f(Fmt::fdat)}}},
      {"futex", {}, {{1, f(Fmt::futex_op)}}},
      {"futimesat", {}, {{0, f(Fmt::fdat)}}},
      {"getitimer", {}, {{0, v(itimers)}}},
      {"getpgid", ReturnStyle::pid, {}},
      {"getpid", ReturnStyle::pid, {}},
      {"getppid", ReturnStyle::pid, {}},
      {"getrandom", {}, {{2, f(Fmt::getrandom)}}},
      {"getrlimit", {}, {{0, v(rlimit_resources)}}},
      {"gettid", ReturnStyle::pid, {}},
      {"ioctl", {}, {{2, f(Fmt::hex)}}},
      {"kill", {}, {{1, f(Fmt::signum)}}},
      {"linkat", {}, {{0, f(Fmt::fdat)}}},
      {"lseek", {}, {{2, v(whences)}}},
      {"madvise", {}, {{0, f(Fmt::hex)}, {2, f(Fmt::madvise)}}},
      {"mkdirat", {}, {{0, f(Fmt::fdat)}}},
      {"mknodat", {}, {{0, f(Fmt::fdat)}}},
      {"mmap", ReturnStyle::hex, {{2, f(Fmt::mmap_prot, true)}, {3, f(Fmt::mmap_flags)}, {5, f(Fmt::hex)}}},
      {"mprotect", {}, {{0, f(Fmt::hex)}, {2, f(Fmt::mmap_prot, true)}}},
      {"mremap", ReturnStyle::hex, {{3, f(Fmt::mremap_flags)}}},
      {"name_to_handle_at", {}, {{0, f(Fmt::fdat)}}},
      {"newfstatat", {}, {{0, f(Fmt::fdat)}, {1, f(Fmt::filename)}, {3, b(fs_at_flags)}}},
      {"open", {}, {{1, f(Fmt::open_flags)}}},
      {"open_by_handle_at", {}, {{0, f(Fmt::fdat)}, {2, f(Fmt::open_flags)}}},
      {"openat", {}, {{0, f(Fmt::fdat)}, {2, f(Fmt::open_flags)}}},
      {"perf_event_open", {}, {{2, f(Fmt::int32)}, {3, f(Fmt::fd)}}},
      {"pipe2", {}, {{1, f(Fmt::pipe_flags)}}},
      {"pkey_mprotect", {}, {{0, f(Fmt::hex)}, {2, f(Fmt::mmap_prot, true)}, {3, f(Fmt::int32)}}},
      {"poll", ReturnStyle::timeout, {}},
      {"ppoll", ReturnStyle::timeout, {}},
      {"prlimit64", {}, {{1, v(rlimit_resources)}}},
      {"readlinkat", {}, {{0, f(Fmt::fdat)}}},
      {"renameat", {}, {{0, f(Fmt::fdat)}, {2, f(Fmt::fdat)}}},
      {"renameat2", {}, {{0, f(Fmt::fdat)}, {2, f(Fmt::fdat)}}},
      {"rt_sigaction", {}, {{0, f(Fmt::signum)}}},
      {"rt_sigprocmask", {}, {{0, v(sighow)}}},
      {"rt_sigqueueinfo", {}, {{1, f(Fmt::signum)}}},
      {"rt_tgsigqueueinfo", {}, {{2, f(Fmt::signum)}}},
      {"select", ReturnStyle::timeout, {}},
      {"set_tid_address", ReturnStyle::pid, {}},
      {"setitimer", {}, {{0, v(itimers)}}},
      {"setrlimit", {}, {{0, v(rlimit_resources)}}},
      {"socket", {}, {{0, v(socket_families)}}},
      {"socketpair", {}, {{0, v(socket_families)}}},
      {"statx", {}, {{0, f(Fmt::fdat)}, {2, b(fs_at_flags)}}},
      {"symlinkat", {}, {{0, f(Fmt::fdat)}}},
      {"tgkill", {}, {{2, f(Fmt::signum)}}},
      {"tkill", {}, {{1, f(Fmt::signum)}}},
      {"unlinkat", {}, {{0, f(Fmt::fdat)}, {1, f(Fmt::filename)}, {2, b(fs_at_flags)}}},
      {"utimensat", {}, {{0, f(Fmt::fdat)}}},
      {"wait4", ReturnStyle::pid, {{2, f(Fmt::waitid)}}},
      {"waitid", ReturnStyle::pid, {{3, f(Fmt::waitid)}}},
  };
  return all;
}

const SyscallFmt* find_fmt(std::string_view name) {
  const auto& all = syscall_fmts();
  for (const auto& s : all)
    if (s.name == name) return &s;
  return nullptr;
}

// perf's rule by type and name (syscall_arg_fmt__init_array).
Fmt by_type(std::string_view type, std::string_view name) {
  bool pointer = type.find('*') != std::string_view::npos;
  if (type == "const char *" && (name.ends_with("name") || name.find("path") != std::string_view::npos))
    return Fmt::filename;
  if (pointer || name.find("addr") != std::string_view::npos) return Fmt::ptr;
  if (type == "pid_t") return Fmt::pid;
  if (type == "umode_t") return Fmt::mode;
  // (char arrays, perf's SCA_CHAR_ARRAY, are decoded as strings and printed quoted before this rule)
  if ((type == "int" || type == "unsigned int" || type == "long") && name.ends_with("fd")) return Fmt::fd;
  return Fmt::dec;
}

struct Printing {
  ArgContext& context;
  int pid;
  std::uint8_t mask = 0;  // arguments a printed one makes meaningless (mmap's fd when anonymous, ...)
  const Values* arch_prctl = nullptr;
};

std::string fd_text(long fd, Printing& p) {
  std::string out = fmt::format("{}", static_cast<int>(fd));
  if (p.context.fd_paths())
    if (auto path = p.context.fd_path(p.pid, static_cast<int>(fd))) out += fmt::format("<{}>", *path);
  return out;
}

std::string arg_text(const ArgFmt& a, Fmt fmt, std::uint64_t value, int index, Printing& p) {
  long sval = static_cast<long>(value);
  switch (fmt) {
    case Fmt::generic:
    case Fmt::dec: return fmt::format("{}", sval);
    case Fmt::int32: return fmt::format("{}", static_cast<int>(value));
    case Fmt::hex: return fmt::format("{:#x}", value);
    case Fmt::ptr: return value ? fmt::format("{:#x}", value) : "NULL";
    // perf prints a name pointer with %#x, its low 32 bits only: here the whole address.
    case Fmt::filename: return fmt::format("{:#x}", value);
    case Fmt::fd: return fd_text(sval, p);
    case Fmt::fdat: return static_cast<int>(value) == -100 ? "CWD" : fd_text(sval, p);
    case Fmt::close_fd: {
      std::string out = fd_text(sval, p);
      p.context.forget_fd(p.pid, static_cast<int>(value));
      return out;
    }
    case Fmt::pid: {
      std::string out = fmt::format("{}", static_cast<int>(value));
      if (std::string comm = p.context.comm(static_cast<int>(value), true); !comm.empty())
        out += fmt::format(" ({})", comm);
      return out;
    }
    case Fmt::mode: return flags_text(value & 0xffffffff, mode_bits);
    case Fmt::accmode: return access_mode_text(value);
    case Fmt::open_flags:
      if (!(value & 0100)) p.mask |= static_cast<std::uint8_t>(1u << (index + 1));  // no O_CREAT: no mode
      return open_flags_text(value);
    case Fmt::mmap_prot: return value == 0 ? "NONE" : flags_text(value, mmap_prot);
    case Fmt::mmap_flags:
      if (value & 0x20) p.mask |= (1u << 4) | (1u << 5);  // anonymous: fd and offset mean nothing
      return flags_text(value, mmap_flags);
    case Fmt::mremap_flags:  // perf means to hide new_address when not FIXED, but masks a sixth argument
      return flags_text(value, mremap_flags);
    case Fmt::madvise: return madvise_text(sval);
    case Fmt::futex_op: return futex_op_text(value, p.mask);
    case Fmt::signum: return signal_text(static_cast<int>(value));
    case Fmt::getrandom: return flags_text(value & 0xffffffff, getrandom_flags);
    case Fmt::fs_at_flags: return flags_text(value & 0xffffffff, fs_at_flags);
    case Fmt::waitid: return flags_text(value & 0xffffffff, waitid_options);
    case Fmt::pipe_flags: return flags_text(value & 0xffffffff, pipe_flags);
    case Fmt::clone_flags:
      if (!(value & 0x100000)) p.mask |= 1u << 2;
      if (!(value & (0x1000000 | 0x200000))) p.mask |= 1u << 3;
      if (!(value & 0x80000)) p.mask |= 1u << 4;
      return flags_text(value, clone_flags);
    case Fmt::values:
      if (p.arch_prctl) {
        for (const Values* r : {&arch_prctl_1, &arch_prctl_2, &arch_prctl_3})
          if (sval >= r->first && sval < r->first + static_cast<long>(r->names.size()))
            return value_text(sval, *r, true);
        return fmt::format("{:#x}", value);
      }
      return value_text(static_cast<int>(value), *a.values, false);
    case Fmt::bits: return flags_text(value, *a.bits);
  }
  return fmt::format("{}", sval);
}

}  // namespace

std::optional<std::string> ArgContext::fd_path(int pid, int fd) {
  if (fd < 0) return std::nullopt;
  if (auto it = paths_.find({pid, fd}); it != paths_.end()) return it->second;
  if (!host_.fd_path) return std::nullopt;
  auto path = host_.fd_path(pid, fd);
  if (path) paths_[{pid, fd}] = *path;
  return path;
}

std::string syscall_args(std::string_view name, const record::Tracepoint* format,
                         std::span<const std::uint64_t> args, int pid, ArgContext& context) {
  std::vector<std::string_view> names, types;
  if (format) {
    names = format->field_names();
    types = format->field_types();
    if (!names.empty() && names.front() == "__syscall_nr") {
      names.erase(names.begin());
      types.erase(types.begin());
    }
  }
  const SyscallFmt* sc = find_fmt(name);
  Printing p{context, pid};
  if (name == "arch_prctl") p.arch_prctl = &arch_prctl_1;
  std::string out;
  std::size_t count = format ? std::min(names.size(), args.size()) : args.size();
  for (std::size_t i = 0; i < count; ++i) {
    if (p.mask & (1u << i)) continue;
    ArgFmt a;
    if (sc)
      for (const auto& [index, af] : sc->args)
        if (static_cast<std::size_t>(index) == i) a = af;
    std::uint64_t value = args[i];
    if (value == 0 && !a.show_zero) continue;
    Fmt fmt = a.fmt;
    if (fmt == Fmt::generic && a.values) fmt = Fmt::values;
    if (fmt == Fmt::generic && a.bits) fmt = Fmt::bits;
    if (fmt == Fmt::generic) fmt = format ? by_type(types[i], names[i]) : Fmt::dec;
    if (!out.empty()) out += ", ";
    out += format ? fmt::format("{}: ", names[i]) : fmt::format("arg{}: ", i);
    out += arg_text(a, fmt, value, static_cast<int>(i), p);
  }
  return out;
}

ReturnStyle return_style(std::string_view name) {
  const SyscallFmt* sc = find_fmt(name);
  return sc ? sc->ret : ReturnStyle::decimal;
}

std::string tracepoint_fields(const record::Tracepoint& format, std::span<const std::byte> raw, int pid,
                              ArgContext& context) {
  Printing p{context, pid};
  std::string out;
  int index = 0;
  for (const auto& field : format.decode(raw)) {
    std::string text;
    if (const auto* s = std::get_if<std::string>(&field.value)) {
      // char arrays and __data_loc strings: printed even when empty, as perf does (their value is a
      // pointer into the payload, never zero)
      text = fmt::format("\"{}\"", *s);
    } else if (const auto* i = std::get_if<std::int64_t>(&field.value)) {
      if (*i == 0) {
        ++index;
        continue;
      }
      text = arg_text({}, by_type(field.type, field.name), static_cast<std::uint64_t>(*i), index, p);
    } else if (const auto* u = std::get_if<std::uint64_t>(&field.value)) {
      if (*u == 0) {
        ++index;
        continue;
      }
      text = arg_text({}, by_type(field.type, field.name), *u, index, p);
    } else if (const auto* vs = std::get_if<std::vector<std::int64_t>>(&field.value)) {
      text = fmt::format("[{}]", fmt::join(*vs, ", "));
    } else if (const auto* vu = std::get_if<std::vector<std::uint64_t>>(&field.value)) {
      text = fmt::format("[{}]", fmt::join(*vu, ", "));
    }
    if (!out.empty()) out += ", ";
    out += fmt::format("{}: {}", field.name, text);
    ++index;
  }
  return out;
}

std::string errno_name(int error) {
  if (const char* name = strerrorname_np(error)) return name;
  return "(unknown)";
}

}  // namespace perfspec::trace_detail
