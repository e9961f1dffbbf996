# dpscale — the front door. Two commands do everything on a fresh Debian machine:
#   make bench   install what is missing, build, run the default sweep, print the table, draw charts
#   make test    install what is missing, build (the CUDA backend too where a toolkit exists), run every
#                test but the long ones (LONG_LABELS below: whole A/B sessions, CI's sweep, two nodes, Slurm)
#   make test-all  every test, the long ones too (CI runs `make test`, then `make test-long`)
# Everything else is CMake (CMakeLists.txt); this file only strings the steps together.

BUILD ?= build
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release
# The build's progress lines, not make's "Entering directory" around each of CMake's sub-makes.
MAKEFLAGS += --no-print-directory

.PHONY: all deps configure build test test-long test-all bench bench-micro reproduce clean

all: build

deps:
	@./scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The JUnit files say which tests skipped (scripts/ctest_skips.py reads them in CI).
# The long tests: the cases marked LONG in tests/ (label `long`: whole A/B sessions, CI's sweep)
# and whole rooms that start machines of their own (two emulated nodes, Slurm on them, the GPU
# kit's build and self-test, an install tree). A regular expression over the labels, so that a
# test keeps the one label its room gives it.
LONG_LABELS = ^(long|twonode|slurm|kit|install)$$
CTEST = ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
test: build
	@$(CTEST) -LE '$(LONG_LABELS)' --output-junit $(abspath $(BUILD))/ctest-junit.xml

test-long: build
	@$(CTEST) -L '$(LONG_LABELS)' --output-junit $(abspath $(BUILD))/ctest-junit-long.xml

test-all: test test-long

bench: build
	@./scripts/bench.sh $(BUILD)

bench-micro: build
	@./scripts/bench-micro.sh $(BUILD)

# docs/REPRODUCTION.md and .html: every finding of the workshop and the textbook, with a verdict
reproduce: build
	@./scripts/reproduce.sh $(BUILD)

clean:
	rm -rf $(BUILD)
