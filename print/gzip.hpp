// SPDX-License-Identifier: MIT
#pragma once
// gzip (RFC 1952) with zlib: pprof profiles (print/profile_export.cpp) and the exporter's answers to
// clients that accept it.
#include <string>
#include <string_view>

namespace perfspec {

/// `data` as one gzip member, zlib's default level. Throws Error (io) when zlib fails.
std::string gzip(std::string_view data);

}  // namespace perfspec
