# Parallel Scan Labs — one Makefile for everything; `make help` lists the targets. It builds; the
# programs its recipes run live in tools/ (style, slides, Criterion; help's text) and grader/.

# ---- configuration (all overridable: make ARCH=sm_80 NVCC=/opt/cuda/bin/nvcc) ----------------
# Also: LAB=NN, ARGS='--n 2^20' (make run), V=1 (print commands), STATUS=1 (make run exits as the lab).
SRC    ?= labs
DEBUG  ?= 0
PYTHON := $(if $(filter undefined default,$(origin PYTHON)),$(shell python3 -c 'import sys; print(sys.executable)' 2>/dev/null || echo python3),$(PYTHON))# once: a shim (pyenv) costs ~0.4 CPU-s a run
export PYTHON# the makes this one runs (make run's build, the tests') take it as it is
NVCC   ?= $(shell command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
CC     ?= cc
OBJCOPY ?= objcopy
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
# The GPU's architecture when there is one (nvidia-smi reports e.g. "9.0"), sm_90 otherwise.
# ARCH may list several, oldest first, for a fleet of mixed GPUs (ARCH="sm_80 sm_90"): each one's
# machine code, and the last one's PTX, which the driver compiles for any newer GPU.
GPU_CC := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d '. ')
ARCH   ?= $(if $(GPU_CC),sm_$(GPU_CC),sm_90)
ARCH_NUMS := $(patsubst sm_%,%,$(strip $(ARCH)))
ARCH_BAD  := $(if $(strip $(ARCH)),$(shell printf '%s\n' $(ARCH) | grep -vE '^sm_[0-9]+[af]?$$'),'')
ifneq ($(strip $(ARCH_BAD)),)
$(error ARCH="$(ARCH)": $(firstword $(ARCH_BAD)) is not an architecture: write sm_ and the compute capability without its dot (sm_80: A100, sm_90: H100 and H200), several separated by spaces, oldest first)
endif
ARCH_FLAGS := $(if $(filter 1,$(words $(ARCH_NUMS))),-arch=sm_$(ARCH_NUMS),$(foreach a,$(ARCH_NUMS),-gencode arch=compute_$(a),code=sm_$(a)) -gencode arch=compute_$(lastword $(ARCH_NUMS)),code=compute_$(lastword $(ARCH_NUMS)))
BUILD  ?= build
# Builds run one job per core unless the command line says otherwise (make -j1: one at a time);
# a make this one runs (make run's build of the lab) shares the top one's jobs instead.
ifeq ($(MAKELEVEL),0)
JOBS_GIVEN := $(filter -j%,$(MAKEFLAGS))
MAKEFLAGS += $(if $(JOBS_GIVEN),,-j$(shell nproc 2>/dev/null || echo 1))
endif
LABS   := $(sort $(notdir $(wildcard labs/[0-9][0-9]_*)))
# LAB_DIR: the lab LAB names (LAB=03 or LAB=03_kogge_stone: 03_kogge_stone).
LAB_DIR = $(firstword $(filter $(LAB)%,$(LABS)))

# CPU mode (CPU=1, built under $(BUILD)/cpu): kernels as host C++ on fibers, correctness only
# (common/cpu/README.md); chosen for test, test-full, grade, run and all without a GPU (CPU=0: never).
ifeq ($(origin CPU)$(GPU_CC),undefined)
  ifneq ($(filter test test-full grade run all,$(MAKECMDGOALS)),)
    CPU := 1
    export CPU
    $(info make: no GPU found (nvidia-smi), so the kernels run in CPU mode: correctness only, no speed (CPU=1; CPU=0 builds for the GPU anyway))
  endif
endif
CPU_MODE := $(filter 1,$(CPU))
# make test-extended adds only n = 2^31 + 7 to the kernel tests: a GPU job (~35 GB of host memory).
ifneq ($(filter test-extended,$(MAKECMDGOALS)),)
  $(if $(CPU_MODE),$(error make test-extended: the extended suite (n = 2^31 + 7) is GPU only and CPU mode (CPU=1) cannot run it; make test CPU=1 runs everything else))
  $(if $(filter undefined,$(GPU_CC)$(origin CPU)),$(error make test-extended: the extended suite (n = 2^31 + 7) needs an NVIDIA GPU and nvidia-smi finds none; make test runs everything else (CPU=0 forces the GPU build)))
endif
# DEBUG=1: -DLAB_DEBUG_SYNC -g instead of -O3, built apart under $(BUILD)/debug.
override BUILD := $(BUILD)$(if $(CPU_MODE),/cpu)$(if $(filter 1,$(DEBUG)),/debug)

# The sandbox of graded runs needs libseccomp (libseccomp-dev; else it reports itself unavailable),
# linked statically if it can be. SECCOMP_PREFIX: a folder with include/ and lib/ (tests/README.md).
SECCOMP_H   := $(firstword $(wildcard $(if $(SECCOMP_PREFIX),$(SECCOMP_PREFIX)/include/seccomp.h) /usr/include/seccomp.h))
SECCOMP_A   := $(firstword $(wildcard $(if $(SECCOMP_PREFIX),$(SECCOMP_PREFIX)/lib/libseccomp.a) /usr/lib/x86_64-linux-gnu/libseccomp.a /usr/lib64/libseccomp.a /usr/lib/libseccomp.a))
SECCOMP_CFLAGS := $(if $(SECCOMP_H),-DLAB_HAVE_SECCOMP $(if $(SECCOMP_PREFIX),-isystem $(SECCOMP_PREFIX)/include))
SECCOMP_LIBS   := $(if $(SECCOMP_H),$(or $(SECCOMP_A),-lseccomp))

DEBUG_FLAGS := $(if $(filter 1,$(DEBUG)),-DLAB_DEBUG_SYNC -g,-O3)
CFLAGS   := -std=c11 -Wall -Wextra -pedantic $(DEBUG_FLAGS) -Icommon -I$(CUDA_HOME)/include $(SECCOMP_CFLAGS)
# -fno-jump-tables: the grader refuses every indirect call or jump in a lab's host code (grader/
# README.md). -fno-gnu-unique: an inline function's static is weak, so lab 10 can localize (below).
# --diag-error 20091,20092: host code that reads or writes a __device__ or __constant__ variable is
# an error, not nvcc's warning (it sees a host copy no kernel writes: a wrong value, silently).
NVFLAGS  := -std=c++17 $(ARCH_FLAGS) -lineinfo $(DEBUG_FLAGS) -Icommon \
            -Xcompiler -Wall,-Wextra,-fno-jump-tables,-fno-gnu-unique --expt-relaxed-constexpr \
            --diag-error 20091,20092
LDFLAGS  := $(ARCH_FLAGS)
# A .cu file becomes an object by nvcc, or in CPU mode by common/cpu/rewrite.py and the C++ compiler.
CU_COMPILE = $(NVCC) $(NVFLAGS) -c $(1) -o $(2).$$$$ && mv -f $(2).$$$$ $(2)
ifneq ($(CPU_MODE),)
  CFLAGS       := -std=c11 -Wall -Wextra -pedantic $(DEBUG_FLAGS) -DLAB_CPU_MODE -Icommon -Icommon/cpu $(SECCOMP_CFLAGS)
  # -fstack-clash-protection: a thread's stack overflow hits its guard page (common/cpu/README.md).
  CPU_CXXFLAGS := -x c++ -std=c++17 -fwrapv -fno-threadsafe-statics -fstack-clash-protection -fno-gnu-unique -fno-jump-tables \
                  $(DEBUG_FLAGS) -DLAB_CPU_MODE -Icommon -Icommon/cpu -Wall -Wextra -Wno-unknown-pragmas -Wno-deprecated-copy
  override NVCC := $(CXX)
  LDFLAGS      :=
  override GRADE_ARGS += --cpu
  CU_COMPILE = $(PYTHON) common/cpu/rewrite.py $(1) -o $(2:.o=.cpu.cpp) && \
               $(CXX) $(if $(CPU_PCH),-I$(dir $(CPU_PCH))) $(CPU_CXXFLAGS) $(call BANK_FLAGS,$(1)) -iquote $(dir $(1)) -c $(2:.o=.cpu.cpp) -o $(2).$$$$ && \
               mv -f $(2).$$$$ $(2)
  # The grader's CPU-mode builds (BANKS=0): the runtime headers every rewritten file includes first,
  # precompiled once by `make lab-common` (GCC's PCH; a compile it does not fit reads the headers).
  # The course's .cu objects depend on it: GCC never checks a PCH against the headers it came from,
  # and a stale one (a header changed, the objects rebuilt beside it) crashed GCC.
  CPU_PCH = $(if $(filter 1,$(BANKS)),,$(BUILD)/pch/cuda_runtime.h.gch)
endif
# CPU mode counts banks and sectors (common/cpu/README.md) in files with __shared__ memory: GCC's TSan
# hooks, -g1 in DWARF 4 (binutils 2.40's addr2line misnames some DWARF 5); BANKS=0: no hooks.
BANKS ?= 1
BANK_FLAGS = $(if $(filter 1,$(BANKS)),$(if $(shell grep -l '__shared__' $(1) 2>/dev/null),-fsanitize=thread --param tsan-instrument-func-entry-exit=0 -g1 -gdwarf-4))

# The recipes the rules share. Quiet by default: SAY makes the target's folder and prints a short
# line (V=1: make prints each command instead). Every object and binary is written under a name of
# its own, then renamed: a compile killed halfway leaves nothing the next make takes as up to date.
Q   = $(if $(filter 1,$(V)),,@)
SUBFLAGS = --no-print-directory $(if $(filter 1,$(V)),,-s)# a make this one runs: quiet unless V=1
SAY = @mkdir -p $(@D)$(if $(or $(filter 1,$(V)),$(SAY_QUIET)),,; printf '  %-4s %s\n' $(1) '$(2)')
# A student's build (make run, make test LAB=NN or TEST_SRC=labs) names only the student's files:
# the course's objects among $(1) are built first under one line (V=1: each file, as elsewhere).
COURSE_FIRST = $(if $(filter 1,$(V)),,+@objs='$(strip $(1))'; \
  n=$$($(MAKE) $(SUBFLAGS) -n $$objs 2>/dev/null | grep -c -e ' -c ' -e 'c++-header'); \
  if [ "$$n" -gt 0 ]; then echo "  building the course's harness$(2) ($$n file$$([ $$n = 1 ] || echo s), once)"; \
  $(MAKE) $(SUBFLAGS) SAY_QUIET=1 $$objs || exit $$?; fi)
define COMPILE_C
$(call SAY,CC,$<)
$(Q)$(CC) $(CFLAGS) -c $< -o $@.$$$$ && mv -f $@.$$$$ $@
endef
define COMPILE_CU
$(call SAY,$(if $(CPU_MODE),C++,NVCC),$<)
$(Q)$(call CU_COMPILE,$<,$@)
endef
# $(call LINK,libraries): the prerequisites' objects, then the libraries
define LINK
$(call SAY,LD,$@)
$(Q)$(NVCC) $(LDFLAGS) $(filter %.o,$^) $(1) -o $@.$$$$ && mv -f $@.$$$$ $@
endef

# ---- the common objects ------------------------------------------------------------------------
# The host-side helpers (pure C); the harness, common/harness/NAME.c as harness_NAME.o (beside the
# rest: the grader reads one folder); CPU mode's runtime, common/cpu/NAME.cpp as cpu_NAME.o.
HELPERS_C   := inputs validate options report ops hostmem
HELPERS_OBJ := $(HELPERS_C:%=$(BUILD)/common/%.o)
HARNESS_OBJ := $(patsubst %,$(BUILD)/common/harness_%.o,session case call verdict rig_host rig_scan rig_ops port spawn arena serve vmm profile_table algorithm)
COMMON_OBJ  := $(patsubst %,$(BUILD)/common/%.o,$(HELPERS_C) cuda_check sandbox driver verify) $(HARNESS_OBJ)
CPU_RT_OBJ  := $(patsubst %,$(BUILD)/common/cpu_%.o,fibers blocks warp memory errors signals launch api banks sites profile tsan_atomics)
MAIN_OBJ    := $(BUILD)/common/main.o
COMMON_DEPS := $(wildcard common/*.h common/harness/*.h)
ifneq ($(CPU_MODE),)
  COMMON_OBJ  += $(CPU_RT_OBJ)
  COMMON_DEPS += $(wildcard common/cpu/*.h) common/cpu/cuda/atomic common/cpu/rewrite.py
endif

# A lab's course-owned side: common/course/NN_name.h, which its scan.cu includes, and NN_name.c, its
# descriptor LAB. LAB_DESC: a lab directory's descriptor object (none for a CPU-mode fixture).
LAB_DESCS  := $(patsubst common/course/%.c,$(BUILD)/common/course/%.o,$(wildcard common/course/*.c))
STUB_OBJS  := $(patsubst common/course/%.c,$(BUILD)/common/course/%.o,$(wildcard common/course/stubs/*.c))
LAB_DESC    = $(patsubst common/course/%.c,$(BUILD)/common/course/%.o,$(wildcard common/course/$(notdir $(1)).c))
LAB_HEADER  = $(wildcard common/course/$(notdir $(1)).h)
.SECONDEXPANSION:
# A descriptor or stub (common/course/) also depends on its lab's header.
$(BUILD)/common/%.o: common/%.c $(COMMON_DEPS) $$(call LAB_HEADER,$$*)
	$(COMPILE_C)
$(BUILD)/common/harness_%.o: common/harness/%.c $(COMMON_DEPS)
	$(COMPILE_C)
$(BUILD)/common/%.o: common/%.cu $(COMMON_DEPS) $(CPU_PCH)
	$(COMPILE_CU)
$(BUILD)/common/cpu_%.o: common/cpu/%.cpp $(COMMON_DEPS)
	$(call SAY,C++,$<)
	$(Q)$(CXX) $(CPU_CXXFLAGS) -c $< -o $@.$$$$ && mv -f $@.$$$$ $@
# (written under a name of its own, then renamed, as every object is: two makes building it at once
# each rename a whole file, and a compile reading it meanwhile keeps the one it opened)
$(BUILD)/pch/cuda_runtime.h.gch: common/cpu/cuda_runtime.h $(COMMON_DEPS)
	$(call SAY,PCH,$<)
	$(Q)$(CXX) $(filter-out -x c++,$(CPU_CXXFLAGS)) -x c++-header $< -o $@.$$$$ && mv -f $@.$$$$ $@

# ---- lab binaries: build/<labs|solutions>/<NN_name>/scan ----------------------------------------
# scan.o as compiled (the grader reads it); scan.lab.o with cudaMalloc/cudaFree renamed to the harness's
# counting wrappers; linked with its lab's descriptor and the harness. Lab 10 also links its tree's
# labs 08 and 07 as scan.base.o: all but the entry points it calls (BASE_KEEP_<lab>) made local, COMDAT
# groups dissolved, so three labs' kernels never merge (LAB_BASES_<lab>: common/contract.json built_on).
include common/contract.mk
LAB_BASE_OBJS = $(foreach b,$(LAB_BASES_$(notdir $(1))),$(BUILD)/$(patsubst ./%,%,$(dir $(1)))$(b)/scan.base.o)
LAB_RENAME    = $(OBJCOPY) --redefine-sym cudaMalloc=lab_wrap_cudaMalloc --redefine-sym cudaFree=lab_wrap_cudaFree $(1) $(2)
BASE_LOCALIZE = $(OBJCOPY) $(foreach s,$(BASE_KEEP_$(2)),-G $(s)) --remove-section=.group $(1) $(3)

$(BUILD)/%/scan.o: %/scan.cu $(COMMON_DEPS) $(CPU_PCH) $$(call LAB_HEADER,$$*)
	$(COMPILE_CU)
# A student release (make student-release) has no solutions/: its references are compiled objects.
$(BUILD)/solutions/%/scan.o: grader/references/$(if $(CPU_MODE),cpu,gpu)/%.o
	$(Q)mkdir -p $(@D) && cp $< $@
%.lab.o: %.o
	$(Q)$(call LAB_RENAME,$<,$@)
$(BUILD)/%/scan.base.o: $(BUILD)/%/scan.lab.o
	$(Q)$(call BASE_LOCALIZE,$<,$(notdir $*),$@)
$(BUILD)/%/scan: $(BUILD)/%/scan.lab.o $$(call LAB_DESC,$$*) $$(call LAB_BASE_OBJS,$$*) $(COMMON_OBJ) $(MAIN_OBJ)
	$(call LINK,$(SECCOMP_LIBS))
# The grader's builds (grader/gradelib/build.py). lab-common: the harness objects, descriptors and
# stubs. lab-binary: one scan.cu built afresh by the rules above as LAB_OUT (and LAB_OUT.o, .lab.o):
#   make lab-binary LAB_SRC=x/scan.cu LAB_OUT=y/scan LAB_ID=03_kogge_stone BUILD=z
# LAB_BASES='08_decoupled_lookback=path/scan.o ...': lab 10's base objects as compiled, made
# LAB_OUT.<lab>.base.o like scan.base.o; a base not named links its stub (common/course/stubs/).
BASE_GIVEN = $(or $(patsubst $(1)=%,%,$(filter $(1)=%,$(LAB_BASES))),$(BUILD)/common/course/stubs/$(1).o)
lab-common: $(COMMON_OBJ) $(MAIN_OBJ) $(LAB_DESCS) $(STUB_OBJS) $(CPU_PCH) $(LABS:%=$(BUILD)/judge/%/judge)
lab-binary: $(STUB_OBJS) lab-binary-args $(LAB_OUT)
lab-binary-args:
	@test -n "$(LAB_SRC)" -a -n "$(LAB_OUT)" -a -n "$(LAB_ID)" || { echo "make lab-binary: set LAB_SRC=path/scan.cu, LAB_OUT=path/binary and LAB_ID=NN_name" >&2; exit 2; }
	@test -f "common/course/$(LAB_ID).c" || { echo "make lab-binary: no lab LAB_ID=$(LAB_ID) (labs: $(LABS))" >&2; exit 2; }
ifneq ($(LAB_OUT),)
$(LAB_OUT).o: $(LAB_SRC) lab-binary-args
	$(if $(filter %.o,$(LAB_SRC)),$(Q)mkdir -p $(@D) && cp $< $@,$(COMPILE_CU))
$(LAB_OUT).%.base.o: $$(call BASE_GIVEN,$$*) lab-binary-args
	$(Q)mkdir -p $(@D) && $(call LAB_RENAME,$<,$(@:.base.o=.lab.o)) && $(call BASE_LOCALIZE,$(@:.base.o=.lab.o),$*,$@)
$(LAB_OUT): $(LAB_OUT).lab.o $(call LAB_DESC,$(LAB_ID)) $(LAB_BASES_$(LAB_ID):%=$(LAB_OUT).%.base.o) $(COMMON_OBJ) $(MAIN_OBJ) lab-binary-args
	$(call LINK,$(SECCOMP_LIBS))
endif

# The judge of graded runs (common/harness/port.h): build/judge/<NN_name>/judge, the harness and
# the lab's descriptor with placeholders for its entry points (common/harness/placeholders.sh), so
# that no lab code is in it; `judge --judge path/to/scan --grader` runs the lab's binary as its
# second process. The grader builds one per lab (grader/gradelib/build.py).
$(BUILD)/judge/%/placeholders.c: $$(call LAB_DESC,$$*) common/harness/placeholders.sh
	@mkdir -p $(@D)
	$(Q)common/harness/placeholders.sh $< $@
$(BUILD)/judge/%/placeholders.o: $(BUILD)/judge/%/placeholders.c
	$(COMPILE_C)
$(BUILD)/judge/%/judge: $(BUILD)/judge/%/placeholders.o $$(call LAB_DESC,$$*) $(COMMON_OBJ) $(MAIN_OBJ)
	$(call LINK,$(SECCOMP_LIBS))
judges: $(LABS:%=$(BUILD)/judge/%/judge)

# The kernel tests' copy of a lab: scan.cu, then tests/hooks/NN_name.cu, #line-marked, in one unit.
$(BUILD)/%/scan_hooks.cu: %/scan.cu tests/hooks/$$(notdir $$*).cu
	@mkdir -p $(@D)
	$(Q){ printf '#line 1 "%s"\n' $<; cat $<; printf '\n#line 1 "%s"\n' $(word 2,$^); cat $(word 2,$^); } > $@
$(BUILD)/%/scan_hooks.o: NVFLAGS += -Itests
$(BUILD)/%/scan_hooks.o: CPU_CXXFLAGS += -Itests
$(BUILD)/%/scan_hooks.o: $(BUILD)/%/scan_hooks.cu $(COMMON_DEPS) tests/hooks/hooks.h $$(call LAB_HEADER,$$*)
	$(call SAY,$(if $(CPU_MODE),C++,NVCC),$*/scan.cu (with tests/hooks/$(notdir $*).cu))
	$(Q)$(call CU_COMPILE,$<,$@)
LAB_TEST_OBJ = $(BUILD)/$(1)/$(if $(wildcard tests/hooks/$(notdir $(1)).cu),scan_hooks,scan).lab.o

# ---- the targets of make help ------------------------------------------------------------------

.PHONY: judges help all run profile litmus test test-full test-extended grade clean check-criterion lab-common lab-binary \
        lab-binary-args format lint contract cpu-fixtures diagrams slides bench gradescope bench-grader hint student-release
.SECONDARY:  # keep objects between builds

help:
	@sed -e 's|@TEST_SRC@|$(TEST_SRC)|; s|@ARCH@|$(ARCH)|; s|@NVCC@|$(NVCC)|; s|@LABS@|$(LABS)|' tools/help.txt

all: $(LABS:%=$(BUILD)/$(SRC)/%/scan)
# The checks of LAB: $(1) the goal, $(2) an example lab or where the message goes, $(3) that.
NEED_LAB = @test -n "$(LAB)" || { echo "make $(1): say which lab, e.g. make $(1) LAB=$(2) (labs: $(LABS))"$(3); exit 2; }
LAB_OK   = @test -z "$(LAB)" -o -n "$(LAB_DIR)" || { echo "make $(1): no lab matches LAB=$(LAB) (labs: $(LABS))"$(2); exit 2; }
run:
	$(call NEED_LAB,run,03)
	$(call LAB_OK,run)
	$(call COURSE_FIRST,$(call LAB_DESC,$(LAB_DIR)) $(COMMON_OBJ) $(MAIN_OBJ))
	@$(MAKE) $(SUBFLAGS) $(BUILD)/$(SRC)/$(LAB_DIR)/scan
	@$(foreach v,$(filter LAB_EXIT_%,$(.VARIABLES)),$(v)="$($(v))") RUN_STATUS=$(STATUS) RUN_PART=$(PART) \
	  tools/run_lab.sh $(LAB) $(if $(filter /%,$(BUILD)),,./)$(BUILD)/$(SRC)/$(LAB_DIR)/scan $(ARGS)
profile:
	$(call NEED_LAB,profile,05, >&2)
	$(call LAB_OK,profile, >&2)
	@if [ -n "$(CPU_MODE)" -o -z "$(GPU_CC)" ]; then echo "make profile: no GPU here (nvidia-smi finds none, or CPU=1): Nsight Compute measures a GPU; make run LAB=$(LAB) CPU=1 counts shared-memory bank conflicts without one" >&2; exit 5; fi
	@$(MAKE) $(SUBFLAGS) $(BUILD)/$(SRC)/$(LAB_DIR)/scan
	$(Q)$(PYTHON) grader/profile.py --binary $(BUILD)/$(SRC)/$(LAB_DIR)/scan $(if $(ARGS),-- $(ARGS))
# lab 08's message-passing litmus test (labs/08_decoupled_lookback/litmus.cu): a GPU's own memory
# ordering, which CPU mode cannot show
litmus:
	@if [ -n "$(CPU_MODE)" -o -z "$(GPU_CC)" ]; then echo "make litmus: no GPU here (nvidia-smi finds none, or CPU=1): the litmus test measures a GPU's memory system" >&2; exit 5; fi
	@$(MAKE) $(SUBFLAGS) $(BUILD)/litmus/litmus
	@$(BUILD)/litmus/litmus $(ARGS)
$(BUILD)/litmus/litmus.o: labs/08_decoupled_lookback/litmus.cu $(COMMON_DEPS)
	$(COMPILE_CU)
$(BUILD)/litmus/litmus: $(BUILD)/litmus/litmus.o $(BUILD)/common/cuda_check.o
	$(call LINK)
grade:
	$(call LAB_OK,grade)
	$(Q)$(PYTHON) grader/grade.py --src $(SRC) --work $(BUILD)/grader $(if $(LAB),--labs $(LAB_DIR)) $(GRADE_ARGS)
hint: ; @$(PYTHON) tools/hint.py "$(LAB)" $(N)
clean:
	rm -rf $(BUILD)
# common/contract.h and .mk from common/contract.json (tests/test_contract.py fails if stale).
contract:
	$(PYTHON) common/contract.py

# ---- tests: tests/rules.mk (make test, make test-extended, the Criterion binaries) --------------
-include tests/rules.mk  # (absent from a grading package: grading needs no tests)

# ---- slides and diagrams (slides/README.md; make slides: CHROME_PATH= a Chromium for the PDFs) ---
diagrams:
	$(PYTHON) slides/make_diagrams.py
slides:
	@tools/slides.sh $(BUILD)/slides

# ---- benchmarks and deployments ------------------------------------------------------------------
# make bench: every lab of SRC (solutions unless SRC is on the command line; LAB=NN: that one; SRC=labs:
# beside its reference) against CUB and a memcpy, into $(BUILD)/bench; BENCH_ARGS: grader/BENCH.md.
BENCH_SRC  := $(if $(filter file,$(origin SRC)),solutions,$(SRC))
$(BUILD)/bench/bench_cub: $(BUILD)/common/bench_cub.o $(HELPERS_OBJ) $(BUILD)/common/cuda_check.o \
                          $(BUILD)/common/harness_call.o
	$(call LINK)
BENCH_LABS := $(or $(LAB_DIR),$(LABS))
bench: $(BUILD)/bench/bench_cub $(BENCH_LABS:%=$(BUILD)/$(BENCH_SRC)/%/scan) \
       $(if $(filter labs,$(BENCH_SRC)),$(BENCH_LABS:%=$(BUILD)/solutions/%/scan))
	$(Q)$(PYTHON) grader/bench.py --build $(BUILD) --src $(BENCH_SRC) --out $(BUILD)/bench $(if $(LAB),--labs $(LAB)) $(BENCH_ARGS)
# GRADESCOPE_ARGS='--mode gpu --labs 03', BENCH_GRADER_ARGS='--n 20 --gpus all': grader/README.md.
gradescope:
	$(Q)$(PYTHON) grader/deploy/make_gradescope.py --out build/gradescope/autograder.zip $(GRADESCOPE_ARGS)
# the repository to hand to students: no solutions/, the references as objects (tools/student_release.py)
student-release:
	$(Q)$(PYTHON) tools/student_release.py --dest "$(DEST)" $(RELEASE_ARGS)
bench-grader:
	$(PYTHON) grader/dev/bench_grader.py $(if $(CPU_MODE),--cpu) $(BENCH_GRADER_ARGS)

# ---- style (tools/style.sh): make format rewrites, make lint only checks (CI runs make lint) ------
CLANG_FORMAT ?= clang-format
PYFLAKES     ?= pyflakes3
format lint:
	@CLANG_FORMAT="$(CLANG_FORMAT)" PYFLAKES="$(PYFLAKES)" tools/style.sh $@
