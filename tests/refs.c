/*
 * refs.c: reads the reference files in tests/ref for the tests (see refs.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "refs.h"

char *ref_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		if (len)
			*len = (size_t)n;
	}
	return buf;
}

const char *ref_path(const char *rel)
{
	static char path[1024];
	const char *root = getenv("MEMPLAN_REF_DIR");

	snprintf(path, sizeof(path), "%s/%s", root && *root ? root : "tests/ref", rel);
	return path;
}

char *ref_text(const char *rel)
{
	char *t = ref_read(ref_path(rel), NULL);

	if (t == NULL) {
		fprintf(stderr, "cannot read reference file %s (run the tests from the repository root, or set MEMPLAN_REF_DIR to the folder holding the reference data)\n", ref_path(rel));
		exit(1);
	}
	return t;
}

cJSON *ref_json(const char *rel)
{
	char *t = ref_text(rel);
	cJSON *j = cJSON_Parse(t);

	free(t);
	if (j == NULL) {
		fprintf(stderr, "reference file %s is not JSON\n", ref_path(rel));
		exit(1);
	}
	return j;
}

cJSON *ref_json_path(const char *path)
{
	char *t = ref_read(path, NULL);
	cJSON *j = t != NULL ? cJSON_Parse(t) : NULL;

	free(t);
	if (j == NULL) {
		fprintf(stderr, "%s is missing or not JSON\n", path);
		exit(1);
	}
	return j;
}

int ref_close(double a, double b, double tol)
{
	return fabs(a - b) <= tol * fabs(b);
}
