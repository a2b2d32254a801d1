# Thin wrapper around CMake + CTest. The real build lives in CMakeLists.txt.
#
#   make / make all   configure into build/ and build
#   make test         install missing deps, build, run every unit test
#   make bench        build, then run every bench program
#   make demo         install missing deps, build, run `taskprof transport-demo` and
#                     `taskprof run paged_attention --case CaseSmall1`
#   make asan         ASan+UBSan build in build-asan/, run every test
#   make tsan         TSan build in build-tsan/, run every test
#   make clean        remove all build folders

CMAKE      ?= cmake
CTEST      ?= ctest
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
BUILD_DIR  ?= build
ASAN_DIR   ?= build-asan
TSAN_DIR   ?= build-tsan
GENERATOR  := $(if $(shell command -v ninja 2>/dev/null),Ninja,Unix Makefiles)

# configure DIR, SANITIZE: -G only on the first configure of a folder, since
# CMake refuses to switch the generator of an existing build tree.
define configure
	$(CMAKE) -S . -B $(1) \
	  $(if $(wildcard $(1)/CMakeCache.txt),,-G "$(GENERATOR)") \
	  -DTASKPROF_SANITIZE=$(2)
endef

.PHONY: all build configure test bench demo asan tsan clean deps

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
	./$(BUILD_DIR)/taskprof run paged_attention --case CaseSmall1

asan: deps
	$(call configure,$(ASAN_DIR),address)
	$(CMAKE) --build $(ASAN_DIR) --parallel $(JOBS)
	$(CTEST) --test-dir $(ASAN_DIR) --output-on-failure -j2 --no-tests=error

tsan: deps
	$(call configure,$(TSAN_DIR),thread)
	$(CMAKE) --build $(TSAN_DIR) --parallel $(JOBS)
	$(CTEST) --test-dir $(TSAN_DIR) --output-on-failure -j2 --no-tests=error

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(TSAN_DIR)
