// SPDX-License-Identifier: MIT
// perf trace's argument printers (perf 6.12's builtin-trace.c and trace/beauty/): the rule by a
// field's type and name, and the system calls whose arguments perf names. The flag and value names
// are the kernel's UAPI constants (linux/mman.h, fcntl.h, futex.h, ...), written as perf prints them,
// without their prefixes.
#include "print/trace_args.hpp"

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
  char_array,
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

// Values by number from `first` (perf's strarrays); names[i] may be empty for a hole.
struct Values {
  long first;
  std::vector<std::string_view> names;
};
// Flags in the order perf prints them. `per_bit`: perf's strarray of bits (lowest first, each bit
// without a name printed alone); otherwise its P_FLAG lists (what no name took, as one hex number).
struct Bits {
  std::vector<std::pair<std::uint64_t, std::string_view>> names;
  bool per_bit = false;
};

const Values rlimit_resources{0,
                              {"CPU", "FSIZE", "DATA", "STACK", "CORE", "RSS", "NPROC", "NOFILE", "MEMLOCK",
                               "AS", "LOCKS", "SIGPENDING", "MSGQUEUE", "NICE", "RTPRIO", "RTTIME"}};
const Values sighow{0, {"BLOCK", "UNBLOCK", "SETMASK"}};
const Values whences{0, {"SET", "CUR", "END", "DATA", "HOLE"}};
const Values clockids{
    0,
    {"REALTIME", "MONOTONIC", "PROCESS_CPUTIME_ID", "THREAD_CPUTIME_ID", "MONOTONIC_RAW", "REALTIME_COARSE",
     "MONOTONIC_COARSE", "BOOTTIME", "REALTIME_ALARM", "BOOTTIME_ALARM", "SGI_CYCLE", "TAI"}};
const Values itimers{0, {"REAL", "VIRTUAL", "PROF"}};
const Values epoll_ctl_ops{1, {"ADD", "DEL", "MOD"}};
const Values socket_families{
    0, {"UNSPEC",  "LOCAL",   "INET",    "AX25",   "IPX",        "APPLETALK", "NETROM",   "BRIDGE",
        "ATMPVC",  "X25",     "INET6",   "ROSE",   "DECnet",     "NETBEUI",   "SECURITY", "KEY",
        "NETLINK", "PACKET",  "ASH",     "ECONET", "ATMSVC",     "RDS",       "SNA",      "IRDA",
        "PPPOX",   "WANPIPE", "LLC",     "IB",     "MPLS",       "CAN",       "TIPC",     "BLUETOOTH",
        "IUCV",    "RXRPC",   "ISDN",    "PHONET", "IEEE802154", "CAIF",      "ALG",      "NFC",
        "VSOCK",   "KCM",     "QIPCRTR", "SMC",    "XDP",        "MCTP"}};
// x86's arch_prctl codes come in three ranges.
const Values arch_prctl_1{0x1001,
                          {"SET_GS",
                           "SET_FS",
                           "GET_FS",
                           "GET_GS",
                           "",
                           "",
                           "",
                           "",
                           "",
                           "",
                           "",
                           "",
                           "",
                           "",
                           "",
                           "",
                           "GET_CPUID",
                           "SET_CPUID",
                           "",
                           "",
                           "",
                           "",
                           "",
                           "",
                           "",
                           "",
                           "",
                           "",
                           "",
                           "",
                           "",
                           "",
                           "GET_XCOMP_SUPP",
                           "GET_XCOMP_PERM",
                           "REQ_XCOMP_PERM",
                           "GET_XCOMP_GUEST_PERM",
                           "REQ_XCOMP_GUEST_PERM"}};
const Values arch_prctl_2{0x2001, {"MAP_VDSO_X32", "MAP_VDSO_32", "MAP_VDSO_64"}};
const Values arch_prctl_3{0x4001,
                          {"GET_UNTAG_MASK", "ENABLE_TAGGED_ADDR", "GET_MAX_TAG_BITS", "FORCE_TAGGED_SVA"}};

// Bit arrays as perf's strarray__scnprintf_flags walks them: lowest bit first.
const Bits mmap_prot{{{0x1, "READ"},
                      {0x2, "WRITE"},
                      {0x4, "EXEC"},
                      {0x8, "SEM"},
                      {0x01000000, "GROWSDOWN"},
                      {0x02000000, "GROWSUP"}},
                     true};
const Bits mmap_flags{{{0x01, "SHARED"},
                       {0x02, "PRIVATE"},
                       {0x08, "DROPPABLE"},
                       {0x10, "FIXED"},
                       {0x20, "ANONYMOUS"},
                       {0x0100, "GROWSDOWN"},
                       {0x0800, "DENYWRITE"},
                       {0x1000, "EXECUTABLE"},
                       {0x2000, "LOCKED"},
                       {0x4000, "NORESERVE"},
                       {0x8000, "POPULATE"},
                       {0x10000, "NONBLOCK"},
                       {0x20000, "STACK"},
                       {0x40000, "HUGETLB"},
                       {0x80000, "SYNC"},
                       {0x100000, "FIXED_NOREPLACE"}},
                      true};
const Bits mremap_flags{{{1, "MAYMOVE"}, {2, "FIXED"}, {4, "DONTUNMAP"}}, true};
const Bits fs_at_flags{{{0x0002, "RENAME_EXCHANGE"},
                        {0x0004, "RENAME_WHITEOUT"},
                        {0x100, "SYMLINK_NOFOLLOW"},
                        {0x200, "REMOVEDIR"},
                        {0x400, "SYMLINK_FOLLOW"},
                        {0x800, "NO_AUTOMOUNT"},
                        {0x1000, "EMPTY_PATH"},
                        {0x2000, "STATX_FORCE_SYNC"},
                        {0x4000, "STATX_DONT_SYNC"},
                        {0x8000, "RECURSIVE"},
                        {0x80000000, "GETATTR_NOSEC"}},
                       true};
const Bits clone_flags{{{0x80, "NEWTIME"},
                        {0x100, "VM"},
                        {0x200, "FS"},
                        {0x400, "FILES"},
                        {0x800, "SIGHAND"},
                        {0x1000, "PIDFD"},
                        {0x2000, "PTRACE"},
                        {0x4000, "VFORK"},
                        {0x8000, "PARENT"},
                        {0x10000, "THREAD"},
                        {0x20000, "NEWNS"},
                        {0x40000, "SYSVSEM"},
                        {0x80000, "SETTLS"},
                        {0x100000, "PARENT_SETTID"},
                        {0x200000, "CHILD_CLEARTID"},
                        {0x400000, "DETACHED"},
                        {0x800000, "UNTRACED"},
                        {0x1000000, "CHILD_SETTID"},
                        {0x2000000, "NEWCGROUP"},
                        {0x4000000, "NEWUTS"},
                        {0x8000000, "NEWIPC"},
                        {0x10000000, "NEWUSER"},
                        {0x20000000, "NEWPID"},
                        {0x40000000, "NEWNET"},
                        {0x80000000, "IO"},
                        {0x100000000, "CLEAR_SIGHAND"},
                        {0x200000000, "INTO_CGROUP"}},
                       true};
// Flags perf prints in its own order (P_FLAG lists), the rest as one hex number.
const Bits open_flags{{{02, "RDWR"},
                       {02000, "APPEND"},
                       {020000, "ASYNC"},
                       {02000000, "CLOEXEC"},
                       {0100, "CREAT"},
                       {040000, "DIRECT"},
                       {0200000, "DIRECTORY"},
                       {0200, "EXCL"},
                       {0100000, "LARGEFILE"},
                       {0400000, "NOFOLLOW"},
                       {020200000, "TMPFILE"},
                       {01000000, "NOATIME"},
                       {0400, "NOCTTY"},
                       {04000, "NONBLOCK"},
                       {010000000, "PATH"}}};
constexpr std::uint64_t o_sync = 04010000, o_dsync = 010000, o_trunc = 01000, o_wronly = 01;
const Bits getrandom_flags{{{0x2, "RANDOM"}, {0x1, "NONBLOCK"}}};
const Bits waitid_options{{{1, "NOHANG"}, {2, "UNTRACED"}, {8, "CONTINUED"}}};
const Bits pipe_flags{{{02000000, "CLOEXEC"}, {04000, "NONBLOCK"}}};
const Bits mode_bits{{{07777, "IALLUGO"}, {0777, "IRWXUGO"}, {0444, "IRUGO"},     {0222, "IWUGO"},
                      {0111, "IXUGO"},    {0170000, "IFMT"}, {0140000, "IFSOCK"}, {0120000, "IFLNK"},
                      {0100000, "IFREG"}, {060000, "IFBLK"}, {040000, "IFDIR"},   {020000, "IFCHR"},
                      {010000, "IFIFO"},  {04000, "ISUID"},  {02000, "ISGID"},    {01000, "ISVTX"},
                      {0700, "IRWXU"},    {0400, "IRUSR"},   {0200, "IWUSR"},     {0100, "IXUSR"},
                      {070, "IRWXG"},     {040, "IRGRP"},    {020, "IWGRP"},      {010, "IXGRP"},
                      {07, "IRWXO"},      {04, "IROTH"},     {02, "IWOTH"},       {01, "IXOTH"}}};

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

// Named flags in `bits`' order, then what is left as one hex number (perf's P_FLAG printers), or each
// unnamed bit alone (its strarray printer; perf's format for those is broken: "0x%#").
std::string flags_text(std::uint64_t value, const Bits& bits) {
  std::string out;
  auto add = [&](std::string_view text) { out += fmt::format("{}{}", out.empty() ? "" : "|", text); };
  if (bits.per_bit) {
    for (int i = 0; i < 64; ++i) {
      std::uint64_t bit = std::uint64_t{1} << i;
      if (!(value & bit)) continue;
      std::string_view name;
      for (const auto& [b, n] : bits.names)
        if (b == bit) name = n;
      add(name.empty() ? fmt::format("{:#x}", bit) : std::string(name));
    }
    return out;
  }
  for (const auto& [bit, name] : bits.names)
    if ((value & bit) == bit) {
      add(name);
      value &= ~bit;
    }
  if (value) add(fmt::format("{:#x}", value));
  return out;
}

// open(2)'s flags as perf's open__scnprintf_flags prints them: RDONLY for an access mode of 0, its
// list (a flag of several bits shown when any of them is set), SYNC without clearing its bits.
std::string open_flags_text(std::uint64_t value) {
  std::uint32_t flags = static_cast<std::uint32_t>(value);
  std::string out = (flags & 3) == 0 ? "RDONLY" : "";
  auto add = [&](std::string_view text) { out += fmt::format("{}{}", out.empty() ? "" : "|", text); };
  if (flags == 0) return out;
  for (const auto& [bit, name] : open_flags.names)
    if (flags & bit) {
      add(name);
      flags &= ~static_cast<std::uint32_t>(bit);
    }
  if ((flags & o_sync) == o_sync) {
    add("SYNC");
  } else if (flags & o_dsync) {
    add("DSYNC");
    flags &= ~static_cast<std::uint32_t>(o_dsync);
  }
  for (auto [bit, name] : {std::pair{o_trunc, "TRUNC"}, std::pair{o_wronly, "WRONLY"}})
    if (flags & bit) {
      add(name);
      flags &= ~static_cast<std::uint32_t>(bit);
    }
  if (flags) add(fmt::format("{:#x}", flags));
  return out;
}

// access(2)'s mode: F for 0, else R, W, X and what is left after a "|".
std::string access_mode_text(std::uint64_t value) {
  std::uint32_t mode = static_cast<std::uint32_t>(value);
  if (mode == 0) return "F";
  std::string out;
  for (auto [bit, name] : {std::pair{4u, "R"}, std::pair{2u, "W"}, std::pair{1u, "X"}})
    if (mode & bit) {
      out += name;
      mode &= ~bit;
    }
  if (mode) out += fmt::format("|{:#x}", mode);
  return out;
}

std::string value_text(long value, const Values& values, bool hex) {
  long i = value - values.first;
  if (i >= 0 && i < static_cast<long>(values.names.size()) && !values.names[i].empty())
    return std::string(values.names[i]);
  return hex ? fmt::format("{:#x}", value) : fmt::format("{}", value);
}

std::string signal_text(long sig) {
  static const char* const names[] = {nullptr,  "HUP",  "INT",    "QUIT", "ILL",   "TRAP", "ABRT", "BUS",
                                      "FPE",    "KILL", "USR1",   "SEGV", "USR2",  "PIPE", "ALRM", "TERM",
                                      "STKFLT", "CHLD", "CONT",   "STOP", "TSTP",  "TTIN", "TTOU", "URG",
                                      "XCPU",   "XFSZ", "VTALRM", "PROF", "WINCH", "IO",   "PWR",  "SYS"};
  if (sig > 0 && sig < static_cast<long>(std::size(names))) return names[sig];
  return fmt::format("{:#x}", sig);
}

std::string futex_op_text(std::uint64_t op, std::uint8_t& mask) {
  static const char* const names[] = {
      "WAIT",      "WAKE",       "FD",          "REQUEUE",     "CMP_REQUEUE",     "WAKE_OP",       "LOCK_PI",
      "UNLOCK_PI", "TRYLOCK_PI", "WAIT_BITSET", "WAKE_BITSET", "WAIT_REQUEUE_PI", "CMP_REQUEUE_PI"};
  // The arguments each command ignores (uaddr 0, op 1, val 2, timeout 3, uaddr2 4, val3 5).
  static const std::uint8_t ignored[] = {0x30, 0x38, 0x38, 0x28, 0x08, 0x00, 0x38,
                                         0x38, 0x30, 0x10, 0x10, 0x00, 0x08};
  std::uint64_t cmd = op & 127;  // FUTEX_CMD_MASK: without PRIVATE_FLAG (128) and CLOCK_REALTIME (256)
  std::string out;
  if (cmd < std::size(names)) {
    out = names[cmd];
    mask |= ignored[cmd];
  } else {
    out = fmt::format("{:#x}", cmd);
  }
  if (op & 128) out += "|PRIVATE_FLAG";
  if (op & 256) out += "|CLOCK_REALTIME";
  return out;
}

std::string madvise_text(long behavior) {
  static const char* const names[] = {
      "NORMAL",          "RANDOM",      "SEQUENTIAL", "WILLNEED",   "DONTNEED",      nullptr,
      nullptr,           nullptr,       "FREE",       "REMOVE",     "DONTFORK",      "DOFORK",
      "MERGEABLE",       "UNMERGEABLE", "HUGEPAGE",   "NOHUGEPAGE", "DONTDUMP",      "DODUMP",
      "WIPEONFORK",      "KEEPONFORK",  "COLD",       "PAGEOUT",    "POPULATE_READ", "POPULATE_WRITE",
      "DONTNEED_LOCKED", "COLLAPSE"};
  if (behavior == 100) return "MADV_HWPOISON";
  if (behavior == 101) return "MADV_SOFT_OFFLINE";
  if (behavior >= 0 && behavior < static_cast<long>(std::size(names)) && names[behavior])
    return fmt::format("MADV_{}", names[behavior]);
  return fmt::format("{:#x}", behavior);
}

// perf's rule by type and name (syscall_arg_fmt__init_array).
Fmt by_type(std::string_view type, std::string_view name) {
  bool pointer = type.find('*') != std::string_view::npos;
  if (type == "const char *" && (name.ends_with("name") || name.find("path") != std::string_view::npos))
    return Fmt::filename;
  if (pointer || name.find("addr") != std::string_view::npos) return Fmt::ptr;
  if (type == "pid_t") return Fmt::pid;
  if (type == "umode_t") return Fmt::mode;
  if (type.find('[') != std::string_view::npos && type.find("char") != std::string_view::npos)
    return Fmt::char_array;
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
    case Fmt::char_array: return fmt::format("\"{}\"", value);
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
