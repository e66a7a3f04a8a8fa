/*
 * engine.c: the serving engines in text: the engine block of an inference plan (launch arguments, one
 * ready-to-paste command, the figures the engine will print, in its own printf formats). Reads the structs
 * service/ fills; computes nothing of its own. What an engine printed is engine_log.c's.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/fields.h"
#include "codec.h"

#define GIB 1073741824.0

/* ----- the engine block --------------------------------------------------------------------------------- */

/* Appends s to buf as one shell word: bare when it holds only safe characters, else single-quoted. */
static void shell_word(char *buf, size_t len, size_t *used, const char *s)
{
	bool safe = s[0] != '\0';

	for (const char *c = s; *c; c++)
		if (!(isalnum((unsigned char)*c) || strchr("._/:=@%+,-", *c)))
			safe = false;
	if (*used + 1 >= len)
		return;
	if (*used)
		buf[(*used)++] = ' ';
	if (safe) {
		*used += (size_t)snprintf(buf + *used, len - *used, "%s", s);
	} else {
		buf[(*used)++] = '\'';
		for (const char *c = s; *c && *used + 5 < len; c++) {
			if (*c == '\'') {
				memcpy(buf + *used, "'\\''", 4);
				*used += 4;
			} else {
				buf[(*used)++] = *c;
			}
		}
		if (*used + 1 < len)
			buf[(*used)++] = '\'';
	}
	if (*used >= len)
		*used = len - 1;
	buf[*used] = '\0';
}

/* The command line: program, model (positional or after its flag), then every argument in order. */
static void command_text(const mps_engine_block *b, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	used = (size_t)snprintf(buf, len, "%s", b->program);
	if (b->model_flag)
		shell_word(buf, len, &used, b->model_flag);
	shell_word(buf, len, &used, b->model_arg);
	for (size_t i = 0; i < b->nargs; i++) {
		shell_word(buf, len, &used, b->args[i].flag);
		if (b->args[i].value[0])
			shell_word(buf, len, &used, b->args[i].value);
	}
}

char *mpc_engine_command(const mps_engine_block *b)
{
	char *buf = malloc(4096);

	if (buf)
		command_text(b, buf, 4096);
	return buf;
}

/* An integer with thousands separators, as Python's f"{n:,}" prints it (vLLM's "GPU KV cache size"). */
static void grouped(uint64_t v, char *buf, size_t len)
{
	char digits[32];
	size_t n = (size_t)snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v), o = 0;

	for (size_t i = 0; i < n && o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
}

static void line(cJSON *arr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void line(cJSON *arr, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	mpc_append(arr, cJSON_CreateString(buf));
}

static cJSON *vllm_predicted(const mps_engine_block *b, const mps_inference_job *j)
{
	const mp_engine_prediction *p = &b->predicted;
	const mp_engine_inputs *in = &b->inputs;
	cJSON *o = cJSON_CreateObject(), *l;
	char tok[32], len[32];

	mpc_add_u64(o, "total_memory_bytes", in->total_memory_bytes);
	mpc_add_num(o, "gpu_memory_utilization", in->memory_fraction);
	mpc_add_u64(o, "requested_memory_bytes", p->requested_memory_bytes);
	mpc_add_u64(o, "weights_bytes", in->weights_bytes);
	mpc_add_u64(o, "activation_peak_bytes", in->activation_bytes);
	mpc_add_u64(o, "non_kv_cache_bytes", p->non_kv_cache_bytes);
	mpc_add_i64(o, "available_kv_cache_bytes", p->available_kv_cache_bytes);
	mpc_add_u64(o, "block_bytes_per_layer", p->page_bytes);
	mpc_add_u64(o, "kv_cache_groups", p->kv_groups);
	mpc_add_u64(o, "layers_per_group", p->group_layers);
	mpc_add_u64(o, "num_gpu_blocks", p->num_gpu_blocks);
	mpc_add_u64(o, "kv_cache_tokens", p->kv_cache_tokens);
	mpc_add_u64(o, "blocks_per_request", p->blocks_per_request);
	mpc_add_num(o, "max_concurrency", p->max_concurrency);
	mpc_add_u64(o, "max_concurrency_tokens_per_request", in->max_model_len);
	mpc_add_u64(o, "needed_kv_cache_bytes", p->needed_kv_cache_bytes);
	cJSON_AddBoolToObject(o, "serves_max_model_len", p->serves_max_model_len);
	mpc_add_u64(o, "estimated_max_model_len", p->estimated_max_model_len);
	cJSON_AddBoolToObject(o, "holds_batch", p->max_concurrency >= (double)j->req.batch_size);
	mpc_add_num(o, "required_gpu_memory_utilization", ceil(p->required_memory_fraction * 1000) / 1000);
	l = cJSON_AddArrayToObject(o, "log_lines");
	line(l, "Model loading took %.4f GiB", (double)in->weights_bytes / GIB);
	if (p->available_kv_cache_bytes <= 0) {
		line(l, "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
			"when initializing the engine.");
		return o;
	}
	line(l, "Available KV cache memory: %.2f GiB", (double)p->available_kv_cache_bytes / GIB);
	grouped(p->kv_cache_tokens, tok, sizeof(tok));
	grouped(in->max_model_len, len, sizeof(len));
	line(l, "GPU KV cache size: %s tokens", tok);
	line(l, "Maximum concurrency for %s tokens per request: %.2fx", len, p->max_concurrency);
	if (!p->serves_max_model_len)
		line(l,
		     "ValueError: To serve at least one request with the models's max seq len (%llu), (%.2f GiB KV "
		     "cache is needed, which is larger than the available KV cache memory (%.2f GiB). Based on the "
		     "available memory, the estimated maximum model length is %llu.",
		     (unsigned long long)in->max_model_len, (double)p->needed_kv_cache_bytes / GIB,
		     (double)p->available_kv_cache_bytes / GIB, (unsigned long long)p->estimated_max_model_len);
	return o;
}

static cJSON *sglang_predicted(const mps_engine_block *b, const mps_inference_job *j)
{
	const mp_engine_prediction *p = &b->predicted;
	const mp_engine_inputs *in = &b->inputs;
	cJSON *o = cJSON_CreateObject(), *l;

	mpc_add_u64(o, "total_memory_bytes", in->total_memory_bytes);
	mpc_add_u64(o, "total_gpu_memory_bytes", (uint64_t)(p->total_gpu_memory_gib * GIB));
	mpc_add_num(o, "mem_fraction_static", in->memory_fraction);
	mpc_add_u64(o, "weights_bytes", in->weights_bytes);
	mpc_add_u64(o, "available_after_weights_bytes",
		    p->available_after_weights_gib > 0 ? (uint64_t)(p->available_after_weights_gib * GIB) : 0);
	mpc_add_i64(o, "rest_memory_bytes", (int64_t)(p->rest_memory_gib * GIB));
	mpc_add_u64(o, "cell_size_bytes", p->cell_size_bytes);
	mpc_add_u64(o, "max_total_num_tokens", p->max_total_num_tokens);
	mpc_add_u64(o, "k_size_bytes", p->k_size_bytes);
	mpc_add_u64(o, "v_size_bytes", p->k_size_bytes);
	mpc_add_u64(o, "max_running_requests", p->max_running_requests);
	mpc_add_num(o, "max_concurrency", p->max_concurrency);
	cJSON_AddBoolToObject(o, "serves_max_model_len", p->serves_max_model_len);
	cJSON_AddBoolToObject(o, "holds_batch", p->max_concurrency >= (double)j->req.batch_size);
	mpc_add_num(o, "required_mem_fraction_static", ceil(p->required_memory_fraction * 1000) / 1000);
	l = cJSON_AddArrayToObject(o, "log_lines");
	line(l, "Load weight begin. avail mem=%.2f GB", p->total_gpu_memory_gib);
	line(l, "Load weight end. avail mem=%.2f GB, mem usage=%.2f GB.", p->available_after_weights_gib,
	     (double)in->weights_bytes / GIB);
	if (p->max_total_num_tokens == 0) {
		line(l, "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.");
		return o;
	}
	line(l, "KV Cache is allocated. #tokens: %llu, K size: %.2f GB, V size: %.2f GB",
	     (unsigned long long)p->max_total_num_tokens, (double)p->k_size_bytes / GIB, (double)p->k_size_bytes / GIB);
	line(l, "Memory pool end. avail mem=%.2f GB", p->available_after_weights_gib - 2 * (double)p->k_size_bytes / GIB);
	return o;
}

static cJSON *trtllm_predicted(const mps_engine_block *b, const mps_inference_job *j)
{
	const mp_engine_prediction *p = &b->predicted;
	const mp_engine_inputs *in = &b->inputs;
	cJSON *o = cJSON_CreateObject(), *l;

	mpc_add_u64(o, "total_memory_bytes", in->total_memory_bytes);
	mpc_add_num(o, "free_gpu_memory_fraction", in->memory_fraction);
	mpc_add_u64(o, "weights_bytes", in->weights_bytes);
	mpc_add_u64(o, "peak_memory_bytes", p->peak_memory_bytes);
	mpc_add_i64(o, "available_kv_cache_bytes", p->available_kv_cache_bytes);
	mpc_add_u64(o, "kv_size_per_token_bytes", p->kv_size_per_token_bytes);
	mpc_add_u64(o, "max_tokens", p->max_tokens);
	mpc_add_u64(o, "tokens_per_block", in->block_size);
	mpc_add_u64(o, "blocks_in_primary_pool", p->blocks_in_primary_pool);
	mpc_add_num(o, "max_concurrency", p->max_concurrency);
	cJSON_AddBoolToObject(o, "serves_max_model_len", p->serves_max_model_len);
	cJSON_AddBoolToObject(o, "holds_batch", p->max_concurrency >= (double)j->req.batch_size);
	mpc_add_num(o, "required_free_gpu_memory_fraction", ceil(p->required_memory_fraction * 1000) / 1000);
	l = cJSON_AddArrayToObject(o, "log_lines");
	line(l, "Memory used after loading model weights (inside torch) in memory usage profiling: %.2f GiB",
	     (double)in->weights_bytes / GIB);
	line(l,
	     "Peak memory during memory usage profiling (torch + non-torch): %.2f GiB, available KV cache memory when "
	     "calculating max tokens: %.2f GiB, fraction is set %g, kv size is %llu. device total memory %.2f GiB",
	     (double)p->peak_memory_bytes / GIB, (double)p->available_kv_cache_bytes / GIB, in->memory_fraction,
	     (unsigned long long)p->kv_size_per_token_bytes, (double)in->total_memory_bytes / GIB);
	line(l, "Estimated max tokens in KV cache : %llu", (unsigned long long)p->max_tokens);
	line(l, "Number of blocks in KV cache primary pool: %llu", (unsigned long long)p->blocks_in_primary_pool);
	return o;
}

cJSON *mpc_engine_block_json(const mps_inference_job *j, const mps_inference_plan *p)
{
	const mps_engine_block *b = &p->engine;
	cJSON *o = cJSON_CreateObject(), *a, *d, *notes;
	char *cmd;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "name", mp_engine_name(b->engine));
	cJSON_AddStringToObject(o, "source", b->source ? b->source : "");
	cmd = mpc_engine_command(b);
	if (cmd) {
		cJSON_AddStringToObject(o, "command", cmd);
		free(cmd);
	}
	cJSON_AddStringToObject(o, "model_argument", b->model_arg);
	a = cJSON_AddArrayToObject(o, "args");
	for (size_t i = 0; i < b->nargs; i++) {
		cJSON *x = cJSON_CreateObject();

		cJSON_AddStringToObject(x, "flag", b->args[i].flag);
		if (b->args[i].value[0])
			cJSON_AddStringToObject(x, "value", b->args[i].value);
		else
			cJSON_AddNullToObject(x, "value");
		cJSON_AddStringToObject(x, "source", b->args[i].source);
		mpc_append(a, x);
	}
	if (b->extra_options_yaml[0])
		cJSON_AddStringToObject(o, "extra_llm_api_options_yaml", b->extra_options_yaml);
	d = cJSON_AddObjectToObject(o, "defaults");
	cJSON_AddStringToObject(d, "device_class", b->defaults.device_class ? b->defaults.device_class : "");
	mpc_add_u64(d, "max_num_batched_tokens", b->defaults.max_num_batched_tokens);
	mpc_add_u64_or_null(d, "max_num_seqs", b->defaults.max_num_seqs);
	mpc_add_num(d, "memory_fraction", b->defaults.memory_fraction);
	mpc_add_u64(d, "block_size", b->defaults.block_size);
	if (!b->have_prediction)
		cJSON_AddNullToObject(o, "predicted");
	else if (b->engine == MP_ENGINE_VLLM)
		mpc_add_item(o, "predicted", vllm_predicted(b, j));
	else if (b->engine == MP_ENGINE_SGLANG)
		mpc_add_item(o, "predicted", sglang_predicted(b, j));
	else
		mpc_add_item(o, "predicted", trtllm_predicted(b, j));
	notes = cJSON_AddArrayToObject(o, "notes");
	if (b->have_prediction && p->device.hw.usable_memory_bytes == 0)
		mpc_append(notes, cJSON_CreateString(
					  "The device profile has no usable_memory_bytes: the engine's total is taken as "
					  "memory_bytes, the marketed capacity, which is above what CUDA reports (an H100 "
					  "80GB gives 79.2 GiB): predicted overstates the KV cache by the difference."));
	if (!b->have_prediction)
		mpc_append(notes, cJSON_CreateString("predicted needs a device: the engines size the KV cache from "
						     "its memory"));
	if (b->engine == MP_ENGINE_VLLM)
		mpc_append(notes, cJSON_CreateString(
					  "vLLM V1 budgets total x gpu_memory_utilization for weights, the profile "
					  "run's activation peak, the memory outside PyTorch it adds (not modelled: "
					  "counted 0) and the KV cache; the CUDA context it created before its baseline "
					  "lies outside. --max-num-seqs and --max-model-len are the plan's batch_size "
					  "and sequence_length, so the profile run and the plan prefill the same tokens."));
	else if (b->engine == MP_ENGINE_SGLANG)
		mpc_append(notes, cJSON_CreateString(
					  "SGLang: mem_fraction_static is the share of the memory free before the "
					  "weights (total less the CUDA context) that weights and the KV pool may take; "
					  "its default is its rule for the GPU's memory (defaults.memory_fraction). Its "
					  "\"GB\" are GiB."));
	else
		mpc_append(notes, cJSON_CreateString(
					  "TensorRT-LLM (PyTorch backend): free_gpu_memory_fraction is the share of the "
					  "memory left after the profile run's peak (weights, activations, the CUDA "
					  "context) that the KV cache takes; quantised weights come from the checkpoint "
					  "(ModelOpt), not a flag."));
	return o;
}
