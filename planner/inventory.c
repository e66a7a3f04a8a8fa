/*
 * inventory.c: the tensor inventory's entries (adding, reading, naming) and what is derived from it alone: the
 * parameter count by component and active per token. Pure: no allocation, every product checked. The builders that
 * fill an inventory from a model's description are in decoder.c and vision.c; the weight bytes per format in
 * weights.c; the step's matrix products in step.c.
 */
#include <stdio.h>
#include <string.h>

#include "memplan.h"

/* mp_model_used_bytes and the copies on a request's path walk these: keep one tensor 64 bytes (flags sits in the
 * padding after view) */
_Static_assert(sizeof(void *) != 8 || sizeof(mp_tensor) == 64, "mp_tensor grew past 64 bytes");

const char *mp_tensor_kind_name(mp_tensor_kind k)
{
	static const char *const names[MP_TK_COUNT] = {"embedding", "attention", "mlp",       "expert",    "shared_expert",
	                                                "norm",      "vision",    "projector", "recurrent", "lm_head"};

	return (unsigned)k < MP_TK_COUNT ? names[k] : "invalid";
}

mp_tensor_class mp_tensor_kind_class(mp_tensor_kind k)
{
	static const mp_tensor_class cls[MP_TK_COUNT] = {
	    [MP_TK_EMBEDDING] = MP_TC_EMBEDDINGS, [MP_TK_ATTENTION] = MP_TC_ATTENTION,
	    [MP_TK_MLP] = MP_TC_MLP,              [MP_TK_EXPERT] = MP_TC_EXPERTS,
	    [MP_TK_SHARED_EXPERT] = MP_TC_EXPERTS, [MP_TK_NORM] = MP_TC_NORMS,
	    [MP_TK_VISION] = MP_TC_VISION,        [MP_TK_PROJECTOR] = MP_TC_VISION,
	    [MP_TK_RECURRENT] = MP_TC_RECURRENT,  [MP_TK_LM_HEAD] = MP_TC_LM_HEAD};

	return (unsigned)k < MP_TK_COUNT ? cls[k] : MP_TC_NORMS;
}

const char *mp_step_product_name(mp_step_product p)
{
	static const char *const names[MP_STEP_COUNT] = {
	    [MP_STEP_NONE] = "none",
	    [MP_STEP_QKV] = "qkv",
	    [MP_STEP_Q] = "q",
	    [MP_STEP_Q_A] = "q_a",
	    [MP_STEP_Q_B] = "q_b",
	    [MP_STEP_KV_A] = "kv_a",
	    [MP_STEP_KV_B] = "kv_b",
	    [MP_STEP_INDEXER_Q] = "indexer_q",
	    [MP_STEP_INDEXER_K] = "indexer_k_w",
	    [MP_STEP_O] = "o_proj",
	    [MP_STEP_MIXER_IN] = "mixer_in_proj",
	    [MP_STEP_MIXER_X_DT] = "mixer_x_dt_proj",
	    [MP_STEP_MIXER_GATES] = "mixer_gates_b",
	    [MP_STEP_MIXER_OUT] = "mixer_out_proj",
	    [MP_STEP_MLP_GATE_UP] = "mlp_gate_up",
	    [MP_STEP_MLP_UP] = "mlp_up",
	    [MP_STEP_MLP_DOWN] = "mlp_down",
	    [MP_STEP_ROUTER] = "router",
	    [MP_STEP_EXPERT_GATE_UP] = "experts_gate_up",
	    [MP_STEP_EXPERT_UP] = "experts_up",
	    [MP_STEP_EXPERT_DOWN] = "experts_down",
	    [MP_STEP_SHARED_GATE_UP] = "shared_gate_up",
	    [MP_STEP_SHARED_UP] = "shared_up",
	    [MP_STEP_SHARED_DOWN] = "shared_down",
	    [MP_STEP_EXTRA] = "extra_matrices",
	    [MP_STEP_LM_HEAD] = "lm_head",
	};

	return (unsigned)p < MP_STEP_COUNT && names[p] ? names[p] : "none";
}

uint64_t mp_tensor_rows(const mp_tensor *t)
{
	switch (t->view) {
	case MP_VIEW_VECTOR:
	case MP_VIEW_EXPERTS_VECTOR:
		return 1;
	case MP_VIEW_T:
		return t->dims[1];
	case MP_VIEW_EXPERTS:
		return t->dims[1];
	case MP_VIEW_EXPERTS_T:
		return t->dims[2];
	case MP_VIEW_EXPERTS_FLAT:
		return t->dims[0] / mp_tensor_copies(t);
	case MP_VIEW_EXPERTS_FLAT_T:
		return t->dims[1];
	default:
		return t->ndim ? t->dims[0] : 1;
	}
}

/* The product of dims [from, ndim), 1 for none; the builders keep every tensor's values below 2^64. */
static uint64_t dims_product(const mp_tensor *t, unsigned from)
{
	uint64_t p = 1;

	for (unsigned i = from; i < t->ndim; i++)
		p *= t->dims[i];
	return p;
}

uint64_t mp_tensor_cols(const mp_tensor *t)
{
	switch (t->view) {
	case MP_VIEW_VECTOR:
		return dims_product(t, 0);
	case MP_VIEW_T:
		return t->dims[0];
	case MP_VIEW_EXPERTS:
		return t->dims[2];
	case MP_VIEW_EXPERTS_T:
	case MP_VIEW_EXPERTS_VECTOR:
		return t->dims[1];
	case MP_VIEW_EXPERTS_FLAT_T:
		return t->dims[0] / mp_tensor_copies(t);
	default:
		return dims_product(t, 1);
	}
}

uint64_t mp_tensor_copies(const mp_tensor *t)
{
	if (t->view == MP_VIEW_EXPERTS_FLAT || t->view == MP_VIEW_EXPERTS_FLAT_T)
		return t->dims[MP_TENSOR_MAX_DIMS - 1] ? t->dims[MP_TENSOR_MAX_DIMS - 1] : 1;
	return t->view == MP_VIEW_EXPERTS || t->view == MP_VIEW_EXPERTS_T || t->view == MP_VIEW_EXPERTS_VECTOR ? t->dims[0]
	                                                                                                      : 1;
}

bool mp_tensor_values(const mp_tensor *t, uint64_t *out)
{
	uint64_t p = 1;

	for (unsigned i = 0; i < t->ndim; i++)
		if (!mp_mul_u64(p, t->dims[i], &p))
			return false;
	*out = p;
	return true;
}

bool mp_tensor_is_vector(const mp_tensor *t)
{
	return t->view == MP_VIEW_VECTOR || t->view == MP_VIEW_EXPERTS_VECTOR;
}

mp_tensor_class mp_tensor_format_class(const mp_tensor *t)
{
	return mp_tensor_is_vector(t) ? MP_TC_NORMS : mp_tensor_kind_class((mp_tensor_kind)t->kind);
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

/* KV heads a rank holds: kv / tp, or one (replicated) when the ranks outnumber them (vLLM QKVParallelLinear). */
static uint64_t kv_share(uint64_t kv, uint64_t tp)
{
	return kv >= tp ? kv / tp : 1;
}

void mp_tensor_per_rank(const mp_tensor *t, uint64_t tp, uint64_t *rows, uint64_t *cols)
{
	uint64_t *along;

	*rows = mp_tensor_rows(t);
	*cols = mp_tensor_cols(t);
	if (tp <= 1)
		return;
	along = mp_tensor_is_vector(t) ? cols : rows; /* a vector splits its values */
	switch ((mp_tp_split)t->split) {
	case MP_SPLIT_NONE:
		return;
	case MP_SPLIT_ROWS:
		*along = ceil_div(*along, tp);
		return;
	case MP_SPLIT_COLS:
		*cols = ceil_div(*cols, tp);
		return;
	case MP_SPLIT_KV_ROWS:
		if (t->kv_heads)
			*along = kv_share(t->kv_heads, tp) * (*along / t->kv_heads);
		return;
	case MP_SPLIT_QKV_ROWS:
		if (t->heads + 2 * (uint64_t)t->kv_heads) {
			uint64_t d = *along / (t->heads + 2 * (uint64_t)t->kv_heads);

			*along = (ceil_div(t->heads, tp) + 2 * kv_share(t->kv_heads, tp)) * d;
		}
		return;
	}
}

size_t mp_tensor_name(const mp_inventory *inv, const mp_tensor *t, char *buf, size_t len)
{
	const char *root = t->root < MP_INVENTORY_ROOTS && inv->roots[t->root] ? inv->roots[t->root] : "";
	int n;

	if (t->path && t->path[0])
		n = snprintf(buf, len, "%s%s.%s", root, t->path, t->leaf ? t->leaf : "");
	else
		n = snprintf(buf, len, "%s%s", root, t->leaf ? t->leaf : "");
	return n < 0 ? 0 : (size_t)n;
}

/* ----- building ------------------------------------------------------------------------------------------- */

void mp_inventory_init(mp_inventory *inv, const char *root)
{
	inv->n = 0;
	inv->n_own = 0;
	inv->names = NULL;
	inv->ext = NULL;
	inv->n_ext = 0;
	inv->built = false;
	inv->full = false;
	inv->too_wide = false;
	memset(inv->roots, 0, sizeof(inv->roots));
	inv->roots[0] = "";
	inv->roots[1] = root ? root : "";
}

uint8_t mp_inventory_root(mp_inventory *inv, uint8_t i, const char *root)
{
	if (i == 0 || i >= MP_INVENTORY_ROOTS)
		return 0;
	inv->roots[i] = root;
	return i;
}

static mp_tensor *next(mp_inventory *inv)
{
	mp_tensor *t;

	if (inv->n >= MP_MAX_TENSORS) {
		inv->full = true;
		return NULL;
	}
	t = &inv->t[inv->n++];
	memset(t, 0, sizeof(*t));
	return t;
}

/* v into a 32-bit field; a wider value marks the inventory (mp_inventory_finish refuses it). */
static uint32_t narrow(mp_inventory *inv, uint64_t v)
{
	if (v > UINT32_MAX) {
		inv->too_wide = true;
		return UINT32_MAX;
	}
	return (uint32_t)v;
}

void mp_inventory_add(mp_inventory *inv, const mp_tensor_spec *s)
{
	uint64_t rows = s->view == MP_VIEW_VECTOR || s->view == MP_VIEW_EXPERTS_VECTOR ? 1 : s->rows,
	         copies = s->copies ? s->copies : 1;
	mp_tensor *t;

	if (s->cols == 0 || rows == 0 || s->count == 0 || copies == 0)
		return;
	t = next(inv);
	if (t == NULL)
		return;
	t->path = s->path;
	t->leaf = s->leaf;
	t->root = s->root;
	t->kind = (uint8_t)s->kind;
	t->split = (uint8_t)s->split;
	t->step = (uint8_t)s->step;
	t->view = (uint8_t)s->view;
	t->flags = (uint16_t)s->flags;
	t->parts = (uint8_t)(s->parts ? s->parts : 1);
	t->count = narrow(inv, s->count);
	t->uses = narrow(inv, s->uses);
	t->heads = narrow(inv, s->heads);
	t->kv_heads = narrow(inv, s->kv_heads);
	switch (s->view) {
	case MP_VIEW_VECTOR: /* [cols], or [] (a scalar) */
		t->ndim = s->scalar ? 0 : 1;
		t->dims[0] = narrow(inv, s->cols);
		break;
	case MP_VIEW_EXPERTS_VECTOR:
		t->ndim = 2;
		t->dims[0] = narrow(inv, copies);
		t->dims[1] = narrow(inv, s->cols);
		break;
	case MP_VIEW_T:
		t->ndim = 2;
		t->dims[0] = narrow(inv, s->cols);
		t->dims[1] = narrow(inv, rows);
		break;
	case MP_VIEW_EXPERTS:
		t->ndim = 3;
		t->dims[0] = narrow(inv, copies);
		t->dims[1] = narrow(inv, rows);
		t->dims[2] = narrow(inv, s->cols);
		break;
	case MP_VIEW_EXPERTS_T:
		t->ndim = 3;
		t->dims[0] = narrow(inv, copies);
		t->dims[1] = narrow(inv, s->cols);
		t->dims[2] = narrow(inv, rows);
		break;
	case MP_VIEW_EXPERTS_FLAT:
	case MP_VIEW_EXPERTS_FLAT_T: {
		bool tr = s->view == MP_VIEW_EXPERTS_FLAT_T;
		uint64_t all;

		t->ndim = 2;
		t->dims[0] = narrow(inv, mp_mul_u64(copies, tr ? s->cols : rows, &all) ? all : UINT64_MAX);
		t->dims[1] = narrow(inv, tr ? rows : s->cols);
		t->dims[MP_TENSOR_MAX_DIMS - 1] = narrow(inv, copies);
		break;
	}
	default:
		if (s->conv) { /* a depthwise Conv1d: [channels, 1, kernel] */
			t->ndim = 3;
			t->dims[0] = narrow(inv, rows);
			t->dims[1] = 1;
			t->dims[2] = narrow(inv, s->cols);
		} else {
			t->ndim = 2;
			t->dims[0] = narrow(inv, rows);
			t->dims[1] = narrow(inv, s->cols);
		}
		break;
	}
}

void mp_inventory_add_shape(mp_inventory *inv, uint8_t root, const char *path, const char *leaf, mp_tensor_kind kind,
                            mp_tensor_view view, unsigned flags, const uint64_t *dims, unsigned ndim, uint64_t count)
{
	mp_tensor *t;

	if (count == 0 || ndim > MP_TENSOR_MAX_DIMS)
		return;
	for (unsigned i = 0; i < ndim; i++)
		if (dims[i] == 0)
			return;
	t = next(inv);
	if (t == NULL)
		return;
	t->root = root;
	t->path = path;
	t->leaf = leaf;
	t->kind = (uint8_t)kind;
	t->view = (uint8_t)(view == MP_VIEW_VECTOR ? MP_VIEW_VECTOR : MP_VIEW_LINEAR);
	t->flags = (uint16_t)flags;
	t->parts = 1;
	t->split = MP_SPLIT_NONE;
	t->step = MP_STEP_NONE;
	t->ndim = (uint8_t)ndim;
	for (unsigned i = 0; i < ndim; i++)
		t->dims[i] = narrow(inv, dims[i]);
	t->count = narrow(inv, count);
}

mp_status mp_inventory_finish(mp_inventory *inv, const char *base, mp_error *err)
{
	if (inv->full)
		return mp_fail(err, MP_EUNSUPPORTED, base && base[0] ? base : "/model",
		               "the model has more than %d distinct tensors (name and shape); memplan holds at most %d",
		               MP_MAX_TENSORS, MP_MAX_TENSORS);
	if (inv->too_wide)
		return mp_fail(err, MP_EOVERFLOW, base && base[0] ? base : "/model",
		               "a tensor of the model has a dimension of 2^32 or more: no model is that large; check the "
		               "config's sizes");
	for (size_t i = 0; i < mp_inventory_size(inv); i++) {
		const mp_tensor *t = mp_inventory_at(inv, i);
		uint64_t v;

		if (!mp_tensor_values(t, &v) || !mp_mul_u64(v, t->count, &v))
			return mp_fail(err, MP_EOVERFLOW, base && base[0] ? base : "/model",
			               "the model's tensor sizes overflow 64 bits: no model is that large; check the config's "
			               "sizes");
	}
	inv->built = true;
	return MP_OK;
}

/* ----- copying a model ------------------------------------------------------------------------------------- */

_Static_assert(offsetof(mp_model, inv) + sizeof(mp_inventory) == sizeof(mp_model),
               "the inventory is mp_model's last member (mp_model_copy stops after the tensors in use)");
_Static_assert(offsetof(mp_inventory, t) + sizeof(((mp_inventory *)0)->t) == sizeof(mp_inventory),
               "the tensors are the inventory's last member");

size_t mp_model_used_bytes(const mp_model *m)
{
	size_t n = m->inv.n <= MP_MAX_TENSORS ? m->inv.n : MP_MAX_TENSORS;

	return offsetof(mp_model, inv) + offsetof(mp_inventory, t) + n * sizeof(mp_tensor);
}

void mp_model_clear(mp_model *m)
{
	memset(m, 0, offsetof(mp_model, inv) + offsetof(mp_inventory, t));
}

void mp_model_copy(mp_model *dst, const mp_model *src)
{
	if (dst != src)
		memcpy(dst, src, mp_model_used_bytes(src));
}
