/*
 * count_util.h: the parameter count of a pasted config.json, for the model readers' tests (test_models,
 * test_wrap_qformer, test_wrap_vl, test_vq).
 */
#ifndef MP_TEST_COUNT_UTIL_H
#define MP_TEST_COUNT_UTIL_H

#include "../model/model.h"

/* Reads json (a config.json's text; the test fails when it does not parse) as model.hf_config into m and counts its
 * parameters into pc. Returns MP_OK, or the reader's or the counter's status with err naming the field. */
mp_status count_text(const char *json, mp_param_count *pc, mp_model *m, mp_error *err);

#endif
