/*
 * mpc_engine.c: the serving engines in text: the engine block of an inference plan (launch arguments, one
 * ready-to-paste command, the figures the engine will print, in its own printf formats). Reads the structs
 * service/ fills; computes nothing of its own. What an engine printed is mpc_engine_log.c's.
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

/* The room a word takes at most: a blank, two quotes, and each byte four times (a quote is '\''). */
static size_t word_room(const char *s)
{
	return s ? 3 + 4 * strlen(s) : 0;
}

char *mpc_engine_command(const mps_engine_block *b)
{
	/* the buffer holds the longest line the words can make: never cut */
	size_t room = strlen(b->program) + word_room(b->model_flag) + word_room(b->model_arg) + 8;
	char *buf;

	for (size_t i = 0; i < b->nargs; i++)
		room += word_room(b->args[i].flag) + word_room(b->args[i].value);
	if ((buf = malloc(room)) != NULL)
		command_text(b, buf, room);
	return buf;
}

/* str(round(x, 2)) as Python prints it (vLLM 0.33's format_gib): "14.99", "56.6", "14.0". */
static const char *py_round2(double x, char *buf, size_t len)
{
	size_t n;

	snprintf(buf, len, "%.2f", x);
	n = strlen(buf);
	if (n >= 4 && buf[n - 1] == '0')
		buf[--n] = '\0'; /* one trailing zero goes; "x.0" keeps its digit, as repr does */
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

static void line(mpc_out *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void line(mpc_out *w, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	mpc_w_str(w, NULL, buf);
}

/* Every memory term beyond weights and KV the release subtracts, each with its source. */
static void terms_write(mpc_out *w, const mp_engine_prediction *p)
{
	mpc_w_arr(w, "terms");
	for (size_t i = 0; i < p->nterms; i++) {
		mpc_w_obj(w, NULL);
		mpc_w_str(w, "term", p->terms[i].name);
		mpc_w_u64(w, "bytes", p->terms[i].bytes);
		mpc_w_bool(w, "in_budget", p->terms[i].in_budget);
		mpc_w_str(w, "source", p->terms[i].source);
		mpc_w_end(w);
	}
	mpc_w_end(w);
}

/* A term the prediction took from observations (service/mps_observe.h): its value, "<term>_from": "observed" and how
 * many. Written only then, so an answer without observations is the model's alone, byte for byte. */
static void observed_term(mpc_out *w, const mps_engine_block *b, mps_obs_term t)
{
	char key[64];
	const char *name = mps_obs_term_name(t);
	size_t n = strlen(name) - strlen("_bytes");

	if (!b->observed[t].observed)
		return;
	mpc_w_u64(w, name, b->inputs.observed_bytes);
	snprintf(key, sizeof(key), "%s_from", name);
	mpc_w_lit(w, key, "observed");
	snprintf(key, sizeof(key), "%.*s_observations", (int)n, name);
	mpc_w_u64(w, key, b->observed[t].observations);
	snprintf(key, sizeof(key), "%.*s_modelled_bytes", (int)n, name);
	mpc_w_i64(w, key, b->observed[t].modelled_bytes);
	if (b->observed_version_line[0])
		mpc_w_str(w, "observed_engine_version", b->observed_version_line);
}

static void vllm_predicted(mpc_out *w, const mps_engine_block *b, const mps_inference_job *j)
{
	const mp_engine_prediction *p = &b->predicted;
	const mp_engine_inputs *in = &b->inputs;
	char tok[32], len[32];

	mpc_w_obj(w, "predicted");
	mpc_w_u64(w, "total_memory_bytes", in->total_memory_bytes);
	mpc_w_num(w, "gpu_memory_utilization", in->memory_fraction);
	mpc_w_u64(w, "requested_memory_bytes", p->requested_memory_bytes);
	mpc_w_u64(w, "weights_bytes", in->weights_bytes);
	mpc_w_u64(w, "activation_peak_bytes", p->profile_peak_bytes ? p->profile_peak_bytes : in->activation_bytes);
	mpc_w_u64(w, "cuda_graph_bytes", p->cuda_graph_bytes);
	observed_term(w, b, MPS_OBS_NON_TORCH);
	mpc_w_u64(w, "non_kv_cache_bytes", p->non_kv_cache_bytes);
	terms_write(w, p);
	mpc_w_i64(w, "available_kv_cache_bytes", p->available_kv_cache_bytes);
	mpc_w_u64(w, "block_bytes_per_layer", p->page_bytes);
	mpc_w_u64(w, "kv_cache_groups", p->kv_groups);
	mpc_w_u64(w, "layers_per_group", p->group_layers);
	mpc_w_u64(w, "num_gpu_blocks", p->num_gpu_blocks);
	mpc_w_u64(w, "kv_cache_tokens", p->kv_cache_tokens);
	mpc_w_u64(w, "blocks_per_request", p->blocks_per_request);
	mpc_w_num(w, "max_concurrency", p->max_concurrency);
	mpc_w_u64(w, "max_concurrency_tokens_per_request", in->max_model_len);
	mpc_w_u64(w, "needed_kv_cache_bytes", p->needed_kv_cache_bytes);
	mpc_w_bool(w, "serves_max_model_len", p->serves_max_model_len);
	mpc_w_u64(w, "estimated_max_model_len", p->estimated_max_model_len);
	mpc_w_bool(w, "holds_batch", p->max_concurrency >= (double)j->req.batch_size);
	mpc_w_num(w, "required_gpu_memory_utilization", ceil(p->required_memory_fraction * 1000) / 1000);
	mpc_w_arr(w, "log_lines");
	if (in->version && in->version->budget == MP_BUDGET_VLLM_V1_CONSUMED) {
		/* vLLM 0.33.0: utils/mem_utils.py format_gib (str(round(x / GiB, 2))), gpu_model_runner.py "Model loading
		 * took %s GiB memory", gpu_worker.py "Available KV cache memory: %s GiB", kv_cache_utils.py
		 * update_kv_cache_capacity's one line; kv_cache_planning.py raises before that line is logged */
		char a[32], b2[32];

		line(w, "Model loading took %s GiB memory", py_round2((double)in->weights_bytes / GIB, a, sizeof(a)));
		if (p->available_kv_cache_bytes <= 0) {
			line(w, "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
				"when initializing the engine.");
		} else {
			line(w, "Available KV cache memory: %s GiB",
			     py_round2((double)p->available_kv_cache_bytes / GIB, a, sizeof(a)));
			grouped(p->kv_cache_tokens, tok, sizeof(tok));
			grouped(in->max_model_len, len, sizeof(len));
			if (!p->serves_max_model_len)
				line(w,
				     "ValueError: To serve at least one request with the model's max seq len (%llu), (%s GiB "
				     "KV cache is needed, which is larger than the available KV cache memory (%s GiB). Based "
				     "on the available memory, the estimated maximum model length is %llu.",
				     (unsigned long long)in->max_model_len,
				     py_round2((double)p->needed_kv_cache_bytes / GIB, a, sizeof(a)),
				     py_round2((double)p->available_kv_cache_bytes / GIB, b2, sizeof(b2)),
				     (unsigned long long)p->estimated_max_model_len);
			else
				line(w, "GPU KV cache size: %s tokens, Maximum concurrency for %s tokens per request: %.2fx",
				     tok, len, p->max_concurrency);
		}
		mpc_w_end(w);
		mpc_w_end(w);
		return;
	}
	line(w, "Model loading took %.4f GiB", (double)in->weights_bytes / GIB);
	if (p->available_kv_cache_bytes <= 0) {
		line(w, "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
			"when initializing the engine.");
	} else {
		line(w, "Available KV cache memory: %.2f GiB", (double)p->available_kv_cache_bytes / GIB);
		grouped(p->kv_cache_tokens, tok, sizeof(tok));
		grouped(in->max_model_len, len, sizeof(len));
		line(w, "GPU KV cache size: %s tokens", tok);
		line(w, "Maximum concurrency for %s tokens per request: %.2fx", len, p->max_concurrency);
		if (!p->serves_max_model_len)
			line(w,
			     "ValueError: To serve at least one request with the models's max seq len (%llu), (%.2f GiB KV "
			     "cache is needed, which is larger than the available KV cache memory (%.2f GiB). Based on the "
			     "available memory, the estimated maximum model length is %llu.",
			     (unsigned long long)in->max_model_len, (double)p->needed_kv_cache_bytes / GIB,
			     (double)p->available_kv_cache_bytes / GIB, (unsigned long long)p->estimated_max_model_len);
	}
	mpc_w_end(w);
	mpc_w_end(w);
}

static void sglang_predicted(mpc_out *w, const mps_engine_block *b, const mps_inference_job *j)
{
	const mp_engine_prediction *p = &b->predicted;
	const mp_engine_inputs *in = &b->inputs;

	mpc_w_obj(w, "predicted");
	mpc_w_u64(w, "total_memory_bytes", in->total_memory_bytes);
	mpc_w_u64(w, "total_gpu_memory_bytes", (uint64_t)(p->total_gpu_memory_gib * GIB));
	mpc_w_num(w, "mem_fraction_static", in->memory_fraction);
	observed_term(w, b, MPS_OBS_CONTEXT);
	mpc_w_u64(w, "weights_bytes", in->weights_bytes);
	terms_write(w, p);
	mpc_w_u64(w, "available_after_weights_bytes",
		  p->available_after_weights_gib > 0 ? (uint64_t)(p->available_after_weights_gib * GIB) : 0);
	mpc_w_i64(w, "rest_memory_bytes", (int64_t)(p->rest_memory_gib * GIB));
	mpc_w_u64(w, "cell_size_bytes", p->cell_size_bytes);
	mpc_w_u64(w, "max_total_num_tokens", p->max_total_num_tokens);
	mpc_w_u64(w, "k_size_bytes", p->k_size_bytes);
	mpc_w_u64(w, "v_size_bytes", p->k_size_bytes);
	mpc_w_u64(w, "max_running_requests", p->max_running_requests);
	mpc_w_num(w, "max_concurrency", p->max_concurrency);
	mpc_w_bool(w, "serves_max_model_len", p->serves_max_model_len);
	mpc_w_bool(w, "holds_batch", p->max_concurrency >= (double)j->req.batch_size);
	mpc_w_num(w, "required_mem_fraction_static", ceil(p->required_memory_fraction * 1000) / 1000);
	mpc_w_arr(w, "log_lines");
	line(w, "Load weight begin. avail mem=%.2f GB", p->total_gpu_memory_gib);
	line(w, "Load weight end. avail mem=%.2f GB, mem usage=%.2f GB.", p->available_after_weights_gib,
	     (double)in->weights_bytes / GIB);
	if (p->max_total_num_tokens == 0) {
		line(w, "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.");
	} else {
		line(w, "KV Cache is allocated. #tokens: %llu, K size: %.2f GB, V size: %.2f GB",
		     (unsigned long long)p->max_total_num_tokens, (double)p->k_size_bytes / GIB,
		     (double)p->k_size_bytes / GIB);
		line(w, "Memory pool end. avail mem=%.2f GB",
		     p->available_after_weights_gib - 2 * (double)p->k_size_bytes / GIB);
	}
	mpc_w_end(w);
	mpc_w_end(w);
}

static void trtllm_predicted(mpc_out *w, const mps_engine_block *b, const mps_inference_job *j)
{
	const mp_engine_prediction *p = &b->predicted;
	const mp_engine_inputs *in = &b->inputs;

	mpc_w_obj(w, "predicted");
	mpc_w_u64(w, "total_memory_bytes", in->total_memory_bytes);
	mpc_w_num(w, "free_gpu_memory_fraction", in->memory_fraction);
	mpc_w_u64(w, "weights_bytes", in->weights_bytes);
	mpc_w_u64(w, "peak_memory_bytes", p->peak_memory_bytes);
	terms_write(w, p);
	mpc_w_i64(w, "available_kv_cache_bytes", p->available_kv_cache_bytes);
	mpc_w_u64(w, "kv_size_per_token_bytes", p->kv_size_per_token_bytes);
	mpc_w_u64(w, "max_tokens", p->max_tokens);
	mpc_w_u64(w, "tokens_per_block", in->block_size);
	mpc_w_u64(w, "blocks_in_primary_pool", p->blocks_in_primary_pool);
	mpc_w_num(w, "max_concurrency", p->max_concurrency);
	mpc_w_bool(w, "serves_max_model_len", p->serves_max_model_len);
	mpc_w_bool(w, "holds_batch", p->max_concurrency >= (double)j->req.batch_size);
	mpc_w_num(w, "required_free_gpu_memory_fraction", ceil(p->required_memory_fraction * 1000) / 1000);
	mpc_w_arr(w, "log_lines");
	line(w, "Memory used after loading model weights (inside torch) in memory usage profiling: %.2f GiB",
	     (double)in->weights_bytes / GIB);
	line(w,
	     "Peak memory during memory usage profiling (torch + non-torch): %.2f GiB, available KV cache memory when "
	     "calculating max tokens: %.2f GiB, fraction is set %g, kv size is %llu. device total memory %.2f GiB",
	     (double)p->peak_memory_bytes / GIB, (double)p->available_kv_cache_bytes / GIB, in->memory_fraction,
	     (unsigned long long)p->kv_size_per_token_bytes, (double)in->total_memory_bytes / GIB);
	line(w, "Estimated max tokens in KV cache : %llu", (unsigned long long)p->max_tokens);
	line(w, "Number of blocks in KV cache primary pool: %llu", (unsigned long long)p->blocks_in_primary_pool);
	mpc_w_end(w);
	mpc_w_end(w);
}

void mpc_engine_block_write(mpc_out *w, const char *key, const mps_inference_job *j, const mps_inference_plan *p)
{
	const mps_engine_block *b = &p->engine;
	char *cmd = mpc_engine_command(b);

	if (cmd == NULL) {
		w->failed = true; /* out of memory: the answer would lack its command */
		return;
	}
	mpc_w_obj(w, key);
	mpc_w_str(w, "name", mp_engine_name(b->engine));
	mpc_w_str(w, "version", b->version ? b->version->name : "");
	mpc_w_str(w, "version_from", b->version_from ? b->version_from : "default");
	mpc_w_str(w, "release", b->version ? b->version->release : "");
	mpc_w_str(w, "source", b->source ? b->source : "");
	mpc_w_u64(w, "replicas", b->replicas);
	mpc_w_str(w, "quantization", b->quantization ? b->quantization : "");
	mpc_w_str(w, "quantization_from", b->quantization_how ? b->quantization_how : "");
	mpc_w_bool(w, "model_argument_known", b->model_arg_known);
	mpc_w_str(w, "command", cmd);
	free(cmd);
	mpc_w_str(w, "model_argument", b->model_arg);
	mpc_w_arr(w, "args");
	for (size_t i = 0; i < b->nargs; i++) {
		mpc_w_obj(w, NULL);
		mpc_w_str(w, "flag", b->args[i].flag);
		if (b->args[i].value[0])
			mpc_w_str(w, "value", b->args[i].value);
		else
			mpc_w_null(w, "value");
		mpc_w_str(w, "source", b->args[i].source);
		mpc_w_end(w);
	}
	mpc_w_end(w);
	if (b->extra_options_yaml[0])
		mpc_w_str(w, "extra_llm_api_options_yaml", b->extra_options_yaml);
	mpc_w_obj(w, "defaults");
	mpc_w_str(w, "device_class", b->defaults.device_class ? b->defaults.device_class : "");
	mpc_w_u64(w, "max_num_batched_tokens", b->defaults.max_num_batched_tokens);
	mpc_w_u64_or_null(w, "max_num_seqs", b->defaults.max_num_seqs);
	mpc_w_num(w, "memory_fraction", b->defaults.memory_fraction);
	mpc_w_u64(w, "block_size", b->defaults.block_size);
	mpc_w_u64_or_null(w, "device_memory_bytes", b->defaults.device_memory_bytes);
	mpc_w_end(w);
	if (!b->have_prediction)
		mpc_w_null(w, "predicted");
	else if (b->engine == MP_ENGINE_VLLM)
		vllm_predicted(w, b, j);
	else if (b->engine == MP_ENGINE_SGLANG)
		sglang_predicted(w, b, j);
	else
		trtllm_predicted(w, b, j);
	mpc_w_arr(w, "notes");
	if (b->have_prediction && p->device.hw.usable_memory_bytes == 0)
		mpc_w_lit(w, NULL,
			  "The device profile has no usable_memory_bytes: the engine's total is taken as "
			  "memory_bytes, the marketed capacity, which is above what CUDA reports (an H100 "
			  "80GB gives 79.2 GiB): predicted overstates the KV cache by the difference.");
	if (!b->have_prediction)
		mpc_w_lit(w, NULL, "predicted needs a device: the engines size the KV cache from its memory");
	if (b->engine == MP_ENGINE_VLLM)
		mpc_w_lit(w, NULL,
			  "vLLM budgets total x gpu_memory_utilization for the weights, the profile "
			  "run's peak (its forward per rank, or its sampler over max_num_seqs), the "
			  "memory outside PyTorch it adds, the CUDA-graph estimate (0.21 on) and the KV "
			  "cache; predicted.terms lists each with its source, and which lie outside the "
			  "budget (the CUDA context; NCCL from 0.21 on). With tensor parallelism the "
			  "engine keeps the smallest rank's blocks. --max-num-seqs and --max-model-len "
			  "are the plan's batch_size and sequence_length.");
	else if (b->engine == MP_ENGINE_SGLANG)
		mpc_w_str(w, NULL,
			  "SGLang: mem_fraction_static is the share of the memory free before the "
			  "weights (total less the CUDA context) that weights and the KV pool may take; "
			  "its default is its rule for the GPU's memory (defaults.memory_fraction). Its "
			  "\"GB\" are GiB.");
	else
		mpc_w_lit(w, NULL,
			  "TensorRT-LLM (PyTorch backend): free_gpu_memory_fraction is the share of the "
			  "memory left after the profile run's peak (weights, activations, the CUDA "
			  "context) that the KV cache takes; quantised weights come from the checkpoint "
			  "(ModelOpt), not a flag.");
	mpc_w_end(w);
	mpc_w_end(w);
}
