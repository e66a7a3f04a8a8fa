/*
 * mp_ggml.h: ggml's tensor types as llama.cpp stores them in GGUF files and in its buffers. One table (ggml.c
 * type_traits: each type's name, values per block and bytes per block) that the GGUF reader (model/gguf.c) and
 * llama.cpp's buffer arithmetic (mp_llamacpp.h) share; nothing else in memplan knows a ggml block size.
 * Part of the planner's public contract; include "memplan.h", not this file.
 *
 * Source: llama.cpp 0c1e5709 (vendored by llama-cpp-python 0.3.36, PyPI), ggml/include/ggml.h enum ggml_type and
 * ggml/src/ggml.c type_traits[] (blck_size = QK*, type_size = sizeof(block_*) from ggml/src/ggml-common.h).
 * tools/groundtruth/llamacpp/ggml_types.c prints the table from that build's own ggml_blck_size() and
 * ggml_type_size(); tests/ref/llamacpp/ggml_types.tsv keeps its output and tests/test_gguf.c checks this table
 * against it, id by id.
 */
#ifndef MP_GGML_H
#define MP_GGML_H

#include "mp_core.h"

/* ggml_type ids (ggml.h). Ids 4, 5, 31-33 and 36-38 were removed from the format: a file naming one is refused. */
typedef enum mp_ggml_type {
	MP_GGML_F32 = 0,
	MP_GGML_F16 = 1,
	MP_GGML_Q4_0 = 2,
	MP_GGML_Q4_1 = 3,
	MP_GGML_Q5_0 = 6,
	MP_GGML_Q5_1 = 7,
	MP_GGML_Q8_0 = 8,
	MP_GGML_Q8_1 = 9,
	MP_GGML_Q2_K = 10,
	MP_GGML_Q3_K = 11,
	MP_GGML_Q4_K = 12,
	MP_GGML_Q5_K = 13,
	MP_GGML_Q6_K = 14,
	MP_GGML_Q8_K = 15,
	MP_GGML_IQ2_XXS = 16,
	MP_GGML_IQ2_XS = 17,
	MP_GGML_IQ3_XXS = 18,
	MP_GGML_IQ1_S = 19,
	MP_GGML_IQ4_NL = 20,
	MP_GGML_IQ3_S = 21,
	MP_GGML_IQ2_S = 22,
	MP_GGML_IQ4_XS = 23,
	MP_GGML_I8 = 24,
	MP_GGML_I16 = 25,
	MP_GGML_I32 = 26,
	MP_GGML_I64 = 27,
	MP_GGML_F64 = 28,
	MP_GGML_IQ1_M = 29,
	MP_GGML_BF16 = 30,
	MP_GGML_TQ1_0 = 34,
	MP_GGML_TQ2_0 = 35,
	MP_GGML_MXFP4 = 39,
	MP_GGML_NVFP4 = 40,
	MP_GGML_Q1_0 = 41,
	MP_GGML_Q2_0 = 42,
	MP_GGML_TYPE_COUNT = 43, /* GGML_TYPE_COUNT at 0c1e5709: ids at or above it are unknown */
} mp_ggml_type;

typedef struct mp_ggml_traits {
	const char *name;	/* ggml_type_name: "f32", "q4_K", ... (static) */
	uint32_t block_values;	/* ggml_blck_size: values per block (0: not a type) */
	uint32_t block_bytes;	/* ggml_type_size: bytes per block */
	bool quantized;		/* ggml_is_quantized */
} mp_ggml_traits;

/* The traits of type id t; {NULL, 0, 0, false} for a removed or unknown id (t >= MP_GGML_TYPE_COUNT too). */
mp_ggml_traits mp_ggml_traits_of(uint32_t t);
/* Whether t is a type a file may hold (known and not removed). */
bool mp_ggml_type_valid(uint32_t t);
/* The type named `name` as ggml names it, any case ("Q4_K", "q8_0", "F16"); MP_GGML_TYPE_COUNT when unknown. */
uint32_t mp_ggml_type_from_name(const char *name);

/*
 * ggml_row_size(type, n): bytes of n values of one row, n / block_values x block_bytes (ggml.c; n must be a
 * multiple of the block, as ggml asserts). False when n is not a multiple or on overflow. Worked example: q4_K,
 * 4096 values -> 16 blocks x 144 = 2,304 bytes.
 */
bool mp_ggml_row_bytes(uint32_t type, uint64_t n, uint64_t *out);

/*
 * ggml_nbytes of a tensor of type `type` with ne[0..n_dims-1] values (innermost first, as GGUF stores them): the
 * rows of ne[0] values times the product of the other dimensions. False when ne[0] is not a multiple of the block,
 * the type is not valid, or on overflow. Worked example: q6_K [4096, 128256] -> 128256 x 16 x 210 =
 * 430,940,160 bytes.
 */
bool mp_ggml_tensor_bytes(uint32_t type, const uint64_t *ne, uint32_t n_dims, uint64_t *out);

/* The mp_dtype that stores values as `type` does (F32 -> fp32, Q4_K -> q4_K, MXFP4 -> mxfp4, ...), for the plan's
 * weight formats; MP_DTYPE_INVALID for a ggml type memplan's formats do not name (q5_1, iq2_xs, ...). */
mp_dtype mp_ggml_to_dtype(uint32_t type);

/*
 * ggml's dynamic tensor allocator (ggml-alloc.c ggml_dyn_tallocr, llama.cpp 0c1e5709), one chunk: the offsets
 * ggml_gallocr gives a compute graph's tensors inside one backend's buffer, and the buffer's size (max_size, what
 * "<dev> compute buffer size" prints). A free list kept sorted by offset whose last block is unbounded; an
 * allocation takes the smallest free block before the last that holds it (the later of equal ones), else the start
 * of the last block; a freed range merges with the blocks it touches. Sizes are rounded up to `alignment` (the
 * buffer type's: 32 bytes for ggml's CPU buffers). Caller-owned, no allocation; `overflow` is set (and the state no
 * longer meaningful) when more than MP_GGML_MAX_FREE_BLOCKS blocks would be free at once (ggml asserts there) or a
 * size overflows. Worked example (tests/test_llamacpp.c test_dyn_alloc): alignment 32, allocate 100, 64, 1000; free
 * the 100 and the 1000; allocate 96 -> offset 0 (the first block, 128 bytes, fits), allocate 200 -> offset 192 (the
 * 32 left at 96 is too small: the merged tail after the 64 at 128); max_size 1216 (the 1000's end, 192 + 1024).
 */
#define MP_GGML_MAX_FREE_BLOCKS 256
typedef struct mp_ggml_dyn_alloc {
	uint64_t alignment;
	uint64_t offset[MP_GGML_MAX_FREE_BLOCKS], size[MP_GGML_MAX_FREE_BLOCKS]; /* free blocks by offset */
	uint32_t n_free;
	uint64_t max_size;	/* the highest end any allocation reached: the buffer's size */
	bool overflow;
} mp_ggml_dyn_alloc;

/* An empty allocator of the given alignment (a power of two, bytes). */
void mp_ggml_dyn_init(mp_ggml_dyn_alloc *a, uint64_t alignment);
/* The offset of `bytes` (rounded up to the alignment) placed as ggml_dyn_tallocr_alloc places it. */
uint64_t mp_ggml_dyn_take(mp_ggml_dyn_alloc *a, uint64_t bytes);
/* Returns the `bytes` at `offset` (as taken) to the free list, as ggml_dyn_tallocr_free_bytes does. */
void mp_ggml_dyn_give(mp_ggml_dyn_alloc *a, uint64_t offset, uint64_t bytes);

#endif /* MP_GGML_H */
