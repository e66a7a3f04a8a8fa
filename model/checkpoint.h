/*
 * checkpoint.h: a model as a user holds it, a GGUF file (or the files of a split one) or a folder of safetensors
 * shards, described from its headers alone: the planner's mp_model, the file's tensors matched one by one against
 * the model's inventory (tensor_names.h), their exact bytes per class and per storage type, and for GGUF the file as
 * llama.cpp's loader sees it (gguf_llamacpp.h). Bytes in, plain structs out: no files, no HTTP. The request decoders
 * (codec/) and the Hugging Face cache and Hub reader (service/ over hub/) both build models through it, so a header
 * pasted into the API and the same file read by the command line give one answer.
 */
#ifndef MPM_CHECKPOINT_H
#define MPM_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "../planner/memplan.h"
#include "tensor_names.h"

struct cJSON;

typedef enum mpm_ckpt_format {
	MPM_CKPT_NONE = 0,
	MPM_CKPT_GGUF = 1,
	MPM_CKPT_SAFETENSORS = 2,
} mpm_ckpt_format;

/* "none", "gguf", "safetensors". */
const char *mpm_ckpt_format_name(mpm_ckpt_format f);

#define MPM_CKPT_MAX_TYPES 12

/* The tensors of one storage type ("q4_K", "BF16"), all files together. */
typedef struct mpm_ckpt_type {
	char name[16];		/* ggml's type name, or safetensors' dtype */
	uint64_t tensors;
	uint64_t bytes;
} mpm_ckpt_type;

typedef struct mpm_checkpoint {
	mpm_ckpt_format format;
	uint32_t files;			/* GGUF files of a split model, or safetensors shards */
	uint64_t tensors;
	uint64_t tensor_bytes;		/* every tensor's exact bytes, all files */
	uint64_t aux_bytes;		/* of which quantisation scales, zero-points, indices (safetensors) */
	uint64_t header_bytes;		/* the headers' own bytes, all files */
	char architecture[64];		/* GGUF general.architecture; safetensors: the config's model_type */
	char name[128];			/* GGUF general.name, "" when absent */
	char quant_method[32];		/* safetensors: what its tensors show ("gptq", "fp8", ...), "" none */
	size_t ntypes;			/* storage types by bytes, the largest first */
	mpm_ckpt_type types[MPM_CKPT_MAX_TYPES];
	uint64_t types_left_out;	/* tensors of types past MPM_CKPT_MAX_TYPES (counted in the last row's stead) */
	/* the format the plan gives the matrices (the storage type of most of the matrices' bytes, as the planner
	 * names it; a GGUF type the planner has no name for takes the nearest by bits per value) */
	mp_dtype weight_dtype;
	bool weight_dtype_exact;	/* false: the nearest, not the file's own (weights_bytes stays the file's) */
	mp_int4_scheme int4_scheme;	/* weight_dtype int4 */
	uint64_t int4_group_size;
	/* the file's bytes per format class of the inventory (the class of the row each tensor falls under; a scale
	 * beside a weight in its weight's class) and what no class holds (rope_freqs, tensors of no row) */
	uint64_t class_bytes[MP_TC_COUNT];
	uint64_t other_bytes;
	mpm_match match;		/* the file's tensors against the model's inventory */
	/* GGUF: the file as llama.cpp's loader sees it (the model half of the params; the launch half is the
	 * caller's), heap-owned */
	mp_llamacpp_params *llama;
	mp_llamacpp_tensor *llama_tensors;
	size_t n_llama_tensors;
	uint32_t gguf_version;
} mpm_checkpoint;

/*
 * A GGUF model from the header bytes of each of its files (one, or every file of a split model in any order:
 * bufs[i] holds at least file i's header; bytes past it are ignored). Reads each (mpm_gguf_read), merges the files
 * of a split model (mpm_gguf_merge: one architecture and split.count, each split.no once, all of them), maps the
 * architecture to *m (mpm_gguf_to_model), matches the tensors against m's inventory (GGUF layout) and fills *out.
 * pointer names the header in errors ("/model/gguf_header", "/model/gguf_header/1" for the second file). Errors:
 * MP_EINVAL naming the byte or the tensor and the rule (a header cut short says so and at which byte), a split set
 * with a file missing or twice; MP_EUNSUPPORTED (an architecture it does not map); MP_ENOMEM. Owned by the caller:
 * *out, freed with mpm_checkpoint_free (also after an error). Worked example (tests/test_checkpoint.c): the llama
 * reference in q8_0 -> 19 tensors, 4,359,680 bytes, every one of the inventory's rows equal.
 */
mp_status mpm_checkpoint_gguf(const uint8_t *const *bufs, const size_t *lens, size_t nfiles, const char *pointer,
			      mp_model *m, mpm_checkpoint *out, mp_error *err);

/*
 * A safetensors checkpoint: the model m (read from its config.json already, inventory built), the JSON header of
 * each shard (headers[i], as the file has it after its 8-byte length; NULL entries are not allowed) and, when the
 * checkpoint has one, its model.safetensors.index.json (index, may be NULL: then the headers are the whole
 * checkpoint). With an index, the headers must be its shards (as many) and every tensor its weight_map names must be
 * in them. Matches the tensors against m's inventory (packed layout) and reads the format from them (bf16, fp16,
 * fp32, fp8 with its scales, GPTQ/AWQ int4 with the group size its scales show, bitsandbytes nf4 or int8). pointer
 * names the list ("/model/safetensors_headers"). Errors: MP_EINVAL naming the shard and the tensor and the rule
 * (mpm_st_read_json), an index that is not one or does not agree, MP_ENOMEM. Worked example
 * (tests/test_checkpoint.c): the llama reference's two shards -> bf16, the plan's weights to the byte.
 */
mp_status mpm_checkpoint_safetensors(const struct cJSON *const *headers, size_t n, const struct cJSON *index,
				     const mp_model *m, const char *pointer, mpm_checkpoint *out, mp_error *err);

/* The same from each shard's first bytes (the 8-byte length, then the header: mpm_st_read), as a file or a Hub
 * Range request has them. Errors and ownership: as mpm_checkpoint_safetensors. */
mp_status mpm_checkpoint_safetensors_bytes(const uint8_t *const *bufs, const size_t *lens, size_t n,
					   const struct cJSON *index, const mp_model *m, const char *pointer,
					   mpm_checkpoint *out, mp_error *err);

/* mpm_checkpoint_safetensors_bytes with the index as text (index_text NULL: none), and the config as text: fills
 * *m too (mpm_from_hf_text). Errors: MP_EPARSE (the config or the index is not JSON), as above. */
mp_status mpm_checkpoint_safetensors_files(const char *config_text, const uint8_t *const *bufs, const size_t *lens,
					   size_t n, const char *index_text, const char *pointer, mp_model *m,
					   mpm_checkpoint *out, mp_error *err);

/*
 * The shard files model.safetensors.index.json names (index_text: the file), each once in first-seen order, into
 * names[0..cap) (each cut at MPM_SHARD_NAME_MAX - 1 bytes), *n their count. Errors: MP_EPARSE (not JSON), MP_EINVAL (not
 * an index: {"weight_map": {tensor: shard file}}, or more than cap shards), naming pointer.
 */
#define MPM_SHARD_NAME_MAX 256
mp_status mpm_checkpoint_index_shards(const char *index_text, const char *pointer, char (*names)[MPM_SHARD_NAME_MAX],
				      size_t cap, size_t *n, mp_error *err);

/*
 * The plan's weights as the checkpoint holds them, per GPU at tensor-parallel degree 1: computed holds the plan's
 * weights (mp_weight_bytes with the checkpoint's format, tp 1); each class's bytes become the file's, the buffers
 * what no class holds, the total the file's tensors. Never fails.
 */
void mpm_checkpoint_weights(const mpm_checkpoint *c, const mp_weights *computed, mp_weights *out);

/* Frees what the builders allocated and zeroes *c. NULL-safe; idempotent. */
void mpm_checkpoint_free(mpm_checkpoint *c);

/* A deep copy of src into dst (the llama.cpp view copied). Errors: MP_ENOMEM. */
mp_status mpm_checkpoint_copy(mpm_checkpoint *dst, const mpm_checkpoint *src, mp_error *err);

#endif /* MPM_CHECKPOINT_H */
