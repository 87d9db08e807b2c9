# Thin front for CMake. The two commands a user needs:
#   make demo   Release build, fetch stories260K into models/, and let it write a story
#   make test   build and run every test (unit, golden token-exact, CLI errors)
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
PROMPT ?= Once upon a time, there was a little robot
CMAKE_FLAGS ?=

.PHONY: all build demo test bench models clean

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

bench: build models
	bench/run-bench.sh

clean:
	rm -rf $(BUILD)
