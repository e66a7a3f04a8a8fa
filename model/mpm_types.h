/*
 * mpm_types.h: the model types memplan reads, one row each (model/mpm_types.c holds the one table). A row names the type
 * (its config.json model_type and the class transformers builds for text generation), its tensors' names
 * (mp_names), and how it is read: a dense decoder by its defaults and module flags alone (mpm_dense: read by
 * mpm_read_dense, so a new dense type is one row), any other by its family's reader. The README's type list and the
 * command line's list are made from this table (memplan types).
 */
#ifndef MPM_TYPES_H
#define MPM_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../planner/memplan.h"

struct hf_ctx;

/*
 * Which layers a dense decoder's sliding window covers when the config has no layer_types (transformers' cache gives a
 * layer of layer_types' "sliding_attention" the window, whatever the rule: cache_utils.get_layer_types_and_kwargs;
 * the rule is how the configuration class derives layer_types, or, for a class without layer_types, every layer
 * slides when the window is set). A rule that puts sliding layers in a config whose window is null is refused (422):
 * transformers 5.24 cannot build their cache (DynamicSlidingWindowLayer(sliding_window=None)).
 */
typedef enum mpm_window_rule {
	MPM_WINDOW_ALL = 0,	/* every layer (Mistral) */
	MPM_WINDOW_FROM_LAYER,	/* only with use_sliding_window, the layers from max_window_layers on (Qwen2, Qwen3;
				 * window_pattern: max_window_layers' default) */
	MPM_WINDOW_ALTERNATE,	/* layers 0, 2, 4, ... (Gemma 2) */
	MPM_WINDOW_PATTERN,	/* layer i full when (i + 1) % sliding_window_pattern == 0 (Gemma 3, Cohere 2, OLMo 3,
				 * EXAONE 4; window_pattern: the pattern's default) */
	MPM_WINDOW_PATTERN_FIRST, /* layer i full when i % window_pattern == 0, the others slide (CWM, Granite-SWA) */
	MPM_WINDOW_PATTERN_LAST, /* layer i full when (layers - 1 - i) % window_pattern == 0, counted back from the last
				  * layer (Muse Glimmer's NoPE layers) */
	MPM_WINDOW_NOPE,	/* only with use_sliding_window, the NoPE layers: no_rope_layers[i] == 0, by default
				 * (i + 1) % no_rope_layer_interval == 0 (SmolLM3; window_pattern: the interval's default) */
} mpm_window_rule;

/* A dense decoder's modules (mpm_dense.modules). */
#define MPM_ATTENTION_BIAS (1u << 0)	  /* attention_bias (default off) on q, k, v and o (LlamaAttention) */
#define MPM_ATTENTION_BIAS_QKV (1u << 1)  /* attention_bias on q, k, v only; o from attention_out_bias (GLM, Seed-OSS) */
#define MPM_ATTENTION_BIAS_ON (1u << 2)	  /* attention_bias defaults to true */
#define MPM_QKV_BIAS_ALWAYS (1u << 3)	  /* q, k and v always carry biases, o never (Qwen2) */
#define MPM_USE_BIAS (1u << 4)		  /* use_bias (default true) on q, k, v, o and the MLP (Starcoder2) */
#define MPM_USE_BIAS_KEY (1u << 5)	  /* use_bias (default false) on q, k, v, o and the MLP (ERNIE 4.5) */
#define MPM_QKV_BIAS_KEY (1u << 6)	  /* use_qkv_bias (StableLM) */
#define MPM_MLP_BIAS_KEY (1u << 7)	  /* mlp_bias (default false) */
#define MPM_PLAIN_MLP (1u << 8)		  /* up and down only (ReLU^2, GELU, xIELU MLPs) */
#define MPM_LAYERNORM (1u << 9)		  /* LayerNorm with weight and bias */
#define MPM_NORM_NONE (1u << 10)	  /* LayerNorm without parameters (OLMo) */
#define MPM_QK_NORM (1u << 11)		  /* per-head q_norm and k_norm of head_dim */
#define MPM_QK_NORM_FULL (1u << 12)	  /* q_norm and k_norm over the whole projections (OLMo-2/3) */
#define MPM_QK_NORM_KEY (1u << 13)	  /* use_qk_norm: LayerNorms of (heads, head_dim) and (kv_heads, head_dim),
					   * weights only (Cohere) */
#define MPM_QK_LAYERNORM_KEY (1u << 14)	  /* qk_layernorm: per-head LayerNorms (Phi) */
#define MPM_LM_HEAD_BIAS (1u << 15)	  /* lm_head carries a bias (Phi) */
#define MPM_XIELU (1u << 16)		  /* xIELU activation: alpha_p and alpha_n per MLP (Apertus) */
#define MPM_SUB_NORM (1u << 17)		  /* BitNet: attn_sub_norm (hidden) and ffn_sub_norm (intermediate) */
#define MPM_PARALLEL (1u << 18)		  /* attention and MLP side by side from one norm (Cohere, Phi) */
#define MPM_NUM_LAYERS_KEY (1u << 19)	  /* num_layers is a spelling of num_hidden_layers (EXAONE 3) */
/* (1u << 20) is free: SmolLM3's use_sliding_window is its window rule's (MPM_WINDOW_NOPE) */
#define MPM_BIAS_ALWAYS (1u << 21)	  /* q, k, v, o and the MLP always carry biases (Persimmon) */
#define MPM_QK_LAYERNORM_ON (1u << 22)	  /* qk_layernorm defaults to true (Persimmon) */
#define MPM_SINKS (1u << 23)		  /* a learned sink logit per head in every layer (Granite-SWA) */
#define MPM_QK_NORMS_PER_HEAD_KEY (1u << 24) /* qk_layernorm: a LayerNorm(head_dim) without bias per head, in a
					      * ModuleList (StableLmLayerNormPerHead: q_layernorm.norms.{j}) */
#define MPM_PARALLEL_RESIDUAL_KEY (1u << 25) /* use_parallel_residual (default false): attention and MLP side by
					      * side from input_layernorm, no post_attention_layernorm (StableLM) */
#define MPM_NULL_WINDOW_NO_PATTERN (1u << 26) /* a null sliding_window sets sliding_window_pattern to 0, which the
					       * derivation of layer_types divides by (Exaone4Config): refused */
#define MPM_HEADS_DIVIDE_HIDDEN (1u << 27) /* the configuration class refuses hidden_size % heads != 0 whatever head_dim
					    * says (validate_architecture: LlamaConfig, Gemma2Config, ...) */
#define MPM_PATTERN_FIXED (1u << 28) /* MPM_WINDOW_PATTERN's pattern is the row's, no key (Olmo3Config: 4) */
#define MPM_O_PROJ_HIDDEN (1u << 29) /* o_proj is hidden_size x hidden_size (HeliumAttention): the heads x head_dim
				      * of q, k and v must be hidden_size, or its forward fails */


/* A dense decoder's defaults (its transformers configuration class's) and modules. */
typedef struct mpm_dense {
	uint64_t vocab_size, hidden_size, intermediate_size, num_layers, num_heads;
	uint64_t num_kv_heads;		/* 0 = num_heads */
	uint64_t head_dim;		/* 0 = hidden_size / num_heads (a config's head_dim always wins) */
	uint64_t max_positions;		/* max_position_embeddings */
	bool tie;			/* tie_word_embeddings */
	uint64_t sliding_window;	/* 0 = none */
	mpm_window_rule window_rule;
	uint64_t window_pattern;	/* the rule's default (MPM_WINDOW_FROM_LAYER, MPM_WINDOW_PATTERN) */
	uint64_t norms;			/* norms per layer */
	double partial_rotary;		/* partial_rotary_factor's default; 0 = 1 */
	uint32_t rotary_sets;		/* RoPE modules (their inv_freq buffers); 0 = 1 */
	uint64_t experts;		/* num_local_experts' default of a Mixtral-style MoE (top-k num_experts_per_tok, 2);
					 * 0 = dense */
	unsigned modules;		/* MPM_* */
} mpm_dense;

typedef struct mpm_type {
	const char *name;		/* config.json's model_type */
	const char *model_class;	/* the class transformers 5.24 builds for text generation */
	const mpm_dense *dense;		/* a dense decoder (mpm_read_dense); NULL: `read` */
	void (*read)(struct hf_ctx *c, mp_model *m); /* a family's own reader */
	const mp_names *names;		/* its tensors' names (NULL: the Llama family's) */
	bool wrapper;			/* a multimodal wrapper (a text_config's model_type is never one) */
	const char *experts_key;	/* a mixture of experts: the key naming the experts, refused when 0 (without
					 * them the FFN width moved to the experts leaves the dense width 0) */
	bool fp16_unstable;		/* in vLLM's _FLOAT16_NOT_SUPPORTED_MODELS (vllm/config/model.py, 0.11: gemma2,
					 * gemma3, gemma3_text, glm4 and plamo2, which memplan does not read): served in
					 * bf16 or fp32, never fp16 */
	const char *simplified;		/* what an answer takes simpler than the model is (warned); NULL = exact */
	/* The config class's default max_position_embeddings is the released models' context with their RoPE scaling
	 * already in it: a config that declares the scaling but no length is not stretched again by its factor
	 * (mpm_config_facts). Gemma3TextConfig's 131072 is Gemma 3's 128K, reached by a linear x8 stretch of its 32K
	 * pretraining (Gemma 3 technical report, sec. 2.2); google/gemma-3-27b-it's config states the scaling only.
	 * Not LlamaConfig's 2048, which is LLaMA's trained length that a linear factor does stretch. */
	bool context_default_scaled;
} mpm_type;

/* The one table and its length. */
extern const mpm_type mpm_types[];
extern const size_t mpm_types_count;

/* The row of model_type name (NULL when memplan does not read it). */
const mpm_type *mpm_type_find(const char *name);

/* Why memplan does not plan a model type transformers 5.24 maps to a causal-LM or image-text-to-text class. */
typedef enum mpm_refusal_kind {
	MPM_REFUSE_ENCODER = 0,	/* an encoder (bidirectional, masked-LM pretrained) run as a decoder by fine-tuning */
	MPM_REFUSE_SEQ2SEQ,	/* the decoder half of an encoder-decoder model (cross-attention to an encoder's states) */
	MPM_REFUSE_ENCDEC,	/* a whole encoder-decoder model (its decoder cross-attends to the encoder) */
	MPM_REFUSE_OTHER,	/* `why` says */
} mpm_refusal_kind;

typedef struct mpm_refusal {
	const char *name;		/* config.json's model_type */
	const char *model_class;	/* the class transformers 5.24 maps it to */
	mpm_refusal_kind kind;
	const char *why;		/* MPM_REFUSE_OTHER: the reason, one clause */
} mpm_refusal;

extern const mpm_refusal mpm_refusals[];
extern const size_t mpm_refusals_count;

/* The refusal of model_type name (NULL when memplan reads it or does not know it). */
const mpm_refusal *mpm_refusal_find(const char *name);

#endif /* MPM_TYPES_H */
