// SPDX-License-Identifier: MIT
#pragma once
// `perfspec exporter`: the exporter layer (exporter/exporter.hpp) run as a daemon.
#include <string>

#include "perfspec/spec.hpp"

namespace perfspec::tools::exporter {

struct ExporterOptions {
  std::string config;      ///< --config FILE
  std::string listen;      ///< --listen ADDR (wins over the file's); empty: the file's, else 127.0.0.1:9464
  std::string web_config;  ///< --web.config.file FILE: TLS, basic authentication, headers
  bool check = false;      ///< --check: load and resolve the file, open nothing, print a summary
  int threads = 8;         ///< HTTP worker threads
  std::string sysfs = "/sys";
  spec::MachineOptions machine;
};

/// Run the exporter until SIGINT or SIGTERM; SIGHUP reloads. Returns the exit status.
int run(const ExporterOptions& options);

}  // namespace perfspec::tools::exporter
