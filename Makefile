# memplan: the developer interface. `make` builds build/memplan; `make run` installs what is missing,
# builds and starts the daemon on 127.0.0.1:8080; `make test` runs every test. Objects go under build/.

CC      ?= cc
CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Wall -Wextra -Werror -MMD -MP
CFLAGS  += $(SAN_FLAGS)
LDLIBS  := -lmicrohttpd -lcjson -lsqlite3 -lpthread -lm
BUILD   := build
# `make V=1` prints every command; by default each step prints one short line.
V       ?= 0
ifeq ($(V),0)
Q_CC    = @echo "  CC      $@";
Q_LD    = @echo "  LINK    $@";
Q_GEN   = @echo "  GEN     $@";
Q_NVCC  = @echo "  NVCC    $@";
endif
SHARED  ?= ../shared
LISTEN  ?= 127.0.0.1:8080
DB      ?= var/memplan.db

PLANNER_SRC := planner/core.c planner/model.c planner/device.c planner/inference.c planner/training.c
PLANNER_SRC += planner/roofline.c planner/step.c
PLANNER_SRC += planner/activations.c
PLANNER_SRC += planner/weights.c planner/kv.c planner/workspace.c
DB_SRC      := db/store.c
KERNELS_SRC := kernels/calib_common.c kernels/calib_cpu.c
DAEMON_SRC  := daemon/hf_config.c daemon/decode.c daemon/reply.c daemon/routes.c daemon/server.c \
               daemon/query.c daemon/plan.c daemon/plan_inference.c daemon/plan_training.c daemon/h_health.c daemon/h_devices.c daemon/h_models.c \
               daemon/h_plan.c
DAEMON_SRC  += daemon/roofline_doc.c daemon/svg.c daemon/h_roofline.c daemon/roofline_cli.c
DAEMON_SRC  += daemon/train_config.c
DAEMON_SRC  += daemon/auth.c daemon/store_json.c daemon/h_fit.c daemon/h_capacity.c
DAEMON_SRC  += daemon/calib_jobs.c daemon/calib_doc.c daemon/h_calibrations.c
DAEMON_SRC  += daemon/metrics.c daemon/log.c daemon/config.c daemon/respcache.c
MAIN_SRC    := daemon/main.c

GEN_SRC     := $(BUILD)/gen/presets.c $(BUILD)/gen/openapi.c

# ----- calibration kernels (kernels/, issue #7) -----------------------------------------------------------
# CUDA=auto (default) builds the CUDA kernels when nvcc is found, else the stub that answers 501 "not built
# in"; CUDA=1 insists on nvcc; CUDA=0 forces the stub. A CUDA build runs without a GPU (503 with the reason).
# sm_90 machine code plus compute_90 PTX, which the driver compiles for newer GPUs. The CPU path (pthreads +
# OpenBLAS) is in every build. build/gen/cuda_mode.c changes with the mode, so switching relinks.
CUDA      ?= auto
NVCC      ?= $(shell command -v nvcc 2>/dev/null)
CUDA_ON   := $(if $(filter auto,$(CUDA)),$(if $(NVCC),1,0),$(if $(filter 0,$(CUDA)),0,1))
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
CUDA_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
NVCCFLAGS ?= -O3 -std=c++17 -lineinfo $(CUDA_ARCH) -Xcompiler -Wall,-Wextra --Werror all-warnings
OPENBLAS_CFLAGS := $(shell pkg-config --cflags openblas 2>/dev/null)
OPENBLAS_LIBS   := $(or $(shell pkg-config --libs openblas 2>/dev/null),-lopenblas)
KERNELS_LIBS    := $(OPENBLAS_LIBS)
ifeq ($(CUDA_ON),1)
ifeq ($(NVCC),)
$(error CUDA=1 but nvcc is not on PATH (set NVCC=/path/to/nvcc, or CUDA=0 for the stub))
endif
CUDA_OBJ     := $(BUILD)/kernels/calib_gpu.o
KERNELS_LIBS += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublasLt -lcublas -lcudart_static -ldl -lrt \
                -lstdc++
else
CUDA_OBJ     := $(BUILD)/kernels/calib_stub.o
endif
CUDA_OBJ     += $(BUILD)/gen/cuda_mode.o
LDLIBS       += $(KERNELS_LIBS)
$(shell mkdir -p $(BUILD)/gen && echo 'const int mp_calib_cuda_build = $(CUDA_ON);' > $(BUILD)/gen/cuda_mode.tmp && \
	(cmp -s $(BUILD)/gen/cuda_mode.tmp $(BUILD)/gen/cuda_mode.c || mv $(BUILD)/gen/cuda_mode.tmp $(BUILD)/gen/cuda_mode.c))

$(BUILD)/kernels/%.o: kernels/%.cu
	@mkdir -p $(dir $@)
	$(Q_NVCC)$(NVCC) $(NVCCFLAGS) -MMD -MP -c -o $@ $<
$(BUILD)/kernels/calib_cpu.o: CFLAGS += $(OPENBLAS_CFLAGS)

MODEL_PRESETS := $(sort $(wildcard db/presets/models/*.json))

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))
PLANNER_OBJ := $(call obj,$(PLANNER_SRC))
DB_OBJ      := $(call obj,$(DB_SRC)) $(BUILD)/gen/presets.o
KERNELS_OBJ := $(call obj,$(KERNELS_SRC)) $(CUDA_OBJ)
DAEMON_OBJ  := $(call obj,$(DAEMON_SRC)) $(BUILD)/gen/openapi.o
CORE_OBJ    := $(DAEMON_OBJ) $(DB_OBJ) $(KERNELS_OBJ) $(PLANNER_OBJ)

TESTS := $(BUILD)/tests/test_planner $(BUILD)/tests/test_models $(BUILD)/tests/test_store $(BUILD)/tests/test_http
TESTS += $(BUILD)/tests/test_roofline
TESTS += $(BUILD)/tests/test_training
TESTS += $(BUILD)/tests/test_inference
TESTS += $(BUILD)/tests/test_store_http $(BUILD)/tests/test_store_proc
TESTS += $(BUILD)/tests/test_calib

TESTS += $(BUILD)/tests/test_limits
TESTS += $(BUILD)/tests/test_respcache
TESTS += $(BUILD)/tests/test_golden

.PHONY: all run test deps clean lint contract asan fuzz fuzz-build fuzz-smoke bench-load bench-training
all: $(BUILD)/memplan

deps:
	@./scripts/install-deps

$(BUILD)/memplan: $(call obj,$(MAIN_SRC)) $(CORE_OBJ)
	$(Q_LD)$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(Q_CC)$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	$(Q_CC)$(CC) $(CFLAGS) -Idb -c -o $@ $<

$(BUILD)/tools/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(Q_LD)$(CC) $(CFLAGS) -o $@ $<

$(BUILD)/gen/presets.c: $(BUILD)/tools/embed db/presets/devices.json $(MODEL_PRESETS)
	@mkdir -p $(dir $@)
	$(Q_GEN)$(BUILD)/tools/embed $@ mp_store_device_presets db/presets/devices.json \
		-- mp_store_model_presets $(MODEL_PRESETS)

$(BUILD)/gen/openapi.c: $(BUILD)/tools/embed openapi.yaml
	@mkdir -p $(dir $@)
	$(Q_GEN)$(BUILD)/tools/embed $@ mpd_openapi_files openapi.yaml

# Tests. test_planner links only planner objects (plus cJSON to read the reference files): the planner
# needs no daemon, store or HTTP library.
$(BUILD)/tests/test_planner: $(call obj,tests/test_planner.c tests/refs.c) $(PLANNER_OBJ)
	$(Q_LD)$(CC) $(CFLAGS) -o $@ $^ -lcmocka -lcjson -lm
$(BUILD)/tests/test_models: $(call obj,tests/test_models.c tests/refs.c daemon/hf_config.c daemon/decode.c) $(PLANNER_OBJ)
	$(Q_LD)$(CC) $(CFLAGS) -o $@ $^ -lcmocka -lcjson -lm
$(BUILD)/tests/test_store: $(call obj,tests/test_store.c tests/refs.c) $(CORE_OBJ)
	$(Q_LD)$(CC) $(CFLAGS) -o $@ $^ -lcmocka $(LDLIBS)
$(BUILD)/tests/test_http: $(call obj,tests/test_http.c tests/http_util.c tests/refs.c) $(CORE_OBJ)
	$(Q_LD)$(CC) $(CFLAGS) -o $@ $^ -lcmocka -lcurl $(LDLIBS)
$(BUILD)/tests/test_inference: $(call obj,tests/test_inference.c tests/http_util.c tests/refs.c) $(CORE_OBJ)
	$(Q_LD)$(CC) $(CFLAGS) -o $@ $^ -lcmocka -lcurl $(LDLIBS)

# test_roofline parses the roofline SVG with libxml2 (its own flags, so a CFLAGS given on the command line keeps them).
XML_CFLAGS = $(shell pkg-config --cflags libxml-2.0)
XML_LIBS   = $(shell pkg-config --libs libxml-2.0)
$(BUILD)/tests/test_roofline.o: tests/test_roofline.c
	@mkdir -p $(dir $@)
	$(Q_CC)$(CC) $(CFLAGS) $(XML_CFLAGS) -c -o $@ $<
$(BUILD)/tests/test_roofline: $(call obj,tests/test_roofline.c tests/http_util.c tests/refs.c) $(CORE_OBJ)
	$(Q_LD)$(CC) $(CFLAGS) -o $@ $^ -lcmocka -lcurl $(XML_LIBS) $(LDLIBS)
$(BUILD)/tests/test_training: $(call obj,tests/test_training.c tests/refs.c daemon/hf_config.c daemon/decode.c daemon/train_config.c) $(PLANNER_OBJ)
	$(Q_LD)$(CC) $(CFLAGS) -o $@ $^ -lcmocka -lcjson -lm
$(BUILD)/bench/training_h200: $(call obj,bench/training_h200.c daemon/hf_config.c daemon/decode.c daemon/train_config.c) $(PLANNER_OBJ)
	$(Q_LD)$(CC) $(CFLAGS) -o $@ $^ -lcjson -lm

# Prints the training planner against the H200 measurements (the table in bench/RESULTS.md).
bench-training: $(BUILD)/bench/training_h200
	$(BUILD)/bench/training_h200 $(SHARED)

$(BUILD)/tests/test_store_http: $(call obj,tests/test_store_http.c tests/http_util.c tests/refs.c) $(CORE_OBJ)
	$(Q_LD)$(CC) $(CFLAGS) -o $@ $^ -lcmocka -lcurl $(LDLIBS)
$(BUILD)/tests/test_store_proc: $(call obj,tests/test_store_proc.c tests/refs.c) $(CORE_OBJ)
	$(Q_LD)$(CC) $(CFLAGS) -o $@ $^ -lcmocka -lcurl $(LDLIBS)

# Benchmarks print figures (bench/RESULTS.md); not part of make test.
$(BUILD)/bench/bench_fit: $(call obj,bench/bench_fit.c tests/http_util.c) $(CORE_OBJ)
	$(Q_LD)$(CC) $(CFLAGS) -o $@ $^ -lcurl $(LDLIBS)
.PHONY: bench-store
bench-store: $(BUILD)/bench/bench_fit
	$(BUILD)/bench/bench_fit
# The plan endpoint's cost without HTTP (profile it: valgrind --tool=callgrind build/bench/bench_plan 5000).
$(BUILD)/bench/bench_plan: $(call obj,bench/bench_plan.c) $(CORE_OBJ)
	$(Q_LD)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)
.PHONY: bench-plan
bench-plan: $(BUILD)/bench/bench_plan
	$(BUILD)/bench/bench_plan $(N)
$(BUILD)/tests/test_calib: $(call obj,tests/test_calib.c tests/http_util.c tests/refs.c) $(CORE_OBJ)
	$(Q_LD)$(CC) $(CFLAGS) -o $@ $^ -lcmocka -lcurl $(LDLIBS)

$(BUILD)/tests/test_limits: $(call obj,tests/test_limits.c tests/http_util.c tests/refs.c) $(CORE_OBJ)
	$(Q_LD)$(CC) $(CFLAGS) -o $@ $^ -lcmocka -lcurl $(LDLIBS)

$(BUILD)/tests/test_golden: $(call obj,tests/test_golden.c tests/http_util.c tests/refs.c) $(CORE_OBJ)
	$(Q_LD)$(CC) $(CFLAGS) -o $@ $^ -lcmocka -lcurl $(LDLIBS)

$(BUILD)/tests/test_respcache: $(call obj,tests/test_respcache.c daemon/respcache.c)
	$(Q_LD)$(CC) $(CFLAGS) -o $@ $^ -lcmocka -lpthread

# Every response the C HTTP tests receive is logged to HTTP_LOG; `contract` validates each against openapi.yaml.
HTTP_LOG := $(abspath $(BUILD))/http-exchanges.jsonl

test: deps
	@$(MAKE) --no-print-directory $(TESTS) $(BUILD)/memplan
	@rm -f $(HTTP_LOG)
	@set -e; for t in $(TESTS); do echo "== $$t"; MEMPLAN_SHARED=$(SHARED) MEMPLAN_BIN=$(BUILD)/memplan \
		MEMPLAN_HTTP_LOG=$(HTTP_LOG) $$t; done
	@echo "== tests/lint_sql.sh"; sh tests/lint_sql.sh
	@$(MAKE) --no-print-directory contract
	@$(MAKE) --no-print-directory fuzz-smoke

# ----- contract tests (Python, in .venv from the pinned tests/contract/requirements.txt) ---------------------
VENV := .venv
$(VENV)/.installed: tests/contract/requirements.txt
	@test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r tests/contract/requirements.txt
	@touch $@

# spec validation, routes vs spec, logged responses vs schemas, lifecycle, promtool, valgrind, Schemathesis
contract: $(VENV)/.installed $(BUILD)/memplan
	MEMPLAN_BIN=$(abspath $(BUILD)/memplan) MEMPLAN_HTTP_LOG=$(HTTP_LOG) $(VENV)/bin/pytest -q -p no:cacheprovider \
		tests/contract

# ----- sanitizers: the whole suite under ASan + UBSan, in its own build folder ----------------------------------
ASAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
asan: deps
	MEMPLAN_SANITIZED=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		$(MAKE) --no-print-directory CC=clang CUDA=0 BUILD=build/asan SAN_FLAGS="$(ASAN_FLAGS)" test

# ----- fuzzing (libFuzzer, clang) ------------------------------------------------------------------------------
FUZZERS      := plan hf_config
FUZZ_BUILD   := build/fuzz
FUZZ_SECONDS ?= 60
SMOKE_SECONDS ?= 10
FUZZ_SAN     := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all

$(BUILD)/fuzz_plan: $(call obj,fuzz/fuzz_plan.c) $(DAEMON_OBJ) $(DB_OBJ) $(KERNELS_OBJ) $(PLANNER_OBJ)
	$(Q_LD)$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)
$(BUILD)/fuzz_hf_config: $(call obj,fuzz/fuzz_hf_config.c daemon/hf_config.c daemon/decode.c) $(PLANNER_OBJ)
	$(Q_LD)$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $^ -lcjson -lm

fuzz-build:
	@$(MAKE) --no-print-directory CC=clang CUDA=0 BUILD=$(FUZZ_BUILD) SAN_FLAGS="$(FUZZ_SAN)" \
		$(addprefix $(FUZZ_BUILD)/fuzz_,$(FUZZERS))

fuzz: fuzz-build
	@set -e; for f in $(FUZZERS); do ./fuzz/run.sh $$f $(FUZZ_SECONDS) $(FUZZ_BUILD); done

fuzz-smoke: fuzz-build
	@set -e; for f in $(FUZZERS); do ./fuzz/run.sh $$f $(SMOKE_SECONDS) $(FUZZ_BUILD); done

run: deps
	@$(MAKE) --no-print-directory $(BUILD)/memplan
	$(BUILD)/memplan serve --listen $(LISTEN) --db $(DB)

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# ----- lint: banned functions, cppcheck, clang-format drift (report only) -----------------------------------------
LINT_SRC = $(PLANNER_SRC) $(DB_SRC) $(KERNELS_SRC) $(DAEMON_SRC) $(MAIN_SRC) tools/embed.c fuzz/*.c tests/*.c
lint:
	@echo "== banned functions (strcpy strcat sprintf vsprintf atoi atol strtok gets)"
	@! grep -nE '\b(strcpy|strcat|sprintf|vsprintf|atoi|atol|strtok|gets)[[:space:]]*\(' $(LINT_SRC) | \
		grep -vE '\b(snprintf|vsnprintf)\b' || { echo "banned function used"; exit 1; }
	@echo "== cppcheck"
	@# suppressed, each a false positive here: invalidPointerCast (decode.c writes fields through their table
	@# offset), ctuuninitvar (an error struct passed down to be filled), nullPointerArithmeticRedundantCheck
	@# (a `p && (p = strstr(..))` loop)
	cppcheck --quiet --error-exitcode=1 --std=c11 --enable=warning,portability --inline-suppr \
		--suppress=missingIncludeSystem --suppress=invalidPointerCast --suppress=ctuuninitvar \
		--suppress=nullPointerArithmeticRedundantCheck -D__GNUC__ -I planner -I db -I daemon $(LINT_SRC)
	@echo "== clang-format (files that differ from .clang-format; not an error)"
	@for f in $(LINT_SRC); do clang-format --dry-run $$f 2>&1 | grep -q warning && echo "  $$f" || true; done
	@echo "lint: ok"

# ----- load benchmark (wrk): prints figures for bench/RESULTS.md; not part of make test ---------------------------
bench-load: $(BUILD)/memplan
	MEMPLAN_BIN=$(BUILD)/memplan ./bench/load/run.sh $(DURATION)
