/*
 * test_llamacpp.c: the GGUF and safetensors readers and llama.cpp's buffer arithmetic against what the real programs
 * wrote and printed (tests/ref/llamacpp, tools/groundtruth/llamacpp/generate.py: llama.cpp 0c1e5709 from
 * llama-cpp-python 0.3.36's sdist, CPU backend, RPC servers standing in for GPUs; transformers 5.24 building each
 * reference model). For every reference run: the model and KV buffers equal what llama.cpp printed (MiB to two
 * decimals, as it prints them), the context's n_ctx / n_ctx_seq / n_batch / n_ubatch equal, the compute buffers
 * within their class's bound (10% for the whole model on one device, partial offloads, -nkvo and pipeline
 * parallelism; 18% for tensor overrides, tests/ref/llamacpp/README.md says why; the table goes to stdout). Every GGUF and safetensors header is read and its tensors matched one by
 * one against the model's inventory; the safetensors tensors' bytes sum to the plan's weights.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../model/gguf.h"
#include "../model/gguf_llamacpp.h"
#include "../model/model.h"
#include "../model/safetensors.h"
#include "../model/tensor_names.h"
#include "refs.h"

static cJSON *runs_doc;

static int setup(void **state)
{
	(void)state;
	runs_doc = ref_json("llamacpp/runs.json");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	cJSON_Delete(runs_doc);
	return 0;
}

static uint8_t *read_rel(const char *rel, size_t *len)
{
	char *b = ref_read(ref_path(rel), len);
	assert_non_null(b);
	return (uint8_t *)b;
}

static void load_gguf(const char *model, mpm_gguf *g)
{
	char rel[256];
	size_t len;
	uint8_t *buf;
	mp_error err = MP_ERROR_INIT;
	bool truncated = false;

	snprintf(rel, sizeof(rel), "llamacpp/models/%s.gguf.hdr", model);
	buf = read_rel(rel, &len);
	if (mpm_gguf_read(buf, len, 0, "/model/gguf_header", g, &truncated, &err) != MP_OK)
		fail_msg("%s: %s: %s", model, err.field, err.message);
	free(buf);
}

/* ggml's own table (ggml_types.tsv, printed by that build) against planner/ggml.c, id by id */
static void test_ggml_types(void **state)
{
	char *tsv = ref_text("llamacpp/ggml_types.tsv"), *line, *save = NULL;
	int rows = 0;
	(void)state;
	for (line = strtok_r(tsv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned id, bv, bb, q;
		char name[32];
		mp_ggml_traits tr;
		if (line[0] == '#')
			continue;
		assert_int_equal(sscanf(line, "%u\t%31s\t%u\t%u\t%u", &id, name, &bv, &bb, &q), 5);
		tr = mp_ggml_traits_of(id);
		assert_non_null(tr.name);
		assert_string_equal(tr.name, name);
		assert_int_equal(tr.block_values, bv);
		assert_int_equal(tr.block_bytes, bb);
		assert_int_equal(tr.quantized, q != 0);
		rows++;
	}
	assert_int_equal(rows, 35);
	/* the removed ids and the first unknown one */
	assert_false(mp_ggml_type_valid(4));
	assert_false(mp_ggml_type_valid(31));
	assert_false(mp_ggml_type_valid(43));
	{
		uint64_t ne[2] = { 4096, 128256 }, b;
		assert_true(mp_ggml_tensor_bytes(MP_GGML_Q6_K, ne, 2, &b));
		assert_int_equal(b, 430940160); /* the worked example of mp_ggml.h */
	}
	free(tsv);
}

/* every GGUF header: read as gguf-py read the whole file (data offset, tensor count, tensor bytes) */
static void test_gguf_headers(void **state)
{
	const cJSON *models = cJSON_GetObjectItemCaseSensitive(runs_doc, "models"), *m;
	int n = 0;
	(void)state;
	cJSON_ArrayForEach(m, models)
	{
		mpm_gguf g;
		load_gguf(m->string, &g);
		assert_int_equal(g.data_offset, cJSON_GetObjectItem(m, "data_offset")->valuedouble);
		assert_int_equal(g.data_offset, cJSON_GetObjectItem(m, "header_bytes")->valuedouble);
		assert_int_equal(g.n_tensors, cJSON_GetObjectItem(m, "n_tensors")->valuedouble);
		assert_int_equal(g.tensor_bytes, cJSON_GetObjectItem(m, "tensor_bytes")->valuedouble);
		/* the file ends where the data section does */
		assert_int_equal(g.data_offset + g.data_bytes, cJSON_GetObjectItem(m, "file_bytes")->valuedouble);
		mpm_gguf_free(&g);
		n++;
	}
	assert_true(n >= 8);
}

/* a GGUF of each architecture -> mp_model -> its inventory, tensor by tensor */
static void test_gguf_inventory_match(void **state)
{
	const cJSON *models = cJSON_GetObjectItemCaseSensitive(runs_doc, "models"), *m;
	int n = 0;
	(void)state;
	cJSON_ArrayForEach(m, models)
	{
		mpm_gguf g;
		mp_model model;
		mpm_match mt;
		mpm_named_tensor *nt;
		mp_error err = MP_ERROR_INIT;
		char why[2048];
		if (strstr(m->string, "-f16") == NULL)
			continue;
		load_gguf(m->string, &g);
		if (mpm_gguf_to_model(&g, "/model/gguf_header", &model, &err) != MP_OK)
			fail_msg("%s: %s: %s", m->string, err.field, err.message);
		nt = calloc(g.n_tensors, sizeof(*nt));
		assert_non_null(nt);
		for (size_t i = 0; i < g.n_tensors; i++) {
			uint64_t v = 1;
			for (int d = 0; d < 4; d++)
				v *= g.tensors[i].ne[d];
			nt[i].name = g.tensors[i].name;
			nt[i].values = v;
			nt[i].bytes = g.tensors[i].bytes;
		}
		assert_int_equal(mpm_match_tensors(nt, g.n_tensors, MPM_NAMING_GGUF, &model, MP_LAYOUT_GGUF, &mt, &err), MP_OK);
		mpm_match_describe(&mt, why, sizeof(why));
		if (!mt.ok)
			fail_msg("%s: %s", m->string, why);
		assert_int_equal(mt.file_bytes, g.tensor_bytes);
		printf("  %-14s %zu tensors, %zu inventory rows, all equal\n", m->string, g.n_tensors, mt.n);
		free(nt);
		mpm_gguf_free(&g);
		n++;
	}
	assert_int_equal(n, 8);
}

static const char *const archs[] = { "llama", "qwen2", "qwen3", "mixtral", "qwen3_moe", "gemma3", "phi3", "gpt2" };

/* every safetensors checkpoint: its tensors' bytes are the plan's weights, and its tensors the inventory's */
static void test_safetensors(void **state)
{
	(void)state;
	for (size_t a = 0; a < sizeof(archs) / sizeof(archs[0]); a++) {
		char rel[256];
		mpm_st st = { 0 };
		mp_model model;
		mp_param_count pc;
		mp_weights w;
		mp_weight_formats f = { 0 };
		mpm_match mt;
		mpm_named_tensor *nt;
		mp_error err = MP_ERROR_INIT;
		cJSON *cfg, *index = NULL;
		const char *shards[8];
		int ns = 1;
		char why[2048];

		snprintf(rel, sizeof(rel), "llamacpp/models/%s.config.json", archs[a]);
		cfg = ref_json(rel);
		/* qwen3_moe's config as transformers 5.24 saves it spells the expert count num_local_experts */
		assert_int_equal(mpm_from_hf(cfg, "/model/hf_config", &model, &err), MP_OK);
		snprintf(rel, sizeof(rel), "%s", ref_path("llamacpp/models"));
		{
			char ip[256];
			FILE *fp;
			snprintf(ip, sizeof(ip), "llamacpp/models/%s.model.safetensors.index.json", archs[a]);
			fp = fopen(ref_path(ip), "r");
			if (fp) {
				fclose(fp);
				index = ref_json(ip);
				ns = mpm_st_index_shards(index, shards, 8);
				assert_true(ns > 1);
			} else {
				shards[0] = "model.safetensors";
			}
		}
		for (int s = 0; s < ns; s++) {
			size_t len;
			uint8_t *buf;
			snprintf(rel, sizeof(rel), "llamacpp/models/%s.%s.hdr", archs[a], shards[s]);
			buf = read_rel(rel, &len);
			if (mpm_st_read(buf, len, 0, (uint32_t)s, "/model/safetensors_headers", &st, &err) != MP_OK)
				fail_msg("%s: %s", rel, err.message);
			free(buf);
		}
		assert_int_equal(st.shards, ns);
		/* the plan's weights in the checkpoint's dtype (bf16, packed: the tensors as stored) */
		f.layout = MP_LAYOUT_PACKED;
		assert_int_equal(mp_count_parameters(&model, &pc, &err), MP_OK);
		assert_int_equal(mp_weight_bytes(&model, MP_DTYPE_BF16, MP_DTYPE_BF16, &f, 1, &w, &err), MP_OK);
		if (w.total_bytes != st.tensor_bytes)
			fail_msg("%s: the plan's weights %llu bytes, the checkpoint's tensors %llu", archs[a],
				 (unsigned long long)w.total_bytes, (unsigned long long)st.tensor_bytes);
		nt = calloc(st.n_tensors, sizeof(*nt));
		for (size_t i = 0; i < st.n_tensors; i++) {
			nt[i].name = st.tensors[i].name;
			nt[i].values = st.tensors[i].values;
			nt[i].bytes = st.tensors[i].bytes;
			nt[i].aux = st.tensors[i].aux;
		}
		assert_int_equal(mpm_match_tensors(nt, st.n_tensors, MPM_NAMING_HF, &model, MP_LAYOUT_PACKED, &mt, &err), MP_OK);
		mpm_match_describe(&mt, why, sizeof(why));
		if (!mt.ok)
			fail_msg("%s: %s", archs[a], why);
		printf("  %-10s %u shard(s), %zu tensors, %llu bytes = the plan's weights\n", archs[a], st.shards,
		       st.n_tensors, (unsigned long long)st.tensor_bytes);
		free(nt);
		mpm_st_free(&st);
		cJSON_Delete(cfg);
		cJSON_Delete(index);
	}
}

/* ----- the runs ---------------------------------------------------------------------------------------------- */

static uint32_t type_named(const char *s)
{
	uint32_t t = mp_ggml_type_from_name(s);
	assert_true(t < MP_GGML_TYPE_COUNT);
	return t;
}

/* llama.cpp's command line (the grid's flags) -> the launch half of the params */
static bool launch_of(const cJSON *args, int rpc, bool server, mp_llamacpp_params *p, bool *repack)
{
	int n = cJSON_GetArraySize(args);
	bool fa_auto = true, fa = true, np_given = false;

	p->n_gpu_layers = -1;
	p->n_devices = (uint32_t)rpc;
	p->backend = MP_LLAMACPP_CPU; /* RPC servers of the CPU backend: its buffer types */
	p->mmap = true;
	p->kv_offload = true;
	p->n_seq_max = 1;
	p->type_k = p->type_v = MP_GGML_F16;
	*repack = false;
	for (int i = 0; i < n; i++) {
		const char *a = cJSON_GetArrayItem(args, i)->valuestring;
		const char *v = i + 1 < n ? cJSON_GetArrayItem(args, i + 1)->valuestring : "";
		if (strcmp(a, "-c") == 0) p->n_ctx = (uint32_t)strtoul(v, NULL, 10), i++;
		else if (strcmp(a, "-np") == 0) p->n_seq_max = (uint32_t)strtoul(v, NULL, 10), np_given = true, i++;
		else if (strcmp(a, "-kvu") == 0) p->kv_unified = true;
		else if (strcmp(a, "-b") == 0) p->n_batch = (uint32_t)strtoul(v, NULL, 10), i++;
		else if (strcmp(a, "-ub") == 0) p->n_ubatch = (uint32_t)strtoul(v, NULL, 10), i++;
		else if (strcmp(a, "-ngl") == 0) p->n_gpu_layers = (int32_t)strtol(v, NULL, 10), i++;
		else if (strcmp(a, "-ncmoe") == 0) p->n_cpu_moe = (uint32_t)strtoul(v, NULL, 10), i++;
		else if (strcmp(a, "-ctk") == 0) p->type_k = type_named(v), i++;
		else if (strcmp(a, "-ctv") == 0) p->type_v = type_named(v), i++;
		else if (strcmp(a, "-fa") == 0) fa_auto = false, fa = strcmp(v, "on") == 0, i++;
		else if (strcmp(a, "-nkvo") == 0) p->kv_offload = false;
		else if (strcmp(a, "-lm") == 0) p->mmap = strcmp(v, "none") != 0, i++;
		else if (strcmp(a, "--repack") == 0) *repack = true;
		else if (strcmp(a, "-ot") == 0) p->override = strstr(v, "exps") ? MP_LLAMACPP_OT_EXPERTS : MP_LLAMACPP_OT_FFN, i++;
		else if (strcmp(a, "-ts") == 0) {
			char *end;
			p->tensor_split[0] = strtod(v, &end);
			p->tensor_split[1] = *end == ',' ? strtod(end + 1, NULL) : 0;
			i++;
		} else
			fail_msg("an argument the test does not read: %s", a);
	}
	/* llama-server without -np: 4 slots sharing one unified cache (tools/server/server.cpp) */
	if (server && !np_given) {
		p->n_seq_max = 4;
		p->kv_unified = true;
	}
	/* auto: enabled where the backend runs it (the CPU and CUDA backends for these head widths) */
	p->flash_attn = fa_auto ? true : fa;
	return true;
}

/* the slot of a printed device: the host, or the RPC servers in the order of --rpc (llama.cpp names every server
 * "RPC0[host:port]": each registers its own device 0, so the endpoint tells them apart) */
static int slot_of(const char *dev)
{
	if (strcmp(dev, "CPU") == 0 || strcmp(dev, "CPU_Mapped") == 0)
		return 0;
	if (strstr(dev, ":27152]"))
		return 1;
	if (strstr(dev, ":27153]"))
		return 2;
	return -1;
}

static void mib(char *buf, size_t len, uint64_t bytes)
{
	snprintf(buf, len, "%.2f", bytes / 1024.0 / 1024.0);
}

/*
 * The classes of launch the compute buffers are held to, and each one's bound: the whole model on one device; a
 * partial offload (-ngl below every layer, one GPU or two with -ts); -nkvo; tensor overrides (-ot, --n-cpu-moe); two
 * GPUs with pipeline parallelism (4 copies of the inputs). Where a class's bound is above 10%, README.md says why.
 */
enum { CLASS_FULL, CLASS_PARTIAL, CLASS_NKVO, CLASS_OVERRIDE, CLASS_PIPELINE, N_CLASSES };
static const char *const class_names[N_CLASSES] = { "whole model on one device", "partial offload", "-nkvo",
						    "tensor overrides", "pipeline parallelism" };
static const double class_bound[N_CLASSES] = { 0.10, 0.10, 0.10, 0.10, 0.10 };

static int compute_class(const mp_llamacpp_params *p, const mp_llamacpp_plan *pl)
{
	if (p->override != MP_LLAMACPP_OT_NONE || p->n_cpu_moe)
		return CLASS_OVERRIDE;
	if (!p->kv_offload && p->n_devices)
		return CLASS_NKVO;
	if (pl->sched_copies > 1)
		return CLASS_PIPELINE;
	if (p->n_devices && pl->gpu_layers < p->n_layer + 1)
		return CLASS_PARTIAL;
	return CLASS_FULL;
}

static void test_runs(void **state)
{
	const cJSON *runs = cJSON_GetObjectItemCaseSensitive(runs_doc, "runs"), *r;
	int checked = 0, failures = 0, class_n[N_CLASSES] = { 0 }, class_within[N_CLASSES] = { 0 };
	double class_worst[N_CLASSES] = { 0 };
	(void)state;
	printf("  %-16s %-44s %-10s %12s %12s %7s\n", "model", "arguments", "device", "llama.cpp", "memplan",
	       "error");
	cJSON_ArrayForEach(r, runs)
	{
		const char *model = cJSON_GetObjectItem(r, "model")->valuestring;
		const cJSON *args = cJSON_GetObjectItem(r, "args"), *b, *kvl;
		mpm_gguf g;
		mp_llamacpp_params *p = calloc(1, sizeof(*p));
		mp_llamacpp_plan *pl = calloc(1, sizeof(*pl));
		mp_llamacpp_tensor *t;
		size_t nt;
		mp_error err = MP_ERROR_INIT;
		bool repack;
		char argline[256] = "", want[32], got[32];
		double printed_compute[MP_LLAMACPP_SLOTS] = { 0 };
		const cJSON *ctx;

		if (cJSON_GetObjectItem(r, "returncode")->valueint != 0) {
			free(p);
			free(pl);
			continue; /* a launch llama.cpp refused is in the file with its tail; not a figure */
		}
		for (int i = 0; i < cJSON_GetArraySize(args); i++) {
			size_t o = strlen(argline);
			snprintf(argline + o, sizeof(argline) - o, "%s%s", i ? " " : "", cJSON_GetArrayItem(args, i)->valuestring);
		}
		load_gguf(model, &g);
		assert_int_equal(mpm_gguf_llamacpp(&g, "/model", p, &t, &nt, &err), MP_OK);
		launch_of(args, cJSON_GetObjectItem(r, "rpc")->valueint,
			  cJSON_GetObjectItem(r, "program") &&
				  strcmp(cJSON_GetObjectItem(r, "program")->valuestring, "llama-server") == 0,
			  p, &repack);
		ctx = cJSON_GetObjectItem(r, "context");
		if (cJSON_GetObjectItem(ctx, "flash_attn_resolved"))
			p->flash_attn = strcmp(cJSON_GetObjectItem(ctx, "flash_attn_resolved")->valuestring, "enabled") == 0;
		if (mp_llamacpp_plan_buffers(p, t, nt, pl, &err) != MP_OK)
			fail_msg("%s %s: %s: %s", model, argline, err.field, err.message);
		/* the context */
		assert_int_equal(pl->n_ctx, strtoul(cJSON_GetObjectItem(ctx, "n_ctx")->valuestring, NULL, 10));
		assert_int_equal(pl->n_ctx_seq, strtoul(cJSON_GetObjectItem(ctx, "n_ctx_seq")->valuestring, NULL, 10));
		assert_int_equal(pl->n_batch, strtoul(cJSON_GetObjectItem(ctx, "n_batch")->valuestring, NULL, 10));
		assert_int_equal(pl->n_ubatch, strtoul(cJSON_GetObjectItem(ctx, "n_ubatch")->valuestring, NULL, 10));
		/* the buffers */
		{
			uint64_t model_sum[MP_LLAMACPP_SLOTS] = { 0 }, kv_sum[MP_LLAMACPP_SLOTS] = { 0 };
			double model_printed[MP_LLAMACPP_SLOTS] = { 0 }, kv_printed[MP_LLAMACPP_SLOTS] = { 0 };
			bool seen_model[MP_LLAMACPP_SLOTS] = { false }, seen_kv[MP_LLAMACPP_SLOTS] = { false };
			(void)model_sum;
			(void)kv_sum;
			cJSON_ArrayForEach(b, cJSON_GetObjectItem(r, "buffers"))
			{
				const char *kind = cJSON_GetObjectItem(b, "kind")->valuestring;
				const char *dev = cJSON_GetObjectItem(b, "device")->valuestring;
				double v = strtod(cJSON_GetObjectItem(b, "mib")->valuestring, NULL);
				int s = slot_of(dev);
				if (s < 0) {
					if (repack && strcmp(kind, "model") == 0)
						continue; /* AMX / CPU_REPACK: the CPU's own extra buffers (see README) */
					fail_msg("%s %s: a device the test does not know: %s", model, argline, dev);
				}
				if (strcmp(kind, "model") == 0) {
					model_printed[s] += v;
					seen_model[s] = true;
				} else if (strcmp(kind, "KV") == 0) {
					kv_printed[s] += v;
					seen_kv[s] = true;
				} else if (strcmp(kind, "compute") == 0) {
					printed_compute[s] += v;
				}
			}
			for (int s = 0; s < MP_LLAMACPP_SLOTS; s++) {
				if (repack && s == 0)
					continue;
				if (seen_model[s] || pl->model_bytes[s]) {
					snprintf(want, sizeof(want), "%.2f", model_printed[s]);
					mib(got, sizeof(got), pl->model_bytes[s]);
					if (strcmp(want, got) != 0) {
						printf("  MISMATCH model %s %s slot %d: llama.cpp %s MiB, memplan %s MiB\n", model,
						       argline, s, want, got);
						failures++;
					}
				}
				if (seen_kv[s] || pl->kv_bytes[s]) {
					snprintf(want, sizeof(want), "%.2f", kv_printed[s]);
					mib(got, sizeof(got), pl->kv_bytes[s]);
					if (strcmp(want, got) != 0) {
						printf("  MISMATCH KV %s %s slot %d: llama.cpp %s MiB, memplan %s MiB\n", model,
						       argline, s, want, got);
						failures++;
					}
				}
			}
		}
		/* "K (f16): X MiB, V (f16): Y MiB" of each cache (the non-SWA cache first) */
		kvl = cJSON_GetObjectItem(r, "kv_cache");
		for (int i = 0; i < cJSON_GetArraySize(kvl); i++) {
			const cJSON *k = cJSON_GetArrayItem(kvl, i);
			bool swa_line = cJSON_GetArraySize(kvl) == 2 && i == 1;
			mib(got, sizeof(got), swa_line ? pl->k_bytes_swa : pl->k_bytes);
			if (strcmp(got, cJSON_GetObjectItem(k, "k")->valuestring) != 0) {
				printf("  MISMATCH K %s %s: %s vs %s\n", model, argline, cJSON_GetObjectItem(k, "k")->valuestring, got);
				failures++;
			}
			mib(got, sizeof(got), swa_line ? pl->v_bytes_swa : pl->v_bytes);
			if (strcmp(got, cJSON_GetObjectItem(k, "v")->valuestring) != 0) {
				printf("  MISMATCH V %s %s: %s vs %s\n", model, argline, cJSON_GetObjectItem(k, "v")->valuestring, got);
				failures++;
			}
			if (swa_line)
				assert_int_equal(pl->kv_size_swa, strtoul(cJSON_GetObjectItem(k, "cells")->valuestring, NULL, 10));
		}
		/* the worked example of mp_llamacpp.h: pipeline parallelism over two GPUs keeps 4 copies */
		if (strcmp(model, "llama-f16") == 0 && strcmp(argline, "-c 2048 -ngl 99 -ts 1,1") == 0) {
			assert_int_equal(pl->sched_copies, 4);
			mib(got, sizeof(got), pl->compute_bytes[0]);
			assert_string_equal(got, "10.52");
			mib(got, sizeof(got), pl->compute_bytes[1]);
			assert_string_equal(got, "16.02");
			mib(got, sizeof(got), pl->compute_bytes[2]);
			assert_string_equal(got, "16.02");
		} else if (p->n_devices < 2) {
			assert_int_equal(pl->sched_copies, 1);
		}
		/* compute buffers: within the bound of the run's class of what llama.cpp reserved, per device (the classes
		 * and what remains of each: tests/ref/llamacpp/README.md) */
		{
			int cls = compute_class(p, pl);
			bool any_printed = false;
			for (int s = 0; s < MP_LLAMACPP_SLOTS; s++)
				any_printed |= printed_compute[s] > 0;
			for (int s = 0; s < MP_LLAMACPP_SLOTS && any_printed; s++) {
				double mine = pl->compute_bytes[s] / 1024.0 / 1024.0, e;
				if (printed_compute[s] == 0 && pl->compute_bytes[s] == 0)
					continue;
				e = printed_compute[s] > 0 ? (mine - printed_compute[s]) / printed_compute[s] : 1;
				printf("  %-16s %-44s %-10s %12.2f %12.2f %+6.1f%%  %s\n", model, argline, s ? "RPC" : "CPU",
				       printed_compute[s], mine, 100 * e, class_names[cls]);
				if (e < 0)
					e = -e;
				if (e > class_worst[cls])
					class_worst[cls] = e;
				if (e <= 0.10)
					class_within[cls]++;
				class_n[cls]++;
				if (e > class_bound[cls]) {
					printf("  MISMATCH compute %s %s slot %d: %.1f%% off, over the %s bound of %.0f%%\n", model,
					       argline, s, 100 * e, class_names[cls], 100 * class_bound[cls]);
					failures++;
				}
			}
		}
		checked++;
		free(t);
		free(p);
		free(pl);
		mpm_gguf_free(&g);
	}
	printf("  %d runs checked, model and KV buffers all equal; compute buffers per class:\n", checked);
	for (int c = 0; c < N_CLASSES; c++) {
		printf("    %-32s %4d buffers, %4d within 10%%, the worst %5.1f%% off (bound %.0f%%)\n", class_names[c],
		       class_n[c], class_within[c], 100 * class_worst[c], 100 * class_bound[c]);
		assert_true(class_n[c] > 0);
	}
	assert_true(checked >= 100);
	assert_int_equal(failures, 0);
}

/* The worked example of mp_llamacpp_max_gpu_layers: llama.cpp's retry without pipeline parallelism. The llama reference
 * in f16, -c 2048, two GPUs -ts 1,1: with each GPU's budget the total of the plan without pipeline parallelism, every
 * layer still fits (sched_copies 1, pipeline_fallback); with the pipeline plan's totals, the 4 copies are kept. */
/*
 * ggml-alloc.c's ggml_dyn_tallocr as mp_ggml_dyn_alloc replays it (the worked example of mp_ggml.h), and the host
 * buffer of mixtral -ot ffn_.*=CPU replayed by hand from the allocation order llama.cpp 0c1e5709 took
 * (tools/groundtruth/llamacpp/trace_alloc.sh): the inputs, the mask's freed hole cut by the router's small
 * tensors, and gate, up and their product past the inputs: 8.51 MiB, as llama.cpp printed (tests/ref/llamacpp).
 */
static void test_dyn_alloc(void **state)
{
	mp_ggml_dyn_alloc a;
	uint64_t x, y, z, T = 512, row = T * 256 * 4, act = T * 2 * 512 * 4;
	uint64_t tok, pos, ki, vi, mask, norm, lg, as, w, ws, wn, gate, up, glu;
	(void)state;

	mp_ggml_dyn_init(&a, 32);
	x = mp_ggml_dyn_take(&a, 100);
	y = mp_ggml_dyn_take(&a, 64);
	z = mp_ggml_dyn_take(&a, 1000);
	assert_int_equal(x, 0);
	assert_int_equal(y, 128);
	assert_int_equal(z, 192);
	mp_ggml_dyn_give(&a, x, 100);
	mp_ggml_dyn_give(&a, z, 1000);
	assert_int_equal(a.n_free, 2);
	assert_int_equal(mp_ggml_dyn_take(&a, 96), 0);
	assert_int_equal(mp_ggml_dyn_take(&a, 200), 192);
	assert_int_equal(a.max_size, 1216);
	assert_false(a.overflow);

	mp_ggml_dyn_init(&a, 32);
	tok = mp_ggml_dyn_take(&a, T * 4);
	(void)mp_ggml_dyn_take(&a, row);
	pos = mp_ggml_dyn_take(&a, T * 4);
	ki = mp_ggml_dyn_take(&a, T * 8);
	vi = mp_ggml_dyn_take(&a, T * 8);
	mask = mp_ggml_dyn_take(&a, 2048 * T * 2);
	(void)mp_ggml_dyn_take(&a, T * 4);
	x = mp_ggml_dyn_take(&a, row);
	assert_int_equal(x, 2635776); /* 2.5137 MiB: what the trace printed for embd */
	mp_ggml_dyn_give(&a, tok, T * 4);
	mp_ggml_dyn_give(&a, x, row);
	mp_ggml_dyn_give(&a, pos, T * 4);
	mp_ggml_dyn_give(&a, ki, T * 8);
	mp_ggml_dyn_give(&a, vi, T * 8);
	mp_ggml_dyn_give(&a, mask, 2048 * T * 2);
	norm = mp_ggml_dyn_take(&a, row);
	assert_int_equal(norm, 526336); /* into the hole the positions, indices and mask left (0.5020 MiB) */
	lg = mp_ggml_dyn_take(&a, T * 4 * 4);
	as = mp_ggml_dyn_take(&a, T * 4 * 4);
	w = mp_ggml_dyn_take(&a, T * 2 * 4);
	mp_ggml_dyn_give(&a, lg, T * 4 * 4);
	ws = mp_ggml_dyn_take(&a, T * 4);
	assert_int_equal(ws, 0); /* the tokens' 2 KiB, an exact fit */
	wn = mp_ggml_dyn_take(&a, T * 2 * 4);
	assert_int_equal(wn, lg);
	mp_ggml_dyn_give(&a, w, T * 2 * 4);
	mp_ggml_dyn_give(&a, ws, T * 4);
	gate = mp_ggml_dyn_take(&a, act);
	assert_int_equal(gate, 2635776); /* 2 MiB fits no hole: past the inputs */
	up = mp_ggml_dyn_take(&a, act);
	mp_ggml_dyn_give(&a, norm, row);
	glu = mp_ggml_dyn_take(&a, act);
	assert_int_equal(glu, up + act);
	(void)as;
	(void)wn;
	/* 0x883800, 8.5137 MiB, the trace's own top: "CPU compute buffer size = 8.51 MiB" */
	assert_int_equal(a.max_size, 8927232);
}

static void test_pipeline_fallback(void **state)
{
	static const char *const argv[] = { "-c", "2048", "-ngl", "99", "-ts", "1,1" };
	cJSON *args = cJSON_CreateStringArray(argv, 6);
	mpm_gguf g;
	mp_llamacpp_params *p = calloc(1, sizeof(*p));
	mp_llamacpp_plan *pp = calloc(1, sizeof(*pp)), *flat = calloc(1, sizeof(*flat)), *best = calloc(1, sizeof(*best));
	mp_llamacpp_tensor *t;
	size_t nt;
	mp_error err = MP_ERROR_INIT;
	uint64_t budget[MP_LLAMACPP_SLOTS] = { 0 };
	int32_t ngl;
	uint32_t ctx;
	bool repack;
	char got[32];
	(void)state;

	assert_non_null(args);
	load_gguf("llama-f16", &g);
	assert_int_equal(mpm_gguf_llamacpp(&g, "/model", p, &t, &nt, &err), MP_OK);
	launch_of(args, 2, false, p, &repack);
	assert_int_equal(mp_llamacpp_plan_buffers(p, t, nt, pp, &err), MP_OK);
	assert_int_equal(pp->sched_copies, 4);
	p->no_pipeline = true;
	assert_int_equal(mp_llamacpp_plan_buffers(p, t, nt, flat, &err), MP_OK);
	p->no_pipeline = false;
	assert_int_equal(flat->sched_copies, 1);
	mib(got, sizeof(got), pp->compute_bytes[1]);
	assert_string_equal(got, "16.02");
	mib(got, sizeof(got), flat->compute_bytes[1]);
	assert_string_equal(got, "8.01");
	/* budgets of the plan without pipeline parallelism: every layer, llama.cpp's retry */
	budget[1] = flat->total_bytes[1];
	budget[2] = flat->total_bytes[2];
	assert_int_equal(mp_llamacpp_max_gpu_layers(p, t, nt, budget, &ngl, best, &err), MP_OK);
	assert_int_equal(ngl, (int32_t)p->n_layer + 1);
	assert_int_equal(best->sched_copies, 1);
	assert_true(best->pipeline_fallback);
	p->n_gpu_layers = -1;
	assert_int_equal(mp_llamacpp_max_context(p, t, nt, budget, 2048, &ctx, &err), MP_OK);
	assert_int_equal(ctx, 2048);
	/* the pipeline plan's budgets: the 4 copies are kept */
	budget[1] = pp->total_bytes[1];
	budget[2] = pp->total_bytes[2];
	assert_int_equal(mp_llamacpp_max_gpu_layers(p, t, nt, budget, &ngl, best, &err), MP_OK);
	assert_int_equal(ngl, (int32_t)p->n_layer + 1);
	assert_int_equal(best->sched_copies, 4);
	assert_false(best->pipeline_fallback);
	/* a byte less than the plan without it on the first GPU: not every layer */
	budget[1] = flat->total_bytes[1] - 1;
	budget[2] = flat->total_bytes[2];
	assert_int_equal(mp_llamacpp_max_gpu_layers(p, t, nt, budget, &ngl, best, &err), MP_OK);
	assert_true(ngl < (int32_t)p->n_layer + 1);
	cJSON_Delete(args);
	free(t);
	free(p);
	free(pp);
	free(flat);
	free(best);
	mpm_gguf_free(&g);
}

/* bad input: a 422-style MP_EINVAL naming the byte or the tensor and the rule, never a read past the buffer (the
 * fuzzers' regression inputs, fuzz/regress, and every prefix of a real header) */
static void test_bad_input(void **state)
{
	size_t len, n;
	uint8_t *buf;
	mpm_gguf g;
	mpm_st st = { 0 };
	mp_error err = MP_ERROR_INIT;
	bool truncated;
	(void)state;

	buf = (uint8_t *)ref_read("fuzz/regress/gguf/unknown-type-43", &len);
	assert_non_null(buf);
	assert_int_equal(mpm_gguf_read(buf, len, 0, "/model/gguf_header", &g, &truncated, &err), MP_EINVAL);
	assert_string_equal(err.field, "/model/gguf_header");
	assert_non_null(strstr(err.message, "tensor 'blk.0.attn_q.weight': ggml type 43 is not one"));
	mpm_gguf_free(&g);
	free(buf);
	buf = (uint8_t *)ref_read("fuzz/regress/gguf/tensor-count-2e62", &len);
	assert_int_equal(mpm_gguf_read(buf, len, 0, "/model/gguf_header", &g, &truncated, &err), MP_EINVAL);
	assert_non_null(strstr(err.message, "byte 8: 4611686018427387904 tensors declared"));
	mpm_gguf_free(&g);
	free(buf);
	/* every prefix of a real header is refused as cut short, at the byte where it ends */
	buf = read_rel("llamacpp/models/llama-q8_0.gguf.hdr", &len);
	for (n = 0; n < len; n += n < 64 ? 1 : 997) {
		uint8_t *cut = malloc(n ? n : 1);
		memcpy(cut, buf, n);
		assert_int_equal(mpm_gguf_read(cut, n, 0, "/model/gguf_header", &g, &truncated, &err), MP_EINVAL);
		assert_true(n < 4 || truncated);
		mpm_gguf_free(&g);
		free(cut);
	}
	/* an offset past the end of the file, when its size is known */
	assert_int_equal(mpm_gguf_read(buf, len, len + 100, "/model/gguf_header", &g, &truncated, &err), MP_EINVAL);
	assert_non_null(strstr(err.message, "ends past the end of the file"));
	mpm_gguf_free(&g);
	/* a tensor's offset that is not the running sum of padded sizes (gguf.cpp's rule): the first tensor's offset is
	 * the last 8 bytes of its info; find the first tensor name and bump its offset */
	{
		assert_int_equal(mpm_gguf_read(buf, len, 0, "", &g, &truncated, &err), MP_OK);
		const char *name = g.tensors[1].name;
		size_t off = 0, k = strlen(name);
		while (off + k <= len && memcmp(buf + off, name, k) != 0)
			off++;
		assert_true(off + k <= len);
		off += k + 4 + 8 * g.tensors[1].n_dims + 4;
		buf[off] ^= 0x20;
		mpm_gguf_free(&g);
		assert_int_equal(mpm_gguf_read(buf, len, 0, "/model/gguf_header", &g, &truncated, &err), MP_EINVAL);
		assert_non_null(strstr(err.message, "expected"));
		mpm_gguf_free(&g);
	}
	free(buf);
	buf = (uint8_t *)ref_read("fuzz/regress/safetensors/overlapping-offsets", &len);
	assert_int_equal(mpm_st_read(buf, len, 0, 0, "/model/safetensors_headers/0", &st, &err), MP_EINVAL);
	assert_non_null(strstr(err.message, "tensor 'b': its data begins at 4, but the tensors before it end at 8"));
	mpm_st_free(&st);
	free(buf);
	buf = (uint8_t *)ref_read("fuzz/regress/safetensors/length-past-end", &len);
	assert_int_equal(mpm_st_read(buf, len, 0, 0, "/model/safetensors_headers/0", &st, &err), MP_EINVAL);
	assert_non_null(strstr(err.message, "byte 0: the header is 1099511627776 bytes long"));
	mpm_st_free(&st);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ggml_types),
		cmocka_unit_test(test_gguf_headers),
		cmocka_unit_test(test_gguf_inventory_match),
		cmocka_unit_test(test_safetensors),
		cmocka_unit_test(test_runs),
		cmocka_unit_test(test_dyn_alloc),
		cmocka_unit_test(test_pipeline_fallback),
		cmocka_unit_test(test_bad_input),
	};
	if (getenv("MEMPLAN_TEST_FILTER"))
		cmocka_set_test_filter(getenv("MEMPLAN_TEST_FILTER"));
	return cmocka_run_group_tests(tests, setup, teardown);
}
