/*
 * h_health.c: GET /v1/health and GET /openapi.yaml (the contract, embedded at build time).
 */
#include <stdlib.h>
#include <string.h>

#include "../kernels/calib.h"
#include "routes.h"

extern const mp_embedded_file mpd_openapi_files[];

mp_status mpd_h_health(mpd_request *req, mpd_reply *rep)
{
	cJSON *o = cJSON_CreateObject(), *db, *gpu;
	mp_calib_gpu_info gi;
	mp_status gst;

	if (o == NULL)
		return mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	cJSON_AddStringToObject(o, "status", "ok");
	cJSON_AddStringToObject(o, "version", MP_VERSION);
	db = cJSON_AddObjectToObject(o, "database");
	cJSON_AddStringToObject(db, "path", req->d->cfg.db_path);
	cJSON_AddNumberToObject(db, "schema_version", mp_store_user_version(req->d->store));
	gpu = cJSON_AddObjectToObject(o, "gpu");
	gst = mp_calib_gpu_probe(&gi, &rep->err);
	cJSON_AddBoolToObject(gpu, "available", gst == MP_OK);
	cJSON_AddBoolToObject(gpu, "kernels_built_in", mp_calib_built_in());
	if (gst == MP_OK) {
		cJSON_AddStringToObject(gpu, "name", gi.name);
		cJSON_AddNumberToObject(gpu, "memory_bytes", (double)gi.memory_bytes);
	} else {
		cJSON_AddStringToObject(gpu, "reason", rep->err.message);
	}
	memset(&rep->err, 0, sizeof(rep->err));
	rep->json = o;
	return MP_OK;
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
