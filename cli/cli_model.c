/*
 * cli_model.c: `memplan model tensors` (a model's tensor inventory with each tensor's format and bytes, as GET
 * /v1/models/{id}/tensors answers it) and `memplan types` (the model types memplan reads, from model/mpm_types.c:
 * the README's list is this command's --markdown output, and a test keeps the two equal).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codec/codec.h"
#include "../model/mpm_types.h"
#include "cli.h"

void cli_model_help(void)
{
	printf("Usage: memplan model tensors (--config FILE | --model ID) [--weight_dtype D]\n"
	       "                             [--tensor_parallel_size N] [--json] [--db PATH]\n\n"
	       "Lists the model's tensors as transformers' state_dict names them (\"{i}\" for the layer index), with\n"
	       "their shape, how many layers hold them, their class, the format each is stored in and its bytes on one\n"
	       "GPU of N tensor-parallel ranks: the inventory every parameter count, weight byte and roofline\n"
	       "operation of memplan is derived from (GET /v1/models/{id}/tensors).\n\n"
	       "Options:\n"
	       "  --config FILE               a Hugging Face config.json (\"-\" reads stdin)\n"
	       "  --model ID                  a stored model (memplan db export lists user models)\n"
	       "  --weight_dtype D            the matrices' format (default: the config's float dtype, else bf16);\n"
	       "                              vectors stay in a float format\n"
	       "  --tensor_parallel_size N    bytes per GPU of N ranks (default 1)\n"
	       "  --json                      the API's JSON document\n"
	       "  --db PATH                   the database (only with --model)\n\n");
	cli_print_db_help(stdout);
	printf("\nExample:\n  memplan model tensors --config config.json --weight_dtype fp8 --tensor_parallel_size 4\n");
}

void cli_types_help(void)
{
	printf("Usage: memplan types [--markdown]\n\n"
	       "The Hugging Face model types (config.json's \"model_type\") memplan reads, one per line: the type, the\n"
	       "class transformers 5.24 builds for text generation, how memplan reads it (a dense decoder's row of\n"
	       "defaults, or its family's reader) and what it takes simpler than the model is. --markdown prints the\n"
	       "table README.md holds.\n");
}

int cli_types(int argc, char **argv)
{
	bool md = false;

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--markdown") == 0)
			md = true;
		else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
			i++; /* taken, as every command takes it; the table is in the binary */
		else {
			fprintf(stderr, "memplan types: unknown argument '%s' (memplan types --help)\n", argv[i]);
			return 2;
		}
	}
	if (md)
		printf("| model_type | transformers class | read as | simplified |\n|---|---|---|---|\n");
	for (size_t i = 0; i < mpm_types_count; i++) {
		const mpm_type *t = &mpm_types[i];
		const char *how = t->dense ? "dense decoder row" : t->wrapper ? "multimodal wrapper" : "family reader";

		if (md)
			printf("| `%s` | %s | %s | %s |\n", t->name, t->model_class, how,
			       t->simplified ? t->simplified : "exact");
		else
			printf("%-20s %-40s %-20s %s\n", t->name, t->model_class, how,
			       t->simplified ? t->simplified : "exact");
	}
	if (md)
		printf("\n%zu model types.\n", mpm_types_count);
	return 0;
}

int cli_model(int argc, char **argv)
{
	const char *config = NULL, *model = NULL, *db = cli_default_db(), *wd = NULL, *tp = NULL;
	bool json = false, db_given = getenv("MEMPLAN_DB") && getenv("MEMPLAN_DB")[0];
	mps_tensors_query q = {MP_DTYPE_INVALID, MP_DTYPE_INVALID, 1, NULL};
	static mp_errors all;
	mp_error err = {{0}, {0}, &all};
	mps_model_ref ref;
	mps_tensor_list l;
	mps_service *svc = NULL;
	cJSON *wrap = NULL, *cfg = NULL;
	char *out = NULL;
	bool is_auto = false;
	mp_status st;
	int rc = 2;

	memset(&ref, 0, sizeof(ref));
	memset(&l, 0, sizeof(l));
	if (argc < 1 || strcmp(argv[0], "tensors") != 0) {
		fprintf(stderr, "memplan model: say tensors (memplan model tensors --config FILE; memplan model --help)\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--json") == 0) {
			json = true;
			continue;
		}
		if (v == NULL) {
			fprintf(stderr, "memplan model tensors: %s needs a value (memplan model --help)\n", a);
			return 2;
		}
		i++;
		if (strcmp(a, "--config") == 0)
			config = v;
		else if (strcmp(a, "--model") == 0)
			model = v;
		else if (strcmp(a, "--weight_dtype") == 0 || strcmp(a, "--weight-dtype") == 0)
			wd = v;
		else if (strcmp(a, "--tensor_parallel_size") == 0 || strcmp(a, "--tensor-parallel-size") == 0)
			tp = v;
		else if (strcmp(a, "--db") == 0) {
			db = v;
			db_given = true;
		} else {
			fprintf(stderr, "memplan model tensors: unknown option '%s' (memplan model --help)\n", a);
			return 2;
		}
	}
	if ((config == NULL) == (model == NULL)) {
		fprintf(stderr, "memplan model tensors: give --config FILE or --model ID (one of them)\n");
		return 2;
	}
	if (wd && mpc_weight_dtype_ex(wd, "--weight_dtype", &q.weight_dtype, NULL, &is_auto, &err) != MP_OK) {
		cli_print_error("model tensors", MP_EINVAL, &err);
		return 2;
	}
	if (tp) {
		char *end;
		unsigned long long n = strtoull(tp, &end, 10);

		if (*tp == '-' || *end || n < 1 || n > MP_MAX_GPUS) {
			fprintf(stderr, "memplan model tensors: --tensor_parallel_size is an integer from 1 to %llu, not '%s'\n",
				(unsigned long long)MP_MAX_GPUS, tp);
			return 2;
		}
		q.tensor_parallel_size = n;
	}
	if (config) {
		cfg = cli_parse_file("model tensors", config, "config");
		if (cfg == NULL)
			return 1;
		wrap = cJSON_CreateObject();
		if (wrap == NULL || !cJSON_AddItemToObject(wrap, "hf_config", cfg)) {
			cJSON_Delete(cfg);
			cJSON_Delete(wrap);
			fprintf(stderr, "memplan model tensors: out of memory\n");
			return 1;
		}
		st = mpc_model_ref_decode(wrap, "", true, &ref, &err);
		if (st == MP_OK)
			st = mps_tensors_of(ref.arch, &q, &l, &err);
		/* the config's keys as the file spells them: "/hidden_size", not "/hf_config/hidden_size" */
		if (strncmp(err.field, "/hf_config", 10) == 0)
			memmove(err.field, err.field + 10, strlen(err.field + 10) + 1);
		if (st != MP_OK) {
			cli_print_error("model tensors", st, &err);
			rc = st == MP_ENOMEM ? 1 : 2;
			goto out;
		}
	} else {
		cJSON *id = cJSON_CreateString(model);

		st = id ? mpc_model_ref_decode(id, "--model", true, &ref, &err) : MP_ENOMEM;
		cJSON_Delete(id);
		if (st == MP_OK)
			st = cli_open("model tensors", db, db_given, &svc, &err);
		if (st == MP_OK)
			st = mps_model_tensors(svc, &ref, &q, &l, &err);
		if (st != MP_OK) {
			cli_print_error_db("model tensors", st, &err, db);
			rc = st == MP_EINVAL ? 2 : 1;
			goto out;
		}
	}
	out = json ? mpc_model_tensors_print(model, &l, NULL) : mpc_model_tensors_text(model ? model : config, &l);
	if (out == NULL) {
		fprintf(stderr, "memplan model tensors: out of memory\n");
		rc = 1;
		goto out;
	}
	fputs(out, stdout);
	if (json)
		fputc('\n', stdout);
	rc = 0;
out:
	free(out);
	mps_tensor_list_release(&l);
	mpc_model_ref_release(&ref);
	cJSON_Delete(wrap);
	if (svc)
		mps_close(svc);
	return rc;
}
