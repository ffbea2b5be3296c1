# Parallel Scan Labs — one Makefile for everything. `make help` lists the targets.

# ---- configuration (all overridable: make ARCH=sm_80 NVCC=/opt/cuda/bin/nvcc) ----------------
SRC    ?= labs
LAB    ?=
ARGS   ?=
DEBUG  ?= 0
PYTHON ?= python3
NVCC   ?= $(shell command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
CC     ?= cc
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))

# The GPU's architecture when there is one (nvidia-smi reports e.g. "9.0"), sm_90 otherwise.
GPU_CC := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d '. ')
ARCH   ?= $(if $(GPU_CC),sm_$(GPU_CC),sm_90)

BUILD  ?= build
LABS   := $(sort $(notdir $(wildcard labs/[0-9][0-9]_*)))

DEBUG_FLAGS := $(if $(filter 1,$(DEBUG)),-DLAB_DEBUG_SYNC -g,-O3)
CFLAGS   := -std=c11 -Wall -Wextra -pedantic $(DEBUG_FLAGS) -Icommon -I$(CUDA_HOME)/include
NVFLAGS  := -std=c++17 -arch=$(ARCH) -lineinfo $(DEBUG_FLAGS) -Icommon \
            -Xcompiler -Wall,-Wextra --expt-relaxed-constexpr
LDFLAGS  := -arch=$(ARCH)

# ---- the common objects ------------------------------------------------------------------------
COMMON_C   := check cuda_check harness
COMMON_OBJ := $(COMMON_C:%=$(BUILD)/common/%.o) $(BUILD)/common/driver.o
MAIN_OBJ   := $(BUILD)/common/main.o
COMMON_DEPS := $(wildcard common/*.h)

$(BUILD)/common/%.o: common/%.c $(COMMON_DEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/common/%.o: common/%.cu $(COMMON_DEPS)
	@mkdir -p $(@D)
	$(NVCC) $(NVFLAGS) -c $< -o $@

# ---- lab binaries: build/<labs|solutions>/<NN_name>/scan ----------------------------------------
$(BUILD)/%/scan.o: %/scan.cu $(COMMON_DEPS)
	@mkdir -p $(@D)
	$(NVCC) $(NVFLAGS) -c $< -o $@

$(BUILD)/%/scan: $(BUILD)/%/scan.o $(COMMON_OBJ) $(MAIN_OBJ)
	$(NVCC) $(LDFLAGS) $^ -o $@

LAB_BINS = $(LABS:%=$(BUILD)/$(SRC)/%/scan)

# LAB=03 or LAB=03_kogge_stone both name lab 03.
LAB_DIR = $(firstword $(filter $(LAB)%,$(LABS)))

.PHONY: help all run test test-extended grade clean check-criterion lab-common lab-binary
.SECONDARY:  # keep objects between builds

help:
	@echo "Parallel Scan Labs"
	@echo ""
	@echo "  make grade              build and grade every lab in labs/ (SRC=solutions: the references)"
	@echo "  make test               the test suite (installs Criterion if it can)"
	@echo "  make test-extended      GPU only: the kernel tests plus n = 2^31 + 7 (needs ~35 GB RAM)"
	@echo "  make run LAB=03         build and run one lab; ARGS='--n 2^20+7 --variant 1' passes options"
	@echo "  make all                build every lab binary of SRC (labs by default)"
	@echo "  make clean              remove build/"
	@echo ""
	@echo "  variables: SRC=labs|solutions  LAB=NN  ARGS='...'  DEBUG=1 (synchronising launch checks)"
	@echo "             ARCH=$(ARCH)  NVCC=$(NVCC)"
	@echo "  labs: $(LABS)"

all: $(LAB_BINS)

run:
	@test -n "$(LAB)" || { echo "make run: say which lab, e.g. make run LAB=03 (labs: $(LABS))"; exit 2; }
	@test -n "$(LAB_DIR)" || { echo "make run: no lab matches LAB=$(LAB) (labs: $(LABS))"; exit 2; }
	@$(MAKE) --no-print-directory $(BUILD)/$(SRC)/$(LAB_DIR)/scan
	./$(BUILD)/$(SRC)/$(LAB_DIR)/scan $(ARGS)

grade:
	$(PYTHON) grader/grade.py --src $(SRC) --work $(BUILD)/grader $(GRADE_ARGS)

# The grader's private builds (grader/grade.py calls these; see grader/README.md).
# lab-common: the harness objects in $(BUILD). lab-binary: one scan.cu compiled with the lab flags
# and linked with those objects: make lab-binary LAB_SRC=x/scan.cu LAB_OUT=y/scan BUILD=z
lab-common: $(COMMON_OBJ) $(MAIN_OBJ)

lab-binary: $(COMMON_OBJ) $(MAIN_OBJ)
	@test -n "$(LAB_SRC)" -a -n "$(LAB_OUT)" || { echo "make lab-binary: set LAB_SRC=path/scan.cu and LAB_OUT=path/binary" >&2; exit 2; }
	@mkdir -p $(dir $(LAB_OUT))
	$(NVCC) $(NVFLAGS) -c $(LAB_SRC) -o $(LAB_OUT).o
	$(NVCC) $(LDFLAGS) $(LAB_OUT).o $(COMMON_OBJ) $(MAIN_OBJ) -o $(LAB_OUT)

clean:
	rm -rf $(BUILD)

# ---- tests ---------------------------------------------------------------------------------------
# Criterion: found, installed (root or sudo without a password), or one clear message.
check-criterion:
	@if [ -f /usr/include/criterion/criterion.h ] || [ -f /usr/local/include/criterion/criterion.h ] \
	   || [ -n "$(CRITERION_PREFIX)" -a -f "$(CRITERION_PREFIX)/include/criterion/criterion.h" ]; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "Criterion is missing; installing libcriterion-dev with apt-get" >&2; \
	  (apt-get install -y libcriterion-dev >/dev/null 2>&1 || (apt-get update >/dev/null && apt-get install -y libcriterion-dev >/dev/null)) \
	    || { echo "could not install Criterion: run 'apt-get install libcriterion-dev' yourself" >&2; exit 1; }; \
	elif command -v apt-get >/dev/null 2>&1 && sudo -n true 2>/dev/null; then \
	  echo "Criterion is missing; installing libcriterion-dev with sudo apt-get" >&2; \
	  (sudo -n apt-get install -y libcriterion-dev >/dev/null 2>&1 || (sudo -n apt-get update >/dev/null && sudo -n apt-get install -y libcriterion-dev >/dev/null)) \
	    || { echo "could not install Criterion: run 'sudo apt-get install libcriterion-dev' yourself" >&2; exit 1; }; \
	else \
	  echo "Criterion (the C test framework) is missing: run 'sudo apt-get install libcriterion-dev', then make test again" >&2; exit 1; \
	fi

# CRITERION_PREFIX: a folder with include/criterion and lib/ (for machines without the package,
# such as the GPU machine: see tests/README.md).
CRITERION_PREFIX ?=
CRIT_CFLAGS := $(if $(CRITERION_PREFIX),-I$(CRITERION_PREFIX)/include)
# DT_RPATH (--disable-new-dtags) also covers Criterion's own dependencies (libgit2, nanomsg, ...).
TEST_LIBS := $(if $(CRITERION_PREFIX),-L$(CRITERION_PREFIX)/lib -Xlinker --disable-new-dtags -Xlinker -rpath=$(abspath $(CRITERION_PREFIX))/lib) -lcriterion
TEST_SUPPORT := $(BUILD)/tests/lab_cases.o

$(BUILD)/tests/%.o: tests/%.c $(COMMON_DEPS) tests/lab_cases.h | check-criterion
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(CRIT_CFLAGS) -Itests -c $< -o $@

# Host-only tests of the helpers and the harness (fixture labs inside the test file).
$(BUILD)/tests/test_check: $(BUILD)/tests/test_check.o $(BUILD)/common/check.o
	$(NVCC) $(LDFLAGS) $^ -o $@ $(TEST_LIBS)
$(BUILD)/tests/test_harness: $(BUILD)/tests/test_harness.o $(COMMON_OBJ)
	$(NVCC) $(LDFLAGS) $^ -o $@ $(TEST_LIBS)

# One kernel-test binary per lab: the generic matrix (test_lab.c) plus tests/lab_NN_*.c, linked
# with the reference solution.
.SECONDEXPANSION:
$(BUILD)/tests/kernels_%: $(BUILD)/tests/test_lab.o $(TEST_SUPPORT) \
    $$(patsubst tests/%.c,$(BUILD)/tests/%.o,$$(wildcard tests/lab_$$(firstword $$(subst _, ,$$*))_*.c)) \
    $(BUILD)/solutions/%/scan.o $(COMMON_OBJ)
	$(NVCC) $(LDFLAGS) $^ -o $@ $(TEST_LIBS)

TEST_BINS := $(BUILD)/tests/test_check $(BUILD)/tests/test_harness $(LABS:%=$(BUILD)/tests/kernels_%)

test: check-criterion $(TEST_BINS) $(LABS:%=$(BUILD)/labs/%/scan) $(LABS:%=$(BUILD)/solutions/%/scan)
	LAB_BUILD_DIR=$(abspath $(BUILD)) $(PYTHON) tests/run_tests.py --build $(BUILD) $(TEST_BINS)

# The extended suite: the kernel tests again with LAB_TEST_EXTENDED=1 (adds n = 2^31 + 7).
test-extended: check-criterion $(LABS:%=$(BUILD)/tests/kernels_%)
	LAB_TEST_EXTENDED=1 LAB_BUILD_DIR=$(abspath $(BUILD)) $(PYTHON) tests/run_tests.py --build $(BUILD) --no-python $(LABS:%=$(BUILD)/tests/kernels_%)
