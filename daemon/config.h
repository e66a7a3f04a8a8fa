/*
 * config.h: the `serve` settings from a config file, the environment and flags, in that order of
 * precedence (flags win). One table names every setting once: its key in a config file ("max-body-bytes
 * = 1048576"), its flag (--max-body-bytes) and its environment variable (MEMPLAN_MAX_BODY_BYTES). Only
 * fills struct mpd_config; it never starts anything.
 */
#ifndef MPD_CONFIG_H
#define MPD_CONFIG_H

#include "daemon.h"

/* Sets one setting by its key (without "--"). Errors: MP_EINVAL naming the key, saying what is allowed. */
mp_status mpd_config_set(mpd_config *cfg, const char *key, const char *value, mp_error *err);

/* Reads "key = value" lines (# comments, blank lines). Errors: MP_EINVAL naming "FILE:LINE". */
mp_status mpd_config_load_file(mpd_config *cfg, const char *path, mp_error *err);

/* Applies every MEMPLAN_<KEY> environment variable that is set. Errors: MP_EINVAL naming the variable. */
mp_status mpd_config_load_env(mpd_config *cfg, mp_error *err);

/* Writes the settings' help table for the usage text: a header row, then per setting its flag, its variable and its
 * meaning with the default, in aligned columns (the meaning wrapped within 118 columns). */
void mpd_config_usage(FILE *out);

#endif /* MPD_CONFIG_H */
