/*
 * mpc_k8s.c: kube-scheduler's extender v1 protocol both ways (see mpc_k8s.h). Decoding reads three things: the pod's GPU
 * request (its containers' nvidia.com/gpu or nvidia.com/mig-<profile> limits), the pod's job, and each node's GPU
 * facts. The job comes, in this order, from the annotation memplan.io/inference or memplan.io/training (a plan
 * endpoint's body without "device"), from memplan.io/model with one annotation per field (memplan.io/batch-size,
 * memplan.io/sequence-length, ...), or from the arguments of a vLLM or SGLang server container (which annotations
 * may override). Either way it becomes the plan endpoint's own body, decoded by the plan endpoint's own decoder, so
 * the rules and messages are the API's; only the names in messages become the annotation's or the argument's.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "mpc_k8s.h"

#define ANN_PREFIX "memplan.io/"
#define MAX_TOKENS 512
#define MAX_ORIGINS 48

static const cJSON *member(const cJSON *o, const char *k)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

/* v when it is an array or an object (its members can be walked), else NULL. */
static const cJSON *kids(const cJSON *v)
{
	return cJSON_IsArray(v) || cJSON_IsObject(v) ? v : NULL;
}

static const char *string_of(const cJSON *v)
{
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A Kubernetes label value: at most 63 of [A-Za-z0-9_.-] (apimachinery's IsValidLabelValue, without the rule on
 * the first and last character, which GFD always meets). */
static bool label_value_ok(const char *v)
{
	size_t n = strlen(v);

	if (n > 63)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)v[i]) || v[i] == '_' || v[i] == '.' || v[i] == '-'))
			return false;
	return true;
}

/* A whole count: decimal digits only (a Quantity of GPUs prints so), at most 1e12. */
static bool whole(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (s == NULL || *s == '\0')
		return false;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9' || v > UINT64_C(1000000000000))
			return false;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*out = v;
	return true;
}

/* A count given as a Quantity string ("8") or, leniently, a JSON number. */
static bool quantity(const cJSON *v, uint64_t *out)
{
	if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 1e12 &&
	    v->valuedouble == floor(v->valuedouble)) {
		*out = (uint64_t)v->valuedouble;
		return true;
	}
	return whole(string_of(v), out);
}

/* ----- model names --------------------------------------------------------------------------------------- */

static void add_candidate(char out[][MP_STORE_ID_MAX], size_t cap, size_t *n, const char *id)
{
	if (*n >= cap || !mp_valid_id(id))
		return;
	for (size_t i = 0; i < *n; i++)
		if (strcmp(out[i], id) == 0)
			return;
	snprintf(out[(*n)++], MP_STORE_ID_MAX, "%s", id);
}

/* s cut before the first of the variant tokens, or "" when it has none. */
static void cut_variant(const char *s, char *out, size_t len)
{
	static const char *const tokens[] = { "-instruct", "-chat", "-it", "-hf", "-base" };
	const char *best = NULL;

	for (size_t i = 0; i < sizeof(tokens) / sizeof(tokens[0]); i++) {
		size_t n = strlen(tokens[i]);

		for (const char *p = strstr(s, tokens[i]); p; p = strstr(p + 1, tokens[i]))
			if (p[n] == '\0' || p[n] == '-') { /* a whole token: "-it" is not the start of "-itx" */
				if (best == NULL || p < best)
					best = p;
				break;
			}
	}
	if (best == NULL || best == s) {
		out[0] = '\0';
		return;
	}
	snprintf(out, len, "%.*s", (int)(best - s), s);
}

size_t mpc_k8s_model_candidates(const char *name, char out[][MP_STORE_ID_MAX], size_t cap)
{
	char base[MP_STORE_ID_MAX + 64], forms[2][MP_STORE_ID_MAX + 64], cut[MP_STORE_ID_MAX + 64];
	const char *slash = strrchr(name, '/');
	size_t n = 0, i;

	if (slash && slash[1] == '\0') /* a path with a trailing '/' */
		return 0;
	snprintf(base, sizeof(base), "%s", slash ? slash + 1 : name);
	for (i = 0; base[i]; i++)
		base[i] = (char)tolower((unsigned char)base[i]);
	snprintf(forms[0], sizeof(forms[0]), "%s", base);
	snprintf(forms[1], sizeof(forms[1]), "%s", strncmp(base, "meta-", 5) == 0 ? base + 5 : "");
	for (i = 0; i < 2; i++)
		if (forms[i][0])
			add_candidate(out, cap, &n, forms[i]);
	for (i = 0; i < 2; i++) {
		if (!forms[i][0])
			continue;
		cut_variant(forms[i], cut, sizeof(cut));
		if (cut[0])
			add_candidate(out, cap, &n, cut);
	}
	return n;
}

/* ----- the pod --------------------------------------------------------------------------------------------- */

static void bad_job(mps_k8s_pod *pod, const char *fmt, const char *a, const char *b)
{
	char sa[200], sb[200];

	mpc_utf8_sanitize(sa, sizeof(sa), a ? a : "");
	mpc_utf8_sanitize(sb, sizeof(sb), b ? b : "");
	pod->state = MPS_K8S_BAD_JOB;
	snprintf(pod->error, sizeof(pod->error), fmt, sa, sb);
}

/* The GPU resource of one container list: adds (containers) or takes the largest (init containers) of each
 * container's limit, else its request. */
static void containers_gpus(const cJSON *list, bool init, mps_k8s_pod *pod, uint64_t *total)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, kids(list))
	{
		const cJSON *res = member(c, "resources"), *lim = member(res, "limits"), *req = member(res, "requests");
		const cJSON *src = lim ? lim : req, *q;
		const char *cname = string_of(member(c, "name"));

		cJSON_ArrayForEach(q, kids(src))
		{
			uint64_t v;

			if (q->string == NULL || /* limits given as a list: no resource names (not a pod) */
			    (strcmp(q->string, "nvidia.com/gpu") != 0 && strncmp(q->string, "nvidia.com/mig-", 15) != 0))
				continue;
			if (pod->state == MPS_K8S_BAD_JOB)
				return;
			if (!quantity(q, &v)) {
				bad_job(pod, "memplan: container %s: resources %s is not a whole count of GPUs", cname,
					q->string);
				return;
			}
			if (pod->resource[0] && strcmp(pod->resource, q->string) != 0) {
				bad_job(pod, "memplan: the pod asks for both %s and %s; memplan judges one kind of GPU",
					pod->resource, q->string);
				return;
			}
			snprintf(pod->resource, sizeof(pod->resource), "%s", q->string);
			if (init)
				*total = v > *total ? v : *total;
			else
				*total += v;
		}
	}
}

/* Tokens of a container's command and args; an element holding blanks (a "sh -c" script) is split at them, and
 * quotes around a piece are dropped. */
typedef struct tokens {
	char *t[MAX_TOKENS];
	size_t n;
	char buf[32768];
	size_t used;
} tokens;

static void add_tokens(tokens *tk, const char *s)
{
	while (s && *s && tk->n < MAX_TOKENS) {
		size_t n;

		while (*s && isspace((unsigned char)*s))
			s++;
		n = strcspn(s, " \t\n\r");
		if (n == 0)
			break;
		if (tk->used + n + 1 > sizeof(tk->buf))
			return;
		if (n >= 2 && (s[0] == '\'' || s[0] == '"') && s[n - 1] == s[0])
			memcpy(tk->buf + tk->used, s + 1, n - 2), tk->buf[tk->used + n - 2] = '\0';
		else
			memcpy(tk->buf + tk->used, s, n), tk->buf[tk->used + n] = '\0';
		tk->t[tk->n++] = tk->buf + tk->used;
		tk->used += n + 1;
		s += n;
	}
}

typedef enum engine { ENG_NONE = 0, ENG_VLLM, ENG_SGLANG } engine;

/* What a serving container's launch says. Numbers are 0 when absent. */
typedef struct launch {
	engine eng;
	char container[64];
	char model[256];
	uint64_t tp, pp, dp, seq, batched, block;
	double util;
	char dtype[32], quant[32], kv[32];
	char flag_tp[32], flag_seq[32], flag_util[32], flag_batched[32], flag_block[32];
} launch;

/* vLLM's human_readable_int (vllm/engine/arg_utils.py): lowercase k, m, g, t are decimal (1e3 ...) and take
 * decimals ("25.6k" = 25,600); uppercase K, M, G, T are binary (2^10 ...) and take whole numbers only. */
static bool human_int(const char *s, uint64_t *out)
{
	char *end = NULL;
	double v;
	size_t n = s ? strlen(s) : 0;
	char suffix = n ? s[n - 1] : '\0';
	double mult = 1;

	if (n == 0 || !isdigit((unsigned char)s[0]))
		return false;
	if (strchr("kmgt", suffix))
		mult = suffix == 'k' ? 1e3 : suffix == 'm' ? 1e6 : suffix == 'g' ? 1e9 : 1e12;
	else if (strchr("KMGT", suffix))
		mult = suffix == 'K' ? 1024.0 : suffix == 'M' ? 1048576.0 : suffix == 'G' ? 1073741824.0 : 1099511627776.0;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || (size_t)(end - s) != n - (mult != 1) || v < 0)
		return false;
	if (strchr("KMGT", suffix) && suffix && strchr(s, '.'))
		return false;
	if (mult == 1 && strchr(s, '.'))
		return false;
	v *= mult;
	if (v > 1e15)
		return false;
	*out = (uint64_t)v;
	return true;
}

typedef enum argkind { A_MODEL, A_TP, A_PP, A_DP, A_SEQ, A_UTIL, A_DTYPE, A_QUANT, A_KV, A_BATCHED, A_BLOCK } argkind;

static const struct flag {
	engine eng;
	const char *name;
	argkind kind;
} flags[] = {
	/* vLLM (vllm/engine/arg_utils.py EngineArgs.add_cli_args) */
	{ ENG_VLLM, "--model", A_MODEL },
	{ ENG_VLLM, "--tensor-parallel-size", A_TP },
	{ ENG_VLLM, "-tp", A_TP },
	{ ENG_VLLM, "--pipeline-parallel-size", A_PP },
	{ ENG_VLLM, "-pp", A_PP },
	{ ENG_VLLM, "--data-parallel-size", A_DP },
	{ ENG_VLLM, "-dp", A_DP },
	{ ENG_VLLM, "--max-model-len", A_SEQ },
	{ ENG_VLLM, "--gpu-memory-utilization", A_UTIL },
	{ ENG_VLLM, "--dtype", A_DTYPE },
	{ ENG_VLLM, "--quantization", A_QUANT },
	{ ENG_VLLM, "-q", A_QUANT },
	{ ENG_VLLM, "--kv-cache-dtype", A_KV },
	{ ENG_VLLM, "--max-num-batched-tokens", A_BATCHED },
	{ ENG_VLLM, "--block-size", A_BLOCK },
	/* SGLang (python/sglang/srt/server_args.py) */
	{ ENG_SGLANG, "--model-path", A_MODEL },
	{ ENG_SGLANG, "--model", A_MODEL },
	{ ENG_SGLANG, "--tp-size", A_TP },
	{ ENG_SGLANG, "--tp", A_TP },
	{ ENG_SGLANG, "--pp-size", A_PP },
	{ ENG_SGLANG, "--dp-size", A_DP },
	{ ENG_SGLANG, "--dp", A_DP },
	{ ENG_SGLANG, "--context-length", A_SEQ },
	{ ENG_SGLANG, "--mem-fraction-static", A_UTIL },
	{ ENG_SGLANG, "--dtype", A_DTYPE },
	{ ENG_SGLANG, "--quantization", A_QUANT },
	{ ENG_SGLANG, "--kv-cache-dtype", A_KV },
	{ ENG_SGLANG, "--chunked-prefill-size", A_BATCHED },
	{ ENG_SGLANG, "--page-size", A_BLOCK },
};

static const char *engine_name(engine e)
{
	return e == ENG_VLLM ? "vllm" : e == ENG_SGLANG ? "sglang" : "?";
}

static bool base_is(const char *tok, const char *name)
{
	const char *b = strrchr(tok, '/');

	return strcmp(b ? b + 1 : tok, name) == 0;
}

/* Which engine the tokens launch, and where its own arguments start. The vllm/vllm-openai image's entrypoint is
 * the server itself, so a container of that image with only flags is a vLLM launch too. */
static engine detect(const tokens *tk, const char *image, size_t *start, const char **positional)
{
	*positional = NULL;
	for (size_t i = 0; i < tk->n; i++) {
		const char *t = tk->t[i];

		if ((base_is(t, "vllm") || base_is(t, "sglang")) && i + 1 < tk->n && strcmp(tk->t[i + 1], "serve") == 0) {
			*start = i + 2;
			if (i + 2 < tk->n && tk->t[i + 2][0] != '-')
				*positional = tk->t[i + 2];
			return base_is(t, "vllm") ? ENG_VLLM : ENG_SGLANG;
		}
		if (strstr(t, "vllm.entrypoints.openai.api_server") || strstr(t, "vllm.entrypoints.api_server")) {
			*start = i + 1;
			return ENG_VLLM;
		}
		if (strstr(t, "sglang.launch_server")) {
			*start = i + 1;
			return ENG_SGLANG;
		}
	}
	*start = 0;
	if (image && strstr(image, "vllm"))
		return ENG_VLLM;
	if (image && strstr(image, "sglang"))
		return ENG_SGLANG;
	return ENG_NONE;
}

/* One flag's value into the launch. False (and *why set) when it is not what the engine takes. */
static bool take_flag(launch *l, const struct flag *f, const char *v, const char **why)
{
	uint64_t u;
	char *end = NULL;

	*why = "is not an integer";
	switch (f->kind) {
	case A_MODEL:
		snprintf(l->model, sizeof(l->model), "%s", v);
		return true;
	case A_TP:
	case A_PP:
	case A_DP:
	case A_BLOCK:
		if (!whole(v, &u) || u == 0 || u > MP_MAX_GPUS * 16)
			return false;
		if (f->kind == A_TP)
			l->tp = u, snprintf(l->flag_tp, sizeof(l->flag_tp), "%s", f->name);
		else if (f->kind == A_PP)
			l->pp = u;
		else if (f->kind == A_DP)
			l->dp = u;
		else
			l->block = u, snprintf(l->flag_block, sizeof(l->flag_block), "%s", f->name);
		return true;
	case A_SEQ:
	case A_BATCHED:
		if (!(l->eng == ENG_VLLM ? human_int(v, &u) : whole(v, &u)) || u == 0)
			return false;
		if (f->kind == A_SEQ)
			l->seq = u, snprintf(l->flag_seq, sizeof(l->flag_seq), "%s", f->name);
		else
			l->batched = u, snprintf(l->flag_batched, sizeof(l->flag_batched), "%s", f->name);
		return true;
	case A_UTIL:
		errno = 0;
		l->util = strtod(v, &end);
		*why = "is not a fraction in (0, 1]";
		snprintf(l->flag_util, sizeof(l->flag_util), "%s", f->name);
		return !(errno || end == v || *end || !(l->util > 0) || l->util > 1);
	case A_DTYPE:
		snprintf(l->dtype, sizeof(l->dtype), "%s", v);
		return true;
	case A_QUANT:
		snprintf(l->quant, sizeof(l->quant), "%s", v);
		return true;
	case A_KV:
		snprintf(l->kv, sizeof(l->kv), "%s", v);
		return true;
	}
	return false;
}

/* The first serving container's launch, or eng NONE. A flag value the engine would refuse is the pod's error. */
static void read_launch(const cJSON *containers, mps_k8s_pod *pod, launch *l)
{
	const cJSON *c;
	tokens *tk = malloc(sizeof(*tk));

	memset(l, 0, sizeof(*l));
	if (tk == NULL)
		return;
	cJSON_ArrayForEach(c, kids(containers))
	{
		const cJSON *v;
		const char *positional;
		size_t start;

		tk->n = tk->used = 0;
		cJSON_ArrayForEach(v, member(c, "command"))
		{
			add_tokens(tk, string_of(v));
		}
		cJSON_ArrayForEach(v, member(c, "args"))
		{
			add_tokens(tk, string_of(v));
		}
		l->eng = detect(tk, string_of(member(c, "image")), &start, &positional);
		if (l->eng == ENG_NONE)
			continue;
		snprintf(l->container, sizeof(l->container), "%s", string_of(member(c, "name")) ? string_of(member(c, "name")) : "?");
		if (string_of(member(c, "image")) && strlen(string_of(member(c, "image"))) < sizeof(pod->image))
			snprintf(pod->image, sizeof(pod->image), "%s", string_of(member(c, "image")));
		if (positional)
			snprintf(l->model, sizeof(l->model), "%s", positional);
		for (size_t i = start; i < tk->n; i++) {
			char name[64];
			const char *t = tk->t[i], *eq = strchr(t, '='), *val, *why;
			size_t n = eq ? (size_t)(eq - t) : strlen(t);

			if (t[0] != '-' || n >= sizeof(name))
				continue;
			memcpy(name, t, n);
			name[n] = '\0';
			for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
				if (flags[k].eng != l->eng || strcmp(flags[k].name, name) != 0)
					continue;
				val = eq ? eq + 1 : (i + 1 < tk->n ? tk->t[++i] : NULL);
				if (val == NULL || !take_flag(l, &flags[k], val, &why)) {
					char what[128];

					snprintf(what, sizeof(what), "%s %s", engine_name(l->eng), name);
					bad_job(pod, "memplan: container %s: %s", l->container, what);
					snprintf(pod->error + strlen(pod->error), sizeof(pod->error) - strlen(pod->error),
						 " '%.60s' %s", val ? val : "", val ? why : "has no value");
					free(tk);
					return;
				}
				break;
			}
		}
		if (l->model[0] == '\0' && start == 0) {
			l->eng = ENG_NONE; /* an image name alone, without a model: not a launch memplan can read */
			continue;
		}
		break;
	}
	free(tk);
}

/* ----- the job's body ----------------------------------------------------------------------------------------- */

typedef struct origin {
	char key[40];		/* the body member */
	char from[200];		/* where it came from, for messages */
} origin;

typedef struct builder {
	cJSON *body;
	origin o[MAX_ORIGINS];
	size_t n;
} builder;

static void set_member(builder *b, const char *key, cJSON *v, const char *from)
{
	size_t i;

	mpc_set_item(b->body, key, v);
	for (i = 0; i < b->n && strcmp(b->o[i].key, key) != 0; i++)
		;
	if (i == b->n && b->n < MAX_ORIGINS)
		b->n++;
	if (i < MAX_ORIGINS) {
		snprintf(b->o[i].key, sizeof(b->o[i].key), "%s", key);
		snprintf(b->o[i].from, sizeof(b->o[i].from), "%s", from);
	}
}

static const char *origin_of(const builder *b, const char *field)
{
	char key[40];
	size_t n;

	if (field == NULL || field[0] != '/')
		return NULL;
	n = strcspn(field + 1, "/");
	snprintf(key, sizeof(key), "%.*s", (int)n, field + 1);
	for (size_t i = 0; i < b->n; i++)
		if (strcmp(b->o[i].key, key) == 0)
			return b->o[i].from;
	return NULL;
}

static void note(mps_k8s_pod *pod, const char *what)
{
	size_t n = strlen(pod->assumption);

	snprintf(pod->assumption + n, sizeof(pod->assumption) - n, "%s%s", n ? ", " : "", what);
}

/* vLLM and SGLang dtype spellings as the API's weight formats; NULL when unknown. */
static const char *engine_dtype(const char *v)
{
	if (strcmp(v, "bfloat16") == 0 || strcmp(v, "bf16") == 0)
		return "bf16";
	if (strcmp(v, "float16") == 0 || strcmp(v, "half") == 0 || strcmp(v, "fp16") == 0)
		return "fp16";
	if (strcmp(v, "float32") == 0 || strcmp(v, "float") == 0 || strcmp(v, "fp32") == 0)
		return "fp32";
	return NULL;
}

static bool set_model(builder *b, mps_k8s_pod *pod, const char *name, const char *from)
{
	snprintf(pod->model_name, sizeof(pod->model_name), "%s", name);
	snprintf(pod->model_from, sizeof(pod->model_from), "%s", from);
	pod->ncandidates = mpc_k8s_model_candidates(name, pod->candidates, MPS_K8S_MAX_CANDIDATES);
	if (pod->ncandidates == 0) {
		bad_job(pod, "memplan: %s: the model '%s' gives no stored-model id (ids are lowercase letters, digits, "
			"'.', '_', '-')", from, name);
		return false;
	}
	set_member(b, "model", cJSON_CreateString(pod->candidates[0]), from);
	return true;
}

/* The launch's arguments as body members, with the engine's defaults where the launch says nothing. */
static void launch_body(builder *b, mps_k8s_pod *pod, const launch *l)
{
	char from[200];
	const char *eng = engine_name(l->eng), *dt = NULL, *compute = "bf16";

	snprintf(pod->source, sizeof(pod->source), "container %s (%s)", l->container, eng);
	snprintf(pod->engine, sizeof(pod->engine), "%s", eng);
	snprintf(pod->container, sizeof(pod->container), "%s", l->container);
	snprintf(from, sizeof(from), "container %s: %s model", l->container, eng);
	if (!l->model[0]) {
		bad_job(pod, "memplan: container %s: the launch names no model (%s)", l->container,
			l->eng == ENG_VLLM ? "vllm --model, or vllm serve MODEL" : "sglang --model-path");
		return;
	}
	if (!set_model(b, pod, l->model, from))
		return;
	if (l->pp > 1) {
		pod->state = MPS_K8S_UNSUPPORTED;
		snprintf(pod->note, sizeof(pod->note), "pipeline parallelism (%s) is not modelled",
			 l->eng == ENG_VLLM ? "--pipeline-parallel-size" : "--pp-size");
		return;
	}
	if (l->dtype[0] && strcmp(l->dtype, "auto") != 0 && (dt = engine_dtype(l->dtype)) == NULL) {
		bad_job(pod, "memplan: container %s: --dtype '%s' is not one of auto, bfloat16, float16, half, float32",
			l->container, l->dtype);
		return;
	}
	snprintf(from, sizeof(from), "container %s: %s --dtype/--quantization", l->container, eng);
	if (dt)
		compute = dt;
	if (l->quant[0] && strcmp(l->quant, "none") != 0) {
		static const struct {
			const char *name, *format, *scheme;
		} q[] = { { "fp8", "fp8_e4m3", NULL },       { "awq", "int4", "awq" },  { "awq_marlin", "int4", "awq" },
			  { "gptq", "int4", "gptq" },         { "gptq_marlin", "int4", "gptq" },
			  { "bitsandbytes", "nf4", NULL } };
		size_t i;

		for (i = 0; i < sizeof(q) / sizeof(q[0]) && strcmp(q[i].name, l->quant) != 0; i++)
			;
		if (i == sizeof(q) / sizeof(q[0])) {
			pod->state = MPS_K8S_UNSUPPORTED;
			snprintf(pod->note, sizeof(pod->note), "quantization '%.40s' is not modelled", l->quant);
			return;
		}
		set_member(b, "weight_dtype", cJSON_CreateString(q[i].format), from);
		if (q[i].scheme)
			set_member(b, "int4_scheme", cJSON_CreateString(q[i].scheme), from);
		if (dt)
			set_member(b, "compute_dtype", cJSON_CreateString(dt), from);
	} else if (dt) {
		set_member(b, "weight_dtype", cJSON_CreateString(dt), from);
	} else {
		set_member(b, "weight_dtype", cJSON_CreateString("bf16"), from);
		note(pod, "bf16 weights (--dtype auto)");
	}
	snprintf(from, sizeof(from), "container %s: %s --kv-cache-dtype", l->container, eng);
	if (l->kv[0] && strcmp(l->kv, "auto") != 0) {
		const char *kv = strcmp(l->kv, "fp8") == 0 || strcmp(l->kv, "fp8_e4m3") == 0 ? "fp8_e4m3"
				 : strcmp(l->kv, "fp8_e5m2") == 0				 ? "fp8_e5m2"
												 : engine_dtype(l->kv);

		if (kv == NULL) {
			pod->state = MPS_K8S_UNSUPPORTED;
			snprintf(pod->note, sizeof(pod->note), "--kv-cache-dtype '%.40s' is not modelled", l->kv);
			return;
		}
		set_member(b, "kv_cache_dtype", cJSON_CreateString(kv), from);
	} else {
		set_member(b, "kv_cache_dtype", cJSON_CreateString(compute), from); /* auto: the model's compute dtype */
	}
	if (l->tp) {
		snprintf(from, sizeof(from), "container %s: %s %s", l->container, eng, l->flag_tp);
		set_member(b, "tensor_parallel_size", cJSON_CreateNumber((double)l->tp), from);
		set_member(b, "num_gpus", cJSON_CreateNumber((double)(l->tp * (l->dp ? l->dp : 1))), from);
	}
	if (l->seq) {
		snprintf(from, sizeof(from), "container %s: %s %s", l->container, eng, l->flag_seq);
		set_member(b, "sequence_length", cJSON_CreateNumber((double)l->seq), from);
	}
	snprintf(from, sizeof(from), "container %s: %s %s", l->container, eng,
		 l->flag_util[0] ? l->flag_util : l->eng == ENG_VLLM ? "--gpu-memory-utilization" : "--mem-fraction-static");
	if (l->util > 0) {
		set_member(b, "gpu_memory_utilization", cJSON_CreateNumber(l->util), from);
	} else {
		/* vLLM's CacheConfig default (vllm/config/cache.py); SGLang's documented default (newer releases pick it by
		 * GPU size) */
		set_member(b, "gpu_memory_utilization", cJSON_CreateNumber(0.9), from);
		note(pod, l->eng == ENG_VLLM ? "gpu_memory_utilization 0.9 (vLLM's default)"
					     : "mem_fraction_static 0.9 (SGLang's documented default)");
	}
	if (l->batched) {
		snprintf(from, sizeof(from), "container %s: %s %s", l->container, eng, l->flag_batched);
		set_member(b, "max_num_batched_tokens", cJSON_CreateNumber((double)l->batched), from);
	}
	snprintf(from, sizeof(from), "container %s: %s %s", l->container, eng,
		 l->flag_block[0] ? l->flag_block : "--page-size");
	if (l->block)
		set_member(b, "kv_block_size", cJSON_CreateNumber((double)l->block), from);
	else if (l->eng == ENG_SGLANG)
		set_member(b, "kv_block_size", cJSON_CreateNumber(1), from); /* SGLang's token-granular pool (page size 1) */
}

/* An annotation's value as JSON: a number or true/false when it reads as one, else the string. */
static cJSON *annotation_value(const char *v)
{
	char *end = NULL;
	double d;

	if (strcmp(v, "true") == 0)
		return cJSON_CreateTrue();
	if (strcmp(v, "false") == 0)
		return cJSON_CreateFalse();
	errno = 0;
	d = strtod(v, &end);
	if (v[0] && (isdigit((unsigned char)v[0]) || v[0] == '-' || v[0] == '.') && end && *end == '\0' && !errno &&
	    isfinite(d))
		return cJSON_CreateNumber(d);
	return cJSON_CreateString(v);
}

/* memplan.io/<name> annotations (other than inference, training and mode) as body members: the name with '-' as
 * '_' ("batch-size" is batch_size), and two engine spellings: max-model-len (sequence_length) and concurrency
 * (batch_size). */
static bool annotation_members(builder *b, mps_k8s_pod *pod, const cJSON *ann)
{
	const cJSON *a;

	cJSON_ArrayForEach(a, kids(ann))
	{
		char key[48], from[200];
		const char *name, *v = string_of(a);

		/* a member of a map (read_job refuses annotations that are not one) */
		if (a->string == NULL || strncmp(a->string, ANN_PREFIX, strlen(ANN_PREFIX)) != 0)
			continue;
		name = a->string + strlen(ANN_PREFIX);
		if (strcmp(name, "inference") == 0 ||
		    strcmp(name, "training") == 0 || strcmp(name, "mode") == 0)
			continue;
		snprintf(from, sizeof(from), "annotation %.90s", a->string);
		if (v == NULL) {
			bad_job(pod, "memplan: %s: an annotation's value is a string%s", from, "");
			return false;
		}
		if (strcmp(name, "model") == 0) {
			if (!set_model(b, pod, v, from))
				return false;
			pod->explicit_model = true;
			continue;
		}
		if (strcmp(name, "max-model-len") == 0)
			name = "sequence-length";
		else if (strcmp(name, "concurrency") == 0)
			name = "batch-size";
		if (strlen(name) == 0 || strlen(name) >= sizeof(key) || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") !=
									    strlen(name)) {
			bad_job(pod, "memplan: %s: not a request field (memplan.io/<field> with the field in kebab-case)%s",
				from, "");
			return false;
		}
		for (size_t i = 0; i <= strlen(name); i++)
			key[i] = name[i] == '-' ? '_' : name[i];
		/* a release name is text even when it reads as a number (memplan.io/engine-version: "0.10") */
		set_member(b, key,
			   strlen(key) > 8 && strcmp(key + strlen(key) - 8, "_version") == 0 ? cJSON_CreateString(v)
											      : annotation_value(v),
			   from);
	}
	return true;
}

/* The plan body as a job: decoded by the plan endpoint's decoder; its errors name the annotation or argument. */
static void decode_job(builder *b, mps_k8s_pod *pod, bool training)
{
	mp_error e = MP_ERROR_INIT;
	mp_errors *all = calloc(1, sizeof(*all)); /* every problem of the job, each named where it came from */
	mp_status st;

	memset(&e, 0, sizeof(e));
	e.all = all;
	pod->job.training = training;
	if (training) {
		mps_training_request t;

		st = mpc_training_decode(b->body, "", false, &t, &e);
		pod->job.u.train = t.job;
	} else {
		mps_inference_request r;

		st = mpc_inference_decode(b->body, "", false, &r, &e);
		pod->job.u.inference = r.job;
	}
	if (st == MP_ENOMEM || all == NULL) {
		free(all);
		bad_job(pod, "memplan: out of memory reading %s%s", pod->source, "");
		return;
	}
	if (st != MP_OK) {
		size_t n = all->n ? all->n : 1, used = 0;

		pod->state = MPS_K8S_BAD_JOB;
		pod->error[0] = '\0';
		/* every problem while they fit, then how many more there were (room for that kept back) */
		const size_t tail = 64, left_out = all->dropped;
		size_t i;

		for (i = 0; i < n; i++) {
			const char *field = all->n ? all->item[i].field : e.field;
			const char *msg = all->n ? all->item[i].message : e.message;
			const char *from = origin_of(b, field);
			char where[MPS_K8S_WHERE_MAX];
			int w;

			if (from)
				snprintf(where, sizeof(where), "%s", from);
			else
				snprintf(where, sizeof(where), "%s: %s", pod->source, field[0] ? field : "body");
			w = snprintf(pod->error + used, sizeof(pod->error) - tail - used, "%s%s: %s", i ? "; " : "memplan: ",
				     where, msg);
			if (w < 0 || (size_t)w >= sizeof(pod->error) - tail - used) {
				pod->error[used] = '\0';
				break;
			}
			used += (size_t)w;
		}
		if (n - i + left_out > 0)
			snprintf(pod->error + used, sizeof(pod->error) - used, "%s%zu more problem%s not listed",
				 used ? "; and " : "memplan: ", n - i + left_out, n - i + left_out == 1 ? "" : "s");
		free(all);
		return;
	}
	free(all);
	pod->state = MPS_K8S_JOB;
	pod->num_gpus_given = member(b->body, "num_gpus") != NULL;
	snprintf(pod->job.id, sizeof(pod->job.id), "pod");
}

/* A whole-body annotation (memplan.io/inference or memplan.io/training): the plan endpoint's body, less "device". */
static void json_annotation(builder *b, mps_k8s_pod *pod, const char *name, const char *text)
{
	mp_error e = MP_ERROR_INIT;
	cJSON *doc = NULL;
	const cJSON *model;

	snprintf(pod->source, sizeof(pod->source), "annotation %s", name);
	if (mpc_parse_body(text, strlen(text), &doc, &e) != MP_OK) {
		bad_job(pod, "memplan: annotation %s: not a JSON object: %s", name, e.message);
		return;
	}
	cJSON_Delete(b->body);
	b->body = doc;
	if (member(doc, "device")) {
		bad_job(pod, "memplan: annotation %s: has \"device\": the node decides the device; leave it out%s", name, "");
		return;
	}
	model = member(doc, "model");
	pod->explicit_model = true;
	if (cJSON_IsString(model)) {
		char from[200];
		char *copy = strdup(model->valuestring);

		snprintf(from, sizeof(from), "annotation %s: /model", name);
		if (copy == NULL || !set_model(b, pod, copy, from)) {
			free(copy);
			if (pod->state != MPS_K8S_BAD_JOB)
				bad_job(pod, "memplan: out of memory reading annotation %s%s", name, "");
			return;
		}
		free(copy);
	}
	decode_job(b, pod, strcmp(name, "memplan.io/training") == 0);
}

/* Fills the members the plan endpoint requires that the launch and annotations left out, saying each assumption. */
static void inference_defaults(builder *b, mps_k8s_pod *pod)
{
	const cJSON *w = member(b->body, "weight_dtype");

	if (w == NULL) {
		set_member(b, "weight_dtype", cJSON_CreateString("bf16"), "memplan's default weight_dtype");
		note(pod, "bf16 weights");
	}
	if (member(b->body, "kv_cache_dtype") == NULL) {
		const char *wd = string_of(member(b->body, "weight_dtype"));
		const char *kv = wd && (strcmp(wd, "fp16") == 0 || strcmp(wd, "fp32") == 0) ? wd : "bf16";

		set_member(b, "kv_cache_dtype", cJSON_CreateString(kv), "memplan's default kv_cache_dtype");
		note(pod, "KV cache in the compute dtype");
	}
	if (member(b->body, "batch_size") == NULL) {
		set_member(b, "batch_size", cJSON_CreateNumber(1), "memplan's default batch_size");
		note(pod, "one sequence");
	}
	if (member(b->body, "sequence_length") == NULL) {
		set_member(b, "sequence_length", cJSON_CreateNumber(1), "the model's context length");
		pod->sequence_from_model = true;
		note(pod, "the model's context length");
	}
}

static void read_job(const cJSON *pod_obj, mps_k8s_pod *pod)
{
	const cJSON *meta = member(pod_obj, "metadata"), *spec = member(pod_obj, "spec");
	const cJSON *ann = member(meta, "annotations");
	const char *inf = string_of(member(ann, ANN_PREFIX "inference")), *trn = string_of(member(ann, ANN_PREFIX "training"));
	const char *mode = string_of(member(ann, ANN_PREFIX "mode"));
	bool any_field = false, training;
	const cJSON *a;
	launch l;
	builder *b = calloc(1, sizeof(*b));

	if (b == NULL || (b->body = cJSON_CreateObject()) == NULL) {
		bad_job(pod, "memplan: out of memory reading the pod%s%s", "", "");
		free(b);
		return;
	}
	if (ann && !cJSON_IsObject(ann)) {
		/* Kubernetes' ObjectMeta.annotations is map[string]string: a list (or anything else) is not a pod */
		bad_job(pod, "memplan: metadata.annotations must be an object of strings (Kubernetes ObjectMeta)%s%s", "", "");
		goto out;
	}
	cJSON_ArrayForEach(a, kids(ann))
	{
		any_field = any_field || (a->string && strncmp(a->string, ANN_PREFIX, strlen(ANN_PREFIX)) == 0 &&
					  strcmp(a->string, ANN_PREFIX "inference") && strcmp(a->string, ANN_PREFIX "training"));
	}
	if ((member(ann, ANN_PREFIX "inference") && !inf) || (member(ann, ANN_PREFIX "training") && !trn)) {
		bad_job(pod, "memplan: annotation %s: an annotation's value is a string%s",
			inf || !member(ann, ANN_PREFIX "inference") ? ANN_PREFIX "training" : ANN_PREFIX "inference", "");
		goto out;
	}
	if (inf && trn) {
		bad_job(pod, "memplan: the pod has both %s and %s: give one", ANN_PREFIX "inference", ANN_PREFIX "training");
		goto out;
	}
	if (inf || trn) {
		json_annotation(b, pod, inf ? ANN_PREFIX "inference" : ANN_PREFIX "training", inf ? inf : trn);
		goto out;
	}
	if (mode && strcmp(mode, "inference") != 0 && strcmp(mode, "training") != 0) {
		bad_job(pod, "memplan: annotation memplan.io/mode: '%s' is not inference or training%s", mode, "");
		goto out;
	}
	training = mode && strcmp(mode, "training") == 0;
	read_launch(member(spec, "containers"), pod, &l);
	if (pod->state == MPS_K8S_BAD_JOB)
		goto out;
	if (l.eng == ENG_NONE && !any_field)
		goto out; /* nothing asks memplan: no job */
	if (l.eng != ENG_NONE && !training)
		launch_body(b, pod, &l);
	else
		snprintf(pod->source, sizeof(pod->source), "annotations memplan.io/*");
	if (pod->state == MPS_K8S_BAD_JOB || pod->state == MPS_K8S_UNSUPPORTED)
		goto out;
	if (!annotation_members(b, pod, ann))
		goto out;
	if (member(b->body, "model") == NULL) {
		bad_job(pod, "memplan: annotation memplan.io/model is missing: the pod's memplan.io annotations need "
			"the model (a stored id or a Hugging Face id)%s%s", "", "");
		goto out;
	}
	if (!training)
		inference_defaults(b, pod);
	decode_job(b, pod, training);
out:
	cJSON_Delete(b->body);
	free(b);
}

void mpc_k8s_read_pod(const cJSON *p, mps_k8s_pod *pod)
{
	const cJSON *meta = member(p, "metadata"), *spec = member(p, "spec");
	uint64_t sum = 0, init = 0;

	memset(pod, 0, sizeof(*pod));
	mpc_utf8_sanitize(pod->name, sizeof(pod->name), string_of(member(meta, "name")) ? string_of(member(meta, "name")) : "");
	mpc_utf8_sanitize(pod->namespace_, sizeof(pod->namespace_),
			  string_of(member(meta, "namespace")) ? string_of(member(meta, "namespace")) : "");
	containers_gpus(member(spec, "containers"), false, pod, &sum);
	if (pod->state != MPS_K8S_BAD_JOB)
		containers_gpus(member(spec, "initContainers"), true, pod, &init);
	if (pod->state == MPS_K8S_BAD_JOB)
		return;
	pod->gpus = sum > init ? sum : init;
	read_job(p, pod);
	if (pod->state == MPS_K8S_JOB && pod->gpus == 0) {
		pod->state = MPS_K8S_BAD_JOB;
		snprintf(pod->error, sizeof(pod->error),
			 "memplan: %s describes a GPU job but the pod asks for no GPU: set resources.limits "
			 "nvidia.com/gpu (or nvidia.com/mig-<profile>)",
			 pod->source);
	}
	if (pod->state == MPS_K8S_JOB && pod->num_gpus_given) {
		uint64_t n = pod->job.training ? pod->job.u.train.req.num_gpus : pod->job.u.inference.req.num_gpus;

		if (n > pod->gpus) {
			pod->state = MPS_K8S_BAD_JOB;
			snprintf(pod->error, sizeof(pod->error),
				 "memplan: %s needs %llu GPUs but the pod asks for %llu (%s)", pod->source,
				 (unsigned long long)n, (unsigned long long)pod->gpus,
				 pod->resource[0] ? pod->resource : "nvidia.com/gpu");
		}
	}
}

/* ----- nodes ------------------------------------------------------------------------------------------------ */

static void node_bad(mps_k8s_node *n, const char *label, const char *value, const char *what)
{
	if (n->bad[0] == '\0')
		snprintf(n->bad, sizeof(n->bad), "label %.60s '%.63s' %s", label, value, what);
}

/* A numeric GFD label into *out (absent: untouched). */
static void label_number(mps_k8s_node *n, const cJSON *labels, const char *name, uint64_t *out)
{
	const char *v = string_of(member(labels, name));

	if (v && !whole(v, out))
		node_bad(n, name, v, "is not a whole number");
}

static void label_string(mps_k8s_node *n, const cJSON *labels, const char *name, char *out, size_t len)
{
	const char *v = string_of(member(labels, name));

	if (v == NULL)
		return;
	if (!label_value_ok(v) || strlen(v) >= len) {
		node_bad(n, name, "...", "is not a label value");
		return;
	}
	snprintf(out, len, "%s", v);
}

/* A node's name into n->name: 1 to 253 bytes of printable ASCII without '"' (a DNS subdomain is narrower; what
 * kube-scheduler sends is echoed, so only what could break the answer is refused). The error names where it sits:
 * "/NodeNames/<i>" or "/Nodes/items/<i>/metadata/name". */
mp_status mpc_k8s_node_name(const char *name, size_t i, bool from_names, mps_k8s_node *n, mp_error *err)
{
	char field[64];
	size_t len = name ? strlen(name) : 0;

	if (from_names)
		snprintf(field, sizeof(field), "/NodeNames/%zu", i);
	else
		snprintf(field, sizeof(field), "/Nodes/items/%zu/metadata/name", i);
	if (len == 0 || len >= sizeof(n->name))
		return mp_fail(err, MP_EINVAL, field, "a node needs metadata.name, 1 to 253 bytes");
	for (size_t k = 0; k < len; k++)
		if ((unsigned char)name[k] <= 0x20 || (unsigned char)name[k] >= 0x7f || name[k] == '"')
			return mp_fail(err, MP_EINVAL, field, "a node name is a DNS subdomain (lowercase letters, digits, "
				       "'-' and '.')");
	memcpy(n->name, name, len + 1);
	return MP_OK;
}

mp_status mpc_k8s_read_node(const cJSON *item, size_t i, const mps_k8s_pod *pod, mps_k8s_node *n, mp_error *err)
{
	const cJSON *meta = member(item, "metadata"), *labels = member(meta, "labels");
	const cJSON *alloc = member(member(item, "status"), "allocatable"), *q;
	const char *name = string_of(member(meta, "name"));
	const char *res = pod->resource[0] ? pod->resource : "nvidia.com/gpu";
	char field[64];
	mp_status st;

	memset(n, 0, sizeof(*n));
	snprintf(field, sizeof(field), "/Nodes/items/%zu/metadata/name", i);
	if (!cJSON_IsObject(item))
		return mp_fail(err, MP_EINVAL, field, "a node is a Kubernetes Node object");
	st = mpc_k8s_node_name(name, i, false, n, err);
	if (st != MP_OK)
		return st;
	label_string(n, labels, "feature.node.kubernetes.io/memplan-profile", n->profile, sizeof(n->profile));
	label_string(n, labels, "nvidia.com/gpu.product", n->product, sizeof(n->product));
	label_string(n, labels, "cloud.google.com/gke-accelerator", n->gke_accelerator, sizeof(n->gke_accelerator));
	label_string(n, labels, "nvidia.com/gpu.sharing-strategy", n->sharing_strategy, sizeof(n->sharing_strategy));
	label_number(n, labels, "nvidia.com/gpu.replicas", &n->replicas);
	if (strncmp(res, "nvidia.com/mig-", 15) == 0) {
		/* MIG mixed strategy: the profile's own labels, nvidia.com/mig-<profile>.memory and .count */
		char key[160];

		snprintf(key, sizeof(key), "%s.memory", res);
		label_number(n, labels, key, &n->memory_mib);
		snprintf(key, sizeof(key), "%s.count", res);
		label_number(n, labels, key, &n->label_count);
		n->replicas = 0; /* a MIG device is not time-sliced */
	} else {
		label_number(n, labels, "nvidia.com/gpu.memory", &n->memory_mib);
		label_number(n, labels, "nvidia.com/gpu.count", &n->label_count);
	}
	if ((q = member(alloc, res)) != NULL) {
		n->has_allocatable = true;
		if (!quantity(q, &n->allocatable))
			snprintf(n->bad, sizeof(n->bad), "status.allocatable %s is not a whole count", res);
	} else if (cJSON_IsObject(alloc)) {
		n->has_allocatable = true; /* an allocatable list without the resource: none of it */
	}
	return MP_OK;
}

mp_status mpc_k8s_args_decode(const cJSON *body, mpc_k8s_args *out, mp_error *err)
{
	const cJSON *pod = member(body, "Pod"), *nodes = member(body, "Nodes"), *names = member(body, "NodeNames");
	const cJSON *items = member(nodes, "items"), *it;
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	if (!cJSON_IsObject(pod))
		return mp_fail(err, MP_EINVAL, "/Pod",
			       "ExtenderArgs needs Pod, the pod being scheduled (kube-scheduler's extender v1 protocol: "
			       "{\"Pod\": {...}, \"Nodes\": {\"items\": [...]}, \"NodeNames\": null})");
	if (nodes && !cJSON_IsNull(nodes) && !cJSON_IsObject(nodes))
		return mp_fail(err, MP_EINVAL, "/Nodes", "Nodes is a NodeList ({\"items\": [...]}) or null");
	if (items && !cJSON_IsNull(items) && !cJSON_IsArray(items))
		return mp_fail(err, MP_EINVAL, "/Nodes/items", "Nodes.items is a list of Node objects");
	if (names && !cJSON_IsNull(names) && !cJSON_IsArray(names))
		return mp_fail(err, MP_EINVAL, "/NodeNames", "NodeNames is a list of node names or null");
	if (cJSON_IsArray(names)) {
		int i = 0;

		cJSON_ArrayForEach(it, names)
		{
			if (!cJSON_IsString(it))
				return mp_fail(err, MP_EINVAL, "/NodeNames", "NodeNames[%d] is not a node name (a string)",
					       i);
			i++;
		}
	}
	out->nodes_given = cJSON_IsObject(nodes);
	out->rq.names_only = !out->nodes_given && cJSON_IsArray(names);
	n = cJSON_IsArray(items) ? (size_t)cJSON_GetArraySize(items) : 0;
	if (out->rq.names_only)
		n = (size_t)cJSON_GetArraySize(names);
	if (n > MPS_K8S_MAX_NODES)
		return mp_fail(err, MP_ETOOLARGE, out->rq.names_only ? "/NodeNames" : "/Nodes/items",
			       "%zu nodes is more than the %d one call may carry", n, MPS_K8S_MAX_NODES);
	mpc_k8s_read_pod(pod, &out->rq.pod);
	out->rq.nodes = calloc(n ? n : 1, sizeof(*out->rq.nodes));
	out->items = calloc(n ? n : 1, sizeof(*out->items));
	if (out->rq.nodes == NULL || out->items == NULL) {
		mpc_k8s_args_free(out);
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	}
	if (out->rq.names_only) {
		/* nodeCacheCapable: true: names alone, their facts are the node cache's (service/mps_k8s.c) */
		cJSON_ArrayForEach(it, names)
		{
			mp_status st = mpc_k8s_node_name(it->valuestring, out->rq.nnodes, true,
						 &out->rq.nodes[out->rq.nnodes], err);

			if (st != MP_OK) {
				mpc_k8s_args_free(out);
				return st;
			}
			out->rq.nodes[out->rq.nnodes++].name_only = true;
		}
		return MP_OK;
	}
	cJSON_ArrayForEach(it, kids(items))
	{
		mp_status st = mpc_k8s_read_node(it, out->rq.nnodes, &out->rq.pod, &out->rq.nodes[out->rq.nnodes], err);

		if (st != MP_OK) {
			mpc_k8s_args_free(out);
			return st;
		}
		out->items[out->rq.nnodes++] = it;
	}
	return MP_OK;
}

void mpc_k8s_args_free(mpc_k8s_args *a)
{
	if (a == NULL)
		return;
	mpc_model_ref_release(a->rq.pod.job.training ? &a->rq.pod.job.u.train.model : &a->rq.pod.job.u.inference.model);
	free(a->rq.nodes);
	free((void *)a->items);
	free(a->echo);
	free(a->echo_at);
	free(a->echo_len);
	cJSON_Delete(a->pod_tree);
	a->rq.nodes = NULL;
	a->items = NULL;
	a->echo = NULL;
	a->echo_at = a->echo_len = NULL;
	a->pod_tree = NULL;
	a->rq.nnodes = 0;
}

/* ----- answers ---------------------------------------------------------------------------------------------- */

/* A node's reason, with what the job assumed that the pod did not say. */
static void reason_write(mpc_out *w, const char *key, const mpc_k8s_args *a, const char *reason)
{
	char buf[900];
	const char *as = a->rq.pod.assumption;

	if (as[0] && strncmp(reason, "memplan: the node has", 21) != 0)
		snprintf(buf, sizeof(buf), "%s (assumed: %s)", reason, as);
	else
		snprintf(buf, sizeof(buf), "%s", reason);
	mpc_w_str(w, key, buf);
}

/* The nodes of one verdict as {name: reason} (node names are DNS subdomains, checked by the decoder: keys with
 * nothing to escape). */
static void failed_write(mpc_out *w, const char *key, const mpc_k8s_args *a, const mps_k8s_result *r,
			 mps_k8s_verdict verdict, bool error)
{
	mpc_w_obj(w, key);
	for (size_t i = 0; i < a->rq.nnodes && !error; i++)
		if (r->nodes[i].verdict == verdict)
			reason_write(w, a->rq.nodes[i].name, a,
				     r->nodes[i].reason ? r->nodes[i].reason : "memplan: does not fit");
	mpc_w_end(w);
}

void mpc_k8s_filter_write(mpc_out *w, const mpc_k8s_args *a, const mps_k8s_result *r)
{
	bool error = r->error[0] != '\0';

	mpc_w_obj(w, NULL);
	if (a->nodes_given && !error) {
		/* the passing nodes' own objects, as the request sent them */
		mpc_w_obj(w, "Nodes");
		mpc_w_obj(w, "metadata");
		mpc_w_end(w);
		mpc_w_arr(w, "items");
		for (size_t i = 0; i < a->rq.nnodes && a->items; i++) /* (read as a stream: mpc_k8s_filter_pieces) */
			if (r->nodes[i].verdict == MPS_K8S_PASS)
				mpc_w_item(w, NULL, a->items[i]);
		mpc_w_end(w);
		mpc_w_end(w);
	} else {
		mpc_w_null(w, "Nodes");
	}
	if (error) {
		mpc_w_null(w, "NodeNames");
	} else {
		mpc_w_arr(w, "NodeNames");
		for (size_t i = 0; i < a->rq.nnodes; i++)
			if (r->nodes[i].verdict == MPS_K8S_PASS)
				mpc_w_str(w, NULL, a->rq.nodes[i].name);
		mpc_w_end(w);
	}
	failed_write(w, "FailedNodes", a, r, MPS_K8S_FAIL, error);
	failed_write(w, "FailedAndUnresolvableNodes", a, r, MPS_K8S_UNRESOLVABLE, error);
	mpc_w_str(w, "Error", r->error);
	mpc_w_end(w);
}

void mpc_k8s_prioritize_write(mpc_out *w, const mpc_k8s_args *a, const mps_k8s_result *r)
{
	mpc_w_arr(w, NULL);
	for (size_t i = 0; i < a->rq.nnodes; i++) {
		mpc_w_obj(w, NULL);
		mpc_w_str(w, "Host", a->rq.nodes[i].name);
		mpc_w_u64(w, "Score", r->error[0] ? 0 : (uint64_t)r->nodes[i].score);
		mpc_w_end(w);
	}
	mpc_w_end(w);
}
