/*
 * mps_llamacpp_check.c: POST /v1/engine-check for llama.cpp and Ollama: each buffer, cache and context figure the pasted
 * log printed (read by codec/mpc_llamacpp_log.c) beside the plan's llama.cpp placement of the same launch (mps_llamacpp.c).
 * What the plan leaves out of the launch is taken from the log first (the offloaded layers, the GPUs, the cache
 * types, the backend), so the buffers are compared for the launch that ran. Fills structs only.
 */
#include <math.h>
#include <string.h>

#include "service_int.h"

#define MIB 1048576.0

static const mps_llama_figure *last_of(const mps_llama_report *r, mps_llama_fig kind)
{
	const mps_llama_figure *f = NULL;

	for (size_t i = 0; i < r->n; i++)
		if (r->figures[i].kind == kind && !r->figures[i].replaced)
			f = &r->figures[i];
	return f;
}

/* The launch the plan left out, from the log. */
static void launch_from_log(mps_llama_check_request *rq, mps_llama_check *out)
{
	const mps_llama_report *r = &rq->report;
	mps_llamacpp_opts *o = &rq->plan.job.llama;
	const mps_llama_figure *f;

	if (o->gpu_layers < 0 && (f = last_of(r, r->engine == MP_ENGINE_OLLAMA ? MPS_LF_LAUNCH_GPU_LAYERS
									    : MPS_LF_OFFLOADED_LAYERS)) != NULL &&
	    f->reported >= 0 && f->reported <= MP_MAX_LAYERS + 1) {
		o->gpu_layers = (int32_t)f->reported;
		out->gpu_layers_from_log = true;
	}
	if (rq->plan.job.req.num_gpus == 0 && !rq->plan.device.given) {
		if (r->gpus > 0) {
			rq->plan.job.req.num_gpus = r->gpus;
		} else {
			o->no_gpu = true; /* no GPU buffer printed: the host alone */
		}
		out->gpus_from_log = true;
	}
	if (o->backend < 0 && r->gpus > 0 && r->engine == MP_ENGINE_LLAMACPP) {
		o->backend = r->cuda_names ? MP_LLAMACPP_CUDA : MP_LLAMACPP_CPU;
		out->backend_from_log = true;
	}
	if (o->cache_type_k == MP_GGML_TYPE_COUNT && rq->plan.job.kv_cache_dtype_auto &&
	    (f = last_of(r, MPS_LF_K_MIB)) != NULL) {
		const mps_llama_figure *v = last_of(r, MPS_LF_V_MIB);
		uint32_t tk = mp_ggml_type_from_name(f->type), tv = v ? mp_ggml_type_from_name(v->type) : tk;

		if (tk < MP_GGML_TYPE_COUNT && mp_llamacpp_kv_type_ok(tk) && tv < MP_GGML_TYPE_COUNT &&
		    mp_llamacpp_kv_type_ok(tv) && (r->engine != MP_ENGINE_OLLAMA || tk == tv)) {
			o->cache_type_k = tk;
			if (o->cache_type_v == MP_GGML_TYPE_COUNT)
				o->cache_type_v = tv;
			out->cache_types_from_log = true;
		}
	}
}

/* memplan's figure for f, in its unit. */
static bool predicted(const mps_inference_plan *p, const mps_llama_report *r, const mps_llama_figure *f,
		      mps_llama_comparison *c)
{
	const mps_llamacpp_block *k = p->llama;
	const mp_llamacpp_plan *pl = &k->plan;
	const mp_llamacpp_params *q = &k->params;
	int s = f->slot;
	bool swa = f->cache == 1;

	c->basis = "llama.cpp's arithmetic";
	if ((f->kind == MPS_LF_MODEL_BUFFER_MIB || f->kind == MPS_LF_KV_BUFFER_MIB || f->kind == MPS_LF_COMPUTE_BUFFER_MIB) &&
	    (s < 0 || (uint32_t)s > q->n_devices))
		return false; /* a device the plan does not have */
	switch (f->kind) {
	case MPS_LF_MODEL_BUFFER_MIB:
		if (f->cache < 0 || (s == 0 && r->host_repack))
			return false; /* REPACK / AMX, and the host's mapped range beside them */
		c->predicted = (double)pl->model_bytes[s] / MIB;
		return true;
	case MPS_LF_KV_BUFFER_MIB:
		c->predicted = (double)(swa ? pl->kv_bytes_swa[s] : pl->kv_bytes[s] - pl->kv_bytes_swa[s]) / MIB;
		return true;
	case MPS_LF_COMPUTE_BUFFER_MIB:
		c->basis = "modelled (llama.cpp's graph reserve)";
		c->predicted = (double)pl->compute_bytes[s] / MIB;
		return true;
	case MPS_LF_OUTPUT_BUFFER_MIB:
		c->predicted = (double)pl->output_bytes / MIB;
		return true;
	case MPS_LF_KV_SIZE_MIB:
		c->predicted = (double)(swa ? pl->k_bytes_swa + pl->v_bytes_swa : pl->k_bytes + pl->v_bytes) / MIB;
		return true;
	case MPS_LF_K_MIB:
		c->predicted = (double)(swa ? pl->k_bytes_swa : pl->k_bytes) / MIB;
		return true;
	case MPS_LF_V_MIB:
		c->predicted = (double)(swa ? pl->v_bytes_swa : pl->v_bytes) / MIB;
		return true;
	case MPS_LF_KV_CELLS:
		/* llama.cpp prints a stream's cells (kv_size) */
		c->predicted = (double)(swa ? pl->kv_size_swa : pl->n_ctx_seq);
		return true;
	case MPS_LF_OFFLOADED_LAYERS:
		c->basis = "the launch";
		c->predicted = pl->gpu_layers;
		return q->n_devices > 0;
	case MPS_LF_N_CTX:
		c->basis = "the launch";
		c->predicted = pl->n_ctx;
		return true;
	case MPS_LF_N_CTX_SEQ:
		c->basis = "the launch";
		c->predicted = pl->n_ctx_seq;
		return true;
	case MPS_LF_N_BATCH:
		c->basis = "the launch";
		c->predicted = pl->n_batch;
		return true;
	case MPS_LF_N_UBATCH:
		c->basis = "the launch";
		c->predicted = pl->n_ubatch;
		return true;
	case MPS_LF_N_SEQ_MAX:
		c->basis = "the launch";
		c->predicted = q->n_seq_max;
		return true;
	case MPS_LF_DEFAULT_NUM_CTX:
		c->basis = "Ollama's rule (server/routes.go) on the device";
		c->predicted = k->ollama.default_num_ctx;
		return k->ollama.default_num_ctx > 0;
	case MPS_LF_LAUNCH_CTX:
		c->basis = "Ollama's command";
		c->predicted = k->n_ctx_asked;
		return true;
	case MPS_LF_LAUNCH_PARALLEL:
		c->basis = "Ollama's command";
		c->predicted = k->ollama.num_parallel;
		return true;
	case MPS_LF_LAUNCH_GPU_LAYERS:
		c->basis = "Ollama's command";
		c->predicted = k->ollama.num_gpu;
		return true;
	case MPS_LF_LAUNCH_BATCH:
	case MPS_LF_LAUNCH_UBATCH:
		c->basis = "Ollama's command";
		c->predicted = k->ollama.num_batch;
		return true;
	default:
		return false;
	}
}

mp_status mps_llama_check_run(mps_service *s, mps_llama_check_request *rq, mps_llama_check *out, mp_error *err)
{
	const mps_llama_report *r = &rq->report;
	mp_status st;

	memset(out, 0, sizeof(*out));
	launch_from_log(rq, out);
	st = mps_plan_inference(s, &rq->plan, &out->plan, err);
	if (st != MP_OK)
		return st;
	if (out->plan.llama == NULL)
		return mp_fail(err, MP_EINTERNAL, "/plan", "the plan of a llama.cpp check has no llama.cpp placement");
	for (size_t i = 0; i < r->n && i < MPS_LLAMA_MAX_FIGURES; i++) {
		const mps_llama_figure *f = &r->figures[i];
		mps_llama_comparison *c = &out->rows[i];
		bool exact;

		c->tolerance = f->decimals > 0 ? 0.5 * pow(10, -f->decimals) : 0;
		c->have_predicted = !f->replaced && predicted(&out->plan, r, f, c);
		if (!c->have_predicted)
			continue;
		if (f->kind == MPS_LF_COMPUTE_BUFFER_MIB && c->predicted * 0.1 > c->tolerance)
			c->tolerance = c->predicted * 0.1;
		/* the figures printed from a float (the size line) carry its rounding too */
		c->within_tolerance = fabs(f->reported - c->predicted) <= c->tolerance + 1e-9;
		out->predicted++;
		out->within_tolerance += c->within_tolerance;
		exact = f->kind == MPS_LF_MODEL_BUFFER_MIB || f->kind == MPS_LF_KV_BUFFER_MIB || f->kind == MPS_LF_KV_SIZE_MIB ||
			f->kind == MPS_LF_K_MIB || f->kind == MPS_LF_V_MIB;
		out->exact += exact;
		out->exact_within += exact && c->within_tolerance;
	}
	return MP_OK;
}
