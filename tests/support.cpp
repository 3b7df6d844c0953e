// SPDX-License-Identifier: MIT
#include "tests/support.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <grp.h>
#include <link.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

namespace test {

long breakpoint_probe_count() {
  static const long count = [] {
    static volatile long probe = 0;
    perf_event_attr a{};
    a.size = sizeof a;
    a.type = PERF_TYPE_BREAKPOINT;
    a.bp_type = HW_BREAKPOINT_W;
    a.bp_addr = reinterpret_cast<std::uintptr_t>(&probe);
    a.bp_len = HW_BREAKPOINT_LEN_8;
    a.sample_period = 1;
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int fd = static_cast<int>(::syscall(SYS_perf_event_open, &a, 0, -1, -1, 0));
    if (fd < 0) return -1L;
    ::ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    for (int i = 0; i < 10; ++i) probe = probe + 1;
    ::ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    std::uint64_t n = 0;
    bool ok = ::read(fd, &n, sizeof n) == static_cast<ssize_t>(sizeof n);
    ::close(fd);
    return ok ? static_cast<long>(n) : -1L;
  }();
  return count;
}

std::string source_dir() { return PERFSPEC_SOURCE_DIR; }
std::string fixture(std::string_view name) { return fmt::format("{}/tests/fixtures/{}", source_dir(), name); }

std::string expected_stdout(std::string_view name) {
  std::string path = fmt::format("{}/tests/cli/expected/{}", source_dir(), name);
  std::ifstream in(path, std::ios::binary);
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto end = text.find("--- stderr\n");
  if (!in.good() && text.empty()) throw std::runtime_error("cannot read " + path);
  if (end == std::string::npos) throw std::runtime_error(path + " has no '--- stderr' line");
  return text.substr(0, end);
}

TempTree::TempTree() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "perfspec-test-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  root_ = tmpl;
}

TempTree::~TempTree() {
  std::error_code ec;
  std::filesystem::remove_all(root_, ec);
}

void TempTree::write(std::string_view relative, std::string_view content) const {
  std::filesystem::path p = std::filesystem::path(root_) / relative;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
}

void TempTree::pmu(std::string_view name, unsigned type) const {
  write(fmt::format("bus/event_source/devices/{}/type", name), fmt::format("{}\n", type));
}

std::string attr_summary(const perfspec::Attr& attr) {
  std::string out;
  for (const auto& f : perfspec::attr_fields()) {
    std::uint64_t v = f.get(attr);
    if (f.name == "size" || (v == 0 && f.name != "type")) continue;
    if (!out.empty()) out += ' ';
    bool hex = f.name.starts_with("config") || f.name == "sample_type" || f.name == "read_format" ||
               f.name == "branch_sample_type" || f.name.starts_with("sample_regs");
    if (f.is_signed)
      out += fmt::format("{}={}", f.name, static_cast<std::int64_t>(v));
    else if (hex)
      out += fmt::format("{}={:#x}", f.name, v);
    else
      out += fmt::format("{}={}", f.name, v);
  }
  return out;
}

std::string attr_input_error(std::string_view text) {
  try {
    perfspec::parse_attr_input(text);
  } catch (const perfspec::Error& e) {
    return e.message();
  }
  return "no error";
}

std::string error_of(std::string_view text, const perfspec::spec::Machine& machine,
                     const perfspec::ResolveOptions& options) {
  try {
    perfspec::resolve(text, machine, options);
  } catch (const perfspec::Error& e) {
    return perfspec::render(e, text);
  }
  return {};
}

std::string in_child(const std::function<std::string()>& body) {
  int pipefd[2];
  if (::pipe(pipefd) != 0) return "pipe failed";
  pid_t pid = ::fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    ::close(pipefd[0]);
    std::string report;
    try {
      report = body();
    } catch (const std::exception& e) {
      report = fmt::format("child threw: {}", e.what());
    }
    const char* at = report.data();
    for (std::size_t left = report.size(); left > 0;) {
      ssize_t n = ::write(pipefd[1], at, left);
      if (n <= 0) ::_exit(5);
      at += n, left -= static_cast<std::size_t>(n);
    }
    ::_exit(0);  // no destructors or atexit handlers: they belong to the parent
  }
  ::close(pipefd[1]);
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipefd[0], buf, sizeof buf)) != 0;)
    if (n > 0)
      report.append(buf, static_cast<std::size_t>(n));
    else if (errno != EINTR)
      break;
  ::close(pipefd[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return fmt::format("child killed by signal {}", WTERMSIG(status));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return fmt::format("child exited with status {}", WEXITSTATUS(status));
  return report;
}

std::string function_symbol_at(std::uintptr_t address) {
  // The main program's load bias: what its symbols' values are moved by (a PIE's base).
  std::uintptr_t bias = 0;
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        *static_cast<std::uintptr_t*>(out) = info->dlpi_addr;  // the first object is the program
        return 1;
      },
      &bias);
  ::elf_version(EV_CURRENT);
  int fd = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string name;
  if (Elf* elf = ::elf_begin(fd, ELF_C_READ, nullptr)) {
    for (Elf_Scn* scn = nullptr; name.empty() && (scn = ::elf_nextscn(elf, scn));) {
      GElf_Shdr sh;
      if (!::gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || sh.sh_entsize == 0) continue;
      Elf_Data* data = ::elf_getdata(scn, nullptr);
      for (std::size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; ++i) {
        GElf_Sym sym;
        if (!::gelf_getsym(data, static_cast<int>(i), &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
          continue;
        std::uintptr_t start = bias + sym.st_value;
        if (address >= start && address < start + sym.st_size) {
          const char* s = ::elf_strptr(elf, sh.sh_link, sym.st_name);
          name = s ? s : "";
          break;
        }
      }
    }
    ::elf_end(elf);
  }
  ::close(fd);
  return name;
}

bool become_nobody() {
  return ::geteuid() == 0 && ::setgroups(0, nullptr) == 0 && ::setgid(65534) == 0 && ::setuid(65534) == 0 &&
         ::geteuid() == 65534;
}

}  // namespace test
