# The device whose memory the firmware is sized like: its profile (the JSON file `pocketlm plan
# --device NAME` reads, apps/pocketlm/devices/) becomes a generated header with the tiers the
# firmware gives the C API (names, capacities, the storage medium's reserved bytes), which also
# size its tier buffers (one linker section per RAM tier). One source for the host's plans and
# the firmware's memory map.
#
#   firmware_device_header(JSON_FILE OUTPUT_HEADER)
# The profile must have two RAM tiers (internal SRAM, then PSRAM) and then one storage tier, as the
# firmware's memory map does (mps2_an386.ld).
function(firmware_device_header json_file output)
  file(READ "${json_file}" json)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${json_file}")
  string(JSON name GET "${json}" name)
  string(JSON tier_count LENGTH "${json}" tiers)
  if(NOT tier_count EQUAL 3)
    message(FATAL_ERROR "${json_file}: the firmware's memory map has two RAM tiers and a storage tier; "
                        "this profile has ${tier_count} tiers")
  endif()
  foreach(i 0 1 2)
    string(JSON tier_name${i} GET "${json}" tiers ${i} name)
    string(JSON capacity${i} GET "${json}" tiers ${i} capacity)
    string(JSON storage ERROR_VARIABLE missing GET "${json}" tiers ${i} storage)
    if(missing)
      set(storage OFF)
    endif()
    if((i LESS 2 AND storage) OR (i EQUAL 2 AND NOT storage))
      message(FATAL_ERROR "${json_file}: tiers 0 and 1 must be RAM and tier 2 storage (tier ${i}: ${tier_name${i}})")
    endif()
  endforeach()
  string(JSON reserved ERROR_VARIABLE missing GET "${json}" tiers 2 reserved_bytes)
  if(missing)
    set(reserved 0)
  endif()
  file(CONFIGURE OUTPUT "${output}" CONTENT
"// Generated from ${json_file} by src/ports/cortex_m/device_profile.cmake: do not edit.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pocketlm::firmware {

struct FirmwareTier {
  const char* name;
  std::uint64_t capacity;  // bytes
};

inline constexpr const char* kDeviceName = \"${name}\";
inline constexpr FirmwareTier kRamTiers[2] = {{\"${tier_name0}\", ${capacity0}ull}, {\"${tier_name1}\", ${capacity1}ull}};
inline constexpr FirmwareTier kStorageTier = {\"${tier_name2}\", ${capacity2}ull};
inline constexpr std::uint64_t kStorageReservedBytes = ${reserved}ull;  // the firmware's own part of the medium

// The RAM tiers' capacities: the firmware's tier buffers, one linker section each.
inline constexpr std::size_t kTier0Bytes = ${capacity0};
inline constexpr std::size_t kTier1Bytes = ${capacity1};

}  // namespace pocketlm::firmware
" @ONLY)
endfunction()
