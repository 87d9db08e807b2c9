# The device whose memory a firmware image is sized like: its profile (the JSON file `pocketlm
# plan --device NAME` reads, apps/pocketlm/devices/) becomes a generated header with the tiers the
# firmware gives the C API (names, capacities, the storage medium's reserved bytes), which also
# size its tier buffers (the linker section .tier<i> per RAM tier, board.h). One source for the
# host's plans and the firmware's memory map.
#
#   firmware_device_header(JSON_FILE OUTPUT_HEADER)
# The profile must have one or two RAM tiers (an ESP32-S3's SRAM and PSRAM, a PSP's heap) and then
# one storage tier, as the boards' memory maps do.
function(firmware_device_header json_file output)
  file(READ "${json_file}" json)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${json_file}")
  string(JSON name GET "${json}" name)
  string(JSON tier_count LENGTH "${json}" tiers)
  math(EXPR ram_count "${tier_count} - 1")
  if(ram_count LESS 1 OR ram_count GREATER 2)
    message(FATAL_ERROR "${json_file}: a firmware's memory map has one or two RAM tiers and a storage tier; "
                        "this profile has ${tier_count} tiers")
  endif()
  set(ram_rows)
  math(EXPR last "${tier_count} - 1")
  foreach(i RANGE ${last})
    string(JSON tier_name GET "${json}" tiers ${i} name)
    string(JSON capacity GET "${json}" tiers ${i} capacity)
    string(JSON storage ERROR_VARIABLE missing GET "${json}" tiers ${i} storage)
    if(missing)
      set(storage OFF)
    endif()
    if((i LESS last AND storage) OR (i EQUAL last AND NOT storage))
      message(FATAL_ERROR "${json_file}: the tiers before the last must be RAM and the last storage "
                          "(tier ${i}: ${tier_name})")
    endif()
    if(i LESS last)
      list(APPEND ram_rows "{\"${tier_name}\", ${capacity}ull}")
    else()
      set(storage_name ${tier_name})
      set(storage_capacity "${capacity}")
      if(storage_capacity STREQUAL "" OR storage_capacity STREQUAL "null")
        set(storage_capacity 0)  # a memory stick's size is the card's: unlimited to the plan
      endif()
    endif()
  endforeach()
  string(JSON reserved ERROR_VARIABLE missing GET "${json}" tiers ${last} reserved_bytes)
  if(missing)
    set(reserved 0)
  endif()
  string(JOIN ", " ram_table ${ram_rows})
  file(CONFIGURE OUTPUT "${output}" CONTENT
"// Generated from ${json_file} by src/ports/firmware/device_profile.cmake: do not edit.
#pragma once

#include <cstddef>
#include <cstdint>

// The RAM tiers' count, for the preprocessor (firmware_main.cpp defines one buffer each).
#define POCKETLM_FIRMWARE_RAM_TIERS ${ram_count}

namespace pocketlm::firmware {

struct FirmwareTier {
  const char* name;
  std::uint64_t capacity;  // bytes
};

inline constexpr const char* kDeviceName = \"${name}\";
inline constexpr int kRamTierCount = ${ram_count};
inline constexpr FirmwareTier kRamTiers[${ram_count}] = {${ram_table}};
inline constexpr FirmwareTier kStorageTier = {\"${storage_name}\", ${storage_capacity}ull};
inline constexpr std::uint64_t kStorageReservedBytes = ${reserved}ull;  // the firmware's own part of the medium

}  // namespace pocketlm::firmware
" @ONLY)
endfunction()
