/*
 * rows.h: the store's rows as plain structs: a device profile, a stored model, a calibration run, an audit entry,
 * and the filters of a listing. db/store.c fills them; the layers above read them (the API shows a device profile
 * as it is stored), and this header is all they need of db/ to do so: no function here touches SQLite, so a file
 * that includes it alone links without the store.
 */
#ifndef MP_STORE_ROWS_H
#define MP_STORE_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../planner/memplan.h"

#define MP_STORE_ID_MAX 64
#define MP_STORE_MAX_ALIASES 8		/* aliases per device */
#define MP_STORE_ALIAS_MAX 96		/* bytes of one alias, NUL included */

typedef struct mp_store_device {
	char id[MP_STORE_ID_MAX];
	char name[128];
	char vendor[64];
	char architecture[64];
	char form_factor[96];
	char memory_type[32];
	char source[16];		/* "datasheet", "measured" or "user" */
	char source_note[2048];
	char measured_at[32];		/* ISO 8601 UTC, "" when not measured */
	char created_at[32];
	char updated_at[32];
	char interconnect_json[1024];	/* JSON object text, "" when unknown */
	double tdp_watts;		/* 0 = unknown */
	mp_device hw;			/* the planner's view */
	/* schema v3; 0 or "" = unknown */
	char linked_device_id[MP_STORE_ID_MAX];	/* a measured profile: the datasheet profile it was measured on */
	double base_clock_hz;
	double memory_clock_hz;
	double fma_flops_per_second;	/* fp32 vector FMA rate (CUDA cores / stream processors), not a matrix rate */
	double memory_latency_seconds;	/* one dependent DRAM load (pointer chase beyond L2) */
	/* schema v6: names the device goes by elsewhere (table device_aliases), matched by mp_alias_key (core/).
	 * By convention the first is the NVML name ("NVIDIA H100 80GB HBM3"), from which NVIDIA GPU Feature
	 * Discovery's nvidia.com/gpu.product (spaces to '-'), Slurm's AutoDetect=nvml GRES type (lowercase, spaces
	 * to '_') and DCGM's modelName (the name itself) all follow; others: GKE accelerator names, site names. */
	char aliases[MP_STORE_MAX_ALIASES][MP_STORE_ALIAS_MAX];
	size_t naliases;
	/* schema v5 */
	char kind[16];			/* "gpu", "cpu" or "accelerator" (fit and capacity consider GPUs by default);
					   "" = "gpu" */
	uint64_t nvml_memory_bytes;	/* NVML's total (nvidia-smi, GPU Feature Discovery's nvidia.com/gpu.memory in
					   MiB, DCGM): above the CUDA total by what the driver hides; 0 = unknown */
	char usable_memory_source[16];	/* how usable_memory_bytes is known: "measured" (cudaMemGetInfo here),
					   "published" (a real card's reading, cited in source_note), "derived" (from
					   related figures, said how in source_note); "" = not said */
} mp_store_device;

/* The device kinds a profile may have, as a mask for filters (MP_STORE_KIND_GPU is the default everywhere). */
#define MP_STORE_KIND_GPU 1u
#define MP_STORE_KIND_CPU 2u
#define MP_STORE_KIND_ACCELERATOR 4u
#define MP_STORE_KIND_ALL 7u
/* The kind bit of a profile's kind ("" counts as gpu); 0 for a name that is none of them. */
static inline unsigned mp_store_kind_bit(const char *kind)
{
	if (kind == NULL || kind[0] == '\0' || strcmp(kind, "gpu") == 0)
		return MP_STORE_KIND_GPU;
	if (strcmp(kind, "cpu") == 0)
		return MP_STORE_KIND_CPU;
	if (strcmp(kind, "accelerator") == 0)
		return MP_STORE_KIND_ACCELERATOR;
	return 0;
}

typedef struct mp_store_calibration {
	char id[40];			/* job id */
	char target[32];		/* "gpu:0", "cpu" */
	char state[16];			/* "queued", "running", "succeeded", "failed", "cancelled" */
	char device_id[MP_STORE_ID_MAX];	/* measured profile it produced, "" until then */
	char datasheet_id[MP_STORE_ID_MAX];	/* the datasheet profile it is compared with, "" if none */
	char created_at[32];
	char finished_at[32];		/* "" while not finished */
	char *results_json;		/* heap, owned; NULL or a JSON document; free with mp_store_calibration_free */
} mp_store_calibration;

typedef struct mp_store_model {
	char id[MP_STORE_ID_MAX];
	char model_type[32];
	char source[16];		/* "preset" or "user" */
	char created_at[32];
	char updated_at[32];
	uint64_t parameters;
	char *config_json;		/* heap, owned by the struct: release with mp_store_model_free */
} mp_store_model;

/* Filters of a device listing; NULL / 0 members match everything. */
typedef struct mp_store_device_filter {
	const char *vendor;		/* exact, case-insensitive ("nvidia" matches "NVIDIA") */
	const char *source;		/* "datasheet", "measured" or "user" */
	uint64_t min_memory_bytes;	/* memory_bytes >= this */
	unsigned kinds;			/* MP_STORE_KIND_* mask; 0 = every kind */
} mp_store_device_filter;

typedef struct mp_store_model_filter {
	const char *model_type;		/* NULL = any */
	const char *source;		/* "preset" or "user"; NULL = any */
} mp_store_model_filter;

/* One row of the audit log: one per write, in the write's own transaction. */
typedef struct mp_store_audit {
	int64_t seq;			/* increasing */
	char at[32];			/* ISO 8601 UTC with milliseconds */
	char actor[64];
	char action[16];		/* "create", "replace", "delete", "preset" */
	char kind[16];			/* "device", "model" */
	char resource_id[MP_STORE_ID_MAX];
} mp_store_audit;

/*
 * One observation (schema v8, table observations): what a running engine reported at start-up beside what memplan
 * predicted for the same launch. Append-only: a row is never changed. Texts "" and the term's numbers 0 when the
 * row has no term.
 */
typedef struct mp_store_observation {
	int64_t id;			/* set by the store, increasing */
	char observed_at[32];		/* ISO 8601 UTC */
	char key[200];			/* the reporter's idempotency key (one row per key), "" = none */
	char engine[16];		/* "vllm", "sglang", "trtllm" */
	char engine_version[32];	/* as reported ("0.11.0"), "" = unknown */
	char version_line[16];		/* its major.minor ("0.11"), "" = unknown */
	char device_id[MP_STORE_ID_MAX];
	char model_id[MP_STORE_ID_MAX];
	char node[254];
	char namespace_[64];
	char pod[254];
	char source[16];		/* "metrics" or "log" */
	char settings_json[2048];	/* the plan request the launch stands for, compact JSON ("" = none) */
	char figure[40];		/* "num_gpu_blocks", "kv_cache_tokens" */
	double reported, predicted, error_ratio;
	char term[32];			/* "non_torch_bytes", "context_bytes"; "" = the figure measures none */
	int64_t term_observed_bytes;	/* what the reported figure implies for the term */
	int64_t term_modelled_bytes;	/* what memplan's model has for it, observations aside */
	int64_t term_resolution_bytes;	/* the figure's granularity in bytes */
} mp_store_observation;

/* Filters of an observation listing; NULL members match everything. */
typedef struct mp_store_observation_filter {
	const char *engine, *device_id, *model_id;
} mp_store_observation_filter;

/* A term's evidence, newest first: per observation what was implied, modelled, and the resolution. */
typedef struct mp_store_term_sample {
	int64_t observed_bytes, modelled_bytes, resolution_bytes;
} mp_store_term_sample;

/* One (engine, version, device, model, figure) group of observations and its size. */
typedef struct mp_store_observation_group {
	char engine[16], engine_version[32], device_id[MP_STORE_ID_MAX], model_id[MP_STORE_ID_MAX], figure[40];
	uint64_t count;
} mp_store_observation_group;

#endif /* MP_STORE_ROWS_H */
