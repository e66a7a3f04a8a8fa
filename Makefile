# memplan: the developer interface. `make` builds build/memplan (and, with nvcc, its GPU helper build/memplan-gpu);
# `make run` installs what building needs, builds and starts the daemon on 127.0.0.1:8080. Two tiers of tests:
# `make check` (C unit, golden, store and HTTP tests and the lints: under a minute) and `make test` (check, then
# the contract tests in a Python venv from PyPI, Schemathesis, promtool, valgrind, the README's examples and a
# short fuzz run). Objects go under build/.
#
# The house, one archive per folder, each depending only on those below it (tests/lint_layers.sh checks the
# includes):  cli, daemon -> codec -> service -> model, db, kernels -> planner -> core.

CC      ?= cc
# CFLAGS is yours (make CFLAGS=-O0); the flags the build needs are in BUILD_CFLAGS and always apply.
CFLAGS  ?= -O2 -g
BUILD_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Wall -Wextra -Werror -MMD -MP $(SAN_FLAGS)
ALL_CFLAGS = $(BUILD_CFLAGS) $(CFLAGS)
BUILD   := build
# `make V=1` prints every command; by default each step prints one short line.
V       ?= 0
ifeq ($(V),0)
Q_CC    = @echo "  CC      $@";
Q_LD    = @echo "  LINK    $@";
Q_AR    = @echo "  AR      $@";
Q_GEN   = @echo "  GEN     $@";
Q_NVCC  = @echo "  NVCC    $@";
endif
# `make` alone builds the program (the first rule below would otherwise be the default goal)
.DEFAULT_GOAL := all
LISTEN  ?= 127.0.0.1:8080
DB      ?= var/memplan.db

# ----- the folders ------------------------------------------------------------------------------------------
CORE_SRC    := core/base.c
PLANNER_SRC := planner/core.c planner/model.c planner/device.c planner/inference.c planner/training.c \
               planner/roofline.c planner/step.c planner/activations.c planner/weights.c planner/kv.c \
               planner/workspace.c planner/recurrent.c planner/engine.c planner/sdpa.c planner/vision.c
MODEL_SRC   := model/fields.c model/hf_config.c model/hf_types.c model/hf_moe.c model/hf_wrap.c model/hf_hybrid.c \
               model/hf_gemma.c model/hf_deepseek4.c \
               model/train_config.c model/hf_facts.c
DB_SRC      := db/store.c
KERNELS_SRC := kernels/calib_common.c kernels/calib_cpu.c kernels/calib_ipc.c kernels/calib_gpu_client.c
SERVICE_SRC := service/service.c service/defaults.c service/suggest.c service/plan.c service/fit.c service/capacity.c \
               service/roofline.c service/calib.c service/k8s.c service/engine.c
CODEC_SRC   := codec/json.c codec/problem.c codec/formats.c codec/model.c codec/device.c codec/inference.c \
               codec/training.c codec/fit.c codec/capacity.c codec/roofline.c codec/svg.c codec/text.c codec/human.c codec/help.c \
               codec/store.c codec/calib.c codec/k8s.c codec/k8s_stream.c codec/slurm.c codec/engine.c
DAEMON_SRC  := daemon/server.c daemon/routes.c daemon/reply.c daemon/query.c daemon/auth.c daemon/config.c \
               daemon/log.c daemon/metrics.c daemon/respcache.c daemon/guard.c daemon/framing.c daemon/budget.c daemon/lane.c daemon/accept.c daemon/h_health.c daemon/h_devices.c \
               daemon/h_models.c daemon/h_plan.c daemon/h_engine.c daemon/h_fit.c daemon/h_roofline.c daemon/h_calibrations.c \
               daemon/h_k8s.c daemon/h_slurm.c daemon/h_web.c
CLI_SRC     := cli/main.c cli/common.c cli/serve.c cli/plan.c cli/roofline.c cli/calibrate.c cli/db.c
LAYERS      := core planner model db kernels service codec daemon cli

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))

# ----- calibration kernels (kernels/) -----------------------------------------------------------------------
# CUDA=auto (default) builds the CUDA kernels when nvcc is found; CUDA=1 insists on nvcc; CUDA=0 leaves them out
# (GPU calibration then answers 501 "not built in"). The kernels never go into memplan itself: they are the
# helper executable build/memplan-gpu (kernels/gpu_helper.c + calib_gpu.cu, linking the CUDA runtime and
# cuBLASLt), which memplan starts for a GPU probe or calibration and finds beside itself (or at
# $MEMPLAN_GPU_HELPER). So memplan's start-up and memory are the same in both builds, and a CUDA build runs
# without a GPU (503 with the reason). The CPU path (pthreads + OpenBLAS) is in every build.
# Machine code for the GPUs the device presets name (V100 sm_70, T4 sm_75, A100 sm_80, A10/RTX 3090 sm_86,
# L4/L40S/RTX 4090 sm_89, H100/H200 sm_90, B200/GB200 sm_100) that this nvcc can build (CUDA 13 dropped sm_70),
# plus PTX of the newest for GPUs after them. build/gen/cuda_mode.c follows the mode, so switching relinks.
CUDA      ?= auto
NVCC      ?= $(shell command -v nvcc 2>/dev/null)
CUDA_ON   := $(if $(filter auto,$(CUDA)),$(if $(NVCC),1,0),$(if $(filter 0,$(CUDA)),0,1))
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
CUDA_SMS  ?= 70 75 80 86 89 90 100
OPENBLAS_CFLAGS := $(shell pkg-config --cflags openblas 2>/dev/null)
OPENBLAS_LIBS   := $(or $(shell pkg-config --libs openblas 2>/dev/null),-lopenblas)
KERNELS_LIBS    := $(OPENBLAS_LIBS)
ifeq ($(CUDA_ON),1)
ifeq ($(NVCC),)
$(error CUDA=1 but nvcc is not on PATH (set NVCC=/path/to/nvcc, or CUDA=0 for a build without GPU calibration))
endif
CUDA_SMS_BUILT := $(filter $(CUDA_SMS),$(patsubst sm_%,%,$(shell $(NVCC) --list-gpu-code 2>/dev/null)))
CUDA_ARCH ?= $(foreach s,$(CUDA_SMS_BUILT),-gencode arch=compute_$(s),code=sm_$(s)) \
             -gencode arch=compute_$(lastword $(CUDA_SMS_BUILT)),code=compute_$(lastword $(CUDA_SMS_BUILT))
GPU_HELPER := $(BUILD)/memplan-gpu
GPU_HELPER_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublasLt -lcublas -lcudart_static -ldl -lrt \
                   -lpthread -lstdc++ -lm
endif
NVCCFLAGS ?= -O3 -std=c++17 -lineinfo $(CUDA_ARCH) -Xcompiler -Wall,-Wextra --Werror all-warnings

$(BUILD)/kernels/%.o: kernels/%.cu
	@mkdir -p $(dir $@)
	$(Q_NVCC)$(NVCC) $(NVCCFLAGS) -MMD -MP -c -o $@ $<
$(BUILD)/kernels/calib_cpu.o: BUILD_CFLAGS += $(OPENBLAS_CFLAGS)

# The helper: the CUDA suites, the message framing and the shared statistics; nothing of the daemon.
$(BUILD)/memplan-gpu: $(call obj,kernels/gpu_helper.c kernels/calib_ipc.c kernels/calib_common.c) \
		$(BUILD)/kernels/calib_gpu.o $(BUILD)/libplanner.a $(BUILD)/libcore.a
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(GPU_HELPER_LIBS)

# Rewritten only when the mode changes (written by a recipe, never while the Makefile is read).
$(BUILD)/gen/cuda_mode.c: FORCE
	@mkdir -p $(dir $@)
	@echo 'const int mp_calib_cuda_build = $(CUDA_ON);' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
.PHONY: FORCE
FORCE:

# ----- generated sources ------------------------------------------------------------------------------------
MODEL_PRESETS := $(sort $(wildcard db/presets/models/*.json))

$(BUILD)/tools/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(Q_LD)$(CC) $(ALL_CFLAGS) -Icore -o $@ $<

$(BUILD)/gen/openapi.c: $(BUILD)/tools/embed openapi.yaml
	@mkdir -p $(dir $@)
	$(Q_GEN)$(BUILD)/tools/embed $@ mpd_openapi_files openapi.yaml

# The web page served at / (web/README.md): static files, embedded as they are (no build step).
WEB_FILES := web/index.html web/style.css web/app.js
$(BUILD)/gen/web.c: $(BUILD)/tools/embed $(WEB_FILES)
	@mkdir -p $(dir $@)
	$(Q_GEN)$(BUILD)/tools/embed $@ mpd_web_files $(WEB_FILES)

# The presets, decoded at build time by the API's own device decoder and the model readers (a preset the API
# would refuse fails the build): structs the store takes, no JSON at run time.
$(BUILD)/tools/gen_presets: $(call obj,tools/gen_presets.c) $(BUILD)/libcodec.a $(BUILD)/libmodel.a \
		$(BUILD)/libplanner.a $(BUILD)/libcore.a
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ -lcjson -lm
$(BUILD)/gen/presets.c: $(BUILD)/tools/gen_presets db/presets/devices.json db/presets/model_repo_ids.json $(MODEL_PRESETS)
	@mkdir -p $(dir $@)
	$(Q_GEN)$(BUILD)/tools/gen_presets $@ db/presets/devices.json --repo-ids db/presets/model_repo_ids.json \
		$(MODEL_PRESETS)

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	$(Q_CC)$(CC) $(ALL_CFLAGS) -Icore -Iservice -c -o $@ $<

# ----- archives: one per folder ------------------------------------------------------------------------------
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(Q_CC)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/libcore.a: $(call obj,$(CORE_SRC))
$(BUILD)/libplanner.a: $(call obj,$(PLANNER_SRC))
$(BUILD)/libmodel.a: $(call obj,$(MODEL_SRC))
$(BUILD)/libdb.a: $(call obj,$(DB_SRC))
$(BUILD)/libkernels.a: $(call obj,$(KERNELS_SRC)) $(BUILD)/gen/cuda_mode.o
$(BUILD)/libservice.a: $(call obj,$(SERVICE_SRC)) $(BUILD)/gen/presets.o
$(BUILD)/libcodec.a: $(call obj,$(CODEC_SRC))
$(BUILD)/libdaemon.a: $(call obj,$(DAEMON_SRC)) $(BUILD)/gen/openapi.o $(BUILD)/gen/web.o
$(BUILD)/lib%.a:
	@mkdir -p $(dir $@)
	@rm -f $@
	$(Q_AR)$(AR) rcs $@ $^

# Each archive with those it needs, in link order; LIBS_<layer> are the system libraries each one adds.
lib = $(BUILD)/lib$(1).a
STACK_daemon  := daemon codec service kernels db model planner core
STACK_codec   := codec service kernels db model planner core
STACK_service := service kernels db model planner core
STACK_model   := model planner core
STACK_db      := db planner core
STACK_planner := planner core
SYS_LIBS := -lmicrohttpd -lcjson -lyajl -lsqlite3 -lpthread -lm $(KERNELS_LIBS)

# ----- the program --------------------------------------------------------------------------------------------
.PHONY: groundtruth all run test check deps deps-build clean lint contract browser asan fuzz fuzz-build fuzz-smoke \
        fuzz-contract bench-load bench-training bench-plan bench-store bench-k8s bench-engine bench-fidelity bench-startup bench-fit-memory \
        bench-attack \
        clean-clone-check
all: $(BUILD)/memplan $(GPU_HELPER)

$(BUILD)/memplan: $(call obj,$(CLI_SRC)) $(foreach l,$(STACK_daemon),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(SYS_LIBS)

# the Debian packages each goal needs (scripts/install-deps: build, test, dev sets)
deps:
	@./scripts/install-deps build test
deps-build:
	@./scripts/install-deps build

# ----- tests --------------------------------------------------------------------------------------------------
# One pattern links every test: tests/<name>.c, the helpers TEST_HELPERS_<name> and the archives of the layer it
# tests (TEST_STACK_<name>). The planner test links the planner alone: it needs no JSON, store or HTTP library.
TESTS := test_planner test_engine test_models test_store test_http test_roofline test_training test_inference test_store_http \
         test_k8s test_store_proc test_calib test_limits test_respcache test_golden test_codec test_engine_check \
         test_answers test_fidelity test_hardening test_attack
HTTP_HELPERS := tests/http_util.c tests/refs.c tests/lib_util.c
TEST_STACK_test_planner   := planner
TEST_HELPERS_test_planner :=
TEST_LIBS_test_planner    := -lm
TEST_STACK_test_engine    := planner
TEST_HELPERS_test_engine  :=
TEST_LIBS_test_engine     := -lm
TEST_STACK_test_models    := codec
TEST_HELPERS_test_models  := tests/refs.c
TEST_STACK_test_training  := codec
TEST_HELPERS_test_training := tests/refs.c
TEST_STACK_test_fidelity  := codec
TEST_HELPERS_test_fidelity := tests/refs.c
TEST_STACK_test_codec     := codec
TEST_HELPERS_test_codec   := tests/refs.c tests/lib_util.c
TEST_LIBS_test_codec      := -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
TEST_STACK_test_engine_check := codec
TEST_HELPERS_test_engine_check := tests/refs.c
TEST_STACK_test_store     := service
TEST_HELPERS_test_store   := tests/refs.c
TEST_STACK_test_store_proc := service
TEST_HELPERS_test_store_proc := tests/refs.c
TEST_LIBS_test_store_proc := -lcurl
TEST_HELPERS_test_respcache :=

test_stack   = $(or $(TEST_STACK_$(1)),daemon)
test_helpers = $(if $(filter undefined,$(origin TEST_HELPERS_$(1))),$(HTTP_HELPERS),$(TEST_HELPERS_$(1)))
test_libs    = $(TEST_LIBS_$(1)) $(if $(filter daemon,$(call test_stack,$(1))),-lcurl) \
               $(if $(filter planner,$(call test_stack,$(1))),,$(SYS_LIBS))

# test_roofline parses the roofline SVG with libxml2 (its own flags, so a CFLAGS given on the command line keeps them).
XML_CFLAGS = $(shell pkg-config --cflags libxml-2.0)
XML_LIBS   = $(shell pkg-config --libs libxml-2.0)
$(BUILD)/tests/test_roofline.o: BUILD_CFLAGS += $(XML_CFLAGS)
TEST_LIBS_test_roofline := $(XML_LIBS)

.SECONDEXPANSION:
$(BUILD)/tests/%: $(BUILD)/tests/%.o $$(call obj,$$(call test_helpers,$$*)) \
		$$(foreach l,$$(STACK_$$(call test_stack,$$*)),$$(call lib,$$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ -lcmocka $(call test_libs,$*)

# test_calib drives the GPU client against a fake helper that speaks the protocol with canned answers (every
# build), and against the real one where the build has it; both paths are compiled in, so a test binary run by
# hand finds them too.
$(BUILD)/tests/fake_gpu_helper: $(call obj,tests/fake_gpu_helper.c kernels/calib_ipc.c) $(BUILD)/libcore.a
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^
$(BUILD)/tests/test_calib.o: BUILD_CFLAGS += -DMP_TEST_FAKE_GPU_HELPER='"$(BUILD)/tests/fake_gpu_helper"' \
	-DMP_TEST_GPU_HELPER='"$(BUILD)/memplan-gpu"'
$(BUILD)/tests/test_calib: | $(BUILD)/tests/fake_gpu_helper $(GPU_HELPER)

TEST_BINS := $(addprefix $(BUILD)/tests/,$(TESTS))

# The preload library that makes the disk look full for a spawned daemon (tests/full_disk.c, test_store_proc).
# Built without the sanitizers: it is preloaded into another program.
$(BUILD)/tests/libfull_disk.so: tests/full_disk.c
	@mkdir -p $(dir $@)
	$(Q_LD)$(CC) -std=c11 -O1 -g -fPIC -shared -Wall -Wextra -Werror -o $@ $< -ldl
$(BUILD)/tests/test_store_proc: | $(BUILD)/tests/libfull_disk.so

# Every response the C HTTP tests receive is logged to HTTP_LOG; `contract` validates each against openapi.yaml.
HTTP_LOG := $(abspath $(BUILD))/http-exchanges.jsonl

# The C tests (unit, golden, store, HTTP) and the lints: the quick tier.
# the benchmarks are built (not run) by check, so they cannot rot
BENCH_BINS := $(BUILD)/bench/training_h200 $(BUILD)/bench/bench_fit $(BUILD)/bench/bench_plan $(BUILD)/bench/bench_k8s $(BUILD)/bench/bench_engine $(BUILD)/bench/fidelity $(BUILD)/bench/startup
check:
	@$(MAKE) --no-print-directory $(TEST_BINS) $(BENCH_BINS) $(BUILD)/memplan $(GPU_HELPER)
	@rm -f $(HTTP_LOG)
	@set -e; for t in $(TEST_BINS); do echo "== $$t"; MEMPLAN_BIN=$(BUILD)/memplan MEMPLAN_TEST_LIB_DIR=$(BUILD)/tests MEMPLAN_HTTP_LOG=$(HTTP_LOG) $(if $(GPU_HELPER),MEMPLAN_GPU_HELPER=$(GPU_HELPER)) $$t; done
	@echo "== tests/lint_sql.sh"; sh tests/lint_sql.sh
	@echo "== tests/lint_layers.sh"; sh tests/lint_layers.sh
	@echo "== tests/slurm/run.sh"; sh tests/slurm/run.sh $(BUILD)/memplan

# Everything: the quick tier, then the contract tests (spec, schemas, Schemathesis, promtool, valgrind) and a
# short fuzz run.
test: deps
	@$(MAKE) --no-print-directory check
	@$(MAKE) --no-print-directory contract
	@$(MAKE) --no-print-directory browser
	@$(MAKE) --no-print-directory fuzz-smoke

# ----- contract tests (Python, in .venv from the pinned tests/contract/requirements.txt) ---------------------
VENV := .venv
$(VENV)/.installed: tests/contract/requirements.txt
	@test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r tests/contract/requirements.txt
	@touch $@

# spec validation, routes vs spec, logged responses vs schemas, lifecycle, promtool, valgrind, the README's
# examples, Schemathesis (MEMPLAN_ST_EXAMPLES per operation, 25 here; make fuzz runs ST_FUZZ_EXAMPLES)
contract: $(VENV)/.installed all
	MEMPLAN_BIN=$(abspath $(BUILD)/memplan) MEMPLAN_HTTP_LOG=$(HTTP_LOG) $(VENV)/bin/pytest -q -p no:cacheprovider \
		tests/contract

# ----- the web page in a real browser: headless Chromium driven by Selenium (tests/browser); skips, saying why,
# where Chromium cannot start. Screenshots of the page and the charts go to $(BUILD)/browser/ for people to look at.
browser: $(VENV)/.installed $(BUILD)/memplan
	MEMPLAN_BIN=$(abspath $(BUILD)/memplan) MEMPLAN_SCREENSHOT_DIR=$(abspath $(BUILD))/browser \
		$(VENV)/bin/pytest -q -rs -p no:cacheprovider tests/browser

# ----- sanitizers: the whole suite under ASan + UBSan, in its own build folder ----------------------------------
ASAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
asan: deps
	MEMPLAN_SANITIZED=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		$(MAKE) --no-print-directory CC=clang CUDA=0 BUILD=build/asan SAN_FLAGS="$(ASAN_FLAGS)" test

# ----- fuzzing (libFuzzer, clang) ------------------------------------------------------------------------------
FUZZERS      := plan hf_config k8s engine_log
FUZZ_BUILD   := build/fuzz
FUZZ_SECONDS ?= 60
SMOKE_SECONDS ?= 10
FUZZ_SAN     := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all

$(BUILD)/fuzz_plan: $(call obj,fuzz/fuzz_plan.c tests/lib_util.c) $(foreach l,$(STACK_codec),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(SYS_LIBS)
$(BUILD)/fuzz_engine_log: $(call obj,fuzz/fuzz_engine_log.c) $(foreach l,$(STACK_codec),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(SYS_LIBS)
$(BUILD)/fuzz_hf_config: $(call obj,fuzz/fuzz_hf_config.c) $(foreach l,$(STACK_model),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $^ -lcjson -lm
$(BUILD)/fuzz_k8s: $(call obj,fuzz/fuzz_k8s.c) $(foreach l,$(STACK_codec),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(SYS_LIBS)

fuzz-build:
	@$(MAKE) --no-print-directory CC=clang CUDA=0 BUILD=$(FUZZ_BUILD) SAN_FLAGS="$(FUZZ_SAN)" \
		$(addprefix $(FUZZ_BUILD)/fuzz_,$(FUZZERS))

# The longer runs: each libFuzzer harness FUZZ_SECONDS, then Schemathesis with ST_FUZZ_EXAMPLES per operation.
ST_FUZZ_EXAMPLES ?= 300
fuzz: fuzz-build
	@set -e; for f in $(FUZZERS); do ./fuzz/run.sh $$f $(FUZZ_SECONDS) $(FUZZ_BUILD); done
	@$(MAKE) --no-print-directory fuzz-contract

fuzz-contract: $(VENV)/.installed all
	MEMPLAN_ST_EXAMPLES=$(ST_FUZZ_EXAMPLES) MEMPLAN_BIN=$(abspath $(BUILD)/memplan) $(VENV)/bin/pytest -q \
		-p no:cacheprovider tests/contract/test_schemathesis.py

fuzz-smoke: fuzz-build
	@set -e; for f in $(FUZZERS); do ./fuzz/run.sh $$f $(SMOKE_SECONDS) $(FUZZ_BUILD); done

# ----- benchmarks: print figures (bench/RESULTS.md); not part of make test -----------------------------------------
$(BUILD)/bench/training_h200: $(call obj,bench/training_h200.c) $(foreach l,$(STACK_codec),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ $(SYS_LIBS)
# Prints the training planner against the H200 measurements (the table in bench/RESULTS.md).
bench-training: $(BUILD)/bench/training_h200
	$(BUILD)/bench/training_h200
# Prints what the issue-15 mechanisms put into the peaks of the cases the held-back H200 rows missed.
$(BUILD)/bench/fidelity: $(call obj,bench/fidelity.c) $(foreach l,$(STACK_codec),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ $(SYS_LIBS)
bench-fidelity: $(BUILD)/bench/fidelity
	$(BUILD)/bench/fidelity

$(BUILD)/bench/bench_fit: $(call obj,bench/bench_fit.c tests/http_util.c) $(foreach l,$(STACK_daemon),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ -lcurl $(SYS_LIBS)
bench-store: $(BUILD)/bench/bench_fit
	$(BUILD)/bench/bench_fit
# The kube-scheduler extender with NODES Node objects (default 5,000) of kube-scheduler's size.
$(BUILD)/bench/bench_k8s: $(call obj,bench/bench_k8s.c tests/http_util.c) $(foreach l,$(STACK_daemon),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ -lcurl $(SYS_LIBS)
bench-k8s: $(BUILD)/bench/bench_k8s
	$(BUILD)/bench/bench_k8s $(NODES)
# Peak RSS of the daemon for the largest fit it takes, alone and CONCURRENT at once (bench/load/fit_rss.sh).
bench-fit-memory: $(BUILD)/memplan
	MEMPLAN_BIN=$(BUILD)/memplan ./bench/load/fit_rss.sh $(CONCURRENT)
# The plan endpoint's cost without HTTP (profile it: valgrind --tool=callgrind build/bench/bench_plan 5000).
$(BUILD)/bench/bench_plan: $(call obj,bench/bench_plan.c) $(foreach l,$(STACK_codec),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ $(SYS_LIBS)
bench-plan: $(BUILD)/bench/bench_plan
	$(BUILD)/bench/bench_plan $(N)
# The engine-check figures of the real logs in tests/data/engines, and the log reader's cost.
$(BUILD)/bench/bench_engine: $(call obj,bench/bench_engine.c) $(foreach l,$(STACK_codec),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ $(SYS_LIBS)
bench-engine: $(BUILD)/bench/bench_engine
	$(BUILD)/bench/bench_engine
# Start-up CPU time and idle memory of the CUDA build and the CUDA=0 build, side by side (bench/startup.sh).
$(BUILD)/bench/startup: $(call obj,bench/startup.c)
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ -lcurl
bench-startup:
	./bench/startup.sh $(RUNS)

# Every attack of issue 30 against the daemon, bounded, on loopback (bench/attack/attack.py; SECONDS per slow and busy
# attack, default 30; ATTACKS to pick cases); --check says whether the issue's targets held.
bench-attack: $(BUILD)/memplan
	python3 bench/attack/attack.py --check --bin $(BUILD)/memplan --seconds $(or $(SECONDS),30) $(ATTACKS)

# ----- load benchmark (wrk): prints figures for bench/RESULTS.md; not part of make test ---------------------------
bench-load: $(BUILD)/memplan
	MEMPLAN_BIN=$(BUILD)/memplan ./bench/load/run.sh $(DURATION)

# ----- ground truth of the model readers (tools/groundtruth; by hand, not part of make test) --------------------
GT_VENV := tools/groundtruth/.venv
$(GT_VENV)/.installed: tools/groundtruth/requirements.txt
	@test -x $(GT_VENV)/bin/python || python3 -m venv $(GT_VENV)
	$(GT_VENV)/bin/pip install -q --disable-pip-version-check -r tools/groundtruth/requirements.txt
	@touch $@
groundtruth: $(GT_VENV)/.installed
	$(GT_VENV)/bin/python tools/groundtruth/generate.py

run: deps-build
	@$(MAKE) --no-print-directory all
	$(BUILD)/memplan serve --listen $(LISTEN) --db $(DB)

clean:
	rm -rf $(BUILD)

# A clone of this commit in an empty temporary folder, nothing beside it, and `make test` there (.ci/run).
clean-clone-check:
	./scripts/clean-clone-check

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# ----- lint: banned functions, the direction of includes, cppcheck, clang-format drift (report only) ----------------
LINT_SRC = $(CORE_SRC) $(PLANNER_SRC) $(MODEL_SRC) $(DB_SRC) $(KERNELS_SRC) $(SERVICE_SRC) $(CODEC_SRC) \
           $(DAEMON_SRC) $(CLI_SRC) kernels/gpu_helper.c tools/*.c fuzz/*.c tests/*.c bench/*.c
lint:
	@echo "== banned functions (strcpy strcat sprintf vsprintf atoi atol strtok gets)"
	@! grep -nE '\b(strcpy|strcat|sprintf|vsprintf|atoi|atol|strtok|gets)[[:space:]]*\(' $(LINT_SRC) | \
		grep -vE '\b(snprintf|vsnprintf)\b' || { echo "banned function used"; exit 1; }
	@echo "== the direction of includes (tests/lint_layers.sh)"
	@sh tests/lint_layers.sh
	@echo "== cppcheck"
	@# suppressed, each a false positive here: invalidPointerCast (fields.c writes fields through their table
	@# offset), ctuuninitvar (an error struct passed down to be filled), nullPointerArithmeticRedundantCheck
	@# (a `p && (p = strstr(..))` loop)
	cppcheck --quiet --error-exitcode=1 --std=c11 --enable=warning,portability --inline-suppr \
		--suppress=missingIncludeSystem --suppress=invalidPointerCast --suppress=ctuuninitvar \
		--suppress=nullPointerArithmeticRedundantCheck -D__GNUC__ $(addprefix -I ,$(LAYERS)) $(LINT_SRC)
	@echo "== clang-format (files that differ from .clang-format; not an error)"
	@for f in $(LINT_SRC); do clang-format --dry-run $$f 2>&1 | grep -q warning && echo "  $$f" || true; done
	@echo "lint: ok"
