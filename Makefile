# Thin wrappers: everything real lives in CMake and scripts/bootstrap.sh.
BUILD ?= build
SPEC ?= examples/bert-large.json
OUT ?= out

.PHONY: all build run test clean

all: build

build:
	./scripts/bootstrap.sh
	ninja -C $(BUILD)

run: build
	./$(BUILD)/bin/sluicec $(SPEC) -o $(OUT)

test: build
	cd $(BUILD) && ctest --output-on-failure

clean:
	rm -rf $(BUILD) $(OUT)
