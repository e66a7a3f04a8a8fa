/*
 * lib_util.h: the plan endpoints as library calls for tests, fuzzers and benchmarks: a JSON body through the
 * same decode (codec/) -> service -> encode (codec/) path the daemon's handlers take, without HTTP.
 */
#ifndef MP_TEST_LIB_UTIL_H
#define MP_TEST_LIB_UTIL_H

#include <cjson/cJSON.h>

#include "../service/service.h"

/* POST /v1/plan/inference (kind "inference"), /v1/plan/training ("training"), /v1/roofline ("roofline"),
 * /v1/engine-check ("engine-check") or /v1/fit ("fit") on body: *out gets the answer's JSON text as the daemon
 * sends it (heap, free(); without the newline the reply writer adds). Returns the status; err says why on
 * failure. As the daemon does, any allocation cJSON failed on the way (codec/mpc_json.h) makes it MP_ENOMEM. */
mp_status lib_answer(mps_service *svc, const char *kind, const cJSON *body, char **out, mp_error *err);

#endif
