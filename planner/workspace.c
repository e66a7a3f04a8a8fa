/*
 * workspace.c: the transient memory of one prefill forward, over what persists (weights, KV cache).
 * It counts the tensors a PyTorch eager-mode forward of transformers' modeling files holds at three moments
 * of the last decoder layer (the KV cache is complete by then): the attention, the MLP, and the final norm
 * with lm_head. Every term is a tensor the Python code keeps referenced; the comments name the line.
 * Checked against ../shared/groundtruth/h200 (llama, qwen2, gpt2; sdpa and eager), see bench/RESULTS.md.
 */
#include <string.h>

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

	for (size_t i = 0; i < sizeof(styles) / sizeof(styles[0]); i++)
		if (strcmp(styles[i].model_type, m->model_type) == 0)
			return styles[i];
	if (m->ffn_kind == MP_FFN_PLAIN)
		s.mlp_ffn = 2;
	return s;
}

#define LIM (UINT64_C(1) << 24)

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

mp_status mp_prefill_workspace(const mp_model *m, const mp_inference_req *req, const mp_inference_opts *opts,
                               mp_workspace *ws, mp_error *err)
{
	static const mp_inference_opts defaults;
	const mp_inference_opts *o = opts ? opts : &defaults;
	fwd_style st = style_of(m);
	uint64_t tp = o->tensor_parallel_size ? o->tensor_parallel_size : (req->num_gpus ? req->num_gpus : 1);
	uint64_t a = mp_dtype_layout_of(o->compute_dtype ? o->compute_dtype : MP_DTYPE_BF16).block_bytes;
	uint64_t b = req->batch_size, s = req->sequence_length, total, T = 0, sk, pos, h = m->hidden_size;
	uint64_t heads = m->num_heads / tp, kvh = m->num_kv_heads >= tp ? m->num_kv_heads / tp : 1;
	uint64_t positions = o->logits_positions ? o->logits_positions : 1;
	acc common = {0, true}, attn = {0, true}, mlp = {0, true}, head = {0, true}, x;
	bool eager = o->attention == MP_ATTENTION_EAGER;

	memset(ws, 0, sizeof(*ws));
	/* every width below is a product of two model dimensions: keep each dimension at most 2^24 */
	if (h > LIM || m->num_heads > LIM || m->head_dim > LIM || m->intermediate_size > LIM || m->vocab_size > LIM ||
	    m->moe_intermediate_size > LIM || m->shared_expert_intermediate_size > LIM || m->num_experts > LIM ||
	    m->kv_lora_rank > LIM || m->qk_nope_head_dim > LIM || m->qk_rope_head_dim > LIM || m->v_head_dim > LIM ||
	    m->num_experts_per_tok > LIM || positions > LIM || m->rotary_dim > LIM)
		/* a model dimension, not the request, is out of range: the error names the model's field, not the
		 * request's /sequence_length */
		return positions > LIM ? mp_fail_at(err, MP_EOVERFLOW, req->json_pointer, "/logits_positions",
						    "logits_positions must be at most %llu", (unsigned long long)LIM)
				       : mp_model_overflow(m, "the prefill workspace", err);
	if (o->length_scope == MP_LENGTH_SHARED) {
		total = s;
		sk = s / b + (s % b != 0); /* each slot's share */
	} else {
		if (!mp_mul_u64(b, s, &total))
			goto overflow;
		sk = s;
	}
	T = o->max_num_batched_tokens && o->max_num_batched_tokens < total ? o->max_num_batched_tokens : total;
	pos = T < sk ? T : sk;
	ws->prefill_tokens = T;

	/* Present in every phase. RoPE: cos and sin of shape [1, positions, rotary_dim] in the compute dtype per
	 * RoPE module (LlamaRotaryEmbedding.forward; position_ids = cache_position.unsqueeze(0)), the int64
	 * cache_position; gpt2: the learned position embeddings [1, positions, h]. */
	if (m->rotary_dim)
		term(&common, 2 * (uint64_t)(m->rotary_buffer_sets ? m->rotary_buffer_sets : 1), pos * m->rotary_dim,
		     a);
	term(&common, pos, 8, 1);
	if (m->learned_position_embeddings)
		term(&common, pos, h, a);
	/* eager: the 4-D additive mask [batch, 1, q, k] in the compute dtype (masking_utils eager_mask);
	 * fused: a boolean mask only where a sliding window is shorter than the sequence (sdpa_mask). */
	x = (acc){0, true};
	if (eager)
		term(&x, T, sk, a);
	else if (m->sliding_window && m->sliding_window < sk)
		term(&x, T, sk, 1);
	if (!x.ok)
		goto overflow;
	ws->mask_bytes = x.v;
	term(&common, x.v, 1, 1);
	term(&common, st.model_live, T, h * a);

	/* Attention of the last layer: the layer input and its normed copy, q (and the fused qkv output). */
	attn = common;
	term(&attn, 2, T, h * a);
	if (m->attn_kind == MP_ATTN_MLA) {
		uint64_t qk = m->qk_nope_head_dim + m->qk_rope_head_dim;

		/* DeepseekV3Attention: q_states, compressed_kv, kv_b_proj output, key_states = cat(k_pass, k_rot) */
		term(&attn, T, heads * qk, a);
		term(&attn, T, m->kv_lora_rank + m->qk_rope_head_dim, a);
		term(&attn, T, heads * (m->qk_nope_head_dim + m->v_head_dim), a);
		term(&attn, T, heads * qk, a);
	} else {
		if (st.fused_qkv)
			term(&attn, T, (heads + 2 * kvh) * m->head_dim, a);
		if (!st.fused_qkv || m->rotary_dim)
			term(&attn, T, heads * m->head_dim, a); /* q after apply_rotary_pos_emb: a new tensor */
	}
	{
		uint64_t vd = m->attn_kind == MP_ATTN_MLA ? m->v_head_dim : m->head_dim;
		uint64_t kd = m->attn_kind == MP_ATTN_MLA ? m->qk_nope_head_dim + m->qk_rope_head_dim : m->head_dim;
		/* sdpa in fp32 with grouped-query heads and no mask runs SDPA's math fallback (planner/sdpa.c): it
		 * expands K and V itself and materialises the scores as eager attention does */
		bool math = !eager && mp_sdpa_kernel_of(m, a, heads, kvh, ws->mask_bytes != 0) == MP_SDPA_MATH;
		bool repeat = m->attn_kind == MP_ATTN_GQA && kvh < heads && (eager || ws->mask_bytes || math);

		/* repeat_kv copies K and V to every query head when groups > 1 (eager_attention_forward; sdpa only
		 * with a mask, use_gqa_in_sdpa; the math kernel's repeat_interleave) over the keys of the chunk's
		 * sequences */
		if (repeat)
			term(&attn, heads, max2(T, sk), (kd + vd) * a);
		if (math) {
			/* aten _scaled_dot_product_attention_math: q and k scaled copies, scores [b, heads, q, k] in the
			 * compute dtype with the causal mask added in place (the mask itself a float [q, k] tensor), and
			 * _safe_softmax's output beside its input: 2 score tensors + the mask at the softmax */
			acc sc = {0, true};

			term(&sc, heads, T, sk);
			term(&attn, T, heads * kd, a);		/* q x sqrt(scale) */
			term(&attn, max2(T, sk), heads * kd, a);	/* k^T x sqrt(scale), expanded */
			if (!sc.ok)
				goto overflow;
			x = (acc){0, true};
			term(&x, sc.v, 2 * a, 1);
			term(&x, pos, sk, a);			/* the causal mask [q, k], one per call */
			if (!x.ok)
				goto overflow;
			ws->scores_bytes = x.v;
			term(&attn, x.v, 1, 1);
			term(&attn, 2 * T, heads * vd, a); /* the output and its contiguous copy */
		} else if (eager) {
			/* scores [batch, heads, q, k]: matmul * scaling, + mask, softmax; the peak is at the softmax */
			acc sc = {0, true};

			term(&sc, heads, T, sk);
			if (!sc.ok)
				goto overflow;
			x = (acc){0, true};
			term(&x, sc.v, st.softmax_fp32 ? a + (a == 4 ? 0 : 4) + 4 : 2 * a, 1);
			if (!x.ok)
				goto overflow;
			ws->scores_bytes = x.v;
			term(&attn, x.v, 1, 1);
		} else {
			/* sdpa output [b, heads, q, v] and its .transpose(1, 2).contiguous() copy */
			term(&attn, 2 * T, heads * vd, a);
		}
	}

	/* MLP of the last layer. Dense: mlp_ffn tensors of T x ffn. MoE: transformers' default experts backend,
	 * grouped_mm (integrations/moe.py grouped_mm_experts_forward; the default experts_implementation since
	 * transformers 5, modeling_utils get_correct_experts_implementation), over S = T x top_k token-expert pairs:
	 * the routed output T x h; int64 token_idx, perm, inv_perm, the grouped expert ids and the router's top-k
	 * indices (5 x 8 bytes per pair) and the top-k and grouped routing weights; the gathered states twice
	 * (hidden_states[token_idx] and its regrouped copy, both still bound), then the larger of two moments:
	 * at act(gate) x up, gate_up_out (2 moe_ffn), act(gate) and the product (4 moe_ffn in all); at the routing
	 * multiply, gate_up_out, the product and the down output twice (3 moe_ffn + 2 h). The shared expert runs
	 * after the routed part (DeepseekV3MoE.forward): its 3 x T x shared_ffn with the routed output alive. */
	mlp = common;
	term(&mlp, st.layer_mlp, T, h * a);
	{
		uint64_t dense = 0, moe = 0, moe_layers = 0;
		acc d = {0, true}, r = {0, true}, sh = {0, true};

		for (uint64_t i = 0; i < m->num_layers; i++)
			moe_layers += mp_model_is_moe_layer(m, i);
		if (moe_layers < m->num_layers) {
			term(&d, st.mlp_ffn, T, (m->intermediate_size / tp) * a);
			dense = d.v;
		}
		if (moe_layers) {
			uint64_t mf = m->moe_intermediate_size / tp, k = m->num_experts_per_tok;

			term(&r, T, h, a);
			term(&r, T, k, 5 * 8 + 2 * a);
			term(&r, T, k, 2 * h * a);
			term(&r, T, k, max2(4 * mf, 3 * mf + 2 * h) * a);
			term(&sh, T, h, a);
			term(&sh, 3 * T, m->shared_expert_intermediate_size / tp, a);
			moe = max2(r.v, sh.v);
		}
		if (!d.ok || !r.ok || !sh.ok)
			goto overflow;
		term(&mlp, max2(dense, moe), 1, 1);
	}

	/* Final norm and lm_head: the last hidden state, the normed copy and the kept logits
	 * (logits_to_keep positions per sequence, not upcast: <Type>ForCausalLM.forward). */
	head = common;
	term(&head, 2, T, h * a);
	x = (acc){0, true};
	term(&x, b, positions, m->vocab_size * a);
	if (!x.ok)
		goto overflow;
	/* under the pytorch layout the caching allocator rounds the logits tensor up to 512 B like any other */
	if (o->formats.layout == MP_LAYOUT_PYTORCH && x.v % MP_PYTORCH_ALLOCATION_BYTES)
		x.v += MP_PYTORCH_ALLOCATION_BYTES - x.v % MP_PYTORCH_ALLOCATION_BYTES;
	ws->logits_bytes = x.v;
	term(&head, x.v, 1, 1);

	if (!common.ok || !attn.ok || !mlp.ok || !head.ok)
		goto overflow;
	ws->attention_phase_bytes = attn.v;
	ws->mlp_phase_bytes = mlp.v;
	ws->head_phase_bytes = head.v;
	ws->peak_phase = "attention";
	if (mlp.v > attn.v)
		ws->peak_phase = "mlp";
	if (head.v > max2(attn.v, mlp.v))
		ws->peak_phase = "head";
	return MP_OK;
overflow:
	return mp_fail_at(err, MP_EOVERFLOW, req->json_pointer, "/sequence_length",
			  "the prefill workspace of %llu tokens (batch_size x sequence_length, or max_num_batched_tokens) "
			  "x hidden_size %llu overflows 64 bits: lower sequence_length, batch_size or max_num_batched_tokens",
			  (unsigned long long)T, (unsigned long long)h);
}
