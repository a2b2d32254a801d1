# Thin wrapper around CMake + CTest. The real build lives in CMakeLists.txt.
#
#   make / make all   configure into build/ and build
#   make test         install missing deps, build, run every unit test
#   make bench        build, then run every bench program
#   make demo         install missing deps, build, run `taskprof transport-demo` and
#                     `taskprof run paged_attention --case CaseSmall1
#                     --enable-l2-swimlane --enable-dep-gen --enable-pmu` (Perfetto
#                     trace, pmu.csv and its summary), then `taskprof op` on the
#                     tiled matmul example (per-block PMU metrics over replay passes),
#                     then the retained-PMU-runs example (examples/worker_retained)
#   make asan         ASan+UBSan build in build-asan/, run every test
#   make tsan         TSan build in build-tsan/, run every test
#   make fuzz         clang + ASan/UBSan + libFuzzer build in build-fuzz/, run
#                     each fuzz target FUZZ_SECS seconds (scripts/run-fuzz.sh)
#   make clean        remove all build folders

CMAKE      ?= cmake
CTEST      ?= ctest
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
BUILD_DIR  ?= build
ASAN_DIR   ?= build-asan
TSAN_DIR   ?= build-tsan
FUZZ_DIR   ?= build-fuzz
FUZZ_SECS  ?= 60
GENERATOR  := $(if $(shell command -v ninja 2>/dev/null),Ninja,Unix Makefiles)

# configure DIR, SANITIZE: -G only on the first configure of a folder, since
# CMake refuses to switch the generator of an existing build tree.
define configure
	$(CMAKE) -S . -B $(1) \
	  $(if $(wildcard $(1)/CMakeCache.txt),,-G "$(GENERATOR)") \
	  -DTASKPROF_SANITIZE=$(2)
endef

.PHONY: all build configure test bench demo asan tsan fuzz clean deps

all: build

configure: deps
	$(call configure,$(BUILD_DIR),)

build: configure
	$(CMAKE) --build $(BUILD_DIR) --parallel $(JOBS)

deps:
	@bash scripts/install-deps.sh --check >/dev/null || bash scripts/install-deps.sh

test: deps
	$(MAKE) build
	$(CTEST) --test-dir $(BUILD_DIR) --output-on-failure -j2 --no-tests=error

bench: build
	$(CMAKE) --build $(BUILD_DIR) --target bench

demo: deps
	$(MAKE) build
	./$(BUILD_DIR)/taskprof transport-demo
	@echo
	./$(BUILD_DIR)/taskprof run paged_attention --case CaseSmall1 --enable-l2-swimlane --enable-dep-gen --enable-pmu
	@echo
	@echo "Open the merged_swimlane.json printed above in https://ui.perfetto.dev/ (Open trace file)."
	@echo
	mkdir -p $(BUILD_DIR)/demo-op
	./$(BUILD_DIR)/taskprof op --output $(BUILD_DIR)/demo-op -- ./$(BUILD_DIR)/examples/op_matmul
	@echo "The operator profile of the matmul kernel is in the OPPROF_* folder printed above (docs/op.md)."
	@echo
	./$(BUILD_DIR)/examples/example_worker_retained outputs
	@echo "Retained PMU runs: three runs in one Worker (collect_across_runs), their pmu.csv files listed above (docs/pmu.md \"Retained runs\")."

asan: deps
	$(call configure,$(ASAN_DIR),address)
	$(CMAKE) --build $(ASAN_DIR) --parallel $(JOBS)
	$(CTEST) --test-dir $(ASAN_DIR) --output-on-failure -j2 --no-tests=error

tsan: deps
	$(call configure,$(TSAN_DIR),thread)
	$(CMAKE) --build $(TSAN_DIR) --parallel $(JOBS)
	$(CTEST) --test-dir $(TSAN_DIR) --output-on-failure -j2 --no-tests=error

# CC/CXX only matter on the first configure of $(FUZZ_DIR). Only the fuzz
# targets (and what they link) are built there.
fuzz: deps
	CC=clang CXX=clang++ $(call configure,$(FUZZ_DIR),address) -DTASKPROF_FUZZ=ON
	$(CMAKE) --build $(FUZZ_DIR) --parallel $(JOBS) --target fuzz_records fuzz_deps fuzz_name_map
	bash scripts/run-fuzz.sh $(FUZZ_DIR) $(FUZZ_SECS)

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(TSAN_DIR) $(FUZZ_DIR)
