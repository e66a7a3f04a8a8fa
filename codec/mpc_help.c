/*
 * mpc_help.c: the request fields for people (`memplan plan inference --help`, `memplan roofline --help`): each field
 * of a request body with what it takes, read from the decoders' own field tables (mpc_tables.h), so a field added to
 * a table is listed at once and the allowed values can never disagree with what the decoder accepts. Descriptions
 * are looked up by name; a field without one is still listed with its type and range.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "mpc_tables.h"

/* What a field means, by name (any request kind). Allowed values come from the table, not from here, except
 * for the fields the table holds as text or as a JSON value (marked with allowed). */
typedef struct field_doc {
	const char *name, *meaning, *allowed;
} field_doc;

static const field_doc docs[] = {
    {"model", "the model",
     "a stored model id (`memplan db export`, GET /v1/models), or {\"hf_config\": {...}} "
     "(--config FILE), or {\"parameters\": N}"},
    {"device", "the device to fit on (gives the fit and the performance)",
     "a stored device id (GET /v1/devices), or an inline profile"},
    {"weight_dtype", "storage format of the weights", NULL},
    {"kv_cache_dtype", "format of the KV cache", NULL},
    {"batch_size", "sequences held at once", NULL},
    {"sequence_length", "tokens per sequence (prompt + output)", NULL},
    {"num_gpus", "GPUs of the deployment", NULL},
    {"tensor_parallel_size", "GPUs each layer is split over", NULL},
    {"cuda_context_bytes", "CUDA context per GPU (default 552,402,944 bytes, measured on an H200)", NULL},
    {"weight_formats", "per tensor class formats overriding weight_dtype",
     "an object of embeddings, attention, mlp, experts, lm_head, norms (--weight_formats.lm_head q6_K)"},
    {"weight_layout", "how weight bytes are counted", NULL},
    {"engine_options", "llama.cpp's and Ollama's launch knobs (engine llamacpp or ollama)",
     "an object of program, gpu_layers, cache_type_k, cache_type_v, flash_attention, tensor_split, n_batch, "
     "n_ubatch, n_cpu_moe, cpu_moe, kv_offload, mmap, swa_full, repack, backend, gpu_margin_bytes, host_device "
     "(--engine_options.gpu_layers 20)"},
    {"include", "optional parts of the answer",
     "a list of: tensors (the model's tensors with formats and bytes: --include '[\"tensors\"]')"},
    {"int4_group_size", "int4 quantisation group", NULL},
    {"int4_scheme", "int4 scales and zeros", NULL},
    {"nf4_double_quant", "nf4 with quantised scales (bitsandbytes)", NULL},
    {"compute_dtype", "activations and logits", NULL},
    {"kv_block_size", "tokens per KV block (paged attention; 1 = contiguous)", NULL},
    {"sequence_length_scope", "whether each sequence holds sequence_length tokens or all share them", NULL},
    {"mla_kv_cache", "MLA's cache: the latent or the expanded heads", NULL},
    {"cache_layout", "the engines' KV cache layout or transformers' (window - 1, conv_kernel, Falcon's heads)", NULL},
    {"attention_implementation", "eager adds the score matrices to the prefill peak", NULL},
    {"max_num_batched_tokens", "prefill chunk (vLLM)", NULL},
    {"logits_positions", "positions whose logits the prefill keeps", NULL},
    {"gpu_memory_utilization", "the fraction of the GPU the plan may use (default: vLLM's with engine vllm, else 1, warned)", NULL},
    {"allow_beyond_max_position_embeddings", "plan past the model's context", NULL},
    {"observed_terms", "take a memory term from running engines' reports where the model is consistently off "
     "(POST /v1/observations)", "true (the default) or false (the model's terms)"},
    {"precision", "training precision regime", NULL},
    {"optimizer", "optimizer (its states per parameter)", NULL},
    {"micro_batch_size", "sequences per GPU per step", NULL},
    {"state_convention", "bytes per parameter of mixed precision's model states", "one of: 16, 18, 20 (a number or a string)"},
    {"optimizer_state_dtype", "format of the optimizer states", NULL},
    {"global_batch_size", "sequences per optimizer step (gradient accumulation)", NULL},
    {"activation_recomputation", "activations kept for the backward pass (default: full under qlora, else none, warned)", NULL},
    {"attention", "attention kernel", NULL},
    {"dropout", "dropout masks are kept", NULL},
    {"states_only", "weights, gradients and optimizer states only", NULL},
    {"sequence_parallel", "Megatron sequence parallelism", NULL},
    {"pipeline_parallel_size", "pipeline stages", NULL},
    {"context_parallel_size", "GPUs each sequence is split over", NULL},
    {"expert_parallel_size", "GPUs the experts are split over", NULL},
    {"sharding", "ZeRO stage or FSDP strategy", NULL},
    {"finetune", "full fine-tuning or LoRA / QLoRA", NULL},
    {"lora_rank", "LoRA rank", NULL},
    {"lora_targets", "modules LoRA adapts", "a comma-separated list of q, k, v, o, gate, up, down"},
    {"context_tokens", "tokens already in each sequence's KV cache", NULL},
    {"prompt_tokens", "tokens of the prefill", NULL},
    {"activation_dtype", "activations", NULL},
    {"label", "the operation's name in the table and the chart", "text"},
    {"dtype", "data type (picks the compute roof)", NULL},
    {"measured_seconds", "a measured time to compare with the floor", NULL},
    {"flops", "floating-point operations", NULL},
    {"bytes", "DRAM bytes moved", NULL},
    {"l2_bytes", "L2 bytes moved (hierarchical roofline)", NULL},
    {"shared_memory_bytes", "shared-memory bytes moved", NULL},
    {"unit", "tensor cores (matrix) or CUDA cores (vector)", NULL},
    {"elements", "values per tensor", NULL},
    {"inputs", "tensors read (default 2)", NULL},
    {"outputs", "tensors written (default 1)", NULL},
    {"flops_per_element", "operations per value (default 1)", NULL},
    {"rows", "rows (tokens)", NULL},
    {"cols", "values per row (hidden size)", NULL},
    {"m", "rows of A and C (tokens)", NULL},
    {"k", "the shared dimension", NULL},
    {"n", "columns of B and C", NULL},
    {"a_dtype", "A's data type (default dtype)", NULL},
    {"b_dtype", "B's data type (default dtype)", NULL},
    {"c_dtype", "C's data type (default dtype)", NULL},
    {"batch", "sequences (default 1)", NULL},
    {"heads", "query heads", NULL},
    {"kv_heads", "key/value heads (GQA; default heads)", NULL},
    {"head_dim", "values per head", NULL},
    {"q_tokens", "query tokens (default kv_tokens, 1 for decode)", NULL},
    {"kv_tokens", "key/value tokens", NULL},
    {"causal", "causal mask (default true)", NULL},
    {"implementation", "fused (flash) or eager (scores in DRAM)", NULL},
    {"phase", "prefill or decode", NULL},
    {"weight_bytes", "weight bytes read per step", NULL},
    {"parameters", "parameters (2 FLOPs each per token)", NULL},
    {"kv_cache_bytes_per_sequence", "KV cache bytes each sequence reads", NULL},
};

static const field_doc *doc_of(const char *name)
{
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
		if (strcmp(docs[i].name, name) == 0)
			return &docs[i];
	return NULL;
}

/* What the field takes, from its table row. */
static void allowed_of(const mpm_field *fl, const field_doc *d, char *out, size_t len)
{
	char a[48], b[48];

	if (d && d->allowed) {
		snprintf(out, len, "%s", d->allowed);
		return;
	}
	/* text in the tables, read by mpc_kv_dtype_ex / mpc_weight_dtype_ex: what they take, as their errors say */
	if ((strcmp(fl->name, "kv_cache_dtype") == 0 || strcmp(fl->name, "weight_dtype") == 0) &&
	    fl->type == MPM_F_STRING && len > 8) {
		snprintf(out, len, "one of: ");
		if (fl->name[0] == 'k')
			mpc_kv_dtype_allowed(true, out + 8, len - 8);
		else
			mpc_weight_dtype_allowed(true, true, out + 8, len - 8);
		return;
	}
	switch (fl->type) {
	case MPM_F_U64:
		if (fl->max >= MP_MAX_PLAN_BYTES)
			snprintf(out, len, "an integer >= %s", mpc_fmt_count(a, sizeof(a), (double)fl->min));
		else
			snprintf(out, len, "an integer %s to %s", mpc_fmt_count(a, sizeof(a), (double)fl->min),
			         mpc_fmt_count(b, sizeof(b), (double)fl->max));
		break;
	case MPM_F_DOUBLE:
		snprintf(out, len, "a number from %g to %g", fl->dmin, fl->dmax);
		break;
	case MPM_F_BOOL:
		snprintf(out, len, "true or false");
		break;
	case MPM_F_DTYPE: {
		char list[256];

		mp_dtype_list(fl->dtypes, list, sizeof(list));
		snprintf(out, len, "one of: %s", list);
		break;
	}
	case MPM_F_ENUM: {
		size_t o = (size_t)snprintf(out, len, "one of:");

		for (size_t i = 0; fl->names && fl->names[i] && o < len; i++)
			o += (size_t)snprintf(out + o, len - o, "%s %s", i ? "," : "", fl->names[i]);
		break;
	}
	case MPM_F_STRING:
		snprintf(out, len, "text (at most %zu bytes)", fl->size ? fl->size - 1 : 0);
		break;
	case MPM_F_ANY:
		snprintf(out, len, "a JSON value (see openapi.yaml)");
		break;
	}
}

/* One field per entry: "  --name  (required) meaning\n        allowed". describe: look the meaning up by name
 * (not for the members of weight_formats, whose names are tensor classes). */
static void print_fields(FILE *f, const mpm_field *t, size_t n, const char *prefix, bool describe)
{
	for (size_t i = 0; i < n; i++) {
		const field_doc *d = describe ? doc_of(t[i].name) : NULL;
		char allowed[512];

		if (strcmp(t[i].name, "op") == 0)
			continue; /* the kind itself: the spec's KIND: */
		allowed_of(&t[i], d, allowed, sizeof(allowed));
		fprintf(f, "  %s%s%s%s%s\n      %s\n", prefix, t[i].name, t[i].required ? "  (required)" : "",
		        d ? "  " : "", d ? d->meaning : "", allowed);
	}
}

char *mpc_request_fields_text(const char *kind)
{
	char *text = NULL;
	size_t len = 0, n;
	FILE *f = open_memstream(&text, &len);
	const mpm_field *t;

	if (f == NULL)
		return NULL;
	if (strcmp(kind, "inference") == 0) {
		t = mpc_inference_field_table(&n);
		print_fields(f, t, n, "--", true);
		t = mpc_weight_formats_field_table(&n);
		fprintf(f, "\n  weight_formats members (--weight_formats.NAME FORMAT):\n");
		print_fields(f, t, n, "--weight_formats.", false);
	} else if (strcmp(kind, "training") == 0) {
		t = mpc_training_field_table(&n);
		print_fields(f, t, n, "--", true);
	} else if (strcmp(kind, "roofline") == 0) {
		const char *name;

		for (size_t k = 0; (t = mpc_op_field_table(k, &name, &n)) != NULL; k++) {
			fprintf(f, "%s%s:key=value,...\n", k ? "\n" : "", name);
			print_fields(f, t, n, "", true);
		}
	} else if (strcmp(kind, "transformer") == 0) {
		t = mpc_transformer_field_table(&n);
		print_fields(f, t, n, "", true);
	}
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}
