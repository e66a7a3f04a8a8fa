/*
 * mpc_llamacpp_log.c: what llama.cpp printed at start-up, and Ollama around it: the reader of a pasted log (the buffer
 * lines of src/llama-model.cpp, llama-context.cpp and llama-kv-cache.cpp at 0c1e5709, with or without llama.cpp's
 * own prefixes; Ollama 0.32.15's "starting llama-server" and "vram-based default context" lines, as its slog text
 * handler writes them), and POST /v1/engine-check's request and answer for engines llamacpp and ollama. POSIX
 * extended regular expressions behind a literal keyword each; computes nothing of its own.
 */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/fields.h"
#include "codec.h"

#define MIB 1048576.0

typedef enum pat_id {
	P_BUFFER,	/* <fn>: <dev> model|KV|compute|output buffer size = X MiB */
	P_KV_SIZE,	/* llama_kv_cache: size = ... */
	P_OFFLOADED,	/* offloaded X/Y layers to GPU */
	P_CONTEXT,	/* llama_context: n_ctx = N */
	P_DEFAULT_CTX,	/* Ollama: vram-based default context */
	P_START,	/* Ollama: starting llama-server cmd="..." */
	P_COUNT
} pat_id;

static const struct {
	const char *keyword, *regex;
} pats[P_COUNT] = {
	[P_BUFFER] = { " buffer size = ",
		       "([A-Za-z_][A-Za-z0-9_]*): +([^ ]+) +(model|KV|compute|output) buffer size = *([0-9]+\\.?[0-9]*) MiB" },
	[P_KV_SIZE] = { "llama_kv_cache: size =",
			"llama_kv_cache: size = *([0-9.]+) MiB \\( *([0-9]+) cells, *([0-9]+) layers, *([0-9]+)/([0-9]+) "
			"seqs\\), K \\(([a-z0-9_]+)\\): *([0-9.]+) MiB, V \\(([a-z0-9_]+)\\): *([0-9.]+) MiB" },
	[P_OFFLOADED] = { "layers to GPU", "offloaded ([0-9]+)/([0-9]+) layers to GPU" },
	[P_CONTEXT] = { "llama_context: n_", "llama_context: (n_ctx_seq|n_ctx|n_batch|n_ubatch|n_seq_max) += ([0-9]+)" },
	[P_DEFAULT_CTX] = { "default_num_ctx=", "vram-based default context.*default_num_ctx=([0-9]+)" },
	[P_START] = { "starting llama-server", "msg=\"?starting llama-server\"? cmd=\"(([^\"\\\\]|\\\\.)*)\"" },
};

static regex_t compiled[P_COUNT];
static bool compiled_ok;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void compile(void)
{
	for (int i = 0; i < P_COUNT; i++)
		if (regcomp(&compiled[i], pats[i].regex, REG_EXTENDED) != 0)
			return;
	compiled_ok = true;
}

static double num(const char *s, size_t n, int *decimals)
{
	char buf[64];
	const char *dot;

	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	dot = strchr(buf, '.');
	*decimals = dot ? (int)strlen(dot + 1) : 0;
	return strtod(buf, NULL);
}

/* A host buffer type (CPU, CPU_Mapped, CPU_REPACK, AMX, BLAS, CUDA_Host, ...). */
static bool host_buffer(const char *name)
{
	size_t n = strlen(name);

	return strncmp(name, "CPU", 3) == 0 || strcmp(name, "AMX") == 0 || strcmp(name, "BLAS") == 0 ||
	       (n > 5 && strcmp(name + n - 5, "_Host") == 0);
}

/* The slot of a GPU buffer name: CUDA<i>, ROCm<i>, Vulkan<i>, MTL<i> (a _Mapped suffix aside) are i + 1; other
 * names (RPC servers) in the order they first appear after those. */
static int gpu_slot(mps_llama_report *r, char names[][48], const char *name)
{
	static const char *const prefixes[] = { "CUDA", "ROCm", "Vulkan", "MTL" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t n = strlen(prefixes[i]);
		if (strncmp(name, prefixes[i], n) == 0 && isdigit((unsigned char)name[n])) {
			long idx = strtol(name + n, NULL, 10);
			if (idx >= 0 && idx < MP_LLAMACPP_MAX_DEVICES) {
				r->cuda_names = true;
				if ((uint32_t)idx + 1 > r->gpus)
					r->gpus = (uint32_t)idx + 1;
				return (int)idx + 1;
			}
		}
	}
	for (uint32_t i = 0; i < r->gpus && i < MP_LLAMACPP_MAX_DEVICES; i++)
		if (strcmp(names[i], name) == 0)
			return (int)i + 1;
	if (r->gpus >= MP_LLAMACPP_MAX_DEVICES)
		return -1;
	snprintf(names[r->gpus], 48, "%s", name);
	return (int)++r->gpus;
}

static void add(mps_llama_report *r, mps_llama_fig kind, const char *device, int slot, int cache, double v,
		int decimals, uint32_t line, const char *text)
{
	mps_llama_figure *f;

	/* a buffer printed again (the fit's probe load, a reload) replaces the earlier figure */
	for (size_t i = 0; i < r->n; i++)
		if (r->figures[i].kind == kind && r->figures[i].slot == slot && r->figures[i].cache == cache &&
		    !r->figures[i].replaced && kind != MPS_LF_K_MIB && kind != MPS_LF_V_MIB)
			r->figures[i].replaced = true;
	if (r->n == MPS_LLAMA_MAX_FIGURES) {
		r->left_out++;
		return;
	}
	f = &r->figures[r->n++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	snprintf(f->device, sizeof(f->device), "%s", device ? device : "");
	f->slot = slot;
	f->cache = cache;
	f->reported = v;
	f->decimals = decimals;
	f->line = line;
	{
		char tmp[sizeof(f->text)];
		size_t tl = strlen(text), n = tl < sizeof(tmp) - 1 ? tl : sizeof(tmp) - 4; /* a line cut ends in "..." */

		memcpy(tmp, text, n);
		tmp[n] = '\0';
		mpc_utf8_sanitize(f->text, sizeof(f->text), tmp);
		if (n < tl)
			memcpy(f->text + strlen(f->text), "...", 4);
	}
}

/* A K or V figure replaces its own earlier one of the same cache too (they are added after the size line). */
static void replace_kv(mps_llama_report *r, mps_llama_fig kind, int cache)
{
	for (size_t i = 0; i + 1 < r->n; i++)
		if (r->figures[i].kind == kind && r->figures[i].cache == cache)
			r->figures[i].replaced = true;
}

/* Ollama's llama-server command (Go's %q of exec.Cmd.String()): the arguments memory depends on. */
static void start_line(mps_llama_report *r, const char *cmd, size_t n, uint32_t line, const char *text)
{
	char buf[4096], *tok[512] = { NULL };
	size_t nt = 0, o = 0;

	for (size_t i = 0; i < n && o + 1 < sizeof(buf); i++) {
		if (cmd[i] == '\\' && i + 1 < n)
			i++;
		buf[o++] = cmd[i];
	}
	buf[o] = '\0';
	for (char *p = buf; *p && nt < 512;) {
		while (*p == ' ')
			*p++ = '\0';
		if (*p)
			tok[nt++] = p;
		while (*p && *p != ' ')
			p++;
	}
	r->ollama_command = true;
	for (size_t i = 0; i + 1 < nt; i++) {
		static const struct {
			const char *flag;
			mps_llama_fig kind;
		} flags[] = { { "-c", MPS_LF_LAUNCH_CTX },	    { "-np", MPS_LF_LAUNCH_PARALLEL },
			      { "-ngl", MPS_LF_LAUNCH_GPU_LAYERS }, { "-b", MPS_LF_LAUNCH_BATCH },
			      { "-ub", MPS_LF_LAUNCH_UBATCH } };
		for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
			if (strcmp(tok[i], flags[k].flag) == 0) {
				char *end;
				double v = strtod(tok[i + 1], &end);
				if (*end == '\0')
					add(r, flags[k].kind, NULL, -1, 0, v, 0, line, text);
			}
	}
}

mp_status mpc_llama_report_parse(mp_engine engine, const char *text, const char *pointer, mps_llama_report *r,
				 mp_error *err)
{
	char names[MP_LLAMACPP_MAX_DEVICES][48];
	char linebuf[4097];
	const char *p = text;
	uint32_t lineno = 0;
	int kv_caches = 0;	/* "size =" lines of the current load */
	bool kv_seen = false;

	memset(r, 0, sizeof(*r));
	memset(names, 0, sizeof(names));
	r->engine = engine;
	pthread_once(&once, compile);
	if (!compiled_ok)
		return mp_fail(err, MP_EINTERNAL, "", "a log pattern does not compile");
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p), k = n;
		bool recognised = false;
		regmatch_t m[10];

		lineno++;
		if (k > 0 && p[k - 1] == '\r')
			k--;
		if (k >= sizeof(linebuf))
			k = sizeof(linebuf) - 1;
		memcpy(linebuf, p, k);
		linebuf[k] = '\0';
		p += n + (eol != NULL);
		for (int i = 0; i < P_COUNT; i++) {
			int d;

			if (strstr(linebuf, pats[i].keyword) == NULL || regexec(&compiled[i], linebuf, 10, m, 0) != 0)
				continue;
			recognised = true;
			switch ((pat_id)i) {
			case P_BUFFER: {
				char dev[48], kind[16];
				size_t dn = (size_t)(m[2].rm_eo - m[2].rm_so), kn = (size_t)(m[3].rm_eo - m[3].rm_so);
				double v = num(linebuf + m[4].rm_so, (size_t)(m[4].rm_eo - m[4].rm_so), &d);
				mps_llama_fig f;
				int slot;

				snprintf(dev, sizeof(dev), "%.*s", (int)(dn < 47 ? dn : 47), linebuf + m[2].rm_so);
				snprintf(kind, sizeof(kind), "%.*s", (int)(kn < 15 ? kn : 15), linebuf + m[3].rm_so);
				f = strcmp(kind, "model") == 0	  ? MPS_LF_MODEL_BUFFER_MIB
				    : strcmp(kind, "KV") == 0	  ? MPS_LF_KV_BUFFER_MIB
				    : strcmp(kind, "compute") == 0 ? MPS_LF_COMPUTE_BUFFER_MIB
								  : MPS_LF_OUTPUT_BUFFER_MIB;
				if (f == MPS_LF_MODEL_BUFFER_MIB && kv_seen) {
					kv_caches = 0; /* a new load (after the fit's probe) */
					kv_seen = false;
				}
				slot = host_buffer(dev) ? 0 : gpu_slot(r, names, dev);
				/* the host's model buffers of a split model (one per file) and its REPACK buffers: a slot each */
				add(r, f, dev, slot, f == MPS_LF_KV_BUFFER_MIB ? kv_caches : 0, v, d, lineno, linebuf);
				if (f == MPS_LF_MODEL_BUFFER_MIB && slot == 0 && strcmp(dev, "CPU_Mapped") != 0 &&
				    strcmp(dev, "CPU") != 0 && strcmp(dev, "CUDA_Host") != 0) {
					r->figures[r->n - 1].cache = -1; /* an extra host buffer (REPACK, AMX): not modelled */
					r->host_repack = true;
				}
				break;
			}
			case P_KV_SIZE: {
				int dk, dv, dc;
				double total = num(linebuf + m[1].rm_so, (size_t)(m[1].rm_eo - m[1].rm_so), &d);
				double cells = num(linebuf + m[2].rm_so, (size_t)(m[2].rm_eo - m[2].rm_so), &dc);
				double kb = num(linebuf + m[7].rm_so, (size_t)(m[7].rm_eo - m[7].rm_so), &dk);
				double vb = num(linebuf + m[9].rm_so, (size_t)(m[9].rm_eo - m[9].rm_so), &dv);
				char kt[16], vt[16];

				snprintf(kt, sizeof(kt), "%.*s", (int)(m[6].rm_eo - m[6].rm_so), linebuf + m[6].rm_so);
				snprintf(vt, sizeof(vt), "%.*s", (int)(m[8].rm_eo - m[8].rm_so), linebuf + m[8].rm_so);
				add(r, MPS_LF_KV_SIZE_MIB, NULL, -1, kv_caches, total, d, lineno, linebuf);
				add(r, MPS_LF_KV_CELLS, NULL, -1, kv_caches, cells, 0, lineno, linebuf);
				replace_kv(r, MPS_LF_K_MIB, kv_caches);
				add(r, MPS_LF_K_MIB, NULL, -1, kv_caches, kb, dk, lineno, linebuf);
				snprintf(r->figures[r->n - 1].type, sizeof(r->figures[0].type), "%s", kt);
				replace_kv(r, MPS_LF_V_MIB, kv_caches);
				add(r, MPS_LF_V_MIB, NULL, -1, kv_caches, vb, dv, lineno, linebuf);
				snprintf(r->figures[r->n - 1].type, sizeof(r->figures[0].type), "%s", vt);
				kv_caches++;
				kv_seen = true;
				break;
			}
			case P_OFFLOADED:
				add(r, MPS_LF_OFFLOADED_LAYERS, NULL, -1, 0,
				    num(linebuf + m[1].rm_so, (size_t)(m[1].rm_eo - m[1].rm_so), &d), 0, lineno, linebuf);
				break;
			case P_CONTEXT: {
				static const struct {
					const char *key;
					mps_llama_fig kind;
				} keys[] = { { "n_ctx_seq", MPS_LF_N_CTX_SEQ }, { "n_ctx", MPS_LF_N_CTX },
					     { "n_batch", MPS_LF_N_BATCH },	{ "n_ubatch", MPS_LF_N_UBATCH },
					     { "n_seq_max", MPS_LF_N_SEQ_MAX } };
				size_t kn = (size_t)(m[1].rm_eo - m[1].rm_so);
				for (size_t q = 0; q < sizeof(keys) / sizeof(keys[0]); q++)
					if (strlen(keys[q].key) == kn && strncmp(linebuf + m[1].rm_so, keys[q].key, kn) == 0)
						add(r, keys[q].kind, NULL, -1, 0,
						    num(linebuf + m[2].rm_so, (size_t)(m[2].rm_eo - m[2].rm_so), &d), 0, lineno,
						    linebuf);
				break;
			}
			case P_DEFAULT_CTX:
				if (engine == MP_ENGINE_OLLAMA)
					add(r, MPS_LF_DEFAULT_NUM_CTX, NULL, -1, 0,
					    num(linebuf + m[1].rm_so, (size_t)(m[1].rm_eo - m[1].rm_so), &d), 0, lineno, linebuf);
				break;
			case P_START:
				if (engine == MP_ENGINE_OLLAMA)
					start_line(r, linebuf + m[1].rm_so, (size_t)(m[1].rm_eo - m[1].rm_so), lineno, linebuf);
				break;
			default:
				break;
			}
		}
		r->lines_recognised += recognised;
	}
	r->lines = lineno;
	if (r->n == 0)
		return mp_fail(err, MP_EINVAL, pointer,
			       "none of the %u lines is one memplan reads for %s: it looks for llama.cpp's start-up lines "
			       "(\"<device> model buffer size = X MiB\", \"KV buffer size\", \"llama_kv_cache: size = ...\", "
			       "\"compute buffer size\", \"offloaded X/Y layers to GPU\", \"llama_context: n_ctx = N\")%s",
			       lineno, mp_engine_name(engine),
			       engine == MP_ENGINE_OLLAMA ? " and Ollama's \"starting llama-server\" line" : "");
	return MP_OK;
}

/* ----- POST /v1/engine-check for llama.cpp and Ollama -------------------------------------------------------- */

static const char *const llama_engines[] = { "llamacpp", "ollama", NULL };

typedef struct llama_check_body {
	int engine;
} llama_check_body;

static const mpm_field llama_check_fields[] = {
	{ .name = "engine", .type = MPM_F_ENUM, .required = true, .offset = offsetof(llama_check_body, engine),
	  .names = llama_engines },
	{ .name = "log", .type = MPM_F_ANY, .required = true },
	{ .name = "plan", .type = MPM_F_ANY, .required = true },
};

bool mpc_llama_check_engine(const cJSON *body)
{
	const cJSON *e = cJSON_IsObject(body) ? cJSON_GetObjectItemCaseSensitive(body, "engine") : NULL;

	return cJSON_IsString(e) && (strcmp(e->valuestring, "llamacpp") == 0 || strcmp(e->valuestring, "ollama") == 0);
}

mp_status mpc_llama_check_decode(const cJSON *body, mps_llama_check_request *out, mp_error *err)
{
	llama_check_body cb = { -1 };
	const cJSON *log = cJSON_GetObjectItemCaseSensitive(body, "log");
	const cJSON *plan = cJSON_GetObjectItemCaseSensitive(body, "plan"), *pe;
	mp_problems p = MP_PROBLEMS_INIT;
	mp_engine e;
	mp_status st;

	memset(&out->plan.job, 0, sizeof(out->plan.job));
	out->plan.device.given = out->plan.host_device.given = false;
	st = mpm_decode_fields(body, "", llama_check_fields, MPM_COUNT(llama_check_fields), &cb, err);
	if (mp_problems_note(&p, st, err) == MP_ENOMEM)
		return mp_problems_end(&p, err);
	e = cb.engine == 1 ? MP_ENGINE_OLLAMA : MP_ENGINE_LLAMACPP;
	if (log && !cJSON_IsString(log))
		mp_problems_note(&p, mp_fail(err, MP_EINVAL, "/log", "log must be a string (the start-up log, as printed)"),
				 err);
	if (plan && !cJSON_IsObject(plan)) {
		mp_problems_note(&p,
				 mp_fail(err, MP_EINVAL, "/plan",
					 "plan must be an inference plan request (the body of POST /v1/plan/inference) with the "
					 "GGUF model the engine loaded"),
				 err);
	} else if (plan) {
		cJSON *named;

		pe = cJSON_GetObjectItemCaseSensitive(plan, "engine");
		if (pe && !(cJSON_IsString(pe) && strcmp(pe->valuestring, mp_engine_name(e)) == 0))
			mp_problems_note(&p,
					 mp_fail(err, MP_EINVAL, "/plan/engine",
						 "plan.engine, when given, must be the check's engine (%s); it can be left out",
						 mp_engine_name(e)),
					 err);
		if ((named = cJSON_Duplicate(plan, true)) == NULL)
			return mp_fail(err, MP_ENOMEM, "", "out of memory");
		if (pe == NULL && !cJSON_AddStringToObject(named, "engine", mp_engine_name(e))) {
			cJSON_Delete(named);
			return mp_fail(err, MP_ENOMEM, "", "out of memory");
		}
		st = mpc_inference_decode(named, "/plan", true, &out->plan, err);
		cJSON_Delete(named);
		if (mp_problems_note(&p, st, err) == MP_ENOMEM)
			return mp_problems_end(&p, err);
	}
	if (cJSON_IsString(log))
		mp_problems_note(&p, mpc_llama_report_parse(e, log->valuestring, "/log", &out->report, err), err);
	return mp_problems_end(&p, err);
}

void mpc_llama_check_write(mpc_out *w, const mps_llama_check_request *rq, const mps_llama_check *c)
{
	const mps_llama_report *r = &rq->report;

	mpc_w_obj(w, NULL);
	mpc_w_str(w, "engine", mp_engine_name(r->engine));
	mpc_w_lit(w, "source", "log");
	mpc_w_u64(w, "lines_read", r->lines);
	mpc_w_u64(w, "lines_recognised", r->lines_recognised);
	mpc_w_arr(w, "figures");
	for (size_t i = 0; i < r->n; i++) {
		const mps_llama_figure *f = &r->figures[i];
		const mps_llama_comparison *k = &c->rows[i];

		mpc_w_obj(w, NULL);
		mpc_w_str(w, "figure", mps_llama_figure_name(f->kind));
		mpc_w_str_or_null(w, "device", f->device);
		if (f->slot >= 0)
			mpc_w_i64(w, "slot", f->slot);
		else
			mpc_w_null(w, "slot");
		if (f->kind == MPS_LF_KV_BUFFER_MIB || f->kind == MPS_LF_KV_SIZE_MIB || f->kind == MPS_LF_K_MIB ||
		    f->kind == MPS_LF_V_MIB || f->kind == MPS_LF_KV_CELLS)
			mpc_w_lit(w, "cache", f->cache == 1 ? "sliding_window" : "full");
		mpc_w_u64(w, "line", f->line);
		mpc_w_str(w, "text", f->text);
		mpc_w_num(w, "reported", f->reported);
		mpc_w_bool(w, "replaced", f->replaced);
		if (k->have_predicted) {
			mpc_w_num(w, "predicted", k->predicted);
			mpc_w_num(w, "difference", f->reported - k->predicted);
			mpc_w_num(w, "tolerance", k->tolerance);
			mpc_w_bool(w, "within_tolerance", k->within_tolerance);
		} else {
			mpc_w_null(w, "predicted");
			mpc_w_null(w, "difference");
			mpc_w_num(w, "tolerance", k->tolerance);
			mpc_w_null(w, "within_tolerance");
		}
		mpc_w_str(w, "basis", k->have_predicted ? k->basis : "not modelled");
		mpc_w_end(w);
	}
	mpc_w_end(w);
	mpc_w_obj(w, "summary");
	mpc_w_u64(w, "figures", r->n);
	mpc_w_u64(w, "predicted", c->predicted);
	mpc_w_u64(w, "within_tolerance", c->within_tolerance);
	mpc_w_u64(w, "model_and_kv_figures", c->exact);
	mpc_w_u64(w, "model_and_kv_within_tolerance", c->exact_within);
	mpc_w_bool(w, "model_and_kv_match", c->exact == c->exact_within);
	mpc_w_bool(w, "figures_left_out", r->left_out > 0);
	mpc_w_obj(w, "taken_from_log");
	mpc_w_bool(w, "gpu_layers", c->gpu_layers_from_log);
	mpc_w_bool(w, "num_gpus", c->gpus_from_log);
	mpc_w_bool(w, "cache_types", c->cache_types_from_log);
	mpc_w_bool(w, "backend", c->backend_from_log);
	mpc_w_end(w);
	mpc_w_end(w);
	mpc_inference_plan_member(w, "plan", &rq->plan, &c->plan);
	mpc_w_arr(w, "notes");
	mpc_w_lit(w, NULL,
		  "Each figure llama.cpp printed (MiB = 2^20 bytes, two decimals): predicted is the plan's llama.cpp "
		  "placement (plan.engine) of the same launch; the model and KV buffers are llama.cpp's arithmetic to the "
		  "byte (tolerance half a unit of the last digit), the compute buffers a model of its graph reserve "
		  "(tolerance 10%). What the plan left out of the launch (gpu_layers, num_gpus, the cache types, the "
		  "backend) is taken from the log (summary.taken_from_log).");
	mpc_w_lit(w, NULL,
		  "A buffer printed twice (llama.cpp's --fit probe before the real load, a reload) is compared at its last "
		  "line; the earlier ones are marked replaced. The host's REPACK and AMX buffers (weights the CPU backend "
		  "repacks for its instruction set) are not modelled.");
	if (r->left_out) {
		char more[160];

		snprintf(more, sizeof(more), "%zu more figures were found after the first %d and left out", r->left_out,
			 MPS_LLAMA_MAX_FIGURES);
		mpc_w_str(w, NULL, more);
	}
	mpc_w_end(w);
	mpc_w_end(w);
}
