/*
 * training_h200.c: prints the training planner's predictions next to the H200 measurements
 * (tests/ref/groundtruth/h200/measurements.json, "training" rows) as a Markdown table with the error of each row.
 * Usage: build/bench/training_h200 [REF_DIR, default tests/ref]. Reads files; the planner stays pure.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../model/model.h"
#include "../planner/memplan.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		} else if (buf) {
			buf[n] = '\0';
		}
	}
	fclose(f);
	return buf;
}

static cJSON *load(const char *dir, const char *rel)
{
	char path[1024];
	char *text;
	cJSON *j;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	text = slurp(path);
	if (text == NULL) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(2);
	}
	j = cJSON_Parse(text);
	free(text);
	return j;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "tests/ref";
	cJSON *gt = load(dir, "groundtruth/h200/measurements.json"), *cfg = load(dir, "models/gpt2.json"), *row;
	double worst_s = 0, worst_p = 0;
	int n = 0;

	printf("| regime | attention | checkpointing | batch x seq | states measured | states predicted | error "
	       "| peak measured | peak predicted | error | peak phase (binding term) |\n");
	printf("|---|---|---|---|---:|---:|---:|---:|---:|---:|---|\n");
	cJSON_ArrayForEach(row, cJSON_GetObjectItem(gt, "training"))
	{
		mp_model m;
		mp_param_count pc;
		mp_training_req req;
		mp_training_memory mem;
		mp_error err = MP_ERROR_INIT;
		const char *regime = cJSON_GetObjectItem(row, "regime")->valuestring;
		const char *attn = cJSON_GetObjectItem(row, "attn")->valuestring;
		bool ckpt = cJSON_IsTrue(cJSON_GetObjectItem(row, "ckpt"));
		double ms = cJSON_GetObjectItem(row, "states_bytes_after_step")->valuedouble;
		double mpk = cJSON_GetObjectItem(row, "peak_over_base_bytes")->valuedouble;
		double ps, pp, es, ep;

		if (mpm_from_hf(cfg, "", &m, &err) != MP_OK || mp_count_parameters(&m, &pc, &err) != MP_OK) {
			fprintf(stderr, "model: %s\n", err.message);
			return 1;
		}
		m.num_layers = (uint64_t)cJSON_GetObjectItem(row, "layers")->valuedouble;
		mp_count_parameters(&m, &pc, &err);
		mpm_training_extras(cfg, &m);
		memset(&req, 0, sizeof(req));
		req.precision = strcmp(regime, "fp32") == 0 ? MP_PRECISION_FP32
				: strcmp(regime, "bf16") == 0 ? MP_PRECISION_BF16
							      : MP_PRECISION_AMP_BF16;
		req.optimizer = MP_OPTIMIZER_ADAMW;
		req.micro_batch_size = (uint64_t)cJSON_GetObjectItem(row, "batch")->valuedouble;
		req.sequence_length = (uint64_t)cJSON_GetObjectItem(row, "seq")->valuedouble;
		req.recompute = ckpt ? MP_RECOMPUTE_FULL : MP_RECOMPUTE_NONE;
		req.attention = strcmp(attn, "eager") == 0 ? MP_TRAIN_ATTENTION_EAGER : MP_TRAIN_ATTENTION_FUSED;
		if (mp_plan_training(&m, &pc, &req, &mem, &err) != MP_OK) {
			fprintf(stderr, "plan: %s %s\n", err.field, err.message);
			return 1;
		}
		ps = (double)mem.states_bytes;
		pp = (double)(mem.total_bytes - mem.cuda_context_bytes);
		es = 100.0 * (ps - ms) / ms;
		ep = 100.0 * (pp - mpk) / mpk;
		worst_s = fmax(worst_s, fabs(es));
		worst_p = fmax(worst_p, fabs(ep));
		printf("| %s | %s | %s | %.0f x %.0f | %.0f | %.0f | %+.2f%% | %.0f | %.0f | %+.2f%% | %s (%s) |\n", regime,
		       attn, ckpt ? "every layer" : "none", (double)req.micro_batch_size, (double)req.sequence_length, ms,
		       ps, es, mpk, pp, ep, mem.phases[mem.peak_phase].moment, mem.binding_term);
		n++;
	}
	printf("\n%d rows; largest |error|: states %.2f%%, peak %.2f%%\n", n, worst_s, worst_p);
	cJSON_Delete(gt);
	cJSON_Delete(cfg);
	return 0;
}
