/*
 * hf_tensors.c: the readers' own tensors (modules no field of mp_model describes) into the model's inventory, and the
 * call that builds the rest of it once a config is read (mpm_from_hf, mpm_from_architecture).
 */
#include <string.h>

#include "hf_internal.h"

void hf_tensor(mp_model *m, uint8_t root, const char *path, const char *leaf, mp_tensor_kind kind, mp_tp_split split,
               mp_step_product step, bool vector, uint64_t rows, uint64_t cols, uint64_t count)
{
	mp_tensor_spec s = {.root = root, .path = path, .leaf = leaf, .kind = kind, .split = split, .step = step,
	                    .view = vector ? MP_VIEW_VECTOR : MP_VIEW_LINEAR, .rows = rows, .cols = cols, .count = count};

	mp_inventory_add(&m->inv, &s);
}

void hf_legacy(mp_model *m, const char *name, mp_tensor_class cls, uint64_t rows, uint64_t cols, uint64_t count,
               bool vector)
{
	static const mp_tensor_kind kinds[MP_TC_COUNT] = {
	    [MP_TC_EMBEDDINGS] = MP_TK_EMBEDDING, [MP_TC_ATTENTION] = MP_TK_ATTENTION, [MP_TC_MLP] = MP_TK_MLP,
	    [MP_TC_EXPERTS] = MP_TK_EXPERT,       [MP_TC_LM_HEAD] = MP_TK_LM_HEAD,     [MP_TC_NORMS] = MP_TK_NORM,
	    [MP_TC_RECURRENT] = MP_TK_RECURRENT,  [MP_TC_VISION] = MP_TK_VISION};
	bool per_layer = strncmp(m->model_type, "gemma", 5) == 0;
	mp_step_product step = per_layer && !vector && (cls == MP_TC_MLP || cls == MP_TC_ATTENTION || cls == MP_TC_EXPERTS)
	                           ? MP_STEP_EXTRA
	                           : MP_STEP_NONE;

	if (vector && rows > 1) {
		cols *= rows;
		rows = 1;
	}
	hf_tensor(m, MP_ROOT_DECODER, NULL, name, kinds[cls], MP_SPLIT_NONE, step, vector, rows, cols, count);
}

void hf_shape(mp_model *m, uint8_t root, const char *path, const char *leaf, mp_tensor_kind kind, unsigned flags,
              const uint64_t *dims, unsigned ndim, uint64_t count)
{
	mp_inventory_add_shape(&m->inv, root, path, leaf, kind, ndim <= 1 ? MP_VIEW_VECTOR : MP_VIEW_LINEAR, flags, dims,
	                       ndim, count);
}
