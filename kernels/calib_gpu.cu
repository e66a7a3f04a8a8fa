/*
 * calib_gpu.cu: the GPU calibration suites (CUDA C + cuBLASLt), built when nvcc is found. Measures GPU 0
 * and fills the plain structs of calib.h; it never stores anything and never talks JSON or HTTP. It is linked
 * into the helper executable memplan-gpu only (gpu_helper.c), never into memplan: mp_calib_cuda_probe and
 * mp_calib_cuda_run (calib_ipc.h) run in the helper's process, which memplan starts per probe or run.
 * Method (../.library METHOD.md habits, checked here in code): every output is poisoned (0xFF bytes: NaN)
 * before the warm-up and checked after the timed runs; inputs are hashed non-zero values, never zeros; each
 * figure is the best and the median of at least 10 runs timed with CUDA events after warm-up; every CUDA,
 * cuBLAS and cuBLASLt return code is checked, and the last error after each launch. All device memory,
 * handles and the context are released before mp_calib_cuda_run returns, whatever happened.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "calib_ipc.h"

#define GiB (UINT64_C(1) << 30)
#define MiB (UINT64_C(1) << 20)
#define THREADS 256 /* threads per block for the streaming kernels */
#define MAX_ALLOCS 32

/* ================================================================================================== */
/* Device helpers                                                                                      */
/* ================================================================================================== */

__device__ __forceinline__ uint32_t hash32(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return (uint32_t)x;
}

/* A value in [0.5, 1.5): never zero, never denormal. */
__device__ __forceinline__ float pos_value(uint64_t i, uint32_t seed)
{
	return 0.5f + (float)(hash32(i * 0x9E3779B97F4A7C15ULL + seed) >> 8) * (1.0f / 16777216.0f);
}

/* A value in [-1, 1) (matrix inputs). */
__device__ __forceinline__ float signed_value(uint64_t i, uint32_t seed)
{
	return -1.0f + (float)(hash32(i * 0x9E3779B97F4A7C15ULL + seed) >> 8) * (2.0f / 16777216.0f);
}

/* Loads that the compiler may neither merge nor drop: L2 only (.cg), 16 and 4 bytes. */
__device__ __forceinline__ float4 ld_cg_f4(const float4 *p)
{
	float4 v;

	asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];"
	             : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
	             : "l"(p));
	return v;
}

__device__ __forceinline__ uint32_t ld_cg_u32(const uint32_t *p)
{
	uint32_t v;

	asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p));
	return v;
}

/* Always a 16-byte load, even when the caller uses one component (intensity sweep). */
__device__ __forceinline__ float4 ld_nc_f4(const float4 *p)
{
	float4 v;

	asm volatile("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];"
	             : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
	             : "l"(p));
	return v;
}

__device__ __forceinline__ size_t gtid(void)
{
	return (size_t)blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ size_t gstride(void)
{
	return (size_t)gridDim.x * blockDim.x;
}

/* ----- fill and check --------------------------------------------------------------------------------- */

__global__ void k_fill_pos(float *a, size_t n, uint32_t seed)
{
	for (size_t i = gtid(); i < n; i += gstride())
		a[i] = pos_value(i, seed);
}

template <typename T> __device__ __forceinline__ T from_float(float f);
template <> __device__ __forceinline__ float from_float<float>(float f)
{
	return f;
}
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float f)
{
	return __float2bfloat16(f);
}
template <> __device__ __forceinline__ __half from_float<__half>(float f)
{
	return __float2half(f);
}
template <> __device__ __forceinline__ __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float f)
{
	return __nv_fp8_e4m3(f);
}

template <typename T> __device__ __forceinline__ double to_double(T v)
{
	return (double)(float)v;
}
template <> __device__ __forceinline__ double to_double<float>(float v)
{
	return (double)v;
}

template <typename T> __global__ void k_fill_signed(T *a, size_t n, uint32_t seed)
{
	for (size_t i = gtid(); i < n; i += gstride())
		a[i] = from_float<T>(signed_value(i, seed));
}

/* Counts into *bad the elements where dst differs (bitwise) from src. */
__global__ void k_check_copy(const float *dst, const float *src, size_t n, unsigned long long *bad)
{
	unsigned long long b = 0;

	for (size_t i = gtid(); i < n; i += gstride())
		b += __float_as_uint(dst[i]) != __float_as_uint(src[i]);
	if (b)
		atomicAdd(bad, b);
}

__device__ __forceinline__ float write_value(size_t i)
{
	return 1.0f + (float)(i & 1023);
}

__global__ void k_check_write(const float *dst, size_t n, unsigned long long *bad)
{
	unsigned long long b = 0;

	for (size_t i = gtid(); i < n; i += gstride())
		b += dst[i] != write_value(i);
	if (b)
		atomicAdd(bad, b);
}

#define TRIAD_S 3.0f

__global__ void k_check_triad(const float *a, const float *b, const float *c, size_t n, unsigned long long *bad)
{
	unsigned long long k = 0;

	for (size_t i = gtid(); i < n; i += gstride())
		k += __float_as_uint(a[i]) != __float_as_uint(__fmaf_rn(TRIAD_S, c[i], b[i]));
	if (k)
		atomicAdd(bad, k);
}

/* Counts elements that are not finite (still poisoned, or broken). */
__global__ void k_check_finite(const float *a, size_t n, unsigned long long *bad)
{
	unsigned long long b = 0;

	for (size_t i = gtid(); i < n; i += gstride())
		b += !isfinite(a[i]);
	if (b)
		atomicAdd(bad, b);
}

/* ----- HBM: copy, read, write, triad with 16-byte accesses ---------------------------------------------- */
/*
 * Each thread keeps U independent 16-byte loads in flight before the first store (grid-stride, coalesced
 * across the warp: lane k touches element i + k). HINT 1 uses the streaming cache hints (__ldcs/__stcs:
 * evict-first), HINT 0 plain accesses. The tuning sweep picks U, HINT and the grid.
 */
template <int U, int HINT>
__global__ void __launch_bounds__(THREADS) k_copy(const float4 *__restrict__ src, float4 *__restrict__ dst, size_t n)
{
	size_t s = gstride(), i = gtid();

	for (; i + (size_t)(U - 1) * s < n; i += (size_t)U * s) {
		float4 v[U];
#pragma unroll
		for (int u = 0; u < U; u++)
			v[u] = HINT ? __ldcs(src + i + u * s) : src[i + u * s];
#pragma unroll
		for (int u = 0; u < U; u++) {
			if (HINT)
				__stcs(dst + i + u * s, v[u]);
			else
				dst[i + u * s] = v[u];
		}
	}
	for (; i < n; i += s)
		dst[i] = src[i];
}

template <int U, int HINT>
__global__ void __launch_bounds__(THREADS) k_read(const float4 *__restrict__ src, size_t n, float *__restrict__ sink)
{
	size_t s = gstride(), i = gtid();
	float acc = 0.0f;

	for (; i + (size_t)(U - 1) * s < n; i += (size_t)U * s) {
		float4 v[U];
#pragma unroll
		for (int u = 0; u < U; u++)
			v[u] = HINT ? __ldcs(src + i + u * s) : src[i + u * s];
#pragma unroll
		for (int u = 0; u < U; u++)
			acc += (v[u].x + v[u].y) + (v[u].z + v[u].w);
	}
	for (; i < n; i += s) {
		float4 v = src[i];

		acc += (v.x + v.y) + (v.z + v.w);
	}
	sink[gtid()] = acc;
}

template <int U, int HINT> __global__ void __launch_bounds__(THREADS) k_write(float4 *__restrict__ dst, size_t n)
{
	size_t s = gstride(), i = gtid();

	for (; i < n; i += s) {
		size_t e = 4 * i;
		float4 v = make_float4(write_value(e), write_value(e + 1), write_value(e + 2), write_value(e + 3));

		if (HINT)
			__stcs(dst + i, v);
		else
			dst[i] = v;
	}
}

template <int U, int HINT>
__global__ void __launch_bounds__(THREADS)
    k_triad(float4 *__restrict__ a, const float4 *__restrict__ b, const float4 *__restrict__ c, size_t n)
{
	size_t s = gstride(), i = gtid();

	for (; i + (size_t)(U - 1) * s < n; i += (size_t)U * s) {
		float4 vb[U], vc[U];
#pragma unroll
		for (int u = 0; u < U; u++) {
			vb[u] = HINT ? __ldcs(b + i + u * s) : b[i + u * s];
			vc[u] = HINT ? __ldcs(c + i + u * s) : c[i + u * s];
		}
#pragma unroll
		for (int u = 0; u < U; u++) {
			float4 r =
			    make_float4(__fmaf_rn(TRIAD_S, vc[u].x, vb[u].x), __fmaf_rn(TRIAD_S, vc[u].y, vb[u].y),
			                __fmaf_rn(TRIAD_S, vc[u].z, vb[u].z), __fmaf_rn(TRIAD_S, vc[u].w, vb[u].w));
			if (HINT)
				__stcs(a + i + u * s, r);
			else
				a[i + u * s] = r;
		}
	}
	for (; i < n; i += s) {
		float4 vb = b[i], vc = c[i];

		a[i] = make_float4(__fmaf_rn(TRIAD_S, vc.x, vb.x), __fmaf_rn(TRIAD_S, vc.y, vb.y),
		                   __fmaf_rn(TRIAD_S, vc.z, vb.z), __fmaf_rn(TRIAD_S, vc.w, vb.w));
	}
}

/* ----- strided read: useful bytes only ---------------------------------------------------------------- */
__global__ void __launch_bounds__(THREADS)
    k_strided(const float *__restrict__ src, size_t m, uint32_t stride, float *__restrict__ sink)
{
	const int U = 8;
	size_t s = gstride(), i = gtid();
	float acc = 0.0f;

	for (; i + (size_t)(U - 1) * s < m; i += (size_t)U * s) {
		float v[U];
#pragma unroll
		for (int u = 0; u < U; u++)
			v[u] = src[(i + u * s) * stride];
#pragma unroll
		for (int u = 0; u < U; u++)
			acc += v[u];
	}
	for (; i < m; i += s)
		acc += src[i * stride];
	sink[gtid()] = acc;
}

/* ----- L2: repeated passes over a working set that fits, loads that skip L1 ------------------------------ */
__global__ void __launch_bounds__(THREADS) k_l2(const float4 *src, size_t n, int reps, float *__restrict__ sink)
{
	const int U = 4;
	size_t s = gstride();
	float acc = 0.0f;

	for (int r = 0; r < reps; r++) {
		size_t i = gtid();

		for (; i + (size_t)(U - 1) * s < n; i += (size_t)U * s) {
			float4 v[U];
#pragma unroll
			for (int u = 0; u < U; u++)
				v[u] = ld_cg_f4(src + i + u * s);
#pragma unroll
			for (int u = 0; u < U; u++)
				acc += (v[u].x + v[u].y) + (v[u].z + v[u].w);
		}
		for (; i < n; i += s) {
			float4 v = ld_cg_f4(src + i);

			acc += (v.x + v.y) + (v.z + v.w);
		}
	}
	sink[gtid()] = acc;
}

/* ----- shared memory: lane l reads word l * stride + k, k unrolled (immediate offsets) ------------------- */
#define SMEM_WORDS 2048 /* 8 KiB: 31 * 33 + 32 < 2048 */
#define SMEM_UNROLL 32

__global__ void __launch_bounds__(THREADS) k_smem(uint32_t stride, int iters, float *__restrict__ sink)
{
	__shared__ float tile[SMEM_WORDS];
	unsigned lane = threadIdx.x & 31;
	float a0 = 0, a1 = 0, a2 = 0, a3 = 0;

	for (unsigned w = threadIdx.x; w < SMEM_WORDS; w += blockDim.x)
		tile[w] = pos_value(w, 7);
	__syncthreads();
	{
		/* volatile: every read is a real LDS, no value is kept in a register across iterations. */
		volatile const float *p = tile + lane * stride;

		for (int it = 0; it < iters; it++) {
#pragma unroll
			for (int k = 0; k < SMEM_UNROLL; k += 4) {
				a0 += p[k];
				a1 += p[k + 1];
				a2 += p[k + 2];
				a3 += p[k + 3];
			}
		}
	}
	sink[gtid()] = (a0 + a1) + (a2 + a3);
}

/* ----- FP32 FMA: independent register chains ----------------------------------------------------------- */
#define FMA_CHAINS 8
#define FMA_UNROLL 64

__global__ void __launch_bounds__(THREADS) k_fma(float *__restrict__ out, int iters, float b, float c)
{
	float a[FMA_CHAINS];

#pragma unroll
	for (int j = 0; j < FMA_CHAINS; j++)
		a[j] = (float)threadIdx.x * 1e-3f + (float)j;
	for (int it = 0; it < iters; it++) {
#pragma unroll
		for (int u = 0; u < FMA_UNROLL; u++) {
#pragma unroll
			for (int j = 0; j < FMA_CHAINS; j++)
				a[j] = fmaf(a[j], b, c);
		}
	}
	{
		float s = 0.0f;

#pragma unroll
		for (int j = 0; j < FMA_CHAINS; j++)
			s += a[j];
		out[gtid()] = s;
	}
}

/* ----- pointer chase: one thread, dependent loads that skip L1 ----------------------------------------- */
/* Continues from *pos (a word index) and leaves the end there: successive launches walk on along the cycle,
 * so in a span larger than the L2 no line is visited twice before the cycle wraps. */
__global__ void k_chase(const uint32_t *next, int steps, uint32_t *pos)
{
	uint32_t j = *pos;

	for (int s = 0; s < steps; s++)
		j = ld_cg_u32(next + j);
	*pos = j;
}

__global__ void k_scatter_chain(uint32_t *big, const uint32_t *succ, uint32_t slots, uint32_t words_per_slot)
{
	for (size_t i = gtid(); i < slots; i += gstride())
		big[i * words_per_slot] = succ[i] * words_per_slot;
}

/* ----- intensity sweep: M FMAs (2 M FLOP) per 16-byte element read: M / 8 FLOP per byte ------------------ */
template <int M>
__global__ void __launch_bounds__(THREADS)
    k_intensity(const float4 *__restrict__ src, size_t n, float b, float *__restrict__ sink)
{
	const int U = 4;
	size_t s = gstride(), i = gtid();
	float a0 = 0, a1 = 0, a2 = 0, a3 = 0;
	/* Below 4 FMAs per element the unused components would let ptxas narrow the 16-byte load (seen in the
	 * SASS: LDG.E.CONSTANT / LDG.E.64): fold them into an integer guard instead (no FLOPs). */
	uint32_t guard = 0;

	for (; i < n; i += (size_t)U * s) {
		float4 v[U];
#pragma unroll
		for (int u = 0; u < U; u++)
			v[u] = i + u * s < n ? ld_nc_f4(src + i + u * s) : make_float4(1.0f, 1.0f, 1.0f, 1.0f);
#pragma unroll
		for (int u = 0; u < U; u++) {
			if (i + u * s >= n)
				break;
			if (M == 1) {
				a0 = fmaf(a0, b, v[u].x);
				guard ^= __float_as_uint(v[u].y) ^ __float_as_uint(v[u].z) ^ __float_as_uint(v[u].w);
			} else if (M == 2) {
				a0 = fmaf(a0, b, v[u].x);
				a1 = fmaf(a1, b, v[u].y);
				guard ^= __float_as_uint(v[u].z) ^ __float_as_uint(v[u].w);
			} else {
#pragma unroll 64
				for (int m = 0; m < M / 4; m++) {
					a0 = fmaf(a0, b, v[u].x);
					a1 = fmaf(a1, b, v[u].y);
					a2 = fmaf(a2, b, v[u].z);
					a3 = fmaf(a3, b, v[u].w);
				}
			}
		}
	}
	sink[gtid()] = guard == 0x7f7f7f7fu ? 1.0f : (a0 + a1) + (a2 + a3);
}

/* ----- matmul check: fp64 dot products for sampled entries of D = op(A) B, A stored K x M (lda K) ------- */
template <typename TA, typename TD>
__global__ void k_matmul_ref(const TA *A, const TA *B, const TD *D, int M, int K, const int2 *ij, double *ref,
                             double *got)
{
	__shared__ double part[THREADS];
	int s = blockIdx.x, i = ij[s].x, j = ij[s].y;
	double acc = 0.0;

	for (int k = threadIdx.x; k < K; k += blockDim.x)
		acc += to_double<TA>(A[(size_t)i * K + k]) * to_double<TA>(B[(size_t)j * K + k]);
	part[threadIdx.x] = acc;
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w /= 2) {
		if ((int)threadIdx.x < w)
			part[threadIdx.x] += part[threadIdx.x + w];
		__syncthreads();
	}
	if (threadIdx.x == 0) {
		ref[s] = part[0];
		got[s] = to_double<TD>(D[(size_t)j * M + i]);
	}
}

/* ================================================================================================== */
/* Host side                                                                                           */
/* ================================================================================================== */

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static mp_status cuda_fail(mp_error *err, cudaError_t e, const char *call, int line)
{
	return mp_fail(err, MP_EINTERNAL, "", "%s failed: %s (%s) [calib_gpu.cu:%d]", call, cudaGetErrorName(e),
	               cudaGetErrorString(e), line);
}

static mp_status blas_fail(mp_error *err, int status, const char *call, int line)
{
	return mp_fail(err, MP_EINTERNAL, "", "%s failed: cuBLAS status %d (%s) [calib_gpu.cu:%d]", call, status,
	               cublasGetStatusString((cublasStatus_t)status), line);
}

/* Everything a run holds; released in one place (run_release). */
typedef struct run {
	const mp_calib_gpu_options *o;
	const mp_calib_ctl *ctl;
	mp_calib_gpu_results *r;
	mp_error *err;
	cudaStream_t stream;
	cudaEvent_t ev0, ev1;
	void *allocs[MAX_ALLOCS];
	double *samples;           /* host, runs entries */
	unsigned long long *d_bad; /* device counter for the check kernels */
	float *d_sink;             /* one float per thread of the largest grid */
	size_t sink_floats;
	int occ_stream; /* blocks of THREADS per SM for the streaming kernels */
	/* progress */
	uint32_t suites;
	double total_weight, done_weight, cur_weight, sub0, sub1;
	const char *cur_name;
} run;

#define CK(call)                                                                                                       \
	do {                                                                                                           \
		cudaError_t e_ = (call);                                                                               \
		if (e_ != cudaSuccess)                                                                                 \
			return cuda_fail(R->err, e_, #call, __LINE__);                                                 \
	} while (0)
#define CKB(call)                                                                                                      \
	do {                                                                                                           \
		cublasStatus_t s_ = (call);                                                                            \
		if (s_ != CUBLAS_STATUS_SUCCESS)                                                                       \
			return blas_fail(R->err, (int)s_, #call, __LINE__);                                            \
	} while (0)
#define LAUNCHED() CK(cudaGetLastError())
/* Propagates an error, and stops quietly (MP_OK) once the run has been cancelled. */
#define TRY(x)                                                                                                         \
	do {                                                                                                           \
		mp_status t_ = (x);                                                                                    \
		if (t_ != MP_OK)                                                                                       \
			return t_;                                                                                     \
		if (R->r->cancelled)                                                                                   \
			return MP_OK;                                                                                  \
	} while (0)

static mp_status dalloc(run *R, void **p, size_t bytes, const char *what)
{
	cudaError_t e;

	*p = NULL;
	for (int i = 0; i < MAX_ALLOCS; i++) {
		if (R->allocs[i])
			continue;
		e = cudaMalloc(p, bytes);
		if (e != cudaSuccess) {
			*p = NULL;
			(void)cudaGetLastError();
			return mp_fail(R->err, e == cudaErrorMemoryAllocation ? MP_ENOMEM : MP_EINTERNAL, "",
			               "cudaMalloc of %zu bytes for %s failed: %s", bytes, what, cudaGetErrorString(e));
		}
		R->allocs[i] = *p;
		return MP_OK;
	}
	return mp_fail(R->err, MP_EINTERNAL, "", "too many device allocations (%s)", what);
}

static void dfree(run *R, void *p)
{
	if (p == NULL)
		return;
	for (int i = 0; i < MAX_ALLOCS; i++)
		if (R->allocs[i] == p) {
			(void)cudaFree(p);
			R->allocs[i] = NULL;
			return;
		}
}

/* Reports progress; false (and r->cancelled) when the caller asked to stop. */
static bool progress(run *R, double inner)
{
	double f;

	if (R->r->cancelled)
		return false;
	if (R->ctl == NULL || R->ctl->progress == NULL)
		return true;
	f = (R->done_weight + R->cur_weight * (R->sub0 + (R->sub1 - R->sub0) * inner)) / R->total_weight;
	if (!R->ctl->progress(R->ctl->ctx, f > 1.0 ? 1.0 : f, R->cur_name)) {
		R->r->cancelled = true;
		return false;
	}
	return true;
}

/* Sets the share [k/n, (k+1)/n) of the current suite that the next measurement covers. */
static void sub(run *R, int k, int n)
{
	R->sub0 = (double)k / n;
	R->sub1 = (double)(k + 1) / n;
}

static mp_status reset_bad(run *R)
{
	CK(cudaMemsetAsync(R->d_bad, 0, sizeof(*R->d_bad), R->stream));
	return MP_OK;
}

static mp_status read_bad(run *R, unsigned long long *bad)
{
	CK(cudaMemcpyAsync(bad, R->d_bad, sizeof(*bad), cudaMemcpyDeviceToHost, R->stream));
	CK(cudaStreamSynchronize(R->stream));
	return MP_OK;
}

static int grid_for(run *R, size_t n, int blocks_cap)
{
	size_t need = (n + THREADS - 1) / THREADS;

	(void)R;
	return (int)(need < (size_t)blocks_cap ? (need ? need : 1) : (size_t)blocks_cap);
}

/* Checks that the first `count` sink entries were written with finite values. */
static mp_status check_sink(run *R, size_t count, const char *what)
{
	unsigned long long bad = 0;

	TRY(reset_bad(R));
	k_check_finite<<<grid_for(R, count, 1024), THREADS, 0, R->stream>>>(R->d_sink, count, R->d_bad);
	LAUNCHED();
	TRY(read_bad(R, &bad));
	if (bad)
		return mp_fail(R->err, MP_EINTERNAL, "", "%s: %llu of %zu per-thread results were not written", what,
		               bad, count);
	return MP_OK;
}

static mp_status poison_sink(run *R)
{
	CK(cudaMemsetAsync(R->d_sink, 0xFF, R->sink_floats * sizeof(float), R->stream));
	return MP_OK;
}

/*
 * Times launch() `runs` times with CUDA events after `warmup` untimed launches. work is bytes or FLOP per
 * launch; rate=true stores work/seconds (best = highest), rate=false stores seconds/work (best = lowest).
 */
template <typename F>
static mp_status time_runs(run *R, F launch, double work, bool rate, uint32_t runs, uint32_t warmup, mp_calib_stat *out)
{
	for (uint32_t w = 0; w < warmup; w++) {
		TRY(launch());
		LAUNCHED();
	}
	CK(cudaStreamSynchronize(R->stream));
	for (uint32_t i = 0; i < runs; i++) {
		float ms = 0;
		double sec;

		if (!progress(R, (double)i / runs))
			return MP_OK;
		CK(cudaEventRecord(R->ev0, R->stream));
		TRY(launch());
		LAUNCHED();
		CK(cudaEventRecord(R->ev1, R->stream));
		CK(cudaEventSynchronize(R->ev1));
		CK(cudaEventElapsedTime(&ms, R->ev0, R->ev1));
		sec = (double)ms * 1e-3;
		if (!(sec > 0))
			return mp_fail(R->err, MP_EINTERNAL, "", "a timed run took %g s: the event timer is not usable",
			               sec);
		R->samples[i] = rate ? work / sec : sec / work;
	}
	*out = mp_calib_stat_of(R->samples, runs, rate);
	return MP_OK;
}

/* ----- probe ------------------------------------------------------------------------------------------- */

extern "C" mp_status mp_calib_cuda_probe(mp_calib_gpu_info *info, mp_error *err)
{
	int n = 0, khz = 0;
	cudaError_t e;
	cudaDeviceProp p;

	memset(info, 0, sizeof(*info));
	e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess) {
		(void)cudaGetLastError();
		return mp_fail(err, MP_ENODEV, "", "no usable GPU: cudaGetDeviceCount failed: %s (%s)%s",
		               cudaGetErrorName(e), cudaGetErrorString(e),
		               e == cudaErrorInsufficientDriver ? "; no NVIDIA driver is loaded, or it is older than "
		                                                  "this build's CUDA runtime"
		                                                : "");
	}
	if (n < 1)
		return mp_fail(err, MP_ENODEV, "", "no usable GPU: the CUDA driver reports no device");
	e = cudaGetDeviceProperties(&p, 0);
	if (e != cudaSuccess) {
		(void)cudaGetLastError();
		return mp_fail(err, MP_ENODEV, "", "no usable GPU: cudaGetDeviceProperties(0) failed: %s",
		               cudaGetErrorString(e));
	}
	snprintf(info->name, sizeof(info->name), "%.127s", p.name);
	info->memory_bytes = p.totalGlobalMem;
	info->sm_count = (uint32_t)p.multiProcessorCount;
	info->l2_cache_bytes = (uint64_t)p.l2CacheSize;
	info->cc_major = p.major;
	info->cc_minor = p.minor;
	info->shared_memory_per_sm_bytes = p.sharedMemPerMultiprocessor;
	if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0) == cudaSuccess)
		info->clock_hz = 1e3 * khz;
	(void)cudaDriverGetVersion(&info->driver_version);
	(void)cudaRuntimeGetVersion(&info->runtime_version);
	(void)cudaGetLastError();
	return MP_OK;
}

/* ----- suites ------------------------------------------------------------------------------------------ */

static mp_status suite_memory(run *R)
{
	/* The context exists (created in mp_calib_cuda_run just before); measured there, reported here. */
	R->r->suites_done |= MP_CALIB_MEMORY;
	return MP_OK;
}

typedef struct hbm_bufs {
	float4 *a, *b, *c;
	size_t n4; /* float4 elements per array */
} hbm_bufs;

template <int U, int H> static mp_status launch_copy(run *R, const hbm_bufs *h, int blocks)
{
	k_copy<U, H><<<blocks, THREADS, 0, R->stream>>>(h->b, h->a, h->n4);
	return MP_OK;
}

static mp_status launch_copy_cfg(run *R, const hbm_bufs *h, int u, int hint, int blocks)
{
	switch (u * 2 + hint) {
	case 2:
		return launch_copy<1, 0>(R, h, blocks);
	case 3:
		return launch_copy<1, 1>(R, h, blocks);
	case 4:
		return launch_copy<2, 0>(R, h, blocks);
	case 5:
		return launch_copy<2, 1>(R, h, blocks);
	case 8:
		return launch_copy<4, 0>(R, h, blocks);
	case 9:
		return launch_copy<4, 1>(R, h, blocks);
	case 16:
		return launch_copy<8, 0>(R, h, blocks);
	default:
		return launch_copy<8, 1>(R, h, blocks);
	}
}

static mp_status launch_read_cfg(run *R, const hbm_bufs *h, int u, int hint, int blocks)
{
	switch (u * 2 + hint) {
	case 2:
		k_read<1, 0><<<blocks, THREADS, 0, R->stream>>>(h->b, h->n4, R->d_sink);
		break;
	case 3:
		k_read<1, 1><<<blocks, THREADS, 0, R->stream>>>(h->b, h->n4, R->d_sink);
		break;
	case 4:
		k_read<2, 0><<<blocks, THREADS, 0, R->stream>>>(h->b, h->n4, R->d_sink);
		break;
	case 5:
		k_read<2, 1><<<blocks, THREADS, 0, R->stream>>>(h->b, h->n4, R->d_sink);
		break;
	case 8:
		k_read<4, 0><<<blocks, THREADS, 0, R->stream>>>(h->b, h->n4, R->d_sink);
		break;
	case 9:
		k_read<4, 1><<<blocks, THREADS, 0, R->stream>>>(h->b, h->n4, R->d_sink);
		break;
	case 16:
		k_read<8, 0><<<blocks, THREADS, 0, R->stream>>>(h->b, h->n4, R->d_sink);
		break;
	default:
		k_read<8, 1><<<blocks, THREADS, 0, R->stream>>>(h->b, h->n4, R->d_sink);
		break;
	}
	return MP_OK;
}

static mp_status launch_write_cfg(run *R, const hbm_bufs *h, int hint, int blocks)
{
	if (hint)
		k_write<1, 1><<<blocks, THREADS, 0, R->stream>>>(h->a, h->n4);
	else
		k_write<1, 0><<<blocks, THREADS, 0, R->stream>>>(h->a, h->n4);
	return MP_OK;
}

static mp_status launch_triad_cfg(run *R, const hbm_bufs *h, int u, int hint, int blocks)
{
	switch (u * 2 + hint) {
	case 2:
		k_triad<1, 0><<<blocks, THREADS, 0, R->stream>>>(h->a, h->b, h->c, h->n4);
		break;
	case 3:
		k_triad<1, 1><<<blocks, THREADS, 0, R->stream>>>(h->a, h->b, h->c, h->n4);
		break;
	case 4:
		k_triad<2, 0><<<blocks, THREADS, 0, R->stream>>>(h->a, h->b, h->c, h->n4);
		break;
	case 5:
		k_triad<2, 1><<<blocks, THREADS, 0, R->stream>>>(h->a, h->b, h->c, h->n4);
		break;
	case 8:
		k_triad<4, 0><<<blocks, THREADS, 0, R->stream>>>(h->a, h->b, h->c, h->n4);
		break;
	case 9:
		k_triad<4, 1><<<blocks, THREADS, 0, R->stream>>>(h->a, h->b, h->c, h->n4);
		break;
	case 16:
		k_triad<8, 0><<<blocks, THREADS, 0, R->stream>>>(h->a, h->b, h->c, h->n4);
		break;
	default:
		k_triad<8, 1><<<blocks, THREADS, 0, R->stream>>>(h->a, h->b, h->c, h->n4);
		break;
	}
	return MP_OK;
}

static mp_status check_equal(run *R, const float4 *dst, const float4 *src, size_t n4, const char *what)
{
	unsigned long long bad = 0;

	TRY(reset_bad(R));
	k_check_copy<<<grid_for(R, 4 * n4, 4096), THREADS, 0, R->stream>>>((const float *)dst, (const float *)src,
	                                                                   4 * n4, R->d_bad);
	LAUNCHED();
	TRY(read_bad(R, &bad));
	if (bad)
		return mp_fail(R->err, MP_EINTERNAL, "", "%s check failed: %llu of %zu floats differ from the source",
		               what, bad, 4 * n4);
	return MP_OK;
}

static mp_status suite_hbm(run *R, const hbm_bufs *h)
{
	static const int unrolls[] = {1, 2, 4, 8};
	mp_calib_gpu_results *r = R->r;
	double bytes2 = 2.0 * 16.0 * (double)h->n4, bytes1 = 16.0 * (double)h->n4, bytes3 = 3.0 * 16.0 * (double)h->n4;
	int base = R->occ_stream * (int)r->info.sm_count, best_u = 4, best_h = 0, best_blocks = base;
	double best_rate = 0;
	unsigned long long bad = 0;
	mp_calib_stat st;
	int k = 0;

	/* cudaMemcpy device-to-device: the reference, in the same run. */
	sub(R, k++, 6);
	CK(cudaMemsetAsync(h->a, 0xFF, (size_t)bytes1, R->stream));
	TRY(time_runs(
	    R,
	    [&]() -> mp_status {
		    cudaError_t e = cudaMemcpyAsync(h->a, h->b, (size_t)bytes1, cudaMemcpyDeviceToDevice, R->stream);
		    return e == cudaSuccess ? MP_OK : cuda_fail(R->err, e, "cudaMemcpyAsync D2D", __LINE__);
	    },
	    bytes2, true, r->runs, 2, &r->memcpy_d2d));
	TRY(check_equal(R, h->a, h->b, h->n4, "cudaMemcpy D2D"));

	/* Copy tuning sweep: loads in flight per thread, cache hints, grid of 1, 2 or 4 resident waves. */
	sub(R, k++, 6);
	for (int ui = 0; ui < 4; ui++)
		for (int hint = 0; hint < 2; hint++)
			for (int g = 1; g <= 4; g *= 2) {
				int blocks = base * g;

				TRY(time_runs(
				    R, [&]() { return launch_copy_cfg(R, h, unrolls[ui], hint, blocks); }, bytes2, true,
				    3, 1, &st));
				if (st.median > best_rate) {
					best_rate = st.median;
					best_u = unrolls[ui];
					best_h = hint;
					best_blocks = blocks;
				}
			}
	r->copy_unroll = (uint32_t)best_u;
	r->copy_blocks = (uint32_t)best_blocks;

	sub(R, k++, 6);
	CK(cudaMemsetAsync(h->a, 0xFF, (size_t)bytes1, R->stream));
	TRY(time_runs(
	    R, [&]() { return launch_copy_cfg(R, h, best_u, best_h, best_blocks); }, bytes2, true, r->runs, 2,
	    &r->copy));
	TRY(check_equal(R, h->a, h->b, h->n4, "copy kernel"));

	sub(R, k++, 6);
	TRY(poison_sink(R));
	TRY(time_runs(
	    R, [&]() { return launch_read_cfg(R, h, best_u, best_h, best_blocks); }, bytes1, true, r->runs, 2,
	    &r->read));
	TRY(check_sink(R, (size_t)best_blocks * THREADS, "read kernel"));

	sub(R, k++, 6);
	CK(cudaMemsetAsync(h->a, 0xFF, (size_t)bytes1, R->stream));
	TRY(time_runs(
	    R, [&]() { return launch_write_cfg(R, h, best_h, best_blocks); }, bytes1, true, r->runs, 2, &r->write));
	TRY(reset_bad(R));
	k_check_write<<<4096, THREADS, 0, R->stream>>>((const float *)h->a, 4 * h->n4, R->d_bad);
	LAUNCHED();
	TRY(read_bad(R, &bad));
	if (bad)
		return mp_fail(R->err, MP_EINTERNAL, "", "write kernel check failed: %llu floats wrong", bad);

	sub(R, k++, 6);
	CK(cudaMemsetAsync(h->a, 0xFF, (size_t)bytes1, R->stream));
	TRY(time_runs(
	    R, [&]() { return launch_triad_cfg(R, h, best_u, best_h, best_blocks); }, bytes3, true, r->runs, 2,
	    &r->triad));
	TRY(reset_bad(R));
	k_check_triad<<<4096, THREADS, 0, R->stream>>>((const float *)h->a, (const float *)h->b, (const float *)h->c,
	                                               4 * h->n4, R->d_bad);
	LAUNCHED();
	TRY(read_bad(R, &bad));
	if (bad)
		return mp_fail(R->err, MP_EINTERNAL, "", "triad kernel check failed: %llu floats wrong", bad);
	r->suites_done |= MP_CALIB_HBM;
	return MP_OK;
}

static mp_status suite_strided(run *R, const hbm_bufs *h)
{
	mp_calib_gpu_results *r = R->r;
	size_t nfloat = 4 * h->n4;
	int blocks = R->occ_stream * (int)r->info.sm_count;

	for (int k = 0; k < MP_CALIB_STRIDE_COUNT; k++) {
		uint32_t stride = 1u << k;
		size_t m = nfloat / stride;

		sub(R, k, MP_CALIB_STRIDE_COUNT);
		TRY(poison_sink(R));
		TRY(time_runs(
		    R,
		    [&]() -> mp_status {
			    k_strided<<<blocks, THREADS, 0, R->stream>>>((const float *)h->b, m, stride, R->d_sink);
			    return MP_OK;
		    },
		    4.0 * (double)m, true, r->runs, 2, &r->strided[k]));
		TRY(check_sink(R, (size_t)blocks * THREADS, "strided read"));
	}
	r->suites_done |= MP_CALIB_STRIDED;
	return MP_OK;
}

static mp_status suite_l2(run *R, const hbm_bufs *h)
{
	mp_calib_gpu_results *r = R->r;
	int blocks = R->occ_stream * (int)r->info.sm_count;
	size_t ws = (size_t)(r->info.l2_cache_bytes / 4) & ~(size_t)4095, n4;
	int reps;

	if (ws < 64 * 1024)
		ws = 64 * 1024;
	if (ws > 16 * h->n4)
		ws = 16 * h->n4;
	n4 = ws / 16;
	reps = (int)(8e9 / (double)ws); /* about 8 GB read per launch */
	if (reps < 1)
		reps = 1;
	r->l2_working_set_bytes = ws;
	sub(R, 0, 1);
	TRY(poison_sink(R));
	TRY(time_runs(
	    R,
	    [&]() -> mp_status {
		    k_l2<<<blocks, THREADS, 0, R->stream>>>(h->b, n4, reps, R->d_sink);
		    return MP_OK;
	    },
	    (double)ws *reps, true, r->runs, 3, &r->l2_read));
	TRY(check_sink(R, (size_t)blocks * THREADS, "L2 read"));
	r->suites_done |= MP_CALIB_L2;
	return MP_OK;
}

static mp_status suite_smem(run *R)
{
	mp_calib_gpu_results *r = R->r;
	int occ = 0, blocks;
	/* strides 1..32, then 33 (the padded tile's column read); 32 is the unpadded tile's column read */
	uint32_t strides[MP_CALIB_SMEM_STRIDE_COUNT + 1];

	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k_smem, THREADS, 0));
	if (occ < 1)
		occ = 1;
	blocks = occ * (int)r->info.sm_count;
	for (int k = 0; k < MP_CALIB_SMEM_STRIDE_COUNT; k++)
		strides[k] = 1u << k;
	strides[MP_CALIB_SMEM_STRIDE_COUNT] = 33;
	for (int k = 0; k <= MP_CALIB_SMEM_STRIDE_COUNT; k++) {
		uint32_t stride = strides[k];
		uint32_t degree = stride == 33 ? 1 : stride; /* bank-conflict degree for 4-byte words */
		int iters = 4096 / (int)degree;
		double bytes;
		mp_calib_stat *out = k < MP_CALIB_SMEM_STRIDE_COUNT ? &r->smem[k] : &r->smem_tile_padded;

		if (iters < 64)
			iters = 64;
		bytes = 4.0 * SMEM_UNROLL * (double)iters * blocks * THREADS;
		sub(R, k, MP_CALIB_SMEM_STRIDE_COUNT + 1);
		TRY(poison_sink(R));
		TRY(time_runs(
		    R,
		    [&]() -> mp_status {
			    k_smem<<<blocks, THREADS, 0, R->stream>>>(stride, iters, R->d_sink);
			    return MP_OK;
		    },
		    bytes, true, r->runs, 2, out));
		TRY(check_sink(R, (size_t)blocks * THREADS, "shared-memory read"));
	}
	r->smem_tile_column = r->smem[MP_CALIB_SMEM_STRIDE_COUNT - 1];
	r->suites_done |= MP_CALIB_SMEM;
	return MP_OK;
}

static mp_status suite_fma(run *R)
{
	mp_calib_gpu_results *r = R->r;
	int occ = 0, blocks, iters;
	double clock = r->info.clock_hz > 0 ? r->info.clock_hz : 2e9;
	double est_peak = (double)r->info.sm_count * 128.0 * 2.0 * clock, threads, flops;

	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k_fma, THREADS, 0));
	if (occ < 1)
		occ = 1;
	blocks = occ * (int)r->info.sm_count * 2; /* two resident waves */
	threads = (double)blocks * THREADS;
	iters = (int)(5e-3 * est_peak / (threads * 2.0 * FMA_CHAINS * FMA_UNROLL)); /* about 5 ms */
	if (iters < 16)
		iters = 16;
	flops = threads * 2.0 * FMA_CHAINS * FMA_UNROLL * (double)iters;
	sub(R, 0, 1);
	TRY(poison_sink(R));
	/* About 40 launches (~0.2 s) of warm-up so the clocks settle before timing. */
	TRY(time_runs(
	    R,
	    [&]() -> mp_status {
		    k_fma<<<blocks, THREADS, 0, R->stream>>>(R->d_sink, iters, 0.999f, 0.001f);
		    return MP_OK;
	    },
	    flops, true, r->runs, 40, &r->fma_fp32));
	TRY(check_sink(R, (size_t)blocks * THREADS, "FMA"));
	r->suites_done |= MP_CALIB_FMA;
	return MP_OK;
}

/* ----- matmul ------------------------------------------------------------------------------------------ */

typedef struct mm_bufs {
	void *A, *B, *D, *ws;
	size_t ws_bytes;
	int2 *d_ij;
	double *d_ref, *d_got;
	int nsamples;
} mm_bufs;

#define MM_SAMPLES 256

template <typename TA, typename TD> static mp_status mm_check(run *R, const mm_bufs *b, int n, double *rel)
{
	double ref[MM_SAMPLES], got[MM_SAMPLES], num = 0, den = 0;

	k_matmul_ref<TA, TD><<<b->nsamples, THREADS, 0, R->stream>>>(
	    (const TA *)b->A, (const TA *)b->B, (const TD *)b->D, n, n, b->d_ij, b->d_ref, b->d_got);
	LAUNCHED();
	CK(cudaMemcpyAsync(ref, b->d_ref, sizeof(double) * b->nsamples, cudaMemcpyDeviceToHost, R->stream));
	CK(cudaMemcpyAsync(got, b->d_got, sizeof(double) * b->nsamples, cudaMemcpyDeviceToHost, R->stream));
	CK(cudaStreamSynchronize(R->stream));
	for (int s = 0; s < b->nsamples; s++) {
		if (!isfinite(got[s])) {
			*rel = INFINITY;
			return MP_OK;
		}
		num += (got[s] - ref[s]) * (got[s] - ref[s]);
		den += ref[s] * ref[s];
	}
	*rel = den > 0 ? sqrt(num / den) : INFINITY;
	return MP_OK;
}

template <typename TA> static mp_status mm_fill(run *R, const mm_bufs *b, size_t elems, uint32_t seed)
{
	k_fill_signed<TA><<<4096, THREADS, 0, R->stream>>>((TA *)b->A, elems, seed);
	LAUNCHED();
	k_fill_signed<TA><<<4096, THREADS, 0, R->stream>>>((TA *)b->B, elems, seed + 1);
	LAUNCHED();
	return MP_OK;
}

typedef struct lt_case {
	mp_dtype dt;
	cudaDataType_t ab, cd;
	cublasComputeType_t compute;
	size_t ab_size, cd_size;
	double tol; /* relative error allowed (output rounding + input rounding) */
} lt_case;

/* Releases the cuBLASLt descriptors of one case. */
typedef struct lt_descs {
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t a, b, c;
	cublasLtMatmulPreference_t pref;
} lt_descs;

static void lt_descs_free(lt_descs *d)
{
	if (d->pref)
		cublasLtMatmulPreferenceDestroy(d->pref);
	if (d->c)
		cublasLtMatrixLayoutDestroy(d->c);
	if (d->b)
		cublasLtMatrixLayoutDestroy(d->b);
	if (d->a)
		cublasLtMatrixLayoutDestroy(d->a);
	if (d->op)
		cublasLtMatmulDescDestroy(d->op);
	memset(d, 0, sizeof(*d));
}

static mp_status lt_setup(run *R, cublasLtHandle_t lt, const lt_case *c, int n, const mm_bufs *b, lt_descs *d,
                          cublasLtMatmulHeuristicResult_t *heur, int *nheur)
{
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	uint64_t ws = b->ws_bytes;

	CKB(cublasLtMatmulDescCreate(&d->op, c->compute, CUDA_R_32F));
	CKB(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
	CKB(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
	/* Column-major: A stored K x M (lda K) and used transposed, B K x N (ldb K), C = D M x N (ldc M). */
	CKB(cublasLtMatrixLayoutCreate(&d->a, c->ab, n, n, n));
	CKB(cublasLtMatrixLayoutCreate(&d->b, c->ab, n, n, n));
	CKB(cublasLtMatrixLayoutCreate(&d->c, c->cd, n, n, n));
	CKB(cublasLtMatmulPreferenceCreate(&d->pref));
	CKB(cublasLtMatmulPreferenceSetAttribute(d->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
	*nheur = 0;
	{
		cublasStatus_t s =
		    cublasLtMatmulAlgoGetHeuristic(lt, d->op, d->a, d->b, d->c, d->c, d->pref, 8, heur, nheur);

		if (s != CUBLAS_STATUS_SUCCESS && s != CUBLAS_STATUS_NOT_SUPPORTED)
			return blas_fail(R->err, (int)s, "cublasLtMatmulAlgoGetHeuristic", __LINE__);
		if (s == CUBLAS_STATUS_NOT_SUPPORTED)
			*nheur = 0;
	}
	return MP_OK;
}

static mp_status lt_one(run *R, cublasLtHandle_t lt, const lt_case *c, int n, mm_bufs *b, mp_calib_matmul *out)
{
	cublasLtMatmulHeuristicResult_t heur[8];
	lt_descs d;
	int nheur = 0, best = -1;
	double flops = 2.0 * n * (double)n * n, best_rate = 0;
	float alpha = 1.0f, beta = 0.0f;
	size_t elems = (size_t)n * n;
	mp_status st;
	mp_calib_stat s;

	memset(&d, 0, sizeof(d));
	memset(heur, 0, sizeof(heur));
	out->size = (uint32_t)n;
	switch (c->dt) {
	case MP_DTYPE_BF16:
		st = mm_fill<__nv_bfloat16>(R, b, elems, 11);
		break;
	case MP_DTYPE_FP16:
		st = mm_fill<__half>(R, b, elems, 13);
		break;
	case MP_DTYPE_TF32:
		st = mm_fill<float>(R, b, elems, 17);
		break;
	default:
		st = mm_fill<__nv_fp8_e4m3>(R, b, elems, 19);
		break;
	}
	if (st != MP_OK)
		return st;
	st = lt_setup(R, lt, c, n, b, &d, heur, &nheur);
	if (st != MP_OK || nheur == 0) {
		lt_descs_free(&d);
		if (st == MP_OK)
			snprintf(out->status, sizeof(out->status), "cuBLASLt offers no algorithm for %s at %d^3 here",
			         mp_dtype_name(c->dt), n);
		return st;
	}
	/* Heuristic candidates: time the first few, keep the fastest (median of 3 after one warm-up). */
	for (int h = 0; h < nheur && h < 4; h++) {
		if (heur[h].state != CUBLAS_STATUS_SUCCESS || heur[h].workspaceSize > b->ws_bytes)
			continue;
		st = time_runs(
		    R,
		    [&]() -> mp_status {
			    cublasStatus_t e = cublasLtMatmul(lt, d.op, &alpha, b->A, d.a, b->B, d.b, &beta, b->D, d.c,
			                                      b->D, d.c, &heur[h].algo, b->ws, b->ws_bytes, R->stream);
			    return e == CUBLAS_STATUS_SUCCESS ? MP_OK
			                                      : blas_fail(R->err, (int)e, "cublasLtMatmul", __LINE__);
		    },
		    flops, true, 3, 1, &s);
		if (st != MP_OK || R->r->cancelled) {
			lt_descs_free(&d);
			return st;
		}
		out->algos_tried++;
		if (s.median > best_rate) {
			best_rate = s.median;
			best = h;
		}
	}
	if (best < 0) {
		lt_descs_free(&d);
		snprintf(out->status, sizeof(out->status), "no usable cuBLASLt algorithm for %s", mp_dtype_name(c->dt));
		return MP_OK;
	}
	/* Poison D, then the timed runs; the check reads D as the last run left it. */
	st = cudaMemsetAsync(b->D, 0xFF, elems * c->cd_size, R->stream) == cudaSuccess
	         ? MP_OK
	         : mp_fail(R->err, MP_EINTERNAL, "", "cudaMemsetAsync of the matmul output failed");
	if (st == MP_OK)
		st = time_runs(
		    R,
		    [&]() -> mp_status {
			    cublasStatus_t e =
			        cublasLtMatmul(lt, d.op, &alpha, b->A, d.a, b->B, d.b, &beta, b->D, d.c, b->D, d.c,
			                       &heur[best].algo, b->ws, b->ws_bytes, R->stream);
			    return e == CUBLAS_STATUS_SUCCESS ? MP_OK
			                                      : blas_fail(R->err, (int)e, "cublasLtMatmul", __LINE__);
		    },
		    flops, true, R->r->runs, 3, &out->flops_per_second);
	lt_descs_free(&d);
	if (st != MP_OK || R->r->cancelled)
		return st;
	switch (c->dt) {
	case MP_DTYPE_BF16:
		st = mm_check<__nv_bfloat16, __nv_bfloat16>(R, b, n, &out->rel_error);
		break;
	case MP_DTYPE_FP16:
		st = mm_check<__half, __half>(R, b, n, &out->rel_error);
		break;
	case MP_DTYPE_TF32:
		st = mm_check<float, float>(R, b, n, &out->rel_error);
		break;
	default:
		st = mm_check<__nv_fp8_e4m3, __nv_bfloat16>(R, b, n, &out->rel_error);
		break;
	}
	if (st != MP_OK)
		return st;
	if (!(out->rel_error <= c->tol)) {
		snprintf(out->status, sizeof(out->status),
		         "failed its check: relative error %.3g over %d sampled entries (limit %.3g); rate not used",
		         out->rel_error, b->nsamples, c->tol);
		memset(&out->flops_per_second, 0, sizeof(out->flops_per_second));
	}
	return MP_OK;
}

/* cublasGemmEx bf16 with the default algorithm: the "best cuBLAS rate" the cuBLASLt figure is held to. */
static mp_status cublas_ref(run *R, cublasHandle_t h, int n, mm_bufs *b, mp_calib_matmul *out)
{
	float alpha = 1.0f, beta = 0.0f;
	double flops = 2.0 * n * (double)n * n;
	size_t elems = (size_t)n * n;

	out->size = (uint32_t)n;
	TRY(mm_fill<__nv_bfloat16>(R, b, elems, 23));
	CK(cudaMemsetAsync(b->D, 0xFF, elems * 2, R->stream));
	TRY(time_runs(
	    R,
	    [&]() -> mp_status {
		    cublasStatus_t e = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &alpha, b->A, CUDA_R_16BF, n,
		                                    b->B, CUDA_R_16BF, n, &beta, b->D, CUDA_R_16BF, n,
		                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
		    return e == CUBLAS_STATUS_SUCCESS ? MP_OK : blas_fail(R->err, (int)e, "cublasGemmEx", __LINE__);
	    },
	    flops, true, R->r->runs, 3, &out->flops_per_second));
	TRY((mm_check<__nv_bfloat16, __nv_bfloat16>(R, b, n, &out->rel_error)));
	if (!(out->rel_error <= 1e-2)) {
		snprintf(out->status, sizeof(out->status), "failed its check: relative error %.3g", out->rel_error);
		memset(&out->flops_per_second, 0, sizeof(out->flops_per_second));
	}
	return MP_OK;
}

static mp_status suite_matmul_body(run *R, cublasLtHandle_t lt, cublasHandle_t blas, mm_bufs *b, int n)
{
	mp_calib_gpu_results *r = R->r;
	const lt_case cases[] = {
	    {MP_DTYPE_BF16, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2, 1e-2},
	    {MP_DTYPE_FP16, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2, 1e-2},
	    {MP_DTYPE_TF32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4, 5e-3},
	    {MP_DTYPE_FP8_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 2, 1e-2},
	};
	const int ncases = (int)(sizeof(cases) / sizeof(cases[0]));
	bool fp8 = r->info.cc_major * 10 + r->info.cc_minor >= 89;
	int2 ij[MM_SAMPLES];
	uint64_t seed = 0x2545F4914F6CDD1DULL;

	for (int s = 0; s < MM_SAMPLES; s++) {
		seed ^= seed >> 12, seed ^= seed << 25, seed ^= seed >> 27;
		ij[s].x = (int)((seed * 0x2545F4914F6CDD1DULL) >> 40) % n;
		seed ^= seed >> 12, seed ^= seed << 25, seed ^= seed >> 27;
		ij[s].y = (int)((seed * 0x2545F4914F6CDD1DULL) >> 40) % n;
	}
	b->nsamples = MM_SAMPLES;
	CK(cudaMemcpyAsync(b->d_ij, ij, sizeof(ij), cudaMemcpyHostToDevice, R->stream));
	for (int k = 0; k < ncases; k++) {
		mp_calib_matmul *out = &r->matmul[cases[k].dt];

		sub(R, k, ncases + 1);
		if (cases[k].dt == MP_DTYPE_FP8_E4M3 && !fp8) {
			snprintf(out->status, sizeof(out->status),
			         "fp8 needs compute capability 8.9 or newer (this device is %d.%d)", r->info.cc_major,
			         r->info.cc_minor);
			continue;
		}
		TRY(lt_one(R, lt, &cases[k], n, b, out));
	}
	sub(R, ncases, ncases + 1);
	TRY(cublas_ref(R, blas, n, b, &r->cublas_bf16));
	r->suites_done |= MP_CALIB_MATMUL;
	return MP_OK;
}

static mp_status suite_matmul(run *R)
{
	mp_calib_gpu_results *r = R->r;
	int n = R->o->matrix_size ? (int)R->o->matrix_size : 8192;
	size_t elems = (size_t)n * n;
	cublasLtHandle_t lt = NULL;
	cublasHandle_t blas = NULL;
	mm_bufs b;
	mp_status st;

	memset(&b, 0, sizeof(b));
	b.ws_bytes = 64 * MiB;
	r->matmul_workspace_bytes = b.ws_bytes;
	TRY(dalloc(R, &b.A, elems * 4, "matmul A"));
	TRY(dalloc(R, &b.B, elems * 4, "matmul B"));
	TRY(dalloc(R, &b.D, elems * 4, "matmul D"));
	TRY(dalloc(R, &b.ws, b.ws_bytes, "matmul workspace"));
	TRY(dalloc(R, (void **)&b.d_ij, sizeof(int2) * MM_SAMPLES, "matmul samples"));
	TRY(dalloc(R, (void **)&b.d_ref, sizeof(double) * MM_SAMPLES, "matmul reference"));
	TRY(dalloc(R, (void **)&b.d_got, sizeof(double) * MM_SAMPLES, "matmul samples"));
	{
		cublasStatus_t s1 = cublasLtCreate(&lt), s2 = s1 == CUBLAS_STATUS_SUCCESS ? cublasCreate(&blas) : s1;

		if (s1 != CUBLAS_STATUS_SUCCESS || s2 != CUBLAS_STATUS_SUCCESS) {
			if (lt)
				cublasLtDestroy(lt);
			return blas_fail(R->err, (int)(s1 != CUBLAS_STATUS_SUCCESS ? s1 : s2),
			                 "cublasLtCreate/cublasCreate", __LINE__);
		}
	}
	st = cublasSetStream(blas, R->stream) == CUBLAS_STATUS_SUCCESS &&
	             cublasSetWorkspace(blas, b.ws, b.ws_bytes) == CUBLAS_STATUS_SUCCESS
	         ? suite_matmul_body(R, lt, blas, &b, n)
	         : mp_fail(R->err, MP_EINTERNAL, "", "cublasSetStream/cublasSetWorkspace failed");
	/* Finish the work that uses the workspace before the handles and buffers go. */
	(void)cudaStreamSynchronize(R->stream);
	cublasDestroy(blas);
	cublasLtDestroy(lt);
	dfree(R, b.A);
	dfree(R, b.B);
	dfree(R, b.D);
	dfree(R, b.ws);
	dfree(R, b.d_ij);
	dfree(R, b.d_ref);
	dfree(R, b.d_got);
	return st;
}

/* ----- latency ----------------------------------------------------------------------------------------- */

#define CHASE_SLOT_WORDS 32 /* one chain link per 128-byte line */

/* Builds a single random cycle over `slots` lines (Sattolo), chases it `steps` times per run. */
static mp_status chase(run *R, uint64_t span, int steps, mp_calib_stat *out)
{
	uint32_t slots = (uint32_t)(span / (CHASE_SLOT_WORDS * 4)), *succ = NULL, *d_succ = NULL, *d_big = NULL,
	         *d_out = NULL, got = 0, want = 0;
	uint64_t s = 0x853c49e6748fea9bULL ^ span;
	int warm = 0;
	mp_status st = MP_OK;

	succ = (uint32_t *)malloc(sizeof(uint32_t) * slots);
	if (succ == NULL)
		return mp_fail(R->err, MP_ENOMEM, "", "out of host memory for the pointer chase");
	{
		/* Sattolo's algorithm: a uniformly random permutation that is one single cycle. */
		uint32_t *perm = succ;

		for (uint32_t i = 0; i < slots; i++)
			perm[i] = i;
		for (uint32_t i = slots - 1; i > 0; i--) {
			uint32_t j, t;

			s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
			j = (uint32_t)(((s * 0x2545F4914F6CDD1DULL) >> 32) % i); /* j < i */
			t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
	}
	st = dalloc(R, (void **)&d_big, span, "pointer chase");
	if (st == MP_OK)
		st = dalloc(R, (void **)&d_succ, sizeof(uint32_t) * slots, "pointer chase links");
	if (st == MP_OK)
		st = dalloc(R, (void **)&d_out, sizeof(uint32_t), "pointer chase result");
	if (st == MP_OK && (cudaMemsetAsync(d_big, 0xFF, span, R->stream) != cudaSuccess ||
	                    cudaMemsetAsync(d_out, 0, sizeof(uint32_t), R->stream) != cudaSuccess))
		st = mp_fail(R->err, MP_EINTERNAL, "", "cudaMemsetAsync of the chase array failed");
	if (st == MP_OK &&
	    cudaMemcpyAsync(d_succ, succ, sizeof(uint32_t) * slots, cudaMemcpyHostToDevice, R->stream) != cudaSuccess)
		st = mp_fail(R->err, MP_EINTERNAL, "", "cudaMemcpyAsync of the chase links failed");
	if (st == MP_OK) {
		k_scatter_chain<<<1024, THREADS, 0, R->stream>>>(d_big, d_succ, slots, CHASE_SLOT_WORDS);
		if (cudaGetLastError() != cudaSuccess)
			st = mp_fail(R->err, MP_EINTERNAL, "", "k_scatter_chain launch failed");
	}
	/* Warm-up: one pass over the whole cycle when it is short (brings an L2-sized span into the L2), at most
	 * 50000 links (a 1 GiB cycle has 8 M: a full pass would take seconds); then the timed runs. */
	if (st == MP_OK) {
		warm = slots < 50000 ? (int)slots : 50000;
		k_chase<<<1, 1, 0, R->stream>>>(d_big, warm, d_out);
		st = cudaGetLastError() == cudaSuccess ? MP_OK
		                                       : mp_fail(R->err, MP_EINTERNAL, "", "k_chase launch failed");
	}
	if (st == MP_OK)
		st = time_runs(
		    R,
		    [&]() -> mp_status {
			    k_chase<<<1, 1, 0, R->stream>>>(d_big, steps, d_out);
			    return MP_OK;
		    },
		    (double)steps, false, R->r->runs, 1, out);
	if (st == MP_OK && !R->r->cancelled) {
		uint32_t j = 0;
		uint64_t total = (uint64_t)warm + (uint64_t)(R->r->runs + 1) * (uint64_t)steps; /* 1 untimed */

		if (cudaMemcpy(&got, d_out, sizeof(got), cudaMemcpyDeviceToHost) != cudaSuccess)
			st = mp_fail(R->err, MP_EINTERNAL, "", "reading the chase result failed");
		for (uint64_t k = 0; k < total; k++)
			j = succ[j];
		want = j * CHASE_SLOT_WORDS;
		if (st == MP_OK && got != want)
			st =
			    mp_fail(R->err, MP_EINTERNAL, "", "pointer chase ended at word %u, expected %u", got, want);
	}
	free(succ);
	dfree(R, d_big);
	dfree(R, d_succ);
	dfree(R, d_out);
	return st;
}

static mp_status suite_latency(run *R)
{
	mp_calib_gpu_results *r = R->r;
	uint64_t hbm = GiB, l2 = r->info.l2_cache_bytes / 8;

	if (hbm < 8 * r->info.l2_cache_bytes)
		hbm = 8 * r->info.l2_cache_bytes;
	if (hbm > r->info.free_bytes / 8)
		hbm = (r->info.free_bytes / 8) & ~(uint64_t)(MiB - 1);
	if (l2 < 1 * MiB)
		l2 = 1 * MiB;
	if (l2 > 4 * MiB)
		l2 = 4 * MiB;
	r->latency_hbm_span_bytes = hbm;
	r->latency_l2_span_bytes = l2;
	sub(R, 0, 2);
	TRY(chase(R, hbm, 20000, &r->latency_hbm));
	sub(R, 1, 2);
	TRY(chase(R, l2, 50000, &r->latency_l2));
	r->suites_done |= MP_CALIB_LATENCY;
	return MP_OK;
}

/* ----- intensity sweep --------------------------------------------------------------------------------- */

template <int M> static void launch_intensity(run *R, const float4 *src, size_t n4, int blocks)
{
	k_intensity<M><<<blocks, THREADS, 0, R->stream>>>(src, n4, 0.999f, R->d_sink);
}

static void launch_intensity_k(run *R, int k, const float4 *src, size_t n4, int blocks)
{
	switch (k) {
	case 0:
		launch_intensity<1>(R, src, n4, blocks);
		break;
	case 1:
		launch_intensity<2>(R, src, n4, blocks);
		break;
	case 2:
		launch_intensity<4>(R, src, n4, blocks);
		break;
	case 3:
		launch_intensity<8>(R, src, n4, blocks);
		break;
	case 4:
		launch_intensity<16>(R, src, n4, blocks);
		break;
	case 5:
		launch_intensity<32>(R, src, n4, blocks);
		break;
	case 6:
		launch_intensity<64>(R, src, n4, blocks);
		break;
	case 7:
		launch_intensity<128>(R, src, n4, blocks);
		break;
	case 8:
		launch_intensity<256>(R, src, n4, blocks);
		break;
	case 9:
		launch_intensity<512>(R, src, n4, blocks);
		break;
	case 10:
		launch_intensity<1024>(R, src, n4, blocks);
		break;
	case 11:
		launch_intensity<2048>(R, src, n4, blocks);
		break;
	case 12:
		launch_intensity<4096>(R, src, n4, blocks);
		break;
	default:
		launch_intensity<8192>(R, src, n4, blocks);
		break;
	}
}

static mp_status suite_intensity(run *R, const hbm_bufs *h)
{
	mp_calib_gpu_results *r = R->r;
	int blocks = R->occ_stream * (int)r->info.sm_count;
	uint64_t bytes = GiB;
	size_t n4;

	if (bytes < 8 * r->info.l2_cache_bytes)
		bytes = 8 * r->info.l2_cache_bytes;
	if (bytes > 16 * h->n4)
		bytes = 16 * h->n4;
	n4 = bytes / 16;
	r->intensity_bytes = 16 * n4;
	for (int k = 0; k < MP_CALIB_INTENSITY_COUNT; k++) {
		mp_calib_intensity_point *p = &r->intensity[k];
		int m = 1 << k; /* FMAs per 16-byte element */
		double flops = 2.0 * m * (double)n4, by = 16.0 * (double)n4;

		p->flops_per_byte = (double)m / 8.0;
		sub(R, k, MP_CALIB_INTENSITY_COUNT);
		TRY(poison_sink(R));
		TRY(time_runs(
		    R,
		    [&]() -> mp_status {
			    launch_intensity_k(R, k, h->b, n4, blocks);
			    return MP_OK;
		    },
		    flops, true, r->runs, 2, &p->flops_per_second));
		p->bytes_per_second.best = p->flops_per_second.best / p->flops_per_byte;
		p->bytes_per_second.median = p->flops_per_second.median / p->flops_per_byte;
		p->bytes_per_second.runs = p->flops_per_second.runs;
		(void)by;
		TRY(check_sink(R, (size_t)blocks * THREADS, "intensity sweep"));
	}
	r->suites_done |= MP_CALIB_INTENSITY;
	return MP_OK;
}

/* ----- fit check --------------------------------------------------------------------------------------- */

static mp_status suite_fit(run *R)
{
	mp_calib_gpu_results *r = R->r;
	const char *names[3] = {"weights", "kv_cache", "workspace"};
	uint64_t parts[3] = {R->o->fit_weights_bytes, R->o->fit_kv_cache_bytes, R->o->fit_workspace_bytes};
	void *p[3] = {NULL, NULL, NULL};
	size_t free_b = 0, total_b = 0;
	mp_status st = MP_OK;

	sub(R, 0, 1);
	if (!progress(R, 0))
		return MP_OK;
	CK(cudaDeviceSynchronize());
	CK(cudaMemGetInfo(&free_b, &total_b));
	r->fit_free_before_bytes = free_b;
	r->fit_total_bytes = total_b;
	r->fit_requested_bytes = parts[0] + parts[1] + parts[2];
	r->fit_allocated = true;
	for (int i = 0; i < 3 && st == MP_OK; i++) {
		cudaError_t e;

		if (parts[i] == 0)
			continue;
		e = cudaMalloc(&p[i], parts[i]);
		if (e == cudaErrorMemoryAllocation) {
			(void)cudaGetLastError();
			p[i] = NULL;
			r->fit_allocated = false;
			snprintf(r->fit_failed_part, sizeof(r->fit_failed_part), "%s", names[i]);
			break;
		}
		if (e != cudaSuccess) {
			p[i] = NULL;
			st = cuda_fail(R->err, e, "cudaMalloc (fit check)", __LINE__);
			break;
		}
		/* Write every byte so the memory is really backed, not just reserved. */
		e = cudaMemsetAsync(p[i], 0x5A, parts[i], R->stream);
		if (e == cudaSuccess)
			e = cudaStreamSynchronize(R->stream);
		if (e != cudaSuccess)
			st = cuda_fail(R->err, e, "cudaMemset (fit check)", __LINE__);
	}
	if (st == MP_OK && r->fit_allocated) {
		cudaError_t e = cudaMemGetInfo(&free_b, &total_b);

		if (e != cudaSuccess)
			st = cuda_fail(R->err, e, "cudaMemGetInfo (fit check)", __LINE__);
		r->fit_free_after_bytes = free_b;
	}
	/* Always freed, whatever happened above. */
	for (int i = 0; i < 3; i++)
		if (p[i])
			(void)cudaFree(p[i]);
	if (st == MP_OK)
		r->suites_done |= MP_CALIB_FIT;
	return st;
}

/* ----- the run ----------------------------------------------------------------------------------------- */

static const struct {
	uint32_t bit;
	double weight; /* rough seconds, for the progress bar */
} order[] = {
    {MP_CALIB_MEMORY, 0.2},    {MP_CALIB_HBM, 1.0}, {MP_CALIB_STRIDED, 0.6}, {MP_CALIB_L2, 0.3},
    {MP_CALIB_SMEM, 0.6},      {MP_CALIB_FMA, 0.6}, {MP_CALIB_MATMUL, 4.0},  {MP_CALIB_LATENCY, 1.5},
    {MP_CALIB_INTENSITY, 1.0}, {MP_CALIB_FIT, 1.0},
};

/* The context (created before anything is allocated, so cudaMemGetInfo sees only its cost), the stream, the
 * timing events, the sample buffer and the per-thread result sink sized for the widest grid. */
static mp_status setup_context(run *R, size_t *free_b)
{
	mp_calib_gpu_results *r = R->r;
	size_t total_b = 0;
	int occ_fma = 0, occ_smem = 0;

	CK(cudaSetDevice(0));
	CK(cudaFree(0));
	CK(cudaMemGetInfo(free_b, &total_b));
	r->info.memory_bytes = total_b;
	r->info.free_bytes = *free_b;
	r->context_bytes = total_b - *free_b;
	CK(cudaStreamCreateWithFlags(&R->stream, cudaStreamNonBlocking));
	CK(cudaEventCreate(&R->ev0));
	CK(cudaEventCreate(&R->ev1));
	R->samples = (double *)calloc(r->runs > 16 ? r->runs : 16, sizeof(double));
	if (R->samples == NULL)
		return mp_fail(R->err, MP_ENOMEM, "", "out of host memory");
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&R->occ_stream, k_copy<4, 0>, THREADS, 0));
	if (R->occ_stream < 1)
		R->occ_stream = 1;
	R->sink_floats = (size_t)R->occ_stream * r->info.sm_count * 4 * THREADS; /* the 4-wave copy grid */
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ_fma, k_fma, THREADS, 0));
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ_smem, k_smem, THREADS, 0));
	if ((size_t)occ_fma * 2 * r->info.sm_count * THREADS > R->sink_floats)
		R->sink_floats = (size_t)occ_fma * 2 * r->info.sm_count * THREADS;
	if ((size_t)occ_smem * r->info.sm_count * THREADS > R->sink_floats)
		R->sink_floats = (size_t)occ_smem * r->info.sm_count * THREADS;
	TRY(dalloc(R, (void **)&R->d_sink, R->sink_floats * sizeof(float), "per-thread results"));
	TRY(dalloc(R, (void **)&R->d_bad, sizeof(*R->d_bad), "check counter"));
	return MP_OK;
}

/* The three HBM arrays the stream suites share: 16 x L2 (at least 2 GiB, at most free / 8) unless given. */
static mp_status alloc_hbm(run *R, hbm_bufs *h, size_t free_b)
{
	mp_calib_gpu_results *r = R->r;
	uint64_t want = R->o->array_bytes;

	if (want == 0) {
		want = 16 * r->info.l2_cache_bytes;
		if (want < 2 * GiB)
			want = 2 * GiB;
		if (want > free_b / 8)
			want = free_b / 8;
	}
	want &= ~(uint64_t)(MiB - 1);
	if (want < 8 * r->info.l2_cache_bytes && R->o->array_bytes == 0)
		return mp_fail(R->err, MP_ENOMEM, "", "too little free device memory for arrays of 8x the L2");
	if (want < MiB)
		return mp_fail(R->err, MP_EINVAL, "/options/array_bytes", "array_bytes must be at least 1 MiB");
	r->array_bytes = want;
	h->n4 = want / 16;
	TRY(dalloc(R, (void **)&h->a, want, "HBM array a"));
	TRY(dalloc(R, (void **)&h->b, want, "HBM array b"));
	TRY(dalloc(R, (void **)&h->c, want, "HBM array c"));
	k_fill_pos<<<4096, THREADS, 0, R->stream>>>((float *)h->b, 4 * h->n4, 1);
	LAUNCHED();
	k_fill_pos<<<4096, THREADS, 0, R->stream>>>((float *)h->c, 4 * h->n4, 2);
	LAUNCHED();
	CK(cudaStreamSynchronize(R->stream));
	return MP_OK;
}

/* One suite. */
static mp_status run_one(run *R, uint32_t bit, hbm_bufs *h)
{
	switch (bit) {
	case MP_CALIB_MEMORY:
		return suite_memory(R);
	case MP_CALIB_HBM:
		return suite_hbm(R, h);
	case MP_CALIB_STRIDED:
		return suite_strided(R, h);
	case MP_CALIB_L2:
		return suite_l2(R, h);
	case MP_CALIB_SMEM:
		return suite_smem(R);
	case MP_CALIB_FMA:
		return suite_fma(R);
	case MP_CALIB_MATMUL:
		return suite_matmul(R);
	case MP_CALIB_LATENCY:
		return suite_latency(R);
	case MP_CALIB_INTENSITY:
		return suite_intensity(R, h);
	case MP_CALIB_FIT:
		/* The plan's bytes need the room the HBM arrays hold: give it back first. */
		dfree(R, h->a);
		dfree(R, h->b);
		dfree(R, h->c);
		memset(h, 0, sizeof(*h));
		dfree(R, R->d_sink);
		dfree(R, R->d_bad);
		R->d_sink = NULL;
		R->d_bad = NULL;
		return suite_fit(R);
	default:
		return MP_OK;
	}
}

/* The suites asked for, in the fixed order, each timed on the host clock, progress reported between them. */
static mp_status run_suites(run *R)
{
	mp_calib_gpu_results *r = R->r;
	hbm_bufs h;
	size_t free_b = 0;
	uint32_t need_hbm = MP_CALIB_HBM | MP_CALIB_STRIDED | MP_CALIB_L2 | MP_CALIB_INTENSITY;

	memset(&h, 0, sizeof(h));
	TRY(setup_context(R, &free_b));
	if (R->suites & need_hbm)
		TRY(alloc_hbm(R, &h, free_b));
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		uint32_t bit = order[i].bit;
		double t0;
		mp_status st;

		if (!(R->suites & bit))
			continue;
		R->cur_name = mp_calib_suite_name(bit);
		R->cur_weight = order[i].weight;
		sub(R, 0, 1);
		if (!progress(R, 0))
			return MP_OK;
		t0 = now_seconds();
		st = run_one(R, bit, &h);
		CK(cudaStreamSynchronize(R->stream));
		r->suite_seconds[mp_calib_suite_index(bit)] = now_seconds() - t0;
		if (st != MP_OK || r->cancelled)
			return st;
		R->done_weight += R->cur_weight;
	}
	R->cur_name = "done";
	R->cur_weight = 0;
	(void)progress(R, 1.0);
	return MP_OK;
}

static void run_release(run *R)
{
	/* After an error the context may be broken: every call here is best effort, then the reset. */
	(void)cudaDeviceSynchronize();
	for (int i = 0; i < MAX_ALLOCS; i++)
		if (R->allocs[i]) {
			(void)cudaFree(R->allocs[i]);
			R->allocs[i] = NULL;
		}
	if (R->ev0)
		(void)cudaEventDestroy(R->ev0);
	if (R->ev1)
		(void)cudaEventDestroy(R->ev1);
	if (R->stream)
		(void)cudaStreamDestroy(R->stream);
	free(R->samples);
	(void)cudaGetLastError();
	/* Give the context (and its ~0.5 GB) back: a daemon must not hold device memory between jobs. */
	(void)cudaDeviceReset();
}

extern "C" mp_status mp_calib_cuda_run(const mp_calib_gpu_options *o, const mp_calib_ctl *ctl, mp_calib_gpu_results *r,
                                       mp_error *err)
{
	run RR, *R = &RR;
	mp_status st;
	uint32_t suites = o->suites ? o->suites : MP_CALIB_GPU_DEFAULT;

	memset(r, 0, sizeof(*r));
	memset(R, 0, sizeof(*R));
	if (suites & ~(uint32_t)MP_CALIB_GPU_SUITES)
		return mp_fail(err, MP_EINVAL, "/suites",
		               "a gpu target runs the suites memory, hbm, strided, l2, smem, "
		               "fma, matmul, latency, intensity and fit only");
	if (o->runs != 0 && (o->runs < MP_CALIB_MIN_RUNS || o->runs > 1000))
		return mp_fail(err, MP_EINVAL, "/options/runs", "runs must be between %u and 1000 (got %u)",
		               MP_CALIB_MIN_RUNS, o->runs);
	if (o->matrix_size != 0 && (o->matrix_size < 256 || o->matrix_size > 16384 || o->matrix_size % 16))
		return mp_fail(err, MP_EINVAL, "/options/matrix_size",
		               "matrix_size must be a multiple of 16 between 256 and 16384 (got %u)", o->matrix_size);
	if ((suites & MP_CALIB_FIT) && o->fit_weights_bytes + o->fit_kv_cache_bytes + o->fit_workspace_bytes == 0)
		return mp_fail(err, MP_EINVAL, "/fit_plan", "the fit suite needs a plan's bytes (fit_plan)");
	st = mp_calib_cuda_probe(&r->info, err);
	if (st != MP_OK)
		return st;
	R->o = o;
	R->ctl = ctl;
	R->r = r;
	R->err = err;
	R->suites = suites;
	r->runs = o->runs ? o->runs : 20;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (suites & order[i].bit)
			R->total_weight += order[i].weight;
	st = run_suites(R);
	run_release(R);
	return st;
}
