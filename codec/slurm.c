/*
 * slurm.c: the fit table as a Lua chunk of data (see slurm.h). Written as mps_fit answers: a job's entry is printed
 * once its last device is in; the GRES type names come from the aliases of the devices seen, once each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm.h"

struct mpc_slurm_writer {
	char *buf;
	size_t len, cap;
	bool failed;
	char (*types)[2][MP_STORE_ALIAS_MAX];	/* [i][0] GRES type, [i][1] profile */
	size_t ntypes, captypes;
	size_t ndevices_in_job;
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

static void put_quoted(mpc_slurm_writer *w, const char *s)
{
	char q[4 * 256 + 3];

	if (!mpc_lua_quote(s, q, sizeof(q)))
		w->failed = true;
	else
		put(w, q);
}

bool mpc_lua_quote(const char *s, char *out, size_t len)
{
	size_t n = 0;

	if (len < 3)
		return false;
	out[n++] = '"';
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char esc[8];
		size_t k;

		if (*p == '\\' || *p == '"')
			k = (size_t)snprintf(esc, sizeof(esc), "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			k = (size_t)snprintf(esc, sizeof(esc), "\\%03u", *p);
		else
			esc[0] = (char)*p, esc[1] = '\0', k = 1;
		if (n + k + 2 > len) {
			out[0] = '\0';
			return false;
		}
		memcpy(out + n, esc, k);
		n += k;
	}
	out[n++] = '"';
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
	put(w, "-- memplan fit table for Slurm's job_submit.lua (deploy/slurm), written by POST /v1/slurm/fit-table.\n"
	       "-- min_gpus: the smallest of gpu_counts the job fits with on the profile, false when none does.\n"
	       "return {\n  format = \"memplan-slurm-fit-table\",\n  version = 1,\n  gpu_counts = {");
	for (size_t g = 0; g < rq->ngpu_counts; g++) {
		snprintf(num, sizeof(num), "%s%llu", g ? ", " : "", (unsigned long long)rq->gpu_counts[g]);
		put(w, num);
	}
	put(w, "},\n  jobs = {\n");
	return w->failed ? MP_ENOMEM : MP_OK;
}

static mp_status s_job_begin(void *ctx, const mps_fit_job *job, const mps_model *model)
{
	mpc_slurm_writer *w = ctx;

	put(w, "    [");
	put_quoted(w, job->id);
	put(w, "] = {\n      model = ");
	put_quoted(w, model->id[0] ? model->id : "inline");
	put(w, job->training ? ",\n      kind = \"training\",\n" : ",\n      kind = \"inference\",\n");
	put(w, "      min_gpus = {\n");
	w->ndevices_in_job = 0;
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
	put(w, "        [");
	put_quoted(w, dev->id);
	if (smallest)
		snprintf(num, sizeof(num), "] = %llu,\n", (unsigned long long)smallest);
	else
		snprintf(num, sizeof(num), "] = false,\n");
	put(w, num);
	add_types(w, dev);
	return w->failed ? MP_ENOMEM : MP_OK;
}

static mp_status s_job_end(void *ctx)
{
	mpc_slurm_writer *w = ctx;

	put(w, "      },\n    },\n");
	return w->failed ? MP_ENOMEM : MP_OK;
}

const mps_fit_sink *mpc_slurm_sink(void)
{
	static const mps_fit_sink sink = { s_begin, s_job_begin, s_device, s_job_end };

	return &sink;
}

char *mpc_slurm_writer_finish(mpc_slurm_writer *w)
{
	char *text;

	put(w, "  },\n  -- GRES types Slurm's AutoDetect=nvml gives these GPUs (the NVML name lowercased, blanks as '_')\n"
	       "  gres_types = {\n");
	for (size_t k = 0; k < w->ntypes; k++) {
		put(w, "    [");
		put_quoted(w, w->types[k][0]);
		put(w, "] = ");
		put_quoted(w, w->types[k][1]);
		put(w, ",\n");
	}
	put(w, "  },\n}\n");
	text = w->failed ? NULL : w->buf;
	if (text)
		w->buf = NULL;
	mpc_slurm_writer_free(w);
	return text;
}
