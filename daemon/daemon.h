/*
 * daemon.h: the HTTP server's shared types (daemon/ is HTTP and nothing else: the only includer of
 * microhttpd.h). One struct mpd_daemon (configuration, the service, the HTTP daemon) is passed to every handler;
 * handlers keep no global state. A handler is decode (codec/) -> service (service/) -> encode (codec/) and returns
 * a status with a document or an error detail: only reply.c turns that into an HTTP response. Auth, body parsing
 * and the response cache follow the route table's flags (routes.h), decided in server.c in one place.
 */
#ifndef MPD_DAEMON_H
#define MPD_DAEMON_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "../service/mps_calib.h"
#include "../service/mps_nodes.h"
#include "../service/service.h"

#define MPD_DEFAULT_LISTEN "127.0.0.1:8080"
#define MPD_DEFAULT_DB "var/memplan.db"
#define MPD_DEFAULT_MAX_BODY_BYTES (1024 * 1024)
#define MPD_DEFAULT_RESPONSE_CACHE_BYTES (32 * 1024 * 1024)
/* kube-scheduler sends every feasible Node object (10 to 20 KB each with GFD and NFD labels and the image list):
 * 5,000 nodes are 50 to 100 MB */
#define MPD_DEFAULT_K8S_MAX_BODY_BYTES (128 * 1024 * 1024)
/* bodies being read and answers waiting to be sent, daemon-wide: two of the largest extender calls */
#define MPD_DEFAULT_REQUEST_MEMORY_BYTES (256 * 1024 * 1024)
/* a GGUF header with its tokenizer is a few MB (a 150k-token vocabulary: about 8 MB), base64 a third more: the
 * routes that take a model (MPD_ROUTE_MODEL_BODY) take bodies up to this */
#define MPD_DEFAULT_MODEL_MAX_BODY_BYTES (32 * 1024 * 1024)
#define MPD_MAX_URL_BYTES 4096			/* longer request targets get 414 */
#define MPD_MAX_QUERY_ARGS 128		/* more query arguments get 414 (a route takes at most 72: 64 ops and 8 more) */
/* the {id} segment of a path as routes hand it over: a node name (a DNS subdomain, 253 bytes) fits */
#define MPD_PATH_ID_MAX 256
/* the Hub's headers kept by default: a 405B model's 191 shard headers are about 5 MB */
#define MPD_DEFAULT_HUB_CACHE_BYTES (256 * 1024 * 1024)
/* per connection: request line + headers must fit (else 431). libmicrohttpd 0.9.75 zeroes the whole pool after
 * every request (MHD_pool_reset): 64 KiB cost ~65,000 instructions per request, as much as a plan; 16 KiB holds a
 * 4 KiB path (414 beyond) and 11 KiB of headers. */
#define MPD_CONNECTION_MEMORY_BYTES (16 * 1024)

typedef struct mpd_config {
	char listen_host[64];		/* numeric IPv4 or IPv6 address */
	uint16_t listen_port;		/* 0 = any free port (tests) */
	char db_path[512];
	size_t max_body_bytes;		/* request bodies above this get 413 */
	unsigned int threads;		/* worker threads (libmicrohttpd thread pool) */
	unsigned int connection_timeout_seconds;
	unsigned int connection_limit;
	char token[256];		/* bearer token that writes need; "" = writes open (see auth.h) */
	char token_file[512];		/* where the token is read from ("" = MEMPLAN_TOKEN or none) */
	bool insecure;			/* listen beyond loopback without a token */
	int log_level;			/* mpd_log_level (log.h); MPD_LOG_INFO by default */
	unsigned int shutdown_timeout_seconds;	/* how long SIGTERM waits for in-flight requests */
	size_t response_cache_bytes;	/* bound of the pure POST endpoints' response cache; 0 = off */
	/* kube-scheduler extender (h_k8s.c, service/mps_k8s.h) */
	bool k8s_unknown_device_fails;	/* a node whose GPU maps to no profile fails (default: passes) */
	unsigned int k8s_headroom_floor_percent;	/* prioritize: headroom a placement should keep (default 10) */
	size_t k8s_max_body_bytes;	/* body limit of the extender's routes (Node objects of every candidate node) */
	size_t model_max_body_bytes;	/* body limit of the routes that take a model (a GGUF header pasted in base64) */
	char node_labels[512];		/* "Hostname=n1,gpu=0,UUID=GPU-...,modelName=NVIDIA H200": labels of this node's
					 * calibration gauges, aligned with DCGM's (the node agent sets them) */
	unsigned int max_heavy_requests;	/* fit and capacity computations in flight; more get 503; 0 = threads / 2
					   (at least 1) */
	unsigned int header_timeout_seconds;	/* a connection must send its request line and headers within this */
	unsigned int max_connections_per_ip;	/* 0 = no per-address limit */
	char allowed_hosts[1024];	/* Host names served without a token besides loopback ones (framing.h) */
	unsigned int body_timeout_seconds;	/* a body must arrive whole within this of its headers (guard.h) */
	unsigned int send_timeout_seconds;	/* an answer must be sent within this, plus its size at the minimum
					 * rate (guard.h) */
	size_t min_transfer_bytes_per_second;	/* a body or an answer moving slower over a window is cut (guard.h) */
	size_t max_request_memory_bytes;	/* bytes held for bodies and answers in flight, daemon-wide (budget.h) */
	size_t max_request_memory_bytes_per_ip;	/* the same per client address; 0 = --k8s-max-body-bytes +
						 * --max-body-bytes */
	bool observed_terms_off;	/* --observed-terms off: plans keep the model's terms (service/mps_observe.h) */
	/* the Hugging Face Hub models given by hf_repo may be fetched from (service.h mps_set_hub); "" = never */
	char hub_endpoint[512];
	char hub_token_file[512];	/* the Hub token's file ("" = MEMPLAN_HUB_TOKEN or none) */
	char hub_token[512];		/* loaded by mpd_hub_token_load; never logged */
	char hub_cache[512];		/* where fetched headers are kept ("" = hub-cache beside the database) */
	size_t hub_cache_bytes;
	unsigned int hub_timeout_seconds;
} mpd_config;

typedef struct mpd_daemon {
	mpd_config cfg;
	mps_service *svc;		/* borrowed: opened by the caller (mps_open), closed after mpd_stop */
	struct MHD_Daemon *mhd;
	uint16_t bound_port;		/* the port actually bound */
	mps_calib_jobs *calib;		/* calibration jobs (service/mps_calib.h), made by mpd_start */
	struct mpd_metrics *metrics;	/* GET /metrics; created by mpd_start, freed by mpd_stop */
	struct mpd_respcache *respcache;	/* pure POST answers (respcache.h); NULL = off; made by mpd_start */
	atomic_uint heavy_in_flight;	/* HEAVY routes computing now (server.c), at most max_heavy_requests */
	unsigned int heavy_limit;	/* max_heavy_requests as applied */
	struct mpd_guard *guard;	/* connections still sending their headers (server.c: the header deadline) */
	struct mpd_budget *budget;	/* bytes held for requests in flight (budget.h); made by mpd_start */
	struct mpd_lane *lane;		/* threads computing HEAVY routes' answers (lane.h); made by mpd_start */
	struct mpd_acceptor *acceptor;	/* the accept path (accept.h); made by mpd_start */
	struct MHD_Daemon *fresh;	/* the fresh lane (accept.h): first requests while the daemon is under pressure */
	atomic_uint fresh_open;		/* connections the fresh lane holds */
	atomic_bool trim_pending;	/* a large request ended: freed memory goes back to the system when the
					 * others are done (server.c) */
	mps_node_cache *nodes;		/* the node agents' reports (service/mps_nodes.h), made by mpd_start */
} mpd_daemon;

/* A decoded request, borrowed by the handler for the duration of the call. */
typedef struct mpd_request {
	mpd_daemon *d;
	const char *method;
	const char *path;
	const char *path_id;		/* the {id} segment of the route, or NULL */
	const char *body;		/* NUL-terminated; "" when empty */
	size_t body_len;
	const cJSON *json;		/* the parsed body of a MPD_ROUTE_JSON_BODY route (strict: codec/mpc_json.h), else NULL */
	void *conn;			/* struct MHD_Connection *, for query arguments and headers */
	bool text;			/* ?format=text on a route that takes it: the answer for people (text/plain) */
	/* MPD_ROUTE_K8S_STREAM: the extender body as it was decoded while it arrived (codec/mpc_k8s_stream.h), owned by
	 * the server; a handler whose answer keeps using it takes it (sets this to NULL and frees it later) */
	struct mpc_k8s_args *k8s;
} mpd_request;

/* What a handler produces. On MP_OK, `text` (owned; freed by the reply writer: the JSON answer codec's writer
 * wrote, or text for people) with its `text_type`, and `http_status` (0 = 200). On error, `err` names the field
 * and says what is wrong; `http_status` may refine the default mapping. */
typedef struct mpd_reply {
	int http_status;
	char *text;			/* the body (owned), with text_type; NULL for a 204 */
	const char *text_type;
	mp_error err;
	bool cacheable;			/* a GET: reply.c adds a strong ETag and answers If-None-Match with 304 */
	char location[192];		/* Location header (201 Created), "" = none */
	bool pretty;			/* ?pretty=true: JSON answers (problems included) indented */
	bool page;			/* the web page's files: reply.c adds its Content-Security-Policy */
	unsigned int retry_after;	/* seconds for a Retry-After header (503 overloaded), 0 = none */
	bool close;			/* ask the client to close the connection after this answer (framing errors) */
	bool no_store;			/* the answer rests on more than the body and the store (a Hugging Face repository
					   read from its cache or the Hub): never kept in the response cache */
	/* A 200 body produced while it is sent (POST /v1/fit): stream_read writes up to max bytes into buf and returns
	 * how many, 0 at the end, -1 on a failure (the connection is then closed before the answer is complete);
	 * stream_free releases stream_ctx once the response is done. text_type names the media type. Owned by the
	 * reply writer once the handler returns MP_OK. */
	ssize_t (*stream_read)(void *ctx, char *buf, size_t max);
	void (*stream_free)(void *ctx);
	void *stream_ctx;
	uint64_t stream_length;		/* the bytes the stream produces when known (a Content-Length), 0 = unknown */
	bool stream_ready;		/* the stream copies out an answer already computed: a heavy slot goes back now */
	/* told each block of a large answer's bytes as libmicrohttpd takes them (the send deadline's rate); may be
	 * NULL. Set by server.c. */
	void (*progress)(void *ctx, size_t n);
	void *progress_ctx;
} mpd_reply;

typedef mp_status (*mpd_handler)(mpd_request *req, mpd_reply *rep);

/* Starts the HTTP daemon on cfg; fills d->bound_port. Errors: MP_EINVAL (bad address), MP_EINTERNAL. */
mp_status mpd_start(mpd_daemon *d, mp_error *err);
void mpd_stop(mpd_daemon *d);

/*
 * Graceful stop: stops accepting connections, waits up to cfg.shutdown_timeout_seconds for the requests in
 * flight to be answered, then stops the daemon (mpd_stop). Returns the number of requests still in flight
 * when it gave up waiting (0 when all finished). The caller then closes the store.
 */
unsigned long mpd_shutdown(mpd_daemon *d);

/* Parses "host:port" or "[v6]:port" into cfg. Errors: MP_EINVAL naming "--listen". */
mp_status mpd_parse_listen(const char *s, mpd_config *cfg, mp_error *err);
void mpd_config_defaults(mpd_config *cfg);

#endif /* MPD_DAEMON_H */
