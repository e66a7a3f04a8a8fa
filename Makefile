# memplan: the developer interface. `make` builds build/memplan (and, with nvcc, its GPU helper build/memplan-gpu);
# `make run` installs what building needs, builds and starts the daemon on 127.0.0.1:8080. Two tiers of tests:
# `make check` (C unit, golden, store and HTTP tests and the lints: under a minute) and `make test` (check, then
# the contract tests in a Python venv from PyPI, Schemathesis, promtool, valgrind, the README's examples and a
# short fuzz run). Objects go under build/.
#
# The house, one archive per folder, each depending only on those below it (tests/lint_layers.py checks what the
# compiler read and what each archive calls; the levels are in tests/layers.conf):
#   cli -> daemon -> codec -> service -> (types) -> model, db, kernels -> planner -> core.

CC      ?= cc
# CFLAGS is yours (make CFLAGS=-O0); the flags the build needs are in BUILD_CFLAGS and always apply.
CFLAGS  ?= -O2 -g
# Warnings are errors where the project tests itself (make check, test, asan, lint, the fuzz builds, and so CI),
# never in the user's `make` / `make run`: a newer compiler's new warning prints there and the build goes on.
# Every compile keeps what it printed in <object>.warnings; `make check` fails on any left by an earlier plain
# `make` too, so an object built without -Werror cannot slip a warning past it.
WERROR  ?=
ifneq ($(filter check test asan lint fuzz fuzz-build fuzz-smoke clean-clone-check,$(MAKECMDGOALS)),)
WERROR  := -Werror
endif
export WERROR
BUILD_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Wall -Wextra $(WERROR) -MD -MP $(SAN_FLAGS)
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
# $(call logged,command): runs a compile, keeping what it printed (warnings) in $@.warnings, removed when empty
logged  = $(1) 2>$@.warnings; rc=$$?; cat $@.warnings >&2; [ -s $@.warnings ] || rm -f $@.warnings; exit $$rc
# `make` alone builds the program (the first rule below would otherwise be the default goal)
.DEFAULT_GOAL := all
LISTEN  ?= 127.0.0.1:8080
DB      ?= var/memplan.db

# ----- the folders ------------------------------------------------------------------------------------------
CORE_SRC    := core/base.c
PLANNER_SRC := planner/core.c planner/model.c planner/device.c planner/inference.c planner/training.c \
               planner/roofline.c planner/step.c planner/activations.c planner/weights.c planner/kv.c \
               planner/workspace.c planner/recurrent.c planner/engine.c planner/sdpa.c planner/vision.c \
               planner/inventory.c planner/decoder.c planner/ggml.c planner/llamacpp.c
MODEL_SRC   := model/fields.c model/hf_keys.c model/hf_config.c model/hf_first.c model/hf_types.c model/hf_moe.c model/hf_wrap.c model/hf_wrap_qformer.c model/hf_wrap_vl.c model/hf_vq.c model/hf_hybrid.c \
               model/hf_gemma.c model/hf_deepseek4.c model/hf_classic.c model/hf_mllama.c model/hf_rows.c model/hf_recurrent.c model/hf_decoders.c model/hf_inkling.c model/hf_tensors.c model/hf_names.c model/hf_gemma3n_timm.c model/hf_fast_vlm_timm.c model/hf_perception_lm_timm.c model/mpm_types.c \
               model/train_config.c model/hf_facts.c model/gguf.c model/gguf_model.c model/tensor_names.c \
               model/safetensors.c model/gguf_llamacpp.c model/checkpoint.c
DB_SRC      := db/store.c
HUB_SRC     := hub/hfcache.c hub/hubclient.c hub/hubcache.c
KERNELS_SRC := kernels/calib_common.c kernels/calib_cpu.c kernels/calib_ipc.c kernels/calib_gpu_client.c
TYPES_SRC   := types/types.c
SERVICE_SRC := service/service.c service/mps_defaults.c service/mps_suggest.c service/mps_plan.c service/mps_fit.c service/mps_capacity.c \
               service/mps_roofline.c service/mps_calib.c service/mps_k8s.c service/mps_engine.c service/mps_engine_check.c service/mps_tensors.c \
               service/mps_nodes.c service/mps_observe.c service/mps_observe_evaluate.c service/mps_llamacpp.c \
               service/mps_llamacpp_check.c service/mps_hub.c
CODEC_SRC   := codec/mpc_json.c codec/mpc_problem.c codec/mpc_formats.c codec/mpc_model.c codec/mpc_device.c codec/mpc_inference.c \
               codec/mpc_training.c codec/mpc_fit.c codec/mpc_capacity.c codec/mpc_roofline.c codec/mpc_svg.c codec/mpc_text.c codec/mpc_human.c codec/mpc_help.c \
               codec/mpc_store.c codec/mpc_calib.c codec/mpc_k8s.c codec/mpc_k8s_stream.c codec/mpc_slurm.c codec/mpc_engine.c codec/mpc_engine_log.c codec/mpc_tensors.c codec/mpc_fleet.c \
               codec/mpc_llamacpp.c codec/mpc_llamacpp_log.c
DAEMON_SRC  := daemon/server.c daemon/routes.c daemon/reply.c daemon/query.c daemon/auth.c daemon/config.c \
               daemon/log.c daemon/metrics.c daemon/respcache.c daemon/guard.c daemon/framing.c daemon/budget.c daemon/lane.c daemon/accept.c daemon/h_health.c daemon/h_devices.c \
               daemon/h_models.c daemon/h_plan.c daemon/h_engine.c daemon/h_fit.c daemon/h_roofline.c daemon/h_calibrations.c \
               daemon/h_k8s.c daemon/h_slurm.c daemon/h_web.c daemon/h_nodes.c daemon/h_observations.c
CLI_SRC     := cli/cli_main.c cli/cli_common.c cli/cli_serve.c cli/cli_plan.c cli/cli_roofline.c cli/cli_calibrate.c cli/cli_db.c cli/cli_model.c cli/cli_list.c \
               cli/cli_model_files.c
LAYERS      := core planner model db hub kernels types service codec daemon cli

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
NVCCFLAGS ?= -O3 -std=c++17 -lineinfo $(CUDA_ARCH) -Xcompiler -Wall,-Wextra $(if $(WERROR),--Werror all-warnings)

$(BUILD)/kernels/%.o: kernels/%.cu
	@mkdir -p $(dir $@)
	$(Q_NVCC)$(call logged,$(NVCC) $(NVCCFLAGS) -MMD -MP -c -o $@ $<)
$(BUILD)/kernels/calib_cpu.o: BUILD_CFLAGS += $(OPENBLAS_CFLAGS)

# The helper: the CUDA suites, the message framing and the shared statistics; nothing of the daemon.
# Linked beside and renamed into place: a daemon started while it builds (make run, below) never runs half a file.
$(BUILD)/memplan-gpu: $(call obj,kernels/gpu_helper.c kernels/calib_ipc.c kernels/calib_common.c) \
		$(BUILD)/kernels/calib_gpu.o $(BUILD)/libplanner.a $(BUILD)/libcore.a
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@.tmp $^ $(LDFLAGS) $(GPU_HELPER_LIBS) && mv $@.tmp $@

# The compiler and flags every object was built with (less -Werror, which changes no object): rewritten only when
# they change, and every object depends on it, so `make CFLAGS=-O0` on a built tree rebuilds.
$(BUILD)/gen/cflags: FORCE
	@mkdir -p $(dir $@)
	@echo '$(CC) $(filter-out -Werror,$(ALL_CFLAGS))' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

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
	$(Q_LD)$(call logged,$(CC) $(ALL_CFLAGS) -Icore -o $@ $<)

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
$(BUILD)/tools/gen_presets: $(call obj,tools/gen_presets.c) $(BUILD)/libcodec.a $(BUILD)/libtypes.a \
		$(BUILD)/libmodel.a $(BUILD)/libplanner.a $(BUILD)/libcore.a
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ -lcjson -lcrypto -lm
$(BUILD)/gen/presets.c: $(BUILD)/tools/gen_presets db/presets/devices.json db/presets/model_repo_ids.json $(MODEL_PRESETS)
	@mkdir -p $(dir $@)
	$(Q_GEN)$(BUILD)/tools/gen_presets $@ db/presets/devices.json --repo-ids db/presets/model_repo_ids.json \
		$(MODEL_PRESETS)

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c $(BUILD)/gen/cflags
	$(Q_CC)$(call logged,$(CC) $(ALL_CFLAGS) -Icore -Iservice -c -o $@ $<)

# ----- archives: one per folder ------------------------------------------------------------------------------
$(BUILD)/%.o: %.c $(BUILD)/gen/cflags
	@mkdir -p $(dir $@)
	$(Q_CC)$(call logged,$(CC) $(ALL_CFLAGS) -c -o $@ $<)

$(BUILD)/libcore.a: $(call obj,$(CORE_SRC))
$(BUILD)/libplanner.a: $(call obj,$(PLANNER_SRC))
$(BUILD)/libmodel.a: $(call obj,$(MODEL_SRC))
$(BUILD)/libdb.a: $(call obj,$(DB_SRC))
$(BUILD)/libhub.a: $(call obj,$(HUB_SRC))
$(BUILD)/libkernels.a: $(call obj,$(KERNELS_SRC)) $(BUILD)/gen/cuda_mode.o
$(BUILD)/libtypes.a: $(call obj,$(TYPES_SRC))
$(BUILD)/libservice.a: $(call obj,$(SERVICE_SRC)) $(BUILD)/gen/presets.o
$(BUILD)/libcodec.a: $(call obj,$(CODEC_SRC))
$(BUILD)/libdaemon.a: $(call obj,$(DAEMON_SRC)) $(BUILD)/gen/openapi.o $(BUILD)/gen/web.o
$(BUILD)/lib%.a:
	@mkdir -p $(dir $@)
	@rm -f $@
	$(Q_AR)$(AR) rcs $@ $^

# Each archive with those it needs, in link order, and the system libraries that stack links (LIBS_<stack>).
lib = $(BUILD)/lib$(1).a
STACK_daemon  := daemon codec service types kernels db hub model planner core
STACK_service := service types kernels db hub model planner core
STACK_codec   := codec types model planner core
# decode, compute and render an answer without HTTP: the command line's stack, the benchmarks' and the fuzzers'
STACK_answers := codec service types kernels db hub model planner core
STACK_model   := model planner core
STACK_db      := db planner core
STACK_planner := planner core
SYS_LIBS := -lmicrohttpd -lcurl -lcjson -lyajl -lsqlite3 -lcrypto -lz -lpthread -lm $(KERNELS_LIBS)
LIBS_daemon  := $(SYS_LIBS)
LIBS_service := -lcurl -lcjson -lyajl -lsqlite3 -lcrypto -lz -lpthread -lm $(KERNELS_LIBS)
LIBS_answers := $(LIBS_service)
LIBS_codec   := -lcjson -lyajl -lcrypto -lz -lm
LIBS_planner := -lm

# ----- the program --------------------------------------------------------------------------------------------
.PHONY: groundtruth model-types variants state-dicts llamacpp-groundtruth llamacpp-real hub-real all run test check deps deps-build clean lint contract browser asan slurm-real fuzz fuzz-build fuzz-smoke \
        fuzz-contract bench-load bench-training bench-plan bench-store bench-store-lock bench-k8s bench-engine bench-fidelity bench-startup bench-fit-memory \
        bench-attack clean-clone-check format-drift engines-real
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
# tests (TEST_STACK_<name>) with that stack's system libraries. The planner tests link the planner alone; the codec
# tests codec/'s stack alone (no store, kernels or service: tests/lint_links.sh); the tests of whole answers
# without HTTP (test_pipeline, test_engine_check: decode, the service over a store of the presets, encode) the
# answers stack.
TESTS := test_planner test_engine test_llamacpp test_llamacpp_engine test_checkpoint test_hub test_models test_store test_http test_roofline test_training test_inference test_store_http \
         test_k8s test_store_proc test_calib test_limits test_respcache test_golden test_codec test_pipeline test_engine_check \
         test_answers test_assumptions test_fidelity test_hardening test_inventory test_types test_invariants test_fleet test_attack \
         test_wrap_qformer test_wrap_vl test_vq
HTTP_HELPERS := tests/http_util.c tests/refs.c tests/lib_util.c
TEST_STACK_test_planner   := planner
TEST_HELPERS_test_planner :=
TEST_LIBS_test_planner    := -lm
TEST_STACK_test_invariants   := planner
TEST_HELPERS_test_invariants := tests/invariants_ndebug.c
TEST_LIBS_test_invariants    := -lm
TEST_STACK_test_engine    := planner
TEST_HELPERS_test_engine  :=
TEST_LIBS_test_engine     := -lm
TEST_STACK_test_models    := codec
TEST_STACK_test_inventory := codec
TEST_HELPERS_test_inventory := tests/refs.c
TEST_STACK_test_types := codec
TEST_STACK_test_wrap_qformer := codec
TEST_HELPERS_test_wrap_qformer := tests/refs.c tests/count_util.c
TEST_STACK_test_wrap_vl := codec
TEST_HELPERS_test_wrap_vl := tests/refs.c tests/count_util.c
TEST_STACK_test_vq := codec
TEST_HELPERS_test_vq := tests/refs.c tests/count_util.c
TEST_HELPERS_test_types := tests/refs.c
TEST_HELPERS_test_models  := tests/refs.c tests/count_util.c
TEST_STACK_test_training  := codec
TEST_HELPERS_test_training := tests/refs.c
TEST_STACK_test_fidelity  := codec
TEST_HELPERS_test_fidelity := tests/refs.c
TEST_STACK_test_codec     := codec
TEST_HELPERS_test_codec   := tests/refs.c
TEST_STACK_test_pipeline  := answers
TEST_HELPERS_test_pipeline := tests/refs.c tests/lib_util.c
TEST_LIBS_test_pipeline   := -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
TEST_STACK_test_engine_check := answers
TEST_STACK_test_llamacpp := codec
TEST_STACK_test_llamacpp_engine := answers
TEST_HELPERS_test_llamacpp_engine := tests/refs.c tests/lib_util.c
TEST_STACK_test_checkpoint := codec
TEST_STACK_test_hub := answers
TEST_HELPERS_test_hub := tests/refs.c tests/lib_util.c
TEST_HELPERS_test_checkpoint := tests/refs.c
TEST_HELPERS_test_llamacpp := tests/refs.c
TEST_HELPERS_test_engine_check := tests/refs.c
TEST_STACK_test_store     := service
TEST_HELPERS_test_store   := tests/refs.c
TEST_STACK_test_store_proc := service
TEST_HELPERS_test_store_proc := tests/refs.c
TEST_LIBS_test_store_proc := -lcurl
TEST_HELPERS_test_respcache :=

test_stack   = $(or $(TEST_STACK_$(1)),daemon)
test_helpers = $(if $(filter undefined,$(origin TEST_HELPERS_$(1))),$(HTTP_HELPERS),$(TEST_HELPERS_$(1)))
test_libs    = $(TEST_LIBS_$(1)) $(if $(filter daemon,$(call test_stack,$(1))),-lcurl) $(LIBS_$(call test_stack,$(1)))

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

# A Hugging Face Hub that serves the Hub's URL layout from a folder (tests/hub_server.c): test_hub starts it; the
# contract tier holds it to huggingface_hub's own client (tests/contract/test_hub_server.py)
$(BUILD)/tests/hub_server: $(call obj,tests/hub_server.c)
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ -lmicrohttpd
$(BUILD)/tests/test_hub.o: BUILD_CFLAGS += -DMP_TEST_HUB_SERVER='"$(BUILD)/tests/hub_server"'
$(BUILD)/tests/test_hub: | $(BUILD)/tests/hub_server

TEST_BINS := $(addprefix $(BUILD)/tests/,$(TESTS))
# the programs of codec/'s stack, which tests/lint_links.sh holds to linking without the store, kernels and service
CODEC_BINS = $(foreach t,$(TESTS),$(if $(filter codec,$(call test_stack,$(t))),$(BUILD)/tests/$(t))) \
             $(BUILD)/bench/training_h200 $(BUILD)/bench/fidelity

# The preload library that makes the disk look full for a spawned daemon (tests/full_disk.c, test_store_proc).
# Built without the sanitizers: it is preloaded into another program.
$(BUILD)/tests/libfull_disk.so: tests/full_disk.c
	@mkdir -p $(dir $@)
	$(Q_LD)$(CC) -std=c11 -O1 -g -fPIC -shared -Wall -Wextra $(WERROR) -o $@ $< -ldl
$(BUILD)/tests/test_store_proc: | $(BUILD)/tests/libfull_disk.so

# Every response the C HTTP tests receive is logged to HTTP_LOG; `contract` validates each against openapi.yaml.
HTTP_LOG := $(abspath $(BUILD))/http-exchanges.jsonl

# The C tests (unit, golden, store, HTTP) and the lints: the quick tier.
# the benchmarks are built (not run) by check, so they cannot rot
BENCH_BINS := $(BUILD)/bench/training_h200 $(BUILD)/bench/bench_fit $(BUILD)/bench/bench_plan $(BUILD)/bench/bench_k8s $(BUILD)/bench/bench_engine $(BUILD)/bench/fidelity $(BUILD)/bench/startup \
              $(BUILD)/bench/store_lock
# the folders of this build's outputs (build/asan, a build of its own under build/, is none of them; build/fuzz is
# the fuzzers' build and also the name of this build's fuzz/ folder, so the warnings check leaves FUZZ_BUILD out)
OUT_DIRS = $(wildcard $(addprefix $(BUILD)/,core planner model db kernels types service codec daemon cli gen tests \
           bench tools fuzz))
check:
	@$(MAKE) --no-print-directory $(TEST_BINS) $(BENCH_BINS) $(BUILD)/memplan $(GPU_HELPER)
	@w=$$(find $(filter-out $(FUZZ_BUILD),$(OUT_DIRS)) -name '*.warnings' -size +0c 2>/dev/null); if [ -n "$$w" ]; then \
		echo "make check: warnings from an earlier build (check treats warnings as errors; fix them):"; \
		for f in $$w; do echo "-- $${f%.warnings}"; cat "$$f"; done; exit 1; fi
	@rm -f $(HTTP_LOG)
	@set -e; for t in $(TEST_BINS); do echo "== $$t"; MEMPLAN_BIN=$(BUILD)/memplan MEMPLAN_TEST_LIB_DIR=$(BUILD)/tests MEMPLAN_HTTP_LOG=$(HTTP_LOG) $(if $(GPU_HELPER),MEMPLAN_GPU_HELPER=$(GPU_HELPER)) $$t; done
	@echo "== tests/lint_readme_types.sh"; sh tests/lint_readme_types.sh $(BUILD)/memplan
	@echo "== tests/lint_links.sh"; sh tests/lint_links.sh $(BUILD) $(CODEC_BINS)
	@echo "== tests/slurm/run.sh"; sh tests/slurm/run.sh $(BUILD)/memplan
	@echo "== tests/test_stages.sh (make test's summary line)"; sh tests/test_stages.sh
	@echo "== tests/test_make_run.sh (make run does not wait on nvcc without a GPU)"; sh tests/test_make_run.sh $(BUILD)
	@echo "== tests/test_lint_layers.py (the layer check fails on each trick, in scratch copies)"
	@CC="$(CC)" python3 tests/test_lint_layers.py --build $(BUILD)
	@$(MAKE) --no-print-directory lint

# Everything: the quick tier, then the contract tests (spec, schemas, Schemathesis, promtool, valgrind) and a
# short fuzz run.
# Every stage runs (a failure does not hide how the others went) and the last line sums them up
# (scripts/test-stages): "make test: check ok (52 s), slurm-real ok (12 s), ...; all 5 stages passed in 261 s".
TEST_STAGE = $(1)='$(MAKE) --no-print-directory $(1)'
test: deps
	@./scripts/test-stages $(call TEST_STAGE,check) $(call TEST_STAGE,slurm-real) $(call TEST_STAGE,llamacpp-real) \
		$(call TEST_STAGE,hub-real) $(call TEST_STAGE,contract) $(call TEST_STAGE,browser) $(call TEST_STAGE,fuzz-smoke) \
		$(call TEST_STAGE,engines-real)

# ----- the engines' own code (tests/engines): every command memplan prints for a grid of plans through vLLM's
# and SGLang's parsers, config checks, attention-backend selection and KV-cache sizing, from PyPI, pinned, one venv
# per engine in a cache outside the clone (tests/engines/venv.sh; ~9 GB and ~1.5 min each to make, reused by every
# clone on the machine). No GPU needed (CUDA's driver stub). ENGINES_REAL_SKIP=1 skips an engine whose venv cannot
# be made, saying so; ENGINES_REAL=0 leaves the tier out (it then says so).
ENGINES_REAL ?= 1
engines-real: $(BUILD)/memplan
ifeq ($(ENGINES_REAL),0)
	@echo "engines-real: skipped (ENGINES_REAL=0)"
else
	python3 tests/engines/run.py $(abspath $(BUILD)/memplan)
endif

# ----- deploy/slurm in a real Slurm: munged, slurmctld and slurmd of Debian's slurm-wlm on a one-node cluster in a
# temporary folder, jobs submitted with sbatch, srun, salloc and scontrol as an unprivileged user (tests/slurm/real.sh).
# Needs root (or sudo -n); without it a developer's run skips saying why, and CI's (MEMPLAN_CI, CI) fails.
slurm-real: $(BUILD)/memplan
	@echo "== tests/slurm/real.sh"; sh tests/slurm/real.sh $(BUILD)/memplan

# The Hub test server and the daemon's Hub fetch held to huggingface_hub itself (tests/hub/check_server.py, its
# pinned client in .venv-hub)
HUB_VENV := .venv-hub
$(HUB_VENV)/.installed: tests/hub/requirements.txt
	@test -x $(HUB_VENV)/bin/python || python3 -m venv $(HUB_VENV)
	$(HUB_VENV)/bin/pip install -q --disable-pip-version-check -r tests/hub/requirements.txt
	@touch $@
hub-real: $(HUB_VENV)/.installed $(BUILD)/memplan $(BUILD)/tests/hub_server
	@echo "== tests/hub/check_server.py"; $(HUB_VENV)/bin/python tests/hub/check_server.py $(BUILD)

# memplan's llama.cpp and Ollama commands run by the real llama.cpp (tests/llamacpp/real.py; skips, saying why, where
# tools/groundtruth/llamacpp/build.sh's build or the model files are absent)
# llama.cpp itself (tests/llamacpp/real.py): tests/llamacpp/setup.sh builds it once per machine from the pinned
# llama-cpp-python sdist, with the tier's GGUF files, in a cache outside the clone (~/.cache/memplan/llamacpp);
# LLAMACPP_BIN and LLAMACPP_MODELS run another build instead (tools/groundtruth/llamacpp/build.sh's);
# LLAMACPP_REAL=0 leaves the tier out. Where the setup fails, CI fails; a developer's run skips saying why.
LLAMACPP_REAL ?= 1
llamacpp-real: $(BUILD)/memplan
ifeq ($(LLAMACPP_REAL),0)
	@echo "== tests/llamacpp/real.py: left out (LLAMACPP_REAL=0)"
else
	@echo "== tests/llamacpp/real.py"; \
	if [ -n "$${LLAMACPP_BIN:-}" ]; then python3 tests/llamacpp/real.py --memplan $(BUILD)/memplan; exit $$?; fi; \
	if ! d=$$(tests/llamacpp/setup.sh); then \
		if [ -n "$${CI:-}$${MEMPLAN_CI:-}" ]; then echo "llamacpp-real: tests/llamacpp/setup.sh failed" >&2; exit 1; fi; \
		echo "llamacpp-real: skipped: tests/llamacpp/setup.sh failed (above)"; exit 0; fi; \
	LLAMACPP_BIN=$$d/bin LLAMACPP_MODELS=$$d/models python3 tests/llamacpp/real.py --memplan $(BUILD)/memplan
endif

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
# The engines' tier plans every case with the sanitized memplan but leaves the engines' own checks (the same
# Python, 10 minutes) to the plain `make test` (ENGINES_REAL_PLANS_ONLY=1).
asan: deps
	MEMPLAN_SANITIZED=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		ENGINES_REAL_PLANS_ONLY=1 $(MAKE) --no-print-directory CC=clang CUDA=0 BUILD=build/asan SAN_FLAGS="$(ASAN_FLAGS)" test

# ----- fuzzing (libFuzzer, clang) ------------------------------------------------------------------------------
FUZZERS      := plan hf_config k8s engine_log gguf safetensors fleet
FUZZ_BUILD   := build/fuzz
FUZZ_SECONDS ?= 60
SMOKE_SECONDS ?= 10
FUZZ_SAN     := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all

$(BUILD)/fuzz_plan: $(call obj,fuzz/fuzz_plan.c tests/lib_util.c) $(foreach l,$(STACK_answers),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LIBS_answers)
$(BUILD)/fuzz_engine_log: $(call obj,fuzz/fuzz_engine_log.c) $(foreach l,$(STACK_codec),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LIBS_codec)
$(BUILD)/fuzz_hf_config: $(call obj,fuzz/fuzz_hf_config.c) $(foreach l,$(STACK_model),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $^ -lcjson -lm
$(BUILD)/fuzz_k8s: $(call obj,fuzz/fuzz_k8s.c) $(foreach l,$(STACK_answers),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LIBS_answers)
$(BUILD)/fuzz_fleet: $(call obj,fuzz/fuzz_fleet.c) $(foreach l,$(STACK_answers),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LIBS_answers)
$(BUILD)/fuzz_gguf: $(call obj,fuzz/fuzz_gguf.c) $(foreach l,$(STACK_model),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $^ -lcjson -lm
$(BUILD)/fuzz_safetensors: $(call obj,fuzz/fuzz_safetensors.c) $(foreach l,$(STACK_model),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $^ -lcjson -lm

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
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LIBS_codec)
# Prints the training planner against the H200 measurements (the table in bench/RESULTS.md).
bench-training: $(BUILD)/bench/training_h200
	$(BUILD)/bench/training_h200
# Prints what SDPA's math fallback, LoRA's frozen base, soft-capping and grouped_mm MoE prefill put into the peaks
# of the cases the held-back H200 rows missed.
$(BUILD)/bench/fidelity: $(call obj,bench/fidelity.c) $(foreach l,$(STACK_codec),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LIBS_codec)
bench-fidelity: $(BUILD)/bench/fidelity
	$(BUILD)/bench/fidelity

$(BUILD)/bench/bench_fit: $(call obj,bench/bench_fit.c tests/http_util.c) $(foreach l,$(STACK_daemon),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ -lcurl $(SYS_LIBS)
bench-store: $(BUILD)/bench/bench_fit
	$(BUILD)/bench/bench_fit
# The kube-scheduler extender at NODES nodes (default 5,000 and 15,000), with node names (nodeCacheCapable true, the
# node cache filled first) and with Node objects of kube-scheduler's size; the daemon is build/memplan serve.
$(BUILD)/bench/bench_k8s: $(call obj,bench/bench_k8s.c tests/http_util.c) $(foreach l,$(STACK_daemon),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ -lcurl $(SYS_LIBS)
bench-k8s: $(BUILD)/bench/bench_k8s $(BUILD)/memplan
	for n in $(or $(NODES),5000 15000); do MEMPLAN_BIN=$(BUILD)/memplan $(BUILD)/bench/bench_k8s $$n both || exit 1; done
# Peak RSS of the daemon for the largest fit it takes, alone and CONCURRENT at once (bench/load/fit_rss.sh).
bench-fit-memory: $(BUILD)/memplan
	MEMPLAN_BIN=$(BUILD)/memplan ./bench/load/fit_rss.sh $(CONCURRENT)
# The plan endpoint's cost without HTTP (profile it: valgrind --tool=callgrind build/bench/bench_plan 5000).
$(BUILD)/bench/bench_plan: $(call obj,bench/bench_plan.c) $(foreach l,$(STACK_answers),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LIBS_answers)
bench-plan: $(BUILD)/bench/bench_plan
	$(BUILD)/bench/bench_plan $(N)
# How long a device read waits while GET /v1/capacity pages through the store (bench/store_lock.c).
$(BUILD)/bench/store_lock: $(call obj,bench/store_lock.c) $(foreach l,$(STACK_answers),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LIBS_answers)
bench-store-lock: $(BUILD)/bench/store_lock
	$(BUILD)/bench/store_lock $(SECONDS) $(DEVICES)
# The engine-check figures of the real logs in tests/data/engines, and the log reader's cost.
$(BUILD)/bench/bench_engine: $(call obj,bench/bench_engine.c) $(foreach l,$(STACK_answers),$(call lib,$(l)))
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LIBS_answers)
bench-engine: $(BUILD)/bench/bench_engine
	$(BUILD)/bench/bench_engine
# Start-up CPU time and idle memory of the CUDA build and the CUDA=0 build, side by side (bench/startup.sh).
$(BUILD)/bench/startup: $(call obj,bench/startup.c)
	$(Q_LD)$(CC) $(ALL_CFLAGS) -o $@ $^ -lcurl
bench-startup:
	./bench/startup.sh $(RUNS)

# Every attack bench/attack/attack.py knows (oversized and trickled bodies, slow and busy clients, the WAL, framing,
# conditionals), bounded, on loopback: SECONDS per slow and busy attack (default 30), ATTACKS to pick cases; --check
# says whether each figure met its target.
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
# the enumeration of transformers' text-generation types (tests/ref/hf/model_types.json, held by tests/test_types.c)
model-types: $(GT_VENV)/.installed
	$(GT_VENV)/bin/python tools/groundtruth/model_types.py
# The differential generator (tools/groundtruth/variants.py, tests/ref/hf/README.md "variants/"): random valid variants
# of every type memplan reads, built and run by transformers on the CPU, into tests/ref/hf/variants (about an hour on
# two cores; one thread, niced). GT_PYTHON may name another interpreter with the pinned torch and transformers (a venv
# made elsewhere); VARIANTS_ARGS passes options (--only llama,gpt2, -n 12, --from TYPE).
GT_PYTHON ?= $(GT_VENV)/bin/python
variants: $(if $(filter $(GT_VENV)/bin/python,$(GT_PYTHON)),$(GT_VENV)/.installed)
	OMP_NUM_THREADS=1 nice $(GT_PYTHON) tools/groundtruth/variants.py $(VARIANTS_ARGS)
# state_dict templates of the reference cases (tools/groundtruth/state_dicts.py)
state-dicts: $(if $(filter $(GT_VENV)/bin/python,$(GT_PYTHON)),$(GT_VENV)/.installed)
	OMP_NUM_THREADS=1 nice $(GT_PYTHON) tools/groundtruth/state_dicts.py
# llama.cpp's own buffers (tests/ref/llamacpp/README.md): builds llama.cpp from llama-cpp-python's sdist under
# LLAMACPP_CACHE (default /work/cache/gguf), then converts, quantises and runs the reference models
llamacpp-groundtruth: $(GT_VENV)/.installed
	./tools/groundtruth/llamacpp/build.sh
	$(GT_VENV)/bin/python -m pip install -q --disable-pip-version-check --target $${LLAMACPP_CACHE:-/work/cache/gguf}/pylib \
		sentencepiece==0.2.1 protobuf
	$(GT_VENV)/bin/python tools/groundtruth/llamacpp/generate.py
	./tools/groundtruth/llamacpp/help.sh

# The GPU helper matters only where a GPU is (calibration and the health probe spawn it): without one (no working
# nvidia-smi), make run starts the daemon as soon as memplan is built and nvcc builds the helper in the background,
# at low priority, logging to $(BUILD)/memplan-gpu.log. GPU_PRESENT=1 (or a GPU) waits for it, as make all does.
GPU_PRESENT ?= $(shell nvidia-smi -L >/dev/null 2>&1 && echo 1)
run: deps-build
	@$(MAKE) --no-print-directory $(BUILD)/memplan $(if $(GPU_PRESENT),$(GPU_HELPER))
	@if [ -n "$(GPU_HELPER)" ] && [ -z "$(GPU_PRESENT)" ] && \
	    ! $(MAKE) -q --no-print-directory $(GPU_HELPER) 2>/dev/null; then \
		echo "make run: no GPU here: the GPU helper builds in the background ($(BUILD)/memplan-gpu.log)"; \
		nice -n 19 $(MAKE) --no-print-directory $(GPU_HELPER) > $(BUILD)/memplan-gpu.log 2>&1 & \
	fi
	$(BUILD)/memplan serve --listen $(LISTEN) --db $(DB)

clean:
	rm -rf $(BUILD)

# A clone of this commit in an empty temporary folder, nothing beside it, and `make test` there (.ci/run).
clean-clone-check:
	./scripts/clean-clone-check

-include $(shell find $(OUT_DIRS) -name '*.d' 2>/dev/null)

# ----- lint: banned functions, the house's layers, SQL, history in comments, cppcheck (make check runs it) -------
# The layer check reads the build (its dependency files and archives), so lint builds first. cppcheck keeps its
# analysis in build/cppcheck (shared by every BUILD of this checkout): about 20 s the first time, 2 s after.
LINT_SRC = $(CORE_SRC) $(PLANNER_SRC) $(MODEL_SRC) $(DB_SRC) $(KERNELS_SRC) $(SERVICE_SRC) $(CODEC_SRC) \
           $(DAEMON_SRC) $(CLI_SRC) kernels/gpu_helper.c tools/*.c fuzz/*.c tests/*.c bench/*.c
CPPCHECK_DIR := build/cppcheck
lint: $(BUILD)/memplan $(GPU_HELPER)
	@echo "== banned functions (strcpy strcat sprintf vsprintf atoi atol strtok gets)"
	@! grep -nE '\b(strcpy|strcat|sprintf|vsprintf|atoi|atol|strtok|gets)[[:space:]]*\(' $(LINT_SRC) | \
		grep -vE '\b(snprintf|vsnprintf)\b' || { echo "banned function used"; exit 1; }
	@echo "== the house's layers: includes, symbols, names (tests/lint_layers.py, rules in tests/layers.conf)"
	@python3 tests/lint_layers.py --build $(BUILD)
	@echo "== SQL (tests/lint_sql.sh)"
	@sh tests/lint_sql.sh
	@echo "== history in comments (tests/lint_history.sh, over tests/lint_history.scope)"
	@sh tests/lint_history.sh
	@echo "== cppcheck"
	@mkdir -p $(CPPCHECK_DIR)
	@# suppressed, each a false positive here: invalidPointerCast (fields.c writes fields through their table
	@# offset), ctuuninitvar (an error struct passed down to be filled), nullPointerArithmeticRedundantCheck
	@# (a `p && (p = strstr(..))` loop)
	@cppcheck --quiet -j2 --cppcheck-build-dir=$(CPPCHECK_DIR) --error-exitcode=1 --std=c11 \
		--enable=warning,portability --inline-suppr \
		--suppress=missingIncludeSystem --suppress=invalidPointerCast --suppress=ctuuninitvar \
		--suppress=nullPointerArithmeticRedundantCheck -D__GNUC__ $(addprefix -I ,$(LAYERS)) $(LINT_SRC)
	@echo "lint: ok"

# The files that differ from .clang-format (a report, not an error; clang-format is in the dev set).
format-drift:
	@for f in $(LINT_SRC); do clang-format --dry-run $$f 2>&1 | grep -q warning && echo "  $$f" || true; done
