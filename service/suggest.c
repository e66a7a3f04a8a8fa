/*
 * suggest.c: names people type for stored things (suggest.h). A Hugging Face repo id resolves to the model preset it
 * stands for; an id nothing is stored under gets the nearest of the stored ids it is given in its 404 ("did you
 * mean ..."). Reads nothing itself; plans nothing.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/mp_base.h"
#include "presets.h"
#include "suggest.h"

const char *const *mps_model_repo_ids(const char *id)
{
	for (const mps_repo_alias *a = mps_preset_repo_ids(); a->id; a++)
		if (strcmp(a->id, id) == 0)
			return a->repo_ids;
	return NULL;
}

const char *const *mps_stored_model_repo_ids(const mp_store_model *m)
{
	return strcmp(m->source, "preset") == 0 ? mps_model_repo_ids(m->id) : NULL;
}

void mps_id_of_repo(const char *repo, char *out, size_t len)
{
	const char *base = strrchr(repo, '/');
	size_t i;

	base = base ? base + 1 : repo;
	for (i = 0; base[i] && i + 1 < len; i++)
		out[i] = (char)tolower((unsigned char)base[i]);
	out[i] = '\0';
}

bool mps_model_repo_lookup(const char *repo, char *id, size_t len)
{
	for (const mps_repo_alias *a = mps_preset_repo_ids(); a->id; a++)
		for (size_t i = 0; a->repo_ids[i]; i++)
			if (strcasecmp(a->repo_ids[i], repo) == 0) {
				snprintf(id, len, "%s", a->id);
				return true;
			}
	mps_id_of_repo(repo, id, len);
	return mp_valid_id(id);
}

/* ----- nearest ids ------------------------------------------------------------------------------------------ */

#define MAX_SUGGESTIONS 5

/* Levenshtein distance of two lower-cased strings of at most 95 bytes (one row of the table). */
static unsigned distance(const char *a, const char *b)
{
	unsigned row[96], n = (unsigned)strlen(b);

	if (strlen(a) > 95 || n > 95)
		return 1000;
	for (unsigned j = 0; j <= n; j++)
		row[j] = j;
	for (unsigned i = 1; a[i - 1]; i++) {
		unsigned diag = row[0];

		row[0] = i;
		for (unsigned j = 1; j <= n; j++) {
			unsigned up = row[j], cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			unsigned best = diag + cost;

			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			if (up + 1 < best)
				best = up + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[n];
}

/* The words of an id ("llama-3.1-70b": llama, 3, 1, 70b) both strings share. */
static unsigned shared_words(const char *a, const char *b)
{
	unsigned n = 0;

	for (const char *p = a; *p;) {
		size_t len = strcspn(p, "-._/");

		for (const char *q = b; len && *q;) {
			size_t l2 = strcspn(q, "-._/");

			if (l2 == len && strncasecmp(p, q, len) == 0) {
				n++;
				break;
			}
			q += l2 + (q[l2] != '\0');
		}
		p += len + (p[len] != '\0');
	}
	return n;
}

/* How close a stored id is to what was asked (lower is nearer), or UINT_MAX when it is no suggestion: a stored id
 * the asked text is part of ("h100" in "h100-sxm5-80gb") comes first, then ids a few edits away (at most a third
 * of the asked length, at least 2), the more words they share the nearer ("llama-3-70b": llama-3.1-70b before
 * llama-3-8b). */
static unsigned score(const char *asked, const char *id)
{
	char a[96];
	size_t i;
	unsigned d, tol = (unsigned)(strlen(asked) / 3 > 2 ? strlen(asked) / 3 : 2), w;

	for (i = 0; asked[i] && i + 1 < sizeof(a); i++)
		a[i] = (char)tolower((unsigned char)asked[i]);
	a[i] = '\0';
	w = shared_words(a, id);
	/* one inside the other: "h100" in "h100-sxm5-80gb", "qwen2.5-7b" in "qwen2.5-7b-instruct" */
	if ((strlen(a) >= 2 && strstr(id, a)) || (strlen(id) >= 4 && strstr(a, id)))
		return 100 - (w < 50 ? w : 50);
	d = distance(a, id);
	if (d > tol)
		return UINT_MAX;
	return 1000 + 4 * d - 3 * (w < 50 ? w : 50);
}

void mps_nearest_ids(const char (*ids)[MP_STORE_ID_MAX], size_t n, const char *asked, char *out, size_t len)
{
	size_t pick[MAX_SUGGESTIONS], np = 0;
	unsigned ps[MAX_SUGGESTIONS];

	out[0] = '\0';
	if (asked == NULL || asked[0] == '\0')
		return;
	for (size_t i = 0; i < n; i++) {
		unsigned sc = score(asked, ids[i]);
		size_t k;

		if (sc == UINT_MAX)
			continue;
		/* keep the best MAX_SUGGESTIONS, ordered by score then by the order given (the store's: by id) */
		for (k = np; k > 0 && ps[k - 1] > sc; k--)
			;
		if (k == MAX_SUGGESTIONS)
			continue;
		if (np < MAX_SUGGESTIONS)
			np++;
		memmove(&pick[k + 1], &pick[k], (np - 1 - k) * sizeof(pick[0]));
		memmove(&ps[k + 1], &ps[k], (np - 1 - k) * sizeof(ps[0]));
		pick[k] = i;
		ps[k] = sc;
	}
	for (size_t k = 0; k < np; k++)
		if (!mp_list_add(out, len, ids[pick[k]]))
			break;
}

mp_status mps_not_found_near(bool models, const char *asked, const char *near, const char *pointer, mp_error *err)
{
	char shown[112], low[MP_STORE_ID_MAX];

	mps_id_of_repo(asked, low, sizeof(low));
	snprintf(shown, sizeof(shown), "%.96s", asked);
	if (models && strchr(asked, '/'))
		return mp_fail(err, MP_ENOTFOUND, pointer,
			       "no model preset stands for the repo '%s' and no model is stored as '%s'%s%s%s (GET "
			       "/v1/models lists them with the repo ids each stands for, hf_repo_ids; or post its config "
			       "as {\"hf_config\": {...}})",
			       shown, low, near[0] ? "; did you mean " : "", near, near[0] ? "?" : "");
	if (near[0])
		return mp_fail(err, MP_ENOTFOUND, pointer, "no %s with id '%s'; did you mean %s? (GET /v1/%s lists them)",
			       models ? "model" : "device", shown, near, models ? "models" : "devices");
	return mp_fail(err, MP_ENOTFOUND, pointer, "no %s with id '%s' (GET /v1/%s lists them)",
		       models ? "model" : "device", shown, models ? "models" : "devices");
}
