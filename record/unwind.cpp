// SPDX-License-Identifier: MIT
// DWARF unwinding of a sample's user stack with libdwfl, as perf's util/unwind-libdw.c does (Linux
// 6.12): the binaries reported to a Dwfl at their load addresses as the sample needs them, the
// sample's registers as the initial frame, memory read from the copied stack (else from the binary's
// file), each frame's pc less one but for the first.
#include "perfspec/unwind.hpp"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cstring>
#include <string>

namespace perfspec::record {
namespace {

// perf_regs numbers (arch/x86/include/uapi/asm/perf_regs.h, arch/arm64/include/uapi/asm/perf_regs.h)
enum : unsigned {
  x86_ax = 0,
  x86_bx = 1,
  x86_cx = 2,
  x86_dx = 3,
  x86_si = 4,
  x86_di = 5,
  x86_bp = 6,
  x86_sp = 7,
  x86_ip = 8,
  x86_r8 = 16,
  arm64_x0 = 0,
  arm64_lr = 30,
  arm64_sp = 31,
  arm64_pc = 32,
};

// Reads 8 bytes of a binary's file at `offset`.
bool read_file_word(const std::string& path, std::uint64_t offset, Dwarf_Word* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::pread(fd, out, sizeof *out, static_cast<off_t>(offset)) == static_cast<ssize_t>(sizeof *out);
  ::close(fd);
  return ok;
}

// A module's separate debug file (its .debug_frame), as perf's __find_debuginfo names the dso's.
int find_debuginfo(Dwfl_Module*, void** userdata, const char*, Dwarf_Addr, const char*, const char*,
                   GElf_Word, char** debuginfo_file_name) {
  const auto* debug = static_cast<const std::string*>(*userdata);
  if (!debug || debug->empty()) return -1;
  int fd = ::open(debug->c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) *debuginfo_file_name = ::strdup(debug->c_str());
  return fd;
}

char* debuginfo_path = nullptr;
const Dwfl_Callbacks offline_callbacks = {
    nullptr,
    find_debuginfo,
    dwfl_offline_section_address,
    &debuginfo_path,
};

}  // namespace

struct Unwinder::Impl {
  explicit Impl(Symbolizer& s) : symbols(s) {}
  Symbolizer& symbols;
  // the sample being unwound, and what it has found
  const Sample* sample = nullptr;
  Dwfl* dwfl = nullptr;
  std::vector<std::uint64_t>* frames = nullptr;
  std::size_t room = 0;
  std::vector<std::unique_ptr<std::string>> debug_files;  // the modules' userdata, for this sample
  std::uint16_t machine = EM_NONE;

  std::optional<std::uint64_t> reg(unsigned r) const { return sample->regs_user.get(r); }
  bool report(std::uint64_t address);
  bool memory(Dwarf_Addr address, Dwarf_Word* out);
  bool initial_registers(Dwfl_Thread* thread);
};

// The binary at `address` reported to the Dwfl where it is loaded (perf's __report_module: its start
// less its offset), unless a module there already is.
bool Unwinder::Impl::report(std::uint64_t address) {
  auto binary = symbols.binary_at(sample->pid, address);
  if (!binary) return false;
  const Dwarf_Addr base = binary->start - binary->pgoff;
  if (Dwfl_Module* mod = dwfl_addrmodule(dwfl, address)) {
    Dwarf_Addr start = 0;
    dwfl_module_info(mod, nullptr, &start, nullptr, nullptr, nullptr, nullptr, nullptr);
    if (start == base) return true;
  }
  std::string name(binary->dso.substr(binary->dso.rfind('/') + 1));
  dwfl_report_begin_add(dwfl);
  Dwfl_Module* mod = dwfl_report_elf(dwfl, name.c_str(), binary->file.c_str(), -1, base, false);
  dwfl_report_end(dwfl, nullptr, nullptr);
  if (!mod) return false;
  void** userdata = nullptr;
  dwfl_module_info(mod, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  debug_files.push_back(std::make_unique<std::string>(binary->debug_file));
  if (userdata) *userdata = debug_files.back().get();
  return true;
}

// perf's memory_read: a word of the copied stack when it lies there (from the stack pointer, as many
// bytes as the kernel copied), else of the binary mapped there, from its file.
bool Unwinder::Impl::memory(Dwarf_Addr address, Dwarf_Word* out) {
  auto sp = reg(machine == EM_AARCH64 ? arm64_sp : x86_sp);
  if (!sp || address + sizeof *out < address) return false;
  const auto& stack = sample->stack_user;
  const std::uint64_t end = *sp + std::min<std::uint64_t>(stack.dyn_size, stack.data.size());
  if (address >= *sp && address + sizeof *out <= end) {
    std::memcpy(out, stack.data.data() + (address - *sp), sizeof *out);
    return true;
  }
  auto binary = symbols.binary_at(sample->pid, address);
  return binary && read_file_word(binary->file, address - binary->start + binary->pgoff, out);
}

// The sample's registers in DWARF's numbering (perf's libdw__arch_set_initial_registers): x86_64's
// rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, rip; arm64's x0-x30, sp, and the pc.
bool Unwinder::Impl::initial_registers(Dwfl_Thread* thread) {
  if (machine == EM_X86_64) {
    const unsigned order[] = {x86_ax, x86_dx, x86_cx, x86_bx, x86_si, x86_di, x86_bp, x86_sp};
    Dwarf_Word regs[17];
    for (unsigned i = 0; i < 8; ++i) {
      auto v = reg(order[i]);
      if (!v) return false;
      regs[i] = *v;
    }
    for (unsigned i = 0; i < 8; ++i) {
      auto v = reg(x86_r8 + i);
      if (!v) return false;
      regs[8 + i] = *v;
    }
    auto ip = reg(x86_ip);
    if (!ip) return false;
    regs[16] = *ip;
    return dwfl_thread_state_registers(thread, 0, 17, regs);
  }
  if (machine == EM_AARCH64) {
    Dwarf_Word regs[32];
    for (unsigned i = 0; i < 32; ++i) {
      auto v = reg(arm64_x0 + i);  // x0-x29, lr (30), sp (31)
      if (!v) return false;
      regs[i] = *v;
    }
    auto pc = reg(arm64_pc);
    if (!pc || !dwfl_thread_state_registers(thread, 0, 32, regs)) return false;
    dwfl_thread_state_register_pc(thread, *pc);
    return true;
  }
  return false;
}

namespace {

Unwinder::Impl* impl_of(void* arg) { return static_cast<Unwinder::Impl*>(arg); }

pid_t next_thread(Dwfl* dwfl, void* arg, void** thread_arg) {
  if (*thread_arg) return 0;  // one thread: the sample's
  *thread_arg = arg;
  return dwfl_pid(dwfl);
}

bool memory_read(Dwfl*, Dwarf_Addr address, Dwarf_Word* out, void* arg) {
  return impl_of(arg)->memory(address, out);
}

bool set_initial_registers(Dwfl_Thread* thread, void* arg) { return impl_of(arg)->initial_registers(thread); }

const Dwfl_Thread_Callbacks thread_callbacks = {next_thread,           nullptr, memory_read,
                                                set_initial_registers, nullptr, nullptr};

// perf's frame_callback: the pc, less one for a frame that is a return (not the interrupted one)
int frame_callback(Dwfl_Frame* state, void* arg) {
  auto* I = impl_of(arg);
  Dwarf_Addr pc = 0;
  bool activation = false;
  if (!dwfl_frame_pc(state, &pc, nullptr)) return DWARF_CB_ABORT;
  I->report(pc);  // the module, before its frame is asked whether it is an activation
  if (!dwfl_frame_pc(state, &pc, &activation)) return DWARF_CB_ABORT;
  if (!activation) --pc;
  I->frames->push_back(pc);
  return --I->room == 0 ? DWARF_CB_ABORT : DWARF_CB_OK;
}

}  // namespace

Unwinder::Unwinder(Symbolizer& symbols) : impl_(std::make_unique<Impl>(symbols)) {}
Unwinder::~Unwinder() = default;

// The ELF machine of perf's HEADER_ARCH (uname's machine), this build's when there is none.
std::uint16_t machine_of(std::string_view arch) {
  if (arch.empty()) {
#if defined(__x86_64__)
    return EM_X86_64;
#elif defined(__aarch64__)
    return EM_AARCH64;
#else
    return EM_NONE;
#endif
  }
  if (arch == "x86_64" || arch == "x86") return EM_X86_64;  // perf's normalized names too
  if (arch == "aarch64" || arch == "arm64") return EM_AARCH64;
  return EM_NONE;
}

void Unwinder::unwind(const Sample& sample, std::string_view arch, std::size_t max,
                      std::vector<std::uint64_t>& frames) {
  if (!sample.has(sample_regs_user) || !sample.has(sample_stack_user) || sample.regs_user.values.empty() ||
      sample.stack_user.dyn_size == 0 || max == 0)
    return;
  Impl& I = *impl_;
  I.sample = &sample, I.frames = &frames, I.room = max, I.machine = machine_of(arch);
  // where user space was (perf's unwind__get_entries takes the registers' ip, not the sample's)
  auto ip = I.reg(I.machine == EM_AARCH64 ? arm64_pc : x86_ip);
  // 64-bit registers only (PERF_SAMPLE_REGS_ABI_64): a 32-bit process's are another set
  if (I.machine == EM_NONE || !ip || sample.regs_user.abi != 2) return;
  I.debug_files.clear();
  I.dwfl = dwfl_begin(&offline_callbacks);  // one per sample, as perf: the mappings change between them
  if (!I.dwfl) return;
  if (I.report(*ip) &&
      dwfl_attach_state(I.dwfl, nullptr, static_cast<pid_t>(sample.tid), &thread_callbacks, &I))
    dwfl_getthread_frames(I.dwfl, static_cast<pid_t>(sample.tid), frame_callback, &I);
  dwfl_end(I.dwfl);
  I.dwfl = nullptr;
}

}  // namespace perfspec::record
