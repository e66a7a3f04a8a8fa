/*
 * bench_k8s.c: how fast the kube-scheduler extender answers for a large cluster, in both of kube-scheduler's modes.
 * nodeCacheCapable true (the shipped configuration): ExtenderArgs with NodeNames only, each node's GPUs from its node
 * agent's report in the node cache (PUT /v1/nodes/{name}, one per node, made first). nodeCacheCapable false: every
 * Node object of the size kube-scheduler sends (GPU Feature Discovery and Node Feature Discovery labels, conditions,
 * addresses, node info and an image list: about 8.6 KB each), echoed back by the filter. Four GPU kinds, a vLLM pod.
 * The daemon is a separate process (build/memplan serve, or $MEMPLAN_BIN), so its own memory is measured: its RSS
 * when idle (started, the presets loaded) and its peak RSS (VmHWM, reset through /proc/PID/clear_refs before each
 * mode) while it answers; times are whole HTTP round trips (a new connection each, client included; kube-scheduler's
 * default extender timeout is 5 s), medians of RUNS. `parts` adds the handler's parts without HTTP for the Node
 * objects (parse, decode, place, encode), in this process. Not a test: figures go to bench/RESULTS.md.
 * Run: make bench-k8s [NODES="5000 15000"], or build/bench/bench_k8s NODES [names|labels|both|parts]
 */
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>
#include <time.h>

#include <curl/curl.h>

#include "../codec/mpc_json.h"
#include "../codec/mpc_fleet.h"
#include "../codec/mpc_k8s.h"
#include "../service/mps_k8s.h"
#include "../tests/http_util.h"

#define RUNS 7

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

typedef struct sbuf {
	char *p;
	size_t n, cap;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int k;

	for (;;) {
		va_start(ap, fmt);
		k = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
		va_end(ap);
		if (k >= 0 && (size_t)k < b->cap - b->n)
			break;
		b->cap = b->cap * 2 + (size_t)k + 1;
		b->p = realloc(b->p, b->cap);
		if (b->p == NULL)
			exit(1);
	}
	b->n += (size_t)k;
}

/* One Node object as kube-scheduler marshals it (labels of a GPU Operator node: GFD's nvidia.com labels and NFD's
 * feature.node.kubernetes.io ones; the status a kubelet reports). */
static void node(sbuf *b, int i)
{
	static const struct {
		const char *product, *family;
		int memory_mib, count;
	} kinds[] = { { "NVIDIA-H100-80GB-HBM3", "hopper", 81559, 8 },
		      { "NVIDIA-A100-SXM4-80GB", "ampere", 81920, 8 },
		      { "NVIDIA-L40S", "ampere", 46068, 4 },
		      { "NVIDIA-H200", "hopper", 143771, 8 } };
	static const char *const cpuid[] = { "ADX",	"AESNI",     "AVX",	   "AVX2",	"AVX512BW", "AVX512CD",
					     "AVX512DQ", "AVX512F",  "AVX512VL",   "AVX512VNNI", "FMA3",	"SHA",
					     "VAES",	"VPCLMULQDQ", "AMXBF16", "AMXINT8",	"AMXTILE",  "X87" };
	int k = i % 10 < 4 ? 0 : i % 10 < 7 ? 1 : i % 10 < 9 ? 2 : 3;

	put(b, "%s{\"metadata\":{\"name\":\"gpu-node-%05d\",\"uid\":\"6f1c2a3b-%04x-4c5d-8e9f-%012d\","
	       "\"resourceVersion\":\"%d\",\"creationTimestamp\":\"2026-11-01T08:00:00Z\",\"labels\":{",
	    i ? "," : "", i, i & 0xffff, i, 1000000 + i);
	put(b, "\"beta.kubernetes.io/arch\":\"amd64\",\"beta.kubernetes.io/os\":\"linux\",\"kubernetes.io/arch\":\"amd64\","
	       "\"kubernetes.io/hostname\":\"gpu-node-%05d\",\"kubernetes.io/os\":\"linux\","
	       "\"node.kubernetes.io/instance-type\":\"p5.48xlarge\",\"topology.kubernetes.io/region\":\"us-east-1\","
	       "\"topology.kubernetes.io/zone\":\"us-east-1%c\",",
	    i, 'a' + i % 4);
	for (size_t c = 0; c < sizeof(cpuid) / sizeof(cpuid[0]); c++)
		put(b, "\"feature.node.kubernetes.io/cpu-cpuid.%s\":\"true\",", cpuid[c]);
	put(b, "\"feature.node.kubernetes.io/kernel-version.full\":\"6.8.0-1015-aws\","
	       "\"feature.node.kubernetes.io/pci-10de.present\":\"true\",\"feature.node.kubernetes.io/system-os_release.ID\":"
	       "\"ubuntu\",\"feature.node.kubernetes.io/system-os_release.VERSION_ID\":\"22.04\",");
	put(b, "\"nvidia.com/cuda.driver-version.full\":\"580.159.04\",\"nvidia.com/cuda.driver-version.major\":\"580\","
	       "\"nvidia.com/cuda.driver-version.minor\":\"159\",\"nvidia.com/cuda.driver-version.revision\":\"04\","
	       "\"nvidia.com/cuda.runtime-version.full\":\"13.0\",\"nvidia.com/cuda.runtime-version.major\":\"13\","
	       "\"nvidia.com/cuda.runtime-version.minor\":\"0\",\"nvidia.com/gfd.timestamp\":\"1764576000\","
	       "\"nvidia.com/gpu.compute.major\":\"%d\",\"nvidia.com/gpu.compute.minor\":\"%d\",\"nvidia.com/gpu.count\":\"%d\","
	       "\"nvidia.com/gpu.deploy.container-toolkit\":\"true\",\"nvidia.com/gpu.deploy.dcgm\":\"true\","
	       "\"nvidia.com/gpu.deploy.dcgm-exporter\":\"true\",\"nvidia.com/gpu.deploy.device-plugin\":\"true\","
	       "\"nvidia.com/gpu.deploy.driver\":\"true\",\"nvidia.com/gpu.deploy.gpu-feature-discovery\":\"true\","
	       "\"nvidia.com/gpu.deploy.node-status-exporter\":\"true\",\"nvidia.com/gpu.deploy.operator-validator\":\"true\","
	       "\"nvidia.com/gpu.family\":\"%s\",\"nvidia.com/gpu.machine\":\"p5.48xlarge\",\"nvidia.com/gpu.memory\":\"%d\","
	       "\"nvidia.com/gpu.mode\":\"compute\",\"nvidia.com/gpu.present\":\"true\",\"nvidia.com/gpu.product\":\"%s\","
	       "\"nvidia.com/gpu.replicas\":\"1\",\"nvidia.com/gpu.sharing-strategy\":\"none\",\"nvidia.com/mig.capable\":"
	       "\"true\",\"nvidia.com/mig.strategy\":\"single\",\"nvidia.com/mps.capable\":\"false\"},",
	    kinds[k].family[0] == 'h' ? 9 : 8, 0, kinds[k].count, kinds[k].family, kinds[k].memory_mib, kinds[k].product);
	put(b, "\"annotations\":{\"nfd.node.kubernetes.io/feature-labels\":\"cpu-cpuid.ADX,cpu-cpuid.AESNI,cpu-cpuid.AVX,"
	       "cpu-cpuid.AVX2,kernel-version.full,pci-10de.present\",\"nfd.node.kubernetes.io/worker.version\":\"v0.17.2\","
	       "\"node.alpha.kubernetes.io/ttl\":\"0\",\"volumes.kubernetes.io/controller-managed-attach-detach\":\"true\"}},");
	put(b, "\"spec\":{\"providerID\":\"aws:///us-east-1a/i-0%015d\",\"taints\":[{\"key\":\"nvidia.com/gpu\",\"value\":"
	       "\"present\",\"effect\":\"NoSchedule\"}]},",
	    i);
	put(b, "\"status\":{\"capacity\":{\"cpu\":\"192\",\"ephemeral-storage\":\"7499746304Ki\",\"hugepages-1Gi\":\"0\","
	       "\"memory\":\"2113311516Ki\",\"nvidia.com/gpu\":\"%d\",\"pods\":\"110\"},\"allocatable\":{\"cpu\":\"191450m\","
	       "\"ephemeral-storage\":\"6911701983545\",\"hugepages-1Gi\":\"0\",\"memory\":\"2102416156Ki\","
	       "\"nvidia.com/gpu\":\"%d\",\"pods\":\"110\"},\"conditions\":[",
	    kinds[k].count, kinds[k].count);
	for (int c = 0; c < 5; c++) {
		static const char *const types[] = { "MemoryPressure", "DiskPressure", "PIDPressure", "Ready",
						     "NetworkUnavailable" };

		put(b, "%s{\"type\":\"%s\",\"status\":\"%s\",\"lastHeartbeatTime\":\"2026-12-01T10:%02d:00Z\","
		       "\"lastTransitionTime\":\"2026-11-01T08:01:00Z\",\"reason\":\"Kubelet%s\",\"message\":\"kubelet has "
		       "sufficient resources (%s)\"}",
		    c ? "," : "", types[c], c == 3 ? "True" : "False", i % 60, types[c], types[c]);
	}
	put(b, "],\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.%d.%d.%d\"},{\"type\":\"Hostname\",\"address\":"
	       "\"gpu-node-%05d\"}],\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":10250}},\"nodeInfo\":{"
	       "\"machineID\":\"ec2%029d\",\"systemUUID\":\"ec2%029d\",\"bootID\":\"%036d\",\"kernelVersion\":"
	       "\"6.8.0-1015-aws\",\"osImage\":\"Ubuntu 22.04.5 LTS\",\"containerRuntimeVersion\":\"containerd://1.7.24\","
	       "\"kubeletVersion\":\"v1.33.2\",\"kubeProxyVersion\":\"v1.33.2\",\"operatingSystem\":\"linux\","
	       "\"architecture\":\"amd64\"},\"images\":[",
	    i / 65536, (i / 256) % 256, i % 256, i, i, i, i);
	for (int m = 0; m < 20; m++)
		put(b, "%s{\"names\":[\"nvcr.io/nvidia/image-%02d@sha256:%064d\",\"nvcr.io/nvidia/image-%02d:v%d.%d.%d\"],"
		       "\"sizeBytes\":%lld}",
		    m ? "," : "", m, m * 7919, m, 1 + m % 3, m, m % 5, 100000000LL + m * 123456789LL);
	put(b, "]}}");
}

static char *make_args(int nodes, bool names, size_t *len)
{
	sbuf b = { malloc(1 << 20), 0, 1 << 20 };

	put(&b, "{\"Pod\":{\"metadata\":{\"name\":\"llama70b-0\",\"namespace\":\"inference\",\"uid\":\"1\"},\"spec\":{"
		"\"containers\":[{\"name\":\"vllm\",\"image\":\"vllm/vllm-openai:v0.10.1\",\"args\":[\"--model\","
		"\"meta-llama/Llama-3.1-70B-Instruct\",\"--tensor-parallel-size\",\"4\",\"--max-model-len\",\"32768\"],"
		"\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"4\"}}}]}},");
	if (names) {
		/* kube-scheduler with nodeCacheCapable: true: a nil *NodeList is null */
		put(&b, "\"Nodes\":null,\"NodeNames\":[");
		for (int i = 0; i < nodes; i++)
			put(&b, "%s\"gpu-node-%05d\"", i ? "," : "", i);
		put(&b, "]}");
	} else {
		put(&b, "\"Nodes\":{\"metadata\":{},\"items\":[");
		for (int i = 0; i < nodes; i++)
			node(&b, i);
		put(&b, "]},\"NodeNames\":null}");
	}
	*len = b.n;
	return b.p;
}

static void report(const char *what, double *t, int n)
{
	qsort(t, (size_t)n, sizeof(*t), cmp);
	printf("  %-34s median %8.1f ms   min %8.1f   max %8.1f   (%d runs)\n", what, t[n / 2] * 1e3, t[0] * 1e3,
	       t[n - 1] * 1e3, n);
}

/* The handler's parts without HTTP: parse, decode, place, encode + print. */
static void parts(mps_service *svc, mps_node_cache *cache, const char *body, size_t len, bool prioritize)
{
	double tp[RUNS], td[RUNS], tl[RUNS], te[RUNS];
	mps_k8s_policy pol = { false, 0.1, cache, (int64_t)time(NULL) };

	for (int r = 0; r < RUNS; r++) {
		cJSON *doc = NULL;
		mpc_k8s_args a;
		mps_k8s_result res;
		mp_error err = MP_ERROR_INIT;
		double t0 = now(), t1, t2, t3;
		size_t heap0 = mallinfo2().uordblks;
		char *text;

		if (mpc_parse_body(body, len, &doc, &err) != MP_OK) {
			fprintf(stderr, "parse: %s\n", err.message);
			exit(1);
		}
		t1 = now();
		if (r == 0 && !prioritize)
			printf("  the parsed ExtenderArgs (cJSON tree) hold %.0f MB of heap for a %.0f MB body\n",
			       (double)(mallinfo2().uordblks - heap0) / 1e6, (double)len / 1e6);
		if (mpc_k8s_args_decode(doc, &a, &err) != MP_OK) {
			fprintf(stderr, "decode: %s\n", err.message);
			exit(1);
		}
		t2 = now();
		if (mps_k8s_place(svc, &a.rq, &pol, &res, &err) != MP_OK) {
			fprintf(stderr, "place: %s\n", err.message);
			exit(1);
		}
		t3 = now();
		{
			mpc_out w;

			mpc_out_init(&w);
			if (prioritize)
				mpc_k8s_prioritize_write(&w, &a, &res);
			else
				mpc_k8s_filter_write(&w, &a, &res);
			text = mpc_out_finish(&w, NULL);
		}
		te[r] = now() - t3;
		tp[r] = t1 - t0;
		td[r] = t2 - t1;
		tl[r] = t3 - t2;
		if (r == 0)
			printf("  %s: %zu classes of node, %llu passed, %llu unresolvable, answer %zu bytes\n",
			       prioritize ? "prioritize" : "filter", res.nclasses, (unsigned long long)res.passed,
			       (unsigned long long)res.unresolvable, strlen(text));
		free(text);
		mps_k8s_result_free(&res);
		mpc_k8s_args_free(&a);
		cJSON_Delete(doc);
	}
	report("parse (cJSON, strict)", tp, RUNS);
	report("decode ExtenderArgs", td, RUNS);
	report("place (plans, verdicts, scores)", tl, RUNS);
	report("encode + print the answer", te, RUNS);
}

/* The kind of node i (the same mix as node()): what its agent reports, as nvidia-smi names it. */
static void node_report(int i, char *body, size_t len)
{
	static const struct {
		const char *nvml;
		int memory_mib, count;
	} kinds[] = { { "NVIDIA H100 80GB HBM3", 81559, 8 },
		      { "NVIDIA A100-SXM4-80GB", 81920, 8 },
		      { "NVIDIA L40S", 46068, 4 },
		      { "NVIDIA H200", 143771, 8 } };
	int k = i % 10 < 4 ? 0 : i % 10 < 7 ? 1 : i % 10 < 9 ? 2 : 3;

	snprintf(body, len, "{\"product\":\"%s\",\"memory_mib\":%d,\"count\":%d,\"lease_seconds\":600,"
		 "\"agent\":\"bench_k8s\"}", kinds[k].nvml, kinds[k].memory_mib, kinds[k].count);
}

/* A field of /proc/PID/status in KiB ("VmRSS", "VmHWM"). */
static long status_kib(pid_t pid, const char *field)
{
	char path[64], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, strlen(field)) == 0 && line[strlen(field)] == ':')
			v = strtol(line + strlen(field) + 1, NULL, 10);
	fclose(f);
	return v;
}

/* Resets the peak RSS to the current RSS (proc(5): writing 5 to clear_refs). */
static void reset_peak(pid_t pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/clear_refs", (int)pid);
	fd = open(path, O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "5", 1) != 1)
			perror("clear_refs");
		close(fd);
	}
}

static uint16_t free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t n = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	uint16_t port = 0;

	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && getsockname(fd, (struct sockaddr *)&a, &n) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* Starts `memplan serve` on a free port with a fresh database in dir; fills d->bound_port. */
static pid_t start_daemon(mpd_daemon *d, const char *dir)
{
	const char *bin = getenv("MEMPLAN_BIN") ? getenv("MEMPLAN_BIN") : "build/memplan";
	char listen[32], db[128];
	pid_t pid;

	memset(d, 0, sizeof(*d));
	d->bound_port = free_port();
	snprintf(listen, sizeof(listen), "127.0.0.1:%u", d->bound_port);
	snprintf(db, sizeof(db), "%s/bench.db", dir);
	pid = fork();
	if (pid == 0) {
		execl(bin, bin, "serve", "--listen", listen, "--db", db, "--log-level", "warn", "--threads", "2",
		      "--k8s-max-body-bytes", "268435456", "--response-cache-bytes", "0", (char *)NULL);
		perror(bin);
		_exit(127);
	}
	for (int i = 0; i < 300; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(d->bound_port),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		bool up = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;

		if (fd >= 0)
			close(fd);
		if (up)
			return pid;
		usleep(100000);
	}
	fprintf(stderr, "bench_k8s: %s serve did not start\n", bin);
	exit(1);
}

static void round_trips(const mpd_daemon *d, const char *mode, const char *body, int nodes)
{
	double t[RUNS];

	for (int v = 0; v < 2; v++) {
		const char *path = v ? "/v1/k8s/prioritize" : "/v1/k8s/filter";
		char what[80];

		for (int r = 0; r < RUNS; r++) {
			http_resp resp;
			double t0 = now();

			http_do(d, "POST", path, body, "application/json", NULL, &resp);
			t[r] = now() - t0;
			if (resp.status != 200) {
				fprintf(stderr, "%s: HTTP %ld: %.300s\n", path, resp.status, resp.body);
				exit(1);
			}
			if (r == 0 && v == 0) {
				const cJSON *names = cJSON_GetObjectItem(resp.json, "NodeNames");
				const cJSON *err = cJSON_GetObjectItem(resp.json, "Error");

				printf("  %s: answer %zu bytes, %d nodes passed%s%s\n", path, resp.len, cJSON_GetArraySize(names),
				       err && err->valuestring[0] ? ", Error: " : "", err ? err->valuestring : "");
				if (cJSON_GetArraySize(names) == 0 || cJSON_GetArraySize(names) > nodes) {
					fprintf(stderr, "bench_k8s: %s answered no passing node\n", mode);
					exit(1);
				}
			}
			http_resp_free(&resp);
		}
		snprintf(what, sizeof(what), "%s, %s", mode, v ? "prioritize" : "filter");
		report(what, t, RUNS);
	}
}

int main(int argc, char **argv)
{
	int nodes = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 5000;
	const char *which = argc > 2 ? argv[2] : "both";
	mpd_daemon d;
	char dir[] = "/tmp/memplan-bench-k8s-XXXXXX";
	size_t len;
	char *body;
	pid_t pid;
	long idle;

	if (nodes < 1 || nodes > MPS_K8S_MAX_NODES) {
		fprintf(stderr, "bench_k8s: NODES must be 1 to %d\n", MPS_K8S_MAX_NODES);
		return 2;
	}
	mpc_json_init(NULL);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (strcmp(which, "parts") == 0) {
		mpd_daemon in;
		char tdir[64];

		body = make_args(nodes, false, &len);
		http_start(&in, tdir, sizeof(tdir));
		printf("handler parts, without HTTP (%d Node objects, %zu bytes):\n", nodes, len);
		parts(in.svc, NULL, body, len, false);
		parts(in.svc, NULL, body, len, true);
		free(body);
		{
			mps_node_cache *c = mps_node_cache_new(0);
			mps_node_facts f;
			mp_error e = MP_ERROR_INIT;
			char rep[256];

			for (int i = 0; i < nodes; i++) {
				cJSON *doc;
				char name[32];

				node_report(i, rep, sizeof(rep));
				snprintf(name, sizeof(name), "gpu-node-%05d", i);
				doc = cJSON_Parse(rep);
				if (mpc_node_decode(doc, name, &f, &e) != MP_OK ||
				    mps_node_cache_put(c, &f, (int64_t)time(NULL), NULL, &e) != MP_OK)
					return 1;
				cJSON_Delete(doc);
			}
			body = make_args(nodes, true, &len);
			printf("handler parts, without HTTP (%d node names, %zu bytes):\n", nodes, len);
			parts(in.svc, c, body, len, false);
			parts(in.svc, c, body, len, true);
			mps_node_cache_free(c);
		}
		http_stop(&in, tdir);
		free(body);
		curl_global_cleanup();
		return 0;
	}
	if (mkdtemp(dir) == NULL)
		return 1;
	pid = start_daemon(&d, dir);
	idle = status_kib(pid, "VmRSS");
	printf("%d nodes; pod: vLLM Llama-3.1-70B, TP 4, 32768 tokens; daemon idle RSS %.1f MiB\n", nodes, idle / 1024.0);
	if (strcmp(which, "names") == 0 || strcmp(which, "both") == 0) {
		char rep[256], path[64];
		double t0 = now();

		for (int i = 0; i < nodes; i++) {
			http_resp r;

			node_report(i, rep, sizeof(rep));
			snprintf(path, sizeof(path), "/v1/nodes/gpu-node-%05d", i);
			http_do(&d, "PUT", path, rep, "application/json", NULL, &r);
			if (r.status != 201) {
				fprintf(stderr, "PUT %s: %ld %s\n", path, r.status, r.body);
				return 1;
			}
			http_resp_free(&r);
		}
		printf("nodeCacheCapable true: %d reports PUT in %.2f s (%.0f us each); RSS with them %.1f MiB\n", nodes,
		       now() - t0, (now() - t0) / nodes * 1e6, status_kib(pid, "VmRSS") / 1024.0);
		body = make_args(nodes, true, &len);
		printf("  ExtenderArgs: %zu bytes (NodeNames)\n", len);
		reset_peak(pid);
		round_trips(&d, "names", body, nodes);
		printf("  daemon peak RSS %.1f MiB: %.1f MiB above idle\n", status_kib(pid, "VmHWM") / 1024.0,
		       (status_kib(pid, "VmHWM") - idle) / 1024.0);
		free(body);
	}
	if (strcmp(which, "labels") == 0 || strcmp(which, "both") == 0) {
		body = make_args(nodes, false, &len);
		printf("nodeCacheCapable false: ExtenderArgs %zu bytes (%.1f KB per Node object)\n", len,
		       (double)len / nodes / 1e3);
		reset_peak(pid);
		round_trips(&d, "Node objects", body, nodes);
		printf("  daemon peak RSS %.1f MiB: %.1f MiB above idle\n", status_kib(pid, "VmHWM") / 1024.0,
		       (status_kib(pid, "VmHWM") - idle) / 1024.0);
		free(body);
	}
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	{
		char f[128];

		snprintf(f, sizeof(f), "%s/bench.db", dir);
		unlink(f);
		snprintf(f, sizeof(f), "%s/bench.db-wal", dir);
		unlink(f);
		snprintf(f, sizeof(f), "%s/bench.db-shm", dir);
		unlink(f);
		rmdir(dir);
	}
	curl_global_cleanup();
	return 0;
}
