/*
 * refs.h: test helpers that read the reference data in tests/ref (see its README for each file's provenance;
 * MEMPLAN_REF_DIR overrides the folder), so tests assert against the references themselves.
 */
#ifndef MP_TEST_REFS_H
#define MP_TEST_REFS_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Reads a whole file (NUL-terminated, caller frees); NULL when it cannot. */
char *ref_read(const char *path, size_t *len);
/* Parses $MEMPLAN_REF_DIR/<rel> (default tests/ref); aborts the test program when missing or invalid. */
cJSON *ref_json(const char *rel);
/* Parses the JSON file at an absolute or working-directory path; aborts when missing or invalid. */
cJSON *ref_json_path(const char *path);
/* The text of $MEMPLAN_REF_DIR/<rel>; aborts when missing. Caller frees. */
char *ref_text(const char *rel);
/*
 * Every *.json file of the folder $MEMPLAN_REF_DIR/<rel>, parsed, as one object {file name without ".json": document}
 * in the order of the names (tests/ref/hf/variants: one document per model type). Aborts the test program when the
 * folder is missing or a file is not JSON; an empty folder gives an empty object. Caller frees (cJSON_Delete).
 */
cJSON *ref_json_dir(const char *rel);
/* Full path of $MEMPLAN_REF_DIR/<rel> in a static buffer. */
const char *ref_path(const char *rel);
/* Relative comparison |a - b| <= tol * |b|. */
int ref_close(double a, double b, double tol);

#endif
