// SPDX-License-Identifier: MIT
#pragma once
// What the resolver derives from a Machine and keeps for the Machine's lifetime: each alias encoded on
// each PMU, what a bare name names, and the names suggestions are drawn from. Internal to resolver/.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <tsl/robin_map.h>

#include "perfspec/event_set.hpp"
#include "perfspec/spec.hpp"
#include "resolver/suggest.hpp"
#include "spec/hash.hpp"
#include "spec/machine_impl.hpp"

namespace perfspec::resolver {

// An alias encoded on one PMU: the event as its definition alone leaves it, from a blank start. Kept
// per Machine, so a named event applies its definition's terms once, not on every resolve.
struct EncodedAlias {
  ResolvedEvent event;  ///< attr and metadata; name only when the definition sets `name=`
  bool sets_name = false;
  std::vector<std::string> required;  ///< its `param=?` terms
};

struct MachineMemo {
  struct Key {
    const void* pmu;
    const void* alias;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept {
      auto a = reinterpret_cast<std::uintptr_t>(k.pmu), b = reinterpret_cast<std::uintptr_t>(k.alias);
      return static_cast<std::size_t>((a * 0x9e3779b97f4a7c15ULL) ^ b);
    }
  };
  // What a bare name (`MEM_LOAD_RETIRED.L1_MISS`) names once it is known to be an alias: each PMU that
  // has it, with its encoding there. Kept by the name as written, only after it resolved once.
  struct NamedTarget {
    const spec::Pmu* pmu;
    const spec::Alias* alias;
    const EncodedAlias* encoded;
  };
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return spec::hash_bytes(s); }
  };
  std::mutex mutex;
  std::unordered_map<Key, EncodedAlias, KeyHash> aliases;  // (pmu, alias) -> its encoding on that PMU
  // Open addressing with a power-of-two table: std::unordered_map's bucket index is a division by a
  // prime, which was most of a lookup. Its entries move when it grows, so each holds its targets by pointer.
  tsl::robin_map<std::string, std::unique_ptr<const std::vector<NamedTarget>>, NameHash, std::equal_to<>,
                 std::allocator<std::pair<std::string, std::unique_ptr<const std::vector<NamedTarget>>>>,
                 true>
      named;
  static constexpr std::size_t max_named = 1u << 16;
  // Every name a bare event could have meant, by length, for suggestions: built at the first unknown name.
  std::once_flag suggestable_once;
  ByLength suggestable;

  static MachineMemo& of(const spec::Machine& m) { return spec::detail::extension<MachineMemo>(m); }
};

}  // namespace perfspec::resolver
