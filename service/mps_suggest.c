/*
 * mps_suggest.c: names people type for stored things (mps_suggest.h). A Hugging Face repo id resolves to the model preset it
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
#include "mps_presets.h"
#include "mps_suggest.h"

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

/* An id's words: runs of letters and runs of digits, lower-cased, separators dropped ("h100-sxm5-80gb": h, 100,
 * sxm, 5, 80, gb; "rtx4090": rtx, 4090). Returns how many (at most MAX_WORDS); `compact` gets them joined. */
#define MAX_WORDS 16
typedef struct words {
	size_t n;
	char w[MAX_WORDS][24];
	char compact[96];
} words;

static void words_of(const char *s, words *out)
{
	size_t c = 0;

	out->n = 0;
	out->compact[0] = '\0';
	while (*s) {
		size_t k = 0;
		bool digit;

		if (!isalnum((unsigned char)*s)) {
			s++;
			continue;
		}
		digit = isdigit((unsigned char)*s) != 0;
		while (*s && isalnum((unsigned char)*s) && (isdigit((unsigned char)*s) != 0) == digit) {
			char ch = (char)tolower((unsigned char)*s++);

			if (k + 1 < sizeof(out->w[0]))
				out->w[out->n < MAX_WORDS ? out->n : MAX_WORDS - 1][k++] = ch;
			if (c + 1 < sizeof(out->compact))
				out->compact[c++] = ch;
		}
		if (out->n < MAX_WORDS) {
			out->w[out->n][k] = '\0';
			out->n++;
		}
	}
	out->compact[c] = '\0';
}

/*
 * How close a stored id (or one of its aliases) is to what was asked, lower is nearer; UINT_MAX when it is no
 * suggestion. Nearest: every word asked is one of the id's ("h100-80gb" -> h100-sxm5-80gb, h100-pcie-80gb;
 * "rtx4090" -> rtx-4090-24gb; "llama-70b" -> llama-3.1-70b), fewer extra words first; then a few edits away once the
 * separators are dropped (at most a quarter of the asked letters, at least 1: "lama-3-8b" -> llama-3-8b); then ids
 * sharing at least two words and two thirds of those asked.
 */
static unsigned score(const words *a, const char *id)
{
	words b;
	unsigned shared = 0, d, tol;

	words_of(id, &b);
	if (a->n == 0 || b.n == 0)
		return UINT_MAX;
	for (size_t i = 0; i < a->n; i++)
		for (size_t j = 0; j < b.n; j++)
			if (strcmp(a->w[i], b.w[j]) == 0) {
				shared++;
				break;
			}
	if (shared == a->n)
		return 100 + 10 * (unsigned)(b.n - a->n) + (unsigned)strlen(b.compact) / 4;
	tol = strlen(a->compact) / 4 > 1 ? (unsigned)(strlen(a->compact) / 4) : 1;
	d = distance(a->compact, b.compact);
	if (d <= tol)
		return 1000 + 50 * d;
	if (shared >= 2 && 3 * shared >= 2 * a->n)
		return 5000 - 10 * shared;
	return UINT_MAX;
}

void mps_nearest_ids(const char (*ids)[MP_STORE_ID_MAX], size_t n, const char *asked, char *out, size_t len)
{
	mps_nearest_names(ids, NULL, n, asked, out, len);
}

void mps_nearest_names(const char (*ids)[MP_STORE_ID_MAX], const char *const *other, size_t n, const char *asked,
		       char *out, size_t len)
{
	size_t pick[MAX_SUGGESTIONS], np = 0;
	unsigned ps[MAX_SUGGESTIONS];
	words a;

	out[0] = '\0';
	if (asked == NULL || asked[0] == '\0')
		return;
	words_of(asked, &a);
	for (size_t i = 0; i < n; i++) {
		unsigned sc = score(&a, ids[i]);

		/* the names it also goes by ("nvidia-h100-80gb-hbm3 nvidia-h100"), space-separated */
		for (const char *p = other ? other[i] : NULL; p && *p;) {
			char one[MP_STORE_ALIAS_MAX];
			size_t k = strcspn(p, " ");
			unsigned so;

			snprintf(one, sizeof(one), "%.*s", (int)(k < sizeof(one) - 1 ? k : sizeof(one) - 1), p);
			so = score(&a, one);
			if (so < sc)
				sc = so;
			p += k + (p[k] == ' ');
		}
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
	/* only the nearest kind of match: ids holding every word asked hide the ones a few edits away, and those the ones
	 * that merely share words */
	for (size_t k = 0; k < np; k++)
		if ((ps[k] < 1000) != (ps[0] < 1000) || (ps[k] < 5000) != (ps[0] < 5000) ||
		    !mp_list_add(out, len, ids[pick[k]]))
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
