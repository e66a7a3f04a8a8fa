/*
 * mps_suggest.h: names people type for stored things (mps_suggest.c). A Hugging Face repo id resolves to the model preset it
 * stands for; an id nothing is stored under gets the nearest of the stored ids it is given, and the 404's words.
 * Pure over its arguments and the presets' table: the caller reads the stored ids.
 */
#ifndef MPS_SUGGEST_H
#define MPS_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>

#include "../types/types.h"

/* The Hugging Face repo ids preset `id` stands for (NULL-terminated; db/presets/model_repo_ids.json), or NULL when
 * it is no preset or has none. */
const char *const *mps_model_repo_ids(const char *id);
/* The repo ids a stored model stands for: a preset's (source "preset"), else NULL. */
const char *const *mps_stored_model_repo_ids(const mp_store_model *m);

/* The preset id a Hugging Face repo id stands for (case-insensitive), else the repo's last part lower-cased when
 * that is a valid id ("Qwen/Qwen2.5-7B" -> "qwen2.5-7b"), into id; false when neither. */
bool mps_model_repo_lookup(const char *repo, char *id, size_t len);
/* The lower-case last path component of a repo id, as an id may be spelt ("Qwen/Qwen2.5-7B" -> "qwen2.5-7b"). */
void mps_id_of_repo(const char *repo, char *out, size_t len);

/* Up to five of the n ids near `asked` (a part of them, or a few edits away), nearest first and in the given order
 * among equals, comma-separated into out ("" none). Worked example (tests/test_answers.c): "llama-3-70b" among the
 * presets gives llama-3.1-70b before llama-3-8b. */
void mps_nearest_ids(const char (*ids)[MP_STORE_ID_MAX], size_t n, const char *asked, char *out, size_t len);
/* As mps_nearest_ids, an id also matched by the names it goes by (other[i]: space-separated aliases or repo ids;
 * other NULL or an entry NULL: none); the id is what is suggested. Worked examples (tests/test_answers.c): among the
 * presets "h100-80gb" gives h100-sxm5-80gb and h100-pcie-80gb, "rtx4090" rtx-4090-24gb. */
void mps_nearest_names(const char (*ids)[MP_STORE_ID_MAX], const char *const *other, size_t n, const char *asked,
		       char *out, size_t len);

/* The 404 for `asked` (a model when models, else a device) naming pointer, with near (mps_nearest_ids; "" none)
 * as its "did you mean". Returns MP_ENOTFOUND. */
mp_status mps_not_found_near(bool models, const char *asked, const char *near, const char *pointer, mp_error *err);

#endif /* MPS_SUGGEST_H */
