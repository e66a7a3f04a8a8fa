/*
 * calib_stub.c: the calibration ABI for builds without CUDA (make CUDA=0, or no nvcc). Every GPU entry
 * point answers MP_ENOTBUILTIN so the API can say 501 "not built in".
 */
#include <string.h>

#include "calib.h"

bool mp_calib_built_in(void)
{
	return false;
}

mp_status mp_calib_gpu_probe(mp_calib_gpu_info *info, mp_error *err)
{
	memset(info, 0, sizeof(*info));
	return mp_fail(err, MP_ENOTBUILTIN, "", "GPU calibration is not built in (this build has no CUDA kernels)");
}
