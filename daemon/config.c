/*
 * config.c: `serve` settings (see config.h). The table below is the single list of settings: adding one is
 * a row here and a field in mpd_config. Parses numbers with strtoull and range checks; never atoi.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "framing.h"
#include "log.h"

typedef enum kind { K_LISTEN, K_PATH, K_UINT, K_SIZE, K_LEVEL, K_TOKEN_FILE, K_BOOL, K_PASS_FAIL, K_LABELS, K_HOSTS,
		    K_ON_OFF, K_URL, K_HUB_PATH } kind;

static const struct setting {
	const char *key;
	kind kind;
	unsigned long long min, max;
	const char *help;
} settings[] = {
	{ "listen", K_LISTEN, 0, 0, "ADDR:PORT to listen on (default 127.0.0.1:8080; port 0 = any free port)" },
	{ "db", K_PATH, 0, 0, "SQLite database path (default var/memplan.db; created and seeded)" },
	{ "threads", K_UINT, 1, 256, "worker threads (default: the number of CPUs)" },
	{ "max-body-bytes", K_SIZE, 1024, 1ULL << 30, "request body limit; larger bodies get 413 (default 1048576)" },
	{ "connection-timeout", K_UINT, 1, 3600, "seconds a connection may stay idle, or stall mid-request, "
						 "before it is closed (default 30)" },
	{ "max-connections", K_UINT, 1, 65536,
	  "concurrent connections; more wait in the kernel's accept queue until one closes, and near the limit the "
	  "slowest to send their headers are closed first (default 1024)" },
	{ "log-level", K_LEVEL, 0, 0, "debug, info (access lines), warn, error or off (default info)" },
	{ "shutdown-timeout", K_UINT, 0, 3600, "seconds SIGTERM waits for requests in flight (default 10)" },
	{ "token-file", K_TOKEN_FILE, 0, 0, "file holding the bearer token that writes need (MEMPLAN_TOKEN may hold "
					    "the token itself); no token: writes are open" },
	{ "response-cache-bytes", K_SIZE, 0, 1ULL << 36,
	  "bytes kept of answers to repeated plan, fit, roofline and capacity requests, dropped when the store "
	  "changes; 0 = off (default 33554432)" },
	{ "insecure", K_BOOL, 0, 0, "true: allow a non-loopback --listen without a token (default false)" },
	{ "k8s-unknown-device", K_PASS_FAIL, 0, 0,
	  "kube-scheduler extender: a node whose GPU maps to no device profile passes (pass, fail open, for an "
	  "extender with ignorable: true) or fails with the reason (fail) (default pass)" },
	{ "k8s-headroom-floor-percent", K_UINT, 0, 90,
	  "kube-scheduler extender: prioritize scores highest the tightest fit that leaves this much of the memory "
	  "budget free (default 10)" },
	{ "k8s-max-body-bytes", K_SIZE, 1024, 1ULL << 32,
	  "body limit of /v1/k8s/filter and /v1/k8s/prioritize, which carry every candidate Node object (default "
	  "134217728)" },
	{ "model-max-body-bytes", K_SIZE, 1024, 1ULL << 32,
	  "body limit of the routes that take a model (plan, engine-check, fit), whose gguf_header carries a GGUF "
	  "file's header with its tokenizer in base64 (default 33554432)" },
	{ "node-labels", K_LABELS, 0, 0,
	  "labels added to this node's calibration gauges, aligned with the DCGM exporter's: "
	  "Hostname=...,gpu=0,UUID=GPU-...,modelName=NVIDIA H200 (default none; the node agent sets them)" },
	{ "max-heavy-requests", K_UINT, 1, 1024,
	  "fit and capacity computations at once; more get 503 with Retry-After (default: threads / 2, at least 1)" },
	{ "header-timeout", K_UINT, 1, 3600,
	  "seconds a connection has to send its request line and headers, however slowly it trickles them "
	  "(default 10)" },
	{ "max-connections-per-ip", K_UINT, 0, 65536,
	  "concurrent connections from one client address; 0 = no limit (default 0)" },
	{ "allowed-hosts", K_HOSTS, 0, 0,
	  "without a token, Host names served besides loopback names and addresses and the listener's own "
	  "(DNS rebinding): name,.domain (and its subdomains),* (any) (default none)" },
	{ "body-timeout", K_UINT, 1, 3600,
	  "seconds a request body has to arrive whole after its headers, however it trickles (default 60)" },
	{ "send-timeout", K_UINT, 1, 3600,
	  "seconds an answer has to be read by the client, plus its size at --min-transfer-rate (default 60)" },
	{ "min-transfer-rate", K_SIZE, 1, 1ULL << 30,
	  "bytes per second a body or an answer must move, over each 5-second window; slower ones are cut "
	  "(default 4096)" },
	{ "max-request-memory-bytes", K_SIZE, 1 << 20, 1ULL << 40,
	  "bytes held at once for request bodies being read and answers waiting to be sent; a request past it "
	  "gets 503 with Retry-After (default 268435456)" },
	{ "max-request-memory-bytes-per-ip", K_SIZE, 0, 1ULL << 40,
	  "the same for one client address; 0 = --k8s-max-body-bytes + --max-body-bytes (default 0)" },
	{ "observed-terms", K_ON_OFF, 0, 0,
	  "on: an engine block takes a memory term from what running engines reported (POST /v1/observations) where "
	  "the model is consistently off for that engine version and device, saying so; off: the model's terms "
	  "always (default on)" },
	{ "hub-endpoint", K_URL, 0, 0,
	  "the Hugging Face Hub a model given as {\"hf_repo\": \"org/name\"} may be fetched from when the local "
	  "cache lacks it (https://huggingface.co, or a mirror): config.json, the index and each shard's header by "
	  "range requests, never the weights (default none: the daemon fetches nothing)" },
	{ "hub-token-file", K_HUB_PATH, 0, 0,
	  "file holding the Hub token for gated and private repositories (MEMPLAN_HUB_TOKEN may hold the token "
	  "itself); sent to the hub-endpoint's host only, never logged" },
	{ "hub-cache", K_HUB_PATH, 0, 0, "folder where the headers fetched from the Hub are kept (default hub-cache "
					 "beside the database)" },
	{ "hub-cache-bytes", K_SIZE, 0, 1ULL << 40, "the hub cache's bound: the oldest snapshots go first (default "
						     "268435456)" },
	{ "hub-timeout", K_UINT, 1, 600, "seconds each Hub request may take, connection included (default 30)" },
};
#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))

static mp_status set_one(mpd_config *cfg, const struct setting *s, const char *value, mp_error *err)
{
	unsigned long long v;
	char *end = NULL;

	switch (s->kind) {
	case K_LISTEN:
		return mpd_parse_listen(value, cfg, err);
	case K_PATH:
		if (value[0] == '\0' || snprintf(cfg->db_path, sizeof(cfg->db_path), "%s", value) >=
						(int)sizeof(cfg->db_path))
			return mp_fail(err, MP_EINVAL, s->key, "%s must be a path of 1 to %zu bytes", s->key,
				       sizeof(cfg->db_path) - 1);
		return MP_OK;
	case K_LEVEL: {
		mpd_log_level l;
		mp_status st = mpd_log_level_parse(value, &l, err);

		if (st == MP_OK)
			cfg->log_level = (int)l;
		return st;
	}
	case K_TOKEN_FILE:
		if (value[0] == '\0' || snprintf(cfg->token_file, sizeof(cfg->token_file), "%s", value) >=
						(int)sizeof(cfg->token_file))
			return mp_fail(err, MP_EINVAL, s->key, "%s must be a path of 1 to %zu bytes", s->key,
				       sizeof(cfg->token_file) - 1);
		return MP_OK;
	case K_BOOL:
		if (strcmp(value, "true") == 0 || strcmp(value, "1") == 0)
			cfg->insecure = true;
		else if (strcmp(value, "false") == 0 || strcmp(value, "0") == 0)
			cfg->insecure = false;
		else
			return mp_fail(err, MP_EINVAL, s->key, "%s must be true or false (got '%.40s')", s->key, value);
		return MP_OK;
	case K_PASS_FAIL:
		if (strcmp(value, "pass") == 0 || strcmp(value, "fail") == 0) {
			cfg->k8s_unknown_device_fails = strcmp(value, "fail") == 0;
			return MP_OK;
		}
		return mp_fail(err, MP_EINVAL, s->key, "%s must be pass or fail (got '%.40s')", s->key, value);
	case K_LABELS: {
		/* name=value pairs separated by ','; names are Prometheus label names, values have no ',' */
		const char *p = value;

		if (strlen(value) >= sizeof(cfg->node_labels))
			return mp_fail(err, MP_EINVAL, s->key, "%s is longer than %zu bytes", s->key,
				       sizeof(cfg->node_labels) - 1);
		while (*p) {
			size_t n = strcspn(p, "=,"), k;

			for (k = 0; k < n && (isalnum((unsigned char)p[k]) || p[k] == '_'); k++)
				;
			if (n == 0 || k != n || isdigit((unsigned char)p[0]) || p[n] != '=' ||
			    (n >= 2 && p[0] == '_' && p[1] == '_'))
				return mp_fail(err, MP_EINVAL, s->key,
					       "%s is name=value pairs separated by ',' (names: letters, digits and '_'), "
					       "e.g. Hostname=gpu-node-1,gpu=0,UUID=GPU-...,modelName=NVIDIA H200", s->key);
			p += n + 1;
			p += strcspn(p, ",");
			if (*p == ',')
				p++;
		}
		snprintf(cfg->node_labels, sizeof(cfg->node_labels), "%s", value);
		return MP_OK;
	}
	case K_HOSTS:
		if (strlen(value) >= sizeof(cfg->allowed_hosts) || !mpd_allowed_hosts_valid(value))
			return mp_fail(err, MP_EINVAL, s->key,
				       "%s is host names separated by ',' (letters, digits, '-' and '.'; a leading '.' "
				       "takes a domain and its subdomains; '*' any), at most %zu bytes",
				       s->key, sizeof(cfg->allowed_hosts) - 1);
		snprintf(cfg->allowed_hosts, sizeof(cfg->allowed_hosts), "%s", value);
		return MP_OK;
	case K_ON_OFF:
		if (strcmp(value, "on") == 0 || strcmp(value, "off") == 0) {
			cfg->observed_terms_off = strcmp(value, "off") == 0;
			return MP_OK;
		}
		return mp_fail(err, MP_EINVAL, s->key, "%s must be on or off (got '%.40s')", s->key, value);
	case K_URL: {
		/* http(s)://host[:port][/path], printable, no spaces or quotes: the base of every Hub URL */
		bool ok = (strncmp(value, "https://", 8) == 0 || strncmp(value, "http://", 7) == 0) &&
			  strlen(value) < sizeof(cfg->hub_endpoint) && strlen(value) > 8;

		for (const char *p = value; ok && *p; p++)
			ok = (unsigned char)*p > 0x20 && *p != 0x7f && *p != '"' && *p != '\\';
		if (!ok)
			return mp_fail(err, MP_EINVAL, s->key,
				       "%s must be an http:// or https:// URL of at most %zu bytes, without spaces "
				       "(https://huggingface.co)",
				       s->key, sizeof(cfg->hub_endpoint) - 1);
		snprintf(cfg->hub_endpoint, sizeof(cfg->hub_endpoint), "%s", value);
		return MP_OK;
	}
	case K_HUB_PATH: {
		char *dst = strcmp(s->key, "hub-cache") == 0 ? cfg->hub_cache : cfg->hub_token_file;

		if (value[0] == '\0' || strlen(value) >= sizeof(cfg->hub_cache))
			return mp_fail(err, MP_EINVAL, s->key, "%s must be a path of 1 to %zu bytes", s->key,
				       sizeof(cfg->hub_cache) - 1);
		snprintf(dst, sizeof(cfg->hub_cache), "%s", value);
		return MP_OK;
	}
	case K_UINT:
	case K_SIZE:
		break;
	}
	errno = 0;
	v = isdigit((unsigned char)value[0]) ? strtoull(value, &end, 10) : 0;
	if (end == NULL || end == value || *end || errno || v < s->min || v > s->max)
		return mp_fail(err, MP_EINVAL, s->key, "%s must be an integer from %llu to %llu (got '%s')", s->key,
			       s->min, s->max, value);
	if (strcmp(s->key, "threads") == 0)
		cfg->threads = (unsigned int)v;
	else if (strcmp(s->key, "max-body-bytes") == 0)
		cfg->max_body_bytes = (size_t)v;
	else if (strcmp(s->key, "connection-timeout") == 0)
		cfg->connection_timeout_seconds = (unsigned int)v;
	else if (strcmp(s->key, "max-connections") == 0)
		cfg->connection_limit = (unsigned int)v;
	else if (strcmp(s->key, "shutdown-timeout") == 0)
		cfg->shutdown_timeout_seconds = (unsigned int)v;
	else if (strcmp(s->key, "response-cache-bytes") == 0)
		cfg->response_cache_bytes = (size_t)v;
	else if (strcmp(s->key, "k8s-headroom-floor-percent") == 0)
		cfg->k8s_headroom_floor_percent = (unsigned int)v;
	else if (strcmp(s->key, "k8s-max-body-bytes") == 0)
		cfg->k8s_max_body_bytes = (size_t)v;
	else if (strcmp(s->key, "model-max-body-bytes") == 0)
		cfg->model_max_body_bytes = (size_t)v;
	else if (strcmp(s->key, "max-heavy-requests") == 0)
		cfg->max_heavy_requests = (unsigned int)v;
	else if (strcmp(s->key, "header-timeout") == 0)
		cfg->header_timeout_seconds = (unsigned int)v;
	else if (strcmp(s->key, "max-connections-per-ip") == 0)
		cfg->max_connections_per_ip = (unsigned int)v;
	else if (strcmp(s->key, "body-timeout") == 0)
		cfg->body_timeout_seconds = (unsigned int)v;
	else if (strcmp(s->key, "send-timeout") == 0)
		cfg->send_timeout_seconds = (unsigned int)v;
	else if (strcmp(s->key, "min-transfer-rate") == 0)
		cfg->min_transfer_bytes_per_second = (size_t)v;
	else if (strcmp(s->key, "max-request-memory-bytes") == 0)
		cfg->max_request_memory_bytes = (size_t)v;
	else if (strcmp(s->key, "max-request-memory-bytes-per-ip") == 0)
		cfg->max_request_memory_bytes_per_ip = (size_t)v;
	else if (strcmp(s->key, "hub-cache-bytes") == 0)
		cfg->hub_cache_bytes = (size_t)v;
	else if (strcmp(s->key, "hub-timeout") == 0)
		cfg->hub_timeout_seconds = (unsigned int)v;
	return MP_OK;
}

mp_status mpd_config_set(mpd_config *cfg, const char *key, const char *value, mp_error *err)
{
	for (size_t i = 0; i < NSETTINGS; i++)
		if (strcmp(settings[i].key, key) == 0)
			return set_one(cfg, &settings[i], value, err);
	return mp_fail(err, MP_EINVAL, key, "unknown setting '%s'; memplan serve --help lists them", key);
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

mp_status mpd_config_load_file(mpd_config *cfg, const char *path, mp_error *err)
{
	FILE *f = fopen(path, "r");
	char buf[1024], where[600];
	mp_status st = MP_OK;
	int lineno = 0;

	if (f == NULL)
		return mp_fail(err, MP_EINVAL, "config", "cannot read the config file %s: %s", path, strerror(errno));
	while (st == MP_OK && fgets(buf, sizeof(buf), f)) {
		char *line, *eq, *key, *value;

		lineno++;
		snprintf(where, sizeof(where), "%s:%d", path, lineno);
		if (strchr(buf, '\n') == NULL && !feof(f)) {
			st = mp_fail(err, MP_EINVAL, where, "%s: line longer than %zu bytes", where, sizeof(buf) - 2);
			break;
		}
		line = trim(buf);
		if (line[0] == '\0' || line[0] == '#')
			continue;
		eq = strchr(line, '=');
		if (eq == NULL) {
			st = mp_fail(err, MP_EINVAL, where, "%s: expected 'key = value'", where);
			break;
		}
		*eq = '\0';
		key = trim(line);
		value = trim(eq + 1);
		if (strncmp(key, "--", 2) == 0)
			key += 2;
		st = mpd_config_set(cfg, key, value, err);
		if (st != MP_OK) {
			char msg[sizeof(err->message)];

			snprintf(msg, sizeof(msg), "%s", err->message);
			mp_fail(err, st, where, "%s: %s", where, msg);
		}
	}
	fclose(f);
	return st;
}

/* "max-body-bytes" -> "MEMPLAN_MAX_BODY_BYTES" */
static void env_name(const char *key, char *out, size_t len)
{
	size_t n = (size_t)snprintf(out, len, "MEMPLAN_");

	for (; *key && n + 1 < len; key++)
		out[n++] = *key == '-' ? '_' : (char)toupper((unsigned char)*key);
	out[n] = '\0';
}

mp_status mpd_config_load_env(mpd_config *cfg, mp_error *err)
{
	char name[64];

	for (size_t i = 0; i < NSETTINGS; i++) {
		const char *v;
		mp_status st;

		env_name(settings[i].key, name, sizeof(name));
		v = getenv(name);
		if (v == NULL)
			continue;
		st = set_one(cfg, &settings[i], v, err);
		if (st != MP_OK) {
			char msg[sizeof(err->message)];

			snprintf(msg, sizeof(msg), "%s", err->message);
			return mp_fail(err, st, name, "%s: %s", name, msg);
		}
	}
	return MP_OK;
}

/* One row: the flag and the variable in columns of kw and ew bytes, the meaning wrapped at word boundaries into the
 * column after them (USAGE_WIDTH columns in all, at least 40 for the meaning). */
#define USAGE_WIDTH 118
static void usage_row(FILE *out, int kw, int ew, const char *flag, const char *env, const char *help)
{
	int col = 2 + kw + 1 + ew + 1, avail = USAGE_WIDTH - col < 40 ? 40 : USAGE_WIDTH - col;
	const char *p = help;

	fprintf(out, "  %-*s %-*s ", kw, flag, ew, env);
	while (*p) {
		int n = (int)strlen(p);

		if (n > avail) { /* the last space that keeps the line within the column (a longer word stays whole) */
			n = avail;
			while (n > 0 && p[n] != ' ')
				n--;
			if (n == 0)
				n = (int)strcspn(p, " ");
		}
		fprintf(out, "%.*s\n", n, p);
		p += n;
		while (*p == ' ')
			p++;
		if (*p)
			fprintf(out, "%*s", col, "");
	}
}

void mpd_config_usage(FILE *out)
{
	char name[64], flag[64];
	int kw = (int)strlen("--config FILE"), ew = (int)strlen("MEMPLAN_CONFIG");

	/* the columns as wide as their longest entry, so every row lines up */
	for (size_t i = 0; i < NSETTINGS; i++) {
		env_name(settings[i].key, name, sizeof(name));
		if ((int)strlen(settings[i].key) + 2 > kw)
			kw = (int)strlen(settings[i].key) + 2;
		if ((int)strlen(name) > ew)
			ew = (int)strlen(name);
	}
	fprintf(out, "  %-*s %-*s %s\n", kw, "flag", ew, "environment", "meaning");
	for (size_t i = 0; i < NSETTINGS; i++) {
		env_name(settings[i].key, name, sizeof(name));
		snprintf(flag, sizeof(flag), "--%s", settings[i].key);
		usage_row(out, kw, ew, flag, name, settings[i].help);
	}
	usage_row(out, kw, ew, "--config FILE", "MEMPLAN_CONFIG",
		  "read settings from FILE ('key = value' lines); the environment overrides it, flags override both");
}
