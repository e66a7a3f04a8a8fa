/*
 * mpc_engine_log.c: what a serving engine printed: the reader of a pasted start-up log or metrics exposition (POSIX
 * extended regular expressions, one table per engine, each pattern behind a literal keyword so a long log costs one
 * substring search per line and pattern), and POST /v1/engine-check's request and answer (the plan inside it is
 * mpc_inference.c's). Reads the structs service/ fills; computes nothing of its own.
 */
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/fields.h"
#include "codec.h"

#define GIB 1073741824.0

/* ----- reading a pasted log ---------------------------------------------------------------------------- */

/* One pattern: a literal the line must hold, an extended regular expression, and the figure of each group. */
typedef struct pattern {
	mp_engine engine;
	const char *keyword;
	const char *regex;
	mps_figure figs[5];	/* per group 1..5; MPS_FIG_COUNT = not a figure */
	int tokens_group;	/* the group holding the tokens per request the figures name (0 = none) */
	int max_decimals;	/* cap on the decimals a figure is held to (float32 fractions print 16) */
	bool refusal;		/* the line is the engine refusing max_model_len */
} pattern;

#define NUM "(-?[0-9][0-9,]*\\.?[0-9]*)"
#define NONE MPS_FIG_COUNT /* a group that is not a figure */

static const pattern patterns[] = {
	/* vLLM V1 (gpu_model_runner, gpu_worker, kv_cache_utils) and V0 (model_runner, worker, executor_base) */
	{MP_ENGINE_VLLM, "loading took", "Model loading took " NUM " ?GiB", {MPS_FIG_WEIGHTS_LOADED_GIB, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_VLLM, "model weights took", "Loading model weights took " NUM " ?GB", {MPS_FIG_WEIGHTS_LOADED_GIB, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_VLLM, "x gpu_memory_utilization",
	 "total_gpu_memory \\(" NUM " ?GiB\\) x gpu_memory_utilization \\(" NUM "\\) = " NUM " ?GiB",
	 {MPS_FIG_TOTAL_GPU_MEMORY_GIB, MPS_FIG_MEMORY_FRACTION, MPS_FIG_REQUESTED_MEMORY_GIB, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_VLLM, "model weights take",
	 "model weights take " NUM " ?GiB; non_torch_memory takes " NUM " ?GiB; PyTorch activation peak memory takes "
	 NUM " ?GiB; the rest of the memory reserved for KV Cache is " NUM " ?GiB",
	 {MPS_FIG_WEIGHTS_LOADED_GIB, MPS_FIG_NON_TORCH_MEMORY_GIB, MPS_FIG_ACTIVATION_PEAK_GIB,
	  MPS_FIG_AVAILABLE_KV_CACHE_GIB, NONE}, 0, 0, false},
	{MP_ENGINE_VLLM, "Memory profiling results",
	 "total_gpu_memory=" NUM "GiB .*peak_torch_memory=" NUM "GiB .*non_torch_memory=" NUM "GiB kv_cache_size=" NUM
	 "GiB gpu_memory_utilization=" NUM,
	 {MPS_FIG_TOTAL_GPU_MEMORY_GIB, MPS_FIG_PEAK_TORCH_MEMORY_GIB, MPS_FIG_NON_TORCH_MEMORY_GIB,
	  MPS_FIG_AVAILABLE_KV_CACHE_GIB, MPS_FIG_MEMORY_FRACTION}, 0, 0, false},
	{MP_ENGINE_VLLM, "blocks:", "(GPU|CUDA|cuda) blocks: " NUM, {NONE, MPS_FIG_NUM_GPU_BLOCKS, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_VLLM, "Available KV cache memory", "Available KV cache memory: " NUM " ?GiB",
	 {MPS_FIG_AVAILABLE_KV_CACHE_GIB, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_VLLM, "GPU KV cache size", "GPU KV cache size: " NUM " tokens",
	 {MPS_FIG_KV_CACHE_TOKENS, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_VLLM, "Maximum concurrency for", "Maximum concurrency for " NUM " tokens per request: " NUM "x",
	 {NONE, MPS_FIG_MAX_CONCURRENCY, NONE, NONE, NONE}, 1, 0, false},
	{MP_ENGINE_VLLM, "max seq len",
	 "models?'s max seq len \\(" NUM "\\), \\(" NUM " GiB KV cache is needed, which is larger than the available KV "
	 "cache memory \\(" NUM " GiB\\)",
	 {NONE, MPS_FIG_NEEDED_KV_CACHE_GIB, MPS_FIG_AVAILABLE_KV_CACHE_GIB, NONE, NONE}, 1, 0, true},
	{MP_ENGINE_VLLM, "estimated maximum model length", "estimated maximum model length is " NUM,
	 {MPS_FIG_ESTIMATED_MAX_MODEL_LEN, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_VLLM, "can be stored in KV cache",
	 "max seq len \\(" NUM "\\) is larger than the maximum number of tokens that can be stored in KV cache \\(" NUM
	 "\\)",
	 {NONE, MPS_FIG_KV_CACHE_TOKENS, NONE, NONE, NONE}, 0, 0, true},
	/* vLLM 0.6.5's table ("Memory profiling results:" then one "name    value" line per figure); the "$" keeps
	 * each from the one-line forms of 0.6.2-0.7 */
	{MP_ENGINE_VLLM, "total_gpu_memory", "total_gpu_memory[ \t]+" NUM " ?GiB[ \t]*$",
	 {MPS_FIG_TOTAL_GPU_MEMORY_GIB, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_VLLM, "gpu_memory_utilization", "gpu_memory_utilization[ \t]+" NUM "[ \t]*$",
	 {MPS_FIG_MEMORY_FRACTION, NONE, NONE, NONE, NONE}, 0, 6, false},
	{MP_ENGINE_VLLM, "the current vLLM instance can use", "the current vLLM instance can use[ \t]+" NUM " ?GiB[ \t]*$",
	 {MPS_FIG_REQUESTED_MEMORY_GIB, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_VLLM, "model weights take", "model weights take[ \t]+" NUM " ?GiB[ \t]*$",
	 {MPS_FIG_WEIGHTS_LOADED_GIB, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_VLLM, "non_torch_memory", "non_torch_memory[ \t]+" NUM " ?GiB[ \t]*$",
	 {MPS_FIG_NON_TORCH_MEMORY_GIB, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_VLLM, "PyTorch activation peak memory", "PyTorch activation peak memory[ \t]+" NUM " ?GiB[ \t]*$",
	 {MPS_FIG_ACTIVATION_PEAK_GIB, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_VLLM, "available_kv_cache_memory", "available_kv_cache_memory[ \t]+" NUM " ?GiB[ \t]*$",
	 {MPS_FIG_AVAILABLE_KV_CACHE_GIB, NONE, NONE, NONE, NONE}, 0, 0, false},
	/* vLLM 0.21 on: the CUDA-graph estimate, and the kv_cache_memory_bytes suggestion's breakdown */
	{MP_ENGINE_VLLM, "Estimated CUDA graph memory", "Estimated CUDA graph memory: " NUM " ?GiB",
	 {MPS_FIG_CUDA_GRAPH_GIB, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_VLLM, "for CUDAGraph memory",
	 "usage:?[ is]*" NUM " ?GiB for weights?, " NUM " ?GiB for peak activation, " NUM
	 " ?GiB for non-torch memory,?[ and]*" NUM " ?GiB for CUDAGraph memory",
	 {MPS_FIG_WEIGHTS_LOADED_GIB, MPS_FIG_ACTIVATION_PEAK_GIB, MPS_FIG_NON_TORCH_MEMORY_GIB, MPS_FIG_CUDA_GRAPH_GIB,
	  NONE}, 0, 0, false},
	{MP_ENGINE_VLLM, "Desired GPU memory utilization is",
	 "Free memory on device \\(" NUM "/" NUM " ?GiB\\) on startup\\. Desired GPU memory utilization is \\(" NUM
	 ", " NUM " ?GiB\\)",
	 {MPS_FIG_FREE_GPU_MEMORY_GIB, MPS_FIG_TOTAL_GPU_MEMORY_GIB, MPS_FIG_MEMORY_FRACTION,
	  MPS_FIG_REQUESTED_MEMORY_GIB, NONE}, 0, 0, false},
	{MP_ENGINE_VLLM, "Free memory on device",
	 "Free memory on device \\(" NUM "/" NUM " ?GiB\\) on startup is less than desired GPU memory utilization \\("
	 NUM ", " NUM " ?GiB\\)",
	 {MPS_FIG_FREE_GPU_MEMORY_GIB, MPS_FIG_TOTAL_GPU_MEMORY_GIB, MPS_FIG_MEMORY_FRACTION,
	  MPS_FIG_REQUESTED_MEMORY_GIB, NONE}, 0, 0, false},
	/* SGLang (model_runner, memory_pool, scheduler) */
	{MP_ENGINE_SGLANG, "Load weight begin", "Load weight begin\\. avail mem=" NUM " ?GB",
	 {MPS_FIG_TOTAL_GPU_MEMORY_GIB, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_SGLANG, "Load weight end", "avail mem=" NUM " ?GB", {MPS_FIG_AVAILABLE_AFTER_WEIGHTS_GIB, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_SGLANG, "Load weight end", "mem usage=" NUM " ?GB", {MPS_FIG_WEIGHTS_LOADED_GIB, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_SGLANG, "KV Cache is allocated", "#tokens: " NUM ", K size: " NUM " ?GB, V size: " NUM " ?GB",
	 {MPS_FIG_KV_CACHE_TOKENS, MPS_FIG_K_CACHE_GIB, MPS_FIG_V_CACHE_GIB, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_SGLANG, "KV Cache is allocated", "#tokens: " NUM ", KV size: " NUM " ?GB",
	 {MPS_FIG_KV_CACHE_TOKENS, MPS_FIG_KV_CACHE_GIB, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_SGLANG, "Memory pool end", "Memory pool end\\. avail mem=" NUM " ?GB",
	 {MPS_FIG_AVAILABLE_AFTER_POOL_GIB, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_SGLANG, "max_total_num_tokens=", "max_total_num_tokens=" NUM, {MPS_FIG_KV_CACHE_TOKENS, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_SGLANG, "chunked_prefill_size=", "chunked_prefill_size=" NUM, {MPS_FIG_CHUNKED_PREFILL_SIZE, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_SGLANG, "max_running_requests=", "max_running_requests=" NUM, {MPS_FIG_MAX_RUNNING_REQUESTS, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_SGLANG, "context_len=", "context_len=" NUM, {MPS_FIG_CONTEXT_LEN, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_SGLANG, "mem_fraction_static=", "mem_fraction_static=" NUM, {MPS_FIG_MEMORY_FRACTION, NONE, NONE, NONE, NONE}, 0, 6, false},
	/* TensorRT-LLM: PyTorch backend (_util.py KvCacheCreator) and the C++ runtime (kvCacheManager) */
	{MP_ENGINE_TRTLLM, "loading model weights (inside torch)",
	 "Memory used after loading model weights \\(inside torch\\) in memory usage profiling: " NUM " ?GiB",
	 {MPS_FIG_WEIGHTS_LOADED_GIB, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_TRTLLM, "Peak memory during memory usage profiling",
	 "Peak memory during memory usage profiling \\(torch \\+ non-torch\\): " NUM " ?GiB",
	 {MPS_FIG_PEAK_TORCH_MEMORY_GIB, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_TRTLLM, "when calculating max tokens:", "available KV cache memory when calculating max tokens: " NUM " ?GiB",
	 {MPS_FIG_AVAILABLE_KV_CACHE_GIB, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_TRTLLM, "fraction is set", "fraction is set " NUM, {MPS_FIG_MEMORY_FRACTION, NONE, NONE, NONE, NONE}, 0, 6, false},
	{MP_ENGINE_TRTLLM, "kv size", "kv size (per token )?is " NUM, {NONE, MPS_FIG_KV_SIZE_PER_TOKEN_BYTES, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_TRTLLM, "device total memory", "device total memory " NUM " ?GiB", {MPS_FIG_TOTAL_GPU_MEMORY_GIB, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_TRTLLM, "Estimated max tokens in KV cache", "Estimated max tokens in KV cache *: *" NUM,
	 {MPS_FIG_KV_CACHE_TOKENS, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_TRTLLM, "Estimated max memory in KV cache", "Estimated max memory in KV cache *: *" NUM " ?GiB",
	 {MPS_FIG_AVAILABLE_KV_CACHE_GIB, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_TRTLLM, "calculating max tokens in paged kv cache",
	 "calculating max tokens in paged kv cache: total: " NUM " ?GiB, available: " NUM " ?GiB",
	 {MPS_FIG_TOTAL_GPU_MEMORY_GIB, MPS_FIG_AVAILABLE_AFTER_WEIGHTS_GIB, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_TRTLLM, "primary pool", "Number of blocks in KV cache primary pool: " NUM,
	 {MPS_FIG_NUM_GPU_BLOCKS, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_TRTLLM, "bytes for k/v cache", "Allocate " NUM " bytes for k/v cache", {MPS_FIG_KV_CACHE_BYTES, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_TRTLLM, "tokens in paged KV cache", "Using " NUM " tokens in paged KV cache", {MPS_FIG_KV_CACHE_TOKENS, NONE, NONE, NONE, NONE}, 0, 0, false},
	{MP_ENGINE_TRTLLM, "for max tokens in paged KV cache", "for max tokens in paged KV cache \\(" NUM "\\)",
	 {MPS_FIG_KV_CACHE_TOKENS, NONE, NONE, NONE, NONE}, 0, 0, false},
};

#define NPATTERNS (sizeof(patterns) / sizeof(patterns[0]))

/*
 * The vLLM release a line's format belongs to: V0's executor prints "# GPU blocks" ("# CUDA blocks" in 0.7) and the
 * "can be stored in KV cache" refusal; 0.6.2-0.6.4 the one-line "Memory profiling results:", 0.6.5 its table; V1
 * (0.8 on) "Available KV cache memory", "GPU KV cache size", "Model loading took" and the "GiB KV cache is needed"
 * refusal; 0.21 on the CUDA-graph estimate. Lines both print (the budget one-liners, "Maximum concurrency") decide
 * nothing.
 */
enum { F_NONE, F_V0, F_V0_06, F_V1, F_V1_021, F_V1_011 };

static const struct {
	const char *keyword;
	int format;
} formats[] = {
	{"Memory profiling results", F_V0_06}, {"total_gpu_memory", F_V0_06}, {"available_kv_cache_memory", F_V0_06},
	{"blocks:", F_V0}, {"can be stored in KV cache", F_V0},
	{"Available KV cache memory", F_V1}, {"GPU KV cache size", F_V1}, {"loading took", F_V1},
	{"max seq len", F_V1}, {"estimated maximum model length", F_V1},
	{"Estimated CUDA graph memory", F_V1_021}, {"for CUDAGraph memory", F_V1_021},
};

static void note_format(const char *keyword, unsigned *seen, const char **first)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(formats[i].keyword, keyword) == 0) {
			if (!(*seen >> formats[i].format & 1))
				first[formats[i].format] = keyword;
			*seen |= 1u << formats[i].format;
		}
}

/* The forms of V1's lines that tell 0.11 from 0.33 (vLLM 0.33.0 gpu_model_runner.py "Model loading took %s GiB
 * memory", kv_cache_utils.py update_kv_cache_capacity's one line; 0.11.0 "Model loading took %.4f GiB and %.6f
 * seconds" and the capacity and concurrency on two lines). */
static void note_v1_form(const char *line, unsigned *seen, const char **first)
{
	int f = F_NONE;
	const char *kw = NULL;

	if (strstr(line, "GPU KV cache size") && strstr(line, "Maximum concurrency for")) {
		f = F_V1_021;
		kw = "GPU KV cache size";
	} else if (strstr(line, "GPU KV cache size")) {
		f = F_V1_011;
		kw = "GPU KV cache size";
	} else if (strstr(line, "Model loading took") && strstr(line, "GiB memory")) {
		f = F_V1_021;
		kw = "loading took";
	} else if (strstr(line, "Model loading took") && strstr(line, " GiB and ")) {
		f = F_V1_011;
		kw = "loading took";
	}
	if (f == F_NONE)
		return;
	if (!(*seen >> f & 1))
		first[f] = kw;
	*seen |= 1u << f;
}

static void settle_format(mps_engine_report *r, unsigned seen, const char *const *first)
{
	bool v0 = seen & (1u << F_V0 | 1u << F_V0_06), v1 = seen & (1u << F_V1 | 1u << F_V1_021 | 1u << F_V1_011);

	if (r->engine != MP_ENGINE_VLLM || r->from_metrics || v0 == v1)
		return;
	if (v0) {
		r->format_line = seen & (1u << F_V0_06) ? "0.6" : "0.7";
		r->format_keyword = first[seen & (1u << F_V0_06) ? F_V0_06 : F_V0];
	} else if (seen & (1u << F_V1_021)) {
		r->format_line = "0.33";
		r->format_keyword = first[F_V1_021];
	} else if (seen & (1u << F_V1_011)) {
		r->format_line = "0.11";
		r->format_keyword = first[F_V1_011];
	} else {
		r->v1_only = true;
		r->format_keyword = first[F_V1];
	}
}

/* The keywords memplan reads for an engine, for the 422 of a log without any. */
static void keyword_list(mp_engine e, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < NPATTERNS; i++) {
		bool seen = false;
		int n;

		for (size_t k = 0; k < i && !seen; k++) /* a keyword several patterns share is named once */
			seen = patterns[k].engine == e && strcmp(patterns[k].keyword, patterns[i].keyword) == 0;
		if (patterns[i].engine != e || seen)
			continue;
		n = snprintf(buf + used, len - used, "%s\"%s\"", used ? ", " : "", patterns[i].keyword);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
	}
}

/* A number as printed ("42,656", "8.11", "-0.5") and its decimals. */
static double number_of(const char *s, size_t n, int *decimals)
{
	char buf[48];
	size_t o = 0;
	const char *dot = NULL;

	for (size_t i = 0; i < n && o + 1 < sizeof(buf); i++) {
		if (s[i] == ',')
			continue;
		if (s[i] == '.')
			dot = s + i;
		buf[o++] = s[i];
	}
	buf[o] = '\0';
	*decimals = dot ? (int)(s + n - dot - 1) : 0;
	if (*decimals > 15)
		*decimals = 15; /* a double holds no more */
	return strtod(buf, NULL);
}

/* A figure an engine can have printed: finite and within 2^53 (bytes, tokens and GiB all are), so every later
 * conversion to an integer is defined. */
static bool plausible(double v)
{
	return isfinite(v) && fabs(v) <= 9007199254740992.0;
}

static void add_figure(mps_engine_report *r, mps_figure kind, double v, int decimals, uint64_t tokens,
		       uint32_t lineno, const char *text, size_t textlen, bool refusal)
{
	mps_engine_figure *f;
	char tmp[sizeof(f->text)];
	size_t n = textlen < sizeof(tmp) - 1 ? textlen : sizeof(tmp) - 4; /* a line cut ends in "..." */

	if (r->nfigures == MPS_ENGINE_MAX_FIGURES) {
		r->figures_left_out++;
		return;
	}
	f = &r->figures[r->nfigures++];
	f->kind = kind;
	f->reported = v;
	f->decimals = decimals;
	f->tokens_per_request = tokens;
	f->line = lineno;
	f->refusal = refusal;
	memcpy(tmp, text, n);
	tmp[n] = '\0';
	mpc_utf8_sanitize(f->text, sizeof(f->text), tmp); /* a character cut at n becomes '?' */
	if (n < textlen)
		memcpy(f->text + strlen(f->text), "...", 4);
}

/* The labels of vllm:cache_config_info that are figures. */
static void metrics_line(mps_engine_report *r, const regex_t *label, const char *s, uint32_t lineno, const char *text,
			 size_t textlen)
{
	static const struct {
		const char *name;
		mps_figure kind;
		int max_decimals;
	} labels[] = {
		{"block_size", MPS_FIG_BLOCK_SIZE, 0},
		{"num_gpu_blocks", MPS_FIG_NUM_GPU_BLOCKS, 0},
		{"gpu_memory_utilization", MPS_FIG_MEMORY_FRACTION, 6},
		{"kv_cache_size_tokens", MPS_FIG_KV_CACHE_TOKENS, 0},
	};
	regmatch_t m[3];
	bool any = false;

	while (regexec(label, s, 3, m, 0) == 0) {
		size_t kl = (size_t)(m[1].rm_eo - m[1].rm_so);

		for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
			const char *v = s + m[2].rm_so;
			size_t vl = (size_t)(m[2].rm_eo - m[2].rm_so);
			char *end;
			int dec;
			double d;
			char num[48];

			if (strlen(labels[i].name) != kl || strncmp(s + m[1].rm_so, labels[i].name, kl) != 0 || vl == 0 ||
			    vl >= sizeof(num))
				continue;
			memcpy(num, v, vl);
			num[vl] = '\0';
			d = strtod(num, &end);
			if (*end != '\0' || !plausible(d) || d < 0) /* "None": not set */
				continue;
			(void)number_of(num, vl, &dec);
			if (dec > labels[i].max_decimals && labels[i].max_decimals)
				dec = labels[i].max_decimals;
			add_figure(r, labels[i].kind, d, dec, 0, lineno, text, textlen, false);
			any = true;
		}
		s += m[0].rm_eo;
	}
	r->lines_recognised += any;
}

/* SGLang's pool size as its /metrics gives it: the gauge sglang:max_total_num_tokens, set once at start-up (SGLang
 * 0.5.23 python/sglang/srt/observability/metrics_collector.py, emit_constants), labelled by model_name and the
 * ranks: "sglang:max_total_num_tokens{model_name=\"...\",...} 1.234e+06". The sample is the figure. */
static void sglang_metrics_line(mps_engine_report *r, uint32_t lineno, const char *line, size_t len)
{
	static const char name[] = "sglang:max_total_num_tokens";
	const char *v = line + sizeof(name) - 1;
	char *end;
	double d;

	if (strncmp(line, name, sizeof(name) - 1) != 0 || (*v != '{' && *v != ' '))
		return;
	if (*v == '{' && (v = strchr(v, '}')) == NULL)
		return;
	d = strtod(v + 1, &end);
	if (end == v + 1 || !plausible(d) || d < 0 || d != floor(d))
		return;
	add_figure(r, MPS_FIG_KV_CACHE_TOKENS, d, 0, 0, lineno, line, len, false);
	r->lines_recognised++;
}

/* The patterns, compiled once per process (pthread_once) and only read afterwards: regexec takes a const
 * regex_t, and glibc's regexec is safe to call from several threads on one compiled pattern. Compiling them
 * costs about 1.5 ms, far more than reading a log. */
static regex_t compiled[NPATTERNS], label_re;
static bool compiled_ok;
static pthread_once_t compile_once = PTHREAD_ONCE_INIT;

static void compile_patterns(void)
{
	for (size_t i = 0; i < NPATTERNS; i++)
		if (regcomp(&compiled[i], patterns[i].regex, REG_EXTENDED) != 0)
			return;
	if (regcomp(&label_re, "([a-zA-Z_][a-zA-Z0-9_]*)=\"([^\"]*)\"", REG_EXTENDED) != 0)
		return;
	compiled_ok = true;
}

mp_status mpc_engine_report_parse(mp_engine engine, const char *text, bool metrics, const char *pointer,
				  mps_engine_report *r, mp_error *err)
{
	const regex_t *re = compiled, *label = &label_re;
	const char *p = text;
	char linebuf[4097], *line = linebuf, *big = NULL;
	size_t bigcap = 0;
	uint32_t lineno = 0;
	unsigned seen = 0;
	const char *first[F_V1_011 + 1] = {NULL};

	memset(r, 0, sizeof(*r));
	r->engine = engine;
	r->from_metrics = metrics;
	pthread_once(&compile_once, compile_patterns);
	if (!compiled_ok)
		return mp_fail(err, MP_EINTERNAL, "", "a log pattern does not compile");
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p), k = n;
		bool recognised = false;

		lineno++;
		if (k > 0 && p[k - 1] == '\r')
			k--;
		line = linebuf;
		if (k >= sizeof(linebuf)) {
			/* a long line (a worker prefix, a wrapped paste) is read whole: the body bounds it */
			if (k + 1 > bigcap) {
				char *nb = realloc(big, k + 1);

				if (nb == NULL) {
					free(big);
					return mp_fail(err, MP_ENOMEM, "", "out of memory");
				}
				big = nb;
				bigcap = k + 1;
			}
			line = big;
		}
		{
			/* markdown emphasis and code spans around a figure ("**8.11** GiB", "`8.11 GiB`") are not
			 * part of what the engine printed */
			size_t o = 0;

			for (size_t i = 0; i < k; i++)
				if (p[i] != '*' && p[i] != '`')
					line[o++] = p[i];
			k = o;
			line[k] = '\0';
		}
		p += n + (eol != NULL);
		if (metrics) {
			const char *at = strstr(line, "vllm:cache_config_info{");

			if (engine == MP_ENGINE_VLLM && at && line[0] != '#')
				metrics_line(r, label, at, lineno, line, k);
			if (engine == MP_ENGINE_SGLANG)
				sglang_metrics_line(r, lineno, line, k);
			continue;
		}
		for (size_t i = 0; i < NPATTERNS; i++) {
			const pattern *pt = &patterns[i];
			regmatch_t m[6];
			uint64_t tokens = 0;

			if (pt->engine != engine || strstr(line, pt->keyword) == NULL ||
			    regexec(&re[i], line, 6, m, 0) != 0)
				continue;
			if (pt->tokens_group) {
				int d;
				double t = number_of(line + m[pt->tokens_group].rm_so,
						     (size_t)(m[pt->tokens_group].rm_eo - m[pt->tokens_group].rm_so), &d);

				if (!plausible(t) || t < 0)
					continue; /* no engine prints such a length: not its line */
				tokens = (uint64_t)t;
			}
			for (int g = 1; g <= 5; g++) {
				int dec;
				double v;

				if (pt->figs[g - 1] == NONE || m[g].rm_so < 0)
					continue;
				v = number_of(line + m[g].rm_so, (size_t)(m[g].rm_eo - m[g].rm_so), &dec);
				if (!plausible(v))
					continue;
				if (pt->max_decimals && dec > pt->max_decimals)
					dec = pt->max_decimals;
				add_figure(r, pt->figs[g - 1], v, dec, tokens, lineno, line, k, pt->refusal);
				recognised = true;
				note_format(pt->keyword, &seen, first);
				if (engine == MP_ENGINE_VLLM)
					note_v1_form(line, &seen, first);
			}
		}
		r->lines_recognised += recognised;
	}
	free(big);
	r->lines = lineno;
	settle_format(r, seen, first);
	if (r->nfigures == 0) {
		char kw[1024];

		keyword_list(engine, kw, sizeof(kw));
		return mp_fail(err, MP_EINVAL, pointer,
			       metrics ? "no vllm:cache_config_info sample with block_size, num_gpu_blocks, "
					 "gpu_memory_utilization or kv_cache_size_tokens (vLLM), nor sglang:max_total_num_tokens "
					 "(SGLang), in the %u lines of the metrics"
				       : "none of the %u lines is one memplan reads for %s: it looks for the start-up lines "
					 "holding %s",
			       lineno, mp_engine_name(engine), kw);
	}
	return MP_OK;
}

/* ----- POST /v1/engine-check ----------------------------------------------------------------------------- */

/* by mp_engine; llamacpp and ollama are read by mpc_llamacpp_log.c (the handler sends them there), named here so that a
 * wrong or missing engine's 422 lists every engine the endpoint takes */
static const char *const check_engines[] = {"vllm", "sglang", "trtllm", "llamacpp", "ollama", NULL};

typedef struct check_body {
	int engine;
} check_body;

static const mpm_field check_fields[] = {
	{.name = "engine", .type = MPM_F_ENUM, .required = true, .offset = offsetof(check_body, engine),
	 .names = check_engines},
	{.name = "log", .type = MPM_F_ANY},
	{.name = "metrics", .type = MPM_F_ANY},
	{.name = "plan", .type = MPM_F_ANY, .required = true},
};

mp_status mpc_engine_check_decode(const cJSON *body, mps_engine_check_request *out, mp_error *err)
{
	check_body cb = {-1};
	const cJSON *log = cJSON_GetObjectItemCaseSensitive(body, "log");
	const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(body, "metrics");
	const cJSON *plan = cJSON_GetObjectItemCaseSensitive(body, "plan"), *pe;
	const cJSON *text = NULL;
	mp_engine e = MP_ENGINE_NONE;
	mp_problems p = MP_PROBLEMS_INIT; /* every problem of the body, the plan's among them */
	mp_status st;

	memset(out, 0, sizeof(*out));
	st = mpm_decode_fields(body, "", check_fields, MPM_COUNT(check_fields), &cb, err);
	mp_problems_note(&p, st, err);
	if (st == MP_ENOMEM)
		return st;
	if (cb.engine >= 0)
		e = (mp_engine)(cb.engine + 1);
	if (e == MP_ENGINE_LLAMACPP || e == MP_ENGINE_OLLAMA) {
		/* their logs are mpc_llama_check_decode's: the handler sends them there (mpc_llama_check_engine) */
		mp_problems_note(&p,
				 mp_fail(err, MP_EINVAL, "/engine", "%s's start-up log is read by the llama.cpp check, "
					 "not this one", mp_engine_name(e)),
				 err);
		e = MP_ENGINE_NONE;
	}
	if ((log == NULL) == (metrics == NULL))
		mp_problems_note(&p,
				 mp_fail(err, MP_EINVAL, log ? "/metrics" : "/log",
					 "give exactly one of log (the engine's start-up log, pasted) and metrics (its "
					 "/metrics text, with vllm:cache_config_info)"),
				 err);
	else if (!cJSON_IsString(text = log ? log : metrics))
		mp_problems_note(&p,
				 mp_fail(err, MP_EINVAL, log ? "/log" : "/metrics", "%s must be a string (the text, as printed)",
					 log ? "log" : "metrics"),
				 err);
	else if (metrics && e == MP_ENGINE_TRTLLM)
		mp_problems_note(&p,
				 mp_fail(err, MP_EINVAL, "/metrics",
					 "metrics are read for vllm (vllm:cache_config_info) and sglang "
					 "(sglang:max_total_num_tokens); for %s paste its log",
					 mp_engine_name(e)),
				 err);
	/* the text is read once the engine it is for is known, before the plan: its lines may name vLLM's release */
	if (e != MP_ENGINE_NONE && cJSON_IsString(text))
		mp_problems_note(&p,
				 mpc_engine_report_parse(e, text->valuestring, metrics != NULL, log ? "/log" : "/metrics",
							 &out->report, err),
				 err);
	if (plan && !cJSON_IsObject(plan)) {
		mp_problems_note(&p,
				 mp_fail(err, MP_EINVAL, "/plan",
					 "plan must be an inference plan request (the body of POST /v1/plan/inference) with "
					 "the device the engine ran on"),
				 err);
	} else if (plan) {
		/* the plan is decoded as naming the check's engine (its engine knobs, mem_fraction_static and the
		 * like, are then allowed); with no valid engine, as it stands, for its own problems */
		cJSON *named;

		pe = cJSON_GetObjectItemCaseSensitive(plan, "engine");
		if (e != MP_ENGINE_NONE && pe && !(cJSON_IsString(pe) && strcmp(pe->valuestring, mp_engine_name(e)) == 0))
			mp_problems_note(&p,
					 mp_fail(err, MP_EINVAL, "/plan/engine",
						 "plan.engine, when given, must be the check's engine (%s); it can be left out",
						 mp_engine_name(e)),
					 err);
		named = cJSON_Duplicate(plan, true);
		if (named == NULL)
			return mp_fail(err, MP_ENOMEM, "", "out of memory");
		if (e != MP_ENGINE_NONE && pe == NULL && !cJSON_AddStringToObject(named, "engine", mp_engine_name(e))) {
			cJSON_Delete(named);
			return mp_fail(err, MP_ENOMEM, "", "out of memory");
		}
		/* no engine_version: the release whose format the log's lines are (vLLM 0.6's one-line budget, V0's
		 * blocks line, 0.21's CUDA-graph estimate), said in the answer's notes */
		if (out->report.format_line && cJSON_GetObjectItemCaseSensitive(plan, "engine_version") == NULL) {
			if (!cJSON_AddStringToObject(named, "engine_version", out->report.format_line)) {
				cJSON_Delete(named);
				return mp_fail(err, MP_ENOMEM, "", "out of memory");
			}
			out->version_from_log = true;
		}
		st = mpc_inference_decode(named, "/plan", true, &out->plan, err);
		cJSON_Delete(named);
		if (out->version_from_log)
			out->plan.job.engine.version_from = "log";
		if (st == MP_ENOMEM)
			return st;
		mp_problems_note(&p, st, err);
	}
	return mp_problems_end(&p, err);
}

void mpc_engine_check_write(mpc_out *w, const mps_engine_check_request *rq, const mps_engine_check *c)
{
	const mps_engine_report *r = &rq->report;
	bool refused = false;

	mpc_w_obj(w, NULL);
	mpc_w_str(w, "engine", mp_engine_name(r->engine));
	mpc_w_lit(w, "source", r->from_metrics ? "metrics" : "log");
	mpc_w_u64(w, "lines_read", r->lines);
	mpc_w_u64(w, "lines_recognised", r->lines_recognised);
	mpc_w_arr(w, "figures");
	for (size_t i = 0; i < r->nfigures; i++) {
		const mps_engine_figure *f = &r->figures[i];
		const mps_engine_comparison *k = &c->rows[i];

		mpc_w_obj(w, NULL);
		mpc_w_str(w, "figure", mps_figure_name(f->kind));
		mpc_w_u64(w, "line", f->line);
		mpc_w_str(w, "text", f->text);
		mpc_w_num(w, "reported", f->reported);
		mpc_w_u64_or_null(w, "tokens_per_request", f->tokens_per_request);
		if (k->have_predicted) {
			mpc_w_num(w, "predicted", k->predicted);
			mpc_w_num(w, "difference", f->reported - k->predicted);
			if (k->predicted != 0)
				mpc_w_num(w, "relative_difference", (f->reported - k->predicted) / fabs(k->predicted));
			else
				mpc_w_null(w, "relative_difference");
		} else {
			mpc_w_null(w, "predicted");
			mpc_w_null(w, "difference");
			mpc_w_null(w, "relative_difference");
		}
		mpc_w_num(w, "tolerance", k->tolerance);
		if (k->have_predicted)
			mpc_w_bool(w, "within_tolerance", k->within_tolerance);
		else
			mpc_w_null(w, "within_tolerance");
		mpc_w_str(w, "basis", k->have_predicted ? k->basis : "not modelled");
		if (k->explained_by[0])
			mpc_w_str(w, "explained_by", k->explained_by);
		else
			mpc_w_null(w, "explained_by");
		if (k->have_implied) {
			mpc_w_obj(w, "implied");
			mpc_w_num(w, "min", k->implied_min);
			mpc_w_num(w, "max", k->implied_max);
			mpc_w_str(w, "from", k->implied_from);
			mpc_w_end(w);
			mpc_w_bool(w, "consistent", k->consistent);
		} else {
			mpc_w_null(w, "implied");
			mpc_w_null(w, "consistent");
		}
		mpc_w_end(w);
		refused = refused || f->refusal;
	}
	mpc_w_end(w);
	mpc_w_obj(w, "summary");
	mpc_w_u64(w, "figures", r->nfigures);
	mpc_w_u64(w, "predicted", c->predicted);
	mpc_w_u64(w, "within_tolerance", c->within_tolerance);
	mpc_w_u64(w, "checked", c->checked);
	mpc_w_u64(w, "consistent", c->consistent);
	mpc_w_bool(w, "log_consistent", c->checked == c->consistent);
	mpc_w_bool(w, "engine_refused_max_model_len", refused);
	mpc_w_bool(w, "predicted_serves_max_model_len", c->plan.engine.predicted.serves_max_model_len);
	mpc_w_bool(w, "figures_left_out", r->figures_left_out > 0);
	mpc_w_end(w);
	mpc_inference_plan_member(w, "plan", &rq->plan, &c->plan);
	mpc_w_arr(w, "notes");
	if (r->figures_left_out) {
		char more[160];

		snprintf(more, sizeof(more), "%zu more figures were found after the first %d and left out (paste the "
			 "start-up lines alone to check them)", r->figures_left_out, MPS_ENGINE_MAX_FIGURES);
		mpc_w_str(w, NULL, more);
	}
	mpc_w_str(w, NULL,
		  "Each figure the engine printed, in the unit its name ends with (gib = 2^30 bytes, as every "
		  "engine prints it, SGLang's \"GB\" included): predicted is memplan's plan through the engine's "
		  "arithmetic (plan.engine), tolerance half a unit of the last digit printed; implied is what "
		  "the log's other figures give by the same arithmetic (blocks from the KV memory, tokens from "
		  "blocks, concurrency from tokens), consistent when the figure lies within it.");
	if (c->plan.mem.tensor_parallel_size > 1 && r->engine == MP_ENGINE_VLLM)
		mpc_w_str(w, NULL,
			  "With tensor parallelism vLLM keeps the smallest worker's blocks, and a pasted "
			  "\"Available KV cache memory\" line is one worker's: the blocks and tokens it "
			  "implies bound the engine's from above only.");
	if (rq->version_from_log || (r->v1_only && rq->plan.job.engine.version == NULL)) {
		char said[400];

		if (rq->version_from_log)
			snprintf(said, sizeof(said),
				 "plan.engine_version was not given: the log's \"%s\" line is vLLM %s's format, so the "
				 "plan is that release line's (%s); give plan.engine_version to check against another",
				 r->format_keyword, r->format_line, c->plan.engine.version ? c->plan.engine.version->release : "?");
		else
			snprintf(said, sizeof(said),
				 "plan.engine_version was not given: the log's \"%s\" line is vLLM V1's, printed alike by "
				 "0.11 and 0.33, so the plan is the newest line's (%s); give plan.engine_version 0.11 if "
				 "the engine was that release",
				 r->format_keyword, c->plan.engine.version ? c->plan.engine.version->release : "?");
		mpc_w_str(w, NULL, said);
	}
	mpc_w_lit(w, NULL, "Lines memplan does not read are ignored (lines_read - lines_recognised).");
	mpc_w_end(w);
	mpc_w_end(w);
}
