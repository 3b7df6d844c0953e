// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string_view>

namespace perfspec::spec {

/// XXH3 (64 bits) of a byte string: the table index's hash of names, and the resolver memo's. For the
/// short strings event names are, about a third of the work of std::hash (murmur).
std::uint64_t hash_bytes(std::string_view bytes) noexcept;

}  // namespace perfspec::spec
