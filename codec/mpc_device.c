/*
 * mpc_device.c: device profiles as JSON documents, both ways: the one decoder and the one encoder of a profile, with
 * one range table (the bounds a real accelerator can have), so a typo or a unit slip (GB for bytes) is a 422 naming
 * the field, and a profile one endpoint takes is taken by every other. Stored profiles (PUT, import, the presets
 * at build time) and inline ones (the "device" member of roofline and plan requests) go through the same table;
 * they differ only in what is required and in the figures the store does not keep yet.
 */
#include <math.h>
#include <stddef.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/fields.h"
#include "codec.h"

#define MAX_BYTES (UINT64_C(1) << 50) /* 1 PiB: no single device is larger */

/* ----- encoding ---------------------------------------------------------------------------------------- */

void mpc_device_write(mpc_out *w, const char *key, const mp_store_device *d)
{
	mpc_w_obj(w, key);
	mpc_w_str(w, "id", d->id);
	mpc_w_str(w, "name", d->name);
	mpc_w_str(w, "vendor", d->vendor);
	mpc_w_str_or_null(w, "architecture", d->architecture);
	mpc_w_str_or_null(w, "form_factor", d->form_factor);
	mpc_w_str_or_null(w, "memory_type", d->memory_type);
	mpc_w_u64(w, "memory_bytes", d->hw.memory_bytes);
	mpc_w_u64_or_null(w, "usable_memory_bytes", d->hw.usable_memory_bytes);
	mpc_w_num(w, "memory_bandwidth_bytes_per_second", d->hw.memory_bandwidth_bytes_per_second);
	mpc_w_obj(w, "peak_flops_per_second");
	for (int t = 1; t < MP_DTYPE_COUNT; t++)
		if (d->hw.peak_flops_per_second[t] > 0)
			mpc_w_num(w, mp_dtype_name((mp_dtype)t), d->hw.peak_flops_per_second[t]);
	mpc_w_end(w);
	mpc_w_u64_or_null(w, "l2_cache_bytes", d->hw.l2_cache_bytes);
	mpc_w_u64_or_null(w, "sm_count", d->hw.sm_count);
	mpc_w_num_or_null(w, "boost_clock_hz", d->hw.boost_clock_hz);
	mpc_w_num_or_null(w, "tdp_watts", d->tdp_watts);
	mpc_w_u64_or_null(w, "cuda_context_bytes", d->hw.cuda_context_bytes);
	{
		/* the stored object text, printed as JSON again (null when absent, or not JSON) */
		cJSON *ic = d->interconnect_json[0] ? cJSON_Parse(d->interconnect_json) : NULL;

		if (ic)
			mpc_w_item(w, "interconnect", ic);
		else
			mpc_w_null(w, "interconnect");
		cJSON_Delete(ic);
	}
	mpc_w_str(w, "source", d->source);
	mpc_w_str(w, "source_note", d->source_note);
	mpc_w_str_or_null(w, "measured_at", d->measured_at);
	mpc_w_str(w, "created_at", d->created_at);
	mpc_w_str(w, "updated_at", d->updated_at);
	mpc_w_str_or_null(w, "linked_device_id", d->linked_device_id);
	mpc_w_num_or_null(w, "base_clock_hz", d->base_clock_hz);
	mpc_w_num_or_null(w, "memory_clock_hz", d->memory_clock_hz);
	mpc_w_num_or_null(w, "fma_flops_per_second", d->fma_flops_per_second);
	mpc_w_num_or_null(w, "memory_latency_seconds", d->memory_latency_seconds);
	mpc_w_arr(w, "aliases");
	for (size_t i = 0; i < d->naliases && i < MP_STORE_MAX_ALIASES; i++)
		mpc_w_str(w, NULL, d->aliases[i]);
	mpc_w_end(w);
	mpc_w_str(w, "kind", d->kind[0] ? d->kind : "gpu");
	mpc_w_u64_or_null(w, "nvml_memory_bytes", d->nvml_memory_bytes);
	mpc_w_str_or_null(w, "usable_memory_source", d->usable_memory_source);
	mpc_w_end(w);
}

/* ----- decoding: the one range table ---------------------------------------------------------------------- */

static const char *const source_names[] = { "datasheet", "measured", "user", NULL };
static const char *const kind_names[] = { "gpu", "cpu", "accelerator", NULL };
static const char *const usable_source_names[] = { "measured", "published", "derived", NULL };

typedef struct device_body {
	mp_store_device d;
	char id[MP_STORE_ID_MAX];
	uint64_t sm_count;
	int source, kind, usable_source;
	double latency_cycles;
} device_body;

#define DF(field) offsetof(device_body, field)
#define STR(nm, member) { .name = nm, .type = MPM_F_STRING, .offset = DF(member), .size = MPM_STR(device_body, member) }
#define DBL(nm, member, lo, hi) { .name = nm, .type = MPM_F_DOUBLE, .offset = DF(member), .dmin = lo, .dmax = hi }
#define U64(nm, member, lo, hi) { .name = nm, .type = MPM_F_U64, .offset = DF(member), .min = lo, .max = hi }

/* Indices of the fields whose presence decides the rules below. */
enum { F_NAME = 1, F_VENDOR, F_MEMORY_BYTES = 6, F_BANDWIDTH = 8, F_PEAKS = 9 };

static const mpm_field device_fields[] = {
	STR("id", id),
	STR("name", d.name),
	STR("vendor", d.vendor),
	STR("architecture", d.architecture),
	STR("form_factor", d.form_factor),
	STR("memory_type", d.memory_type),
	U64("memory_bytes", d.hw.memory_bytes, UINT64_C(1) << 20, MAX_BYTES),
	U64("usable_memory_bytes", d.hw.usable_memory_bytes, UINT64_C(1) << 20, MAX_BYTES),
	DBL("memory_bandwidth_bytes_per_second", d.hw.memory_bandwidth_bytes_per_second, 1e6, 1e16),
	{ .name = "peak_flops_per_second", .type = MPM_F_ANY },
	U64("l2_cache_bytes", d.hw.l2_cache_bytes, 1, UINT64_C(1) << 40),
	U64("sm_count", sm_count, 1, 1000000),
	DBL("boost_clock_hz", d.hw.boost_clock_hz, 1e6, 1e11),
	DBL("base_clock_hz", d.base_clock_hz, 1e6, 1e11),
	DBL("memory_clock_hz", d.memory_clock_hz, 1e6, 1e11),
	DBL("tdp_watts", d.tdp_watts, 1, 1e5),
	U64("cuda_context_bytes", d.hw.cuda_context_bytes, 1, UINT64_C(1) << 40),
	{ .name = "interconnect", .type = MPM_F_ANY },
	{ .name = "source", .type = MPM_F_ENUM, .offset = DF(source), .names = source_names },
	STR("source_note", d.source_note),
	STR("measured_at", d.measured_at),
	STR("linked_device_id", d.linked_device_id),
	DBL("fma_flops_per_second", d.fma_flops_per_second, 1, 1e19),
	DBL("memory_latency_seconds", d.memory_latency_seconds, 1e-12, 1),
	DBL("memory_latency_cycles", latency_cycles, 1, 1e9),
	{ .name = "created_at", .type = MPM_F_ANY },
	{ .name = "updated_at", .type = MPM_F_ANY },
	{ .name = "aliases", .type = MPM_F_ANY },
	/* the roofline's extras: taken in inline profiles; the store keeps none of them yet */
	{ .name = "vector_flops_per_second", .type = MPM_F_ANY },
	DBL("l2_bandwidth_bytes_per_second", d.hw.l2_bandwidth_bytes_per_second, 1e6, 1e17),
	DBL("shared_memory_bandwidth_bytes_per_second", d.hw.shared_memory_bandwidth_bytes_per_second, 1e6, 1e18),
	/* schema v5 */
	{ .name = "kind", .type = MPM_F_ENUM, .offset = DF(kind), .names = kind_names },
	U64("nvml_memory_bytes", d.nvml_memory_bytes, UINT64_C(1) << 20, MAX_BYTES),
	{ .name = "usable_memory_source", .type = MPM_F_ENUM, .offset = DF(usable_source), .names = usable_source_names },
};

/* Members a stored profile cannot keep (the store has no column for them yet): refused there, never dropped. */
static const char *const inline_only[] = { "vector_flops_per_second", "l2_bandwidth_bytes_per_second",
					   "shared_memory_bandwidth_bytes_per_second" };

typedef struct interconnect_body {
	char gpu_link[128], host_link[128];
	double gpu_link_bytes_per_second, host_link_bytes_per_second;
} interconnect_body;

static const mpm_field interconnect_fields[] = {
	{ .name = "gpu_link", .type = MPM_F_STRING, .offset = offsetof(interconnect_body, gpu_link),
	  .size = MPM_STR(interconnect_body, gpu_link) },
	{ .name = "gpu_link_bytes_per_second", .type = MPM_F_DOUBLE,
	  .offset = offsetof(interconnect_body, gpu_link_bytes_per_second), .dmin = 1, .dmax = 1e15 },
	{ .name = "host_link", .type = MPM_F_STRING, .offset = offsetof(interconnect_body, host_link),
	  .size = MPM_STR(interconnect_body, host_link) },
	{ .name = "host_link_bytes_per_second", .type = MPM_F_DOUBLE,
	  .offset = offsetof(interconnect_body, host_link_bytes_per_second), .dmin = 1, .dmax = 1e15 },
};

/* A copy of doc without null or "" members (unknown = absent), or NULL when out of memory. */
static cJSON *without_nulls(const cJSON *doc)
{
	cJSON *c = cJSON_Duplicate(doc, true), *v, *next;

	for (v = c ? c->child : NULL; v; v = next) {
		next = v->next;
		if (cJSON_IsNull(v) || (cJSON_IsString(v) && v->valuestring[0] == '\0'))
			cJSON_Delete(cJSON_DetachItemViaPointer(c, v));
	}
	return c;
}

static mp_status field_fail(mp_error *err, const char *pointer, const char *name, const char *msg)
{
	char field[96];

	snprintf(field, sizeof(field), "%s/%s", pointer, name);
	return mp_fail(err, MP_EINVAL, field, "%s", msg);
}

/* "YYYY-MM-DDTHH:MM:SSZ", optionally with fractional seconds: the form the store writes. */
static bool is_timestamp(const char *s)
{
	static const char pattern[] = "dddd-dd-ddTdd:dd:dd";
	size_t i;

	for (i = 0; pattern[i]; i++)
		if (pattern[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != pattern[i])
			return false;
	if (s[i] == '.') {
		for (i++; s[i] >= '0' && s[i] <= '9'; i++)
			;
	}
	return s[i] == 'Z' && s[i + 1] == '\0';
}

/* {"bf16": 989.4e12, ...} into rates[]; errors name "<pointer>/<member>/<key>". */
static mp_status decode_peaks(const cJSON *o, const char *pointer, const char *member, double rates[MP_DTYPE_COUNT],
			      bool required, mp_error *err)
{
	const cJSON *v;
	char field[160], base[112];
	int n = 0;
	mp_problems p = MP_PROBLEMS_INIT; /* every bad key, not the first */

	snprintf(base, sizeof(base), "%s/%s", pointer, member);
	if (o == NULL && !required)
		return MP_OK;
	if (o == NULL)
		return mp_fail(err, MP_EINVAL, base, "%s is required", member);
	if (!cJSON_IsObject(o))
		return mp_fail(err, MP_EINVAL, base, "expected an object keyed by dtype, e.g. {\"bf16\": 9.894e14}");
	cJSON_ArrayForEach(v, o)
	{
		mp_dtype dt = mp_dtype_from_name(v->string);

		snprintf(field, sizeof(field), "%s/%.40s", base, v->string);
		if (dt == MP_DTYPE_INVALID)
			mp_problems_note(&p,
					 mp_fail(err, MP_EINVAL, field,
						 "'%.40s' is not a dtype (fp64, fp32, tf32, bf16, fp16, fp8_e4m3, fp8_e5m2, "
						 "int8, ...)",
						 v->string),
					 err);
		else if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || v->valuedouble > 1e19)
			mp_problems_note(&p, mp_fail(err, MP_EINVAL, field, "a peak is a dense rate in FLOP/s, > 0 and <= 1e19"),
					 err);
		else {
			rates[dt] = v->valuedouble;
			n++;
		}
	}
	if (p.st != MP_OK)
		return mp_problems_end(&p, err);
	if (required && n == 0)
		return mp_fail(err, MP_EINVAL, base, "give at least one peak, e.g. {\"bf16\": 9.894e14}");
	return MP_OK;
}

static mp_status decode_interconnect(const cJSON *v, const char *pointer, mp_store_device *d, mp_error *err)
{
	interconnect_body ib;
	char ptr[96], *text = NULL;
	cJSON *ic = cJSON_IsObject(v) ? without_nulls(v) : NULL;
	mp_status st;

	memset(&ib, 0, sizeof(ib));
	snprintf(ptr, sizeof(ptr), "%s/interconnect", pointer);
	st = mpm_decode_fields(ic ? ic : v, ptr, interconnect_fields, MPM_COUNT(interconnect_fields), &ib, err);
	if (st == MP_OK && (text = cJSON_PrintUnformatted(ic)) != NULL && strlen(text) < sizeof(d->interconnect_json))
		memcpy(d->interconnect_json, text, strlen(text) + 1);
	else if (st == MP_OK)
		st = field_fail(err, pointer, "interconnect", "interconnect is too long");
	cJSON_free(text);
	cJSON_Delete(ic);
	return st;
}

/*
 * "aliases": up to MP_STORE_MAX_ALIASES names the device goes by elsewhere (the NVML name first, by convention),
 * each 1 to 95 printable ASCII characters without blanks at either end, no two with the same key
 * (mp_alias_key: case, ' ', '_' and '-' aside). Errors name "<pointer>/aliases/<i>".
 */
static mp_status decode_aliases(const cJSON *v, const char *pointer, mp_store_device *d, mp_error *err)
{
	const cJSON *a;
	char field[112];
	size_t i = 0;

	snprintf(field, sizeof(field), "%s/aliases", pointer);
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > MP_STORE_MAX_ALIASES)
		return mp_fail(err, MP_EINVAL, field,
			       "aliases is a list of up to %d names the device goes by (the NVML name first, e.g. "
			       "[\"NVIDIA H100 80GB HBM3\"])", MP_STORE_MAX_ALIASES);
	cJSON_ArrayForEach(a, v)
	{
		const char *t = cJSON_IsString(a) ? a->valuestring : NULL;
		size_t n = t ? strlen(t) : 0;
		bool ok = n > 0 && n < MP_STORE_ALIAS_MAX && t[0] != ' ' && t[n - 1] != ' ';
		char key[MP_STORE_ALIAS_MAX], other[MP_STORE_ALIAS_MAX];

		for (size_t k = 0; ok && k < n; k++)
			ok = (unsigned char)t[k] >= 0x20 && (unsigned char)t[k] < 0x7f;
		snprintf(field, sizeof(field), "%s/aliases/%zu", pointer, i);
		if (!ok)
			return mp_fail(err, MP_EINVAL, field,
				       "an alias is 1 to %d printable ASCII characters without blanks at either end "
				       "(GPU Feature Discovery's nvidia.com/gpu.product, an NVML name, a GKE accelerator)",
				       MP_STORE_ALIAS_MAX - 1);
		mp_alias_key(t, key, sizeof(key));
		for (size_t k = 0; k < i; k++) {
			mp_alias_key(d->aliases[k], other, sizeof(other));
			if (strcmp(key, other) == 0)
				return mp_fail(err, MP_EINVAL, field,
					       "alias '%s' is alias %zu again (names are matched without regard to case, "
					       "' ', '_' and '-')", t, k);
		}
		memcpy(d->aliases[i], t, n + 1);
		i++;
	}
	d->naliases = i;
	return MP_OK;
}

/* The table's rules for either kind of profile. inline_profile: only bandwidth and peaks are required, and the
 * roofline's extras are taken. */
static mp_status decode(const cJSON *doc, const char *pointer, const char *id, const char *default_source,
			bool inline_profile, mp_store_device *out, mp_error *err)
{
	device_body *b = calloc(1, sizeof(*b));
	cJSON *c = without_nulls(doc);
	const cJSON *v;
	mp_status st = MP_OK;

	if (b == NULL || c == NULL) {
		st = mp_fail(err, MP_ENOMEM, "", "out of memory");
		goto out;
	}
	b->source = 2; /* user */
	b->usable_source = -1;
	for (int i = 0; source_names[i]; i++)
		if (default_source && strcmp(default_source, source_names[i]) == 0)
			b->source = i;
	{
		/* every problem of the body at once (fields, required members, peaks, links, aliases); the rules
		 * between fields below need the fields themselves right */
		static const int stored_need[] = { F_NAME, F_VENDOR, F_MEMORY_BYTES, F_BANDWIDTH };
		static const int inline_need[] = { F_BANDWIDTH };
		const int *need = inline_profile ? inline_need : stored_need;
		size_t nneed = inline_profile ? 1 : 4;
		mp_problems p = MP_PROBLEMS_INIT;

		mp_problems_note(&p, mpm_decode_fields(c, pointer, device_fields, MPM_COUNT(device_fields), b, err), err);
		for (size_t i = 0; i < nneed; i++)
			if (cJSON_GetObjectItemCaseSensitive(c, device_fields[need[i]].name) == NULL) {
				char field[96];

				snprintf(field, sizeof(field), "%s/%s", pointer, device_fields[need[i]].name);
				mp_problems_note(&p, mp_fail(err, MP_EINVAL, field, "%s is required",
							     device_fields[need[i]].name),
						 err);
			}
		if (!inline_profile)
			for (size_t i = 0; i < sizeof(inline_only) / sizeof(inline_only[0]); i++)
				if (cJSON_GetObjectItemCaseSensitive(c, inline_only[i])) {
					char msg[160];

					snprintf(msg, sizeof(msg),
						 "%s is taken by inline profiles (roofline and plan requests) only: a stored "
						 "profile does not keep it yet", inline_only[i]);
					mp_problems_note(&p, field_fail(err, pointer, inline_only[i], msg), err);
				}
		if (id && b->id[0] && strcmp(b->id, id) != 0)
			mp_problems_note(&p, field_fail(err, pointer, "id", "id in the body differs from the id in the path"),
					 err);
		mp_problems_note(&p,
				 decode_peaks(cJSON_GetObjectItemCaseSensitive(c, "peak_flops_per_second"), pointer,
					      "peak_flops_per_second", b->d.hw.peak_flops_per_second, inline_profile, err),
				 err);
		mp_problems_note(&p,
				 decode_peaks(cJSON_GetObjectItemCaseSensitive(c, "vector_flops_per_second"), pointer,
					      "vector_flops_per_second", b->d.hw.vector_flops_per_second, false, err),
				 err);
		if ((v = cJSON_GetObjectItemCaseSensitive(c, "interconnect")) != NULL)
			mp_problems_note(&p, decode_interconnect(v, pointer, &b->d, err), err);
		if ((v = cJSON_GetObjectItemCaseSensitive(c, "aliases")) != NULL)
			mp_problems_note(&p, decode_aliases(v, pointer, &b->d, err), err);
		st = mp_problems_end(&p, err);
		if (st != MP_OK)
			goto out;
	}
	if (b->d.hw.usable_memory_bytes && b->d.hw.memory_bytes && b->d.hw.usable_memory_bytes > b->d.hw.memory_bytes) {
		st = field_fail(err, pointer, "usable_memory_bytes",
				"usable_memory_bytes (what cudaMemGetInfo reports) cannot exceed memory_bytes");
		goto out;
	}
	if (b->latency_cycles > 0 && b->d.memory_latency_seconds > 0) {
		st = field_fail(err, pointer, "memory_latency_cycles",
				"give memory_latency_seconds or memory_latency_cycles (with boost_clock_hz), not both");
		goto out;
	}
	if (b->latency_cycles > 0 && !(b->d.hw.boost_clock_hz > 0)) {
		st = field_fail(err, pointer, "boost_clock_hz", "memory_latency_cycles needs boost_clock_hz to become seconds");
		goto out;
	}
	if (b->latency_cycles > 0)
		b->d.memory_latency_seconds = b->latency_cycles / b->d.hw.boost_clock_hz;
	if (b->d.measured_at[0] && !is_timestamp(b->d.measured_at)) {
		st = field_fail(err, pointer, "measured_at", "measured_at must be UTC ISO 8601, e.g. 2026-11-29T10:00:00Z");
		goto out;
	}
	if (!inline_profile && b->source == 1 && !b->d.measured_at[0]) {
		st = field_fail(err, pointer, "measured_at", "a measured profile needs measured_at (when it was measured)");
		goto out;
	}
	if (b->d.linked_device_id[0] && strcmp(b->d.linked_device_id, id ? id : b->id) == 0) {
		st = field_fail(err, pointer, "linked_device_id", "a profile cannot link to itself");
		goto out;
	}
	if (b->usable_source >= 0 && !b->d.hw.usable_memory_bytes) {
		st = field_fail(err, pointer, "usable_memory_source", "usable_memory_source says how usable_memory_bytes is "
				"known; give usable_memory_bytes with it");
		goto out;
	}
	if (b->d.nvml_memory_bytes && b->d.hw.usable_memory_bytes && b->d.hw.usable_memory_bytes > b->d.nvml_memory_bytes) {
		st = field_fail(err, pointer, "usable_memory_bytes",
				"usable_memory_bytes (the CUDA total) cannot exceed nvml_memory_bytes (NVML's total)");
		goto out;
	}
	snprintf(b->d.id, sizeof(b->d.id), "%s", id ? id : b->id);
	snprintf(b->d.source, sizeof(b->d.source), "%s", source_names[b->source]);
	snprintf(b->d.kind, sizeof(b->d.kind), "%s", kind_names[b->kind]);
	b->d.hw.host_memory = strcmp(b->d.kind, "cpu") == 0;
	if (b->usable_source >= 0)
		snprintf(b->d.usable_memory_source, sizeof(b->d.usable_memory_source), "%s",
			 usable_source_names[b->usable_source]);
	b->d.hw.sm_count = (uint32_t)b->sm_count;
	b->d.hw.memory_latency_seconds = b->d.memory_latency_seconds;
	*out = b->d;
out:
	cJSON_Delete(c);
	free(b);
	return st;
}

mp_status mpc_device_decode(const cJSON *doc, const char *pointer, const char *id, const char *default_source,
			    mp_store_device *out, mp_error *err)
{
	return decode(doc, pointer, id, default_source, false, out, err);
}

mp_status mpc_device_ref_decode(const cJSON *v, const char *pointer, mps_device_ref *out, mp_error *err)
{
	mp_status st;

	/* the 4 KB profile is written only for an inline one (service.h): not cleared on every request */
	memset(out, 0, offsetof(mps_device_ref, profile));
	mpc_join(out->pointer, sizeof(out->pointer), pointer, NULL);
	if (v == NULL)
		return MP_OK;
	out->given = true;
	if (cJSON_IsString(v)) {
		/* an id in any case, or a name the device goes by (an alias: NVML's, GPU Feature Discovery's, Slurm's) */
		size_t n = strlen(v->valuestring);
		char low[MP_STORE_ID_MAX];
		bool printable = n > 0;

		for (size_t i = 0; i < n; i++)
			printable = printable && (unsigned char)v->valuestring[i] >= 0x20 && v->valuestring[i] != 0x7f;
		if (!printable || n >= sizeof(out->asked))
			return mp_fail(err, MP_EINVAL, pointer,
				       "device is a stored id (\"h100-sxm5-80gb\", any case) or a name it goes by "
				       "(\"NVIDIA H100 80GB HBM3\"): 1 to %zu printable bytes",
				       sizeof(out->asked) - 1);
		mpc_join(out->asked, sizeof(out->asked), v->valuestring, NULL);
		for (size_t i = 0; i <= n && i < sizeof(low); i++)
			low[i] = (char)tolower((unsigned char)v->valuestring[i]);
		low[sizeof(low) - 1] = '\0';
		if (n < sizeof(low) && mp_valid_id(low))
			mpc_join(out->id, sizeof(out->id), low, NULL);
		return MP_OK;
	}
	if (!cJSON_IsObject(v))
		return mp_fail(err, MP_EINVAL, pointer,
			       "device is a stored id (\"h100-sxm5-80gb\") or an inline profile with "
			       "memory_bandwidth_bytes_per_second and peak_flops_per_second");
	out->inline_profile = true;
	st = decode(v, pointer, NULL, "user", true, &out->profile, err);
	if (st != MP_OK)
		return st;
	if (out->profile.name[0] == '\0')
		snprintf(out->profile.name, sizeof(out->profile.name), "inline profile");
	if (out->profile.hw.memory_bytes == 0)
		out->profile.hw.memory_bytes = out->profile.hw.usable_memory_bytes; /* the one figure given */
	snprintf(out->id, sizeof(out->id), "%s", out->profile.id);
	return MP_OK;
}

mp_status mpc_device_ref_require_memory(const mps_device_ref *d, mp_error *err)
{
	char field[96];

	if (!d->given || !d->inline_profile || d->profile.hw.memory_bytes)
		return MP_OK;
	snprintf(field, sizeof(field), "%s/memory_bytes", d->pointer);
	return mp_fail(err, MP_EINVAL, field,
		       "an inline device in a plan or fit needs its memory: memory_bytes (the label) or usable_memory_bytes "
		       "(what cudaMemGetInfo reports), in bytes");
}

mp_status mpc_kinds(const char *list, const char *field, unsigned *mask, mp_error *err)
{
	char buf[64];
	size_t len;

	*mask = 0;
	if (list == NULL || strlen(list) >= sizeof(buf) || list[0] == '\0')
		goto bad;
	if (strcmp(list, "all") == 0) {
		*mask = MP_STORE_KIND_ALL;
		return MP_OK;
	}
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *p = buf; *p; p += len + (p[len] == ',')) {
		char one[16];
		unsigned bit;

		len = strcspn(p, ",");
		if (len == 0 || len >= sizeof(one))
			goto bad;
		memcpy(one, p, len);
		one[len] = '\0';
		bit = mp_store_kind_bit(one);
		if (bit == 0)
			goto bad;
		*mask |= bit;
	}
	return MP_OK;
bad:
	return mp_fail(err, MP_EINVAL, field,
		       "device kinds are \"all\" or a comma-separated list of gpu, cpu, accelerator (default gpu)");
}
