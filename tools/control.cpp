// SPDX-License-Identifier: MIT
#include "tools/control.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "perfspec/error.hpp"

namespace perfspec::tools {

namespace {

int descriptor(const std::string& s) {
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end || v < 0 || v > 65535)
    throw Error(ErrorKind::usage, fmt::format("--control: '{}' is not a file descriptor", s));
  return static_cast<int>(v);
}

}  // namespace

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    auto comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

void Control::open(const std::string& spec) {
  if (spec.empty()) return;
  auto parts = split_commas(spec.substr(spec.find(':') + 1));
  if (spec.starts_with("fifo:")) {
    // A FIFO, and nothing else (/dev/zero would be read without end); neither end blocks stat.
    auto open_fifo = [](const std::string& path) {
      int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0)
        throw Error(ErrorKind::usage,
                    fmt::format("--control: cannot open FIFO '{}': {}", path, std::strerror(errno)));
      struct stat st {};
      if (::fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) {
        ::close(fd);
        throw Error(ErrorKind::usage, fmt::format("--control: '{}' is not a FIFO", path),
                    "make one with mkfifo(1)");
      }
      return fd;
    };
    ctl_ = owned_ctl_ = open_fifo(parts[0]);
    if (parts.size() > 1) ack_ = owned_ack_ = open_fifo(parts[1]);
  } else if (spec.starts_with("fd:")) {
    ctl_ = descriptor(parts[0]);
    ack_ = parts.size() > 1 ? descriptor(parts[1]) : -1;
    ::fcntl(ctl_, F_SETFL, ::fcntl(ctl_, F_GETFL) | O_NONBLOCK);
  } else {
    throw Error(ErrorKind::usage,
                fmt::format("--control '{}': expected fifo:CTL[,ACK] or fd:CTL[,ACK]", spec));
  }
}

Control::~Control() {
  if (owned_ctl_ >= 0) ::close(owned_ctl_);
  if (owned_ack_ >= 0) ::close(owned_ack_);
}

std::vector<std::string> Control::poll() {
  std::vector<std::string> out;
  if (ctl_ < 0) return out;
  // At most 64 KiB a call (a descriptor that never runs dry, fd:0 of /dev/zero, cannot hold stat), and
  // a line no longer than any command: past 4 KiB without a newline what came is dropped, and said.
  constexpr std::size_t per_call = 64 * 1024, longest = 4096;
  char buf[4096];
  for (std::size_t taken = 0; taken < per_call;) {
    ssize_t n = ::read(ctl_, buf, sizeof buf);
    if (n <= 0) break;
    taken += static_cast<std::size_t>(n);
    pending_.append(buf, static_cast<std::size_t>(n));
    for (auto nl = pending_.find('\n'); nl != std::string::npos; nl = pending_.find('\n')) {
      std::string line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      while (!line.empty() && (line.back() == '\r' || line.back() == '\0')) line.pop_back();
      if (!line.empty()) out.push_back(line);
    }
    if (pending_.size() > longest) {
      pending_.clear();
      ++dropped_;
    }
  }
  return out;
}

void Control::ack() {
  if (ack_ >= 0) (void)!::write(ack_, "ack\n", 4);
}

}  // namespace perfspec::tools
