/*
 * test_assumptions.c: what an answer rests on, chosen as the program the user names would choose it and said once
 * (issue 28, a newcomer's findings), over HTTP with the daemon in-process and through the command line:
 * - recomputation left out: full under QLoRA (peft's recipe), none otherwise, echoed and warned (item 2);
 * - the fit's budget: the request's, vLLM's own default when vLLM is named, else the whole GPU and a warning (3);
 * - Gemma 3's context from a config with rope scaling and no max_position_embeddings (9);
 * - one short prefill warning per answer, not one per capacity row (11);
 * - a CPU planned as a CPU: host memory, no CUDA context, no GPU counts; the calibration table's columns (12);
 * - the slips: roofline.svg's one error, QLoRA's states and bytes per parameter, the CLI roofline's formats,
 *   "no activation recomputation", "1 model", serve --help's columns and --max-connections (14);
 * - the chart the web page asks for draws the plan's steps: dtypes and tensor_parallel_size (1).
 * Figures are the presets' (db/presets) and tests/ref's, derived in the comments.
 */
#include <math.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "http_util.h"
#include "refs.h"

#define TOKEN "t0ken-for-tests"
#define AUTH "Authorization: Bearer " TOKEN
#define J "application/json"

typedef struct fixture {
	mpd_daemon d;
	char dir[64];
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));

	http_start(&f->d, f->dir, sizeof(f->dir));
	snprintf(f->d.cfg.token, sizeof(f->d.cfg.token), "%s", TOKEN);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	http_stop(&f->d, f->dir);
	free(f);
	return 0;
}

/* A member by path ("fit.max_batch_size"); NULL when absent. */
static const cJSON *at(const cJSON *o, const char *path)
{
	char buf[128], *save = NULL, *part;

	snprintf(buf, sizeof(buf), "%s", path);
	for (part = strtok_r(buf, ".", &save); part && o; part = strtok_r(NULL, ".", &save))
		o = cJSON_GetObjectItemCaseSensitive(o, part);
	return o;
}

static double num(const cJSON *o, const char *path)
{
	const cJSON *v = at(o, path);

	if (!cJSON_IsNumber(v))
		fail_msg("%s is not a number", path);
	return v->valuedouble;
}

static const char *str(const cJSON *o, const char *path)
{
	const cJSON *v = at(o, path);

	if (!cJSON_IsString(v))
		fail_msg("%s is not a string", path);
	return v->valuestring;
}

/* Sends a request and checks its status; the response is the caller's to free. */
static void call(fixture *f, const char *method, const char *path, const char *body, long status, http_resp *r)
{
	http_do(&f->d, method, path, body, body ? J : NULL, strcmp(method, "GET") ? AUTH : NULL, r);
	if (r->status != status)
		fail_msg("%s %s: %ld, expected %ld: %s", method, path, r->status, status, r->body ? r->body : "");
}

/* How many warnings of o's "warnings" contain text. */
static int warns(const cJSON *o, const char *text)
{
	const cJSON *w;
	int n = 0;

	cJSON_ArrayForEach(w, cJSON_GetObjectItem(o, "warnings"))
	n += cJSON_IsString(w) && strstr(w->valuestring, text) != NULL;
	return n;
}

/* The output of `memplan ARGS` (stdout and stderr) and its exit status; NULL (skipped) without MEMPLAN_BIN. */
static char *run_cli(const char *args, int *rc)
{
	const char *bin = getenv("MEMPLAN_BIN");
	char cmd[1024], *out = NULL;
	size_t len = 0, cap = 0;
	FILE *p;
	int c;

	if (bin == NULL || bin[0] == '\0')
		return NULL;
	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", bin, args);
	p = popen(cmd, "r");
	assert_non_null(p);
	while ((c = fgetc(p)) != EOF) {
		if (len + 2 > cap) {
			char *bigger = realloc(out, cap = cap ? 2 * cap : 4096);

			assert_non_null(bigger);
			out = bigger;
		}
		out[len++] = (char)c;
	}
	if (out == NULL)
		out = calloc(1, 1);
	else
		out[len] = '\0';
	*rc = pclose(p);
	return out;
}

/* ----- 2. recomputation chosen as the framework would -------------------------------------------------- */

#define QLORA_70B_JOB                                                                                                  \
	"{\"model\":\"llama-3.1-70b\",\"precision\":\"bf16\",\"optimizer\":\"adamw\",\"micro_batch_size\":1,"           \
	"\"sequence_length\":2048,\"finetune\":\"qlora\",\"lora_rank\":16"
#define QLORA_70B QLORA_70B_JOB ",\"device\":\"l40s-48gb\""

/*
 * The case: QLoRA of Llama-3.1-70B on an L40S said "DOES NOT FIT: 142 GB, activations 96.1 GB" with no word
 * that recomputation had defaulted to none. peft's prepare_model_for_kbit_training (the QLoRA recipe) turns gradient
 * checkpointing on, so the plan left to its defaults is the plan with full recomputation: 48,458,145,792 bytes (the
 * issue's 48.5 GB), and it says so.
 */
static void test_recomputation_as_the_framework(void **state)
{
	fixture *f = *state;
	http_resp r, full;
	const cJSON *job, *dev;

	call(f, "POST", "/v1/plan/training", QLORA_70B "}", 200, &r);
	call(f, "POST", "/v1/plan/training", QLORA_70B ",\"activation_recomputation\":\"full\"}", 200, &full);
	assert_string_equal(str(r.json, "request.activation_recomputation"), "full");
	assert_string_equal(str(r.json, "request.activation_recomputation_from"), "finetune");
	assert_string_equal(str(full.json, "request.activation_recomputation_from"), "request");
	assert_true(num(r.json, "memory.total_bytes") == num(full.json, "memory.total_bytes"));
	assert_true(num(r.json, "memory.total_bytes") == 48458145792.0);
	assert_int_equal(warns(r.json, "activation_recomputation: not given, so full"), 1);
	assert_int_equal(warns(full.json, "activation_recomputation"), 0);
	http_resp_free(&full);
	http_resp_free(&r);
	/* LoRA and full fine-tuning: none, as transformers' Trainer and Megatron-LM train; the warning gives what full
	 * would make of a verdict that does not fit */
	call(f, "POST", "/v1/plan/training",
	     "{\"model\":\"llama-3.1-70b\",\"device\":\"l40s-48gb\",\"precision\":\"bf16\",\"optimizer\":\"adamw\","
	     "\"micro_batch_size\":1,\"sequence_length\":512,\"finetune\":\"lora\",\"lora_rank\":16}",
	     200, &r);
	assert_string_equal(str(r.json, "request.activation_recomputation"), "none");
	assert_string_equal(str(r.json, "request.activation_recomputation_from"), "default");
	assert_int_equal(warns(r.json, "activation_recomputation: not given, so none"), 1);
	assert_int_equal(warns(r.json, "with full they are"), 1);
	http_resp_free(&r);
	/* /v1/fit resolves the job alike: its row is the plan's total, and the job says what it rests on */
	call(f, "POST", "/v1/fit",
	     "{\"jobs\":[{\"id\":\"q\",\"training\":" QLORA_70B_JOB "}}],\"devices\":[\"l40s-48gb\"],\"gpu_counts\":[1]}",
	     200, &r);
	job = cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "jobs"), 0);
	dev = cJSON_GetArrayItem(cJSON_GetObjectItem(job, "devices"), 0);
	assert_true(cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(dev, "results"), 0), 2)->valuedouble ==
		    48458145792.0);
	assert_int_equal(warns(job, "activation_recomputation: not given, so full"), 1);
	http_resp_free(&r);
}

/* ----- 3. the budget chosen as the engine would, or said ------------------------------------------------ */

#define FP8_70B                                                                                                        \
	"{\"model\":\"llama-3.1-70b\",\"weight_dtype\":\"fp8\",\"batch_size\":8,\"sequence_length\":32768,"                \
	"\"device\":\"h100-sxm5-80gb\""

/* The case: Llama-3.1-70B fp8 at 32k x 8 needs 2 H100s against the whole GPU and 4 under vLLM 0.33's 0.92
 * (0.9 before 0.33), and the whole-GPU answer said nothing of its budget. */
static void test_budget_said(void **state)
{
	fixture *f = *state;
	http_resp r;
	const cJSON *job;

	call(f, "POST", "/v1/plan/inference", FP8_70B "}", 200, &r);
	assert_string_equal(str(r.json, "request.gpu_memory_utilization_from"), "default");
	assert_true(num(r.json, "request.gpu_memory_utilization") == 1.0);
	assert_true(num(r.json, "fit.budget_bytes") == num(r.json, "fit.capacity_bytes"));
	assert_int_equal(warns(r.json, "budget: no engine named"), 1);
	assert_int_equal(warns(r.json, "vLLM would keep 0.92"), 1);
	assert_true(num(r.json, "fit.min_gpus") == 2.0);
	http_resp_free(&r);
	/* vLLM named: its own default, as it would take it; nothing to warn */
	call(f, "POST", "/v1/plan/inference", FP8_70B ",\"engine\":\"vllm\"}", 200, &r);
	assert_string_equal(str(r.json, "request.gpu_memory_utilization_from"), "engine_default");
	assert_true(num(r.json, "request.gpu_memory_utilization") == 0.92);
	assert_int_equal(warns(r.json, "budget:"), 0);
	assert_true(num(r.json, "fit.min_gpus") == 4.0);
	http_resp_free(&r);
	call(f, "POST", "/v1/plan/inference", FP8_70B ",\"gpu_memory_utilization\":0.85}", 200, &r);
	assert_string_equal(str(r.json, "request.gpu_memory_utilization_from"), "request");
	assert_int_equal(warns(r.json, "budget:"), 0);
	http_resp_free(&r);
	/* SGLang: its mem_fraction_static holds the fit (its default for the device and TP), echoed; nothing to warn */
	call(f, "POST", "/v1/plan/inference", FP8_70B ",\"engine\":\"sglang\"}", 200, &r);
	assert_string_equal(str(r.json, "request.gpu_memory_utilization_from"), "engine_default");
	assert_true(num(r.json, "request.gpu_memory_utilization") < 0.9);
	assert_int_equal(warns(r.json, "budget:"), 0);
	http_resp_free(&r);
	call(f, "POST", "/v1/plan/inference", FP8_70B ",\"engine\":\"sglang\",\"mem_fraction_static\":0.8}", 200, &r);
	assert_string_equal(str(r.json, "request.gpu_memory_utilization_from"), "mem_fraction_static");
	assert_true(num(r.json, "request.gpu_memory_utilization") == 0.8);
	http_resp_free(&r);
	/* TensorRT-LLM's fraction is of what the profile leaves: the fit keeps the whole capacity, said */
	call(f, "POST", "/v1/plan/inference", FP8_70B ",\"engine\":\"trtllm\"}", 200, &r);
	assert_int_equal(warns(r.json, "free_gpu_memory_fraction"), 1);
	http_resp_free(&r);
	/* /v1/fit: "yes, 81.1 GB" on 2 x H100 with the job's budget said */
	call(f, "POST", "/v1/fit",
	     "{\"jobs\":[{\"id\":\"a\",\"inference\":{\"model\":\"llama-3.1-70b\",\"weight_dtype\":\"fp8\","
	     "\"batch_size\":8,\"sequence_length\":32768}}],\"devices\":[\"h100-sxm5-80gb\"],\"gpu_counts\":[2]}",
	     200, &r);
	job = cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "jobs"), 0);
	/* the "yes, 81.1 GB" on 2 x H100 (85.0 GB each) */
	assert_true(cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(
					   cJSON_GetObjectItem(job, "devices"), 0), "results"), 0), 2)->valuedouble ==
		    81077356736.0);
	assert_int_equal(warns(job, "budget: no engine named"), 1);
	http_resp_free(&r);
}

/* ----- 9. Gemma 3's context -------------------------------------------------------------------------------- */

/* google/gemma-3-27b-it's config (tests/ref/hf/configs, transcribed) states rope_scaling linear x8 and no
 * max_position_embeddings: Gemma3TextConfig's default 131072 is the 128K context with the scaling in it. */
static char *gemma3_body(uint64_t tokens)
{
	char *cfg = ref_text("hf/configs/gemma-3-27b-it.json"), *body;
	size_t n;

	assert_non_null(cfg);
	n = strlen(cfg) + 256;
	body = malloc(n);
	assert_non_null(body);
	snprintf(body, n,
		 "{\"model\":{\"hf_config\":%s},\"weight_dtype\":\"bf16\",\"batch_size\":1,\"sequence_length\":%llu,"
		 "\"device\":\"h200-sxm-141gb\"}",
		 cfg, (unsigned long long)tokens);
	free(cfg);
	return body;
}

static void test_gemma3_context(void **state)
{
	fixture *f = *state;
	http_resp r;
	char *body = gemma3_body(131072);

	call(f, "POST", "/v1/plan/inference", body, 200, &r);
	assert_true(num(r.json, "fit.max_sequence_length") == 131072.0); /* was 880,608: 1,048,576 allowed */
	assert_string_equal(str(r.json, "fit.max_sequence_length_bound"), "context");
	assert_int_equal(warns(r.json, "the context is that default, 131072 tokens, with the linear rope_scaling"), 1);
	http_resp_free(&r);
	free(body);
	/* 200,000 tokens was planned without a word: now beyond the context, the default named as what it is */
	body = gemma3_body(200000);
	call(f, "POST", "/v1/plan/inference", body, 422, &r);
	assert_string_equal(http_problem_field(&r), "/sequence_length");
	assert_non_null(strstr(r.body, "beyond 131072 tokens: that is the gemma3 default of max_position_embeddings"));
	http_resp_free(&r);
	free(body);
}

/* ----- 11. one short prefill warning per answer ---------------------------------------------------------- */

static void test_prefill_warned_once(void **state)
{
	fixture *f = *state;
	http_resp r;
	const cJSON *it, *w;
	int rows = 0, in_rows = 0;

	call(f, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096", NULL, 200, &r);
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(r.json, "items"))
	{
		rows++;
		in_rows += warns(it, "prefill:");
		/* each row names its chunk: vLLM's 8192 on an H100, 2048 on an A100 (capped at 1 x 4096) */
		assert_true(num(it, "max_num_batched_tokens") > 0);
		assert_string_equal(str(it, "max_num_batched_tokens_source"), "engine_default");
		if (strcmp(str(it, "device"), "a100-sxm4-80gb") == 0)
			assert_true(num(it, "max_num_batched_tokens") == 2048.0);
		if (strcmp(str(it, "device"), "h100-sxm5-80gb") == 0)
			assert_true(num(it, "max_num_batched_tokens") == 4096.0);
	}
	assert_true(rows >= 20);
	assert_int_equal(in_rows, 0); /* was one ~330-byte copy per row */
	assert_int_equal(warns(r.json, "prefill:"), 1);
	http_resp_free(&r);
	/* a plan: one short sentence; the long explanation once, in the notes */
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":4096,\"device\":\"h100-sxm5-80gb\"}", 200, &r);
	cJSON_ArrayForEach(w, cJSON_GetObjectItem(r.json, "warnings"))
	if (strncmp(w->valuestring, "prefill:", 8) == 0)
		assert_true(strlen(w->valuestring) < 200);
	assert_int_equal(warns(r.json, "prefill:"), 1);
	{
		int notes = 0;

		cJSON_ArrayForEach(w, cJSON_GetObjectItem(r.json, "notes"))
		notes += strstr(w->valuestring, "get_batch_defaults") != NULL;
		assert_int_equal(notes, 1);
	}
	http_resp_free(&r);
}

/* ----- 12. a CPU planned as a CPU ---------------------------------------------------------------------------- */

#define CPU_PROFILE                                                                                                    \
	"{\"name\":\"Intel(R) Xeon(R) Processor\",\"vendor\":\"Intel\",\"kind\":\"cpu\",\"memory_bytes\":25282281472,"    \
	"\"memory_bandwidth_bytes_per_second\":1.88e10,\"peak_flops_per_second\":{\"fp32\":1.51e11}}"

static void test_cpu_as_a_cpu(void **state)
{
	fixture *f = *state;
	http_resp r;
	int rc = 0;
	char *out;

	/* a calibrated CPU as `memplan calibrate --cpu` stores it (kind cpu) */
	call(f, "PUT", "/v1/devices/measured-cpu-vm", CPU_PROFILE, 201, &r);
	http_resp_free(&r);
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3.2-1b\",\"batch_size\":1,\"sequence_length\":4096,\"device\":\"measured-cpu-vm\"}", 200,
	     &r);
	assert_true(num(r.json, "memory.overhead_bytes") == 0); /* was the 552 MB CUDA context */
	assert_string_equal(str(r.json, "fit.device_kind"), "cpu");
	assert_null(at(r.json, "fit.min_gpus")); /* no GPU count */
	assert_null(strstr(r.body, "cudaMemGetInfo"));
	assert_int_equal(warns(r.json, "host memory"), 2); /* the capacity and the budget, in host terms */
	/* Llama-3.2-1B's bf16 checkpoint stays bf16 (vLLM's CPU platform supports it), not fp16 "as vLLM serves it" */
	assert_string_equal(str(r.json, "request.compute_dtype"), "bf16");
	assert_int_equal(warns(r.json, "planned in fp16"), 0);
	http_resp_free(&r);
	/* an inline CPU profile is planned alike; a request's own context is still taken */
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3.2-1b\",\"batch_size\":1,\"sequence_length\":4096,\"cuda_context_bytes\":1000,"
	     "\"device\":" CPU_PROFILE "}",
	     200, &r);
	assert_true(num(r.json, "memory.overhead_bytes") == 1000);
	http_resp_free(&r);
	/* training on it: no CUDA context, no cuBLAS workspace; /v1/fit's row is the plan's */
	call(f, "POST", "/v1/plan/training",
	     "{\"model\":\"gpt2\",\"precision\":\"fp32\",\"optimizer\":\"adamw\",\"micro_batch_size\":1,"
	     "\"sequence_length\":1024,\"activation_recomputation\":\"none\",\"device\":\"measured-cpu-vm\"}",
	     200, &r);
	assert_true(num(r.json, "breakdown.overhead.cuda_context_bytes") == 0);
	assert_true(num(r.json, "breakdown.overhead.workspace_bytes") == 0);
	assert_null(at(r.json, "fit.min_gpus"));
	{
		double total = num(r.json, "memory.total_bytes");
		http_resp fr;
		const cJSON *dev;

		call(f, "POST", "/v1/fit",
		     "{\"jobs\":[{\"training\":{\"model\":\"gpt2\",\"precision\":\"fp32\",\"optimizer\":\"adamw\","
		     "\"micro_batch_size\":1,\"sequence_length\":1024,\"activation_recomputation\":\"none\"}}],"
		     "\"devices\":[\"measured-cpu-vm\",\"h100-sxm5-80gb\"],\"gpu_counts\":[1]}",
		     200, &fr);
		dev = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(fr.json, "jobs"), 0),
							      "devices"),
					 0);
		assert_string_equal(str(dev, "device"), "measured-cpu-vm");
		assert_true(cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(dev, "results"), 0), 2)->valuedouble ==
			    total);
		http_resp_free(&fr);
	}
	http_resp_free(&r);
	/* the text for people: host memory, no GPU count */
	{
		char args[512];

		snprintf(args, sizeof(args),
			 "plan inference --db %s/memplan.db --model llama-3.2-1b --batch_size 1 --sequence_length 4096 "
			 "--device measured-cpu-vm",
			 f->dir);
		out = run_cli(args, &rc);
		if (out == NULL) {
			skip();
			return;
		}
		assert_int_equal(rc, 0);
		assert_non_null(strstr(out, "in host memory of a"));
		assert_non_null(strstr(out, "\nhost memory "));
		assert_null(strstr(out, "GPU count"));
		assert_null(strstr(out, "per GPU"));
		free(out);
	}
}

/* The calibration table of a CPU: no empty ratio column (there is no datasheet to compare with), and every figure
 * with three significant digits (the rules of codec/mpc_human.c: "8.00 GB/s", never "8 GB/s"). */
static void test_cpu_calibration_table(void **state)
{
	fixture *f = *state;
	char args[512], *out, *line, *save = NULL;
	regex_t fig;
	int rc = 0, rows = 0;

	snprintf(args, sizeof(args),
		 "calibrate --cpu --db %s/cal.db --runs 10 --array-bytes 1048576 --matrix-size 64 --threads 1", f->dir);
	out = run_cli(args, &rc);
	if (out == NULL) {
		skip();
		return;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(regcomp(&fig, "([0-9]{3}|[0-9]{2}\\.[0-9]|[0-9]\\.[0-9]{2}) [kMGTP]?(B/s|FLOP/s)$", REG_EXTENDED),
			 0);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, "figure") && strstr(line, "best"))
			assert_null(strstr(line, "ratio"));
		if (strstr(line, "STREAM triad") || strstr(line, "gemm (")) {
			/* the last column is the median, ends the line: nothing (no blank ratio) after it */
			assert_int_equal(regexec(&fig, line, 0, NULL, 0), 0);
			rows++;
		}
		if (strstr(line, "STREAM triad, 1 thread"))
			assert_null(strstr(line, "1 threads"));
	}
	assert_int_equal(rows, 3);
	regfree(&fig);
	free(out);
}

/* ----- 14. the slips ------------------------------------------------------------------------------------------ */

/* roofline.svg with a bad weight_dtype: the problem once, under ?weight_dtype (it was also under ?/weight_dtype) */
static void test_slip_roofline_error_once(void **state)
{
	fixture *f = *state;
	http_resp r;

	call(f, "GET", "/v1/devices/h100-sxm5-80gb/roofline.svg?model=llama-3-8b&weight_dtype=fp9&batch_size=0", NULL, 422,
	     &r);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "errors")), 2);
	assert_null(strstr(r.body, "?/"));
	http_resp_free(&r);
}

/* QLoRA: the adapters' states are fp32 (as counted: 8 bytes of AdamW per adapter parameter), and the frozen base is
 * nf4 (0.5 + 1/64 + 4/16384 bytes) beside the 16-bit embeddings, norms and head: well under 2 bytes per parameter,
 * its bytes over its parameters */
static void test_slip_qlora_states(void **state)
{
	fixture *f = *state;
	http_resp r;

	call(f, "POST", "/v1/plan/training", QLORA_70B ",\"activation_recomputation\":\"full\"}", 200, &r);
	assert_string_equal(str(r.json, "request.optimizer_state_dtype"), "fp32");
	assert_true(num(r.json, "memory.optimizer_states_bytes") == 8.0 * num(r.json, "parameters.lora"));
	{
		double base = num(r.json, "memory.weights_bytes") - 4.0 * num(r.json, "parameters.lora");
		double bpp = num(r.json, "bytes_per_parameter.weights");

		assert_true(bpp > 0.5 && bpp < 0.6);
		assert_true(fabs(bpp * num(r.json, "parameters.on_gpu") - base) < 1.0);
	}
	http_resp_free(&r);
}

/* The command line's output of ARGS (with --db under the fixture's folder), or a skip without MEMPLAN_BIN. */
#define CLI_OR_SKIP(out, rc, ...)                                                                                      \
	do {                                                                                                           \
		char args_[768];                                                                                       \
		snprintf(args_, sizeof(args_), __VA_ARGS__);                                                           \
		(out) = run_cli(args_, &(rc));                                                                         \
		if ((out) == NULL) {                                                                                   \
			skip();                                                                                        \
			return;                                                                                        \
		}                                                                                                      \
	} while (0)

/* the CLI roofline takes the model's formats and tensor_parallel_size */
static void test_slip_cli_roofline_formats(void **state)
{
	fixture *f = *state;
	char *out;
	int rc = 0;
	cJSON *doc;

	CLI_OR_SKIP(out, rc,
		    "roofline --db %s/memplan.db --device h100-sxm5-80gb --model llama-3.1-70b --weight_dtype fp8 "
		    "--kv-cache-dtype fp8 --tensor_parallel_size 4 --json",
		    f->dir);
	assert_int_equal(rc, 0);
	doc = cJSON_Parse(out);
	assert_non_null(doc);
	assert_string_equal(str(doc, "transformer.request.weight_dtype"), "fp8_e4m3");
	assert_string_equal(str(doc, "transformer.request.kv_cache_dtype"), "fp8_e4m3");
	assert_true(num(doc, "transformer.request.tensor_parallel_size") == 4);
	cJSON_Delete(doc);
	free(out);
}

/* "none recomputation" */
static void test_slip_recomputation_words(void **state)
{
	fixture *f = *state;
	char *out;
	int rc = 0;

	CLI_OR_SKIP(out, rc,
		    "plan training --db %s/memplan.db --model gpt2 --precision bf16 --optimizer adamw --micro_batch_size 1 "
		    "--sequence_length 1024",
		    f->dir);
	assert_int_equal(rc, 0);
	assert_null(strstr(out, "none recomputation"));
	assert_non_null(strstr(out, "no activation recomputation (the default)"));
	free(out);
}

/* "1 models" */
static void test_slip_plurals(void **state)
{
	fixture *f = *state;
	char path[128], *out;
	int rc = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/one.json", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "{\"format\":\"memplan-export\",\"version\":1,\"schema_version\":7,\"devices\":[{\"id\":"
		    "\"lab-gpu\",\"name\":\"lab\",\"vendor\":\"ACME\",\"memory_bytes\":25769803776,"
		    "\"memory_bandwidth_bytes_per_second\":1e12,\"peak_flops_per_second\":{\"bf16\":1e14}}],"
		    "\"models\":[{\"id\":\"tiny\",\"hf_config\":{\"model_type\":\"llama\",\"hidden_size\":256,"
		    "\"intermediate_size\":512,\"num_hidden_layers\":2,\"num_attention_heads\":4,\"vocab_size\":1000,"
		    "\"max_position_embeddings\":512}}]}");
	fclose(fp);
	CLI_OR_SKIP(out, rc, "db import %s --db %s/imported.db", path, f->dir);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "1 device and 1 model written"));
	free(out);
}

/* serve --help: one column for the variables, one for the meanings (wrapped lines start under it), and
 * --max-connections as the README and the daemon have it (more wait in the accept queue; none are refused) */
static void test_slip_serve_help(void **state)
{
	char *out, *line, *save = NULL;
	long env_col = -1, meaning_col = -1;
	int rc = 0, rows = 0;

	(void)state;
	CLI_OR_SKIP(out, rc, "serve --help");
	assert_int_equal(rc, 0);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *e = strstr(line, "MEMPLAN_");

		if (strncmp(line, "  flag ", 7) == 0) {
			env_col = strstr(line, "environment") - line;
			meaning_col = strstr(line, "meaning") - line;
		} else if (strncmp(line, "  --", 4) == 0) {
			assert_non_null(e);
			assert_int_equal(e - line, env_col);
			assert_true(line[meaning_col - 1] == ' ' && line[meaning_col] != ' ');
			rows++;
		} else if (line[0] == ' ' && env_col > 0) {
			assert_true((long)strspn(line, " ") == meaning_col);
		}
		if (strstr(line, "--max-connections "))
			assert_null(strstr(line, "refused"));
	}
	assert_true(rows >= 20);
	free(out);
}

/* ----- 1. the chart the page asks for is the plan's ------------------------------------------------------- */

/* A member of the chart's <g id="steps">: data-NAME="value". */
static double steps_attr(const char *svg, const char *name)
{
	const char *g = strstr(svg, "<g id=\"steps\""), *a;
	char key[64];

	assert_non_null(g);
	snprintf(key, sizeof(key), "data-%s=\"", name);
	a = strstr(g, key);
	assert_non_null(a);
	return strtod(a + strlen(key), NULL);
}

/* The case: llama-3.1-70b fp8 on an H100 at batch 8 x 32768, TP 4. The page asks for the chart with what the
 * plan answered (its formats, tensor_parallel_size, the decode step at the last token); the chart's steps are then
 * the plan's performance block to the last digit. */
static void test_chart_is_the_plan(void **state)
{
	fixture *f = *state;
	http_resp plan, svg, tp;

	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3.1-70b\",\"weight_dtype\":\"fp8\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":8,"
	     "\"sequence_length\":32768,\"tensor_parallel_size\":4,\"device\":\"h100-sxm5-80gb\"}",
	     200, &plan);
	call(f, "GET",
	     "/v1/devices/h100-sxm5-80gb/roofline.svg?model=llama-3.1-70b&batch_size=8&context_tokens=32767&"
	     "prompt_tokens=32768&weight_dtype=fp8_e4m3&kv_cache_dtype=bf16&compute_dtype=bf16&tensor_parallel_size=4",
	     NULL, 200, &svg);
	assert_true(steps_attr(svg.body, "tensor-parallel-size") == 4);
	assert_true(fabs(steps_attr(svg.body, "decode-step-seconds") / num(plan.json, "performance.decode_step_seconds") -
			 1) < 1e-8);
	assert_true(fabs(steps_attr(svg.body, "prefill-seconds") / num(plan.json, "performance.prefill_seconds") - 1) <
		    1e-8);
	assert_non_null(strstr(svg.body, "data-weight-dtype=\"fp8_e4m3\""));
	/* the decode matrices at fp8 read 1 byte per weight: about 16 FLOP/B at batch 8, not bf16's 8 */
	assert_non_null(strstr(svg.body, "fp8_e4m3 matrix"));
	/* a degree the model cannot split by is the plan's own 422 */
	call(f, "GET", "/v1/devices/h100-sxm5-80gb/roofline.svg?model=llama-3.1-70b&tensor_parallel_size=3", NULL, 422,
	     &tp);
	assert_string_equal(http_problem_field(&tp), "?tensor_parallel_size");
	http_resp_free(&tp);
	http_resp_free(&svg);
	http_resp_free(&plan);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_recomputation_as_the_framework, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget_said, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gemma3_context, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prefill_warned_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_as_a_cpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_calibration_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slip_roofline_error_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slip_qlora_states, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slip_cli_roofline_formats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slip_recomputation_words, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slip_plurals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slip_serve_help, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chart_is_the_plan, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
