/*
 * mpc_calib.h: calibration jobs as JSON: POST /v1/calibrations bodies into requests, a job (live, finished or read
 * back from the store) into its document, the record the store keeps, and the command line's table.
 */
#ifndef MPC_CALIB_H
#define MPC_CALIB_H

#include <stdio.h>

#include "../types/calib_types.h"
#include "codec.h"

/* A body: target, suites, options, fit_plan (an inference plan request whose bytes the fit check allocates: the
 * caller plans it with mps_plan_inference and mps_calib_fit_from_plan). *has_fit_plan says whether *fit_plan
 * was filled (its errors are named under "/fit_plan"). Errors: MP_EINVAL naming the field. */
mp_status mpc_calib_decode(const cJSON *body, mps_calib_request *out, mps_inference_request *fit_plan,
			   bool *has_fit_plan, mp_error *err);
/* A job's document: state, progress, timestamps, and once finished its device, results, ratios against the
 * datasheet, the bench targets, warnings and error; a past job read back from the store is its record with the
 * row's columns over it. */
void mpc_calib_job_write(mpc_out *w, const mps_calib_job *job);
/* The document as text (heap, free(); NULL when out of memory): the record the store keeps (an mps_calib_encode_fn). */
char *mpc_calib_job_text(const mps_calib_job *job);
/* The command line's table of a finished job, from its structs (figures with decimal prefixes, ratios, targets,
 * warnings). */
void mpc_calib_print_table(FILE *f, const mps_calib_job *job);

#endif /* MPC_CALIB_H */
