/*
 * fidelity.c: prints, as Markdown tables for bench/RESULTS.md, what the mechanisms of issue 15 put into the
 * training and prefill peaks for the cases the held-back H200 rows missed: SDPA's math fallback in fp32 training of
 * grouped-query models, LoRA's frozen base, Gemma-2's soft-capping, and transformers 5's grouped_mm MoE prefill.
 * No measurement of these cases is in the repository, so each table shows the predicted peak and the bytes the
 * mechanism accounts for (with the former formula where one existed), not an error against a measurement.
 * Usage: build/bench/fidelity (run from the repository root; reads tests/ref/models and tests/data).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void model(const char *path, mp_model *m, mp_param_count *pc)
{
	char *text = slurp(path);
	mp_error err = MP_ERROR_INIT;

	if (text == NULL || mpm_from_hf_text(text, "", m, &err) != MP_OK || mp_count_parameters(m, pc, &err) != MP_OK) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(2);
	}
	free(text);
}

static mp_training_req req_of(mp_precision p, mp_train_attention a, uint64_t b, uint64_t s)
{
	mp_training_req r;

	memset(&r, 0, sizeof(r));
	r.precision = p;
	r.optimizer = MP_OPTIMIZER_ADAMW;
	r.attention = a;
	r.micro_batch_size = b;
	r.sequence_length = s;
	r.num_gpus = 1;
	return r;
}

static mp_training_memory plan(const mp_model *m, const mp_param_count *pc, const mp_training_req *r)
{
	mp_training_memory mem;
	mp_error err = MP_ERROR_INIT;

	if (mp_plan_training(m, pc, r, &mem, &err) != MP_OK) {
		fprintf(stderr, "plan failed: %s %s\n", err.field, err.message);
		exit(1);
	}
	return mem;
}

static double gb(uint64_t b)
{
	return (double)b / 1e9;
}

static void sdpa_table(void)
{
	static const struct {
		const char *name, *path;
	} models[] = {
		{ "llama-3.2-1b", "tests/ref/models/llama-3.2-1b.json" },
		{ "qwen2.5-0.5b", "tests/data/qwen2.5-0.5b.json" },
		{ "gpt2 (MHA, control)", "tests/ref/models/gpt2.json" },
	};
	static const uint64_t shapes[][2] = { { 4, 512 }, { 8, 1024 } };

	printf("| model | batch x seq | kernel | scores per layer B | scores, all layers GB | peak predicted GB | "
	       "scores share of peak |\n|---|---|---|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		mp_model m;
		mp_param_count pc;

		model(models[i].path, &m, &pc);
		for (size_t k = 0; k < 2; k++) {
			mp_training_req r = req_of(MP_PRECISION_FP32, MP_TRAIN_ATTENTION_FUSED, shapes[k][0], shapes[k][1]);
			mp_training_memory mem = plan(&m, &pc, &r);
			uint64_t all = mem.activations.layer.attention_scores * m.num_layers;

			printf("| %s | %llu x %llu | %s | %llu | %.2f | %.2f | %.1f%% |\n", models[i].name,
			       (unsigned long long)shapes[k][0], (unsigned long long)shapes[k][1], mem.attention_kernel,
			       (unsigned long long)mem.activations.layer.attention_scores, gb(all), gb(mem.total_bytes),
			       100.0 * (double)all / (double)mem.total_bytes);
		}
	}
}

static void lora_table(void)
{
	static const struct {
		mp_precision p;
		const char *name;
	} regimes[] = { { MP_PRECISION_BF16, "bf16" }, { MP_PRECISION_AMP_BF16, "amp_bf16" } };
	static const struct {
		uint32_t mask;
		const char *name;
	} targets[] = { { MP_LORA_ALL, "all" }, { MP_LORA_Q | MP_LORA_V, "q,v" } };
	mp_model m;
	mp_param_count pc;

	model("tests/ref/models/llama-3.2-1b.json", &m, &pc);
	printf("| regime | targets | batch x seq | full: activations GB | LoRA r 16: activations GB | LoRA / full | "
	       "LoRA peak GB |\n|---|---|---|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < 2; i++)
		for (size_t t = 0; t < 2; t++) {
			mp_training_req r = req_of(regimes[i].p, MP_TRAIN_ATTENTION_FUSED, 8, 1024);
			mp_training_memory full = plan(&m, &pc, &r), lora;

			r.finetune = MP_FINETUNE_LORA;
			r.lora_rank = 16;
			r.lora_targets = targets[t].mask;
			lora = plan(&m, &pc, &r);
			printf("| %s | %s | 8 x 1024 | %.2f | %.2f | %.2f | %.2f |\n", regimes[i].name, targets[t].name,
			       gb(full.activations_bytes), gb(lora.activations_bytes),
			       (double)lora.activations_bytes / (double)full.activations_bytes, gb(lora.total_bytes));
		}
}

static void gemma2_table(void)
{
	static const uint64_t shapes[][2] = { { 4, 512 }, { 8, 1024 } };
	mp_model m;
	mp_param_count pc;

	model("tests/data/gemma-2-2b.json", &m, &pc);
	printf("| batch x seq | scores per layer B (softcap) | without the tanh output | logits softcap B | "
	       "peak predicted GB | the two soft-caps' share of peak |\n|---|---:|---:|---:|---:|---:|\n");
	for (size_t k = 0; k < 2; k++) {
		mp_training_req r = req_of(MP_PRECISION_BF16, MP_TRAIN_ATTENTION_EAGER, shapes[k][0], shapes[k][1]);
		mp_training_memory mem = plan(&m, &pc, &r);
		uint64_t s = mem.activations.layer.attention_scores, plain = s / 8 * 6;
		uint64_t caps = (s - plain) * m.num_layers + mem.logits.softcap_bytes;

		printf("| %llu x %llu | %llu | %llu | %llu | %.2f | %.1f%% |\n", (unsigned long long)shapes[k][0],
		       (unsigned long long)shapes[k][1], (unsigned long long)s, (unsigned long long)plain,
		       (unsigned long long)mem.logits.softcap_bytes, gb(mem.total_bytes),
		       100.0 * (double)caps / (double)mem.total_bytes);
	}
}

static void moe_table(void)
{
	static const uint64_t shapes[][2] = { { 1, 4096 }, { 8, 1024 }, { 32, 512 } };
	mp_model m;
	mp_param_count pc;

	model("tests/ref/models/mixtral-8x7b.json", &m, &pc);
	printf("| batch x seq | routed experts B (grouped_mm) | the former formula B | MLP phase B | prefill peak over "
	       "weights + KV B |\n|---|---:|---:|---:|---:|\n");
	for (size_t k = 0; k < 3; k++) {
		mp_inference_req req = { MP_DTYPE_BF16, MP_DTYPE_BF16, shapes[k][0], shapes[k][1], 1, 0, NULL };
		mp_inference_opts o;
		mp_workspace ws;
		mp_error err = MP_ERROR_INIT;
		uint64_t T = shapes[k][0] * shapes[k][1], h = m.hidden_size, f = m.moe_intermediate_size, kk = 2;
		uint64_t now = T * h * 2 + T * kk * 44 + T * kk * 2 * h * 2 + T * kk * (4 * f > 3 * f + 2 * h ? 4 * f : 3 * f + 2 * h) * 2;
		uint64_t before = T * kk * (3 * f + h) * 2 + T * h * 2 + T * m.num_experts * 4;

		memset(&o, 0, sizeof(o));
		o.attention = MP_ATTENTION_FUSED;
		if (mp_prefill_workspace(&m, &req, &o, &ws, &err) != MP_OK)
			exit(1);
		printf("| %llu x %llu | %llu | %llu | %llu | %llu |\n", (unsigned long long)shapes[k][0],
		       (unsigned long long)shapes[k][1], (unsigned long long)now, (unsigned long long)before,
		       (unsigned long long)ws.mlp_phase_bytes,
		       (unsigned long long)(ws.mlp_phase_bytes > ws.attention_phase_bytes ? ws.mlp_phase_bytes
											 : ws.attention_phase_bytes));
	}
}

int main(void)
{
	printf("### fp32 training with sdpa: the kernel SDPA picks\n\n");
	sdpa_table();
	printf("\n### LoRA: what a frozen base keeps (Llama-3.2-1B)\n\n");
	lora_table();
	printf("\n### Gemma-2-2B, eager attention, bf16: the soft-caps' tanh outputs\n\n");
	gemma2_table();
	printf("\n### Mixtral-8x7B prefill, sdpa, bf16: the MoE layer under grouped_mm\n\n");
	moe_table();
	return 0;
}
