/*
 * cli_list.c: `memplan models` and `memplan devices`: what a plan can name, presets and stored alike (the same rows as
 * GET /v1/models and GET /v1/devices, through service/), with the names each also goes by (a model's Hugging Face
 * repo ids, a device's aliases), as a table or, with --json, as the API's items.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codec/codec.h"
#include "cli.h"

#define PAGE 200

typedef struct list_ctx {
	bool json;
	mpc_page page;
	size_t n;
	char last[MP_STORE_ID_MAX];
} list_ctx;

static mp_status print_model(const mp_store_model *m, const char *const *repo_ids, void *ctx)
{
	list_ctx *c = ctx;
	char count[48], repos[512] = "";

	snprintf(c->last, sizeof(c->last), "%s", m->id);
	c->n++;
	if (c->json)
		return mpc_page_add_model(m, repo_ids, &c->page);
	for (size_t i = 0; repo_ids && repo_ids[i]; i++)
		mp_list_add(repos, sizeof(repos), repo_ids[i]);
	printf("%-28s %-20s %20s  %-6s  %s\n", m->id, m->model_type, mpc_fmt_count(count, sizeof(count), (double)m->parameters),
	       m->source, repos);
	return MP_OK;
}

static mp_status print_device(const mp_store_device *d, void *ctx)
{
	list_ctx *c = ctx;
	char mem[48], aliases[512] = "";

	snprintf(c->last, sizeof(c->last), "%s", d->id);
	c->n++;
	if (c->json)
		return mpc_page_add_device(d, &c->page);
	for (size_t i = 0; i < d->naliases; i++)
		mp_list_add(aliases, sizeof(aliases), d->aliases[i]);
	printf("%-28s %-8s %-22s %-10s %s\n", d->id, d->vendor, mpc_fmt_bytes(mem, sizeof(mem), (double)d->hw.memory_bytes),
	       d->source, aliases);
	return MP_OK;
}

void cli_list_help(const char *what)
{
	printf("Usage: memplan %s [--json] [--db PATH]\n\n"
	       "Lists the %s a plan can name (--%s ID), presets and stored ones, in id order: %s.\n"
	       "An id is matched in any case%s; GET /v1/%s gives the same rows.\n\n",
	       what, what, strcmp(what, "models") == 0 ? "model" : "device",
	       strcmp(what, "models") == 0 ? "id, model_type, parameters, source and the Hugging Face repo ids a "
					      "preset stands for (a plan takes those too)"
					    : "id, vendor, memory (GB = 1e9 bytes, GiB = 2^30), source (datasheet, measured, "
					      "user) and the names it also goes by",
	       strcmp(what, "models") == 0 ? "" : ", and a device also by one of its names (\"NVIDIA H100 80GB HBM3\")",
	       what);
	cli_print_db_help(stdout);
}

int cli_list(const char *what, int argc, char **argv)
{
	const char *db = cli_default_db();
	bool db_given = getenv("MEMPLAN_DB") && getenv("MEMPLAN_DB")[0], models = strcmp(what, "models") == 0;
	list_ctx c;
	mps_service *svc = NULL;
	mp_error err = MP_ERROR_INIT;
	mp_status st;
	int more = 1;

	memset(&c, 0, sizeof(c));
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			c.json = true;
		else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
			db = argv[++i];
			db_given = true;
		} else {
			fprintf(stderr, "memplan %s: unknown argument '%s' (memplan %s --help)\n", what, argv[i], what);
			return 2;
		}
	}
	st = cli_open(what, db, db_given, &svc, &err);
	if (st != MP_OK) {
		cli_print_error(what, st, &err);
		return 1;
	}
	if (c.json)
		mpc_page_begin(&c.page);
	if (!c.json && models)
		printf("%-28s %-20s %20s  %-6s  %s\n", "id", "model_type", "parameters", "source", "hf_repo_ids");
	else if (!c.json)
		printf("%-28s %-8s %-22s %-10s %s\n", "id", "vendor", "memory", "source", "aliases");
	while (st == MP_OK && more) {
		const char *after = c.last[0] ? c.last : NULL;
		size_t before = c.n;

		st = models ? mps_model_find(svc, NULL, after, PAGE, print_model, &c, &more, &err)
			    : mps_device_find(svc, NULL, after, PAGE, print_device, &c, &more, &err);
		if (c.n == before)
			break;
	}
	if (c.json) {
		char *text = mpc_page_finish(&c.page, false, NULL);

		if (st == MP_OK && !cli_print_json_text(text))
			st = mp_fail(&err, MP_ENOMEM, "", "out of memory");
		else if (st != MP_OK)
			free(text);
	}
	if (st == MP_OK && !c.json)
		printf("\n%zu %s%s in %s\n", c.n, models ? "model" : "device", c.n == 1 ? "" : "s", db);
	mps_close(svc);
	if (st != MP_OK) {
		cli_print_error(what, st, &err);
		return 1;
	}
	return 0;
}
