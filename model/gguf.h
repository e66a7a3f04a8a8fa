/*
 * gguf.h: the reader of GGUF headers (llama.cpp's model files, versions 2 and 3). From the header bytes alone, never
 * the weights: the metadata (key-value pairs) and the tensor infos (name, shape, ggml type, offset) with each
 * tensor's exact bytes, and the mapping of a file's architecture to the planner's mp_model. Bytes in, plain structs
 * out: no files, no HTTP. Every rule of ggml/src/gguf.cpp's gguf_init_from_file_impl (llama.cpp 0c1e5709) is
 * checked, and a violation is an MP_EINVAL naming the byte offset or the tensor and the rule; nothing is read past
 * the buffer.
 */
#ifndef MPM_GGUF_H
#define MPM_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "../planner/memplan.h"

/* The largest header the reader takes: a file's metadata (its tokenizer's vocabulary and merges, a few MB for a
 * 150k-token vocabulary) and tensor infos. A header that goes on past it is refused. */
#define MPM_GGUF_MAX_HEADER_BYTES (UINT64_C(64) << 20)
/* The most tensors and key-value pairs one file may declare (a DeepSeek-V3 GGUF has 1,025 tensors and about 50 keys). */
#define MPM_GGUF_MAX_TENSORS 65536
#define MPM_GGUF_MAX_KV 4096 /* keys are checked for repeats pairwise: 8M comparisons at most */
/* GGML_MAX_NAME: a tensor name is shorter than 64 bytes (gguf.cpp refuses longer ones). */
#define MPM_GGUF_NAME_MAX 64
/* Arrays nest (an array of arrays) at most this deep. */
#define MPM_GGUF_MAX_DEPTH 8
/* Integer arrays of at most this many elements keep their values (per-layer head counts, feed-forward widths,
 * sliding-window patterns); longer ones (the vocabulary's token types) keep their count only. */
#define MPM_GGUF_KEEP_VALUES 1024
/* The most files of one split model (split.count). */
#define MPM_GGUF_MAX_SPLITS 256

/* GGUF metadata value types (gguf.h enum gguf_type). */
typedef enum mpm_gguf_vtype {
	MPM_GGUF_UINT8 = 0,
	MPM_GGUF_INT8 = 1,
	MPM_GGUF_UINT16 = 2,
	MPM_GGUF_INT16 = 3,
	MPM_GGUF_UINT32 = 4,
	MPM_GGUF_INT32 = 5,
	MPM_GGUF_FLOAT32 = 6,
	MPM_GGUF_BOOL = 7,
	MPM_GGUF_STRING = 8,
	MPM_GGUF_ARRAY = 9,
	MPM_GGUF_UINT64 = 10,
	MPM_GGUF_INT64 = 11,
	MPM_GGUF_FLOAT64 = 12,
	MPM_GGUF_VTYPE_COUNT
} mpm_gguf_vtype;

/* One key-value pair. Scalars in the member of their kind; a string (NUL-terminated copy; an embedded NUL ends it)
 * in str; an array has type MPM_GGUF_ARRAY, its element type and count, and for integer, float and bool elements
 * with count <= MPM_GGUF_KEEP_VALUES their values in `values` (as doubles: exact up to 2^53). */
typedef struct mpm_gguf_kv {
	char *key;
	uint32_t type;
	uint32_t elem_type;	/* arrays */
	uint64_t count;		/* arrays: elements; scalars 1 */
	bool is_int;		/* an integer scalar (any width, any sign): u (when >= 0) and i hold it */
	uint64_t u;
	int64_t i;
	double f;		/* float, and every numeric scalar as a double */
	bool b;
	char *str;
	double *values;		/* kept array elements (count of them), NULL otherwise */
} mpm_gguf_kv;

typedef struct mpm_gguf_tensor {
	char name[MPM_GGUF_NAME_MAX];
	uint32_t n_dims;
	uint64_t ne[4];		/* values per dimension, innermost first (ne[0] is a row); 1 beyond n_dims */
	uint32_t type;		/* mp_ggml_type */
	uint64_t offset;	/* from the start of its file's data section */
	uint64_t file_offset;	/* from the start of its file: the header's length + offset */
	uint64_t bytes;		/* ggml_nbytes */
	uint32_t split;		/* which file of a split model holds it (0-based; 0 without a split) */
} mpm_gguf_tensor;

typedef struct mpm_gguf {
	uint32_t version;		/* 2 or 3 */
	uint64_t alignment;		/* general.alignment, default 32 */
	uint64_t data_offset;		/* the header's length: where the tensor data starts, padded to the alignment */
	uint64_t data_bytes;		/* the data section: the last tensor's offset + its bytes padded to the alignment */
	uint64_t tensor_bytes;		/* the sum of every tensor's bytes (all files of a split model) */
	size_t n_kv;
	mpm_gguf_kv *kv;
	size_t n_tensors;
	mpm_gguf_tensor *tensors;
	char architecture[64];		/* general.architecture */
	uint32_t split_no, split_count;	/* split.no (0-based) and split.count; 0 and 0 without a split */
	uint32_t splits_read;		/* files merged into this one (mpm_gguf_merge), 1 for a single file */
} mpm_gguf;

/*
 * Reads the header in buf[0..len). file_bytes is the whole file's size when known (0: not known, the API's case):
 * then each tensor's data must end inside it ("offset past the end"). pointer names the header in errors
 * ("/model/gguf_header"). On a header cut short, *truncated (may be NULL) is set and MP_EINVAL says at which byte
 * and what was being read: a file reader may then read more and try again. Errors: MP_EINVAL (every rule of the
 * format: magic, version 2 or 3, counts and lengths within the buffer and the limits above, key types, unique
 * keys and names, dimensions <= 4 and non-negative, known ggml types, rows a multiple of the block, the
 * general.alignment a power of two, offsets the running sum of padded sizes as gguf.cpp requires, element
 * counts and byte sizes within 63 bits), MP_ENOMEM. Borrowed: buf. Owned by the caller: *out, freed with
 * mpm_gguf_free (also after an error). Worked example (tests/test_gguf.c): tests/ref/llamacpp's llama-q8_0
 * header -> 2,640 bytes of header, 19 tensors.
 */
mp_status mpm_gguf_read(const uint8_t *buf, size_t len, uint64_t file_bytes, const char *pointer, mpm_gguf *out,
			bool *truncated, mp_error *err);

/* Frees what mpm_gguf_read allocated and zeroes *g. NULL-safe; idempotent. */
void mpm_gguf_free(mpm_gguf *g);

/* The pair named key, NULL when absent. Borrowed. */
const mpm_gguf_kv *mpm_gguf_find(const mpm_gguf *g, const char *key);
/* The tensor named name, NULL when absent. Borrowed. */
const mpm_gguf_tensor *mpm_gguf_tensor_named(const mpm_gguf *g, const char *name);

/*
 * Appends the tensors of another file of the same split model to into (part's are moved: part is freed). The part
 * must have the same architecture and split.count and a split.no not read yet. Errors: MP_EINVAL naming the rule,
 * MP_ENOMEM. Worked example: the three files of a -00001-of-00003.gguf set -> one tensor list, split 0..2.
 */
mp_status mpm_gguf_merge(mpm_gguf *into, mpm_gguf *part, const char *pointer, mp_error *err);

/* Whether a file name follows llama.cpp's split naming (llama_split_path: "<prefix>-%05d-of-%05d.gguf"), and its
 * number and count (1-based). */
bool mpm_gguf_split_name(const char *path, uint32_t *no, uint32_t *count);

/*
 * The planner's description of the file's model, from its metadata and its tensors (what the architecture's
 * keys leave out, the tensors say: biases, q/k norms, a tied output, shared experts, the vocabulary from
 * token_embd's shape). Architectures: see mpm_gguf_architectures(). Errors: MP_EUNSUPPORTED (an architecture it
 * does not map, naming the supported ones), MP_EINVAL (a required key missing or of the wrong kind, naming it
 * under pointer "/model/gguf_header/<key>"). Worked example (tests/test_gguf.c): the llama reference -> 2
 * layers, hidden 64, 4 heads, 2 KV heads, vocab 256.
 */
mp_status mpm_gguf_to_model(const mpm_gguf *g, const char *pointer, mp_model *m, mp_error *err);

/* The architectures mpm_gguf_to_model maps, comma-separated. Static storage. */
const char *mpm_gguf_architectures(void);

#endif /* MPM_GGUF_H */
