# Thin front for CMake. The commands a user needs:
#   make demo   Release build, fetch stories260K into models/, and let it write a story
#   make test   build and run every test (unit, golden token-exact, CLI errors)
#   make test-aarch64   cross-build for 64-bit ARM (NEON backend) and run the suite under qemu
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
PROMPT ?= Once upon a time, there was a little robot
CMAKE_FLAGS ?=

.PHONY: all build demo test test-aarch64 bench models clean

all: build

build:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j$(JOBS)

models:
	scripts/get-models models

demo: build models
	$(BUILD)/pocketlm run models/stories260K.bin -z models/tok512.bin -t 0.8 -p 0.9 -s 42 -n 256 -i "$(PROMPT)"

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)

# Cross build with Debian's g++-aarch64-linux-gnu; ctest runs every test (and the tests run
# the pocketlm binary) through qemu-aarch64-static (cmake/aarch64-linux-gnu.cmake). Needs the
# packages g++-aarch64-linux-gnu qemu-user-static googletest.
AARCH64_BUILD ?= build-aarch64
test-aarch64:
	cmake -S . -B $(AARCH64_BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
	cmake --build $(AARCH64_BUILD) -j$(JOBS)
	ctest --test-dir $(AARCH64_BUILD) --output-on-failure -j$(JOBS)

bench: build models
	bench/run-bench.sh

clean:
	rm -rf $(BUILD) $(AARCH64_BUILD)
