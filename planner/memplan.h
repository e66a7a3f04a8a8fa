/*
 * memplan.h: the planner's whole public contract.
 *
 * The planner is a pure library: structs in, structs out. It does no I/O, keeps no globals, reads no clock
 * and never allocates; every result goes into a struct the caller owns. It knows nothing of JSON, HTTP or
 * SQLite: the daemon, the CLI and the tests are adapters around it. Byte counts are exact unsigned 64-bit
 * integers computed with overflow checks (an overflow is bad input: MP_EOVERFLOW); rates and times are
 * doubles. GB means 1e9 bytes and GiB 2^30 bytes; the planner itself only ever speaks in bytes.
 */
#ifndef MEMPLAN_H
#define MEMPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MP_VERSION "0.1.0"

#include "mp_core.h"
#include "mp_model.h"
#include "mp_device.h"
#include "mp_inference.h"
#include "mp_engine.h"
#include "mp_ggml.h"
#include "mp_llamacpp.h"
#include "mp_training.h"
#include "mp_roofline.h"

#endif /* MEMPLAN_H */
