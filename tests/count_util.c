/* count_util.c: see count_util.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "count_util.h"

mp_status count_text(const char *json, mp_param_count *pc, mp_model *m, mp_error *err)
{
	cJSON *cfg = cJSON_Parse(json);
	mp_status st;

	assert_non_null(cfg);
	st = mpm_from_hf(cfg, "/model/hf_config", m, err);
	if (st == MP_OK)
		st = mp_count_parameters(m, pc, err);
	cJSON_Delete(cfg);
	return st;
}
