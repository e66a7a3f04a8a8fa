/*
 * tensor_names.h: the names a checkpoint gives its tensors, and the check of a file's tensors against the model's
 * inventory (planner mp_model_tensors). One table maps llama.cpp's GGUF names ("blk.{i}.attn_q.weight") to
 * transformers' state_dict names ("model.layers.{i}.self_attn.q_proj.weight") and to the inventory's rows ("q_proj");
 * its source is llama.cpp 0c1e5709 gguf-py/gguf/tensor_mapping.py (TensorNameMap) and constants.py
 * (MODEL_TENSOR names). No files, no allocation beyond the caller's structs.
 */
#ifndef MPM_TENSOR_NAMES_H
#define MPM_TENSOR_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "../planner/memplan.h"

typedef enum mpm_naming {
	MPM_NAMING_GGUF = 0,	/* llama.cpp: token_embd.weight, blk.0.attn_q.weight */
	MPM_NAMING_HF = 1,	/* transformers' state_dict: model.layers.0.self_attn.q_proj.weight */
} mpm_naming;

/* One tensor of a file, as the readers give it to the match. */
typedef struct mpm_named_tensor {
	const char *name;	/* borrowed */
	uint64_t values;	/* logical values (a packed int4 qweight counts its unpacked values) */
	uint64_t bytes;		/* bytes in the file */
	bool aux;		/* a quantisation scale, zero-point or index beside a weight (counted in bytes only) */
} mpm_named_tensor;

/* The row of the table a name falls under: the inventory's name (one or more, '+'-joined for a fused tensor:
 * "mlp.gate_proj+mlp.up_proj"), the GGUF and transformers templates ({i} the layer, {e} the expert). NULL when the
 * name is none the table knows. */
typedef struct mpm_name_row {
	const char *inventory;
	const char *gguf;
	const char *hf;
} mpm_name_row;
const mpm_name_row *mpm_tensor_name_row(mpm_naming naming, const char *name);

#define MPM_MATCH_MAX_ROWS 64
#define MPM_MATCH_MAX_UNMAPPED 8

typedef struct mpm_match_row {
	char inventory[64];		/* the inventory's name(s) */
	char file_name[96];		/* the file's name template */
	char hf_name[96];		/* transformers' template */
	uint64_t file_tensors;		/* tensors of the file under this row */
	uint64_t file_values;		/* their values */
	uint64_t file_bytes;		/* their bytes (aux tensors included) */
	uint64_t expected_values;	/* the inventory's rows x cols x count over the names */
	int cls;			/* the format class of the inventory's entry (mp_tensor_class), -1 none */
	bool ok;
} mpm_match_row;

typedef struct mpm_match {
	size_t n;
	mpm_match_row row[MPM_MATCH_MAX_ROWS];
	size_t unmapped;				/* file tensors no row names */
	char unmapped_names[MPM_MATCH_MAX_UNMAPPED][96];
	size_t missing;					/* inventory rows (with values) the file does not hold */
	char missing_names[MPM_MATCH_MAX_UNMAPPED][256];
	size_t mismatched;				/* rows whose values differ */
	uint64_t file_bytes;				/* every tensor's bytes */
	uint64_t aux_bytes;				/* of which quantisation scales, zero-points, indices */
	/* the file's bytes by the format class of the inventory entry each tensor falls under (a scale, zero-point
	 * or index in its weight's class), and those of no class (a layout's own table such as rope_freqs, tensors
	 * no row names) */
	uint64_t class_bytes[MP_TC_COUNT];
	uint64_t other_bytes;
	bool ok;					/* every tensor named, none missing, every row equal */
} mpm_match;

/*
 * Matches a file's tensors against the inventory of m (mp_model_tensors in the given layout, parameters and
 * buffers): each file tensor falls under a row of the name table, values summed per row, and each row's sum must
 * equal the inventory's rows x cols x count summed over its names. Rows of the inventory without values (buffers
 * the runtime makes, such as transformers' inv_freq under the PyTorch layout) are not required. Errors: those of
 * mp_model_tensors. Worked example (tests/test_gguf.c): the llama reference GGUF against its mp_model -> 12 rows,
 * all equal.
 */
mp_status mpm_match_tensors(const mpm_named_tensor *t, size_t n, mpm_naming naming, const mp_model *m,
			    mp_weight_layout layout, mpm_match *out, mp_error *err);

/* One line per mismatched, unmapped or missing row into buf ("blk.{i}.attn_q.weight: 2 tensors, 8,192 values; the
 * inventory's q_proj: 16,384"), for a 422 or a warning. */
void mpm_match_describe(const mpm_match *mt, char *buf, size_t len);

#endif /* MPM_TENSOR_NAMES_H */
