# The device whose memory the firmware is sized like: its profile (the JSON file `pocketlm plan
# --device NAME` reads, apps/pocketlm/devices/) becomes a generated header with the engine's
# DeviceProfile and the RAM tiers' capacities, which size the firmware's tier buffers (one
# linker section per RAM tier). One source for the host's plans and the firmware's memory map.
#
#   firmware_device_header(JSON_FILE OUTPUT_HEADER)
# The profile must have two RAM tiers (internal SRAM, then PSRAM) and one storage tier, as the
# firmware's memory map does (mps2_an386.ld).
function(_json_or var json default)
  string(JSON value ERROR_VARIABLE missing GET "${json}" ${ARGN})
  if(missing)
    set(value "${default}")
  endif()
  set(${var} "${value}" PARENT_SCOPE)
endfunction()

function(_c_bool var value)
  if(value)
    set(${var} true PARENT_SCOPE)
  else()
    set(${var} false PARENT_SCOPE)
  endif()
endfunction()

function(firmware_device_header json_file output)
  file(READ "${json_file}" json)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${json_file}")
  string(JSON name GET "${json}" name)
  string(JSON tier_count LENGTH "${json}" tiers)
  _json_or(kernels "${json}" "" kernels)
  _json_or(macs "${json}" 0 compute macs_per_s)
  set(tiers "")
  set(ram_capacities "")
  set(storage_tiers 0)
  math(EXPR last "${tier_count} - 1")
  foreach(i RANGE ${last})
    string(JSON tier_name GET "${json}" tiers ${i} name)
    _json_or(storage "${json}" OFF tiers ${i} storage)
    string(JSON capacity GET "${json}" tiers ${i} capacity)
    _json_or(rate "${json}" 0 tiers ${i} read_bytes_per_s)
    _json_or(latency "${json}" 0 tiers ${i} read_latency_s)
    _json_or(overlap "${json}" OFF tiers ${i} reads_overlap_compute)
    _json_or(reserved "${json}" 0 tiers ${i} reserved_bytes)
    _c_bool(storage_c "${storage}")
    _c_bool(overlap_c "${overlap}")
    string(APPEND tiers "      {\"${tier_name}\", ${storage_c}, ${capacity}ull, ${rate}, ${latency}, ${overlap_c}, \"${json_file}\", ${reserved}ull, \"${json_file}\"},\n")
    if(storage)
      math(EXPR storage_tiers "${storage_tiers} + 1")
    else()
      list(APPEND ram_capacities "${capacity}")
    endif()
  endforeach()
  list(LENGTH ram_capacities ram_tiers)
  if(NOT ram_tiers EQUAL 2 OR NOT storage_tiers EQUAL 1)
    message(FATAL_ERROR "${json_file}: the firmware's memory map has two RAM tiers and one storage tier; "
                        "this profile has ${ram_tiers} and ${storage_tiers}")
  endif()
  list(GET ram_capacities 0 tier0)
  list(GET ram_capacities 1 tier1)
  if(kernels STREQUAL "")
    set(kernels_c nullptr)
  else()
    set(kernels_c "\"${kernels}\"")
  endif()
  file(CONFIGURE OUTPUT "${output}" CONTENT
"// Generated from ${json_file} by src/ports/cortex_m/device_profile.cmake: do not edit.
#pragma once

#include <cstddef>

#include \"pocketlm/runtime/device_profile.h\"

namespace pocketlm::firmware {

inline constexpr DeviceProfile kDevice = {
    \"${name}\",
    \"${json_file}\",
    {
${tiers}    },
    ${tier_count},
    ${macs},
    \"${json_file}\",
    0,
    0,
    \"\",
    ${kernels_c},
};

// The RAM tiers' capacities (bytes): the firmware's tier buffers, one linker section each.
inline constexpr std::size_t kTier0Bytes = ${tier0};
inline constexpr std::size_t kTier1Bytes = ${tier1};

}  // namespace pocketlm::firmware
" @ONLY)
endfunction()
