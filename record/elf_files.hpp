// SPDX-License-Identifier: MIT
#pragma once
// Reading the files that say which build a binary is: ELF build-id notes, the kernel's notes, this
// process's vdso. Internal to record/ (symbolizer.cpp, build_ids.cpp).
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

namespace perfspec::record::detail {

/// Opens `path` for reading only when it is a regular file (a name a recording gives may be a FIFO or
/// a device, whose open or read would block or never end): the fd, or -1 with errno set (EINVAL for a
/// file of another kind).
int open_regular(const std::string& path);
/// A file's bytes, read whole.
class FileText {
 public:
  std::string_view view() const { return {data_.get(), size_}; }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data_;
  std::size_t size_ = 0;
  friend FileText read_file(const std::string& path);
};
/// The whole of a regular file; throws Error (io) naming it. Read into one buffer that grows in place
/// (realloc): a file of /proc has no size to reserve, and /proc/kallsyms is megabytes, whose pages a
/// string's copies on growth would each touch again.
FileText read_file(const std::string& path);
/// The GNU build id of an ELF notes file (/sys/kernel/notes), as lowercase hex; empty if none.
std::string notes_build_id(const std::string& path);
/// A copy of this process's vdso in a memory file (its fd; -1 when there is none): the kernel maps
/// the same image into every process.
int own_vdso();
/// The build id an ELF file carries, as lowercase hex; empty when it has none or cannot be read.
/// `symtab` and `dynsym`, when given, are set when it has that section.
std::string file_build_id(const std::string& path, bool* symtab = nullptr, bool* dynsym = nullptr);

}  // namespace perfspec::record::detail
