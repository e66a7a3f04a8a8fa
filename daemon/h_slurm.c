/*
 * h_slurm.c: POST /v1/slurm/fit-table: a /v1/fit batch answered as the text table Slurm's job_submit.lua looks jobs
 * up in (its format: codec/mpc_slurm.h; deploy/slurm/README.md): decode (the fit endpoint's decoder) -> mps_fit -> the
 * table's writer.
 */
#include <stdlib.h>

#include "../codec/codec.h"
#include "../codec/mpc_slurm.h"
#include "routes.h"

mp_status mpd_h_slurm_fit_table(mpd_request *req, mpd_reply *rep)
{
	mps_fit_request rq;
	mpc_slurm_writer *w = NULL;
	mp_status st = mpc_fit_decode(req->json, &rq, &rep->err);

	if (st == MP_OK && (w = mpc_slurm_writer_new()) == NULL)
		st = mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	if (st == MP_OK)
		st = mps_fit(req->d->svc, &rq, mpc_slurm_sink(), w, &rep->err);
	if (st == MP_OK) {
		rep->text = mpc_slurm_writer_finish(w);
		w = NULL;
		rep->text_type = "text/plain; charset=utf-8";
		if (rep->text == NULL)
			st = mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	}
	mpc_slurm_writer_free(w);
	mpc_fit_request_free(&rq);
	return st;
}
