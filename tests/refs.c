/*
 * refs.c: reads the reference files in tests/ref for the tests (see refs.h).
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

cJSON *ref_json_dir(const char *rel)
{
	char dir[1024], path[1400];
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	cJSON *out = cJSON_CreateObject();

	snprintf(dir, sizeof(dir), "%s", ref_path(rel));
	d = opendir(dir);
	if (d == NULL || out == NULL) {
		fprintf(stderr, "cannot read reference folder %s\n", dir);
		exit(1);
	}
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);

		if (len <= 5 || strcmp(e->d_name + len - 5, ".json") != 0)
			continue;
		if (n == cap) {
			char **grown = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof(*names));

			if (grown == NULL)
				exit(1);
			names = grown;
		}
		names[n] = strdup(e->d_name);
		if (names[n] == NULL)
			exit(1);
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		names[i][strlen(names[i]) - 5] = '\0';
		cJSON_AddItemToObject(out, names[i], ref_json_path(path));
		free(names[i]);
	}
	free(names);
	return out;
}
