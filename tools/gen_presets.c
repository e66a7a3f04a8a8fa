/*
 * gen_presets.c: build-time tool. Reads the presets (db/presets/devices.json and db/presets/models/ *.json),
 * decodes each device with the API's one device decoder (codec/mpc_device.c) and each model with the model readers,
 * counts every model's parameters with the planner, and writes a C source holding them as the structs the store
 * takes (mps_presets in service/service_int.h). So a preset the API would refuse fails the build, the binary never parses a preset,
 * and the store never sees JSON.
 * Usage: gen_presets OUT.c DEVICES.json MODEL.json...
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codec/codec.h"
#include "../model/model.h"

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		perror(path);
		if (f)
			fclose(f);
		return NULL;
	}
	buf = malloc((size_t)n + 1);
	if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* s as a C string literal: quotes, backslashes and every byte outside printable ASCII escaped in octal. */
static void c_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f || *p == '?')
			fprintf(out, "\\%03o", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void field_str(FILE *out, const char *name, const char *v)
{
	if (v[0] == '\0')
		return;
	fprintf(out, "\t\t.%s = ", name);
	c_string(out, v);
	fprintf(out, ",\n");
}

static void field_dbl(FILE *out, const char *name, double v)
{
	if (v != 0)
		fprintf(out, "\t\t.%s = %a,\n", name, v);
}

static void field_u64(FILE *out, const char *name, unsigned long long v)
{
	if (v != 0)
		fprintf(out, "\t\t.%s = UINT64_C(%llu),\n", name, v);
}

static void emit_device(FILE *out, const mp_store_device *d)
{
	fprintf(out, "\t{\n");
	field_str(out, "id", d->id);
	field_str(out, "name", d->name);
	field_str(out, "vendor", d->vendor);
	field_str(out, "architecture", d->architecture);
	field_str(out, "form_factor", d->form_factor);
	field_str(out, "memory_type", d->memory_type);
	field_str(out, "source", d->source);
	field_str(out, "source_note", d->source_note);
	field_str(out, "measured_at", d->measured_at);
	field_str(out, "interconnect_json", d->interconnect_json);
	field_dbl(out, "tdp_watts", d->tdp_watts);
	field_str(out, "linked_device_id", d->linked_device_id);
	field_dbl(out, "base_clock_hz", d->base_clock_hz);
	field_dbl(out, "memory_clock_hz", d->memory_clock_hz);
	field_dbl(out, "fma_flops_per_second", d->fma_flops_per_second);
	field_dbl(out, "memory_latency_seconds", d->memory_latency_seconds);
	field_u64(out, "hw.memory_bytes", d->hw.memory_bytes);
	field_u64(out, "hw.usable_memory_bytes", d->hw.usable_memory_bytes);
	field_dbl(out, "hw.memory_bandwidth_bytes_per_second", d->hw.memory_bandwidth_bytes_per_second);
	for (int t = 1; t < MP_DTYPE_COUNT; t++)
		if (d->hw.peak_flops_per_second[t] > 0)
			fprintf(out, "\t\t.hw.peak_flops_per_second[%d] = %a, /* %s */\n", t, d->hw.peak_flops_per_second[t],
				mp_dtype_name((mp_dtype)t));
	field_u64(out, "hw.l2_cache_bytes", d->hw.l2_cache_bytes);
	field_u64(out, "hw.sm_count", d->hw.sm_count);
	field_dbl(out, "hw.boost_clock_hz", d->hw.boost_clock_hz);
	field_u64(out, "hw.cuda_context_bytes", d->hw.cuda_context_bytes);
	for (size_t a = 0; a < d->naliases; a++) {
		char name[32];

		snprintf(name, sizeof(name), "aliases[%zu]", a);
		field_str(out, name, d->aliases[a]);
	}
	if (d->naliases)
		fprintf(out, "\t\t.naliases = %zu,\n", d->naliases);
	field_str(out, "kind", d->kind);
	field_u64(out, "nvml_memory_bytes", d->nvml_memory_bytes);
	field_str(out, "usable_memory_source", d->usable_memory_source);
	fprintf(out, "\t},\n");
}

/*
 * The preset file's peaks keyed by names the planner has no data type for: fp64_tensor (the FP64 tensor-core rate
 * of datasheets). The planner's fp64 is the one FP64 rate a profile carries, so the extra key is dropped here,
 * said once at build time; it stays in the file for people.
 */
static void drop_unknown_peaks(cJSON *dev, const char *id)
{
	cJSON *peaks = cJSON_GetObjectItemCaseSensitive(dev, "peak_flops_per_second"), *p, *next;

	for (p = peaks ? peaks->child : NULL; p; p = next) {
		next = p->next;
		if (mp_dtype_from_name(p->string) == MP_DTYPE_INVALID) {
			if (strcmp(p->string, "fp64_tensor") != 0)
				fprintf(stderr, "gen_presets: %s: peak '%s' has no data type; left out\n", id, p->string);
			cJSON_Delete(cJSON_DetachItemViaPointer(peaks, p));
		}
	}
}

#define FIRST_MODEL 5

/* Whether s is a Hugging Face repo id: "name" or "owner/name", each part [A-Za-z0-9][A-Za-z0-9._-]*, at most 96
 * bytes in all (the Hub's limit). */
static bool repo_id_ok(const char *s)
{
	size_t n = strlen(s), parts = 0;
	bool start = true;

	if (n == 0 || n > 96)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

		if (c == '/') {
			if (start || ++parts > 1)
				return false;
			start = true;
			continue;
		}
		if (start ? !alnum : !(alnum || c == '.' || c == '_' || c == '-'))
			return false;
		start = false;
	}
	return !start;
}

/* The repo ids of model presets (db/presets/model_repo_ids.json): every key names a model preset file and every
 * id is a valid repo id, else the build fails. Emits mps_preset_repo_ids(). */
static int emit_repo_ids(FILE *out, const char *path, char **models, int nmodels)
{
	char *text = read_file(path);
	cJSON *doc = text ? cJSON_Parse(text) : NULL, *ids = cJSON_GetObjectItemCaseSensitive(doc, "repo_ids"), *e, *r;
	int k = 0;

	free(text);
	if (!cJSON_IsObject(ids)) {
		fprintf(stderr, "gen_presets: %s: no \"repo_ids\" object\n", path);
		cJSON_Delete(doc);
		return 1;
	}
	cJSON_ArrayForEach(e, ids)
	{
		bool known = false;

		for (int a = 0; a < nmodels && !known; a++) {
			const char *base = strrchr(models[a], '/');
			size_t n = strlen(e->string);

			base = base ? base + 1 : models[a];
			known = strncmp(base, e->string, n) == 0 && strcmp(base + n, ".json") == 0;
		}
		if (!known || !cJSON_IsArray(e)) {
			fprintf(stderr, "gen_presets: %s: '%s' is not a model preset with a list of repo ids\n", path,
				e->string);
			cJSON_Delete(doc);
			return 1;
		}
		fprintf(out, "\nstatic const char *const repo_ids_%d[] = { ", k++);
		cJSON_ArrayForEach(r, e)
		{
			if (!cJSON_IsString(r) || !repo_id_ok(r->valuestring)) {
				fprintf(stderr, "gen_presets: %s: %s: not a repo id\n", path, e->string);
				cJSON_Delete(doc);
				return 1;
			}
			c_string(out, r->valuestring);
			fprintf(out, ", ");
		}
		fprintf(out, "NULL };");
	}
	fprintf(out, "\n\nstatic const mps_repo_alias repo_ids[] = {\n");
	k = 0;
	cJSON_ArrayForEach(e, ids)
	{
		fprintf(out, "\t{ ");
		c_string(out, e->string);
		fprintf(out, ", repo_ids_%d },\n", k++);
	}
	fprintf(out, "\t{ NULL, NULL },\n};\n\nconst mps_repo_alias *mps_preset_repo_ids(void)\n{\n\treturn repo_ids;\n}\n");
	cJSON_Delete(doc);
	return 0;
}

int main(int argc, char **argv)
{
	FILE *out;
	char *text;
	cJSON *devices, *dev;
	int i = 0, nmodels = 0;

	if (argc < 5 || strcmp(argv[3], "--repo-ids") != 0) {
		fprintf(stderr, "usage: gen_presets OUT.c DEVICES.json --repo-ids REPO_IDS.json MODEL.json...\n");
		return 2;
	}
	text = read_file(argv[2]);
	devices = text ? cJSON_Parse(text) : NULL;
	free(text);
	if (!cJSON_IsArray(devices)) {
		fprintf(stderr, "gen_presets: %s is not a JSON array\n", argv[2]);
		return 1;
	}
	out = fopen(argv[1], "w");
	if (out == NULL) {
		perror(argv[1]);
		return 1;
	}
	fprintf(out, "/* Generated by tools/gen_presets.c from db/presets; do not edit. */\n#include \"service_int.h\"\n\n");
	fprintf(out, "static const mp_store_device devices[] = {\n");
	cJSON_ArrayForEach(dev, devices)
	{
		mp_store_device d;
		mp_error err = { { 0 }, { 0 }, NULL };
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(dev, "id"), *src;
		char ptr[32];

		snprintf(ptr, sizeof(ptr), "[%d]", i++);
		if (!cJSON_IsString(id) || !mp_valid_id(id->valuestring)) {
			fprintf(stderr, "gen_presets: %s%s: no valid id\n", argv[2], ptr);
			return 1;
		}
		drop_unknown_peaks(dev, id->valuestring);
		src = cJSON_GetObjectItemCaseSensitive(dev, "source");
		if (mpc_device_decode(dev, ptr, id->valuestring, cJSON_IsString(src) ? src->valuestring : "datasheet", &d,
				      &err) != MP_OK) {
			fprintf(stderr, "gen_presets: %s%s: %s: %s\n", argv[2], ptr, err.field, err.message);
			return 1;
		}
		emit_device(out, &d);
	}
	fprintf(out, "};\n\n");
	for (int a = FIRST_MODEL; a < argc; a++) {
		mp_model m;
		mp_param_count pc;
		mp_error err = { { 0 }, { 0 }, NULL };

		text = read_file(argv[a]);
		if (text == NULL || mpm_from_hf_text(text, "", &m, &err) != MP_OK ||
		    mp_count_parameters(&m, &pc, &err) != MP_OK) {
			fprintf(stderr, "gen_presets: %s: %s %s\n", argv[a], err.field, err.message);
			return 1;
		}
		fprintf(out, "static const char config_%d[] = ", a);
		c_string(out, text);
		fprintf(out, ";\n");
		free(text);
		(void)pc;
		nmodels++;
	}
	fprintf(out, "\nstatic const mp_store_model models[] = {\n");
	for (int a = FIRST_MODEL; a < argc; a++) {
		const char *base = strrchr(argv[a], '/'), *dot;
		char id[MP_STORE_ID_MAX];
		mp_model m;
		mp_param_count pc;
		mp_error err = MP_ERROR_INIT;

		base = base ? base + 1 : argv[a];
		dot = strrchr(base, '.');
		snprintf(id, sizeof(id), "%.*s", (int)(dot ? (size_t)(dot - base) : strlen(base)), base);
		text = read_file(argv[a]);
		if (text == NULL || mpm_from_hf_text(text, "", &m, &err) != MP_OK ||
		    mp_count_parameters(&m, &pc, &err) != MP_OK)
			return 1;
		free(text);
		fprintf(out, "\t{ .id = \"%s\", .model_type = \"%s\", .source = \"preset\", .parameters = UINT64_C(%llu),\n"
			     "\t  .config_json = (char *)config_%d },\n",
			id, m.model_type, (unsigned long long)pc.total, a);
	}
	fprintf(out, "};\n\nstatic const mp_store_presets presets = { devices, sizeof(devices) / sizeof(devices[0]), models, "
		     "%d };\n\nconst mp_store_presets *mps_presets(void)\n{\n\treturn &presets;\n}\n",
		nmodels);
	cJSON_Delete(devices);
	if (emit_repo_ids(out, argv[4], argv + FIRST_MODEL, argc - FIRST_MODEL) != 0)
		return 1;
	return fclose(out) == 0 ? 0 : 1;
}
