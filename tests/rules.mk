# tests/rules.mk — the test targets of the top-level Makefile (make test, make test-extended,
# the Criterion binaries, CPU mode's fixtures and corpus), included by it where this section
# stood: the same variables and rules, kept beside the tests they build.

# ---- tests ---------------------------------------------------------------------------------------
# CRITERION_PREFIX: Criterion's include/ and lib/ (tests/README.md); DT_RPATH covers its libraries.
CRIT_CFLAGS := $(if $(CRITERION_PREFIX),-I$(CRITERION_PREFIX)/include)
TEST_LIBS := $(if $(CRITERION_PREFIX),-L$(CRITERION_PREFIX)/lib -Xlinker --disable-new-dtags -Xlinker -rpath=$(abspath $(CRITERION_PREFIX))/lib) -lcriterion
check-criterion:
	@PYTHON=$(PYTHON) LAB_TEST_NEEDS=$(TEST_NEEDS) tools/check_criterion.sh "$(CRITERION_PREFIX)"
# what make's goals need: the test binaries Criterion; make test pytest too, and with the Python
# suites pytest-xdist
TEST_NEEDS = $(if $(filter test test-full test-extended,$(MAKECMDGOALS)),$(if $(ONLY_KERNELS)$(filter test-extended,$(MAKECMDGOALS)),pytest,all),criterion)

$(BUILD)/tests/%.o: CFLAGS += $(CRIT_CFLAGS) -Itests
$(BUILD)/tests/%.o: tests/%.c $(COMMON_DEPS) tests/lab_cases.h tests/barriers.h tests/hooks/hooks.h | check-criterion
	$(COMPILE_C)

# Host-only tests of the helpers and the harness; one kernel-test binary per lab: test_lab.c and
# tests/lab_NN_*.c, linked with solutions/NN_name ($(BUILD)/tests/kernels_NN_name) or labs/NN_name
# ($(BUILD)/tests/labs/kernels_NN_name): its hooks (LAB_TEST_OBJ), descriptor and base labs.
$(BUILD)/tests/test_helpers $(BUILD)/tests/test_float_check: $(BUILD)/tests/%: $(BUILD)/tests/%.o $(HELPERS_OBJ)
	$(call LINK,$(TEST_LIBS))
$(BUILD)/tests/test_harness: $(BUILD)/tests/test_harness.o $(COMMON_OBJ)
	$(call LINK,$(TEST_LIBS) $(SECCOMP_LIBS))
KERNEL_TEST_OBJS = $(BUILD)/tests/test_lab.o $(BUILD)/tests/lab_cases.o $(BUILD)/tests/barriers.o \
    $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/lab_$(firstword $(subst _, ,$(notdir $(1))))_*.c)) \
    $(call LAB_TEST_OBJ,$(1)) $(call LAB_DESC,$(1)) $(call LAB_BASE_OBJS,$(1))
KERNEL_TESTS := $(LABS:%=$(BUILD)/tests/kernels_%) $(LABS:%=$(BUILD)/tests/labs/kernels_%)
$(KERNEL_TESTS): $(BUILD)/tests/%: $$(call KERNEL_TEST_OBJS,$$(subst kernels_,,$$(if $$(findstring labs/,$$*),$$*,solutions/$$*))) $(COMMON_OBJ)
	$(call LINK,$(TEST_LIBS) $(SECCOMP_LIBS))
# TEST_SRC: what the kernel tests run: solutions (the repository's suite, which also checks the
# untouched skeletons) or labs (the student's code). LAB=03: lab 03's kernel tests only.
TEST_SRC ?= $(if $(wildcard solutions),solutions,labs)# a student release has no solutions/
ifeq ($(filter labs solutions,$(TEST_SRC)),)
  $(error TEST_SRC=$(TEST_SRC): say TEST_SRC=labs (your code) or TEST_SRC=solutions (the default))
endif
ifneq ($(and $(filter test,$(MAKECMDGOALS)),$(LAB)),)
  $(if $(LAB_DIR),,$(error make test: no lab matches LAB=$(LAB) (labs: $(LABS))))
endif
TEST_LABS   = $(if $(LAB),$(LAB_DIR),$(LABS))
KERNEL_BINS = $(TEST_LABS:%=$(BUILD)/tests/$(if $(filter labs,$(TEST_SRC)),labs/)kernels_%)
# A student's run (LAB=NN or TEST_SRC=labs): kernel tests only; else also the Python suites' needs.
ONLY_KERNELS = $(or $(LAB),$(filter labs,$(TEST_SRC)))
TEST_BINS   = $(if $(ONLY_KERNELS),,$(BUILD)/tests/test_helpers $(BUILD)/tests/test_float_check $(BUILD)/tests/test_harness \
                $(if $(CPU_MODE),$(BUILD)/tests/test_cpu_warp $(BUILD)/tests/test_cpu_banks $(BUILD)/tests/test_cpu_profile)) $(KERNEL_BINS)
TEST_EXTRAS = $(if $(ONLY_KERNELS),,$(LABS:%=$(BUILD)/labs/%/scan) $(LABS:%=$(BUILD)/solutions/%/scan) judges cpu-fixtures)
# PART=sort: only the variants whose name has it (lab 10's applications one at a time)
# The tests run under pytest (Debian: python3-pytest; python3-pytest-xdist spreads the Python suites
# over the cores; check-criterion installs both) with the course's plugin, tests/course_plugin.py.
# PYTEST_PY: the interpreter that has pytest ($(PYTHON), else Debian's /usr/bin/python3). Both
# are asked on first use only, and then once (each ask starts Python).
PYTEST_PY   = $(eval PYTEST_PY := $(shell for p in $(PYTHON) /usr/bin/python3; do $$p -c 'import pytest' 2>/dev/null && { echo $$p; break; }; done))$(PYTEST_PY)
PYTEST_JOBS = $(eval PYTEST_JOBS := $(shell $(PYTEST_PY) -c 'import xdist' 2>/dev/null && echo "-n $$(( $$(nproc) + 1 )) --dist loadgroup"))$(PYTEST_JOBS)
RUN_TESTS   = @$(TEST_ENV) LAB_TEST_SRC=$(TEST_SRC) LAB_TEST_PART=$(PART) \
              LAB_BUILD_DIR=$(abspath $(BUILD)) PYTHONPATH=tests $(PYTEST_PY) -m pytest -c tests/pytest.ini --rootdir . \
              -o cache_dir=$(BUILD)/pytest-cache

# a student's test run: the course's side of the kernel tests (its tests, the lab's descriptor, the
# harness) first, under one line; then the student's files, each named
COURSE_TEST_OBJS = $(COMMON_OBJ) $(foreach l,$(TEST_LABS),$(filter-out $(call LAB_TEST_OBJ,$(TEST_SRC)/$(l)) \
                   $(call LAB_BASE_OBJS,$(TEST_SRC)/$(l)),$(call KERNEL_TEST_OBJS,$(TEST_SRC)/$(l))))
ifneq ($(ONLY_KERNELS),)
test: check-criterion
	$(call COURSE_FIRST,$(sort $(COURSE_TEST_OBJS)), and tests)
	@$(MAKE) $(SUBFLAGS) $(TEST_BINS)
	$(RUN_TESTS) $(if $(filter 1,$(V)),-v) $(TEST_BINS)
else
test: check-criterion $(TEST_BINS) $(TEST_EXTRAS)
	$(RUN_TESTS) $(PYTEST_JOBS) --durations=12 $(if $(filter 1,$(V)),-v) tests grader/tests $(TEST_BINS)
endif
# make test-full: make test and the full suite's tests (tests/course_plugin.py: FULL_SUITE), which the
# gate skips: every grader fixture graded end to end, the deployments run whole, the load test
test-full: TEST_ENV = LAB_TEST_FULL=1
test-full: test
ifneq ($(and $(filter test-full,$(MAKECMDGOALS)),$(ONLY_KERNELS)),)
  $(error make test-full runs the repository's whole suite: without LAB= or TEST_SRC=labs (make test TEST_SRC=labs LAB=NN tests your lab))
endif
test-extended: check-criterion $(KERNEL_BINS)
	$(RUN_TESTS) $(if $(filter 1,$(V)),-v) $(KERNEL_BINS)
test-extended: TEST_ENV = LAB_TEST_EXTENDED=1

# tests/test_cpu_mode.py runs tests/cpu_fixtures/*.cu (broken kernels) and cpu_corpus/*.cu (unusual
# valid CUDA) as CPU-mode lab binaries; test_cpu_{warp,banks}.cu test the CPU runtime. In CPU mode
# the kernel tests' sizes stop at LAB_TEST_MAX_N (tests/lab_cases.c: lab_test_max_n), except
# lookback::many_tiles's own 2^23 + 13 (tests/README.md).
CPU_FIXTURES := $(sort $(basename $(notdir $(wildcard tests/cpu_fixtures/*.cu))))
CPU_CORPUS   := $(sort $(basename $(notdir $(wildcard tests/cpu_corpus/*.cu))))
CPU_TEST_MAX_N ?= 70000
ifneq ($(CPU_MODE),)
cpu-fixtures: $(CPU_FIXTURES:%=$(BUILD)/cpu_fixtures/%/scan) $(CPU_CORPUS:%=$(BUILD)/cpu_corpus/%/scan)
$(BUILD)/cpu_%/scan.o: tests/cpu_%.cu $(COMMON_DEPS) $$(wildcard tests/cpu_$$(*D)/*.h)
	$(COMPILE_CU)
$(BUILD)/tests/test_cpu_%.o: CPU_CXXFLAGS += $(CRIT_CFLAGS)
$(BUILD)/tests/test_cpu_%.o: tests/test_cpu_%.cu $(COMMON_DEPS) | check-criterion
	$(COMPILE_CU)
$(BUILD)/tests/test_cpu_%: $(BUILD)/tests/test_cpu_%.o $(CPU_RT_OBJ) $(BUILD)/common/hostmem.o \
                           $(BUILD)/common/harness_algorithm.o
	$(call LINK,$(TEST_LIBS))
test test-extended: export LAB_TEST_MAX_N := $(or $(LAB_TEST_MAX_N),$(CPU_TEST_MAX_N))
test test-extended: export CPU_SCHED_QUIET := 1
else
cpu-fixtures:
	@$(MAKE) $(SUBFLAGS) CPU=1 DEBUG=0 BUILD=$(BUILD) cpu-fixtures
endif
