/*
 * mpc_json.h: JSON text in and out. Request bodies parsed strictly into cJSON trees; every answer written by one
 * writer (mpc_out: member by member into a growing buffer, strings escaped by cJSON's printer, numbers exact); the
 * UTF-8 checks every echoed string goes through. The one place numbers are turned into text.
 */
#ifndef MPC_JSON_H
#define MPC_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "../core/mp_base.h"

/* Parses a request body, which must be NUL-terminated at body[len]; MP_EPARSE with the position of the error when it
 * is not JSON, MP_EINVAL when the top level is not an object, when a string holds U+0000, or when a member name
 * appears twice in one object (naming the repeated member, e.g. "/model/hf_config/num_hidden_layers"). The result
 * is owned by the caller (cJSON_Delete). */
mp_status mpc_parse_body(const char *body, size_t len, cJSON **out, mp_error *err);
/* A member name given twice in one object anywhere in v, as mpc_parse_body refuses it: true with the JSON pointer
 * of the repeat below v appended to ptr ("/metadata/annotations/x") and *status MP_EINVAL, or true with *status
 * MP_ENOMEM when it could not look; false when every name is given once. */
bool mpc_find_duplicate(const cJSON *v, char *ptr, size_t cap, mp_status *status);

/*
 * The offset of the first byte of s[0..len) that is not part of a well-formed UTF-8 sequence (RFC 3629:
 * no overlong forms, no surrogates, nothing above U+10FFFF), or len when all of it is valid.
 */
size_t mpc_utf8_invalid_at(const char *s, size_t len);

/* Copies src into dst (size cap, NUL-terminated) replacing every byte of an ill-formed UTF-8 sequence by '?',
 * so text that echoes a request can always be sent as JSON. Cuts only at a character boundary. */
void mpc_utf8_sanitize(char *dst, size_t cap, const char *src);

/*
 * Trees of what comes in (request bodies, stored documents a patch edits, the request bodies some decoders assemble
 * to decode through one field table); every answer is written by the writer below (mpc_out), never built as a
 * tree. mpc_number is how a number of an answer reads back as a tree (mpc_parse_exact): a whole number of
 * magnitude up to 2^53 (MP_MAX_PLAN_BYTES) as a raw item holding its exact digits, other values as cJSON numbers
 * (cJSON prints numbers with "%1.15g": 1978.9e12 would read 1.9789e+15); -0 stays a number. NULL when out of
 * memory. Worked example (tests/test_codec.c): mpc_number(1978.9e12) prints 1978900000000000.
 */
cJSON *mpc_number(double v);
/*
 * Attach item to obj under key / to the end of arr / under key replacing any member of that name. On any failure
 * (item NULL, container NULL, cJSON out of memory copying the key) item is deleted, so a caller never leaks it;
 * returns item, or NULL on failure (the failure is also counted by mpc_alloc_failures when it was an allocation).
 */
cJSON *mpc_add_item(cJSON *obj, const char *key, cJSON *item);
cJSON *mpc_append(cJSON *arr, cJSON *item);
cJSON *mpc_set_item(cJSON *obj, const char *key, cJSON *item);

/* Prints doc as JSON text (pretty when `pretty`, tab-indented as cJSON does) followed by nothing. Never changes doc.
 * Returns heap text (free with cJSON_free) or NULL (no memory). */
char *mpc_print(const cJSON *doc, bool pretty);

/* JSON text printed again (pretty when `pretty`) with the numbers as mpc_print writes them: the same digits, so
 * mpc_reprint(mpc_print(doc, false), true) is mpc_print(doc, true) byte for byte. Heap text (cJSON_free) or NULL
 * when json does not parse or memory runs out. Borrowed: json. */
char *mpc_reprint(const char *json, bool pretty);

/* doc as a client reads it: printed and parsed back, so its numbers are cJSON numbers again (a document built
 * here holds whole numbers as raw digits, which the decoders do not take). Caller owns the copy; NULL when out of
 * memory. Borrowed: doc. */
cJSON *mpc_as_parsed(const cJSON *doc);

/* ----- answers written as text ---------------------------------------------------------------------------- */

/*
 * mpc_out: an answer's JSON text written straight into one growing buffer, member by member in document order: the
 * one JSON writer of every answer (no tree is built, printed and freed: about 1,500 instructions per member with a
 * tree, about 100 here). This file lays out the text only: numbers are printed as mpc_number would hold them (exact
 * digits for whole numbers up to 2^53, otherwise cJSON's own number printer), strings by cJSON's escaping unless
 * they hold nothing to escape (then copied as they are), so the bytes are those mpc_print gives for the equivalent
 * tree (tests/test_codec.c compares them). Keys are the encoders' own names (literals, and names the decoders
 * checked: dtype names, node names), written as they are.
 *
 * A member is written with its key inside an object and with key NULL inside an array or at the top. Nesting is at
 * most MPC_OUT_MAX_DEPTH. Out of memory is sticky: every later call does nothing and mpc_out_finish returns NULL.
 * The caller owns *o (mpc_out_init, then mpc_out_finish or mpc_out_free).
 * Worked example: mpc_w_obj(o, NULL); mpc_w_u64(o, "a", 1); mpc_w_arr(o, "b"); mpc_w_num(o, NULL, 0.5);
 * mpc_w_end(o); mpc_w_end(o) writes {"a":1,"b":[0.5]}.
 */
#define MPC_OUT_MAX_DEPTH 24

typedef struct mpc_out {
	char *buf;
	size_t len, cap;
	bool failed;			/* out of memory (or nesting too deep): the text is incomplete */
	int depth;
	bool more[MPC_OUT_MAX_DEPTH];	/* a value was written at this depth: the next one needs a comma */
	char close[MPC_OUT_MAX_DEPTH];	/* '}' or ']' */
} mpc_out;

void mpc_out_init(mpc_out *o);
/* The text (heap, NUL-terminated, free with free()) and its length; NULL when anything failed or a container is
 * still open. Releases the buffer either way. */
char *mpc_out_finish(mpc_out *o, size_t *len);
void mpc_out_free(mpc_out *o);
/* The document o holds, as a client reads it: its text finished (o released) and parsed by cJSON (numbers as cJSON
 * numbers). For callers that read an answer's members (tests, benchmarks). NULL when anything failed. */
cJSON *mpc_out_parse(mpc_out *o);
/* Takes the bytes written so far out of o (heap, NUL-terminated; the caller frees them), leaving o empty but open
 * at the same nesting: a streamed answer hands its text over piece by piece. NULL (and *len 0) when nothing was
 * written or memory ran out. */
char *mpc_out_take(mpc_out *o, size_t *len);

void mpc_w_obj(mpc_out *o, const char *key);
void mpc_w_arr(mpc_out *o, const char *key);
void mpc_w_end(mpc_out *o);
void mpc_w_u64(mpc_out *o, const char *key, uint64_t v);
void mpc_w_i64(mpc_out *o, const char *key, int64_t v);
void mpc_w_num(mpc_out *o, const char *key, double v);
void mpc_w_str(mpc_out *o, const char *key, const char *v);
/* A string the encoder itself wrote (a note, an enum name) that needs no escaping: no '"', '\\' or control byte.
 * Written as it is, without the scan mpc_w_str makes; a literal that broke the rule would make the answer
 * unparsable, which the golden and contract tests parse. */
void mpc_w_lit(mpc_out *o, const char *key, const char *v);
void mpc_w_bool(mpc_out *o, const char *key, bool v);
void mpc_w_null(mpc_out *o, const char *key);
void mpc_w_u64_or_null(mpc_out *o, const char *key, uint64_t v);	/* null when 0 (an optional figure unknown) */
void mpc_w_num_or_null(mpc_out *o, const char *key, double v);	/* null unless v > 0 */
void mpc_w_str_or_null(mpc_out *o, const char *key, const char *v);	/* null when NULL or "" */
/* A tree printed in place (mpc_print's bytes): a document the request brought (a Node object echoed, a stored
 * config). */
void mpc_w_item(mpc_out *o, const char *key, const cJSON *item);
/* A value another writer wrote (its whole text, len bytes: one JSON value), placed as it is: rows written as they
 * came, before the head of their document was known. */
void mpc_w_raw(mpc_out *o, const char *key, const char *json, size_t len);

/* dst = a followed by b (b may be NULL), cut to cap bytes with a NUL: a JSON pointer and its member ("/jobs/3" +
 * "/model"), at a fraction of snprintf's cost on the per-request path. */
void mpc_join(char *dst, size_t cap, const char *a, const char *b);
/* obj's member named key (case-sensitive, the first of repeats), or NULL: cJSON_GetObjectItemCaseSensitive's answer,
 * with the first byte compared before the rest (a body's lookups are a request's hottest string compares). */
const cJSON *mpc_member(const cJSON *obj, const char *key);

/* Parses JSON text into a tree whose whole numbers up to 2^53 are raw exact digits again, as the encoders build
 * them: mpc_print of the result gives the text back byte for byte. For callers that need a tree of an answer the
 * writer printed (the command line's text rendering). NULL when the text is not JSON or memory ran out; caller
 * owns the tree. */
cJSON *mpc_parse_exact(const char *text);

/*
 * Allocation failures inside cJSON. cJSON's adders return NULL when memory runs out and an encoder that builds a
 * document of a hundred members cannot check each one, so the failures are counted instead: mpc_json_init
 * installs cJSON's allocation hooks (malloc_fn NULL = malloc) once, before any cJSON call, and counts each
 * allocation that fails, per thread. A caller reads mpc_alloc_failures() before and after a decode, service and
 * encode; a count that moved means the answer may be incomplete, and it answers MP_ENOMEM instead (the daemon's
 * dispatch and the command line do). Like errno, the count is the thread's own.
 */
void mpc_json_init(void *(*malloc_fn)(size_t));
unsigned long mpc_alloc_failures(void);

#endif /* MPC_JSON_H */
