/*
 * mp_inventory.h: the tensor inventory, the one list of a model's tensors that every count and byte figure comes
 * from. Each entry is a tensor as transformers' state_dict names and shapes it (the decoder layer's index as "{i}":
 * "model.layers.{i}.self_attn.q_proj.weight"), how many of it the model holds, its class, how tensor and expert
 * parallelism shard it, and the matrix product a step runs with it. Parameter counts (total, active per token, per
 * component), weight bytes per format and rank, and the roofline's matrix operations are all derived from it
 * (planner/inventory.c, weights.c, step.c), so they cannot disagree. The readers (model/) fill it; the tests hold it
 * name by name and shape by shape against the state_dict transformers builds (tests/ref/hf/state_dicts.json).
 * Part of the planner's public contract; include "memplan.h", not this file.
 */
#ifndef MP_INVENTORY_H
#define MP_INVENTORY_H

#include "mp_core.h"

/* The storage-format classes: each class of matrices takes one format (mp_weight_formats), vectors the norms'. */
typedef enum mp_tensor_class {
	MP_TC_EMBEDDINGS = 0, /* token (and learned position) embeddings */
	MP_TC_ATTENTION,      /* q, k, v, o (and MLA) projections, their biases, q/k norms */
	MP_TC_MLP,            /* dense MLP projections */
	MP_TC_EXPERTS,        /* routed and shared experts, routers */
	MP_TC_LM_HEAD,        /* output projection (absent when tied) */
	MP_TC_NORMS,          /* layer norms, final norm */
	MP_TC_RECURRENT,      /* state-space mixers (Mamba in/out projections, conv, A, D, dt); reported when present */
	MP_TC_VISION,         /* a multimodal wrapper's image tower and projector; reported when present */
	MP_TC_COUNT
} mp_tensor_class;

/* "embeddings", "attention", "mlp", "experts", "lm_head", "norms", "recurrent", "vision"; "invalid" otherwise. */
const char *mp_tensor_class_name(mp_tensor_class c);

/* What a tensor is part of (the API's "class" of a tensor; finer than the format class it takes). */
typedef enum mp_tensor_kind {
	MP_TK_EMBEDDING = 0,	/* token, position and per-layer embedding tables */
	MP_TK_ATTENTION,	/* the attention block: projections, biases, q/k norms, sinks, indexers, compressors */
	MP_TK_MLP,		/* a dense feed-forward block */
	MP_TK_EXPERT,		/* routed experts and their router */
	MP_TK_SHARED_EXPERT,	/* experts every token runs (DeepSeek's shared_experts, Qwen's shared_expert) */
	MP_TK_NORM,		/* the layers' norms and the final norm */
	MP_TK_VISION,		/* an image (or audio) tower */
	MP_TK_PROJECTOR,	/* what hands a tower's features to the decoder */
	MP_TK_RECURRENT,	/* a state-space or linear-attention mixer */
	MP_TK_LM_HEAD,		/* the output projection */
	MP_TK_COUNT
} mp_tensor_kind;

/* "embedding", "attention", "mlp", "expert", "shared_expert", "norm", "vision", "projector", "recurrent",
 * "lm_head"; "invalid" otherwise. */
const char *mp_tensor_kind_name(mp_tensor_kind k);
/* The format class a kind's matrices take: expert and shared_expert -> experts, vision and projector -> vision. */
mp_tensor_class mp_tensor_kind_class(mp_tensor_kind k);

/* How tensor parallelism shards a tensor (vLLM's parallel linear layers). */
typedef enum mp_tp_split {
	MP_SPLIT_NONE = 0, /* replicated on every tensor-parallel rank */
	MP_SPLIT_ROWS,     /* column-parallel: output rows divided (q, gate, up, vocab); a vector: its values */
	MP_SPLIT_COLS,     /* row-parallel: input columns divided (o, down) */
	MP_SPLIT_KV_ROWS,  /* k/v rows by KV head (kv_heads heads of rows / kv_heads); one head per rank (replicated)
			    * when ranks exceed the KV heads (vLLM QKVParallelLinear) */
	MP_SPLIT_QKV_ROWS, /* a fused q, k, v projection: the q part by query heads, k and v by KV heads as above */
} mp_tp_split;

/* The matrix product a decode or prefill step runs with a tensor (planner/step.c): tensors of one product that
 * read the same input are one operation (q, k and v: one "qkv"). MP_STEP_NONE: looked up (embeddings), a vector, a
 * buffer, or outside the decoder (a tower). */
typedef enum mp_step_product {
	MP_STEP_NONE = 0,
	MP_STEP_QKV,		/* q, k, v (or fused) from the attention's input */
	MP_STEP_Q,		/* MLA without a query LoRA: the query from the input */
	MP_STEP_Q_A,		/* MLA: the query's low-rank down projection */
	MP_STEP_Q_B,		/* MLA: its up projection */
	MP_STEP_KV_A,		/* MLA: the latent and rotary key */
	MP_STEP_KV_B,		/* MLA: keys and values from the latent */
	MP_STEP_INDEXER_Q,	/* DeepSeek sparse attention's indexer: its queries */
	MP_STEP_INDEXER_K,	/* its key and head weights */
	MP_STEP_O,		/* the attention's output projection */
	MP_STEP_MIXER_IN,	/* a recurrent mixer's input projection(s) */
	MP_STEP_MIXER_X_DT,	/* Mamba's x_proj and dt_proj */
	MP_STEP_MIXER_GATES,	/* Kimi delta attention's gate up-projections (each from its own low-rank input) */
	MP_STEP_MIXER_OUT,
	MP_STEP_MLP_GATE_UP,	/* gate and up (or fused) of a gated dense MLP */
	MP_STEP_MLP_UP,		/* up of a plain dense MLP */
	MP_STEP_MLP_DOWN,
	MP_STEP_ROUTER,
	MP_STEP_EXPERT_GATE_UP,	/* routed experts: the active experts' weights are read */
	MP_STEP_EXPERT_UP,
	MP_STEP_EXPERT_DOWN,
	MP_STEP_SHARED_GATE_UP,	/* shared experts */
	MP_STEP_SHARED_UP,
	MP_STEP_SHARED_DOWN,
	MP_STEP_EXTRA,		/* other per-token decoder matrices, read as one product (per-layer inputs, AltUp) */
	MP_STEP_LM_HEAD,	/* the output projection (a tied model's embedding table) */
	MP_STEP_COUNT
} mp_step_product;

/* The step's names of the operations: "qkv", "q_a", ..., "extra_matrices", "lm_head"; "none". */
const char *mp_step_product_name(mp_step_product p);

/* How a tensor's shape maps to the matrix the arithmetic sees (rows x cols, `copies` of them). */
typedef enum mp_tensor_view {
	MP_VIEW_LINEAR = 0,	/* [rows, cols...]: nn.Linear's out x in; more dims fold into cols (a Conv1d's
				 * [channels, 1, kernel] is channels x kernel) */
	MP_VIEW_VECTOR,	/* [n], [] or more dims: values stored as vectors are (a bias, a norm, a scalar), never
				 * quantised */
	MP_VIEW_T,		/* [cols, rows]: GPT-2's Conv1D keeps in x out */
	MP_VIEW_EXPERTS,	/* [copies, rows, cols]: transformers' fused experts (gate_up_proj [E, 2f, h]) */
	MP_VIEW_EXPERTS_T,	/* [copies, cols, rows] (gpt-oss's experts [E, h, 2f]) */
	MP_VIEW_EXPERTS_VECTOR,	/* [copies, cols]: a vector per expert (gpt-oss's gate_up_proj_bias [E, 2f]) */
	MP_VIEW_EXPERTS_FLAT,	/* [copies x rows, cols]: the experts stacked along one dimension (DBRX's w1 and v1
				 * [E x f, h]); the copies are kept in dims[MP_TENSOR_MAX_DIMS - 1] */
	MP_VIEW_EXPERTS_FLAT_T,	/* [copies x cols, rows]: the same, each expert stored in x out (DBRX's w2 [E x f, h]) */
} mp_tensor_view;

#define MP_TF_BUFFER 1u		/* a registered buffer in the state_dict, not a parameter (fp32 unless MP_TF_INT64) */
#define MP_TF_INT64 2u		/* a buffer of int64 values (DeepSeek-V4's tid2eid) */
#define MP_TF_ROUTER 4u		/* an MoE router: unquantised when the checkpoint quantises the experts itself */
#define MP_TF_ROUTED 8u		/* routed experts: a token runs num_experts_per_tok of the model's num_experts */
#define MP_TF_EP 16u		/* expert parallelism divides the copies (or the count) among its ranks */
#define MP_TF_POSITIONS 32u	/* the learned position table (GPT-2 wpe): its own line in the parameter count */
#define MP_TF_OWN_INPUT 64u	/* a product of its own within its step product (not fused with the others of it) */
#define MP_TF_UNCOUNTED 128u	/* a state_dict entry no checkpoint or engine holds (a buffer computed at load):
				 * listed, never counted in parameters or bytes */
#define MP_TF_OTHER_MODALITY 256u /* a decoder tensor that only another modality's tokens run (ERNIE-4.5-VL's
				 * vision_moe: the experts and router image and video tokens take, modeling_ernie4_5_vl_moe.py
				 * Ernie4_5_VLMoeMoeBlock): in the total, the weights and the optimizer state, never in a
				 * text token's active parameters; no step product (a text step never reads it) */

#define MP_TENSOR_MAX_DIMS 5

typedef struct mp_tensor {
	const char *path;	/* static: the module's path under the root, "layers.{i}.self_attn"; NULL = none */
	const char *leaf;	/* static: "q_proj.weight", "A_log" */
	uint32_t dims[MP_TENSOR_MAX_DIMS]; /* the shape as state_dict holds it (the first ndim; MP_VIEW_EXPERTS_FLAT keeps
					    * its copies in the last) */
	uint8_t ndim;		/* 0 (a scalar) to MP_TENSOR_MAX_DIMS */
	uint8_t root;		/* index into mp_inventory.roots */
	uint8_t kind;		/* mp_tensor_kind */
	uint8_t split;		/* mp_tp_split */
	uint8_t step;		/* mp_step_product */
	uint8_t view;		/* mp_tensor_view */
	uint16_t flags;		/* MP_TF_* (after view: mp_tensor stays 64 bytes) */
	uint8_t parts;		/* matrices a checkpoint keeps apart that this tensor stacks along its rows (a fused
				 * gate_up_proj of separately stored gate and up: 2), each with its own scales */
	uint32_t count;		/* tensors of this name and shape: the layers (or blocks) it repeats over */
	uint32_t uses;		/* times one step applies the tensors of this entry in all (a block shared by several
				 * layers: more than count); 0 = count */
	uint32_t heads, kv_heads; /* MP_SPLIT_KV_ROWS, MP_SPLIT_QKV_ROWS: the query and KV heads its rows hold */
} mp_tensor;

#define MP_MAX_TENSORS 256
/* The roots' indexes: a tensor's name starts with roots[root]. */
#define MP_ROOT_TOP 0		/* "" */
#define MP_ROOT_DECODER 1	/* "model.", "transformer.", "model.language_model." */
#define MP_ROOT_HEAD 2		/* the lm_head's when not the top ("language_model." of Llama 4) */
#define MP_ROOT_TOWER 3		/* an image tower's ("model.vision_tower.", "model.visual.") */
#define MP_ROOT_PROJECTOR 4	/* its projector's ("model.multi_modal_projector.") */
#define MP_ROOT_EXTRA 5		/* a reader's own (a second tower) */
#define MP_INVENTORY_ROOTS 6

/*
 * A model's tensors: up to MP_MAX_TENSORS built for the config (t), then a static table shared by every model
 * that has it (ext: a fixed tower such as Gemma 3n's timm MobileNetV5, described once; borrowed, never freed).
 * roots[0] is "" (names from the top: "lm_head.weight"); a reader sets the others ("model.", "transformer.",
 * "model.language_model."). Filled by the builders below; read by everyone else.
 */
typedef struct mp_inventory {
	size_t n;
	const mp_tensor *ext;
	size_t n_ext;
	const char *roots[MP_INVENTORY_ROOTS]; /* static strings */
	size_t n_own;		/* the first n_own of t are the reader's own (mp_model_build keeps them when it builds again) */
	const struct mp_names *names; /* the names mp_model_build used (static; a build again with NULL takes them) */
	bool built;		/* set by mp_inventory_finish: counts and bytes refuse an inventory not finished */
	bool full;		/* a builder ran out of room: mp_inventory_finish fails naming the cap */
	bool too_wide;		/* a dimension or count of 2^32 or more: mp_inventory_finish fails (overflow) */
	/* last, so that a copy or a clear can stop after the n entries in use (mp_model_copy, mp_model_clear) */
	mp_tensor t[MP_MAX_TENSORS];
} mp_inventory;

/* inline: every count, byte and step product walks the inventory */
static inline size_t mp_inventory_size(const mp_inventory *inv)
{
	return inv->n + inv->n_ext;
}

static inline const mp_tensor *mp_inventory_at(const mp_inventory *inv, size_t i)
{
	return i < inv->n ? &inv->t[i] : &inv->ext[i - inv->n];
}

/* Entry i of inv (0 <= i < mp_inventory_size(inv)): the built tensors, then ext's. Defined below the struct. */
static inline size_t mp_inventory_size(const struct mp_inventory *inv);
static inline const mp_tensor *mp_inventory_at(const struct mp_inventory *inv, size_t i);

/* rows, cols and copies of t's matrix view (mp_tensor_view); a vector is 1 x its values. */
uint64_t mp_tensor_rows(const mp_tensor *t);
uint64_t mp_tensor_cols(const mp_tensor *t);
uint64_t mp_tensor_copies(const mp_tensor *t);
/* Values of one tensor (the product of its dims; 1 for a scalar). False on overflow. */
bool mp_tensor_values(const mp_tensor *t, uint64_t *out);
/* A vector (VECTOR or EXPERTS_VECTOR): stored in the norms' format, never quantised. */
bool mp_tensor_is_vector(const mp_tensor *t);
/* One matrix (one vector) of t on one of tp tensor-parallel ranks: rows and cols divided as t->split says (rounded
 * up; KV heads shared out, or one per rank when the ranks outnumber them). Example: k_proj of 8 KV heads of 128 at
 * tp 16 -> 128 rows (one head, replicated). */
void mp_tensor_per_rank(const mp_tensor *t, uint64_t tp, uint64_t *rows, uint64_t *cols);
/* The format class t takes: a vector the norms', a matrix its kind's (mp_tensor_kind_class). */
mp_tensor_class mp_tensor_format_class(const mp_tensor *t);

/*
 * t's name into buf (len bytes, NUL-terminated): roots[t->root] + path + "." + leaf, "{i}" left as it is. Returns the
 * length it needs (as snprintf), so a caller can grow its buffer; every name fits 256 bytes.
 * Example: roots[1] "model.", path "layers.{i}.self_attn", leaf "q_proj.weight" -> "model.layers.{i}.self_attn.q_proj.weight".
 */
size_t mp_tensor_name(const mp_inventory *inv, const mp_tensor *t, char *buf, size_t len);

/* ----- building ------------------------------------------------------------------------------------------ */

/* Empties inv and sets roots[1] (the decoder's root, "model."; NULL = ""). */
void mp_inventory_init(mp_inventory *inv, const char *root);
/* Sets roots[i] (1 <= i < MP_INVENTORY_ROOTS) and returns i. */
uint8_t mp_inventory_root(mp_inventory *inv, uint8_t i, const char *root);

/* One tensor to add (mp_inventory_add copies it; zero rows or cols or count adds nothing). */
typedef struct mp_tensor_spec {
	uint8_t root;
	const char *path, *leaf;
	mp_tensor_kind kind;
	mp_tp_split split;
	mp_step_product step;
	mp_tensor_view view;
	unsigned flags;
	uint64_t rows, cols, copies; /* the matrix view; copies 0 = 1; a vector: [cols] */
	uint64_t count, uses;
	uint64_t heads, kv_heads;
	unsigned parts;		/* 0 = 1 */
	bool conv;		/* LINEAR: a depthwise Conv1d's [rows, 1, cols] */
	bool scalar;		/* VECTOR of shape [] */
} mp_tensor_spec;

/* Adds s (its shape follows from view: LINEAR [rows, cols], T [cols, rows], EXPERTS [copies, rows, cols],
 * EXPERTS_T [copies, cols, rows], EXPERTS_FLAT [copies x rows, cols], EXPERTS_FLAT_T [copies x cols, rows],
 * VECTOR [cols]). A dimension of 2^32 or more, or a full inventory, marks it for
 * mp_inventory_finish to refuse (MP_EOVERFLOW, MP_ETOOLARGE). */
void mp_inventory_add(mp_inventory *inv, const mp_tensor_spec *s);

/* Adds an explicit shape (a convolution's [out, in, kh, kw], a tower's odd tensors): its matrix is dims[0] x the
 * rest (view LINEAR) or 1 x all (VECTOR). */
void mp_inventory_add_shape(mp_inventory *inv, uint8_t root, const char *path, const char *leaf, mp_tensor_kind kind,
			    mp_tensor_view view, unsigned flags, const uint64_t *dims, unsigned ndim, uint64_t count);

/*
 * Ends building: checks what the builders marked (more than MP_MAX_TENSORS entries: MP_EUNSUPPORTED naming the cap;
 * a dimension of 2^32 or more, or a tensor whose values times its count overflow 64 bits: MP_EOVERFLOW naming
 * `what` under `base`) and sets built. base is the JSON pointer of the model's keys ("/model/hf_config").
 */
mp_status mp_inventory_finish(mp_inventory *inv, const char *base, mp_error *err);

#endif /* MP_INVENTORY_H */
