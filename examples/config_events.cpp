// SPDX-License-Identifier: MIT
// Resolve event sets kept in a config file, with diagnostics that point into that file:
//   config_events examples/events.conf
// prints, for a bad line, `events.conf:4:21: error: ...` and the caret under the right character.
#include <cstdio>
#include <fstream>
#include <string>

#include <perfspec/perfspec.hpp>

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "events.conf";
  const char* sysfs = argc > 2 ? argv[2] : "/sys";
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path);
    return 2;
  }
  perfspec::spec::Machine machine(sysfs);
  std::string line;
  std::uint32_t lineno = 0;
  int status = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string name = line.substr(0, line.find_last_not_of(" \t", eq - 1) + 1);
    std::size_t start = line.find_first_not_of(" \t", eq + 1);
    std::string text = line.substr(start);
    // The origin is where the event string starts in the file (1-based column); render() adds the
    // byte offset of the error within the string to it.
    perfspec::Origin origin{path, lineno, static_cast<std::uint32_t>(start + 1)};
    try {
      auto set = perfspec::resolve(text, machine);
      std::printf("%s: %zu events\n", name.c_str(), set.events.size());
    } catch (const perfspec::Error& e) {
      std::fputs(perfspec::render(e, text, origin).c_str(), stderr);
      status = 1;
    }
  }
  return status;
}
