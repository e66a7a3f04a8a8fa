/*
 * mpc_slurm.h: the fit table Slurm's job_submit.lua reads (deploy/slurm/): the answer of a /v1/fit batch as plain text
 * the plugin parses itself (never loads as code: Debian 12's Slurm runs its plugins on Lua 5.1, whose loadfile has
 * no sandbox). slurmctld runs job_submit under its locks, so the plugin looks a job up in this table instead of
 * asking memplan over the network. Calls nothing.
 *
 * The format, version 2 (one record a line, fields separated by one blank; in a field every byte that is a
 * control character, a blank, '%' or DEL is written as %XX, two uppercase hex digits, as RFC 3986 percent-encoding):
 *   memplan-slurm-fit-table 2              the first line
 *   # ...                                  comments
 *   gpu_counts 1 2 4 8                     the GPU counts asked about (per job, as /v1/fit's gpu_counts)
 *   job ID KIND MODEL                      a job class: its id, "inference" or "training", its model's stored id
 *                                          ("inline" for a model given inline)
 *   min_gpus ID PROFILE N|none             the smallest of gpu_counts the job fits with on the device profile
 *   gres_type TYPE PROFILE                 the GRES type Slurm's AutoDetect=nvml gives the profile's GPU: its NVML
 *                                          name lowercased, blanks as '_' (gpu_common_underscorify_tolower in
 *                                          SchedMD/slurm src/plugins/gpu/common/gpu_common.c): "NVIDIA H100 80GB
 *                                          HBM3" -> "nvidia_h100_80gb_hbm3"
 *   end BYTES ADLER32                      the last line: the number of bytes before it, and their Adler-32
 *                                          (RFC 1950 section 8, zlib's adler32()) as 8 lowercase hex digits
 * A reader refuses a file whose first or last line is not these, so a half-written or damaged table is never used.
 */
#ifndef MPC_SLURM_H
#define MPC_SLURM_H

#include "../types/types.h"

typedef struct mpc_slurm_writer mpc_slurm_writer;

/* A writer for mps_fit (pass mpc_slurm_sink() and the writer as ctx). NULL when out of memory. */
mpc_slurm_writer *mpc_slurm_writer_new(void);
const mps_fit_sink *mpc_slurm_sink(void);
/* The table's text (heap, free()) once mps_fit returned MP_OK, its last line the "end" record; frees the writer.
 * NULL when out of memory. */
char *mpc_slurm_writer_finish(mpc_slurm_writer *w);
void mpc_slurm_writer_free(mpc_slurm_writer *w);

/* s as one field of the table into out: bytes 0x00-0x20, '%' and 0x7f as %XX, the rest as they are ("big 70b%" ->
 * "big%2070b%25"). Always NUL-terminated; false (out "") when it does not fit in len bytes. */
bool mpc_slurm_field(const char *s, char *out, size_t len);

#endif /* MPC_SLURM_H */
