// SPDX-License-Identifier: MIT
// perf trace's flag and value names (perf 6.12's trace/beauty/ and builtin-trace.c strarrays): the
// kernel's UAPI constants (linux/mman.h, fcntl.h, futex.h, sched.h, ...), written as perf prints them.
#include "print/trace_flags.hpp"

#include <fmt/format.h>

namespace perfspec::trace_detail {

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

}  // namespace perfspec::trace_detail
