/*
 * mpc_slurm.c: the fit table as text (see mpc_slurm.h). Written as mps_fit answers: a job's record once it begins, a
 * min_gpus record per device, the GRES types of the devices seen once each at the end, then the "end" record with
 * the byte count and Adler-32 (zlib) of everything before it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "mpc_slurm.h"

/* a field of at most MP_STORE_ALIAS_MAX bytes, each escaped to 3 */
#define FIELD_MAX (3 * MP_STORE_ALIAS_MAX + 1)

struct mpc_slurm_writer {
	char *buf;
	size_t len, cap;
	bool failed;
	char (*types)[2][MP_STORE_ALIAS_MAX];	/* [i][0] GRES type, [i][1] profile */
	size_t ntypes, captypes;
	char job[FIELD_MAX];			/* the current job's id, escaped */
};

static void put(mpc_slurm_writer *w, const char *s)
{
	size_t n = strlen(s);

	if (w->failed)
		return;
	if (w->len + n + 1 > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;
		char *p;

		while (cap < w->len + n + 1)
			cap *= 2;
		p = realloc(w->buf, cap);
		if (p == NULL) {
			w->failed = true;
			return;
		}
		w->buf = p;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, s, n + 1);
	w->len += n;
}

/* " " and s as a field */
static void put_field(mpc_slurm_writer *w, const char *s)
{
	char f[FIELD_MAX];

	if (!mpc_slurm_field(s, f, sizeof(f))) {
		w->failed = true;
		return;
	}
	put(w, " ");
	put(w, f);
}

bool mpc_slurm_field(const char *s, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	if (len == 0)
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		bool esc = *p <= 0x20 || *p == '%' || *p == 0x7f;

		if (n + (esc ? 3 : 1) + 1 > len) {
			out[0] = '\0';
			return false;
		}
		if (esc) {
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 0xf];
		} else {
			out[n++] = (char)*p;
		}
	}
	out[n] = '\0';
	return true;
}

mpc_slurm_writer *mpc_slurm_writer_new(void)
{
	return calloc(1, sizeof(mpc_slurm_writer));
}

void mpc_slurm_writer_free(mpc_slurm_writer *w)
{
	if (w == NULL)
		return;
	free(w->buf);
	free(w->types);
	free(w);
}

static mp_status s_begin(void *ctx, const mps_fit_request *rq, size_t ndevices)
{
	mpc_slurm_writer *w = ctx;
	char num[32];

	(void)ndevices;
	put(w, "memplan-slurm-fit-table 2\n"
	       "# memplan's fit table for Slurm's job_submit.lua (deploy/slurm), written by POST /v1/slurm/fit-table.\n"
	       "# min_gpus JOB PROFILE N: the smallest of gpu_counts the job fits with on the profile (none: no count).\n"
	       "gpu_counts");
	for (size_t g = 0; g < rq->ngpu_counts; g++) {
		snprintf(num, sizeof(num), " %llu", (unsigned long long)rq->gpu_counts[g]);
		put(w, num);
	}
	put(w, "\n");
	return w->failed ? MP_ENOMEM : MP_OK;
}

static mp_status s_job_begin(void *ctx, const mps_fit_job *job, const mps_model *model, const mps_warnings *warnings)
{
	mpc_slurm_writer *w = ctx;

	(void)warnings; /* the table carries verdicts only; the JSON fit answer says what they rest on */
	if (!mpc_slurm_field(job->id, w->job, sizeof(w->job)))
		w->failed = true;
	put(w, "job ");
	put(w, w->job);
	put(w, job->training ? " training" : " inference");
	put_field(w, model->id[0] ? model->id : "inline");
	put(w, "\n");
	return w->failed ? MP_ENOMEM : MP_OK;
}

/* The AutoDetect=nvml type of the device's NVML-name alias: lowercase, blanks as '_'. */
static void add_types(mpc_slurm_writer *w, const mps_fit_device *dev)
{
	char t[MP_STORE_ALIAS_MAX];
	size_t i, k;

	if (dev->nvml_name[0] == '\0')
		return;
	for (i = 0; dev->nvml_name[i] && i + 1 < sizeof(t); i++) {
		char c = dev->nvml_name[i];

		t[i] = c == ' ' ? '_' : (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
	}
	t[i] = '\0';
	for (k = 0; k < w->ntypes && strcmp(w->types[k][0], t) != 0; k++)
		;
	if (k < w->ntypes)
		return;
	if (w->ntypes == w->captypes) {
		size_t cap = w->captypes ? w->captypes * 2 : 32;
		void *p = realloc(w->types, cap * sizeof(*w->types));

		if (p == NULL) {
			w->failed = true;
			return;
		}
		w->types = p;
		w->captypes = cap;
	}
	snprintf(w->types[w->ntypes][0], MP_STORE_ALIAS_MAX, "%s", t);
	snprintf(w->types[w->ntypes][1], MP_STORE_ALIAS_MAX, "%s", dev->id);
	w->ntypes++;
}

static mp_status s_device(void *ctx, const mps_fit_device *dev, const mps_fit_row *rows, size_t nrows,
			  uint64_t smallest)
{
	mpc_slurm_writer *w = ctx;
	char num[32];

	(void)rows;
	(void)nrows;
	put(w, "min_gpus ");
	put(w, w->job);
	put_field(w, dev->id);
	if (smallest)
		snprintf(num, sizeof(num), " %llu\n", (unsigned long long)smallest);
	else
		snprintf(num, sizeof(num), " none\n");
	put(w, num);
	add_types(w, dev);
	return w->failed ? MP_ENOMEM : MP_OK;
}

static mp_status s_job_end(void *ctx)
{
	(void)ctx;
	return MP_OK;
}

const mps_fit_sink *mpc_slurm_sink(void)
{
	static const mps_fit_sink sink = { s_begin, s_job_begin, s_device, s_job_end };

	return &sink;
}

char *mpc_slurm_writer_finish(mpc_slurm_writer *w)
{
	char *text, end[64];
	uLong sum;

	put(w, "# gres_type TYPE PROFILE: the GRES type Slurm's AutoDetect=nvml gives the profile's GPU\n");
	for (size_t k = 0; k < w->ntypes; k++) {
		put(w, "gres_type");
		put_field(w, w->types[k][0]);
		put_field(w, w->types[k][1]);
		put(w, "\n");
	}
	if (!w->failed) {
		/* zlib's adler32 takes uInt lengths: in pieces, for a table of any size */
		sum = adler32(0L, Z_NULL, 0);
		for (size_t off = 0; off < w->len;) {
			size_t n = w->len - off > 1u << 30 ? 1u << 30 : w->len - off;

			sum = adler32(sum, (const Bytef *)w->buf + off, (uInt)n);
			off += n;
		}
		snprintf(end, sizeof(end), "end %zu %08lx\n", w->len, (unsigned long)sum);
		put(w, end);
	}
	text = w->failed ? NULL : w->buf;
	if (text)
		w->buf = NULL;
	mpc_slurm_writer_free(w);
	return text;
}
