/*
 * mp_model.h: model architecture and exact parameter counts.
 * Part of the planner's public contract; include "memplan.h", not this file.
 */
#ifndef MP_MODEL_H
#define MP_MODEL_H

#include "mp_core.h"
#include "mp_inventory.h"
#include "mp_names.h"

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
	MP_NORM_NONE = 2,	/* a norm without parameters (OLMo's LayerNorm without affine weights) */
} mp_norm_kind;

/* The recurrent (state-space or linear-attention) mixer of a layer. Its state is constant per sequence: it grows
 * with the batch, never with the tokens. */
typedef enum mp_ssm_kind {
	MP_SSM_NONE = 0,
	MP_SSM_MAMBA1 = 1,	/* Mamba (arXiv 2312.00752; transformers MambaMixer): selective scan over d_inner channels */
	MP_SSM_MAMBA2 = 2,	/* Mamba-2 (arXiv 2405.21060; transformers Mamba2Mixer): SSD heads with grouped B and C */
	/* --- appended for issue 14, second half: the linear-attention mixers --- */
	MP_SSM_GATED_DELTANET = 3, /* gated delta net (arXiv 2412.06464; Qwen3-Next, Qwen3.5): n_groups key heads of
				    * d_state, n_heads value heads of head_dim; a conv over q, k and v */
	MP_SSM_KDA = 4,		/* Kimi delta attention (Kimi-Linear): n_heads heads of head_dim for q, k and v, low-rank
				 * forget and output gates of rank d_state; a conv over q, k and v */
	MP_SSM_LIGHTNING = 5,	/* lightning attention (MiniMax-01, arXiv 2501.08313): n_heads heads of head_dim, no conv */
	MP_SSM_SHORT_CONV = 6,	/* gated short convolution (LFM2): in_proj to 3 x hidden, a depthwise conv of hidden */
	/* A recurrence whose tensors its reader lists and whose state per layer it states as counts of values
	 * (mp_ssm.listed_model_values, listed_fp32_values): RWKV's token shifts and WKV sums, RecurrentGemma's conv
	 * window and RG-LRU state, xLSTM's matrix memories. */
	MP_SSM_LISTED = 7,
	/* Short convolutions beside attention (Inkling, modeling_inkling.py InklingShortConvolution): every MP_LAYER_SSM
	 * layer convolves its k and v projections (the layer's KV heads x head_dim channels each: global_kv_heads x
	 * global_head_dim in an MP_LAYER_GLOBAL layer) and its attention and MLP outputs (hidden_size channels each)
	 * over conv_kernel tokens, and caches each window, in fp32 (the modules are kept in fp32); the reader lists the
	 * tensors (mixer_listed). */
	MP_SSM_KV_CONV = 8,
} mp_ssm_kind;

/* A bias that a class sets apart from the one it usually follows (mp_model.routed_bias, shared_bias; mp_ssm.out_bias) */
#define MP_BIAS_AS_MLP 0
#define MP_BIAS_ON 1
#define MP_BIAS_OFF 2

typedef struct mp_ssm {
	mp_ssm_kind kind;
	uint64_t d_inner;	/* channels of the scan: expand x hidden (mamba_d_inner), = n_heads x head_dim for Mamba-2 */
	uint64_t d_state;	/* N: state per channel (state_size, mamba_d_state, ssm_state_size) */
	uint64_t conv_kernel;	/* width of the causal depthwise convolution (conv_kernel, mamba_d_conv) */
	uint64_t dt_rank;	/* Mamba: width of the low-rank dt projection (time_step_rank) */
	uint64_t n_groups;	/* Mamba-2: groups sharing B and C */
	uint64_t n_heads;	/* Mamba-2: SSD heads */
	uint64_t head_dim;	/* Mamba-2: channels per head */
	bool proj_bias;		/* in_proj and out_proj carry biases (use_bias) */
	bool conv_bias;		/* conv1d carries a bias (use_conv_bias) */
	bool gated_norm;	/* Mamba-2: the gated RMSNorm over d_inner before out_proj (a weight of d_inner) */
	/* --- appended for issue 14, second half --- */
	bool state_in_model_dtype; /* the recurrent state is kept in the model's dtype (MiniMax's lightning cache), not
				    * fp32 */
	bool dt_bc_norms;	/* Jamba's Mamba: RMSNorm weights on dt (dt_rank), B and C (d_state each) */
	/* MP_SSM_LISTED: the values one layer keeps per sequence in the model's dtype (token shifts, conv windows) and in
	 * fp32 (the recurrence's sums and memories), as the engine the reader names keeps them; d_inner is the
	 * channels tensor parallelism divides (both counts are shared out with them) */
	uint64_t listed_model_values;
	uint64_t listed_fp32_values;
	uint8_t out_bias;	/* out_proj's bias where a class sets it apart from in_proj's (Falcon-H1's projectors_bias):
				 * MP_BIAS_AS_MLP (0) = as proj_bias, MP_BIAS_ON, MP_BIAS_OFF */
	/* The reader lists the mixer's tensors itself (their names or shapes differ from the kind's module in
	 * decoder.c: Zamba's per-head Mamba, x_proj_weight [heads, dt_rank + 2 N, head_dim]; OLMo-Hybrid's gated delta
	 * net with separate q, k, v, a, b and g projections); the state is still the kind's */
	bool mixer_listed;
} mp_ssm;

/* Per-layer flags when mp_model.layer_pattern is set: what a layer holds. Without a pattern every layer holds
 * attention and a feed-forward block. */
#define MP_LAYER_ATTENTION 1u	/* self-attention with its KV cache */
#define MP_LAYER_SSM 2u		/* the recurrent mixer (mp_model.ssm) with its state */
#define MP_LAYER_FFN 4u		/* a feed-forward block: dense MLP or experts (mp_model_is_moe_layer) */
/* Appended for issue 14 (Gemma 4, Gemma 3n); read only when mp_model.attn_per_layer is set: */
#define MP_LAYER_WINDOW 8u	/* the attention keeps the sliding window (mp_model.sliding_window) */
#define MP_LAYER_KV_SHARED 16u	/* the attention reuses an earlier layer's K and V: no k/v projections, no k_norm,
				 * no cache of its own (Gemma 3n / Gemma 4 num_kv_shared_layers; vLLM
				 * kv_sharing_target_layer_name) */
#define MP_LAYER_GLOBAL 32u	/* the attention has the global widths (mp_model.global_head_dim, global_kv_heads) */
/* Appended for issue 14 (DeepSeek-V4); read only when mp_model.compressed_kv is set: */
#define MP_LAYER_CSA 64u	/* compressed sparse attention: a compressor every csa_compress_rate tokens, overlapping
				 * windows, and a lightning indexer of its own (modeling_deepseek_v4.py DeepseekV4CSACompressor) */
#define MP_LAYER_HCA 128u	/* heavily compressed attention: a compressor every hca_compress_rate tokens, no overlap,
				 * no indexer (DeepseekV4HCACompressor) */

typedef enum mp_attn_kind {
	MP_ATTN_GQA = 0,	/* MHA, GQA and MQA: num_kv_heads in [1, num_heads] */
	MP_ATTN_MLA = 1,	/* DeepSeek multi-head latent attention */
} mp_attn_kind;

#define MP_MAX_LAYERS 1024

/* How a multimodal wrapper's vision tower hands its features to the decoder (planner/vision.c names each module). */
/* Which tower a wrapper has: its modules' names (planner/vision.c). */
typedef enum mp_tower_kind {
	MP_TOWER_SIGLIP = 0,	/* modeling_siglip.py (Gemma 3) */
	MP_TOWER_CLIP,		/* modeling_clip.py (LLaVA) */
	MP_TOWER_PIXTRAL,	/* modeling_pixtral.py (Mistral 3) */
	MP_TOWER_QWEN2_VL,	/* modeling_qwen2_vl.py */
	MP_TOWER_QWEN2_5_VL,	/* modeling_qwen2_5_vl.py */
	MP_TOWER_QWEN3_VL,	/* modeling_qwen3_vl.py (and Qwen3.5's) */
	MP_TOWER_LLAMA4,	/* modeling_llama4.py Llama4VisionModel */
} mp_tower_kind;

typedef enum mp_projector_kind {
	MP_PROJECTOR_NONE = 0,
	MP_PROJECTOR_GEMMA3 = 1,	/* Gemma 3: soft-embedding RMSNorm of the tower width, one projection matrix */
	MP_PROJECTOR_MLP2 = 2,		/* LLaVA, Mistral 3: [norm, patch merger,] linear_1, GELU, linear_2 */
	MP_PROJECTOR_QWEN_MERGER = 3,	/* Qwen2/2.5/3-VL: norm, fc1 over spatial_merge^2 patches, GELU, fc2 (+ DeepStack) */
	MP_PROJECTOR_LLAMA4 = 4,	/* Llama 4: the pixel-shuffle adapter (fc1, fc2) in the tower, then linear_1 */
} mp_projector_kind;

/*
 * A ViT image tower and its projector (Gemma 3's SigLIP, LLaVA's CLIP, Mistral 3's Pixtral, the Qwen-VL towers):
 * counted in the parameters and the weights (tensor class "vision", its own format) but never in the KV cache,
 * which is the decoder's. hidden = 0: no tower.
 */
typedef struct mp_vision {
	mp_tower_kind tower;
	const char *tower_root;		/* static: "model.vision_tower.", "model.visual.", "vision_model." */
	const char *projector_root;	/* static: "model.multi_modal_projector." */
	uint64_t hidden;		/* tower width */
	uint64_t layers;
	uint64_t intermediate;		/* MLP width */
	uint64_t channels, temporal, patch; /* a patch: channels x temporal frames (0: a 2-D patch) x patch x patch */
	uint64_t positions;		/* rows of a learned position table (0: rotary positions) */
	mp_norm_kind norm;		/* the blocks' norms (and pre/post norms) */
	bool patch_bias;		/* the patch convolution carries a bias */
	bool class_embedding;		/* CLIP's class token (hidden values) */
	bool pre_norm, post_norm;	/* a norm before the first block (CLIP pre_layrnorm, Pixtral ln_pre), after the last */
	bool fused_qkv;			/* one qkv projection (Qwen-VL): the same parameters as q, k and v */
	bool attn_bias, mlp_bias;	/* biases on q, k, v, o; on the MLP's projections */
	bool gated_mlp;			/* gate, up and down (Pixtral, Qwen2.5-VL), else fc1 and fc2 */
	bool map_head;			/* SigLIP's attention-pooling head (vision_use_head) */
	mp_projector_kind projector;
	uint64_t out_hidden;		/* the decoder's width (the projector's output) */
	uint64_t feature_layers;	/* tower layers concatenated into the projector (LLaVA vision_feature_layer list) */
	uint64_t merge;			/* spatial_merge_size: merge x merge patches into one token (1 = none) */
	mp_norm_kind projector_norm;	/* MLP2: MP_NORM_NONE or RMS (Mistral 3); merger: LayerNorm or RMS */
	bool projector_bias;		/* MLP2: biases on linear_1 and linear_2 (multimodal_projector_bias) */
	uint64_t deepstack;		/* Qwen3-VL: DeepStack mergers (one per deepstack_visual_indexes entry) */
	uint64_t adapter_in, adapter_out; /* Llama 4: projector_input_dim, projector_output_dim of the adapter */
	uint64_t feature_dim;		/* Llama 4: vision_output_dim, the projector's input */
	/* --- appended for issue 24 --- */
	bool patch_merger;		/* MLP2: the projector's patch merger (Mistral 3's Mistral3PatchMerger, built whatever
					 * spatial_merge_size says, 1 included); LLaVA has none */
	bool linear_patch;		/* SigLIP 2 (modeling_siglip2.py Siglip2VisionEmbeddings): the patch embedding is a
					 * Linear of channels x patch x patch inputs with a bias, not a convolution */
	const char *twin_root;		/* static: a second tower of the same config under this root (Video-LLaVA's
					 * "model.image_tower." beside its "model.video_tower."); NULL: none */
	uint64_t qkv_rows;		/* Qwen-VL towers: rows of the fused qkv when its keys and values have fewer heads
					 * (EXAONE 4.5: (heads + 2 kv_heads) x head_dim); 0: 3 x hidden */
	bool split_qkv;			/* Qwen-VL towers: q, k and v apart, each hidden x hidden (Qwen2.5-Omni's
					 * attn.q, attn.k, attn.v), not one qkv */
	bool omni_merger;		/* Qwen3-VL's tower with Qwen3-Omni's merger names: merger and merger_list.{i} each
					 * ln_q, mlp.0 and mlp.2 (not norm, linear_fc1, linear_fc2, deepstack_merger_list) */
	bool no_patch_embedding;	/* SigLIP / CLIP: the tower embeds another tower's features, not pixels (the CLIP
					 * encoder of DeepSeek-OCR's descendants: class token and positions, no
					 * patch_embedding) */
	bool projection_layer;		/* SigLIP: the attention's output projection is projection_layer, always biased
					 * (JanusVisionAttention), not out_proj */
	bool qk_layernorm;		/* SigLIP: LayerNorms of the whole q and k (Janus's use_qk_norm) */
} mp_vision;

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
	bool window_chunked;		/* the window layers attend within fixed chunks of sliding_window tokens
					 * (Llama 4's attention_chunk_size), not a sliding window */

	/* MLA (attn_kind == MP_ATTN_MLA; DeepSeek-V2/V3, arXiv 2405.04434 sec. 2.1) */
	uint64_t q_lora_rank;		/* 0 = q is projected directly */
	uint64_t kv_lora_rank;		/* latent width c_KV */
	uint64_t qk_nope_head_dim;
	uint64_t qk_rope_head_dim;
	uint64_t v_head_dim;		/* (also: with attn_per_layer, V's per-head width where it is not head_dim, MiMo-V2-Flash's
					 * 128 beside 192; 0 = head_dim) */

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
	char json_pointer[MP_POINTER_MAX];
	/* --- appended for issue 14 (model types): the fields above keep their names and meaning --- */
	bool qk_norm_full;		/* q_norm over heads x head_dim and k_norm over kv_heads x head_dim (olmo2, olmoe) */
	bool attention_sinks;		/* gpt_oss: one learned sink logit per attention head per layer */
	uint64_t activation_params;	/* learned scalars of each MLP's activation (apertus xIELU: alpha_p, alpha_n) */
	bool layer_pattern;		/* layer_flags says what each layer holds (hybrid and recurrent models) */
	uint8_t layer_flags[MP_MAX_LAYERS];	/* MP_LAYER_* per layer, when layer_pattern */
	mp_ssm ssm;			/* the recurrent mixer of the MP_LAYER_SSM layers */
	uint64_t no_kv_layers;		/* attention layers that reuse another layer's K and V (no cache of their own) */
	/* The format a class of tensors has in the checkpoint when its quantization_config quantises only some (the
	 * MXFP4 experts of gpt-oss): the default of that class under a float weight_dtype. MP_DTYPE_INVALID (0) = none.
	 * Indexed by mp_tensor_class (mp_inference.h); sized for it. */
	uint8_t checkpoint_format[8];
	uint64_t ffn_sub_norm;		/* BitNet: the ffn_sub_norm weight before down_proj (intermediate_size values) */
	bool qk_norm_layer;		/* Phi qk_layernorm: per-head LayerNorms of q and k (weight and bias, head_dim) */
	/* --- appended for issue 15: what the description says about itself (model/hf_facts.c), for the service's
	 * defaults and warnings; the memory formulas never read these --- */
	mp_dtype config_dtype;		/* the checkpoint's dtype (torch_dtype / dtype); MP_DTYPE_INVALID = not stated */
	mp_dtype config_quant_dtype;	/* quantization_config's storage format (int4 for gptq/awq, fp8_e4m3, nf4,
					   int8); MP_DTYPE_INVALID = none */
	uint8_t config_quant_scheme;	/* int4: 0 gptq, 1 awq (mp_int4_scheme) */
	uint64_t config_quant_group_size;	/* quantization_config.group_size; 0 = not stated */
	char defaulted_keys[256];	/* shape keys the config leaves out, with the values the model type's defaults
					   gave them: "num_hidden_layers=32, intermediate_size=11008"; "" = none */
	bool max_position_defaulted;	/* max_position_embeddings (or its alias) is not in the config: the context
					   limit is the model type's default, not the model's statement */
	/* tanh soft-capping (Gemma-2: attn_logit_softcapping 50, final_logit_softcapping 30): the training planner
	 * counts the tanh outputs autograd keeps (activations.c, training.c) */
	bool attn_logit_softcapping;	/* on the attention scores (eager attention) */
	bool final_logit_softcapping;	/* on the logits */
	/* --- appended for issue 14, second half --- */
	/* DeepSeek sparse attention's lightning indexer (DeepSeek-V3.2, arXiv 2512.02556; modeling_deepseek_v32.py
	 * DeepseekV32Indexer): per attention layer wq_b (heads x dim from q_lora_rank), wk (dim from hidden), k_norm (a
	 * LayerNorm of dim), weights_proj (heads from hidden); it caches one key of indexer_head_dim per token. */
	uint64_t indexer_heads;
	uint64_t indexer_head_dim;	/* 0 = no indexer */
	uint64_t indexer_topk;		/* keys each query attends to after the indexer's selection (index_topk) */
	uint64_t indexer_layers;	/* layers with an indexer of their own (GLM-5's "shared" layers reuse the previous
					 * one's selection: no weights, no cached keys); 0 = every attention layer */
	mp_vision vision;		/* a multimodal wrapper's image tower and projector (vision.hidden 0: none) */
	bool attn_output_gate;		/* gated attention (Qwen3-Next, Qwen3.5): q_proj also projects a per-head gate
					 * (heads x head_dim more rows) */
	bool moe_beside_dense;		/* MoE layers keep their dense MLP too (LongCat-Flash's shortcut MoE) */
	/* The attention and dense MLP weights of the attention layers are shared blocks, listed in extra with their own
	 * shapes (Zamba2): the layers keep their KV cache and their ops, not weights of their own. */
	bool shared_block_params;
	/* The dense MLPs are the reader's own tensors (their widths differ per layer: Gemma 3n's intermediate_size list,
	 * Gemma 4's double-wide KV-shared layers); intermediate_size is the narrowest, for activations and the step. */
	bool own_mlp;
	uint64_t attn_input_size;	/* q, k and v project from this width (Zamba2: 2 x hidden); 0 = hidden_size */
	uint64_t zero_experts;		/* LongCat-Flash's zero-computation experts: router rows, no weights */
	/* --- appended for issue 14 (Gemma 4, Gemma 3n): attention that differs per layer --- */
	/* The attention, its weights and its KV cache are per layer (layer_flags' MP_LAYER_WINDOW, MP_LAYER_KV_SHARED,
	 * MP_LAYER_GLOBAL; layer_pattern must be set): a layer of MP_LAYER_GLOBAL has heads of global_head_dim and
	 * global_kv_heads KV heads (Gemma 4's per_layer_config on its full-attention layers: head_dim 512), the others
	 * head_dim and num_kv_heads. False: every attention layer is alike (sliding_window_layers says how many slide). */
	bool attn_per_layer;
	uint64_t global_head_dim;
	uint64_t global_kv_heads;
	bool global_k_eq_v;		/* the MP_LAYER_GLOBAL layers have no v_proj (Gemma 4 attention_k_eq_v): V is the k
					 * projection before k_norm and RoPE, cached as a tensor of its own */
	/* --- appended for issue 14 (DeepSeek-V4): compressed attention (planner/kv.c compressed_kv_bytes) --- */
	/* Every attention layer caches one key of head_dim per token over the sliding window (K = V: shared-KV MQA);
	 * the layers of MP_LAYER_CSA / MP_LAYER_HCA add a compressor's state: one compressed entry per rate tokens and
	 * the tokens of the window not yet closed (their kv and gate projections), CSA layers the last window's
	 * overlap slice and an indexer of csa_indexer_head_dim doing the same. The weights are mp_model.extra
	 * (shared_block_params set). */
	bool compressed_kv;
	uint64_t csa_compress_rate;	/* tokens per compressed entry of a CSA layer (compress_rates, 4) */
	uint64_t hca_compress_rate;	/* of an HCA layer (128) */
	uint64_t csa_indexer_head_dim;	/* the CSA indexer's key width (index_head_dim, 128) */
	uint64_t hc_mult;		/* residual streams of the manifold-constrained hyper-connections (DeepSeek-V4 hc_mult);
					 * only the warnings read it (activations take one stream) */
	uint64_t hash_router_layers;	/* MoE layers routed by a token-id table (DeepSeek-V4 hash_moe: a tid2eid buffer of
					 * vocab x top-k int64 instead of e_score_correction_bias); 0 = none */
	/* --- appended for issue 24 (every config off the defaults) --- */
	bool qk_norm_heads;		/* with qk_norm_full: the norms' weights are [heads, head_dim] and [kv_heads, head_dim]
					 * matrices (CohereLayerNorm of (heads, head_dim), modeling_cohere.py), not vectors */
	bool qk_norm_heads_bias;	/* with qk_norm_heads: each norm also has a bias of its weight's shape
					 * (ChameleonLayerNorm((heads, head_dim)), modeling_chameleon.py) */
	/* Biases of the routed and of the shared experts where a class sets them apart from the dense MLP's (mlp_bias):
	 * MP_BIAS_AS_MLP (0) follows mlp_bias, MP_BIAS_ON and MP_BIAS_OFF say so (ERNIE 4.5 MoE: use_bias on the dense
	 * and shared MLPs, never on the routed experts). */
	uint8_t routed_bias, shared_bias;
	/* The routed experts project from and to this width instead of hidden_size (Nemotron-H's latent MoE,
	 * moe_latent_size: fc1_latent_proj and fc2_latent_proj around them, the reader's tensors); 0 = hidden_size. */
	uint64_t moe_latent_size;
	/* The KV heads transformers' cache holds per attention layer where it differs from num_kv_heads (Falcon's new
	 * decoder architecture expands them to num_attention_heads: mp_inference_opts.cache_layout); 0 = num_kv_heads. */
	uint64_t transformers_kv_heads;
	/* The MoE layers keep a shared-experts block of width 0 whose down_proj still has its bias of hidden_size
	 * (DeepseekV2Moe with n_shared_experts 0 and mlp_bias: nn.Linear(0, hidden, bias=True)). */
	bool shared_down_bias_only;
	/* Tokens the model puts before every sequence and caches with it (CPM-Ant's prompt_length prompt tokens,
	 * CpmAntModel.forward): the KV cache holds sequence_length + these; 0 = none. */
	uint64_t cache_prefix_tokens;
	/* The query heads of the MP_LAYER_GLOBAL layers where they differ from num_heads (Inkling's full-attention
	 * layers: num_attention_heads beside the sliding layers' swa_num_attention_heads); 0 = num_heads. Read by the
	 * validation only (the reader lists those layers' tensors). */
	uint64_t global_heads;
	/* MLA layers with a cache of their own whose latent carries no RoPE key (Mistral Large 4's no_rope_layers:
	 * kv_a_proj_with_mqa gives kv_lora_rank values and the cached k_rot is 0 wide): in the latent layout their row is
	 * kv_lora_rank values, not kv_lora_rank + qk_rope_head_dim (planner/kv.c); 0 = none. */
	uint64_t mla_nope_layers;
	/* The latent values a token of a sliding-window MLA layer keeps when they differ from the other layers'
	 * (dots.llm3's sliding layers: their own kv_lora_rank + qk_rope_head_dim, per_layer_config); 0 = the same. */
	uint64_t mla_window_latent;
	/* The indexer's cached keys are fp32 whatever kv_cache_dtype says (transformers' Dots3NoteTextIndexer rotates
	 * them with fp32 cos and sin before DynamicIndexedLayer stores them). */
	bool indexer_keys_fp32;
	/* int64 values the indexers' cache keeps per token once for all their layers beside their keys (Qwen4-Exp's
	 * indexer_position_ids, 3 multimodal positions, on the first indexed layer's DynamicIndexedLayer); 0 = none. */
	uint64_t indexer_int64_per_token;
	/* Values the indexer caches per token and layer where they are more than its key (GLM-5.3-Flash's packed key, gate
	 * scores and valid flag: 2 x indexer_head_dim + 1); 0 = indexer_head_dim. */
	uint64_t indexer_cache_values;
	/* The tensors (mp_inventory.h): a reader adds the modules no field above describes, then mp_model_build adds
	 * the rest. Every parameter count, weight byte and step product is derived from it. */
	mp_inventory inv;
} mp_model;

/* ---------------------------------------------------------------------------------------------------------
 * The attention kernel torch.nn.functional.scaled_dot_product_attention runs for transformers' "sdpa"
 * attention on a CUDA GPU of compute capability 8.0 or newer (planner/sdpa.c).
 * ------------------------------------------------------------------------------------------------------- */
typedef enum mp_sdpa_kernel {
	MP_SDPA_FLASH = 0,	/* FlashAttention-2: q, k, v, out and the log-sum-exp kept; no score matrix */
	MP_SDPA_EFFICIENT,	/* memory-efficient (cutlass): the same, any float type, masks allowed */
	MP_SDPA_MATH,		/* the composite fallback: scores materialised and softmax kept, like eager */
} mp_sdpa_kernel;

/*
 * Which kernel SDPA picks, from its constraints (PyTorch 2.5 to 2.11, aten/src/ATen/native/transformers/cuda/
 * sdp_utils.cpp, priority flash > efficient > math) and what transformers passes it
 * (integrations/sdpa_attention.py: without an attention mask it calls with enable_gqa=True and k/v at their own
 * head count; with one, repeat_kv expands k/v to every query head first):
 *   flash: fp16 or bf16, no explicit mask, head_dim <= 256 and a multiple of 8; grouped-query heads allowed;
 *   efficient: fp32, fp16 or bf16, masks allowed, but the same head count for q, k and v
 *     (check_batch_size_and_num_heads_dense<false>: no grouped-query attention);
 *   math: everything else, so fp32 with grouped-query heads and no mask (the usual training case) falls back to
 *     the math kernel, which materialises batch x heads x s x s fp32 scores.
 * compute_bytes: 4 for fp32, 2 for fp16/bf16; heads, kv_heads: per GPU; masked: an explicit mask is passed (a
 * sliding window shorter than the keys, or padding). Worked example (tests/test_fidelity.c): Llama-3.2-1B (32
 * heads, 8 KV heads, head_dim 64): fp32 unmasked -> math; bf16 -> flash; fp32 masked -> efficient (k/v repeated).
 */
mp_sdpa_kernel mp_sdpa_kernel_of(const mp_model *m, uint64_t compute_bytes, uint64_t heads, uint64_t kv_heads,
				 bool masked);
/* "flash", "efficient", "math"; "invalid" outside the range. */
const char *mp_sdpa_kernel_name(mp_sdpa_kernel k);

/* Where errors about m's keys are named: m->json_pointer, or "/model" when it is empty. */
const char *mp_model_pointer(const mp_model *m);

/* MP_EOVERFLOW for a model-sized quantity (what: "the parameter count", "the weight bytes") that does not fit 64
 * bits, naming the largest of the config's dimensions, which drives every such product. Example: hidden_size
 * 1,099,511,627,776 -> "/model/hf_config/hidden_size". */
mp_status mp_model_overflow(const mp_model *m, const char *what, mp_error *err);

/* Is layer i (0-based) a mixture-of-experts layer? first_dense_layers, moe_layer_step and
 * dense_layer_mask together decide (transformers: first_k_dense_replace, decoder_sparse_step, mlp_only_layers). */
bool mp_model_is_moe_layer(const mp_model *m, uint64_t i);

/* How many layers run an indexer of their own (0 without one). */
uint64_t mp_model_indexer_layers(const mp_model *m);

/* How many layers use the sliding window (0 when the model has none). */
uint64_t mp_model_sliding_layers(const mp_model *m);

/* How many layers have self-attention (all of them without a layer pattern), a recurrent mixer, a feed-forward
 * block. Worked example: Jamba-v0.1's pattern (attention every 8th layer from 4, 32 layers) -> 4, 28, 32. */
uint64_t mp_model_attention_layers(const mp_model *m);
uint64_t mp_model_ssm_layers(const mp_model *m);
uint64_t mp_model_ffn_layers(const mp_model *m);

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
	uint64_t active_per_token;	/* MoE: parameters a text token touches (top-k routed + shared); = total if dense */
	/* --- appended for issue 14 --- */
	uint64_t recurrent;		/* all layers: the state-space mixers (in/out projections, conv, A, D, dt) */
	uint64_t vision;		/* a multimodal wrapper's image tower and projector */
} mp_param_count;

/*
 * Exact unique parameter count, as PyTorch's sum(p.numel() for p in model.parameters()) counts a
 * transformers model built from the same config (LlamaForCausalLM etc.). Worked example: Llama-3-8B
 * (h 4096, 32 layers, 32 heads, 8 KV heads, head_dim 128, FFN 14336, vocab 128256, untied) ->
 * embedding 525,336,576 + 32 x 218,112,000 per layer + norm 4,096 + head 525,336,576 = 8,030,261,248.
 * Derived from m->inv alone (built by mp_model_build): each tensor's values times its count, by its kind; routed
 * experts count num_experts_per_tok of num_experts toward active_per_token, another modality's (MP_TF_OTHER_MODALITY:
 * ERNIE-4.5-VL's vision experts) none of theirs. Buffers are no parameters.
 * Errors: MP_EINVAL (validation), MP_EOVERFLOW, MP_EINTERNAL when m's inventory was not built.
 */
mp_status mp_count_parameters(const mp_model *m, mp_param_count *out, mp_error *err);

/*
 * m's bytes up to and with the inventory's tensors in use: mp_model is about 19 KB with room for MP_MAX_TENSORS (256)
 * tensors, of which a model uses a few dozen, so copies and clears on a request's path stop there.
 * mp_model_clear zeroes every member (an empty inventory); mp_model_copy copies src into dst (dst's unused tensor
 * entries are left as they were: nothing reads past inv.n).
 */
size_t mp_model_used_bytes(const mp_model *m);
void mp_model_clear(mp_model *m);
void mp_model_copy(mp_model *dst, const mp_model *src);

/*
 * Builds m's inventory: the tensors a reader has added already (its family's own modules), then the decoder's
 * (planner/decoder.c: embeddings, attention, recurrent mixers, MLP or experts, norms, head) under `names` (NULL:
 * mp_names_llama) and a wrapper's tower (mp_vision_build). Validates m first. Errors: MP_EINVAL (validation),
 * MP_EOVERFLOW naming the config's largest dimension, MP_EUNSUPPORTED (more than MP_MAX_TENSORS tensors).
 */
mp_status mp_model_build(mp_model *m, const mp_names *names, mp_error *err);

/* The image tower's and projector's tensors into m->inv (planner/vision.c; nothing without a tower). */
void mp_vision_build(mp_model *m);

#endif /* MP_MODEL_H */
