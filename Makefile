# Thin front for CMake. The commands a user needs (each first installs what is missing on
# Debian/Ubuntu: scripts/setup):
#   make demo   Release build, and the shipped model (assets/stories1M.gguf) writes a story
#   make test   build and run every test (unit, golden token-exact, CLI errors, PyTorch parity);
#               without ../shared it first downloads the public models the tests read
#               (scripts/get-models --tests), and the tests whose files are missing skip
#   make train        retrain the shipped model from scratch (train/; 35 min on a busy 2-core machine)
#   make train-smoke  a tiny model in about 30 s: train -> export -> tokenizer and parity checks
#   make distill-data stories sampled from stories260K into runs/distill/ (train/distill.py)
#   make synth-models   models/synth15M.bin and synth15M_q80.bin (docs/memory-and-tiers.md, docs/performance.md)
#   make test-aarch64   cross-build for 64-bit ARM, its kernel and golden tests (NEON) under qemu
#   make test-mips      cross-build for 32-bit little-endian MIPS, the tests that differ there, under qemu
#   make test-cpus      the host build under qemu-x86_64 as an AVX2-only and an SSE-only CPU
# The cross, sanitizer, valgrind and fuzz targets name the Debian packages they need below
# (and in docs/testing.md, "Other test targets").
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
PROMPT ?= Once upon a time, there was a little robot
CMAKE_FLAGS ?=
# The model that ships with the project (trained by `make train`, GGUF f32 with its tokenizer).
DEFAULT_MODEL ?= assets/stories1M.gguf
# Debian's interpreter: python3-torch, -numpy, -sentencepiece and -matplotlib live there.
PYTHON ?= /usr/bin/python3

.PHONY: all build demo test test-aarch64 bench models synth-models screenshots clean train train-smoke distill-data

all: build

build:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j$(JOBS)

# stories260K (fp32 and q80), tok512.bin and tokenizer.bin into models/, from ../shared or their
# public sources (pinned sha256: tests/public-models.txt); without ../shared the q80 one is
# made by the build's pocketlm convert (make build first).
models:
	POCKETLM_BINARY=$(BUILD)/pocketlm scripts/get-models models

# The stories15M-shaped synthetic model (random weights, fixed bytes: shared/spec/
# synthetic-models.md) and its q80 conversion; with models/tokenizer.bin from `make models`.
synth-models: build models
	[ -f models/synth15M.bin ] || $(BUILD)/pocketlm synth stories15M --seed 42 -o models/synth15M.bin
	[ -f models/synth15M_q80.bin ] || $(BUILD)/pocketlm convert models/synth15M.bin --to q80 -o models/synth15M_q80.bin

# The set-up is part of the two commands: scripts/setup installs what is missing (apt-get as
# root or through sudo), then the build; sequential so that `make -j` keeps the order. The demo
# builds only the pocketlm program.
demo:
	scripts/setup demo
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j$(JOBS) --target pocketlm_exe
	$(BUILD)/pocketlm run $(DEFAULT_MODEL) -t 0.8 -p 0.9 -s 42 -n 256 -i "$(PROMPT)"

# The device-screen pictures (docs/console-*.png, docs/chat-and-console.md): the chat on the emulated PSP and
# ESP32-S3 screens, prompts from an OSK script (scripts/make-screenshots).
screenshots: build models
	scripts/make-screenshots $(BUILD) models

# get-models --tests fetches what ../shared would have given into the download cache
# (~/.cache/pocketlm); offline it says what it could not get and the test run goes on, those
# tests skipping with one line each. The build's pocketlm makes stories260K_q80.bin. ctest
# names the skipped tests; scripts/test-skips then says why, and ctest's status is make's.
test:
	scripts/setup test
	$(MAKE) build
	POCKETLM_BINARY=$(BUILD)/pocketlm scripts/get-models --tests
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS); status=$$?; scripts/test-skips $(BUILD); exit $$status

# Training (train/, docs/training.md): reads ../shared/data/tinystories-5k.txt (or
# $POCKETLM_SHARED/data/), which has no public download (docs/sources.md). `train`
# rebuilds the shipped model into runs/default/ (copy runs/default/model.gguf to
# $(DEFAULT_MODEL) to ship it) and prints its validation loss; `train-smoke` (CI) trains a
# 41K-parameter model (8 s of training here, at most 55 s) and checks the tokenizer, export and
# parity.
train:
	scripts/setup test
	$(MAKE) build
	nice $(PYTHON) -m train.run default
# A corpus of stories sampled from stories260K (train/distill.py) into runs/distill/.
distill-data:
	scripts/setup test
	$(MAKE) build
	$(PYTHON) -m train.distill
train-smoke:
	scripts/setup test
	$(MAKE) build
	$(PYTHON) -m train.run smoke
	$(PYTHON) -m train.run smoke-kd

# The cross builds compile and run the tests whose code differs per instruction set and word
# size (ctest labels, tests/CMakeLists.txt). The cli tests spawn the same C++ once per flag and
# run natively. aarch64 is 64-bit and little-endian like the host: only its NEON backend
# differs (kernel, golden). MIPS is 32-bit: the formats, plans and sizes (model, unit) differ
# there too. AARCH64_LABELS= or MIPS_LABELS= (empty) runs every test.
AARCH64_LABELS ?= kernel|golden
MIPS_LABELS ?= kernel|golden|model|unit
# Left out under emulation, where they were 60 % of the time (16 of MIPS's minutes): the
# stories15M-shaped golden runs and conversions on every backend (stories260K's cover each
# backend's kernels, the native run the larger shape), and the ESP32 PLE model with its IQ4_XS
# table run on the host's tokens (test-bare-metal runs that model on a 32-bit Cortex-M against
# the same tokens), and the ESP-IDF partition table's check, which makes that model only to
# read its size (an eighth of MIPS's test time; the native run checks the same bytes, pinned
# by sha256). CROSS_EXCLUDE= runs them too.
CROSS_EXCLUDE ?= synth15M|PleEsp32.TheFirmwareGoldenRunIsTheHostsTokens|PleEsp32Table.*iq4_xs|EspPort.PartitionTable
# $(call cross_ctest,LABELS) and $(call cross_cmake,LABELS): the run and the build of those labels.
cross_ctest = ctest --output-on-failure -j$(JOBS) $(if $(1),-L '$(1)') $(if $(CROSS_EXCLUDE),-E '$(CROSS_EXCLUDE)')
cross_cmake = $(if $(1),"-DPOCKETLM_TEST_LABELS=$(subst |,;,$(1))") $(CMAKE_FLAGS)

# Cross build with Debian's g++-aarch64-linux-gnu; ctest runs the tests (and the tests run
# the pocketlm binary) through qemu-aarch64-static (cmake/aarch64-linux-gnu.cmake). The models
# come as for make test (the host build's pocketlm, if there, makes the q80 one). Needs the
# packages g++-aarch64-linux-gnu qemu-user-static googletest.
AARCH64_BUILD ?= build-aarch64
test-aarch64:
	cmake -S . -B $(AARCH64_BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
	  $(call cross_cmake,$(AARCH64_LABELS))
	cmake --build $(AARCH64_BUILD) -j$(JOBS)
	POCKETLM_BINARY=$(BUILD)/pocketlm scripts/get-models --tests
	$(call cross_ctest,$(AARCH64_LABELS)) --test-dir $(AARCH64_BUILD); status=$$?; scripts/test-skips $(AARCH64_BUILD); exit $$status

# x86-64 CPUs this machine may not be (scripts/test-cpu): the host build under qemu-x86_64
# -cpu Haswell (AVX2 and FMA, no AVX-512; the features TCG cannot emulate turned off, or it
# warns on stderr) and -cpu Nehalem (no AVX): every test executable's listing (what the build's
# test discovery runs: a table built with instructions the CPU lacks dies there), then the
# kernel tests and stories260K's golden runs, with the backend each CPU picks (the model tests
# run the same engine code on every x86-64 CPU, natively). TCG is 10-100x slower than the host
# on vector code: the synth shapes are left to the native run; TCG does not raise x86 FP
# exceptions, so the FP-trap tests are too. Needs the package qemu-user.
QEMU_HASWELL = Haswell,-pcid,-x2apic,-tsc-deadline,-hle,-rtm,-invpcid
CPU_TEST_EXCLUDE ?= synth|FpTrap
.PHONY: test-cpus
test-cpus: build
	POCKETLM_BINARY=$(BUILD)/pocketlm scripts/get-models --tests
	scripts/test-cpu $(QEMU_HASWELL) $(BUILD) --labels 'kernel|golden' --exclude '$(CPU_TEST_EXCLUDE)'
	scripts/test-cpu Nehalem $(BUILD) --labels 'kernel|golden' --exclude '$(CPU_TEST_EXCLUDE)'

# Cross build for 32-bit little-endian MIPS (the PSP's family) with Debian's g++-mipsel-linux-gnu;
# no SIMD backend there, so reference and tiled4 run. ctest runs the MIPS_LABELS tests through
# qemu-mipsel-static (cmake/mipsel-linux-gnu.cmake). For a quicker pass, MIPS_TESTS is a ctest
# -R regex; the stories260K golden cases, the kernel equivalence tests, the header/tokenizer
# error tests and the 32-bit size checks:
#   make test-mips MIPS_TESTS='s260K|KernelEquivalence|BadHeader|ValidHeader|BadTokenizer|Addressable'
# Needs the packages g++-mipsel-linux-gnu qemu-user-static googletest.
MIPS_BUILD ?= build-mips
MIPS_TESTS ?=
.PHONY: test-mips
test-mips:
	cmake -S . -B $(MIPS_BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=cmake/mipsel-linux-gnu.cmake \
	  $(call cross_cmake,$(MIPS_LABELS))
	cmake --build $(MIPS_BUILD) -j$(JOBS)
	POCKETLM_BINARY=$(BUILD)/pocketlm scripts/get-models --tests
	$(call cross_ctest,$(MIPS_LABELS)) --test-dir $(MIPS_BUILD) $(if $(MIPS_TESTS),-R '$(MIPS_TESTS)'); status=$$?; scripts/test-skips $(MIPS_BUILD); exit $$status

# AddressSanitizer + UndefinedBehaviorSanitizer (and LeakSanitizer): the suite but the
# trainer's tests, whose tests also spawn the sanitized pocketlm binary. ASan cannot link statically, so the CLI is
# linked dynamically here; alloc_count_test is left out (POCKETLM_SANITIZE, tests/CMakeLists.txt).
# allocator_may_return_null: the engine asks for its arena with nothrow new and reports a
# refused size (a hostile header's seq_len) as an error; ASan would abort on it instead.
SANITIZE_BUILD ?= build-sanitize
# The 42M and 110M shapes' golden runs stream hundreds of MB through the same code as the
# smaller ones: minutes under ASan for no path the others miss; so do the docs' commands, which
# make those shapes for their tables and check the pages' figures, not memory (SANITIZE_EXCLUDE=
# runs them).
SANITIZE_EXCLUDE ?= synth42M|synth110M|doc_commands
# The train label is the PyTorch trainer's (Python code: nothing for ASan to see; its parity
# checks of the engine run in make test).
SANITIZE_LABELS_EXCLUDE ?= train
# UBSan's vptr check needs the typeinfo of every polymorphic class; the engine is built with
# -fno-rtti by design, so that one check is off (the CLI's calls into it would not link).
SANITIZE_FLAGS = -fsanitize=address,undefined -fno-sanitize=vptr -fno-omit-frame-pointer -fno-sanitize-recover=all
# Line tables are all a report's stack needs (file:line per frame); full debug info (-g) adds
# compile time to the largest build of the run for nothing a report prints. -O1, as ASan's
# documentation advises: -O2 doubled the compile time of the CLI's JSON files under ASan+UBSan
# (cmd_plan.cpp: 40 s against 19 s here), in CI's slowest build.
SANITIZE_OPT = -O1 -g1 -DNDEBUG
.PHONY: test-sanitize
test-sanitize:
	cmake -S . -B $(SANITIZE_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPOCKETLM_SANITIZE=ON \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$(SANITIZE_OPT)" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=$(SANITIZE_OPT)" \
	  -DPOCKETLM_STATIC_CLI=OFF -DPOCKETLM_BUILD_BENCH=OFF \
	  "-DCMAKE_CXX_FLAGS=$(SANITIZE_FLAGS)" "-DCMAKE_EXE_LINKER_FLAGS=$(SANITIZE_FLAGS)"
	cmake --build $(SANITIZE_BUILD) -j$(JOBS)
	ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:print_stacktrace=1:allocator_may_return_null=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  ctest --test-dir $(SANITIZE_BUILD) --output-on-failure -j$(JOBS) $(if $(SANITIZE_EXCLUDE),-E '$(SANITIZE_EXCLUDE)') \
	  $(if $(SANITIZE_LABELS_EXCLUDE),-LE '$(SANITIZE_LABELS_EXCLUDE)')

# The stories260K golden runs (fp32 and q80) under valgrind memcheck, with the reference
# kernels and the default ones; the tokens must still match. The binary is the Release build's
# program linked dynamically (pocketlm-dynamic: one more link of the same objects): memcheck
# cannot replace malloc in a static executable and reports static glibc's own start-up code
# as using uninitialised memory.
.PHONY: test-valgrind
test-valgrind: build
	cmake --build $(BUILD) -j$(JOBS) --target pocketlm_dynamic
	scripts/valgrind-golden $(BUILD)/pocketlm-dynamic

# Bare metal: the engine library and two firmware images for a Cortex-M4F (Arm's MPS2-AN386
# board), built with arm-none-eabi-g++ and newlib-nano; every engine stack frame is bounded
# at build time (-Wstack-usage). test-bare-metal runs them on QEMU and checks llama2.c's golden
# tokens, the stack high-water mark and the FPU's sticky flags (scripts/run-firmware-golden), and
# that no double arithmetic is reachable from a token's work (scripts/check-soft-double). Needs the packages
# gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib (and, to run,
# qemu-system-arm).
BARE_METAL_BUILD ?= build-cortex-m
# The ESP32-shaped PLE model in Q4_0 with its table in IQ4_XS (what fits the ESP32-S3's flash
# beside the tokenizer), made by the host build as the tests make it (the same file and sha256
# as golden_model_path("esp32-ple_iq4xs.gguf") in tests/golden_models.cpp; convert writes the
# source's file name into general.name, so the intermediate keeps the tests' name, in a folder
# of its own).
PLE_MODEL = $(BUILD)/test-models/esp32-ple_iq4xs.gguf
PLE_MODEL_SHA256 = $(shell sed -n 's/.*kSynthEsp32PleIQ4XSSha256 = "\([0-9a-f]*\)".*/\1/p' tests/golden_models.h)
.PHONY: check-bare-metal test-bare-metal esp32-ple-model
esp32-ple-model: build
	@if ! echo "$(PLE_MODEL_SHA256)  $(PLE_MODEL)" | sha256sum -c --status 2>/dev/null; then \
	  rm -rf $(BUILD)/test-models/making && mkdir -p $(BUILD)/test-models/making && \
	  $(BUILD)/pocketlm synth esp32-ple --seed 42 -o $(BUILD)/test-models/making/esp32-ple.gguf && \
	  $(BUILD)/pocketlm convert $(BUILD)/test-models/making/esp32-ple.gguf --to gguf --type q4_0 \
	    --tensor-type ple_table=iq4_xs -o $(BUILD)/test-models/making/esp32-ple_iq4xs.gguf && \
	  echo "$(PLE_MODEL_SHA256)  $(BUILD)/test-models/making/esp32-ple_iq4xs.gguf" | sha256sum -c --status && \
	  mv $(BUILD)/test-models/making/esp32-ple_iq4xs.gguf $(PLE_MODEL) && rm -rf $(BUILD)/test-models/making; fi
check-bare-metal: esp32-ple-model
	cmake -S . -B $(BARE_METAL_BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi-cortex-m4f.cmake \
	  -DPOCKETLM_FIRMWARE_PLE_MODEL=$(abspath $(PLE_MODEL))
	cmake --build $(BARE_METAL_BUILD) -j$(JOBS)
test-bare-metal: check-bare-metal
	scripts/run-firmware-golden $(BARE_METAL_BUILD)
	$(MAKE) device-estimate
	scripts/check-soft-double --self-test
	for elf in $(BARE_METAL_BUILD)/src/ports/cortex_m/firmware_*; do \
	  case $$elf in *.*) ;; *) scripts/check-soft-double $$elf || exit 1;; esac; done

# The engine on the ESP32-S3's instruction set, bare metal: an Xtensa LX7 (windowed registers,
# FPU) on QEMU's sim machine with the de233_fpu core (src/ports/xtensa_sim), laid out like an
# ESP32-S3 (the esp32s3 profile's SRAM and PSRAM tiers as linker regions, the flash holding the
# images; the PLE model read from the host through simcall semihosting), built with Debian's
# clang-22 (src/ports/xtensa_sim/xtensa-clang mends LLVM 22's Xtensa miscompilations) and
# binutils' ld, and the freestanding runtime. stories260K fp32 and q80 against llama2.c's tokens,
# the ESP32-shaped PLE model against the host's reading <= 450 storage bytes a token, a planted
# unaligned load that must fault, instructions per token (CCOUNT); the kernel benches; the
# soft-double guard. Needs clang-22 llvm-22 libc++-22-dev picolibc-xtensa-lx106-elf
# binutils-xtensa-lx106 gcc-xtensa-lx106 qemu-system-misc newlib-source gcc-12-source.
.PHONY: test-xtensa
test-xtensa: esp32-ple-model
	POCKETLM_BINARY=$(BUILD)/pocketlm scripts/get-models --tests
	cmake -S . -B $(XTENSA_BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=cmake/xtensa-lx7.cmake \
	  -DPOCKETLM_FIRMWARE_PLE_MODEL=$(abspath $(PLE_MODEL))
	cmake --build $(XTENSA_BUILD) -j$(JOBS)
	scripts/run-firmware-golden $(XTENSA_BUILD)
	scripts/check-soft-double --self-test --isa xtensa
	for elf in $(XTENSA_BUILD)/src/ports/xtensa_sim/firmware_*; do \
	  case $$elf in *.*) ;; *) scripts/check-soft-double $$elf || exit 1;; esac; done

# The engine on the PSP's instruction set family, bare metal: a MIPS32 laid out as a PSP-1000
# (src/ports/mips_psp: its 24 MiB heap holds the psp profile's tier, models read from the host as
# from a memory stick) on QEMU's Malta board, single-float ABI with the PSP's FCR31 (0x0E00: a
# trapping FP operation stops the case with its PC and cause), UHI semihosting, the freestanding
# runtime (src/ports/freestanding: newlib's libm and gcc's soft-fp from Debian's source packages).
# stories260K fp32 and q80 and synth15M q80 against llama2.c's tokens, a planted 0/0 that must
# trap, instructions per token; the soft-double guard on its images; the runtime's arithmetic
# against the host's. Needs g++-mipsel-linux-gnu qemu-system-mips newlib-source gcc-12-source.
PSP_MIPS_BUILD ?= build-psp-mips
XTENSA_BUILD ?= build-xtensa
.PHONY: test-psp-mips
test-psp-mips: synth-models
	POCKETLM_BINARY=$(BUILD)/pocketlm scripts/get-models --tests
	cmake -S . -B $(PSP_MIPS_BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=cmake/mipsel-psp-baremetal.cmake \
	  -DPOCKETLM_FIRMWARE_SYNTH15M_Q80=$(abspath models/synth15M_q80.bin)
	cmake --build $(PSP_MIPS_BUILD) -j$(JOBS)
	scripts/run-firmware-golden $(PSP_MIPS_BUILD)
	scripts/check-soft-double --self-test --isa mips
	for elf in $(PSP_MIPS_BUILD)/src/ports/mips_psp/firmware_*; do \
	  case $$elf in *.*) ;; *) scripts/check-soft-double $$elf || exit 1;; esac; done
	scripts/ports/check-freestanding-runtime

# The PSP and ESP-IDF ports built as far as they can be without their SDKs: the one source list,
# partitions.csv by ESP-IDF's rules, the PSP Makefile's logic and its MIPS32 objects, the ESP
# component's list, its guide's command and its Xtensa objects, all against stand-in SDK
# headers of our own, each check also run on copies with a planted fault (scripts/check-ports).
# Needs mipsel-linux-gnu-g++, clang-22, llvm-22 and libc++-22-dev, picolibc-xtensa-lx106-elf.
.PHONY: check-ports
check-ports: esp32-ple-model
	scripts/check-ports $(BUILD)

# Device tok/s estimates from counted instructions (bench/device/estimate): the firmware cases'
# counts from the last runs of test-bare-metal (Thumb-2), test-xtensa and test-psp-mips (the
# devices' own ISAs), and, when `make test-mips` has built the mipsel CLI, its instructions per
# token on the stories15M shape (qemu-mipsel with the counting plugin, bench/device/insn_count.c;
# Debian's qemu-user package, the dynamic one: qemu-user-static loads no plugins). A CPI is
# fitted per set of ISAs, the devices' own and the stand-ins'.
INSN_COUNT = $(BARE_METAL_BUILD)/libinsn_count.so
$(INSN_COUNT): bench/device/insn_count.c
	mkdir -p $(BARE_METAL_BUILD)
	cc -O2 -Wall -Wextra -shared -fPIC -o $@ $<
.PHONY: device-estimate
device-estimate: $(INSN_COUNT)
	bench/device/estimate --firmware $(BARE_METAL_BUILD) --host $(BUILD)/pocketlm --plugin $(INSN_COUNT) \
	  $(foreach b,$(XTENSA_BUILD) $(PSP_MIPS_BUILD),$(if $(wildcard $(b)/firmware-results.json),--firmware $(b))) \
	  $(if $(wildcard $(MIPS_BUILD)/pocketlm),--mips $(MIPS_BUILD)/pocketlm)

# Decode and prefill tok/s of `pocketlm run` (greedy) per model in models/ and per backend this
# machine has (bench/run-bench.sh); bench/matrix.sh adds threads and ratios to reference.
bench: build models
	bench/run-bench.sh $(BUILD)

# A manual cross-check with llama.cpp (node-llama-cpp's prebuilt binaries from npm, about 700 MB;
# needs node and npm): stories260K's GGUF conversions continued greedily by llama.cpp and by
# pocketlm, tokens compared (tests/llama_cpp/compare.sh). Not part of `make test`.
.PHONY: check-llama-cpp
check-llama-cpp: build
	tests/llama_cpp/compare.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(AARCH64_BUILD) $(MIPS_BUILD) $(SANITIZE_BUILD) $(BARE_METAL_BUILD) $(PSP_MIPS_BUILD) $(XTENSA_BUILD)

# libFuzzer targets (fuzz/: clang, ASan + UBSan) over seeds cut from the shared models.
# fuzz-smoke replays a fixed number of inputs per target from the fixed seeds (-seed=1; about
# half of what 60 s reached on the 2-core development machine, 60 s at most), so CI cannot
# fail by luck; fuzz explores freely for FUZZ_SECONDS per target (default 600: 10 minutes
# each, 80 for the 8 targets). Both fail on any crash and print executions per target
# (fuzz/run-fuzz.sh). Needs clang (Debian: clang, libclang-rt-14-dev).
FUZZ_BUILD ?= build-fuzz
FUZZ_CXX ?= clang++
FUZZ_SECONDS ?= 600
# -O1, as libFuzzer's and ASan's documentation build: half the compile time of -O2 under
# ASan+UBSan (the CLI's JSON files), in a build CI makes every run.
FUZZ_OPT = -O1 -DNDEBUG
.PHONY: fuzz-build fuzz-smoke fuzz
fuzz-build:
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_CXX_COMPILER=$(FUZZ_CXX) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPOCKETLM_FUZZ=ON \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$(FUZZ_OPT)" \
	  -DPOCKETLM_BUILD_TESTS=OFF -DPOCKETLM_BUILD_BENCH=OFF -DPOCKETLM_STATIC_CLI=OFF
	cmake --build $(FUZZ_BUILD) -j$(JOBS) --target fuzz_all
fuzz-smoke: fuzz-build
	fuzz/run-fuzz.sh $(FUZZ_BUILD) 60 smoke
fuzz: fuzz-build
	fuzz/run-fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)
