# The firmware images every bare-metal board builds (board.h, firmware_main.cpp), included by a
# board's CMakeLists.txt after it has set:
#   POCKETLM_BOARD_SOURCES  its reset code, system calls and board.h implementation (with paths);
#                           stack_watermark.cpp, shared, paints the stack between the linker
#                           script's __stack_limit and __stack_top and reads its high-water mark
#   POCKETLM_BOARD_KERNELS  its default backend (cortex_m4 on the M4F, tiled4 elsewhere)
#   POCKETLM_FIRMWARE_DEVICE_DEFAULT  the device profile it is laid out like (esp32s3, psp)
# and defined link_for_board(TARGET): its linker script, libraries and link options.
include(${CMAKE_CURRENT_LIST_DIR}/device_profile.cmake)
set(POCKETLM_FIRMWARE_DIR ${CMAKE_CURRENT_LIST_DIR})

set(POCKETLM_FIRMWARE_DEVICE ${POCKETLM_FIRMWARE_DEVICE_DEFAULT} CACHE STRING
    "device profile (apps/pocketlm/devices/NAME.json) the firmware is sized like")
firmware_device_header(${CMAKE_SOURCE_DIR}/apps/pocketlm/devices/${POCKETLM_FIRMWARE_DEVICE}.json
                       ${CMAKE_CURRENT_BINARY_DIR}/generated/firmware_device.h)

# The model files the tests read, found where they find them: POCKETLM_SHARED_DIR's models/,
# else the download cache that scripts/get-models --tests fills.
function(find_model var name)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env "POCKETLM_SHARED=${POCKETLM_SHARED_DIR}"
                          ${CMAKE_SOURCE_DIR}/scripts/get-models --path ${name}
                  OUTPUT_VARIABLE path ERROR_VARIABLE why RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "firmware image: ${why}")
  endif()
  set(${var} "${path}" PARENT_SCOPE)
endfunction()

# add_firmware(NAME MODEL_MODE MODEL TOKENIZER PROMPT STEPS): one image per golden case
# (tests/golden/reference_runs.json, llama2.c's, and tests/golden/firmware_runs.json, the host's),
# the case's prompt and steps compiled in (greedy). MODEL_MODE is LINKED (the model in code memory,
# as flash would hold it) or HOST_FILE (read through semihosting). Built with the board's default
# backend (firmware_NAME) and, where that is not tiled4, with tiled4 too (firmware_NAME__tiled4),
# to count both.
function(add_firmware name mode model tokenizer prompt steps)
  add_firmware_with(${name} ${POCKETLM_BOARD_KERNELS} ${mode} "${model}" "${tokenizer}" "${prompt}" ${steps})
  if(NOT POCKETLM_BOARD_KERNELS STREQUAL "tiled4")
    add_firmware_with(${name}__tiled4 tiled4 ${mode} "${model}" "${tokenizer}" "${prompt}" ${steps})
  endif()
endfunction()

# add_calibration_firmware(NAME MODEL_MODE MODEL TOKENIZER PROMPT STEPS): add_firmware for a case
# a public device measurement calibrates (bench/device/calibration.json), and the image with the
# reference backend too (firmware_NAME__reference): bench/device/estimate fits its CPI to those
# counts, llama2.c's own loops, the code closest to the runtimes that were measured.
function(add_calibration_firmware name mode model tokenizer prompt steps)
  add_firmware(${name} ${mode} "${model}" "${tokenizer}" "${prompt}" ${steps})
  add_firmware_with(${name}__reference reference ${mode} "${model}" "${tokenizer}" "${prompt}" ${steps})
endfunction()

# add_firmware_with(NAME KERNELS MODEL_MODE MODEL TOKENIZER PROMPT STEPS [DEFINITIONS...])
function(add_firmware_with name kernels mode model tokenizer prompt steps)
  set(extra_definitions ${ARGN})
  # One images object per firmware: the paths differ.
  configure_file(${POCKETLM_FIRMWARE_DIR}/images.S ${CMAKE_CURRENT_BINARY_DIR}/${name}_images.S COPYONLY)
  set(images ${CMAKE_CURRENT_BINARY_DIR}/${name}_images.S)
  add_executable(${name} ${POCKETLM_FIRMWARE_DIR}/firmware_main.cpp ${POCKETLM_FIRMWARE_DIR}/semihosting_storage.cpp
                 ${POCKETLM_FIRMWARE_DIR}/stack_watermark.cpp ${POCKETLM_BOARD_SOURCES} ${images})
  if(mode STREQUAL "LINKED")
    set_source_files_properties(${images} PROPERTIES
      COMPILE_DEFINITIONS "POCKETLM_MODEL_PATH=\"${model}\";POCKETLM_TOKENIZER_PATH=\"${tokenizer}\""
      OBJECT_DEPENDS "${model};${tokenizer}")
    target_compile_definitions(${name} PRIVATE POCKETLM_MODEL_PATH="${model}")
  else()
    set_source_files_properties(${images} PROPERTIES
      COMPILE_DEFINITIONS "POCKETLM_TOKENIZER_PATH=\"${tokenizer}\"" OBJECT_DEPENDS "${tokenizer}")
    target_compile_definitions(${name} PRIVATE POCKETLM_MODEL_HOST_FILE="${model}")
  endif()
  target_compile_definitions(${name} PRIVATE
    POCKETLM_FIRMWARE_PROMPT="${prompt}"
    POCKETLM_FIRMWARE_STEPS=${steps}
    POCKETLM_FIRMWARE_KERNELS="${kernels}"
    ${extra_definitions})
  firmware_target(${name})
endfunction()

# add_kernel_bench(NAME MODEL): the instructions each matrix of MODEL (read from the host) costs a
# decode token, with the board's default backend and tiled4 (kernel_bench_main.cpp).
function(add_kernel_bench name model)
  add_executable(${name} ${POCKETLM_FIRMWARE_DIR}/kernel_bench_main.cpp ${POCKETLM_FIRMWARE_DIR}/semihosting_storage.cpp
                 ${POCKETLM_FIRMWARE_DIR}/stack_watermark.cpp ${POCKETLM_BOARD_SOURCES})
  target_compile_definitions(${name} PRIVATE POCKETLM_MODEL_HOST_FILE="${model}"
                             POCKETLM_FIRMWARE_KERNELS="${POCKETLM_BOARD_KERNELS}")
  firmware_target(${name})
endfunction()

# add_stories260K_cases(MODEL_MODE): llama2.c's golden cases every board runs, stories260K fp32 with
# a prompt (s260K_greedy_layla) and q80 at group size 4 without (s260Kq80_greedy_noprompt), the
# models LINKED or read from the HOST_FILE, and the q80 model's kernel bench. Sets tok512,
# stories260K and stories260K_q80 (the files' paths) for the board's planted cases.
macro(add_stories260K_cases mode)
  find_model(tok512 tok512.bin)
  find_model(stories260K stories260K.bin)
  find_model(stories260K_q80 stories260K_q80.bin)
  add_calibration_firmware(firmware_s260K_greedy_layla ${mode} "${stories260K}" "${tok512}"
               "Once upon a time, there was a little girl named Layla" 64)
  add_firmware(firmware_s260Kq80_greedy_noprompt ${mode} "${stories260K_q80}" "${tok512}" "" 200)
  add_kernel_bench(kernelbench_s260Kq80 "${stories260K_q80}")
endmacro()

# add_esp32_ple_case(): the ESP32-shaped PLE model (`pocketlm synth esp32-ple --seed 42`, then
# `convert --type q4_0 --tensor-type ple_table=iq4_xs`; `make esp32-ple-model` makes it with the host
# build) against the host's tokens, its 15 MB read from the host: the per-layer table stays in the
# flash tier, one 408-byte row read per token; with Llama 2's tokenizer (linked in, and counted in
# the flash by the plan) it fits the 16 MiB. And its kernel bench. Only when
# POCKETLM_FIRMWARE_PLE_MODEL names the file.
function(add_esp32_ple_case)
  set(POCKETLM_FIRMWARE_PLE_MODEL "" CACHE FILEPATH "esp32-ple_iq4xs.gguf; empty: no PLE firmware")
  if(NOT POCKETLM_FIRMWARE_PLE_MODEL)
    message(STATUS "POCKETLM_FIRMWARE_PLE_MODEL is not set: no firmware for the ESP32-shaped PLE model")
    return()
  endif()
  find_model(tokenizer32k tokenizer.bin)
  add_calibration_firmware(firmware_esp32ple_iq4xs_greedy HOST_FILE "${POCKETLM_FIRMWARE_PLE_MODEL}" "${tokenizer32k}"
               "Once upon a time" 24)
  add_kernel_bench(kernelbench_esp32ple_iq4xs "${POCKETLM_FIRMWARE_PLE_MODEL}")
endfunction()

# The include paths and options every firmware program compiles with, then the board's link.
function(firmware_target name)
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_CURRENT_BINARY_DIR}/generated)
  target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions -fno-rtti>)
  target_link_libraries(${name} PRIVATE pocketlm)
  link_for_board(${name})
endfunction()

# Every function's stack frame is bounded: a frame over POCKETLM_STACK_LIMIT bytes is a build error
# (-Wstack-usage; the ESP-IDF port's main task has 16 KiB). The largest today is tiled4's q8_0
# matmul, whose int16 copy of the activations is 1 KiB by design. GCC only: clang has no
# -Wstack-usage (the Xtensa build's frames are measured by the stack high-water mark instead).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(POCKETLM_STACK_LIMIT 1280 CACHE STRING "largest stack frame allowed in the engine (bytes)")
  target_compile_options(pocketlm PRIVATE -fstack-usage -Wstack-usage=${POCKETLM_STACK_LIMIT})
  # -Wstack-usage has no -Werror= form of its own: the warning is promoted by name.
  target_compile_options(pocketlm PRIVATE -Werror=stack-usage=${POCKETLM_STACK_LIMIT})
endif()
