/*
 * safetensors.h: the reader of safetensors headers (each shard's 8-byte little-endian length and its JSON header;
 * huggingface/safetensors docs, "Format") and of model.safetensors.index.json. From the header alone, never the
 * weights: each tensor's name, dtype, shape and data offsets, its exact bytes, and which tensors are quantisation
 * scales, zero-points or indices beside a weight (GPTQ/AWQ qweight, qzeros, scales, g_idx; fp8 weight_scale and
 * input_scale; compressed-tensors weight_packed, weight_scale, weight_zero_point, weight_shape; bitsandbytes absmax,
 * quant_map, quant_state, SCB). Bytes in, plain structs out: no files, no HTTP.
 */
#ifndef MPM_SAFETENSORS_H
#define MPM_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "../planner/memplan.h"

/* The largest JSON header the reader takes (the format's own limit is 100 MB; real checkpoints' are a few hundred
 * KB: a DeepSeek-V3 shard's about 60 KB). */
#define MPM_ST_MAX_HEADER_BYTES (UINT64_C(100) * 1000 * 1000)
#define MPM_ST_MAX_TENSORS 262144
#define MPM_ST_MAX_DIMS 8
#define MPM_ST_NAME_MAX 256

/* safetensors dtypes (the format's Dtype enum) */
typedef enum mpm_st_dtype {
	MPM_ST_BOOL = 0, MPM_ST_U8, MPM_ST_I8, MPM_ST_F8_E5M2, MPM_ST_F8_E4M3, MPM_ST_I16, MPM_ST_U16, MPM_ST_F16,
	MPM_ST_BF16, MPM_ST_I32, MPM_ST_U32, MPM_ST_F32, MPM_ST_F64, MPM_ST_I64, MPM_ST_U64, MPM_ST_F4,
	MPM_ST_F8_E8M0, MPM_ST_F6_E2M3, MPM_ST_F6_E3M2, MPM_ST_F8_E4M3FNUZ, MPM_ST_F8_E5M2FNUZ,
	MPM_ST_DTYPE_COUNT
} mpm_st_dtype;

typedef struct mpm_st_tensor {
	char name[MPM_ST_NAME_MAX];
	uint32_t dtype;			/* mpm_st_dtype */
	uint32_t n_dims;
	uint64_t shape[MPM_ST_MAX_DIMS];	/* outermost first, as torch writes it */
	uint64_t begin, end;		/* data_offsets, relative to the byte after the header */
	uint64_t bytes;			/* end - begin = the shape's values x the dtype's bits / 8 */
	uint64_t values;		/* logical values: a packed int4 weight's unpacked count (see mpm_st_read) */
	bool aux;			/* a scale, zero-point, index or quantisation state beside a weight */
	uint32_t shard;			/* which shard (0-based) */
} mpm_st_tensor;

typedef struct mpm_st {
	size_t n_tensors;
	mpm_st_tensor *tensors;
	uint64_t tensor_bytes;		/* the sum of every tensor's bytes */
	uint64_t aux_bytes;		/* of which scales, zero-points, indices */
	uint64_t header_bytes;		/* 8 + the JSON header's length, summed over the shards */
	uint32_t shards;
	char quant_method[32];		/* what the tensors show: "gptq", "awq", "fp8", "compressed-tensors",
					 * "bitsandbytes" or "" (none seen) */
} mpm_st;

/* The name ("F16", "BF16", ...) and bits per value of a dtype; NULL and 0 outside the enum. */
const char *mpm_st_dtype_name(uint32_t dt);
uint32_t mpm_st_dtype_bits(uint32_t dt);

/*
 * Reads one shard's header (buf: the shard's first bytes, at least 8 + N where N is the little-endian u64 at byte 0)
 * and appends its tensors to *st as shard number `shard`. file_bytes is the shard's size when known (0: the API's
 * case): every tensor must then end inside it. Rules (the format's, as safetensors' Rust crate checks them in
 * SafeTensors::read_metadata / validate): N at most MPM_ST_MAX_HEADER_BYTES, the header a JSON object whose
 * members other than "__metadata__" are tensors {"dtype", "shape", "data_offsets": [begin, end]}, a known dtype,
 * end >= begin, end - begin = the shape's product x bits / 8, the tensors' ranges contiguous from 0 without holes
 * or overlaps, no name twice. A packed weight's values (tests/test_gguf.c worked example): GPTQ qweight int32
 * [in/8, out] -> in x out values; AWQ qweight int32 [in, out/8] -> the same; compressed-tensors weight_packed int32
 * [out, in/8] -> out x in; bitsandbytes' uint8 [n/2, 1] beside a quant_state -> n. pointer names the header in
 * errors ("/model/safetensors_headers/0"). Errors: MP_EINVAL naming the byte or the tensor and the rule, MP_EPARSE
 * (not JSON), MP_ENOMEM. Borrowed: buf. Owned by the caller: *st (start from a zeroed one), freed with mpm_st_free.
 */
mp_status mpm_st_read(const uint8_t *buf, size_t len, uint64_t file_bytes, uint32_t shard, const char *pointer,
		      mpm_st *st, mp_error *err);

/* The same for a header given as a JSON object already (the API's safetensors_headers items): no length prefix. */
mp_status mpm_st_read_json(const cJSON *header, uint32_t shard, const char *pointer, mpm_st *st, mp_error *err);

/* Frees and zeroes. NULL-safe. */
void mpm_st_free(mpm_st *st);

/*
 * The shards model.safetensors.index.json names (its weight_map's values, each once, in first-seen order) into
 * names[0..cap), returning how many there are; -1 when the document is not an index ({"weight_map": {...}} whose
 * values are strings), -2 when it names more than cap shards. Borrowed: index; names point into it.
 */
int mpm_st_index_shards(const cJSON *index, const char **names, size_t cap);

#endif /* MPM_SAFETENSORS_H */
