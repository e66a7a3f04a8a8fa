/*
 * calib_stub.c: the GPU half of the calibration ABI for builds without CUDA (make CUDA=0, or no nvcc).
 * Every GPU entry point answers MP_ENOTBUILTIN so the API can say 501 "not built in". The CPU path
 * (calib_cpu.c) is in every build.
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

mp_status mp_calib_gpu_run(const mp_calib_gpu_options *o, const mp_calib_ctl *ctl, mp_calib_gpu_results *r,
                           mp_error *err)
{
	(void)o;
	(void)ctl;
	memset(r, 0, sizeof(*r));
	return mp_fail(err, MP_ENOTBUILTIN, "/target",
	               "GPU calibration is not built in (this build has no CUDA kernels; rebuild with nvcc on PATH)");
}
