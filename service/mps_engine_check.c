/*
 * mps_engine_check.c: POST /v1/engine-check: an engine's pasted start-up log (read by codec/) set beside memplan's plan
 * for the same launch. Each figure the engine printed is compared with the plan through the engine's arithmetic
 * (mps_engine.c's block) and with what the log's other figures imply, within the rounding the engine printed. Fills
 * structs only.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "service_int.h"

#define GIB 1073741824.0

/* A reported count as an integer (the reader keeps figures within 2^53; negative ones count as 0). */
static uint64_t count_of(double v)
{
	return v > 0 && v < 9007199254740992.0 ? (uint64_t)v : 0;
}

static double half_unit(int decimals)
{
	return decimals > 0 ? 0.5 * pow(10, -decimals) : 0;
}

/* The figure of that kind nearest before (or on) line, else the first after it; NULL when there is none. */
static const mps_engine_figure *find(const mps_engine_report *r, mps_figure kind, uint32_t line)
{
	const mps_engine_figure *best = NULL;

	for (size_t i = 0; i < r->nfigures; i++) {
		const mps_engine_figure *f = &r->figures[i];

		if (f->kind != kind)
			continue;
		if (f->line <= line && (best == NULL || best->line > line || f->line >= best->line))
			best = f;
		else if (best == NULL)
			best = f;
	}
	return best;
}

typedef struct check_ctx {
	const mps_engine_report *r;
	const mps_engine_block *b;
	bool uniform;		/* vLLM: one group of full-attention layers */
	uint64_t page, layers;	/* vLLM page of one layer, layers per group */
	bool min_over_workers;	/* tensor parallelism: a worker's line bounds the engine's blocks from above */
} check_ctx;

static void implied(mps_engine_comparison *c, double lo, double hi, const char *from)
{
	c->have_implied = true;
	c->implied_min = lo;
	c->implied_max = hi;
	c->implied_from = from;
}

/* vLLM figures that follow from the KV memory a line printed, [lo, hi] bytes. */
static void vllm_from_available(const check_ctx *x, const mps_engine_figure *f, double lo_b, double hi_b,
				mps_engine_comparison *c)
{
	const mp_engine_inputs *in = &x->b->inputs;
	double blo = (double)mp_vllm_num_blocks(lo_b, x->page, x->layers);
	double bhi = (double)mp_vllm_num_blocks(hi_b, x->page, x->layers);
	double groups = (double)(x->b->predicted.kv_groups ? x->b->predicted.kv_groups : 1);

	if (x->min_over_workers)
		blo = 0;
	switch (f->kind) {
	case MPS_FIG_NUM_GPU_BLOCKS:
		implied(c, blo, bhi, "available_kv_cache_gib");
		break;
	case MPS_FIG_KV_CACHE_TOKENS:
		implied(c, floor(blo / groups) * (double)in->block_size, floor(bhi / groups) * (double)in->block_size,
			"available_kv_cache_gib");
		break;
	case MPS_FIG_ESTIMATED_MAX_MODEL_LEN:
		if (x->uniform)
			implied(c, blo * (double)in->block_size, bhi * (double)in->block_size, "available_kv_cache_gib");
		break;
	default:
		break;
	}
}

/* Two figures of one start-up report: the V0 budget's lines, one line (0.6.2-0.7) or a table of up to nine
 * (0.6.5's "Memory profiling results:"), printed together. */
static bool near(const mps_engine_figure *a, const mps_engine_figure *f)
{
	return a->line <= f->line && f->line - a->line <= 8;
}

static void check_vllm(const check_ctx *x, const mps_engine_figure *f, mps_engine_comparison *c)
{
	const mps_engine_report *r = x->r;
	const mp_engine_inputs *in = &x->b->inputs;
	const mps_engine_figure *u;
	uint64_t len = f->tokens_per_request ? f->tokens_per_request : in->max_model_len;

	switch (f->kind) {
	case MPS_FIG_NUM_GPU_BLOCKS:
	case MPS_FIG_KV_CACHE_TOKENS:
	case MPS_FIG_ESTIMATED_MAX_MODEL_LEN:
		if (f->kind == MPS_FIG_KV_CACHE_TOKENS && (u = find(r, MPS_FIG_NUM_GPU_BLOCKS, f->line)) != NULL) {
			double t = floor(u->reported / (double)(x->b->predicted.kv_groups ? x->b->predicted.kv_groups : 1)) *
				   (double)in->block_size;

			implied(c, t, t, "num_gpu_blocks");
		} else if ((u = find(r, MPS_FIG_AVAILABLE_KV_CACHE_GIB, f->line)) != NULL) {
			double h = half_unit(u->decimals);

			vllm_from_available(x, f, (u->reported - h) * GIB, (u->reported + h) * GIB, c);
		}
		break;
	case MPS_FIG_MAX_CONCURRENCY:
		if (!x->uniform)
			break;
		if ((u = find(r, MPS_FIG_NUM_GPU_BLOCKS, f->line)) != NULL) {
			double v = mp_vllm_max_concurrency(count_of(u->reported), in->block_size, len);

			implied(c, v, v, "num_gpu_blocks");
		} else if ((u = find(r, MPS_FIG_KV_CACHE_TOKENS, f->line)) != NULL) {
			double v = mp_vllm_max_concurrency(count_of(u->reported) / in->block_size, in->block_size, len);

			implied(c, v, v, "kv_cache_tokens");
		}
		break;
	case MPS_FIG_NEEDED_KV_CACHE_GIB:
		if (x->uniform) {
			double v = (double)((len + in->block_size - 1) / in->block_size) * (double)x->page *
				   (double)x->layers / GIB;

			implied(c, v, v, "the line's max seq len");
		}
		break;
	case MPS_FIG_REQUESTED_MEMORY_GIB: {
		const mps_engine_figure *t = find(r, MPS_FIG_TOTAL_GPU_MEMORY_GIB, f->line);
		const mps_engine_figure *u2 = find(r, MPS_FIG_MEMORY_FRACTION, f->line);

		if (t && u2) {
			double h = half_unit(t->decimals), hu = half_unit(u2->decimals);

			implied(c, (t->reported - h) * (u2->reported - hu), (t->reported + h) * (u2->reported + hu),
				"total_gpu_memory_gib x memory_fraction");
		}
		break;
	}
	case MPS_FIG_AVAILABLE_KV_CACHE_GIB: {
		/* V0's budget lines: requested - weights - non-torch - activations (0.7), total x utilisation -
		 * peak torch - non-torch (0.6), each term with its rounding */
		const mps_engine_figure *rq = find(r, MPS_FIG_REQUESTED_MEMORY_GIB, f->line);
		const mps_engine_figure *w = find(r, MPS_FIG_WEIGHTS_LOADED_GIB, f->line);
		const mps_engine_figure *nt = find(r, MPS_FIG_NON_TORCH_MEMORY_GIB, f->line);
		const mps_engine_figure *a = find(r, MPS_FIG_ACTIVATION_PEAK_GIB, f->line);
		const mps_engine_figure *pt = find(r, MPS_FIG_PEAK_TORCH_MEMORY_GIB, f->line);
		const mps_engine_figure *t = find(r, MPS_FIG_TOTAL_GPU_MEMORY_GIB, f->line);
		const mps_engine_figure *fr = find(r, MPS_FIG_MEMORY_FRACTION, f->line);

		if (rq && w && nt && a && near(rq, f) && near(w, f) && near(nt, f) && near(a, f)) {
			double v = rq->reported - w->reported - nt->reported - a->reported;
			double h = half_unit(rq->decimals) + half_unit(w->decimals) + half_unit(nt->decimals) +
				   half_unit(a->decimals);

			implied(c, v - h, v + h, "requested - weights - non_torch - activation peak");
		} else if (pt && nt && t && fr && pt->line == f->line && t->line == f->line && near(fr, f)) {
			double h = half_unit(t->decimals) + half_unit(pt->decimals) + half_unit(nt->decimals);
			double v = t->reported * fr->reported - pt->reported - nt->reported;

			implied(c, v - h, v + h, "total x gpu_memory_utilization - peak_torch - non_torch");
		}
		break;
	}
	default:
		break;
	}
}

static void check_sglang(const check_ctx *x, const mps_engine_figure *f, mps_engine_comparison *c)
{
	const mps_engine_report *r = x->r;
	const mp_engine_prediction *p = &x->b->predicted;
	const mps_engine_figure *u;

	switch (f->kind) {
	case MPS_FIG_K_CACHE_GIB:
	case MPS_FIG_V_CACHE_GIB:
		if ((u = find(r, MPS_FIG_KV_CACHE_TOKENS, f->line)) != NULL && p->cell_size_bytes) {
			double v = u->reported * (double)(p->cell_size_bytes / 2) / GIB;

			implied(c, v, v, "kv_cache_tokens x cell / 2");
		}
		break;
	case MPS_FIG_KV_CACHE_GIB:
		if ((u = find(r, MPS_FIG_KV_CACHE_TOKENS, f->line)) != NULL && p->cell_size_bytes) {
			double v = u->reported * (double)p->cell_size_bytes / GIB;

			implied(c, v, v, "kv_cache_tokens x cell (MLA: one latent pool)");
		}
		break;
	case MPS_FIG_KV_CACHE_TOKENS: {
		const mps_engine_figure *t = find(r, MPS_FIG_TOTAL_GPU_MEMORY_GIB, f->line);
		const mps_engine_figure *a = find(r, MPS_FIG_AVAILABLE_AFTER_WEIGHTS_GIB, f->line);

		if (t && a) {
			double ht = half_unit(t->decimals), ha = half_unit(a->decimals), fr = x->b->inputs.memory_fraction;

			implied(c,
				(double)mp_sglang_max_total_num_tokens(t->reported + ht, a->reported - ha, fr,
								       p->cell_size_bytes),
				(double)mp_sglang_max_total_num_tokens(t->reported - ht, a->reported + ha, fr,
								       p->cell_size_bytes),
				"total_gpu_memory_gib, available_after_weights_gib, mem_fraction_static");
		}
		break;
	}
	case MPS_FIG_AVAILABLE_AFTER_POOL_GIB: {
		const mps_engine_figure *a = find(r, MPS_FIG_AVAILABLE_AFTER_WEIGHTS_GIB, f->line);
		const mps_engine_figure *k = find(r, MPS_FIG_K_CACHE_GIB, f->line);
		const mps_engine_figure *v = find(r, MPS_FIG_V_CACHE_GIB, f->line);

		if (a && k && v) {
			double h = half_unit(a->decimals) + half_unit(k->decimals) + half_unit(v->decimals);
			double m = a->reported - k->reported - v->reported;

			implied(c, m - h, m + h, "available_after_weights - K - V");
		}
		break;
	}
	default:
		break;
	}
}

static void check_trtllm(const check_ctx *x, const mps_engine_figure *f, mps_engine_comparison *c)
{
	const mps_engine_report *r = x->r;
	const mp_engine_inputs *in = &x->b->inputs;
	uint64_t kvpt = x->b->predicted.kv_size_per_token_bytes;
	const mps_engine_figure *u;

	if (kvpt == 0)
		return;
	switch (f->kind) {
	case MPS_FIG_KV_CACHE_TOKENS:
		if ((u = find(r, MPS_FIG_KV_CACHE_BYTES, f->line)) != NULL) {
			double t = floor(u->reported / (double)kvpt);

			implied(c, t, t, "kv_cache_bytes / kv_size_per_token");
		} else if ((u = find(r, MPS_FIG_AVAILABLE_KV_CACHE_GIB, f->line)) != NULL) {
			double h = half_unit(u->decimals);

			implied(c, (double)mp_trtllm_max_tokens((u->reported - h) * GIB, kvpt),
				(double)mp_trtllm_max_tokens((u->reported + h) * GIB, kvpt), "available_kv_cache_gib");
		}
		break;
	case MPS_FIG_NUM_GPU_BLOCKS:
		if ((u = find(r, MPS_FIG_KV_CACHE_TOKENS, f->line)) != NULL) {
			double b = (double)mp_trtllm_blocks(count_of(u->reported), in->block_size);

			implied(c, b, b, "kv_cache_tokens / tokens_per_block");
		} else if ((u = find(r, MPS_FIG_AVAILABLE_AFTER_WEIGHTS_GIB, f->line)) != NULL) {
			double h = half_unit(u->decimals);

			implied(c,
				(double)mp_trtllm_blocks(
					mp_trtllm_max_tokens((u->reported - h) * GIB * in->memory_fraction, kvpt),
					in->block_size),
				(double)mp_trtllm_blocks(
					mp_trtllm_max_tokens((u->reported + h) * GIB * in->memory_fraction, kvpt),
					in->block_size),
				"available_after_weights_gib x free_gpu_memory_fraction");
		}
		break;
	case MPS_FIG_KV_SIZE_PER_TOKEN_BYTES:
		implied(c, (double)kvpt, (double)kvpt, "the plan's model and KV dtype");
		break;
	default:
		break;
	}
}

/* memplan's figure of that kind, in its unit: the plan through the engine's arithmetic. */
static bool predicted(const mps_engine_block *b, const mps_engine_figure *f, double *out, const char **basis)
{
	const mp_engine_inputs *in = &b->inputs;
	const mp_engine_prediction *p = &b->predicted;
	uint64_t len = f->tokens_per_request ? f->tokens_per_request : in->max_model_len;
	bool sg = b->engine == MP_ENGINE_SGLANG, trt = b->engine == MP_ENGINE_TRTLLM;

	*basis = "engine arithmetic on the plan";
	switch (f->kind) {
	case MPS_FIG_WEIGHTS_LOADED_GIB:
		*basis = "the plan's weights as the engine allocates them";
		*out = (double)in->weights_bytes / GIB;
		return true;
	case MPS_FIG_TOTAL_GPU_MEMORY_GIB:
		*basis = "the device profile";
		*out = sg ? p->total_gpu_memory_gib : (double)in->total_memory_bytes / GIB;
		return true;
	case MPS_FIG_FREE_GPU_MEMORY_GIB:
		*basis = "the device profile less the CUDA context";
		*out = ((double)in->total_memory_bytes - (double)in->context_bytes) / GIB;
		return true;
	case MPS_FIG_MEMORY_FRACTION:
		*basis = "the launch argument";
		*out = in->memory_fraction;
		return true;
	case MPS_FIG_REQUESTED_MEMORY_GIB:
		*out = (double)p->requested_memory_bytes / GIB;
		return !sg && !trt;
	case MPS_FIG_ACTIVATION_PEAK_GIB:
		*basis = "modelled: the profile's peak per rank (its forward at max_num_batched_tokens, or its sampler)";
		*out = (double)(p->profile_peak_bytes ? p->profile_peak_bytes : in->activation_bytes) / GIB;
		return true;
	case MPS_FIG_PEAK_TORCH_MEMORY_GIB:
		*basis = "modelled: weights + the plan's prefill workspace";
		*out = trt ? (double)p->peak_memory_bytes / GIB
			   : (double)(in->weights_bytes + (p->profile_peak_bytes ? p->profile_peak_bytes
										     : in->activation_bytes)) /
				     GIB;
		return true;
	case MPS_FIG_AVAILABLE_KV_CACHE_GIB:
		*basis = "engine arithmetic on the plan (the activation peak modelled)";
		*out = sg ? p->rest_memory_gib : (double)p->available_kv_cache_bytes / GIB;
		return true;
	case MPS_FIG_NUM_GPU_BLOCKS:
		*out = (double)p->num_gpu_blocks;
		return !sg;
	case MPS_FIG_KV_CACHE_TOKENS:
		*out = (double)p->kv_cache_tokens;
		return true;
	case MPS_FIG_MAX_CONCURRENCY:
		if (sg || trt)
			return false;
		*out = p->kv_groups == 1 && in->window_layers == 0
			       ? mp_vllm_max_concurrency(p->num_gpu_blocks, in->block_size, len)
			       : p->max_concurrency;
		return true;
	case MPS_FIG_NEEDED_KV_CACHE_GIB:
		if (sg || trt || in->window_layers)
			return false;
		*out = (double)((len + in->block_size - 1) / in->block_size) * (double)p->page_bytes *
		       (double)p->group_layers / GIB;
		return true;
	case MPS_FIG_ESTIMATED_MAX_MODEL_LEN:
		*out = (double)p->estimated_max_model_len;
		return !sg && !trt;
	case MPS_FIG_BLOCK_SIZE:
		*basis = "the launch argument";
		*out = (double)in->block_size;
		return true;
	case MPS_FIG_AVAILABLE_AFTER_WEIGHTS_GIB:
		*out = sg ? p->available_after_weights_gib
			  : ((double)in->total_memory_bytes - (double)in->context_bytes - (double)in->weights_bytes) / GIB;
		return sg || trt;
	case MPS_FIG_K_CACHE_GIB:
	case MPS_FIG_V_CACHE_GIB:
		*out = (double)p->k_size_bytes / GIB;
		return sg;
	case MPS_FIG_AVAILABLE_AFTER_POOL_GIB:
		*out = p->available_after_weights_gib - 2 * (double)p->k_size_bytes / GIB;
		return sg;
	case MPS_FIG_MAX_RUNNING_REQUESTS:
		*basis = "the launch argument";
		*out = (double)p->max_running_requests;
		return sg;
	case MPS_FIG_CHUNKED_PREFILL_SIZE:
		*basis = "the launch argument";
		*out = (double)in->max_num_batched_tokens;
		return true;
	case MPS_FIG_CONTEXT_LEN:
		*basis = "the launch argument";
		*out = (double)in->max_model_len;
		return true;
	case MPS_FIG_KV_SIZE_PER_TOKEN_BYTES:
		*out = (double)(sg ? p->cell_size_bytes : p->kv_size_per_token_bytes);
		return sg || trt;
	case MPS_FIG_KV_CACHE_BYTES:
		*out = (double)p->max_tokens * (double)p->kv_size_per_token_bytes;
		return trt;
	case MPS_FIG_CUDA_GRAPH_GIB:
		*basis = "modelled: the release's CUDA-graph estimate (predicted.terms)";
		*out = (double)p->cuda_graph_bytes / GIB;
		return !sg && !trt;
	case MPS_FIG_KV_CACHE_GIB:
		*out = (double)p->max_total_num_tokens * (double)p->cell_size_bytes / GIB;
		return sg;
	case MPS_FIG_NON_TORCH_MEMORY_GIB: {
		/* the terms a release counts as memory outside PyTorch: inside the budget, but the profile's */
		double b = 0;

		*basis = "modelled: the release's terms outside PyTorch (predicted.terms)";
		for (size_t i = 0; i < p->nterms; i++)
			if (p->terms[i].in_budget && strcmp(p->terms[i].name, "profile_activation") != 0 &&
			    strcmp(p->terms[i].name, "sampler") != 0 && strcmp(p->terms[i].name, "cuda_graphs") != 0)
				b += (double)p->terms[i].bytes;
		*out = b / GIB;
		return !sg && !trt && p->nterms > 0;
	}
	default:
		return false; /* non_torch_memory: not modelled */
	}
}

/* The figures that follow from the KV budget: a gap in them is a gap in one of the terms taken before it. */
static bool kv_figure(mps_figure k)
{
	return k == MPS_FIG_AVAILABLE_KV_CACHE_GIB || k == MPS_FIG_NUM_GPU_BLOCKS || k == MPS_FIG_KV_CACHE_TOKENS ||
	       k == MPS_FIG_MAX_CONCURRENCY || k == MPS_FIG_K_CACHE_GIB || k == MPS_FIG_V_CACHE_GIB ||
	       k == MPS_FIG_KV_CACHE_GIB || k == MPS_FIG_KV_CACHE_BYTES || k == MPS_FIG_ESTIMATED_MAX_MODEL_LEN;
}

/* The terms taken before the KV budget, as an engine prints them (GiB, or a fraction of the total). */
static bool term_figure(mps_figure k)
{
	return k == MPS_FIG_WEIGHTS_LOADED_GIB || k == MPS_FIG_NON_TORCH_MEMORY_GIB || k == MPS_FIG_ACTIVATION_PEAK_GIB ||
	       k == MPS_FIG_CUDA_GRAPH_GIB || k == MPS_FIG_TOTAL_GPU_MEMORY_GIB || k == MPS_FIG_MEMORY_FRACTION ||
	       k == MPS_FIG_PEAK_TORCH_MEMORY_GIB || k == MPS_FIG_AVAILABLE_AFTER_WEIGHTS_GIB;
}

/*
 * A KV figure off its prediction: names the printed term whose figure is furthest from memplan's (in GiB; a
 * fraction counts as its share of the total), the printed and predicted values and the gap, into
 * rows[i].explained_by. With no printed term off, says so and names memplan's largest modelled term the log does
 * not print.
 */
static void explain_gap(const mps_engine_report *r, mps_engine_comparison *rows, size_t i, const mps_engine_block *b)
{
	const mps_engine_figure *f = &r->figures[i];
	mps_engine_comparison *c = &rows[i];
	double worst = 0, total = (double)b->inputs.total_memory_bytes / GIB;
	size_t at = SIZE_MAX;

	if (!c->have_predicted || c->within_tolerance || !kv_figure(f->kind))
		return;
	for (size_t k = 0; k < r->nfigures && k < MPS_ENGINE_MAX_FIGURES; k++) {
		const mps_engine_comparison *t = &rows[k];
		double gap;

		if (!term_figure(r->figures[k].kind) || !t->have_predicted || t->within_tolerance)
			continue;
		gap = fabs(r->figures[k].reported - t->predicted);
		if (r->figures[k].kind == MPS_FIG_MEMORY_FRACTION)
			gap *= total;
		if (gap > worst) {
			worst = gap;
			at = k;
		}
	}
	if (at != SIZE_MAX) {
		const mps_engine_figure *t = &r->figures[at];

		snprintf(c->explained_by, sizeof(c->explained_by), "%s (line %u): printed %g, predicted %.4g (%+.2f GiB)",
			 mps_figure_name(t->kind), t->line, t->reported, rows[at].predicted,
			 (t->kind == MPS_FIG_MEMORY_FRACTION ? total : 1) * (t->reported - rows[at].predicted));
		return;
	}
	{
		const mp_engine_prediction *p = &b->predicted;
		const mp_engine_term *big = NULL;

		for (size_t k = 0; k < p->nterms; k++)
			if (p->terms[k].in_budget && (big == NULL || p->terms[k].bytes > big->bytes))
				big = &p->terms[k];
		snprintf(c->explained_by, sizeof(c->explained_by),
			 "no printed term is off: the gap lies in one the log does not print (memplan's largest: %s, %.2f "
			 "GiB)",
			 big ? big->name : "none", big ? (double)big->bytes / GIB : 0.0);
	}
}

mp_status mps_engine_check_run(mps_service *s, const mps_engine_check_request *rq, mps_engine_check *out,
			       mp_error *err)
{
	const mps_engine_report *r = &rq->report;
	check_ctx x;
	mp_status st;

	memset(out, 0, sizeof(*out));
	if (!rq->plan.device.given)
		return mp_fail(err, MP_EINVAL, "/plan/device",
			       "the engine check needs the device the engine ran on: the engines size their KV cache "
			       "from its memory (a stored id or an inline profile with usable_memory_bytes)");
	st = mps_plan_inference(s, &rq->plan, &out->plan, err);
	if (st != MP_OK)
		return st;
	memset(&x, 0, sizeof(x));
	x.r = r;
	x.b = &out->plan.engine;
	x.uniform = x.b->predicted.kv_groups == 1 && x.b->inputs.window_layers == 0;
	x.page = x.b->predicted.page_bytes;
	x.layers = x.b->predicted.group_layers;
	x.min_over_workers = out->plan.mem.tensor_parallel_size > 1;
	for (size_t i = 0; i < r->nfigures && i < MPS_ENGINE_MAX_FIGURES; i++) {
		const mps_engine_figure *f = &r->figures[i];
		mps_engine_comparison *c = &out->rows[i];

		c->tolerance = half_unit(f->decimals);
		c->have_predicted = predicted(x.b, f, &c->predicted, &c->basis);
		if (c->have_predicted) {
			/* a count the engine prints whole is compared whole */
			c->within_tolerance = fabs(f->reported - c->predicted) <= c->tolerance + 1e-9;
			out->predicted++;
			out->within_tolerance += c->within_tolerance;
		}
		if (r->engine == MP_ENGINE_SGLANG)
			check_sglang(&x, f, c);
		else if (r->engine == MP_ENGINE_TRTLLM)
			check_trtllm(&x, f, c);
		else
			check_vllm(&x, f, c);
		if (c->have_implied) {
			c->consistent = f->reported >= c->implied_min - c->tolerance - 1e-9 &&
					f->reported <= c->implied_max + c->tolerance + 1e-9;
			out->checked++;
			out->consistent += c->consistent;
		}
	}
	for (size_t i = 0; i < r->nfigures && i < MPS_ENGINE_MAX_FIGURES; i++)
		explain_gap(r, out->rows, i, &out->plan.engine);
	return MP_OK;
}
