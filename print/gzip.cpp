// SPDX-License-Identifier: MIT
#include "print/gzip.hpp"

#include <zlib.h>

#include "perfspec/error.hpp"

namespace perfspec {

std::string gzip(std::string_view data) {
  if (data.size() > (1u << 31)) throw Error(ErrorKind::io, "cannot compress more than 2 GiB at once");
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw Error(ErrorKind::io, "cannot compress (zlib: out of memory)");
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw Error(ErrorKind::io, "cannot compress (zlib)");
  return out;
}

}  // namespace perfspec
