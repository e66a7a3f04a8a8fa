/*
 * formats.c: weight and KV-cache formats by name, with the lists every error gives (codec.h holds the sets).
 */
#include <string.h>

#include "codec.h"

mp_status mpc_kv_dtype(const char *name, const char *field, mp_dtype *out, mp_error *err)
{
	/* vLLM's kv_cache_dtype "fp8" is fp8_e4m3 (its default fp8 KV format); both names are accepted */
	mp_dtype kv = strcmp(name, "fp8") == 0 ? MP_DTYPE_FP8_E4M3 : mp_dtype_from_name(name);

	if (kv == MP_DTYPE_INVALID || !(MPC_KV_DTYPES & MPC_DT(kv)))
		return mp_fail(err, MP_EINVAL, field,
			       "kv_cache_dtype must be one of: fp32, bf16, fp16, fp8 (= fp8_e4m3), fp8_e4m3, fp8_e5m2, "
			       "q8_0, q4_0");
	*out = kv;
	return MP_OK;
}

mp_status mpc_weight_dtype(const char *name, const char *field, mp_dtype *out, mp_error *err)
{
	mp_dtype dt = mp_dtype_from_name(name);
	char list[256];

	if (dt != MP_DTYPE_INVALID && (MPC_WEIGHT_DTYPES & MPC_DT(dt))) {
		*out = dt;
		return MP_OK;
	}
	mp_dtype_list(MPC_WEIGHT_DTYPES, list, sizeof(list));
	return mp_fail(err, MP_EINVAL, field, "weight_dtype must be one of: %s", list);
}
