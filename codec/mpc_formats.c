/*
 * mpc_formats.c: weight and KV-cache formats by name, as engines and config files spell them (aliases, any case,
 * "auto"), with the lists every error gives (codec.h holds the sets).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "codec.h"

void mpc_kv_dtype_allowed(bool with_auto, char *out, size_t len)
{
	char list[256];

	mp_dtype_list(MPC_KV_DTYPES, list, sizeof(list));
	snprintf(out, len, "%s%s (" MP_DTYPE_ALIASES ")", with_auto ? "auto (the compute dtype), " : "", list);
}

void mpc_weight_dtype_allowed(bool with_auto, bool with_schemes, char *out, size_t len)
{
	char list[256];

	mp_dtype_list(MPC_WEIGHT_DTYPES, list, sizeof(list));
	snprintf(out, len, "%s%s%s (" MP_DTYPE_ALIASES ")", with_auto ? "auto (the config's quantization or dtype), " : "",
		 with_schemes ? "gptq, awq (int4 in that scheme), " : "", list);
}

/* "did you mean y? (got 'x'); " for a misspelt dtype of mask, or "" (into buf). */
static const char *near_hint(const char *name, unsigned mask, char *buf, size_t len)
{
	mp_dtype near = name ? mp_dtype_nearest(name, mask) : MP_DTYPE_INVALID;

	buf[0] = '\0';
	if (near != MP_DTYPE_INVALID)
		snprintf(buf, len, "did you mean %s? (got '%.24s'); ", mp_dtype_name(near), name);
	return buf;
}

mp_status mpc_kv_dtype_ex(const char *name, const char *field, mp_dtype *out, bool *is_auto, mp_error *err)
{
	/* vLLM's --kv-cache-dtype: "auto" is the model's dtype, "fp8" is fp8_e4m3 (its default fp8 KV format) */
	mp_dtype kv = mp_dtype_from_alias(name);
	char list[512], hint[96];

	if (is_auto)
		*is_auto = false;
	if (name && strcasecmp(name, "auto") == 0 && is_auto) {
		*is_auto = true;
		*out = MP_DTYPE_INVALID;
		return MP_OK;
	}
	if (kv != MP_DTYPE_INVALID && (MPC_KV_DTYPES & MPC_DT(kv))) {
		*out = kv;
		return MP_OK;
	}
	mpc_kv_dtype_allowed(is_auto != NULL, list, sizeof(list));
	return mp_fail(err, MP_EINVAL, field, "%skv_cache_dtype must be one of: %s",
		       near_hint(name, MPC_KV_DTYPES, hint, sizeof(hint)), list);
}

mp_status mpc_kv_dtype(const char *name, const char *field, mp_dtype *out, mp_error *err)
{
	return mpc_kv_dtype_ex(name, field, out, NULL, err);
}

mp_status mpc_weight_dtype_ex(const char *name, const char *field, mp_dtype *out, int *int4_scheme, bool *is_auto,
			      mp_error *err)
{
	mp_dtype dt = mp_dtype_from_alias(name);
	char list[512], hint[96];

	if (int4_scheme)
		*int4_scheme = -1;
	if (is_auto)
		*is_auto = false;
	if (name && is_auto && strcasecmp(name, "auto") == 0) {
		*is_auto = true;
		*out = MP_DTYPE_INVALID;
		return MP_OK;
	}
	/* the quantizers' names (vLLM --quantization gptq / awq): 4-bit integer weights in that scheme's layout */
	if (name && int4_scheme && (strcasecmp(name, "gptq") == 0 || strcasecmp(name, "awq") == 0)) {
		*int4_scheme = strcasecmp(name, "awq") == 0 ? MP_INT4_AWQ : MP_INT4_GPTQ;
		*out = MP_DTYPE_INT4;
		return MP_OK;
	}
	if (dt != MP_DTYPE_INVALID && (MPC_WEIGHT_DTYPES & MPC_DT(dt))) {
		*out = dt;
		return MP_OK;
	}
	mpc_weight_dtype_allowed(is_auto != NULL, int4_scheme != NULL, list, sizeof(list));
	return mp_fail(err, MP_EINVAL, field, "%sweight_dtype must be one of: %s",
		       near_hint(name, MPC_WEIGHT_DTYPES, hint, sizeof(hint)), list);
}

mp_status mpc_weight_dtype(const char *name, const char *field, mp_dtype *out, mp_error *err)
{
	return mpc_weight_dtype_ex(name, field, out, NULL, NULL, err);
}
