/*
 * cli_plan.c: `memplan plan inference|training`: the request the plan endpoints take, built from the command line
 * (every --name value a field; --config FILE the model's hf_config; --request FILE a whole body), answered
 * locally through the same decode -> service -> encode path as the daemon, printed for people or as JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codec/codec.h"
#include "cli.h"

/*
 * A command-line value as JSON: true/false, a number when the whole text is one, a JSON object or list
 * when it starts with { or [, else a string. So new request fields need no CLI code.
 */
static cJSON *cli_value(const char *v)
{
	char *end;

	if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
		return cJSON_CreateBool(v[0] == 't');
	if (v[0] == '{' || v[0] == '[')
		return cJSON_Parse(v);
	if (v[0] != '\0') {
		double d = strtod(v, &end);

		if (*end == '\0')
			return cJSON_CreateNumber(d);
	}
	return cJSON_CreateString(v);
}

/* A release name is text even when it reads as a number ("--engine_version 0.10" is not 0.1). */
static bool version_field(const char *name)
{
	size_t n = strlen(name);

	return n >= 8 && strcmp(name + n - 8, "_version") == 0;
}

/* Sets body[path] = value; a dotted path ("weight_formats.lm_head") creates the objects on the way. Dashes in
 * names become underscores (--batch-size = --batch_size). */
static bool set_path(cJSON *body, const char *path, cJSON *value)
{
	char key[128];
	const char *dot;
	cJSON *obj = body;

	for (;;) {
		size_t n;

		dot = strchr(path, '.');
		n = dot ? (size_t)(dot - path) : strlen(path);
		if (n == 0 || n >= sizeof(key)) {
			cJSON_Delete(value);
			return false;
		}
		memcpy(key, path, n);
		key[n] = '\0';
		for (char *p = key; *p; p++)
			if (*p == '-')
				*p = '_';
		if (dot == NULL)
			break;
		{
			cJSON *next = cJSON_GetObjectItemCaseSensitive(obj, key);

			if (!cJSON_IsObject(next)) {
				cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
				next = cJSON_AddObjectToObject(obj, key);
			}
			obj = next;
		}
		path = dot + 1;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	mpc_add_item(obj, key, value);
	return true;
}

/* What the command prints: the text for people, the JSON document, or the engine's command line alone. */
typedef enum answer_form { FORM_TEXT, FORM_TEXT_VERBOSE, FORM_JSON, FORM_ARGS } answer_form;

#define HINT "--verbose prints every figure."

/* The engine's command line alone, ready to paste (and its options file, when it needs one); NULL when the plan
 * named no engine or memory ran out. */
static char *engine_args(const mps_inference_plan *p)
{
	char *cmd = mpc_plan_engine_command(p), *text = NULL;
	size_t len = 0;
	FILE *f;

	if (cmd == NULL || (f = open_memstream(&text, &len)) == NULL) {
		free(cmd);
		return NULL;
	}
	if (p->engine.extra_options_yaml[0])
		fprintf(f, "cat > extra_llm_api_options.yaml <<'EOF'\n%sEOF\n", p->engine.extra_options_yaml);
	fprintf(f, "%s\n", cmd);
	free(cmd);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* The inference plan of a body, in the form asked for (*out: heap text to print). */
static mp_status plan_inference(mps_service *svc, const cJSON *body, answer_form form, char **out, mp_error *err)
{
	mps_inference_request *rq = calloc(1, sizeof(*rq));
	mps_inference_plan *p = calloc(1, sizeof(*p));
	mp_status st = rq && p ? mps_lookups_note(svc, &rq->job.model, &rq->device, mpc_inference_decode(body, "", true, rq, err),
						  err)
			       : mp_fail(err, MP_ENOMEM, "", "out of memory");

	if (st == MP_OK)
		st = mps_model_ref_fetch(svc, &rq->job.model, NULL, err);
	if (st == MP_OK)
		st = mps_plan_inference(svc, rq, p, err);
	if (st == MP_OK)
		*out = form == FORM_JSON   ? mpc_inference_plan_print(rq, p, NULL)
		       : form == FORM_ARGS ? engine_args(p)
					   : mpc_inference_plan_text(rq, p, form == FORM_TEXT_VERBOSE,
								     form == FORM_TEXT ? HINT : NULL);
	if (st == MP_OK && *out == NULL)
		st = mp_fail(err, MP_ENOMEM, "", "out of memory");
	mps_inference_plan_release(p);
	free(p);
	mpc_inference_request_release(rq);
	free(rq);
	return st;
}

static mp_status plan_training(mps_service *svc, const cJSON *body, answer_form form, char **out, mp_error *err)
{
	mps_training_request *rq = calloc(1, sizeof(*rq));
	mps_training_plan *p = malloc(sizeof(*p));
	mp_status st = rq && p ? mps_lookups_note(svc, &rq->job.model, &rq->device, mpc_training_decode(body, "", true, rq, err),
						  err)
			       : mp_fail(err, MP_ENOMEM, "", "out of memory");

	if (st == MP_OK)
		st = mps_model_ref_fetch(svc, &rq->job.model, NULL, err);
	if (st == MP_OK)
		st = mps_plan_training(svc, rq, p, err);
	if (st == MP_OK)
		*out = form == FORM_JSON ? mpc_training_plan_print(rq, p, NULL)
					 : mpc_training_plan_text(rq, p, form == FORM_TEXT_VERBOSE,
								  form == FORM_TEXT ? HINT : NULL);
	if (st == MP_OK && *out == NULL)
		st = mp_fail(err, MP_ENOMEM, "", "out of memory");
	free(p);
	mpc_training_request_release(rq);
	free(rq);
	return st;
}

void cli_plan_help(const char *kind)
{
	bool both = strcmp(kind, "inference") != 0 && strcmp(kind, "training") != 0;
	char *fields;

	printf("Usage: memplan plan %s [--model ID|FILE.gguf|DIR | --config FILE] [--device ID] [--name value ...]\n"
	       "                     [--request FILE] [--json] [--verbose] [--print-args] [--db PATH]\n\n",
	       both ? "inference|training" : kind);
	printf("Plans %s memory locally, through the same decoder and planner as POST /v1/plan/%s (no daemon).\n"
	       "The answer comes first: fits or not, the total against the budget, the headroom, the binding term, the\n"
	       "largest batch, the longest sequence, the smallest GPU count; then the memory terms.\n\n",
	       both ? "inference or training" : kind, both ? "inference and /v1/plan/training" : kind);
	printf("Options:\n"
	       "  --model ID          a stored model or a preset, any case (memplan models lists them), or a Hugging\n"
	       "                      Face repo id\n"
	       "  --model FILE.gguf   a GGUF file, from its header (every file of a split -00001-of-0000N.gguf set)\n"
	       "  --model DIR         a checkpoint folder: config.json and its safetensors shards' headers\n"
	       "  --gguf FILE         the same as --model FILE.gguf\n"
	       "  --config FILE       a Hugging Face config.json as the model (model.hf_config)\n"
	       "  --device ID         fit on this device: an id in any case or a name it goes by (memplan devices lists them)\n"
	       "  --request FILE      a whole request body (JSON); later --name value options override its members\n"
	       "  --NAME VALUE        any request field below (also --NAME=VALUE; numbers, true/false, JSON objects\n"
	       "                      and lists are recognised, anything else is text; a.b sets a nested field)\n"
	       "  --json              print the API's JSON document instead of text\n"
	       "  --verbose           after the summary, every figure of the answer\n"
	       "  --print-args        with --engine (inference: vllm, sglang, trtllm, llamacpp, ollama): the engine's\n"
	       "                      command line alone\n"
	       "  --db PATH           the database (below)\n\n");
	for (int k = 0; k < 2; k++) {
		const char *name = k ? "training" : "inference";

		if (!both && strcmp(kind, name) != 0)
			continue;
		fields = mpc_request_fields_text(name);
		printf("Request fields of %s plans (POST /v1/plan/%s):\n%s\n", name, name, fields ? fields : "");
		free(fields);
	}
	cli_print_db_help(stdout);
	printf("\nExample:\n  memplan plan %s --model llama-3-8b %s --device h200-sxm-141gb\n",
	       both || kind[0] == 'i' ? "inference" : "training",
	       both || kind[0] == 'i' ? "--weight_dtype bf16 --kv_cache_dtype bf16 --batch_size 1 --sequence_length 4096"
				      : "--precision mixed_bf16 --optimizer adamw --micro_batch_size 1 --sequence_length 4096");
}

int cli_plan(int argc, char **argv)
{
	const char *kind = argc > 0 ? argv[0] : "";
	const char *db = cli_default_db();
	mps_service *svc = NULL;
	static mp_errors all; /* every problem of the request, printed together (one command, one thread) */
	mp_error err = { { 0 }, { 0 }, &all };
	cJSON *body = NULL;
	char *out = NULL;
	bool json = false, verbose = false, print_args = false;
	const char *gguf_path = NULL; /* --model FILE.gguf: the file llama.cpp and Ollama load */
	bool db_given = getenv("MEMPLAN_DB") && getenv("MEMPLAN_DB")[0];
	mp_status st;
	int rc = 2;

	if (strcmp(kind, "inference") != 0 && strcmp(kind, "training") != 0) {
		if (kind[0] == '\0' || kind[0] == '-')
			fprintf(stderr, "memplan plan: say inference or training first (memplan plan inference --model ID "
					"...; memplan plan --help)\n");
		else
			fprintf(stderr, "memplan plan: say inference or training, not '%s' (memplan plan --help)\n", kind);
		return 2;
	}
	body = cJSON_CreateObject();
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--json") == 0) {
			json = true;
			continue;
		}
		if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
			verbose = true;
			continue;
		}
		if (strcmp(a, "--print-args") == 0) {
			print_args = true;
			continue;
		}
		if (strncmp(a, "--", 2) != 0 || a[2] == '\0' || val == NULL) {
			fprintf(stderr, "memplan plan: expected --name value, got '%s' (memplan plan %s --help lists the "
					"fields)\n",
				a, kind);
			goto out;
		}
		i++;
		if (strcmp(a, "--db") == 0) {
			db = val;
			db_given = true;
		} else if (strcmp(a, "--request") == 0) {
			cJSON *base = cli_parse_file("plan", val, "request"), *item;

			if (base == NULL || !cJSON_IsObject(base)) {
				cJSON_Delete(base);
				goto out;
			}
			/* the file's members, each overridable by a later --name value */
			while ((item = base->child) != NULL) {
				cJSON_DetachItemViaPointer(base, item);
				cJSON_DeleteItemFromObjectCaseSensitive(body, item->string);
				mpc_add_item(body, item->string, item);
			}
			cJSON_Delete(base);
		} else if (strcmp(a, "--model") == 0 || strcmp(a, "--gguf") == 0) {
			char why[512];
			cJSON *model = cli_model_from_path(val, why, sizeof(why));

			if (model == NULL && (why[0] || strcmp(a, "--gguf") == 0)) {
				fprintf(stderr, "memplan plan: %s %s: %s\n", a, val, why[0] ? why : "no such file");
				goto out;
			}
			if (model == NULL && strchr(val, '/') && cli_in_hf_cache(val)) {
				/* org/name in the local Hugging Face cache: its config.json and shards' headers */
				model = cJSON_CreateObject();
				cJSON_AddStringToObject(model, "hf_repo", val);
			}
			set_path(body, "model", model ? model : cJSON_CreateString(val));
			gguf_path = model && cJSON_GetObjectItemCaseSensitive(model, "gguf_header") ? val : NULL;
		} else if (strcmp(a, "--config") == 0) {
			cJSON *cfg = cli_parse_file("plan", val, "config"), *model;

			if (cfg == NULL)
				goto out;
			model = cJSON_CreateObject();
			mpc_add_item(model, "hf_config", cfg);
			set_path(body, "model", model);
		} else if (!set_path(body, a + 2, version_field(a + 2) ? cJSON_CreateString(val) : cli_value(val))) {
			fprintf(stderr, "memplan plan: bad option name '%s'\n", a);
			goto out;
		}
	}
	if (print_args && (kind[0] != 'i' || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(body, "engine")))) {
		fprintf(stderr, "memplan plan: --print-args prints an engine's command line: it needs `plan inference` "
				"and --engine vllm|sglang|trtllm|llamacpp|ollama\n");
		goto out;
	}
	{
		/* llama.cpp and Ollama load the file given: it is the command's model argument */
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(body, "engine");

		if (gguf_path && cJSON_IsString(e) &&
		    (strcmp(e->valuestring, "llamacpp") == 0 || strcmp(e->valuestring, "ollama") == 0) &&
		    !cJSON_GetObjectItemCaseSensitive(body, "served_model"))
			cJSON_AddStringToObject(body, "served_model", gguf_path);
	}
	rc = 1;
	st = cli_open("plan", db, db_given, &svc, &err);
	if (st == MP_OK) {
		unsigned long failed = mpc_alloc_failures();

		answer_form form = print_args ? FORM_ARGS : json ? FORM_JSON : verbose ? FORM_TEXT_VERBOSE : FORM_TEXT;

		st = kind[0] == 'i' ? plan_inference(svc, body, form, &out, &err)
				    : plan_training(svc, body, form, &out, &err);
		if (st == MP_OK && mpc_alloc_failures() != failed) /* the document may be incomplete (codec/mpc_json.h) */
			st = mp_fail(&err, MP_ENOMEM, "", "out of memory");
		if (st == MP_OK && form == FORM_JSON) {
			rc = cli_print_json_text(out) ? 0 : 1;
			out = NULL;
			goto out;
		}
	}
	if (st == MP_OK) {
		printf("%s", out);
		rc = 0;
	} else {
		cli_print_error_db("plan", st, &err, db);
	}
out:
	free(out);
	cJSON_Delete(body);
	mps_close(svc);
	return rc;
}
