/*
 * lib_util.h: the plan endpoints as library calls for tests, fuzzers and benchmarks: a JSON body through the
 * same decode (codec/) -> service -> encode (codec/) path the daemon's handlers take, without HTTP.
 */
#ifndef MP_TEST_LIB_UTIL_H
#define MP_TEST_LIB_UTIL_H

#include <cjson/cJSON.h>

#include "../service/service.h"

/* POST /v1/plan/inference (kind "inference"), /v1/plan/training ("training"), /v1/roofline ("roofline"),
 * /v1/engine-check ("engine-check") or /v1/fit ("fit") on body: *out gets the answer document (caller owns it; fit's is parsed back from its text).
 * Returns the status; err says why on failure. As the daemon does, any allocation cJSON failed on the way
 * (codec/json.h) makes it MP_ENOMEM. */
mp_status lib_answer(mps_service *svc, const char *kind, const cJSON *body, cJSON **out, mp_error *err);

#endif
