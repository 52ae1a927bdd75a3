# Thin wrappers: everything real lives in CMake and scripts/bootstrap.sh.
BUILD ?= build
SPEC ?= examples/bert-large.json
OUT ?= out
FUZZ_SECONDS ?= 60

.PHONY: all build run test clean fuzz sanitize

all: build

build:
	./scripts/bootstrap.sh
	ninja -C $(BUILD)

run: build
	./$(BUILD)/bin/sluicec $(SPEC) -o $(OUT)

# ctest runs its entries in parallel (the lit suite is one entry and runs
# its own tests in parallel too); every test is safe to run concurrently.
JOBS ?= $(shell nproc)

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

# libFuzzer harnesses (fuzz/README.md), FUZZ_SECONDS each, in build-asan/.
fuzz:
	./scripts/fuzz.sh $(FUZZ_SECONDS)

# The ASan+UBSan build and its test suite (docs/Testing.md), in build-asan/.
sanitize:
	./scripts/sanitize.sh

clean:
	rm -rf $(BUILD) $(OUT) build-asan
