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

# CPU mode (CPU=1): the same .cu files compiled as host C++ against common/cpu/; kernels run as
# fibers on the CPU, for correctness only (common/cpu/README.md). Chosen automatically for
# `make test`, `make grade`, `make run` and `make all` when nvidia-smi finds no GPU; CPU=0
# forces the GPU build (to compile with nvcc on a machine without a GPU, say). Objects and
# binaries then live under $(BUILD)/cpu.
AUTO_CPU_GOALS := test grade run all
ifeq ($(origin CPU),undefined)
  ifeq ($(GPU_CC),)
    ifneq ($(filter $(AUTO_CPU_GOALS),$(MAKECMDGOALS)),)
      CPU := 1
      export CPU
      $(info make: no GPU found (nvidia-smi), so the kernels run in CPU mode: correctness only, no speed (CPU=1; CPU=0 builds for the GPU anyway))
    endif
  endif
endif
CPU_MODE := $(filter 1,$(CPU))
ifneq ($(CPU_MODE),)
  override BUILD := $(BUILD)/cpu
endif

# make test-extended adds only n = 2^31 + 7 to the kernel tests: a GPU job (~35 GB of host
# memory). Without a GPU it stops at once; CPU mode cannot run it in useful time.
ifneq ($(filter test-extended,$(MAKECMDGOALS)),)
  ifneq ($(CPU_MODE),)
    $(error make test-extended: the extended suite (n = 2^31 + 7) is GPU only and CPU mode (CPU=1) cannot run it; make test CPU=1 runs everything else)
  else ifeq ($(GPU_CC)$(origin CPU),undefined)
    $(error make test-extended: the extended suite (n = 2^31 + 7) needs an NVIDIA GPU and nvidia-smi finds none; make test runs everything else (CPU=0 forces the GPU build))
  endif
endif

# DEBUG=1: -DLAB_DEBUG_SYNC -g instead of -O3, built apart under $(BUILD)/debug so that the
# objects of a normal build are never reused for it (nor the other way round).
ifeq ($(DEBUG),1)
  override BUILD := $(BUILD)/debug
endif

# The sandbox of graded runs (common/sandbox.c) needs libseccomp (Debian: libseccomp-dev), linked
# statically so a lab binary runs where only the library's headers were; SECCOMP_PREFIX: a folder
# with include/seccomp.h and lib/libseccomp.a (the GPU machine: see tests/README.md). Without it
# the harness builds anyway and reports the sandbox as unavailable.
SECCOMP_PREFIX ?=
SECCOMP_H   := $(firstword $(wildcard $(if $(SECCOMP_PREFIX),$(SECCOMP_PREFIX)/include/seccomp.h) /usr/include/seccomp.h))
SECCOMP_A   := $(firstword $(wildcard $(if $(SECCOMP_PREFIX),$(SECCOMP_PREFIX)/lib/libseccomp.a) /usr/lib/x86_64-linux-gnu/libseccomp.a /usr/lib64/libseccomp.a /usr/lib/libseccomp.a))
SECCOMP_CFLAGS := $(if $(SECCOMP_H),-DLAB_HAVE_SECCOMP $(if $(SECCOMP_PREFIX),-I$(SECCOMP_PREFIX)/include))
SECCOMP_LIBS   := $(if $(SECCOMP_H),$(or $(SECCOMP_A),-lseccomp))

DEBUG_FLAGS := $(if $(filter 1,$(DEBUG)),-DLAB_DEBUG_SYNC -g,-O3)
CFLAGS   := -std=c11 -Wall -Wextra -pedantic $(DEBUG_FLAGS) -Icommon -I$(CUDA_HOME)/include $(SECCOMP_CFLAGS)
# -fno-jump-tables: host code has no jumps through a table, so the grader can refuse every call or
# jump through a pointer in a lab's host code (grader/README.md, "Static checks").
# -fno-gnu-unique: a function-local static of an inline function or template is a weak symbol,
# not a "unique" one, so that lab 10 can make every symbol of the lab 08 and 07 objects it links
# local (see "lab 10" below).
NVFLAGS  := -std=c++17 -arch=$(ARCH) -lineinfo $(DEBUG_FLAGS) -Icommon \
            -Xcompiler -Wall,-Wextra,-fno-jump-tables,-fno-gnu-unique --expt-relaxed-constexpr
LDFLAGS  := -arch=$(ARCH)
ifneq ($(CPU_MODE),)
  CFLAGS       := -std=c11 -Wall -Wextra -pedantic $(DEBUG_FLAGS) -DLAB_CPU_MODE -Icommon -Icommon/cpu $(SECCOMP_CFLAGS)
  # -fstack-clash-protection: a big stack frame touches each page in turn, so a thread's stack
  # overflow hits the guard page below it (common/cpu/README.md) instead of jumping over it.
  CPU_CXXFLAGS := -x c++ -std=c++20 -fwrapv -fno-threadsafe-statics -fstack-clash-protection -fno-gnu-unique -fno-jump-tables \
                  $(DEBUG_FLAGS) -DLAB_CPU_MODE -Icommon -Icommon/cpu -Wall -Wextra -Wno-unknown-pragmas -Wno-deprecated-copy
  override NVCC := $(CXX)
  LDFLAGS      :=
endif

# ---- the common objects ------------------------------------------------------------------------
# The host-side helpers, one file per job (inputs, validation, options, reports): pure C.
HELPERS_C  := inputs validate options report ops
HELPERS_OBJ := $(HELPERS_C:%=$(BUILD)/common/%.o)
COMMON_C   := $(HELPERS_C) cuda_check harness sandbox
COMMON_OBJ := $(COMMON_C:%=$(BUILD)/common/%.o) $(BUILD)/common/driver.o $(BUILD)/common/verify.o
MAIN_OBJ   := $(BUILD)/common/main.o
# CPU mode's runtime, common/cpu/*.cpp: one file per job (common/cpu/runtime.h says which)
CPU_RT     := fibers blocks warp memory errors signals launch api banks
CPU_RT_OBJ := $(CPU_RT:%=$(BUILD)/common/cpu_%.o)
COMMON_DEPS := $(wildcard common/*.h)
ifneq ($(CPU_MODE),)
  COMMON_OBJ  += $(CPU_RT_OBJ)
  COMMON_DEPS += $(wildcard common/cpu/*.h) common/cpu/cuda/atomic common/cpu/rewrite.py
  override GRADE_ARGS += --cpu
endif

# How a .cu file becomes an object: nvcc, or in CPU mode common/cpu/rewrite.py (launches and
# __shared__ arrays) followed by the host C++ compiler.
ifeq ($(CPU_MODE),)
CU_COMPILE = $(NVCC) $(NVFLAGS) -c $(1) -o $(2)
else
CU_COMPILE = $(PYTHON) common/cpu/rewrite.py $(1) -o $(2:.o=.cpu.cpp) && \
             $(CXX) $(CPU_CXXFLAGS) $(call BANK_FLAGS,$(1)) -iquote $(dir $(1)) -c $(2:.o=.cpu.cpp) -o $(2)
endif
# CPU mode counts shared-memory bank conflicts and global-memory sectors (common/cpu/banks.cpp)
# in a file that declares __shared__ memory: GCC's ThreadSanitizer instrumentation calls a function
# before every memory access (banks.cpp defines them; libtsan is not linked), and -g1 gives the
# line tables that name each access's source line (DWARF 4: binutils 2.40's addr2line names the
# generated .cpu.cpp instead of the #line file for some DWARF 5 functions). Other files stay
# uninstrumented: a call per access stops GCC vectorising loops such as lab 02's (its make run,
# instrumented, had not finished after 40 s and held 1 GB of records). BANKS=0 (the grader's CPU-mode builds) leaves every file uninstrumented:
# the instrumentation adds a constructor (__tsan_init) to the object, and graded runs never count.
BANKS ?= 1
BANK_FLAGS = $(if $(filter 1,$(BANKS)),$(if $(shell grep -l '__shared__' $(1) 2>/dev/null),-fsanitize=thread --param tsan-instrument-func-entry-exit=0 -g1 -gdwarf-4))

$(BUILD)/common/cpu_%.o: common/cpu/%.cpp $(COMMON_DEPS)
	@mkdir -p $(@D)
	$(CXX) $(CPU_CXXFLAGS) -c $< -o $@

$(BUILD)/common/%.o: common/%.c $(COMMON_DEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/common/%.o: common/%.cu $(COMMON_DEPS)
	@mkdir -p $(@D)
	$(call CU_COMPILE,$<,$@)

# Each lab's course-owned side (common/labs/): NN_name.h, which the lab's scan.cu includes (the
# entry points it defines, the tile), and NN_name.c, the lab's descriptor LAB, built from it and
# linked into every binary of the lab. LAB_DESC: the descriptor object of a lab directory (none
# for a directory that is not a lab, such as a CPU-mode fixture, which defines its own LAB).
LAB_DESCS   := $(patsubst common/labs/%.c,$(BUILD)/common/labs/%.o,$(wildcard common/labs/*.c))
LAB_DESC     = $(patsubst common/labs/%.c,$(BUILD)/common/labs/%.o,$(wildcard common/labs/$(notdir $(1)).c))
LAB_HEADER   = $(wildcard common/labs/$(notdir $(1)).h)

$(BUILD)/common/labs/%.o: common/labs/%.c common/labs/%.h $(COMMON_DEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

# ---- lab 10: built on the student's own scan ----------------------------------------------------
# A lab 10 binary links, besides its own scan.lab.o, the lab 08 and lab 07 objects of the same tree
# (labs/ or solutions/) as scan.base.o: renamed like scan.lab.o, every symbol but the entry points
# lab 10's descriptor calls made local (objcopy -G) and their COMDAT groups dissolved, so that the
# kernels, helpers and template instances of three labs never merge (a kernel of the same name in
# lab 07 and lab 10 stays two kernels). LAB_BASES_<lab>: the labs it is built on; BASE_KEEP_<lab>:
# what stays global. The grader links a course stub (common/labs/stubs/, every entry point
# LAB_NOT_IMPLEMENTED) for a base lab that did not build or was refused.
LAB_BASES_10_applications := 08_decoupled_lookback 07_hierarchical
BASE_KEEP_08_decoupled_lookback := lookback_scan lookback_temp_bytes lookback_tile
BASE_KEEP_07_hierarchical := scan_then_propagate hier_temp_bytes hier_tile
LAB_BASE_OBJS = $(foreach b,$(LAB_BASES_$(notdir $(1))),$(BUILD)/$(patsubst ./%,%,$(dir $(1)))$(b)/scan.base.o)
BASE_LOCALIZE = $(OBJCOPY) $(foreach s,$(BASE_KEEP_$(2)),-G $(s)) --remove-section=.group $(1) $(3)
STUB_OBJS := $(patsubst common/labs/stubs/%.c,$(BUILD)/common/labs/stubs/%.o,$(wildcard common/labs/stubs/*.c))

$(BUILD)/common/labs/stubs/%.o: common/labs/stubs/%.c $(COMMON_DEPS) common/labs/%.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

# ---- lab binaries: build/<labs|solutions>/<NN_name>/scan ----------------------------------------
# scan.o is the lab's object as compiled (the grader reads its symbols); scan.lab.o, what is
# linked, has its cudaMalloc and cudaFree renamed to the harness's counting wrappers (the leak check).
# A lab binary is scan.lab.o, the lab's descriptor (its directory name is the lab id) and the harness.
OBJCOPY ?= objcopy
LAB_RENAME = $(OBJCOPY) --redefine-sym cudaMalloc=lab_wrap_cudaMalloc --redefine-sym cudaFree=lab_wrap_cudaFree $(1) $(2)

.SECONDEXPANSION:
$(BUILD)/%/scan.o: %/scan.cu $(COMMON_DEPS) $$(call LAB_HEADER,$$*)
	@mkdir -p $(@D)
	$(call CU_COMPILE,$<,$@)

$(BUILD)/%/scan.lab.o: $(BUILD)/%/scan.o
	$(call LAB_RENAME,$<,$@)

$(BUILD)/%/scan.base.o: $(BUILD)/%/scan.lab.o
	$(call BASE_LOCALIZE,$<,$(notdir $*),$@)

$(BUILD)/%/scan: $(BUILD)/%/scan.lab.o $$(call LAB_DESC,$$*) $$(call LAB_BASE_OBJS,$$*) $(COMMON_OBJ) $(MAIN_OBJ)
	$(NVCC) $(LDFLAGS) $^ -o $@ $(SECCOMP_LIBS)

# The kernel tests' copy of a lab: its scan.cu and the course's test hooks (tests/hooks/NN_name.cu,
# declared in tests/hooks/hooks.h) in one translation unit, which the hooks need to launch the
# lab's kernel templates; #line keeps the compiler's messages on the right file. Renamed like
# scan.lab.o. Labs without hooks link scan.lab.o into their kernel tests (LAB_TEST_OBJ).
$(BUILD)/%/scan_hooks.cu: %/scan.cu tests/hooks/$$(notdir $$*).cu
	@mkdir -p $(@D)
	{ printf '#line 1 "%s"\n' $<; cat $<; printf '\n#line 1 "%s"\n' $(word 2,$^); cat $(word 2,$^); } > $@

$(BUILD)/%/scan_hooks.o: NVFLAGS += -Itests
$(BUILD)/%/scan_hooks.o: CPU_CXXFLAGS += -Itests
$(BUILD)/%/scan_hooks.o: $(BUILD)/%/scan_hooks.cu $(COMMON_DEPS) tests/hooks/hooks.h $$(call LAB_HEADER,$$*)
	$(call CU_COMPILE,$<,$@)

$(BUILD)/%/scan_hooks.lab.o: $(BUILD)/%/scan_hooks.o
	$(call LAB_RENAME,$<,$@)

LAB_TEST_OBJ = $(BUILD)/$(1)/$(if $(wildcard tests/hooks/$(notdir $(1)).cu),scan_hooks,scan).lab.o

LAB_BINS = $(LABS:%=$(BUILD)/$(SRC)/%/scan)

# LAB=03 or LAB=03_kogge_stone both name lab 03.
LAB_DIR = $(firstword $(filter $(LAB)%,$(LABS)))

.PHONY: help all run profile test test-extended grade clean check-criterion lab-common lab-binary format lint
.SECONDARY:  # keep objects between builds

help:
	@echo "Parallel Scan Labs"
	@echo ""
	@echo "  make gradescope         build/gradescope/autograder.zip for Gradescope (GRADESCOPE_ARGS='--mode gpu')"
	@echo "  make bench-grader       grade a synthetic class of 20 and time it (BENCH_GRADER_ARGS='--gpus all')"
	@echo "  make grade [LAB=NN]     build and grade every lab in labs/ (or lab NN only; SRC=solutions: the references)"
	@echo "  make test TEST_SRC=labs the kernel tests on YOUR code in labs/ (LAB=03: lab 03 only, quick);"
	@echo "                          untouched labs are skipped as \"not implemented yet\""
	@echo "  make test               the repository's test suite: the reference solutions, the untouched"
	@echo "                          skeletons, harness, grader (installs Criterion if it can)"
	@echo "  make test-extended      GPU only: the kernel tests plus n = 2^31 + 7 (needs ~35 GB RAM)"
	@echo "  make bench              GPU only: every reference against CUB and a memcpy (SRC=labs: yours)"
	@echo "  make run LAB=03         build and run one lab; ARGS='--n 2^20+7 --variant 1' passes options"
	@echo "  make run LAB=03 CPU=1   the same in CPU mode: no GPU needed, correctness only"
	@echo "  make profile LAB=05     GPU only: the lab's kernels under Nsight Compute (DRAM %, occupancy, stalls)"
	@echo "                          (without a GPU, run, all, test and grade choose CPU mode themselves)"
	@echo "  make all                build every lab binary of SRC (labs by default)"
	@echo "  make slides             render slides/*.md to build/slides/ (HTML; PDF with Chromium; needs npm)"
	@echo "  make diagrams           regenerate the SVG diagrams in slides/diagrams/ from the algorithms"
	@echo "  make contract           regenerate common/contract.h from common/contract.json"
	@echo "  make format             rewrite every C/CUDA file in the course's style (clang-format, .clang-format)"
	@echo "  make lint               check that style without changing anything (clang-format) and the Python"
	@echo "                          for mistakes (pyflakes3); CI runs it before make test"
	@echo "  make clean              remove build/"
	@echo ""
	@echo "  variables: SRC=labs|solutions  LAB=NN  ARGS='...'  TEST_SRC=solutions|labs (now $(TEST_SRC))"
	@echo "             DEBUG=1 (synchronising launch checks and -g, built apart in debug/)  CPU=1|0"
	@echo "             ARCH=$(ARCH)  NVCC=$(NVCC)"
	@echo "  labs: $(LABS)"

all: $(LAB_BINS)

run:
	@test -n "$(LAB)" || { echo "make run: say which lab, e.g. make run LAB=03 (labs: $(LABS))"; exit 2; }
	@test -n "$(LAB_DIR)" || { echo "make run: no lab matches LAB=$(LAB) (labs: $(LABS))"; exit 2; }
	@$(MAKE) --no-print-directory $(BUILD)/$(SRC)/$(LAB_DIR)/scan
	$(if $(filter /%,$(BUILD)),,./)$(BUILD)/$(SRC)/$(LAB_DIR)/scan $(ARGS)

# make profile LAB=05 [SRC=solutions] [ARGS='--n 2^24 --variant plain']: the lab's kernels under
# Nsight Compute (ncu), one short table per kernel (grader/profile.py). GPU only.
profile:
	@test -n "$(LAB)" || { echo "make profile: say which lab, e.g. make profile LAB=05 (labs: $(LABS))" >&2; exit 2; }
	@test -n "$(LAB_DIR)" || { echo "make profile: no lab matches LAB=$(LAB) (labs: $(LABS))" >&2; exit 2; }
	@if [ -n "$(CPU_MODE)" -o -z "$(GPU_CC)" ]; then echo "make profile: no GPU here (nvidia-smi finds none, or CPU=1): Nsight Compute measures a GPU; make run LAB=$(LAB) CPU=1 counts shared-memory bank conflicts without one" >&2; exit 5; fi
	@$(MAKE) --no-print-directory $(BUILD)/$(SRC)/$(LAB_DIR)/scan
	$(PYTHON) grader/profile.py --binary $(BUILD)/$(SRC)/$(LAB_DIR)/scan $(if $(ARGS),-- $(ARGS))

grade:
	@test -z "$(LAB)" -o -n "$(LAB_DIR)" || { echo "make grade: no lab matches LAB=$(LAB) (labs: $(LABS))"; exit 2; }
	$(PYTHON) grader/grade.py --src $(SRC) --work $(BUILD)/grader $(if $(LAB),--labs $(LAB_DIR)) $(GRADE_ARGS)

# The grader's private builds (grader/grade.py calls these; see grader/README.md).
# lab-common: the harness objects and every lab's descriptor in $(BUILD). lab-binary: one scan.cu
# compiled with the lab flags and linked with those objects and lab LAB_ID's descriptor:
# make lab-binary LAB_SRC=x/scan.cu LAB_OUT=y/scan LAB_ID=03_kogge_stone BUILD=z
lab-common: $(COMMON_OBJ) $(MAIN_OBJ) $(LAB_DESCS) $(STUB_OBJS)

# LAB_BASES='08_decoupled_lookback=path/scan.o ...': for lab 10, the submission's objects of the
# labs it is built on (as compiled, not renamed); a base lab not named links its stub.
LAB_BASES ?=
BASE_GIVEN = $(patsubst $(1)=%,%,$(filter $(1)=%,$(LAB_BASES)))
lab-binary: $(COMMON_OBJ) $(MAIN_OBJ) $(call LAB_DESC,$(LAB_ID)) $(STUB_OBJS)
	@test -n "$(LAB_SRC)" -a -n "$(LAB_OUT)" -a -n "$(LAB_ID)" || { echo "make lab-binary: set LAB_SRC=path/scan.cu, LAB_OUT=path/binary and LAB_ID=NN_name" >&2; exit 2; }
	@test -f "common/labs/$(LAB_ID).c" || { echo "make lab-binary: no lab LAB_ID=$(LAB_ID) (labs: $(LABS))" >&2; exit 2; }
	@mkdir -p $(dir $(LAB_OUT))
	$(call CU_COMPILE,$(LAB_SRC),$(LAB_OUT).o)
	$(call LAB_RENAME,$(LAB_OUT).o,$(LAB_OUT).lab.o)
	$(foreach b,$(LAB_BASES_$(LAB_ID)),$(if $(call BASE_GIVEN,$(b)),$(call LAB_RENAME,$(call BASE_GIVEN,$(b)),$(LAB_OUT).$(b).lab.o) && $(call BASE_LOCALIZE,$(LAB_OUT).$(b).lab.o,$(b),$(LAB_OUT).$(b).base.o),cp $(BUILD)/common/labs/stubs/$(b).o $(LAB_OUT).$(b).base.o) && ) true
	$(NVCC) $(LDFLAGS) $(LAB_OUT).lab.o $(call LAB_DESC,$(LAB_ID)) $(foreach b,$(LAB_BASES_$(LAB_ID)),$(LAB_OUT).$(b).base.o) $(COMMON_OBJ) $(MAIN_OBJ) -o $(LAB_OUT) $(SECCOMP_LIBS)

clean:
	rm -rf $(BUILD)

# make contract: rewrite common/contract.h from common/contract.json, the facts the harness, the
# tests and the grader share (tests/test_contract.py fails while contract.h is stale).
.PHONY: contract
contract:
	$(PYTHON) common/contract.py

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

$(BUILD)/tests/%.o: tests/%.c $(COMMON_DEPS) tests/lab_cases.h tests/hooks/hooks.h | check-criterion
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(CRIT_CFLAGS) -Itests -c $< -o $@

# Host-only tests of the helpers and the harness (fixture labs inside the test file).
$(BUILD)/tests/test_helpers: $(BUILD)/tests/test_helpers.o $(HELPERS_OBJ)
	$(NVCC) $(LDFLAGS) $^ -o $@ $(TEST_LIBS)
$(BUILD)/tests/test_float_check: $(BUILD)/tests/test_float_check.o $(HELPERS_OBJ)
	$(NVCC) $(LDFLAGS) $^ -o $@ $(TEST_LIBS)
$(BUILD)/tests/test_harness: $(BUILD)/tests/test_harness.o $(COMMON_OBJ)
	$(NVCC) $(LDFLAGS) $^ -o $@ $(TEST_LIBS) $(SECCOMP_LIBS)

# One kernel-test binary per lab: the generic matrix (test_lab.c) plus tests/lab_NN_*.c, linked
# with the reference solution ($(BUILD)/tests/kernels_NN_name) or, for make test TEST_SRC=labs,
# with the student's labs/NN_name/scan.cu ($(BUILD)/tests/labs/kernels_NN_name), in both cases
# with the lab's test hooks (LAB_TEST_OBJ) and its descriptor.
KERNEL_TEST_OBJS = $(BUILD)/tests/test_lab.o $(TEST_SUPPORT) \
    $(addprefix $(BUILD)/,$(addsuffix .o,$(basename $(wildcard tests/lab_$(firstword $(subst _, ,$(1)))_*.c))))
$(BUILD)/tests/kernels_%: $$(call KERNEL_TEST_OBJS,$$*) $$(call LAB_TEST_OBJ,solutions/$$*) $$(call LAB_DESC,$$*) $$(call LAB_BASE_OBJS,solutions/$$*) $(COMMON_OBJ)
	$(NVCC) $(LDFLAGS) $^ -o $@ $(TEST_LIBS) $(SECCOMP_LIBS)
$(BUILD)/tests/labs/kernels_%: $$(call KERNEL_TEST_OBJS,$$*) $$(call LAB_TEST_OBJ,labs/$$*) $$(call LAB_DESC,$$*) $$(call LAB_BASE_OBJS,labs/$$*) $(COMMON_OBJ)
	@mkdir -p $(@D)
	$(NVCC) $(LDFLAGS) $^ -o $@ $(TEST_LIBS) $(SECCOMP_LIBS)

# TEST_SRC: the code the kernel tests run. solutions (the default) is the repository's own suite:
# the reference solutions, plus the checks that labs/ holds untouched skeletons. labs tests the
# student's code: make test TEST_SRC=labs (LAB=03: only lab 03's kernel tests, no Python suites).
# An untouched lab then reports "not implemented yet" as a skip.
TEST_SRC ?= solutions
ifeq ($(filter labs solutions,$(TEST_SRC)),)
  $(error TEST_SRC=$(TEST_SRC): say TEST_SRC=labs (your code) or TEST_SRC=solutions (the default))
endif
ifneq ($(filter test,$(MAKECMDGOALS)),)
  ifneq ($(LAB),)
    ifeq ($(LAB_DIR),)
      $(error make test: no lab matches LAB=$(LAB) (labs: $(LABS)))
    endif
  endif
endif
TEST_LABS   = $(if $(LAB),$(LAB_DIR),$(LABS))
KERNEL_BINS = $(TEST_LABS:%=$(BUILD)/tests/$(if $(filter labs,$(TEST_SRC)),labs/)kernels_%)
TEST_BINS   = $(if $(LAB),,$(BUILD)/tests/test_helpers $(BUILD)/tests/test_float_check $(BUILD)/tests/test_harness \
                $(if $(CPU_MODE),$(BUILD)/tests/test_cpu_warp $(BUILD)/tests/test_cpu_banks)) $(KERNEL_BINS)

# What the Python suites need besides: every lab binary of both trees and the CPU-mode fixtures.
TEST_EXTRAS = $(if $(LAB),,$(LABS:%=$(BUILD)/labs/%/scan) $(LABS:%=$(BUILD)/solutions/%/scan) cpu-fixtures)

test: check-criterion $(TEST_BINS) $(TEST_EXTRAS)
	LAB_TEST_SRC=$(TEST_SRC) LAB_BUILD_DIR=$(abspath $(BUILD)) $(PYTHON) tests/run_tests.py \
	  --src $(TEST_SRC) $(if $(LAB),--no-python) $(if $(filter 1,$(V)),--verbose) $(TEST_BINS)

# The extended suite: the kernel tests again with LAB_TEST_EXTENDED=1 (adds n = 2^31 + 7).
test-extended: check-criterion $(KERNEL_BINS)
	LAB_TEST_EXTENDED=1 LAB_TEST_SRC=$(TEST_SRC) LAB_BUILD_DIR=$(abspath $(BUILD)) $(PYTHON) tests/run_tests.py \
	  --src $(TEST_SRC) --no-python $(if $(filter 1,$(V)),--verbose) $(KERNEL_BINS)

# CPU mode's own tests (tests/test_cpu_mode.py) run deliberately broken kernels,
# tests/cpu_fixtures/*.cu, built as lab binaries in CPU mode: $(BUILD)/cpu/cpu_fixtures/NAME/scan
# (a GPU build makes them with a CPU-mode sub-make). In CPU mode the kernel tests run up to
# n = LAB_TEST_MAX_N (CPU_TEST_MAX_N, default 70000; tests/lab_cases.c keeps every tile edge case).
CPU_FIXTURES := $(sort $(basename $(notdir $(wildcard tests/cpu_fixtures/*.cu))))
# tests/cpu_corpus/*.cu: correct scans, each in one form of valid CUDA (default arguments, kernel
# templates deduced at the launch, lambdas, macros around launches, a BOM, CRLF...) that CPU mode
# must build and run as nvcc would: $(BUILD)/cpu_corpus/NAME/scan, built with the fixtures.
CPU_CORPUS := $(sort $(basename $(notdir $(wildcard tests/cpu_corpus/*.cu))))
CPU_TEST_MAX_N ?= 70000
.PHONY: cpu-fixtures
ifneq ($(CPU_MODE),)
cpu-fixtures: $(CPU_FIXTURES:%=$(BUILD)/cpu_fixtures/%/scan) $(CPU_CORPUS:%=$(BUILD)/cpu_corpus/%/scan)

$(BUILD)/cpu_corpus/%/scan.o: tests/cpu_corpus/%.cu $(COMMON_DEPS) tests/cpu_corpus/corpus.h
	@mkdir -p $(@D)
	$(call CU_COMPILE,$<,$@)

$(BUILD)/cpu_fixtures/%/scan.o: tests/cpu_fixtures/%.cu $(COMMON_DEPS) tests/cpu_fixtures/fixture.h tests/cpu_fixtures/correct_kernel.h
	@mkdir -p $(@D)
	$(call CU_COMPILE,$<,$@)

# tests/test_cpu_warp.cu: the CPU runtime's warp operations against the CUDA rules (CPU mode only).
$(BUILD)/tests/test_cpu_warp.o: tests/test_cpu_warp.cu $(COMMON_DEPS) | check-criterion
	@mkdir -p $(@D)
	$(PYTHON) common/cpu/rewrite.py $< -o $(@:.o=.cpu.cpp)
	$(CXX) $(CPU_CXXFLAGS) $(CRIT_CFLAGS) -c $(@:.o=.cpu.cpp) -o $@
$(BUILD)/tests/test_cpu_warp: $(BUILD)/tests/test_cpu_warp.o $(CPU_RT_OBJ)
	$(CXX) $^ -o $@ $(TEST_LIBS)

# tests/test_cpu_banks.cu: CPU mode's bank-conflict count against the rules (CPU mode only).
$(BUILD)/tests/test_cpu_banks.o: tests/test_cpu_banks.cu $(COMMON_DEPS) | check-criterion
	@mkdir -p $(@D)
	$(PYTHON) common/cpu/rewrite.py $< -o $(@:.o=.cpu.cpp)
	$(CXX) $(CPU_CXXFLAGS) $(call BANK_FLAGS,$<) $(CRIT_CFLAGS) -c $(@:.o=.cpu.cpp) -o $@
$(BUILD)/tests/test_cpu_banks: $(BUILD)/tests/test_cpu_banks.o $(CPU_RT_OBJ)
	$(CXX) $^ -o $@ $(TEST_LIBS)

test test-extended: export LAB_TEST_MAX_N := $(or $(LAB_TEST_MAX_N),$(CPU_TEST_MAX_N))
test test-extended: export CPU_SCHED_QUIET := 1
else
cpu-fixtures:
	@$(MAKE) --no-print-directory CPU=1 DEBUG=0 BUILD=$(BUILD) cpu-fixtures
endif

# ---- slides and diagrams (owned by the handouts/slides work; see slides/README.md) ---------------
# make diagrams: regenerate slides/diagrams/*.svg from slides/make_diagrams.py (standard library).
# make slides:   render every deck slides/NN_*.md to HTML under $(BUILD)/slides with the Marp CLI
#                (installed on first use into slides/node_modules from slides/package-lock.json),
#                and to PDF as well when a Chromium or Chrome is installed (CHROME_PATH overrides).
#                slides/marp.config.json: a line break in the Markdown source is not a break on
#                the slide (as on GitHub).
SLIDES_OUT   := $(BUILD)/slides
SLIDE_DECKS  := $(sort $(wildcard slides/[0-9][0-9]_*.md slides/[0-9][0-9][a-z]_*.md))
MARP         := slides/node_modules/.bin/marp
CHROME_PATH  ?= $(firstword $(foreach b,chromium chromium-browser google-chrome google-chrome-stable,$(shell command -v $(b) 2>/dev/null)))

.PHONY: diagrams slides
diagrams:
	$(PYTHON) slides/make_diagrams.py

$(MARP): slides/package.json
	@command -v npm >/dev/null 2>&1 || { echo "make slides: npm is missing: install Node.js 18 or newer with npm (Debian/Ubuntu: sudo apt-get install nodejs npm), then run make slides again" >&2; exit 1; }
	@echo "make slides: installing the Marp CLI into slides/node_modules (once)" >&2
	cd slides && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

slides: $(MARP)
	@mkdir -p $(SLIDES_OUT)/diagrams
	cp slides/diagrams/*.svg $(SLIDES_OUT)/diagrams/
	@for deck in $(SLIDE_DECKS); do \
	  name=$$(basename $$deck .md); \
	  $(MARP) --no-stdin --config slides/marp.config.json --html --allow-local-files $$deck -o $(SLIDES_OUT)/$$name.html >/dev/null 2>&1 \
	    || { echo "make slides: marp failed on $$deck (run $(MARP) $$deck to see why)" >&2; exit 1; }; \
	  if [ -n "$(CHROME_PATH)" ]; then \
	    CHROME_PATH="$(CHROME_PATH)" CHROME_NO_SANDBOX=1 $(MARP) --no-stdin --config slides/marp.config.json --pdf --allow-local-files $$deck -o $(SLIDES_OUT)/$$name.pdf >/dev/null 2>&1 \
	      || { echo "make slides: PDF of $$deck failed (HTML is fine); set CHROME_PATH to a working Chromium" >&2; exit 1; }; \
	  fi; \
	  echo "  $(SLIDES_OUT)/$$name.html$(if $(CHROME_PATH), and .pdf)"; \
	done
	@$(if $(CHROME_PATH),:,echo "make slides: no Chromium or Chrome found, so HTML only (install chromium for PDF)")

# ---- benchmark (lab 08 / issue 8): every lab against CUB DeviceScan and a device memcpy -----------
# make bench: the reference solutions (SRC=labs on the command line: the student's labs) for
# n = 2^10 ... 2^28 (and 2^31 + 7 when the host has ~40 GiB free), table on stdout, CSV and SVG
# plot under $(BUILD)/bench. BENCH_ARGS passes options to grader/bench.py ('--step 1',
# '--no-huge', '--labs 07,08'); see
# grader/BENCH.md. CUB is used by the anchor program only, never by a lab or a test.
BENCH_SRC  := $(if $(filter file,$(origin SRC)),solutions,$(SRC))
BENCH_ARGS ?=

$(BUILD)/bench/bench_cub: $(BUILD)/common/bench_cub.o $(HELPERS_OBJ) $(BUILD)/common/cuda_check.o
	@mkdir -p $(@D)
	$(NVCC) $(LDFLAGS) $^ -o $@

.PHONY: bench
bench: $(BUILD)/bench/bench_cub $(LABS:%=$(BUILD)/$(BENCH_SRC)/%/scan)
	$(PYTHON) grader/bench.py --build $(BUILD) --src $(BENCH_SRC) --out $(BUILD)/bench $(BENCH_ARGS)

# ---- deployments (grader/README.md, "Deployments") ------------------------------------------------
# make gradescope [GRADESCOPE_ARGS='--mode gpu --labs 03 --timeout 1800']: build/gradescope/autograder.zip
# (setup.sh, run_autograder, the course files); the container for PrairieLearn or any runner is
# grader/deploy/Dockerfile (docker build -f grader/deploy/Dockerfile .).
GRADESCOPE_ARGS ?=
.PHONY: gradescope
gradescope:
	$(PYTHON) grader/deploy/make_gradescope.py --out build/gradescope/autograder.zip $(GRADESCOPE_ARGS)

# ---- the grader's own benchmark (issue 15): a synthetic class graded end to end ------------------
# make bench-grader [BENCH_GRADER_ARGS='--n 20 --gpus all --labs 01 02 --cpu']: N submissions (full,
# partial, broken), the wall time of each and of the class, GPUs used (grader/README.md).
BENCH_GRADER_ARGS ?=
.PHONY: bench-grader
bench-grader:
	$(PYTHON) grader/bench_grader.py $(if $(CPU_MODE),--cpu) $(BENCH_GRADER_ARGS)

# ---- style: make format rewrites, make lint only checks (CI runs make lint) -----------------------
# Every C/CUDA source of the course in the style of .clang-format (written for clang-format 14, the
# version Debian 12 ships; another version may format a few lines differently). Not the grader's
# fixture submissions: they are students' files as submitted, and the grader's messages about them
# name line numbers (grader/fixtures/expected.json).
CLANG_FORMAT ?= clang-format
PYFLAKES     ?= pyflakes3
STYLE_C  := $(sort $(wildcard common/*.c common/*.h common/*.cu common/cpu/*.cpp common/cpu/*.h \
              common/labs/*.c common/labs/*.h labs/*/*.cu solutions/*/*.cu \
              tests/*.c tests/*.h tests/hooks/*.cu tests/hooks/*.h tests/cpu_fixtures/*.cu tests/cpu_fixtures/*.h \
              $(filter-out %/bom_crlf.cu,$(wildcard tests/cpu_corpus/*.cu tests/cpu_corpus/*.h))))
STYLE_PY := $(sort $(wildcard common/*.py common/cpu/*.py grader/*.py grader/gradelib/*.py \
              grader/gradelib/*/*.py grader/tests/*.py grader/tools/*.py tests/*.py slides/*.py))

format:
	@command -v $(CLANG_FORMAT) >/dev/null 2>&1 || { echo "make format: $(CLANG_FORMAT) is missing: sudo apt-get install clang-format" >&2; exit 2; }
	$(CLANG_FORMAT) -i $(STYLE_C)

lint:
	@command -v $(CLANG_FORMAT) >/dev/null 2>&1 || { echo "make lint: $(CLANG_FORMAT) is missing: sudo apt-get install clang-format" >&2; exit 2; }
	@command -v $(PYFLAKES) >/dev/null 2>&1 || { echo "make lint: $(PYFLAKES) is missing: sudo apt-get install pyflakes3" >&2; exit 2; }
	@mkdir -p $(BUILD); $(CLANG_FORMAT) --dry-run --Werror $(STYLE_C) >/dev/null 2>&1 \
	  && echo "lint: $(words $(STYLE_C)) C/CUDA files in the course style ($$($(CLANG_FORMAT) --version | sed 's/.*version \([0-9.]*\).*/clang-format \1/'))" \
	  || { $(CLANG_FORMAT) --dry-run $(STYLE_C) 2>&1 | grep -oE '^[^: ]+:[0-9]+' | sort -t: -k1,1 -k2,2n -u | awk -F: '{c[$$1]++; if (!($$1 in f)) f[$$1]=$$2} END {for (k in c) printf "lint: %s: %d lines not in the course style (first: line %s)\n", k, c[k], f[k]}' | sort; \
	       echo "lint: run make format to fix them (clang-format -i)"; exit 1; }
	@$(PYFLAKES) $(STYLE_PY) && echo "lint: $(words $(STYLE_PY)) Python files clean ($(PYFLAKES))"
