/*
 * safetensors.c: the safetensors header reader (safetensors.h). The length prefix is checked against the buffer
 * before cJSON sees a byte; every tensor's dtype, shape and range is checked as the format's own crate checks it
 * (safetensors 0.8 src/tensor.rs: InvalidOffset, TensorInvalidInfo, MetadataIncompleteBuffer); the quantisation
 * tensors are recognised by the names their writers give them (AutoGPTQ and AutoAWQ qlinear, vLLM's fp8 and
 * compressed-tensors loaders, bitsandbytes' QuantState.as_dict). Must not read tensor data.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "safetensors.h"

static const struct {
	const char *name;
	uint32_t bits;
} dtypes[MPM_ST_DTYPE_COUNT] = {
	[MPM_ST_BOOL] = { "BOOL", 8 },      [MPM_ST_U8] = { "U8", 8 },         [MPM_ST_I8] = { "I8", 8 },
	[MPM_ST_F8_E5M2] = { "F8_E5M2", 8 }, [MPM_ST_F8_E4M3] = { "F8_E4M3", 8 }, [MPM_ST_I16] = { "I16", 16 },
	[MPM_ST_U16] = { "U16", 16 },       [MPM_ST_F16] = { "F16", 16 },      [MPM_ST_BF16] = { "BF16", 16 },
	[MPM_ST_I32] = { "I32", 32 },       [MPM_ST_U32] = { "U32", 32 },      [MPM_ST_F32] = { "F32", 32 },
	[MPM_ST_F64] = { "F64", 64 },       [MPM_ST_I64] = { "I64", 64 },      [MPM_ST_U64] = { "U64", 64 },
	[MPM_ST_F4] = { "F4", 4 },          [MPM_ST_F8_E8M0] = { "F8_E8M0", 8 }, [MPM_ST_F6_E2M3] = { "F6_E2M3", 6 },
	[MPM_ST_F6_E3M2] = { "F6_E3M2", 6 }, [MPM_ST_F8_E4M3FNUZ] = { "F8_E4M3FNUZ", 8 },
	[MPM_ST_F8_E5M2FNUZ] = { "F8_E5M2FNUZ", 8 },
};

const char *mpm_st_dtype_name(uint32_t dt)
{
	return dt < MPM_ST_DTYPE_COUNT ? dtypes[dt].name : NULL;
}

uint32_t mpm_st_dtype_bits(uint32_t dt)
{
	return dt < MPM_ST_DTYPE_COUNT ? dtypes[dt].bits : 0;
}

void mpm_st_free(mpm_st *st)
{
	if (st == NULL)
		return;
	free(st->tensors);
	memset(st, 0, sizeof(*st));
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Which tensors are quantisation state, and how many logical values a packed weight holds. */
static void classify(mpm_st *st, mpm_st_tensor *t)
{
	static const char *const aux_suffix[] = {
		".qzeros", ".scales", ".g_idx", ".weight_scale", ".input_scale", ".weight_zero_point", ".weight_shape",
		".weight_g_idx", ".weight_scale_inv", ".absmax", ".quant_map", ".nested_absmax", ".nested_quant_map",
		".SCB", ".weight_format", ".k_scale", ".v_scale",
	};
	uint64_t prod = 1;

	for (uint32_t d = 0; d < t->n_dims; d++)
		prod *= t->shape[d]; /* checked against the byte range by the caller */
	t->values = prod;
	for (size_t i = 0; i < sizeof(aux_suffix) / sizeof(aux_suffix[0]); i++)
		if (ends_with(t->name, aux_suffix[i]))
			t->aux = true;
	if (strstr(t->name, ".quant_state.") != NULL) {
		t->aux = true;
		snprintf(st->quant_method, sizeof(st->quant_method), "bitsandbytes");
	}
	if (ends_with(t->name, ".qweight") && t->n_dims == 2 && t->dtype == MPM_ST_I32) {
		t->values = prod * 8; /* eight int4 values per int32 (AutoGPTQ [in/8, out], AutoAWQ [in, out/8]) */
		if (st->quant_method[0] == '\0')
			snprintf(st->quant_method, sizeof(st->quant_method), "gptq/awq");
	}
	if (ends_with(t->name, ".weight_packed") && t->dtype == MPM_ST_I32) {
		t->values = prod * 8;
		snprintf(st->quant_method, sizeof(st->quant_method), "compressed-tensors");
	}
	if ((ends_with(t->name, ".weight_scale") || ends_with(t->name, ".weight_scale_inv")) &&
	    st->quant_method[0] == '\0')
		snprintf(st->quant_method, sizeof(st->quant_method), "fp8");
	if (ends_with(t->name, ".g_idx"))
		snprintf(st->quant_method, sizeof(st->quant_method), "gptq");
}

static int cmp_begin(const void *a, const void *b)
{
	const mpm_st_tensor *x = a, *y = b;
	return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end < y->end ? -1 : x->end > y->end);
}

static int cmp_name(const void *a, const void *b)
{
	const mpm_st_tensor *const *x = a, *const *y = b;
	return strcmp((*x)->name, (*y)->name);
}

static bool whole(const cJSON *n, uint64_t *out)
{
	if (!cJSON_IsNumber(n) || n->valuedouble < 0 || n->valuedouble > 9007199254740992.0 ||
	    floor(n->valuedouble) != n->valuedouble)
		return false;
	*out = (uint64_t)n->valuedouble;
	return true;
}

mp_status mpm_st_read_json(const cJSON *header, uint32_t shard, const char *pointer, mpm_st *st, mp_error *err)
{
	size_t base = st->n_tensors, count = 0;
	const cJSON *it;
	mpm_st_tensor *grown, **byname;
	mp_status rc = MP_OK;

	if (!cJSON_IsObject(header))
		return mp_fail(err, MP_EINVAL, pointer, "a safetensors header is a JSON object of tensors");
	cJSON_ArrayForEach(it, header)
		count++;
	if (st->n_tensors + count > MPM_ST_MAX_TENSORS)
		return mp_fail(err, MP_EINVAL, pointer, "more than %d tensors", MPM_ST_MAX_TENSORS);
	grown = realloc(st->tensors, (st->n_tensors + count + 1) * sizeof(*grown));
	if (grown == NULL)
		return mp_fail(err, MP_ENOMEM, pointer, "out of memory reading the header");
	st->tensors = grown;
	cJSON_ArrayForEach(it, header)
	{
		const cJSON *dt, *shape, *offs, *d;
		mpm_st_tensor *t = &st->tensors[st->n_tensors];
		uint64_t bits, prod = 1, want;
		int k = 0;

		if (strcmp(it->string, "__metadata__") == 0) {
			if (!cJSON_IsObject(it))
				return mp_fail(err, MP_EINVAL, pointer, "__metadata__ is an object of strings");
			continue;
		}
		memset(t, 0, sizeof(*t));
		if (strlen(it->string) >= MPM_ST_NAME_MAX)
			return mp_fail(err, MP_EINVAL, pointer, "tensor '%.64s...': a name longer than %d bytes", it->string,
				       MPM_ST_NAME_MAX - 1);
		snprintf(t->name, sizeof(t->name), "%s", it->string);
		t->shard = shard;
		dt = cJSON_GetObjectItemCaseSensitive(it, "dtype");
		shape = cJSON_GetObjectItemCaseSensitive(it, "shape");
		offs = cJSON_GetObjectItemCaseSensitive(it, "data_offsets");
		if (!cJSON_IsObject(it) || !cJSON_IsString(dt) || !cJSON_IsArray(shape) || !cJSON_IsArray(offs) ||
		    cJSON_GetArraySize(offs) != 2)
			return mp_fail(err, MP_EINVAL, pointer,
				       "tensor '%s': each tensor is {\"dtype\": \"BF16\", \"shape\": [...], \"data_offsets\": "
				       "[begin, end]}", t->name);
		t->dtype = MPM_ST_DTYPE_COUNT;
		for (uint32_t i = 0; i < MPM_ST_DTYPE_COUNT; i++)
			if (strcmp(dtypes[i].name, dt->valuestring) == 0)
				t->dtype = i;
		if (t->dtype == MPM_ST_DTYPE_COUNT)
			return mp_fail(err, MP_EINVAL, pointer,
				       "tensor '%s': dtype '%.32s' is not a safetensors dtype (BOOL, U8, I8, F8_E5M2, F8_E4M3, "
				       "I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64, F4, F8_E8M0, F6_E2M3, F6_E3M2)",
				       t->name, dt->valuestring);
		if (cJSON_GetArraySize(shape) > MPM_ST_MAX_DIMS)
			return mp_fail(err, MP_EINVAL, pointer, "tensor '%s': more than %d dimensions", t->name,
				       MPM_ST_MAX_DIMS);
		cJSON_ArrayForEach(d, shape)
		{
			if (!whole(d, &t->shape[k]))
				return mp_fail(err, MP_EINVAL, pointer, "tensor '%s': shape[%d] is not a whole number", t->name,
					       k);
			if (!mp_mul_u64(prod, t->shape[k], &prod))
				return mp_fail(err, MP_EINVAL, pointer, "tensor '%s': its shape's values overflow 64 bits",
					       t->name);
			k++;
		}
		t->n_dims = (uint32_t)k;
		if (!whole(cJSON_GetArrayItem(offs, 0), &t->begin) || !whole(cJSON_GetArrayItem(offs, 1), &t->end))
			return mp_fail(err, MP_EINVAL, pointer, "tensor '%s': data_offsets are whole numbers below 2^53",
				       t->name);
		if (t->end < t->begin)
			return mp_fail(err, MP_EINVAL, pointer, "tensor '%s': data_offsets [%llu, %llu] end before they begin",
				       t->name, (unsigned long long)t->begin, (unsigned long long)t->end);
		bits = dtypes[t->dtype].bits;
		if (!mp_mul_u64(prod, bits, &want))
			return mp_fail(err, MP_EINVAL, pointer, "tensor '%s': its size overflows", t->name);
		if (want % 8 != 0 || want / 8 != t->end - t->begin)
			return mp_fail(err, MP_EINVAL, pointer,
				       "tensor '%s': %llu values of %s take %llu bits, but data_offsets span %llu bytes "
				       "(the format requires they match)", t->name, (unsigned long long)prod,
				       dtypes[t->dtype].name, (unsigned long long)want, (unsigned long long)(t->end - t->begin));
		t->bytes = t->end - t->begin;
		classify(st, t);
		st->n_tensors++;
	}
	/* the ranges tile the data from 0 (SafeTensors::validate: InvalidOffset) */
	if (st->n_tensors > base) {
		mpm_st_tensor *v = malloc((st->n_tensors - base) * sizeof(*v));
		uint64_t at = 0;
		if (v == NULL)
			return mp_fail(err, MP_ENOMEM, pointer, "out of memory");
		memcpy(v, st->tensors + base, (st->n_tensors - base) * sizeof(*v));
		qsort(v, st->n_tensors - base, sizeof(*v), cmp_begin);
		for (size_t i = 0; i < st->n_tensors - base && rc == MP_OK; i++) {
			if (v[i].begin != at)
				rc = mp_fail(err, MP_EINVAL, pointer,
					     "tensor '%s': its data begins at %llu, but the tensors before it end at %llu (the "
					     "format allows no holes or overlaps)", v[i].name, (unsigned long long)v[i].begin,
					     (unsigned long long)at);
			at = v[i].end;
		}
		free(v);
		if (rc != MP_OK)
			return rc;
	}
	/* no name twice, across every shard read so far */
	byname = malloc((st->n_tensors + 1) * sizeof(*byname));
	if (byname == NULL)
		return mp_fail(err, MP_ENOMEM, pointer, "out of memory");
	for (size_t i = 0; i < st->n_tensors; i++)
		byname[i] = &st->tensors[i];
	qsort(byname, st->n_tensors, sizeof(*byname), cmp_name);
	for (size_t i = 1; i < st->n_tensors && rc == MP_OK; i++)
		if (strcmp(byname[i - 1]->name, byname[i]->name) == 0)
			rc = mp_fail(err, MP_EINVAL, pointer, "tensor '%s' appears twice (shards %u and %u)", byname[i]->name,
				     byname[i - 1]->shard, byname[i]->shard);
	free(byname);
	if (rc != MP_OK)
		return rc;
	for (size_t i = base; i < st->n_tensors; i++) {
		st->tensor_bytes += st->tensors[i].bytes;
		if (st->tensors[i].aux)
			st->aux_bytes += st->tensors[i].bytes;
	}
	st->shards++;
	return MP_OK;
}

mp_status mpm_st_read(const uint8_t *buf, size_t len, uint64_t file_bytes, uint32_t shard, const char *pointer,
		      mpm_st *st, mp_error *err)
{
	uint64_t n = 0;
	cJSON *doc;
	mp_status rc;

	if (buf == NULL || len < 8)
		return mp_fail(err, MP_EINVAL, pointer,
			       "byte 0: a safetensors file begins with its header's length, 8 bytes little-endian (%zu given)",
			       buf ? len : 0);
	for (int i = 7; i >= 0; i--)
		n = n << 8 | buf[i];
	if (n > MPM_ST_MAX_HEADER_BYTES)
		return mp_fail(err, MP_EINVAL, pointer,
			       "byte 0: the header is %llu bytes long; the format allows at most 100,000,000",
			       (unsigned long long)n);
	if (n < 2 || n > len - 8)
		return mp_fail(err, MP_EINVAL, pointer,
			       "byte 8: the header is %llu bytes long but %zu follow the length (a header cut short, or "
			       "not a safetensors file)", (unsigned long long)n, len - 8);
	if (buf[8] != '{')
		return mp_fail(err, MP_EINVAL, pointer, "byte 8: the header is a JSON object and starts with '{'");
	doc = cJSON_ParseWithLength((const char *)buf + 8, (size_t)n);
	if (doc == NULL)
		return mp_fail(err, MP_EPARSE, pointer, "bytes 8 to %llu: the header is not valid JSON",
			       (unsigned long long)(8 + n));
	rc = mpm_st_read_json(doc, shard, pointer, st, err);
	cJSON_Delete(doc);
	if (rc != MP_OK)
		return rc;
	st->header_bytes += 8 + n;
	if (file_bytes != 0) {
		uint64_t data = 0;
		for (size_t i = 0; i < st->n_tensors; i++)
			if (st->tensors[i].shard == shard && st->tensors[i].end > data)
				data = st->tensors[i].end;
		if (8 + n + data > file_bytes)
			return mp_fail(err, MP_EINVAL, pointer,
				       "the tensors end at byte %llu, past the end of the file (%llu bytes)",
				       (unsigned long long)(8 + n + data), (unsigned long long)file_bytes);
	}
	return MP_OK;
}

int mpm_st_index_shards(const cJSON *index, const char **names, size_t cap)
{
	const cJSON *map = cJSON_GetObjectItemCaseSensitive(index, "weight_map"), *it;
	size_t n = 0;

	if (!cJSON_IsObject(map))
		return -1;
	cJSON_ArrayForEach(it, map)
	{
		bool seen = false;
		if (!cJSON_IsString(it))
			return -1;
		for (size_t i = 0; i < n && !seen; i++)
			seen = strcmp(names[i], it->valuestring) == 0;
		if (seen)
			continue;
		if (n == cap)
			return -2;
		names[n++] = it->valuestring;
	}
	return (int)n;
}
