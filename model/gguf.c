/*
 * gguf.c: the GGUF header reader (gguf.h). A bounded cursor over caller bytes; every read checks what is left, so a
 * header cut short or lying about its lengths ends in an MP_EINVAL naming the byte, never a read past the buffer.
 * The rules are those of llama.cpp 0c1e5709 ggml/src/gguf.cpp (gguf_init_from_file_impl), in its order; the layout
 * is ggml's docs/gguf.md. Must not read tensor data, open files or allocate without checking.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"

typedef struct cursor {
	const uint8_t *buf;
	size_t len;
	size_t pos;
	const char *pointer;
	bool *truncated;
	mp_error *err;
} cursor;

static mp_status cut_short(cursor *c, uint64_t need, const char *what)
{
	if (c->truncated)
		*c->truncated = true;
	return mp_fail(c->err, MP_EINVAL, c->pointer,
		       "byte %zu: the header ends inside %s (%llu more bytes needed, %zu left); a GGUF header runs from the "
		       "magic through the tensor infos", c->pos, what, (unsigned long long)need,
		       c->len - c->pos);
}

static mp_status take(cursor *c, uint64_t n, const char *what, const uint8_t **out)
{
	if (n > c->len - c->pos)
		return cut_short(c, n, what);
	if (c->pos + n > MPM_GGUF_MAX_HEADER_BYTES)
		return mp_fail(c->err, MP_EINVAL, c->pointer,
			       "byte %zu: the header goes on past %llu bytes, the most memplan reads (a GGUF header is its "
			       "metadata and tensor infos: a few MB)", c->pos,
			       (unsigned long long)MPM_GGUF_MAX_HEADER_BYTES);
	*out = c->buf + c->pos;
	c->pos += (size_t)n;
	return MP_OK;
}

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static mp_status rd_u32(cursor *c, const char *what, uint32_t *out)
{
	const uint8_t *p;
	mp_status st = take(c, 4, what, &p);
	if (st == MP_OK)
		*out = (uint32_t)le(p, 4);
	return st;
}

static mp_status rd_u64(cursor *c, const char *what, uint64_t *out)
{
	const uint8_t *p;
	mp_status st = take(c, 8, what, &p);
	if (st == MP_OK)
		*out = le(p, 8);
	return st;
}

/* A GGUF string: u64 length + bytes (no NUL). *out borrows the buffer. */
static mp_status rd_str(cursor *c, const char *what, const uint8_t **out, uint64_t *n)
{
	mp_status st = rd_u64(c, what, n);
	if (st != MP_OK)
		return st;
	return take(c, *n, what, out);
}

static char *dup_str(const uint8_t *p, uint64_t n)
{
	char *s = malloc((size_t)n + 1);
	if (s == NULL)
		return NULL;
	memcpy(s, p, (size_t)n);
	s[n] = '\0';
	return s;
}

static const char *const vtype_names[MPM_GGUF_VTYPE_COUNT] = {
	"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64",
	"float64",
};

static unsigned scalar_size(uint32_t t)
{
	switch (t) {
	case MPM_GGUF_UINT8: case MPM_GGUF_INT8: case MPM_GGUF_BOOL: return 1;
	case MPM_GGUF_UINT16: case MPM_GGUF_INT16: return 2;
	case MPM_GGUF_UINT32: case MPM_GGUF_INT32: case MPM_GGUF_FLOAT32: return 4;
	case MPM_GGUF_UINT64: case MPM_GGUF_INT64: case MPM_GGUF_FLOAT64: return 8;
	default: return 0;
	}
}

/* A numeric scalar of type t at p as a double, and as integers when it is one. */
static void decode_scalar(uint32_t t, const uint8_t *p, mpm_gguf_kv *kv)
{
	unsigned n = scalar_size(t);
	uint64_t raw = le(p, n);

	kv->is_int = true;
	switch (t) {
	case MPM_GGUF_INT8: kv->i = (int8_t)raw; break;
	case MPM_GGUF_INT16: kv->i = (int16_t)raw; break;
	case MPM_GGUF_INT32: kv->i = (int32_t)raw; break;
	case MPM_GGUF_INT64: kv->i = (int64_t)raw; break;
	case MPM_GGUF_FLOAT32: {
		uint32_t b = (uint32_t)raw;
		float f;
		memcpy(&f, &b, sizeof(f));
		kv->f = f;
		kv->is_int = false;
		return;
	}
	case MPM_GGUF_FLOAT64: {
		double d;
		memcpy(&d, &raw, sizeof(d));
		kv->f = d;
		kv->is_int = false;
		return;
	}
	case MPM_GGUF_BOOL:
		kv->b = raw != 0;
		kv->is_int = false;
		kv->f = kv->b;
		return;
	default: /* unsigned */
		kv->u = raw;
		kv->i = raw > INT64_MAX ? -1 : (int64_t)raw;
		kv->f = (double)raw;
		return;
	}
	kv->u = kv->i < 0 ? 0 : (uint64_t)kv->i;
	kv->f = (double)kv->i;
}

static mp_status skip_array(cursor *c, uint32_t elem, uint64_t count, unsigned depth, const char *key,
			    mpm_gguf_kv *keep);

/* One value of type t (not an array head: arrays are read by skip_array). */
static mp_status read_value(cursor *c, uint32_t t, unsigned depth, const char *key, mpm_gguf_kv *kv)
{
	const uint8_t *p;
	uint64_t n;
	mp_status st;

	if (t == MPM_GGUF_STRING) {
		st = rd_str(c, "a string value", &p, &n);
		if (st == MP_OK && kv != NULL) {
			kv->str = dup_str(p, n);
			if (kv->str == NULL)
				return mp_fail(c->err, MP_ENOMEM, c->pointer, "out of memory reading key '%s'", key);
		}
		return st;
	}
	if (t == MPM_GGUF_ARRAY) {
		uint32_t elem;
		size_t at = c->pos;
		if ((st = rd_u32(c, "an array's element type", &elem)) != MP_OK ||
		    (st = rd_u64(c, "an array's length", &n)) != MP_OK)
			return st;
		(void)at;
		return skip_array(c, elem, n, depth + 1, key, kv);
	}
	if (scalar_size(t) == 0)
		return mp_fail(c->err, MP_EINVAL, c->pointer,
			       "byte %zu: key '%s' has value type %u; GGUF value types are 0 to 12 (uint8 .. float64)", c->pos,
			       key, t);
	st = take(c, scalar_size(t), "a value", &p);
	if (st == MP_OK && kv != NULL)
		decode_scalar(t, p, kv);
	return st;
}

/* count elements of type elem; keep (may be NULL) gets numeric values when there are few of them. */
static mp_status skip_array(cursor *c, uint32_t elem, uint64_t count, unsigned depth, const char *key,
			    mpm_gguf_kv *keep)
{
	mp_status st;

	if (depth > MPM_GGUF_MAX_DEPTH)
		return mp_fail(c->err, MP_EINVAL, c->pointer, "byte %zu: key '%s' nests arrays more than %d deep", c->pos,
			       key, MPM_GGUF_MAX_DEPTH);
	if (elem >= MPM_GGUF_VTYPE_COUNT)
		return mp_fail(c->err, MP_EINVAL, c->pointer,
			       "byte %zu: key '%s' is an array of value type %u; GGUF value types are 0 to 12", c->pos, key,
			       elem);
	if (keep != NULL) {
		keep->elem_type = elem;
		keep->count = count;
	}
	if (scalar_size(elem) != 0) {
		const uint8_t *p;
		uint64_t bytes;
		size_t at = c->pos;
		if (!mp_mul_u64(count, scalar_size(elem), &bytes))
			return mp_fail(c->err, MP_EINVAL, c->pointer,
				       "byte %zu: key '%s' declares %llu elements, more than any header holds", c->pos, key,
				       (unsigned long long)count);
		if ((st = take(c, bytes, "an array's elements", &p)) != MP_OK)
			return st;
		(void)at;
		if (keep != NULL && count <= MPM_GGUF_KEEP_VALUES && count > 0) {
			keep->values = malloc((size_t)count * sizeof(double));
			if (keep->values == NULL)
				return mp_fail(c->err, MP_ENOMEM, c->pointer, "out of memory reading key '%s'", key);
			for (uint64_t k = 0; k < count; k++) {
				mpm_gguf_kv one = { 0 };
				decode_scalar(elem, p + k * scalar_size(elem), &one);
				keep->values[k] = one.is_int ? (double)one.i : one.f;
				if (one.is_int && elem != MPM_GGUF_INT8 && elem != MPM_GGUF_INT16 && elem != MPM_GGUF_INT32 &&
				    elem != MPM_GGUF_INT64)
					keep->values[k] = (double)one.u;
			}
		}
		return MP_OK;
	}
	/* strings and nested arrays: each element at least 8 bytes, so a count beyond what is left is a lie */
	if (count > MPM_GGUF_MAX_HEADER_BYTES / 8)
		return mp_fail(c->err, MP_EINVAL, c->pointer,
			       "byte %zu: key '%s' declares %llu elements, more than any header holds", c->pos, key,
			       (unsigned long long)count);
	for (uint64_t k = 0; k < count; k++)
		if ((st = read_value(c, elem, depth, key, NULL)) != MP_OK)
			return st;
	return MP_OK;
}

void mpm_gguf_free(mpm_gguf *g)
{
	if (g == NULL)
		return;
	for (size_t i = 0; i < g->n_kv; i++) {
		free(g->kv[i].key);
		free(g->kv[i].str);
		free(g->kv[i].values);
	}
	free(g->kv);
	free(g->tensors);
	memset(g, 0, sizeof(*g));
}

const mpm_gguf_kv *mpm_gguf_find(const mpm_gguf *g, const char *key)
{
	for (size_t i = 0; i < g->n_kv; i++)
		if (strcmp(g->kv[i].key, key) == 0)
			return &g->kv[i];
	return NULL;
}

const mpm_gguf_tensor *mpm_gguf_tensor_named(const mpm_gguf *g, const char *name)
{
	for (size_t i = 0; i < g->n_tensors; i++)
		if (strcmp(g->tensors[i].name, name) == 0)
			return &g->tensors[i];
	return NULL;
}

static int cmp_names(const void *a, const void *b)
{
	const mpm_gguf_tensor *const *x = a, *const *y = b;
	return strcmp((*x)->name, (*y)->name);
}

/* gguf.cpp refuses a duplicate tensor name; sorting pointers finds one in n log n. */
static mp_status check_unique_names(cursor *c, mpm_gguf *g)
{
	mpm_gguf_tensor **v;
	mp_status st = MP_OK;

	if (g->n_tensors < 2)
		return MP_OK;
	v = malloc(g->n_tensors * sizeof(*v));
	if (v == NULL)
		return mp_fail(c->err, MP_ENOMEM, c->pointer, "out of memory checking tensor names");
	for (size_t i = 0; i < g->n_tensors; i++)
		v[i] = &g->tensors[i];
	qsort(v, g->n_tensors, sizeof(*v), cmp_names);
	for (size_t i = 1; i < g->n_tensors; i++)
		if (strcmp(v[i - 1]->name, v[i]->name) == 0) {
			st = mp_fail(c->err, MP_EINVAL, c->pointer, "tensor '%s': the name appears twice (tensors %zu and %zu)",
				     v[i]->name, (size_t)(v[i - 1] - g->tensors), (size_t)(v[i] - g->tensors));
			break;
		}
	free(v);
	return st;
}

static mp_status read_kvs(cursor *c, mpm_gguf *g, uint64_t n_kv)
{
	mp_status st;

	for (uint64_t k = 0; k < n_kv; k++) {
		const uint8_t *p;
		uint64_t n;
		uint32_t type;
		size_t at = c->pos;
		mpm_gguf_kv *kv = &g->kv[g->n_kv];

		if ((st = rd_str(c, "a key", &p, &n)) != MP_OK)
			return st;
		if (n == 0)
			return mp_fail(c->err, MP_EINVAL, c->pointer, "byte %zu: key %llu is empty (keys are non-empty ASCII)",
				       at, (unsigned long long)k);
		if (n > 65535)
			return mp_fail(c->err, MP_EINVAL, c->pointer,
				       "byte %zu: key %llu is %llu bytes long; GGUF keys are at most 65,535", at,
				       (unsigned long long)k, (unsigned long long)n);
		kv->key = dup_str(p, n);
		if (kv->key == NULL)
			return mp_fail(c->err, MP_ENOMEM, c->pointer, "out of memory reading the metadata");
		g->n_kv++;
		if (strlen(kv->key) != n)
			return mp_fail(c->err, MP_EINVAL, c->pointer, "byte %zu: key %llu holds a NUL byte", at,
				       (unsigned long long)k);
		for (size_t j = 0; j + 1 < g->n_kv; j++)
			if (strcmp(g->kv[j].key, kv->key) == 0)
				return mp_fail(c->err, MP_EINVAL, c->pointer, "byte %zu: key '%s' appears twice", at,
					       kv->key);
		if ((st = rd_u32(c, "a value type", &type)) != MP_OK)
			return st;
		if (type >= MPM_GGUF_VTYPE_COUNT)
			return mp_fail(c->err, MP_EINVAL, c->pointer,
				       "byte %zu: key '%s' has value type %u; GGUF value types are 0 to 12 (uint8 .. float64)",
				       c->pos - 4, kv->key, type);
		kv->type = type;
		kv->count = 1;
		if (type == MPM_GGUF_ARRAY) {
			uint32_t elem;
			if ((st = rd_u32(c, "an array's element type", &elem)) != MP_OK ||
			    (st = rd_u64(c, "an array's length", &n)) != MP_OK)
				return st;
			if (elem == MPM_GGUF_ARRAY)
				return mp_fail(c->err, MP_EINVAL, c->pointer,
					       "byte %zu: key '%s' is an array of arrays, which gguf.cpp refuses", c->pos - 12,
					       kv->key);
			st = skip_array(c, elem, n, 1, kv->key, kv);
		} else {
			st = read_value(c, type, 0, kv->key, kv);
		}
		if (st != MP_OK)
			return st;
	}
	return MP_OK;
}

static mp_status read_tensor_info(cursor *c, mpm_gguf *g, uint64_t k)
{
	mpm_gguf_tensor *t = &g->tensors[g->n_tensors];
	const uint8_t *p;
	uint64_t n, elems = 1;
	size_t at = c->pos;
	mp_status st;
	mp_ggml_traits tr;

	if ((st = rd_str(c, "a tensor name", &p, &n)) != MP_OK)
		return st;
	if (n >= MPM_GGUF_NAME_MAX)
		return mp_fail(c->err, MP_EINVAL, c->pointer,
			       "byte %zu: tensor %llu's name is %llu bytes long; ggml names are shorter than %d (GGML_MAX_NAME)",
			       at, (unsigned long long)k, (unsigned long long)n, MPM_GGUF_NAME_MAX);
	memcpy(t->name, p, (size_t)n);
	t->name[n] = '\0';
	if (strlen(t->name) != n)
		return mp_fail(c->err, MP_EINVAL, c->pointer, "byte %zu: tensor %llu's name holds a NUL byte", at,
			       (unsigned long long)k);
	if ((st = rd_u32(c, "a tensor's number of dimensions", &t->n_dims)) != MP_OK)
		return st;
	if (t->n_dims > 4)
		return mp_fail(c->err, MP_EINVAL, c->pointer, "tensor '%s' (byte %zu): %u dimensions; ggml tensors have at most 4",
			       t->name, at, t->n_dims);
	for (uint32_t d = 0; d < 4; d++) {
		t->ne[d] = 1;
		if (d < t->n_dims && (st = rd_u64(c, "a tensor's dimensions", &t->ne[d])) != MP_OK)
			return st;
		if (t->ne[d] > (uint64_t)INT64_MAX)
			return mp_fail(c->err, MP_EINVAL, c->pointer, "tensor '%s': dimension %u has %llu values, negative as "
				       "ggml's int64 reads it", t->name, d, (unsigned long long)t->ne[d]);
		if (elems != 0 && t->ne[d] > 1 && (uint64_t)INT64_MAX / t->ne[d] < elems)
			return mp_fail(c->err, MP_EINVAL, c->pointer,
				       "tensor '%s': %llu x %llu x %llu x %llu values overflow ggml's int64 element count",
				       t->name, (unsigned long long)t->ne[0], (unsigned long long)t->ne[1],
				       (unsigned long long)t->ne[2], (unsigned long long)t->ne[3]);
		elems *= t->ne[d];
	}
	if ((st = rd_u32(c, "a tensor's type", &t->type)) != MP_OK)
		return st;
	tr = mp_ggml_traits_of(t->type);
	if (tr.block_values == 0)
		return mp_fail(c->err, MP_EINVAL, c->pointer,
			       "tensor '%s': ggml type %u is not one llama.cpp 0c1e5709 knows (ids 0-3, 6-30, 34, 35, 39-42; "
			       "4, 5, 31-33 and 36-38 were removed)", t->name, t->type);
	if (t->ne[0] % tr.block_values != 0)
		return mp_fail(c->err, MP_EINVAL, c->pointer,
			       "tensor '%s': a row of %llu values is not a multiple of %s's block of %u", t->name,
			       (unsigned long long)t->ne[0], tr.name, tr.block_values);
	if (!mp_ggml_tensor_bytes(t->type, t->ne, 4, &t->bytes) || t->bytes > (uint64_t)INT64_MAX)
		return mp_fail(c->err, MP_EINVAL, c->pointer, "tensor '%s': its size in bytes overflows 63 bits", t->name);
	if ((st = rd_u64(c, "a tensor's offset", &t->offset)) != MP_OK)
		return st;
	g->n_tensors++;
	return MP_OK;
}

static mp_status read_header(cursor *c, mpm_gguf *g, uint64_t file_bytes)
{
	const uint8_t *p;
	uint64_t n_tensors, n_kv, expect = 0;
	const mpm_gguf_kv *kv;
	mp_status st;

	if ((st = take(c, 4, "the magic", &p)) != MP_OK)
		return st;
	if (memcmp(p, "GGUF", 4) != 0)
		return mp_fail(c->err, MP_EINVAL, c->pointer,
			       "byte 0: the magic is %02x %02x %02x %02x, not \"GGUF\" (47 47 55 46): not a GGUF file", p[0],
			       p[1], p[2], p[3]);
	if ((st = rd_u32(c, "the version", &g->version)) != MP_OK)
		return st;
	if ((g->version & 0xFFFFu) == 0 && g->version != 0)
		return mp_fail(c->err, MP_EINVAL, c->pointer,
			       "byte 4: version %u reads byte-swapped: a big-endian GGUF, which memplan does not read "
			       "(llama.cpp refuses it on a little-endian host)", g->version);
	if (g->version != 2 && g->version != 3)
		return mp_fail(c->err, MP_EINVAL, c->pointer,
			       "byte 4: GGUF version %u; memplan reads versions 2 and 3 (version 1 is no longer supported "
			       "by llama.cpp)", g->version);
	if ((st = rd_u64(c, "the tensor count", &n_tensors)) != MP_OK || (st = rd_u64(c, "the key-value count", &n_kv)) != MP_OK)
		return st;
	if (n_tensors > MPM_GGUF_MAX_TENSORS)
		return mp_fail(c->err, MP_EINVAL, c->pointer,
			       "byte 8: %llu tensors declared; memplan reads at most %d (each tensor info is at least 24 bytes)",
			       (unsigned long long)n_tensors, MPM_GGUF_MAX_TENSORS);
	if (n_kv > MPM_GGUF_MAX_KV)
		return mp_fail(c->err, MP_EINVAL, c->pointer, "byte 16: %llu key-value pairs declared; memplan reads at most %d",
			       (unsigned long long)n_kv, MPM_GGUF_MAX_KV);
	g->kv = calloc(n_kv ? (size_t)n_kv : 1, sizeof(*g->kv));
	g->tensors = calloc(n_tensors ? (size_t)n_tensors : 1, sizeof(*g->tensors));
	if (g->kv == NULL || g->tensors == NULL)
		return mp_fail(c->err, MP_ENOMEM, c->pointer, "out of memory reading the header");
	if ((st = read_kvs(c, g, n_kv)) != MP_OK)
		return st;

	g->alignment = 32; /* GGUF_DEFAULT_ALIGNMENT */
	if ((kv = mpm_gguf_find(g, "general.alignment")) != NULL) {
		if (kv->type != MPM_GGUF_UINT32)
			return mp_fail(c->err, MP_EINVAL, c->pointer, "general.alignment is a %s; gguf.cpp requires uint32",
				       kv->type < MPM_GGUF_VTYPE_COUNT ? vtype_names[kv->type] : "?");
		if (kv->u == 0 || (kv->u & (kv->u - 1)) != 0)
			return mp_fail(c->err, MP_EINVAL, c->pointer, "general.alignment %llu is not a power of 2",
				       (unsigned long long)kv->u);
		g->alignment = kv->u;
	}
	if ((kv = mpm_gguf_find(g, "general.architecture")) != NULL && kv->type == MPM_GGUF_STRING)
		snprintf(g->architecture, sizeof(g->architecture), "%s", kv->str);
	if ((kv = mpm_gguf_find(g, "split.count")) != NULL && kv->is_int) {
		const mpm_gguf_kv *no = mpm_gguf_find(g, "split.no");
		if (kv->u == 0 || kv->u > MPM_GGUF_MAX_SPLITS || no == NULL || !no->is_int || no->u >= kv->u)
			return mp_fail(c->err, MP_EINVAL, c->pointer,
				       "split.count %llu with split.no %s: a split model has 1 to %d files, each numbered "
				       "below the count", (unsigned long long)kv->u, no && no->is_int ? "given" : "missing",
				       MPM_GGUF_MAX_SPLITS);
		g->split_count = (uint32_t)kv->u;
		g->split_no = (uint32_t)no->u;
	}

	for (uint64_t k = 0; k < n_tensors; k++)
		if ((st = read_tensor_info(c, g, k)) != MP_OK)
			return st;
	if ((st = check_unique_names(c, g)) != MP_OK)
		return st;

	/* the data section starts at the next multiple of the alignment (gguf.cpp: GGML_PAD(tell, alignment)) */
	g->data_offset = ((uint64_t)c->pos + g->alignment - 1) / g->alignment * g->alignment;
	if (n_tensors == 0)
		g->data_offset = c->pos;
	for (size_t i = 0; i < g->n_tensors; i++) {
		const mpm_gguf_tensor *t = &g->tensors[i];
		uint64_t padded;
		if (t->offset != expect)
			return mp_fail(c->err, MP_EINVAL, c->pointer,
				       "tensor '%s': offset %llu, expected %llu (gguf.cpp: each tensor starts where the one "
				       "before it ends, padded to the alignment of %llu)", t->name,
				       (unsigned long long)t->offset, (unsigned long long)expect,
				       (unsigned long long)g->alignment);
		if (t->bytes > UINT64_MAX - (g->alignment - 1) ||
		    !mp_add_u64(expect, (t->bytes + g->alignment - 1) / g->alignment * g->alignment, &padded) ||
		    padded > (uint64_t)INT64_MAX)
			return mp_fail(c->err, MP_EINVAL, c->pointer, "tensor '%s': the data section's size overflows 63 bits",
				       t->name);
		if (file_bytes != 0 && (g->data_offset > file_bytes || t->offset + t->bytes > file_bytes - g->data_offset))
			return mp_fail(c->err, MP_EINVAL, c->pointer,
				       "tensor '%s': its data (offset %llu + %llu bytes after the header's %llu) ends past the "
				       "end of the file (%llu bytes)", t->name, (unsigned long long)t->offset,
				       (unsigned long long)t->bytes, (unsigned long long)g->data_offset,
				       (unsigned long long)file_bytes);
		g->tensors[i].file_offset = g->data_offset + t->offset;
		expect = padded;
		g->tensor_bytes += t->bytes; /* below 2^63 x 65536 tensors: the padded sum bounds it */
	}
	g->data_bytes = expect;
	g->splits_read = 1;
	return MP_OK;
}

mp_status mpm_gguf_read(const uint8_t *buf, size_t len, uint64_t file_bytes, const char *pointer, mpm_gguf *out,
			bool *truncated, mp_error *err)
{
	cursor c = { buf, len, 0, pointer ? pointer : "", truncated, err };

	memset(out, 0, sizeof(*out));
	if (truncated)
		*truncated = false;
	if (buf == NULL)
		c.len = 0;
	return read_header(&c, out, file_bytes);
}

mp_status mpm_gguf_merge(mpm_gguf *into, mpm_gguf *part, const char *pointer, mp_error *err)
{
	mpm_gguf_tensor *t;
	mp_status st = MP_OK;

	if (into->split_count == 0 || part->split_count != into->split_count)
		st = mp_fail(err, MP_EINVAL, pointer, "a split part must have the split.count of the first file (%u, this one %u)",
			     into->split_count, part->split_count);
	else if (part->architecture[0] && strcmp(into->architecture, part->architecture) != 0) /* llama-gguf-split
		 * writes the metadata into the first file only: the others hold split.* and their tensors */
		st = mp_fail(err, MP_EINVAL, pointer, "split part %u is of architecture '%s', the first file '%s'",
			     part->split_no + 1, part->architecture, into->architecture);
	else if (into->n_tensors + part->n_tensors > MPM_GGUF_MAX_TENSORS)
		st = mp_fail(err, MP_EINVAL, pointer, "the split model has more than %d tensors", MPM_GGUF_MAX_TENSORS);
	if (st == MP_OK) {
		for (size_t i = 0; i < into->n_tensors; i++)
			if (into->tensors[i].split == part->split_no) {
				st = mp_fail(err, MP_EINVAL, pointer, "split part %u is given twice", part->split_no + 1);
				break;
			}
	}
	if (st == MP_OK) {
		for (size_t i = 0; i < part->n_tensors && st == MP_OK; i++)
			if (mpm_gguf_tensor_named(into, part->tensors[i].name))
				st = mp_fail(err, MP_EINVAL, pointer, "tensor '%s' is in two split parts", part->tensors[i].name);
	}
	if (st == MP_OK) {
		t = realloc(into->tensors, (into->n_tensors + part->n_tensors + 1) * sizeof(*t));
		if (t == NULL) {
			st = mp_fail(err, MP_ENOMEM, pointer, "out of memory merging split parts");
		} else {
			into->tensors = t;
			for (size_t i = 0; i < part->n_tensors; i++) {
				t[into->n_tensors] = part->tensors[i];
				t[into->n_tensors].split = part->split_no;
				into->n_tensors++;
			}
			into->tensor_bytes += part->tensor_bytes;
			into->splits_read++;
		}
	}
	mpm_gguf_free(part);
	return st;
}

bool mpm_gguf_split_name(const char *path, uint32_t *no, uint32_t *count)
{
	size_t n = path ? strlen(path) : 0;
	unsigned a, b;
	char tail[8];

	/* "-%05d-of-%05d.gguf" is 20 characters at the end */
	if (n < 20)
		return false;
	if (sscanf(path + n - 20, "-%5u-of-%5u%7s", &a, &b, tail) != 3 || strcmp(tail, ".gguf") != 0 || a == 0 || b == 0 ||
	    a > b || path[n - 20] != '-' || path[n - 14] != '-')
		return false;
	if (no)
		*no = a;
	if (count)
		*count = b;
	return true;
}
