/*
 * mp_names.h: how a model family names its tensors in transformers' state_dict. One static mp_names per family (a
 * model type's row in model/ points at one); the decoder builder (planner/decoder.c) composes each tensor's name
 * from the inventory's root, a path below it with the layer index as "{i}", and a leaf. A leaf or path left NULL is
 * a module the family does not have (its flag in mp_model then must be off).
 * Part of the planner's public contract; include "memplan.h", not this file.
 */
#ifndef MP_NAMES_H
#define MP_NAMES_H

/* A module's weight and bias leaves: {"q_proj.weight", "q_proj.bias"}. */
typedef struct mp_wb {
	const char *w, *b;
} mp_wb;

#define MP_NAMES_MAX_NORMS 8

typedef struct mp_names {
	/* the trunk, under the decoder's root */
	const char *root;		/* "model." (roots[1] of the inventory) */
	mp_wb embed;			/* "embed_tokens.weight" */
	mp_wb positions;		/* a learned position table: "embed_positions.weight" (GPT-2 "wpe.weight") */
	mp_wb final_norm;		/* "norm.weight", "norm.bias" */
	const char *head_root;		/* the lm_head's root: NULL = the top ("lm_head.weight") */
	mp_wb lm_head;			/* "lm_head.weight", "lm_head.bias" (GPT-NeoX "embed_out.weight") */
	/* the paths of a layer's modules */
	const char *layer;		/* "layers.{i}": the norms' */
	const char *attn;		/* "layers.{i}.self_attn" */
	const char *mlp;		/* "layers.{i}.mlp": a dense MLP's */
	const char *moe;		/* "layers.{i}.mlp": the MoE block's (router, experts, shared experts) */
	const char *mixer;		/* "layers.{i}.mamba": a recurrent mixer's (the linear-attention mixers of
					 * Kimi and MiniMax sit under attn) */
	const char *hybrid_layer;	/* the norms' path in a layer that holds attention beside its mixer (Zamba2's
					 * "layers.{i}.mamba_decoder"); NULL = layer */
	const char *hybrid_mixer;	/* and its mixer's ("layers.{i}.mamba_decoder.mamba"); NULL = mixer */
	/* attention, under attn */
	mp_wb q, k, v, o;
	mp_wb qkv;			/* one fused q, k, v projection (phi3 qkv_proj, falcon query_key_value); w NULL:
					 * separate q, k and v */
	mp_wb q_norm, k_norm;		/* per-head (or whole-projection) norms of q and k */
	const char *sinks;		/* gpt-oss "sinks" */
	bool conv1d;			/* GPT-2's Conv1D: every linear stored in x out (MP_VIEW_T) */
	/* multi-head latent attention (DeepSeek-V2/V3), under attn */
	mp_wb q_a, q_a_norm, q_b, kv_a, kv_a_norm, kv_b;
	/* DeepSeek sparse attention's indexer, under attn */
	mp_wb ix_wq_b, ix_wk, ix_k_norm, ix_weights;
	/* a dense MLP, under mlp */
	mp_wb gate, up, down;
	mp_wb gate_up;			/* one fused gate and up projection (phi3, glm); w NULL: separate */
	const char *act_alpha_p, *act_alpha_n; /* Apertus' xIELU parameters */
	const char *act_beta, *act_eps;	/* and its two constants (buffers no checkpoint holds) */
	const char *ffn_sub_norm;	/* BitNet's norm before down_proj */
	/* the layer's norms, under layer, in order (norms_per_layer of them; up to MP_NAMES_MAX_NORMS) */
	mp_wb norms[8];
	/* a mixture of experts, under moe */
	mp_wb router;			/* "gate.weight" (its bias: gpt-oss "router.bias") */
	bool router_bias_row;		/* the router's bias is a [1, E] row (ERNIE 4.5's moe_statics) */
	const char *router_correction;	/* "gate.e_score_correction_bias" (a buffer) */
	mp_wb experts_gate_up;		/* fused experts [E, 2f, h] ("experts.gate_up_proj", "experts.gate_up_proj_bias") */
	mp_wb experts_up;		/* a plain expert's up projection [E, f, h] (Nemotron-H "experts.up_proj") */
	mp_wb experts_down;		/* [E, h, f] */
	bool experts_t;			/* gpt-oss: [E, in, out] */
	const char *shared;		/* the shared experts' path: NULL = moe (GraniteMoE's shared_mlp sits on the layer) */
	mp_wb sh_gate, sh_up, sh_down;	/* shared experts: "shared_experts.gate_proj.weight", ... */
	mp_wb sh_gate_up;		/* gate and up of the shared experts in one tensor (GraniteMoE's input_linear) */
	const char *sh_expert_gate;	/* Qwen's sigmoid gate of the shared expert: "shared_expert_gate.weight" */
	/* recurrent mixers, under mixer */
	bool gdn_split;			/* Qwen3.5's gated delta net: in_proj_qkv, in_proj_z, in_proj_b, in_proj_a (Qwen3-Next
					 * fuses in_proj_qkvz and in_proj_ba) */
} mp_names;

/* The Llama family's names as designated initializers, for a family that differs in a few (model/hf_names.c lists
 * each family as MP_NAMES_LLAMA_FIELDS and the fields it renames). */
#define MP_NAMES_LAYERS "layers.{i}"
#define MP_NAMES_LLAMA_FIELDS                                                                                          \
	.root = "model.", .embed = {"embed_tokens.weight", NULL}, .positions = {"embed_positions.weight", NULL},         \
	.final_norm = {"norm.weight", "norm.bias"}, .lm_head = {"lm_head.weight", "lm_head.bias"},                     \
	.layer = MP_NAMES_LAYERS, .attn = MP_NAMES_LAYERS ".self_attn", .mlp = MP_NAMES_LAYERS ".mlp",                  \
	.moe = MP_NAMES_LAYERS ".mlp", .mixer = MP_NAMES_LAYERS ".mamba", .q = {"q_proj.weight", "q_proj.bias"},        \
	.k = {"k_proj.weight", "k_proj.bias"}, .v = {"v_proj.weight", "v_proj.bias"},                                  \
	.o = {"o_proj.weight", "o_proj.bias"}, .q_norm = {"q_norm.weight", "q_norm.bias"},                             \
	.k_norm = {"k_norm.weight", "k_norm.bias"}, .sinks = "sinks", .q_a = {"q_a_proj.weight", "q_a_proj.bias"},      \
	.q_a_norm = {"q_a_layernorm.weight", NULL}, .q_b = {"q_b_proj.weight", NULL},                                  \
	.kv_a = {"kv_a_proj_with_mqa.weight", "kv_a_proj_with_mqa.bias"}, .kv_a_norm = {"kv_a_layernorm.weight", NULL}, \
	.kv_b = {"kv_b_proj.weight", NULL}, .ix_wq_b = {"indexer.wq_b.weight", NULL},                                  \
	.ix_wk = {"indexer.wk.weight", NULL}, .ix_k_norm = {"indexer.k_norm.weight", "indexer.k_norm.bias"},           \
	.ix_weights = {"indexer.weights_proj.weight", NULL}, .gate = {"gate_proj.weight", "gate_proj.bias"},           \
	.up = {"up_proj.weight", "up_proj.bias"}, .down = {"down_proj.weight", "down_proj.bias"},                      \
	.act_alpha_p = "act_fn.alpha_p", .act_alpha_n = "act_fn.alpha_n", .act_beta = "act_fn.beta",                   \
	.act_eps = "act_fn.eps", .ffn_sub_norm = "ffn_sub_norm.weight",                                                 \
	.norms = {{"input_layernorm.weight", "input_layernorm.bias"},                                                   \
	          {"post_attention_layernorm.weight", "post_attention_layernorm.bias"},                                 \
	          {"pre_feedforward_layernorm.weight", "pre_feedforward_layernorm.bias"},                               \
	          {"post_feedforward_layernorm.weight", "post_feedforward_layernorm.bias"}},                            \
	.router = {"gate.weight", "gate.bias"}, .router_correction = "gate.e_score_correction_bias",                    \
	.experts_gate_up = {"experts.gate_up_proj", "experts.gate_up_proj_bias"},                                      \
	.experts_up = {"experts.up_proj", "experts.up_proj_bias"},                                                     \
	.experts_down = {"experts.down_proj", "experts.down_proj_bias"},                                               \
	.sh_gate = {"shared_experts.gate_proj.weight", NULL}, .sh_up = {"shared_experts.up_proj.weight", NULL},        \
	.sh_down = {"shared_experts.down_proj.weight", NULL}, .sh_expert_gate = "shared_expert_gate.weight"

/* The Llama family's names (LlamaForCausalLM): model.embed_tokens, model.layers.{i}.self_attn.q_proj, ... mlp.gate_proj,
 * input_layernorm, post_attention_layernorm, model.norm, lm_head; the MoE block of Mixtral and Qwen-MoE
 * (mlp.gate, mlp.experts.gate_up_proj). The default of a model described without a type (model.architecture). */
extern const mp_names mp_names_llama;

#endif /* MP_NAMES_H */
