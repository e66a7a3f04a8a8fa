/*
 * mp_model.h: model architecture and exact parameter counts.
 * Part of the planner's public contract; include "memplan.h", not this file.
 */
#ifndef MP_MODEL_H
#define MP_MODEL_H

#include "mp_core.h"

/* ---------------------------------------------------------------------------------------------------------
 * Model architecture: everything the memory and roofline models need, independent of how the model was
 * described (a Hugging Face config.json is decoded into this by the daemon's hf_config adapter).
 * All sizes are counts of values (not bytes). 0 means "absent" for optional counts.
 * ------------------------------------------------------------------------------------------------------- */
typedef enum mp_ffn_kind {
	MP_FFN_GATED = 0,	/* SwiGLU/GeGLU: gate, up and down projections (3 matrices) */
	MP_FFN_PLAIN = 1,	/* up and down projections (2 matrices), GELU between */
} mp_ffn_kind;

typedef enum mp_norm_kind {
	MP_NORM_RMS = 0,	/* RMSNorm: one weight vector */
	MP_NORM_LAYER = 1,	/* LayerNorm: weight and bias vectors */
} mp_norm_kind;

typedef enum mp_attn_kind {
	MP_ATTN_GQA = 0,	/* MHA, GQA and MQA: num_kv_heads in [1, num_heads] */
	MP_ATTN_MLA = 1,	/* DeepSeek multi-head latent attention */
} mp_attn_kind;

#define MP_MAX_LAYERS 1024

typedef struct mp_model {
	char model_type[32];		/* "llama", "qwen2", ... or "custom" */

	/* trunk */
	uint64_t hidden_size;		/* d_model */
	uint64_t num_layers;
	uint64_t vocab_size;
	uint64_t max_position_embeddings;
	uint64_t learned_position_embeddings;	/* rows of a learned absolute position table (gpt2), else 0 */
	bool tie_word_embeddings;
	bool lm_head_bias;
	bool rope_scaling;		/* the config declares a RoPE scaling (longer contexts are intended) */

	/* attention */
	mp_attn_kind attn_kind;
	uint64_t num_heads;
	uint64_t num_kv_heads;
	uint64_t head_dim;		/* per-head width of q and k (and v unless v_head_dim is set) */
	bool qkv_bias;
	bool o_bias;
	bool qk_norm;			/* per-head RMSNorm on q and k (qwen3, gemma3): 2 x head_dim weights */
	uint64_t sliding_window;	/* tokens, 0 = none */
	uint64_t sliding_window_layers;	/* how many of the layers use the window (0 with a window = all) */

	/* MLA (attn_kind == MP_ATTN_MLA; DeepSeek-V2/V3, arXiv 2405.04434 sec. 2.1) */
	uint64_t q_lora_rank;		/* 0 = q is projected directly */
	uint64_t kv_lora_rank;		/* latent width c_KV */
	uint64_t qk_nope_head_dim;
	uint64_t qk_rope_head_dim;
	uint64_t v_head_dim;

	/* MLP */
	mp_ffn_kind ffn_kind;
	uint64_t intermediate_size;	/* dense MLP width */
	bool mlp_bias;

	/* mixture of experts (num_experts > 0) */
	uint64_t num_experts;		/* routed experts per MoE layer */
	uint64_t num_experts_per_tok;	/* top-k */
	uint64_t moe_intermediate_size;	/* width of one routed expert */
	uint64_t num_shared_experts;
	uint64_t shared_expert_intermediate_size;	/* width of the shared expert block, all shared experts */
	bool shared_expert_gate;	/* qwen2_moe: a hidden x 1 sigmoid gate on the shared expert */
	uint64_t first_dense_layers;	/* leading layers with a dense MLP (deepseek first_k_dense_replace) */
	uint64_t moe_layer_step;	/* every n-th layer is MoE (qwen2_moe decoder_sparse_step); 0 or 1 = all */
	bool router_bias;		/* deepseek_v3 e_score_correction_bias: num_experts values, a parameter? */

	/* norms */
	mp_norm_kind norm_kind;
	uint64_t norms_per_layer;	/* 2 for pre-norm blocks, 1 for falcon's shared norm, 4 for gemma2 */
	bool final_norm;

	/* parallel attention + MLP in one block (falcon, gpt-j); affects activations only */
	bool parallel_block;

	/* Training-time details (appended for issue 4, training activations; false/0 when the config has none). */
	bool attention_dropout;		/* dropout on attention probabilities (gpt2 attn_pdrop > 0) */
	bool hidden_dropout;		/* dropout after the attention and MLP outputs (gpt2 resid_pdrop > 0) */
	bool embedding_dropout;		/* dropout after the embeddings (gpt2 embd_pdrop > 0) */
	bool composite_activation;	/* MLP activation built from elementwise ops (gelu_new: 0.5x(1+tanh(..))) */
	/* --- appended for issue #3; the fields above keep their names and meaning --- */
	uint64_t rotary_dim;		/* values of each q/k head RoPE rotates; 0 = no RoPE (learned, alibi) */
	uint32_t rotary_buffer_sets;	/* RoPE modules' (inv_freq, original_inv_freq) buffer pairs: 1, gemma3 2 */
	char rope_type[16];		/* "default", "llama3", "yarn", "linear", "dynamic", "longrope", ... */
	uint64_t rope_scaled_max_position;	/* context the declared RoPE scaling targets; 0 = no scaling */
	bool router_correction_buffer;	/* deepseek_v3 e_score_correction_bias: a buffer (not a parameter) */
	uint8_t dense_layer_mask[MP_MAX_LAYERS / 8];	/* bit i: layer i keeps a dense MLP (mlp_only_layers) */
	/* The JSON pointer of the object whose members are the config keys ("/model/hf_config",
	 * "/jobs/3/inference/model"): errors about the model name its keys under it. "" = "/model". */
	char json_pointer[64];
} mp_model;

/* Where errors about m's keys are named: m->json_pointer, or "/model" when it is empty. */
const char *mp_model_pointer(const mp_model *m);

/* MP_EOVERFLOW for a model-sized quantity (what: "the parameter count", "the weight bytes") that does not fit 64
 * bits, naming the largest of the config's dimensions, which drives every such product. Example: hidden_size
 * 1,099,511,627,776 -> "/model/hf_config/hidden_size". */
mp_status mp_model_overflow(const mp_model *m, const char *what, mp_error *err);

/* Is layer i (0-based) a mixture-of-experts layer? first_dense_layers, moe_layer_step and
 * dense_layer_mask together decide (transformers: first_k_dense_replace, decoder_sparse_step, mlp_only_layers). */
bool mp_model_is_moe_layer(const mp_model *m, uint64_t i);

/* How many layers use the sliding window (0 when the model has none). */
uint64_t mp_model_sliding_layers(const mp_model *m);

/*
 * Checks that a model is self-consistent before any arithmetic: every count >= 1 where required,
 * heads % kv_heads == 0 and kv_heads <= heads (case BI-03), layers <= MP_MAX_LAYERS.
 * Returns MP_OK or MP_EINVAL with err->field naming the config key ("/model/num_key_value_heads").
 */
mp_status mp_model_validate(const mp_model *m, mp_error *err);

/*
 * The longest sequence (tokens, positions 1..n) the model accepts: a learned position table is a hard limit;
 * RoPE models accept max_position_embeddings, or the scaled length when the config declares a RoPE scaling
 * (rope_scaled_max_position). 0 when the model states no limit.
 */
uint64_t mp_model_context_limit(const mp_model *m);

/*
 * The one context check of every planner (inference, training, the roofline step analysis): tokens (the
 * positions one sequence occupies) must be at most mp_model_context_limit, unless allow_beyond is set and the
 * positions are RoPE (a learned table is never exceeded). Errors: MP_EINVAL naming `field` under `base` (for
 * example base "/jobs/2/inference", field "/sequence_length"; base NULL = the top) that says the limit and the override, allow_beyond_max_position_embeddings (case BI-05).
 * Worked example: llama-2-7b (4096 positions, no RoPE scaling), 8192 tokens -> MP_EINVAL; with allow_beyond -> MP_OK.
 */
mp_status mp_check_context(const mp_model *m, uint64_t tokens, bool allow_beyond, const char *base, const char *field,
			   mp_error *err);

/* The largest sequence a fit solver may search: the context limit, MP_MAX_SEQUENCE_LENGTH-capped; with
 * allow_beyond (and RoPE positions) MP_MAX_SEQUENCE_LENGTH. */
uint64_t mp_model_sequence_ceiling(const mp_model *m, bool allow_beyond);

/* Parameter counts by component, all exact. Fills a caller-owned struct. */
typedef struct mp_param_count {
	uint64_t total;			/* unique parameters, tied embeddings counted once */
	uint64_t embedding;		/* token embeddings (vocab x hidden) */
	uint64_t position_embedding;	/* learned absolute position table (gpt2), else 0 */
	uint64_t attention;		/* all layers: q, k, v, o (+ biases, qk norms, MLA projections) */
	uint64_t mlp;			/* all layers: dense MLPs */
	uint64_t experts;		/* all layers: routed + shared experts and routers */
	uint64_t norms;			/* all layer norms + final norm */
	uint64_t lm_head;		/* 0 when tied */
	uint64_t active_per_token;	/* MoE: parameters a token touches (top-k routed + shared); = total if dense */
} mp_param_count;

/*
 * Exact unique parameter count, as PyTorch's sum(p.numel() for p in model.parameters()) counts a
 * transformers model built from the same config (LlamaForCausalLM etc.). Worked example: Llama-3-8B
 * (h 4096, 32 layers, 32 heads, 8 KV heads, head_dim 128, FFN 14336, vocab 128256, untied) ->
 * embedding 525,336,576 + 32 x 218,112,000 per layer + norm 4,096 + head 525,336,576 = 8,030,261,248.
 * Errors: MP_EINVAL (validation), MP_EOVERFLOW.
 */
mp_status mp_count_parameters(const mp_model *m, mp_param_count *out, mp_error *err);

#endif /* MP_MODEL_H */
