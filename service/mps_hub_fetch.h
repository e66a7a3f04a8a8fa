/*
 * mps_hub_fetch.h: the Hub fetch (mps_hub.c) for service.c's model references; internal to service/.
 */
#ifndef MPS_HUB_FETCH_H
#define MPS_HUB_FETCH_H

#include "../hub/hub.h"
#include "service.h"

/*
 * repo at revision from the Hub h (mps_hub.c): config.json (naming the commit), the index when there is one, each shard's
 * first 8 + N bytes by range requests; a commit the daemon's hub cache holds is read from it (*from_cache). What was
 * fetched is kept in that cache. Owned by the caller: *out (mph_repo_files_free, also after an error). Errors:
 * mph_hub_get's (MP_ENOTFOUND, MP_EUPSTREAM naming the repo), the index's (MP_EPARSE, MP_EINVAL), MP_ENOMEM.
 */
mp_status mps_hub_fetch_repo(const mph_hub *h, const char *repo, const char *revision, mph_repo_files *out,
			     bool *from_cache, mp_error *err);

#endif /* MPS_HUB_FETCH_H */
