/*
 * workspace.c: the transient memory of one prefill forward, over what persists (weights, KV cache).
 * It counts the tensors a PyTorch eager-mode forward of transformers' modeling files holds at three moments
 * of the last decoder layer (the KV cache is complete by then): the attention, the MLP, and the final norm
 * with lm_head. Every term is a tensor the Python code keeps referenced; the comments name the line.
 * Checked against ../shared/groundtruth/h200 (llama, qwen2, gpt2; sdpa and eager), see bench/RESULTS.md.
 */
#include <string.h>

#include "../core/mp_assert.h"
#include "memplan.h"

/*
 * What a family's forward keeps alive (T = tokens in the forward, h = hidden, F = T x ffn width):
 *   model_live  tensors of T x h the model forward keeps across the layer loop: `inputs_embeds` stays bound
 *               in <Type>Model.forward while `hidden_states` moves on (modeling_llama.py LlamaModel.forward).
 *   layer_mlp   T x h tensors of the decoder layer alive during its MLP: the layer's input (still bound in
 *               the caller's loop), the post-attention residual and the normed MLP input (LlamaDecoderLayer);
 *               GPT2Block also keeps `attn_output` bound (4).
 *   mlp_ffn     F tensors at the MLP's peak: gated act(gate) x up keeps act(gate), up and the product (3);
 *               phi3's fused gate_up output (2F) + act + product (4); gpt2's gelu_new
 *               0.5 * x * (1 + tanh(...)) keeps x, 0.5x and two temporaries (4); a single-kernel GELU keeps
 *               its input and output (2).
 *   fused_qkv   the fused qkv projection output stays bound through attention (gpt2 c_attn, falcon, neox,
 *               phi3 qkv_proj).
 *   softmax_fp32  eager softmax(dim=-1, dtype=torch.float32).to(dtype): input, its fp32 copy and the fp32
 *               output coexist (2 + 4 + 4 bytes per score in bf16); gpt2/falcon softmax in the model dtype
 *               (input + output).
 */
typedef struct fwd_style {
	const char *model_type;
	uint8_t model_live, layer_mlp, mlp_ffn;
	bool fused_qkv, softmax_fp32;
} fwd_style;

static const fwd_style styles[] = {
    {"gpt2", 1, 4, 4, true, false},
    {"phi3", 1, 3, 4, true, true},
    {"gpt_neox", 1, 3, 2, true, true},
    {"falcon", 1, 3, 2, true, false},
};

static fwd_style style_of(const mp_model *m)
{
	fwd_style s = {m->model_type, 1, 3, 3, false, true}; /* the llama family */

	/* the first letters first: most plans are of a type no row names, and a strcmp call costs ~30 instructions */
	for (size_t i = 0; i < MP_COUNT_OF(styles); i++)
		if (styles[i].model_type[0] == m->model_type[0] && strcmp(styles[i].model_type, m->model_type) == 0)
			return styles[i];
	if (m->ffn_kind == MP_FFN_PLAIN)
		s.mlp_ffn = 2;
	return s;
}

#define LIM (UINT64_C(1) << 24)
/* a width is a product of two dimensions, times at most 8 bytes a value: it fits 64 bits before term() checks the
 * product by tokens; a sequence's positions are within the same bound */
MP_STATIC_ASSERT(LIM * LIM <= UINT64_MAX / 8 && MP_MAX_SEQUENCE_LENGTH <= LIM,
		 "two dimensions x 8 bytes fit 64 bits; positions are at most LIM");

typedef struct acc {
	uint64_t v;
	bool ok;
} acc;

/* a += x * y * z */
static void term(acc *a, uint64_t x, uint64_t y, uint64_t z)
{
	uint64_t p;

	a->ok = a->ok && mp_mul_u64(x, y, &p) && mp_mul_u64(p, z, &p) && mp_add_u64(a->v, p, &a->v);
}

static uint64_t max2(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* One prefill forward's shapes, per GPU: what every phase below reads. */
typedef struct fwd {
	const mp_model *m;
	fwd_style st;
	uint64_t a;		/* bytes per value of the compute dtype */
	uint64_t b;		/* sequences in the batch */
	uint64_t T;		/* tokens in the forward (the chunk) */
	uint64_t sk;		/* keys per sequence (a slot's share under a shared length) */
	uint64_t pos;		/* positions of one sequence in the chunk: min(T, sk) */
	uint64_t h;		/* hidden size */
	uint64_t tp;		/* tensor-parallel degree */
	uint64_t heads, kvh;	/* query and KV heads per GPU (a KV head replicated when tp > KV heads) */
	uint64_t kd, vd;	/* widths of one head's keys and values */
	bool eager;		/* attention "eager", not a fused kernel */
} fwd;

/* ----- attention by its kind (mp_attn_kind): the projections' outputs alive at the attention of the last layer,
 * and one head's key and value widths. A new kind is a function and a row of attn_kinds. */

/* MHA, GQA, MQA: the fused qkv output where the family fuses it, and q after apply_rotary_pos_emb */
static void proj_gqa(const fwd *f, acc *attn)
{
	const mp_model *m = f->m;

	if (f->st.fused_qkv)
		term(attn, f->T, (f->heads + 2 * f->kvh) * m->head_dim, f->a);
	if (!f->st.fused_qkv || m->rotary_dim)
		term(attn, f->T, f->heads * m->head_dim, f->a); /* q after apply_rotary_pos_emb: a new tensor */
}

static void widths_gqa(const mp_model *m, uint64_t *kd, uint64_t *vd)
{
	*kd = m->head_dim;
	*vd = m->head_dim;
}

/* DeepseekV3Attention: q_states, compressed_kv, kv_b_proj output, key_states = cat(k_pass, k_rot) */
static void proj_mla(const fwd *f, acc *attn)
{
	const mp_model *m = f->m;

	term(attn, f->T, f->heads * f->kd, f->a);
	term(attn, f->T, m->kv_lora_rank + m->qk_rope_head_dim, f->a);
	term(attn, f->T, f->heads * (m->qk_nope_head_dim + m->v_head_dim), f->a);
	term(attn, f->T, f->heads * f->kd, f->a);
}

static void widths_mla(const mp_model *m, uint64_t *kd, uint64_t *vd)
{
	*kd = m->qk_nope_head_dim + m->qk_rope_head_dim;
	*vd = m->v_head_dim;
}

static const struct attn_kind {
	void (*projections)(const fwd *f, acc *attn);
	void (*widths)(const mp_model *m, uint64_t *kd, uint64_t *vd);
} attn_kinds[] = {
    [MP_ATTN_GQA] = {proj_gqa, widths_gqa},
    [MP_ATTN_MLA] = {proj_mla, widths_mla},
};
MP_STATIC_ASSERT(MP_COUNT_OF(attn_kinds) == MP_ATTN_MLA + 1, "a row of attn_kinds per mp_attn_kind");

/* ----- the scores, by the kernel that computes them. Each adds what it keeps alive to attn and sets
 * ws->scores_bytes where it materialises scores; false on overflow. A new kernel is a function and a row. */
typedef enum scores_kind { SCORES_FUSED, SCORES_EAGER, SCORES_MATH, SCORES_COUNT } scores_kind;

/* sdpa output [b, heads, q, v] and its .transpose(1, 2).contiguous() copy */
static bool scores_fused(const fwd *f, acc *attn, mp_workspace *ws)
{
	(void)ws;
	term(attn, 2 * f->T, f->heads * f->vd, f->a);
	return true;
}

/* scores [batch, heads, q, k]: matmul * scaling, + mask, softmax; the peak is at the softmax */
static bool scores_eager(const fwd *f, acc *attn, mp_workspace *ws)
{
	uint64_t a = f->a;
	acc sc = {0, true}, x = {0, true};

	term(&sc, f->heads, f->T, f->sk);
	if (!sc.ok)
		return false;
	term(&x, sc.v, f->st.softmax_fp32 ? a + (a == 4 ? 0 : 4) + 4 : 2 * a, 1);
	if (!x.ok)
		return false;
	ws->scores_bytes = x.v;
	term(attn, x.v, 1, 1);
	return true;
}

/* aten _scaled_dot_product_attention_math: q and k scaled copies, scores [b, heads, q, k] in the compute dtype
 * with the causal mask added in place (the mask itself a float [q, k] tensor), and _safe_softmax's output beside
 * its input: 2 score tensors + the mask at the softmax */
static bool scores_math(const fwd *f, acc *attn, mp_workspace *ws)
{
	acc sc = {0, true}, x = {0, true};

	term(&sc, f->heads, f->T, f->sk);
	term(attn, f->T, f->heads * f->kd, f->a);		  /* q x sqrt(scale) */
	term(attn, max2(f->T, f->sk), f->heads * f->kd, f->a); /* k^T x sqrt(scale), expanded */
	if (!sc.ok)
		return false;
	term(&x, sc.v, 2 * f->a, 1);
	term(&x, f->pos, f->sk, f->a); /* the causal mask [q, k], one per call */
	if (!x.ok)
		return false;
	ws->scores_bytes = x.v;
	term(attn, x.v, 1, 1);
	term(attn, 2 * f->T, f->heads * f->vd, f->a); /* the output and its contiguous copy */
	return true;
}

static bool (*const scores_of[])(const fwd *f, acc *attn, mp_workspace *ws) = {
    [SCORES_FUSED] = scores_fused,
    [SCORES_EAGER] = scores_eager,
    [SCORES_MATH] = scores_math,
};
MP_STATIC_ASSERT(MP_COUNT_OF(scores_of) == SCORES_COUNT, "a scores function per scores_kind");

/* The attention phase: the layer input and its normed copy, the kind's projections, K and V repeated to every
 * query head where the kernel needs them, and the scores. */
static bool attention_phase(const fwd *f, acc *attn, mp_workspace *ws)
{
	const mp_model *m = f->m;
	/* sdpa in fp32 with grouped-query heads and no mask runs SDPA's math fallback (planner/sdpa.c): it
	 * expands K and V itself and materialises the scores as eager attention does */
	bool math = !f->eager && mp_sdpa_kernel_of(m, f->a, f->heads, f->kvh, ws->mask_bytes != 0) == MP_SDPA_MATH;
	scores_kind k = f->eager ? SCORES_EAGER : math ? SCORES_MATH : SCORES_FUSED;

	term(attn, 2, f->T, f->h * f->a);
	attn_kinds[m->attn_kind].projections(f, attn);
	/* repeat_kv copies K and V to every query head when groups > 1 (eager_attention_forward; sdpa only with a
	 * mask, use_gqa_in_sdpa; the math kernel's repeat_interleave) over the keys of the chunk's sequences */
	if (m->attn_kind == MP_ATTN_GQA && f->kvh < f->heads && (f->eager || ws->mask_bytes || math))
		term(attn, f->heads, max2(f->T, f->sk), (f->kd + f->vd) * f->a);
	return scores_of[k](f, attn, ws);
}

/* ----- the MLP of the last layer, by the kinds of feed-forward block the model has. */

/* Dense: mlp_ffn tensors of T x ffn (fwd_style). */
static bool mlp_dense(const fwd *f, uint64_t *bytes)
{
	acc d = {0, true};

	term(&d, f->st.mlp_ffn, f->T, (f->m->intermediate_size / f->tp) * f->a);
	*bytes = d.v;
	return d.ok;
}

/* MoE: transformers' default experts backend, grouped_mm (integrations/moe.py grouped_mm_experts_forward; the
 * default experts_implementation since transformers 5, modeling_utils get_correct_experts_implementation), over
 * S = T x top_k token-expert pairs: the routed output T x h; int64 token_idx, perm, inv_perm, the grouped expert
 * ids and the router's top-k indices (5 x 8 bytes per pair) and the top-k and grouped routing weights; the gathered
 * states twice (hidden_states[token_idx] and its regrouped copy, both still bound), then the larger of two
 * moments: at act(gate) x up, gate_up_out (2 moe_ffn), act(gate) and the product (4 moe_ffn in all); at the
 * routing multiply, gate_up_out, the product and the down output twice (3 moe_ffn + 2 h). The shared expert runs
 * after the routed part (DeepseekV3MoE.forward): its 3 x T x shared_ffn with the routed output alive. */
static bool mlp_moe(const fwd *f, uint64_t *bytes)
{
	const mp_model *m = f->m;
	uint64_t mf = m->moe_intermediate_size / f->tp, k = m->num_experts_per_tok, T = f->T, h = f->h, a = f->a;
	acc r = {0, true}, sh = {0, true};

	term(&r, T, h, a);
	term(&r, T, k, 5 * 8 + 2 * a);
	term(&r, T, k, 2 * h * a);
	term(&r, T, k, max2(4 * mf, 3 * mf + 2 * h) * a);
	term(&sh, T, h, a);
	term(&sh, 3 * T, m->shared_expert_intermediate_size / f->tp, a);
	*bytes = max2(r.v, sh.v);
	return r.ok && sh.ok;
}

/* The MLP phase: the decoder layer's T x h tensors, then the largest block any layer has. */
static bool mlp_phase(const fwd *f, acc *mlp)
{
	const mp_model *m = f->m;
	uint64_t dense = 0, moe = 0, moe_layers = 0;

	term(mlp, f->st.layer_mlp, f->T, f->h * f->a);
	for (uint64_t i = 0; m->num_experts && i < m->num_layers; i++) /* no experts: no MoE layer to look for */
		moe_layers += mp_model_is_moe_layer(m, i);
	if (moe_layers < m->num_layers && !mlp_dense(f, &dense))
		return false;
	if (moe_layers && !mlp_moe(f, &moe))
		return false;
	term(mlp, max2(dense, moe), 1, 1);
	return true;
}

/* Present in every phase. RoPE: cos and sin of shape [1, positions, rotary_dim] in the compute dtype per RoPE
 * module (LlamaRotaryEmbedding.forward; position_ids = cache_position.unsqueeze(0)), the int64 cache_position;
 * gpt2: the learned position embeddings [1, positions, h]. The mask: eager, the 4-D additive mask [batch, 1, q, k]
 * in the compute dtype (masking_utils eager_mask); fused, a boolean mask only where a sliding window is shorter
 * than the sequence (sdpa_mask). Then the model forward's own T x h tensors (fwd_style.model_live). */
static bool common_terms(const fwd *f, acc *common, mp_workspace *ws)
{
	const mp_model *m = f->m;
	acc x = {0, true};

	if (m->rotary_dim)
		term(common, 2 * (uint64_t)(m->rotary_buffer_sets ? m->rotary_buffer_sets : 1), f->pos * m->rotary_dim,
		     f->a);
	term(common, f->pos, 8, 1);
	if (m->learned_position_embeddings)
		term(common, f->pos, f->h, f->a);
	if (f->eager)
		term(&x, f->T, f->sk, f->a);
	else if (m->sliding_window && m->sliding_window < f->sk)
		term(&x, f->T, f->sk, 1);
	if (!x.ok)
		return false;
	ws->mask_bytes = x.v;
	term(common, x.v, 1, 1);
	term(common, f->st.model_live, f->T, f->h * f->a);
	return true;
}

/* Final norm and lm_head: the last hidden state, the normed copy and the kept logits (logits_to_keep positions per
 * sequence, not upcast: <Type>ForCausalLM.forward). Under the pytorch layout the caching allocator rounds the
 * logits tensor up to 512 B like any other. */
static bool head_phase(const fwd *f, uint64_t positions, mp_weight_layout layout, acc *head, mp_workspace *ws)
{
	acc x = {0, true};

	term(head, 2, f->T, f->h * f->a);
	term(&x, f->b, positions, f->m->vocab_size * f->a);
	if (!x.ok)
		return false;
	if (layout == MP_LAYOUT_PYTORCH && x.v % MP_PYTORCH_ALLOCATION_BYTES)
		x.v += MP_PYTORCH_ALLOCATION_BYTES - x.v % MP_PYTORCH_ALLOCATION_BYTES;
	ws->logits_bytes = x.v;
	term(head, x.v, 1, 1);
	return true;
}

/* The model dimensions the widths multiply: each at most LIM, so a product of two fits in 48 bits. */
static bool dimensions_in_range(const mp_model *m)
{
	return ((m->hidden_size > LIM) | (m->num_heads > LIM) | (m->head_dim > LIM) | (m->intermediate_size > LIM) |
		(m->vocab_size > LIM) | (m->moe_intermediate_size > LIM) | (m->shared_expert_intermediate_size > LIM) |
		(m->num_experts > LIM) | (m->kv_lora_rank > LIM) | (m->qk_nope_head_dim > LIM) |
		(m->qk_rope_head_dim > LIM) | (m->v_head_dim > LIM) | (m->num_experts_per_tok > LIM) |
		(m->rotary_dim > LIM)) == 0;
}

/* The forward's shapes from the request and the options (tp, dtype, chunk, length scope); false when batch x
 * sequence_length overflows (f->T stays 0). */
static bool fwd_of(const mp_model *m, const mp_inference_req *req, const mp_inference_opts *o, fwd *f)
{
	uint64_t tp = o->tensor_parallel_size ? o->tensor_parallel_size : (req->num_gpus ? req->num_gpus : 1);
	uint64_t s = req->sequence_length, total;

	*f = (fwd){
	    .m = m,
	    .st = style_of(m),
	    .a = mp_dtype_layout_of(o->compute_dtype ? o->compute_dtype : MP_DTYPE_BF16).block_bytes,
	    .b = req->batch_size,
	    .h = m->hidden_size,
	    .tp = tp,
	    .heads = m->num_heads / tp,
	    .kvh = m->num_kv_heads >= tp ? m->num_kv_heads / tp : 1,
	    .eager = o->attention == MP_ATTENTION_EAGER,
	};
	attn_kinds[m->attn_kind].widths(m, &f->kd, &f->vd);
	if (o->length_scope == MP_LENGTH_SHARED) {
		total = s;
		f->sk = s / f->b + (s % f->b != 0); /* each slot's share */
	} else {
		if (!mp_mul_u64(f->b, s, &total))
			return false;
		f->sk = s;
	}
	f->T = o->max_num_batched_tokens && o->max_num_batched_tokens < total ? o->max_num_batched_tokens : total;
	f->pos = f->T < f->sk ? f->T : f->sk;
	return true;
}

static const char *peak_phase_of(uint64_t attn, uint64_t mlp, uint64_t head)
{
	if (head > max2(attn, mlp))
		return "head";
	return mlp > attn ? "mlp" : "attention";
}

mp_status mp_prefill_workspace(const mp_model *m, const mp_inference_req *req, const mp_inference_opts *opts,
                               mp_workspace *ws, mp_error *err)
{
	static const mp_inference_opts defaults;
	const mp_inference_opts *o = opts ? opts : &defaults;
	uint64_t positions = o->logits_positions ? o->logits_positions : 1;
	fwd f;
	acc common = {0, true}, attn, mlp, head;

	memset(ws, 0, sizeof(*ws));
	if (positions > LIM)
		return mp_fail_at(err, MP_EOVERFLOW, req->json_pointer, "/logits_positions",
				  "logits_positions must be at most %llu", (unsigned long long)LIM);
	/* a model dimension, not the request, is out of range: the error names the model's field, not the
	 * request's /sequence_length */
	if (!dimensions_in_range(m))
		return mp_model_overflow(m, "the prefill workspace", err);
	if (MP_NEVER((unsigned)m->attn_kind >= MP_COUNT_OF(attn_kinds)))
		return mp_fail(err, MP_EINTERNAL, "", "the prefill workspace: attention kind %d has no row",
			       (int)m->attn_kind);
	if (!fwd_of(m, req, o, &f))
		goto overflow;
	ws->prefill_tokens = f.T;
	if (!common_terms(&f, &common, ws))
		goto overflow;
	attn = mlp = head = common;
	if (!attention_phase(&f, &attn, ws) || !mlp_phase(&f, &mlp) ||
	    !head_phase(&f, positions, o->formats.layout, &head, ws) || !common.ok || !attn.ok || !mlp.ok || !head.ok)
		goto overflow;
	ws->attention_phase_bytes = attn.v;
	ws->mlp_phase_bytes = mlp.v;
	ws->head_phase_bytes = head.v;
	ws->peak_phase = peak_phase_of(attn.v, mlp.v, head.v);
	return MP_OK;
overflow:
	return mp_fail_at(err, MP_EOVERFLOW, req->json_pointer, "/sequence_length",
			  "the prefill workspace of %llu tokens (batch_size x sequence_length, or max_num_batched_tokens) "
			  "x hidden_size %llu overflows 64 bits: lower sequence_length, batch_size or max_num_batched_tokens",
			  (unsigned long long)f.T, (unsigned long long)m->hidden_size);
}
