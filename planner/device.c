/*
 * device.c: small helpers over a device profile. The profile itself is data owned by the caller.
 */
#include "memplan.h"

uint64_t mp_device_capacity_bytes(const mp_device *d)
{
	return d->usable_memory_bytes ? d->usable_memory_bytes : d->memory_bytes;
}
