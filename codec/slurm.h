/*
 * slurm.h: the fit table Slurm's job_submit.lua reads (deploy/slurm/): the answer of a /v1/fit batch as a Lua chunk
 * of data, `return { ... }`, which job_submit.lua loads with loadfile(path, "t", {}) (text only, an empty
 * environment: nothing in it can call anything). slurmctld runs job_submit under its locks, so the plugin looks a
 * job up in this table instead of asking memplan over the network. Calls nothing.
 *
 * The table: format "memplan-slurm-fit-table", version 1, gpu_counts, jobs[id] = { model, kind, min_gpus =
 * { [profile] = smallest fitting count, or false when none of gpu_counts fits } }, and gres_types[type] = profile
 * for the GRES type names Slurm's AutoDetect=nvml gives the profiles' GPUs: each alias with a blank (an NVML name)
 * lowercased, blanks as '_' (gpu_common_underscorify_tolower in SchedMD/slurm src/plugins/gpu/common/gpu_common.c):
 * "NVIDIA H100 80GB HBM3" -> "nvidia_h100_80gb_hbm3".
 */
#ifndef MPC_SLURM_H
#define MPC_SLURM_H

#include "../types/types.h"

typedef struct mpc_slurm_writer mpc_slurm_writer;

/* A writer for mps_fit (pass mpc_slurm_sink() and the writer as ctx). NULL when out of memory. */
mpc_slurm_writer *mpc_slurm_writer_new(void);
const mps_fit_sink *mpc_slurm_sink(void);
/* The Lua text (heap, free()) once mps_fit returned MP_OK; frees the writer. NULL when out of memory. */
char *mpc_slurm_writer_finish(mpc_slurm_writer *w);
void mpc_slurm_writer_free(mpc_slurm_writer *w);

/* s as a Lua string literal ("..." with \\, \", and every byte outside printable ASCII as \ddd) into out
 * (always NUL-terminated; false when it does not fit). */
bool mpc_lua_quote(const char *s, char *out, size_t len);

#endif /* MPC_SLURM_H */
