/*
 * calib_ipc.h: the wire between memplan and its GPU helper (kernels/, private). The CUDA suites run in their own
 * process, build/memplan-gpu (gpu_helper.c + calib_gpu.cu), so that neither the daemon nor the CLI maps the CUDA
 * runtime, cuBLASLt or a CUDA context: the helper is started when a GPU probe or calibration is asked for and
 * exits when it has answered. calib_gpu_client.c is memplan's side; both sides are built from this header in one
 * build, and the first message says which layout the helper speaks so a stale helper is refused, never misread.
 *
 * One AF_UNIX stream socket, the helper's stdin and stdout. Each message is a header and `length` bytes of
 * payload, in the host's byte order and the structs' own layout (one machine, one build):
 *   helper -> memplan  HELLO (mp_calib_ipc_hello), then PROGRESS* and one PROBE_RESULT or RUN_RESULT;
 *   memplan -> helper  one PROBE or RUN (mp_calib_gpu_options) request, then at most one CANCEL.
 * End of file from memplan counts as CANCEL (memplan went away: the helper stops, frees the GPU and exits).
 * No JSON, no store, no HTTP: plain structs only.
 */
#ifndef MP_CALIB_IPC_H
#define MP_CALIB_IPC_H

#include <stddef.h>
#include <stdint.h>

#include "calib.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MP_CALIB_IPC_MAGIC 0x4d504748u /* "MPGH" */
/* Bumped whenever a message's meaning changes; the struct sizes in HELLO catch layout changes. */
#define MP_CALIB_IPC_VERSION 1u

typedef enum mp_calib_ipc_kind {
	MP_CALIB_IPC_HELLO = 1,        /* helper: mp_calib_ipc_hello */
	MP_CALIB_IPC_PROBE = 2,        /* memplan: no payload */
	MP_CALIB_IPC_RUN = 3,          /* memplan: mp_calib_gpu_options */
	MP_CALIB_IPC_CANCEL = 4,       /* memplan: no payload */
	MP_CALIB_IPC_PROGRESS = 5,     /* helper: mp_calib_ipc_progress */
	MP_CALIB_IPC_PROBE_RESULT = 6, /* helper: mp_calib_ipc_probe_result */
	MP_CALIB_IPC_RUN_RESULT = 7,   /* helper: mp_calib_ipc_run_result */
} mp_calib_ipc_kind;

typedef struct mp_calib_ipc_header {
	uint32_t magic;  /* MP_CALIB_IPC_MAGIC */
	uint32_t kind;   /* mp_calib_ipc_kind */
	uint32_t length; /* payload bytes that follow */
} mp_calib_ipc_header;

typedef struct mp_calib_ipc_hello {
	uint32_t version;      /* MP_CALIB_IPC_VERSION */
	uint32_t options_size; /* sizeof(mp_calib_gpu_options) */
	uint32_t info_size;    /* sizeof(mp_calib_gpu_info) */
	uint32_t results_size; /* sizeof(mp_calib_gpu_results) */
	uint32_t error_size;   /* sizeof(mp_error) */
	int32_t pid;           /* the helper's process id (for the log) */
} mp_calib_ipc_hello;

typedef struct mp_calib_ipc_progress {
	double fraction; /* 0 .. 1 of the whole run */
	char suite[32];  /* the suite measuring now ("hbm", ..., "done") */
} mp_calib_ipc_progress;

typedef struct mp_calib_ipc_probe_result {
	int32_t status; /* mp_status of mp_calib_cuda_probe */
	mp_error err;
	mp_calib_gpu_info info;
} mp_calib_ipc_probe_result;

typedef struct mp_calib_ipc_run_result {
	int32_t status; /* mp_status of mp_calib_cuda_run */
	mp_error err;
	mp_calib_gpu_results results;
} mp_calib_ipc_run_result;

/* The largest payload either side accepts. */
#define MP_CALIB_IPC_MAX_PAYLOAD sizeof(mp_calib_ipc_run_result)

/* The HELLO this build sends and expects. */
void mp_calib_ipc_hello_fill(mp_calib_ipc_hello *h, int32_t pid);

/* Writes one message (header + payload, payload may be NULL when length is 0) to fd, retrying on EINTR and
 * short writes, without raising SIGPIPE on a socket whose peer has gone. 0 on success, else an errno value. */
int mp_calib_ipc_send(int fd, uint32_t kind, const void *payload, uint32_t length);

/* Reads one message from fd into *h and buf (cap bytes). 0 on success; -1 at end of file before a header;
 * otherwise an errno value (EPROTO for a bad magic, EMSGSIZE for a payload over cap, EPIPE for end of file in
 * the middle of a message). */
int mp_calib_ipc_recv(int fd, mp_calib_ipc_header *h, void *buf, size_t cap);

/* The helper's side of the two entry points (calib_gpu.cu): the real CUDA work, in the helper's process. Same
 * contracts as mp_calib_gpu_probe and mp_calib_gpu_run in calib.h. */
mp_status mp_calib_cuda_probe(mp_calib_gpu_info *info, mp_error *err);
mp_status mp_calib_cuda_run(const mp_calib_gpu_options *o, const mp_calib_ctl *ctl, mp_calib_gpu_results *r,
                            mp_error *err);

/* memplan's side, for tests: mp_calib_gpu_probe / mp_calib_gpu_run through the helper at `path` (NULL: the one
 * calib.h's lookup finds), whatever the build. */
mp_status mp_calib_helper_probe(const char *path, mp_calib_gpu_info *info, mp_error *err);
mp_status mp_calib_helper_run(const char *path, const mp_calib_gpu_options *o, const mp_calib_ctl *ctl,
                              mp_calib_gpu_results *r, mp_error *err);

#ifdef __cplusplus
}
#endif

#endif /* MP_CALIB_IPC_H */
