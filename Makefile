# dpscale — the front door. Two commands do everything on a fresh Debian machine:
#   make bench   install what is missing, build, run the default sweep, print the table, draw charts
#   make test    install what is missing, build (the CUDA backend too where a toolkit exists), run all tests
# Everything else is CMake (CMakeLists.txt); this file only strings the steps together.

BUILD ?= build
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release
# The build's progress lines, not make's "Entering directory" around each of CMake's sub-makes.
MAKEFLAGS += --no-print-directory

.PHONY: all deps configure build test bench bench-micro reproduce clean

all: build

deps:
	@./scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The JUnit file says which tests skipped (scripts/ctest_skips.py reads it in CI).
test: build
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) --output-junit $(abspath $(BUILD))/ctest-junit.xml

bench: build
	@./scripts/bench.sh $(BUILD)

bench-micro: build
	@./scripts/bench-micro.sh $(BUILD)

# docs/REPRODUCTION.md and .html: every finding of the workshop and the textbook, with a verdict
reproduce: build
	@./scripts/reproduce.sh $(BUILD)

clean:
	rm -rf $(BUILD)
