/*
 * h_health.c: GET /v1/health and GET /openapi.yaml (the contract, embedded at build time). The GPU is probed
 * once per process by the service, not on every poll.
 */
#include <stdlib.h>
#include <string.h>

#include "../codec/codec.h"
#include "routes.h"

extern const mp_embedded_file mpd_openapi_files[];

mp_status mpd_h_health(mpd_request *req, mpd_reply *rep)
{
	mps_health h;

	mps_health_get(req->d->svc, &h);
	{
		mpc_out w;

		mpc_out_init(&w);
		mpc_health_write(&w, &h);
		return mpd_reply_json(rep, &w);
	}
}

mp_status mpd_h_openapi(mpd_request *req, mpd_reply *rep)
{
	(void)req;
	rep->text = strdup(mpd_openapi_files[0].data);
	if (rep->text == NULL)
		return mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	rep->text_type = "application/yaml";
	return MP_OK;
}
