/*
 * mps_defaults.c: what a request leaves unsaid, resolved the way the serving engines resolve it, and the warnings an
 * answer carries when it rests on something the user did not say (defaults a partial config took, a marketed
 * rather than usable capacity, replicated KV heads, a length beyond the model's context, a dtype assumed). Fills
 * structs; encodes nothing.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "service_int.h"
#include "../model/mpm_types.h"

/* Keeps text (n bytes, NUL-terminated; cut already): skipped when an exact repeat, counted past the limit. */
static void keep(mps_warnings *w, const char *text, size_t n)
{
	for (size_t i = 0; i < w->n; i++)
		if (strcmp(w->text[i], text) == 0)
			return;
	if (w->n == MPS_MAX_WARNINGS) {
		w->dropped++; /* counted, and the list says so */
		return;
	}
	memcpy(w->text[w->n++], text, n + 1);
}

/* Cuts text, whose untruncated length was n, to fit: "..." at a character boundary. Returns its length. */
static size_t cut(char *text, size_t n)
{
	size_t at = MPS_WARNING_BYTES - 4;

	if (n < MPS_WARNING_BYTES)
		return n;
	while (at > 0 && ((unsigned char)text[at] & 0xC0) == 0x80)
		at--;
	memcpy(text + at, "...", 4);
	return at + 3;
}

void mps_warn(mps_warnings *w, const char *fmt, ...)
{
	char text[MPS_WARNING_BYTES];
	va_list ap;
	int n;

	if (w == NULL)
		return;
	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	keep(w, text, cut(text, (size_t)n));
}

void mps_warn_cat(mps_warnings *w, const char *const *parts, size_t nparts)
{
	char text[MPS_WARNING_BYTES];
	size_t n = 0;

	if (w == NULL)
		return;
	for (size_t i = 0; i < nparts; i++) {
		size_t k = parts[i] ? strlen(parts[i]) : 0;

		if (n + k >= sizeof(text)) { /* past the end: as much as fits, then cut */
			memcpy(text + n, parts[i], sizeof(text) - 1 - n);
			text[sizeof(text) - 1] = '\0';
			keep(w, text, cut(text, sizeof(text)));
			return;
		}
		memcpy(text + n, parts[i], k);
		n += k;
	}
	text[n] = '\0';
	keep(w, text, n);
}

char *mps_u64_text(uint64_t v, char buf[24])
{
	char *p = buf + 23;

	*p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	return p;
}

static bool is_float(mp_dtype dt)
{
	return dt == MP_DTYPE_FP32 || dt == MP_DTYPE_BF16 || dt == MP_DTYPE_FP16;
}

/* vLLM's _FLOAT16_NOT_SUPPORTED_MODELS: the type's row says (mpm_type.fp16_unstable). */
static bool fp16_unsupported(const char *model_type)
{
	const mpm_type *t = mpm_type_find(model_type);

	return t != NULL && t->fp16_unstable;
}

/*
 * The model's serving dtype as vLLM's _resolve_auto_dtype picks it: supported = the platform's dtypes (CUDA:
 * bf16, fp16, fp32 on compute capability >= 8.0, else fp16, fp32; a profile with a bf16 peak counts as the
 * former; the CPU platform, vllm/platforms/cpu.py supported_dtypes on x86: bf16, fp16, fp32, whatever peaks its
 * calibration measured) minus fp16 for the models above; preferred = the first of them; an fp32 (or unstated:
 * vLLM reads a config without dtype as float32) checkpoint is served in the preferred type; a config dtype the
 * device does not support becomes the preferred type too.
 */
static mp_dtype serving_dtype(const mp_model *m, const mp_device *dev)
{
	bool bf16 = dev == NULL || dev->host_memory || dev->peak_flops_per_second[MP_DTYPE_BF16] > 0;
	bool fp16 = !fp16_unsupported(m->model_type);
	mp_dtype preferred = bf16 ? MP_DTYPE_BF16 : fp16 ? MP_DTYPE_FP16 : MP_DTYPE_FP32;
	mp_dtype cfg = m->config_dtype == MP_DTYPE_INVALID ? MP_DTYPE_FP32 : m->config_dtype;

	if (cfg == MP_DTYPE_FP32)
		return preferred;
	if ((cfg == MP_DTYPE_BF16 && bf16) || (cfg == MP_DTYPE_FP16 && fp16))
		return cfg;
	return preferred;
}

void mps_inference_defaults(const mp_model *m, const mp_device *dev, mps_inference_job *job, mps_dtype_choice *choice,
			    mps_warnings *w)
{
	mps_dtype_choice c = { "request", "request", "request" };
	mp_dtype serve = serving_dtype(m, dev);
	bool served = false; /* the model's own dtype, as vLLM serves it, decided the compute dtype */

	if (!job->compute_dtype_given) {
		if (!job->weight_dtype_auto && is_float(job->req.weight_dtype)) {
			job->opts.compute_dtype = job->req.weight_dtype;
			c.compute_dtype_from = "weight_dtype";
		} else {
			job->opts.compute_dtype = serve;
			c.compute_dtype_from = m->config_dtype != MP_DTYPE_INVALID ? "config_dtype" : "default";
			served = true;
		}
	}
	if (job->weight_dtype_auto) {
		if (m->config_quant_dtype != MP_DTYPE_INVALID) {
			job->req.weight_dtype = m->config_quant_dtype;
			if (m->config_quant_dtype == MP_DTYPE_INT4 && !job->int4_scheme_given)
				job->opts.formats.int4_scheme = (mp_int4_scheme)m->config_quant_scheme;
			if (m->config_quant_dtype == MP_DTYPE_INT4 && !job->int4_group_size_given &&
			    m->config_quant_group_size)
				job->opts.formats.int4_group_size = m->config_quant_group_size;
			c.weight_dtype_from = "quantization_config";
		} else {
			job->req.weight_dtype = job->opts.compute_dtype;
			c.weight_dtype_from = m->config_dtype != MP_DTYPE_INVALID ? "config_dtype" : "default";
		}
	}
	if (job->kv_cache_dtype_auto) {
		job->req.kv_cache_dtype = job->opts.compute_dtype;
		c.kv_cache_dtype_from = "compute_dtype";
	} else if (job->kv_cache_dtype_from_engine_options) {
		c.kv_cache_dtype_from = "engine_options";
	}
	/* the choices that rest on an assumption (a custom architecture object states no dtype by design) */
	if (served && m->config_dtype == MP_DTYPE_INVALID && strcmp(m->model_type, "custom") != 0)
		mps_warn(w,
			 "the model's config states no dtype: it was taken as float32 and served in %s, as vLLM's dtype "
			 "\"auto\" does; give weight_dtype (and compute_dtype) if the checkpoint is stored otherwise",
			 mp_dtype_name(serve));
	else if (served && m->config_dtype != MP_DTYPE_INVALID && m->config_dtype != serve)
		mps_warn(w,
			 "the checkpoint is %s; it is planned in %s, as vLLM's dtype \"auto\" serves it on this device "
			 "(give weight_dtype %s to plan the checkpoint's own precision)",
			 mp_dtype_name(m->config_dtype), mp_dtype_name(serve), mp_dtype_name(m->config_dtype));
	if (choice)
		*choice = c;
}

void mps_warn_model(const mps_model *m, mps_warnings *w)
{
	/* what the type's row takes simpler than the model (mpm_type.simplified); the layers that differ per layer and
	 * DeepSeek-V4's compressed cache say it at more length below and in mps_warn_compressed_kv */
	if (m->architecture_known && !m->arch.attn_per_layer && !m->arch.compressed_kv) {
		const mpm_type *t = mpm_type_find(m->arch.model_type);

		if (t && t->simplified)
			mps_warn(w, "%s: %s", t->name, t->simplified);
	}
	if (m->architecture_known && m->arch.defaulted_keys[0]) {
		const mp_model *a = &m->arch;
		char context[160] = "";

		/* the context limit then rests on the default (mpm_config_facts): say whether the scaling is in it */
		if (a->max_position_defaulted && a->rope_scaling && mp_model_context_limit(a) == a->max_position_embeddings)
			snprintf(context, sizeof(context),
				 "; the context is that default, %llu tokens, with the %s rope_scaling taken as already in it",
				 (unsigned long long)a->max_position_embeddings, a->rope_type);
		mps_warn(w,
			 "the config leaves out %s: planned with the %s defaults shown (transformers' config class "
			 "defaults)%s; give these keys if the model differs",
			 a->defaulted_keys, a->model_type, context);
	}
	if (m->architecture_known && m->arch.attn_per_layer) {
		const mp_model *a = &m->arch;
		bool widths = a->global_head_dim && (a->global_head_dim != a->head_dim || a->global_kv_heads != a->num_kv_heads);
		char what[160] = "";

		if (widths)
			snprintf(what, sizeof(what), "full-attention heads of %llu x %llu, sliding ones of %llu x %llu%s",
				 (unsigned long long)a->global_kv_heads, (unsigned long long)a->global_head_dim,
				 (unsigned long long)a->num_kv_heads, (unsigned long long)a->head_dim, a->no_kv_layers ? "; " : "");
		if (a->no_kv_layers)
			snprintf(what + strlen(what), sizeof(what) - strlen(what),
				 "%llu layers reuse an earlier layer's K and V", (unsigned long long)a->no_kv_layers);
		if (what[0])
			mps_warn(w,
				 "%s's layers differ (%s): parameters, weights and the KV cache follow each layer, and the step "
				 "analysis reads every matrix of the decoder (the per-layer MLP widths and projections among "
				 "them), while activations, the prefill workspace and the step's attention take every layer "
				 "with the sliding layers' attention widths and their own K and V projections%s",
				 a->model_type, what,
				 widths ? "; an engine block's block and token figures take the mean K and V row of the layers "
				          "with a cache"
				        : "");
	}
}

/* DeepSeek-V4 (mp_model.compressed_kv): what the plan follows and what it leaves out; kv: the answer has a KV cache. */
void mps_warn_compressed_kv(const mp_model *a, bool kv, mps_warnings *w)
{
	if (!a->compressed_kv)
		return;
	char keys[48] = "every token";

	if (a->sliding_window)
		snprintf(keys, sizeof(keys), "the last %llu tokens", (unsigned long long)a->sliding_window);
	if (kv)
		mps_warn(w,
			 "%s's KV cache follows transformers 5.24's layout (DeepseekV4HCACache / DeepseekV4CSACache), not a "
			 "serving engine's: per layer the keys of %s (K = V, one head of %llu), one compressed "
			 "entry per %llu tokens (CSA layers, with the lightning indexer's key of %llu) or %llu tokens (HCA "
			 "layers), the kv and gate projections of the tokens not yet compressed (up to a rate less one, so the "
			 "bytes are not monotone in the length) and CSA's overlap slice",
			 a->model_type, keys, (unsigned long long)a->head_dim,
			 (unsigned long long)a->csa_compress_rate, (unsigned long long)a->csa_indexer_head_dim,
			 (unsigned long long)a->hca_compress_rate);
	mps_warn(w,
		 "%s: activations, the prefill workspace and the step analysis take the attention as MQA of %llu heads "
		 "of %llu over the window, without the compressors, the lightning indexer and the %llu hyper-connection "
		 "streams of the residual; the multi-token-prediction layers a checkpoint ships are not counted",
		 a->model_type, (unsigned long long)a->num_heads, (unsigned long long)a->head_dim,
		 (unsigned long long)a->hc_mult);
}

const char *mps_training_defaults(const mps_training_job *job, mp_training_req *req)
{
	if (job->recompute_given)
		return "request";
	if (req->finetune == MP_FINETUNE_QLORA) {
		req->recompute = MP_RECOMPUTE_FULL;
		return "finetune";
	}
	req->recompute = MP_RECOMPUTE_NONE;
	return "default";
}

/* Bytes as GB (1e9) for a warning's sentence, three significant digits and no exponent: "96.1 GB", "1130 GB". */
static const char *gb(char *buf, size_t len, uint64_t bytes)
{
	double v = (double)bytes / 1e9;

	snprintf(buf, len, "%.*f GB", v >= 100 ? 0 : v >= 10 ? 1 : 2, v);
	return buf;
}

void mps_warn_recompute(const char *from, const mp_training_memory *mem, const mp_training_memory *full,
			bool full_fits, mps_warnings *w)
{
	char with_full[160] = "", a[32], b[32];

	if (from == NULL || strcmp(from, "request") == 0)
		return;
	if (strcmp(from, "finetune") == 0) {
		mps_warn(w,
			 "activation_recomputation: not given, so full, as QLoRA runs it (peft's "
			 "prepare_model_for_kbit_training turns gradient checkpointing on: use_gradient_checkpointing=True); "
			 "give none if the job turns it off");
		return;
	}
	if (full)
		snprintf(with_full, sizeof(with_full), "; with full they are %s and the total %s%s",
			 gb(a, sizeof(a), full->activations_bytes), gb(b, sizeof(b), full->total_bytes),
			 full_fits ? ", which fits" : "");
	if (mem && mem->activations_known) {
		char c[32], d[32];

		mps_warn(w,
			 "activation_recomputation: not given, so none, as transformers' Trainer (gradient_checkpointing "
			 "false) and Megatron-LM (no --recompute-granularity) train by default: activations are %s of the "
			 "%s total (GB = 1e9 bytes)%s; give selective or full if the job recomputes",
			 gb(c, sizeof(c), mem->activations_bytes), gb(d, sizeof(d), mem->total_bytes), with_full);
	}
	else
		mps_warn(w,
			 "activation_recomputation: not given, so none, as transformers' Trainer (gradient_checkpointing "
			 "false) and Megatron-LM (no --recompute-granularity) train by default; give selective or full if "
			 "the job recomputes");
}

void mps_warn_capacity(const mp_store_device *d, mps_warnings *w)
{
	if (d->hw.usable_memory_bytes)
		return;
	if (d->hw.host_memory) {
		mps_warn(w,
			 "capacity_bytes is all of %s's host memory (%.2f GiB): the OS, other processes and the page "
			 "cache hold part of it; set usable_memory_bytes to what the job may use",
			 d->id[0] ? d->id : "the inline device", (double)d->hw.memory_bytes / 1073741824.0);
		return;
	}
	mps_warn(w,
		 "capacity_bytes is the marketed memory_bytes of %s (%.2f GiB): the runtime reports less (CUDA's total on "
		 "the GPUs measured is 0.6 to 1.8%% below the label) and the profile gives no usable_memory_bytes; set it "
		 "to what cudaMemGetInfo reports",
		 d->id[0] ? d->id : "the inline device", (double)d->hw.memory_bytes / 1073741824.0);
}

void mps_warn_runtime(const mp_store_device *d, uint64_t requested_context_bytes, mps_warnings *w)
{
	/* the overhead and the engine defaults are NVIDIA's: say so where the device is another vendor's and neither
	 * the request nor the profile says what its runtime reserves */
	if (requested_context_bytes || d->hw.cuda_context_bytes || strcasecmp(d->vendor, "NVIDIA") == 0 ||
	    strcmp(d->kind, "cpu") == 0)
		return;
	if (d->vendor[0] == '\0')
		mps_warn(w,
			 "%s names no vendor, so it is taken for an NVIDIA GPU: overhead_bytes takes the CUDA context "
			 "measured on an H200 (%llu bytes) and the serving defaults are vLLM's on CUDA; give vendor, or "
			 "cuda_context_bytes with what its runtime reserves",
			 d->id[0] ? d->id : "the inline device", (unsigned long long)MP_DEFAULT_CUDA_CONTEXT_BYTES);
	else
		mps_warn(w,
			 "%s is not an NVIDIA device (vendor %s, kind %s): overhead_bytes takes the CUDA context measured "
			 "on an NVIDIA H200 (%llu bytes) and the serving defaults are vLLM's on CUDA; give "
			 "cuda_context_bytes (or store it on the profile) with what its runtime reserves",
			 d->id[0] ? d->id : "the inline device", d->vendor, d->kind[0] ? d->kind : "not given",
			 (unsigned long long)MP_DEFAULT_CUDA_CONTEXT_BYTES);
}

void mps_warn_context(const mp_model *m, uint64_t tokens, bool allow_beyond, mps_warnings *w)
{
	uint64_t limit = mp_model_context_limit(m);

	if (limit == 0 || tokens <= limit || !allow_beyond)
		return;
	mps_warn(w,
		 "sequence_length %llu is beyond the model's context of %llu tokens (allow_beyond_max_position_"
		 "embeddings): the memory is planned, but positions past the context are not what the model was trained "
		 "on",
		 (unsigned long long)tokens, (unsigned long long)limit);
}

void mps_warn_kv_replication(const mp_model *m, const mp_inference_memory *mem, mps_warnings *w)
{
	/* a model whose full-attention layers have fewer KV heads (Gemma 4): the fewest is what replicates */
	uint64_t heads = m->attn_per_layer && m->global_kv_heads && m->global_kv_heads < m->num_kv_heads
				 ? m->global_kv_heads
				 : m->num_kv_heads;

	if (mem->kv.kv_head_replication <= 1 || m->attn_kind != MP_ATTN_GQA)
		return;
	mps_warn(w,
		 "tensor_parallel_size %llu exceeds the model's %llu KV heads%s: each GPU holds a copy of one KV head (%llu "
		 "GPUs share each), so the KV cache per GPU stops shrinking with more GPUs",
		 (unsigned long long)mem->tensor_parallel_size, (unsigned long long)heads,
		 heads != m->num_kv_heads ? " (of its full-attention layers)" : "",
		 (unsigned long long)mem->kv.kv_head_replication);
}

/* Whether the step analysis needs the classes' own formats: a matrix class stored otherwise than plain
 * weight_dtype (a quantised format with scales, an lm_head kept in 16 bit, a checkpoint's MXFP4 experts). */
static bool formats_matter(const mp_weights *w, mp_dtype weight_dtype)
{
	static const mp_tensor_class matrices[] = { MP_TC_EMBEDDINGS, MP_TC_ATTENTION, MP_TC_MLP, MP_TC_EXPERTS,
						    MP_TC_LM_HEAD, MP_TC_RECURRENT };
	bool plain = weight_dtype == MP_DTYPE_FP32 || weight_dtype == MP_DTYPE_BF16 || weight_dtype == MP_DTYPE_FP16;

	if (!plain)
		return true;
	for (size_t i = 0; i < sizeof(matrices) / sizeof(matrices[0]); i++)
		if (w->cls[matrices[i]].parameters > 0 && w->cls[matrices[i]].format != weight_dtype)
			return true;
	return false;
}

mp_status mps_step_weights(const mp_model *m, mp_dtype weight_dtype, const mp_inference_opts *o, const mp_weights *have,
			   uint64_t have_tp, const char *pointer, mp_weights *out, const mp_weights **use, mp_error *err)
{
	mp_weight_formats f = o->formats;
	mp_status st;

	*use = NULL;
	if (have && !formats_matter(have, weight_dtype))
		return MP_OK;
	if (have && have_tp <= 1) {
		*use = have;
		return MP_OK;
	}
	f.json_pointer = pointer;
	st = mp_weight_bytes(m, weight_dtype, o->compute_dtype, &f, 1, out, err);
	if (st == MP_OK && formats_matter(out, weight_dtype))
		*use = out;
	return st;
}

