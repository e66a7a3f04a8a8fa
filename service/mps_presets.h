/*
 * mps_presets.h: what the binary carries of db/presets, generated at build time by tools/gen_presets (build/gen/presets.c):
 * the rows a new store is seeded with, and the Hugging Face repo ids each model preset stands for. Data only.
 */
#ifndef MPS_PRESETS_H
#define MPS_PRESETS_H

#include "../db/store.h"

/* The presets as the store takes them (db/store.h: mp_store_open). */
const mp_store_presets *mps_presets(void);

/* The Hugging Face repo ids a model preset stands for (db/presets/model_repo_ids.json, checked at build time). */
typedef struct mps_repo_alias {
	const char *id;			/* the preset's id */
	const char *const *repo_ids;	/* NULL-terminated: "meta-llama/Llama-3.1-8B-Instruct", ... */
} mps_repo_alias;
/* Every preset's aliases, ending with { NULL, NULL }. */
const mps_repo_alias *mps_preset_repo_ids(void);

#endif /* MPS_PRESETS_H */
