#!/bin/sh
# bench/load/run.sh: load benchmark of the daemon with wrk (keep-alive connections), in two parts.
#  1. The computed plan against health, response cache off (--response-cache-bytes 0): ROUNDS (default 3) rounds of
#     GET /v1/health then POST /v1/plan/inference (one body, computed every time), DURATION seconds each (default
#     20); prints each round's plan/health throughput ratio and their mean (rounds alternate so that a change in
#     the machine's load falls on both endpoints alike).
#  2. The daemon as deployed (cache on): the same plan body (answered from the cache), distinct bodies (each
#     computed: bench/load/distinct.lua) and, when this build routes it, POST /v1/fit with 1,000 candidates.
# The daemon's RSS is sampled every second. Prints Markdown tables for bench/RESULTS.md.
# Usage: bench/load/run.sh [DURATION] (make bench-load); ROUNDS, CONNS, WRK_THREADS, SERVER_THREADS in the environment.
set -eu
cd "$(dirname "$0")/../.."
DURATION=${1:-${DURATION:-20}}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-16}
WRK_THREADS=${WRK_THREADS:-2}
SERVER_THREADS=${SERVER_THREADS:-2}
BIN=${MEMPLAN_BIN:-build/memplan}
command -v wrk >/dev/null || { echo "bench-load: wrk is not installed (apt-get install wrk)"; exit 1; }

tmp=$(mktemp -d /tmp/memplan-load-XXXXXX)
pid=""
sampler=""
trap 'kill "$pid" 2>/dev/null || true; kill "$sampler" 2>/dev/null || true; rm -rf "$tmp"' EXIT INT TERM

start() { # name, extra serve flags: starts the daemon on a fresh database, sets pid, port, url and the RSS sampler
	name=$1
	shift
	rm -f "$tmp"/memplan.db*
	"$BIN" serve --listen 127.0.0.1:0 --db "$tmp/memplan.db" --threads "$SERVER_THREADS" --log-level warn "$@" \
		2>"$tmp/daemon.log" &
	pid=$!
	# the port is in the first (info) line; at warn that line is not written, so ask the kernel instead
	port=""
	for _ in $(seq 1 100); do
		port=$(ss -ltnpH 2>/dev/null | grep "pid=$pid," | sed -n 's/.*127\.0\.0\.1:\([0-9]*\) .*/\1/p' | head -1)
		[ -n "$port" ] && break
		sleep 0.05
	done
	[ -n "$port" ] || { echo "bench-load: the daemon did not start"; cat "$tmp/daemon.log"; exit 1; }
	url="http://127.0.0.1:$port"
	( while kill -0 "$pid" 2>/dev/null; do
		awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null; sleep 1; done >"$tmp/rss.$name" ) &
	sampler=$!
	curl -sf -o /dev/null -H 'Content-Type: application/json' --data-binary @"$tmp/plan.json" "$url/v1/plan/inference" ||
		{ echo "bench-load: the plan request fails"; exit 1; }
}

stop() {
	kill "$sampler" 2>/dev/null || true
	kill -TERM "$pid"
	wait "$pid" || { echo "bench-load: the daemon exited with an error"; exit 1; }
	pid=""
}

cache_counts() { # "hits misses" of the response cache, from /metrics
	curl -sf "$url/metrics" | awk '/^memplan_response_cache_hits_total / {h=$2} /^memplan_response_cache_misses_total / {m=$2}
		END {print (h == "" ? 0 : h), (m == "" ? 0 : m)}'
}

run() { # name path [body file | script.lua]: one wrk run; its JSON line in $tmp/<name>.json
	: >"$tmp/$1.lua"
	case "${3:-}" in
	"") ;;
	*.lua) cat "$3" >"$tmp/$1.lua" ;;
	*) { printf 'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = [==['
	     cat "$3"; printf ']==]\n'; } >"$tmp/$1.lua" ;;
	esac
	cat bench/load/report.lua >>"$tmp/$1.lua"
	set -- "$1" "$2" "$(cache_counts)"
	LOG_FIRST=1 wrk -t"$WRK_THREADS" -c"$CONNS" -d"${DURATION}s" -s "$tmp/$1.lua" "$url$2" | tail -1 >"$tmp/$1.json"
	echo "$3 $(cache_counts)" >"$tmp/$1.cache"
	echo "  $1: $(cat "$tmp/$1.json")" >&2
}

printf '%s' '{"model":"llama-3-8b","weight_dtype":"bf16","kv_cache_dtype":"bf16","batch_size":1,"sequence_length":4096,"device":"h200-sxm-141gb"}' \
	>"$tmp/plan.json"
echo "bench-load: $DURATION s per run, $CONNS keep-alive connections, wrk $WRK_THREADS threads," \
	"daemon $SERVER_THREADS threads, $(nproc) CPUs, $ROUNDS rounds with the response cache off" >&2

start off --response-cache-bytes 0
r=1
while [ "$r" -le "$ROUNDS" ]; do
	run "health_$r" /v1/health
	run "plan_$r" /v1/plan/inference "$tmp/plan.json"
	r=$((r + 1))
done
stop

start on
run plan_cached /v1/plan/inference "$tmp/plan.json"
run plan_distinct /v1/plan/inference bench/load/distinct.lua
if "$BIN" routes | grep -q '^POST /v1/fit$'; then
	bench/load/fit_body.sh 1000 >"$tmp/fit.json"
	# computed once before the run (a cold start under 16 connections would answer most of them 503 while
	# the first computes: --max-heavy-requests), then answered from the cache
	curl -sf -o /dev/null -H 'Content-Type: application/json' --data-binary @"$tmp/fit.json" "$url/v1/fit" ||
		{ echo "bench-load: the fit request fails"; exit 1; }
	run fit /v1/fit "$tmp/fit.json"
fi
stop

python3 - "$tmp" "$ROUNDS" <<'PY'
import json, os, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])

def load(name):
    p = os.path.join(tmp, name + ".json")
    if not os.path.exists(p):
        return None
    r = json.load(open(p))
    h0, m0, h1, m1 = (float(x) for x in open(os.path.join(tmp, name + ".cache")).read().split())
    r["cache"] = "%d/%d" % (h1 - h0, m1 - m0) if (h1 - h0) or (m1 - m0) else "-"
    return r

def row(label, r):
    print("| %s | %.0f | %.3f ms | %.3f ms | %d | %d/%d/%d/%d/%d | %s |" % (
        label, r["requests_per_second"], r["p50_seconds"] * 1e3, r["p99_seconds"] * 1e3, r["requests"],
        r["errors_connect"], r["errors_read"], r["errors_write"], r["errors_timeout"], r["non_2xx"], r["cache"]))

head = ("| run | requests/s | p50 | p99 | requests | errors (connect/read/write/timeout/non-2xx) "
        "| response cache hits/misses |\n|---|---:|---:|---:|---:|---|---|")
print("Response cache off (every plan computed):\n")
print(head)
ratios, errors = [], 0
for k in range(1, rounds + 1):
    h, p = load("health_%d" % k), load("plan_%d" % k)
    row("%d: GET /v1/health" % k, h)
    row("%d: POST /v1/plan/inference" % k, p)
    ratios.append(p["requests_per_second"] / h["requests_per_second"])
    errors += sum(r[e] for r in (h, p) for e in ("errors_connect", "errors_read", "errors_write", "errors_timeout", "non_2xx"))
print()
print("plan/health throughput ratio, cache off: %s; mean of %d rounds %.2f (target >= 0.80)" % (
    ", ".join("%.2f" % x for x in ratios), rounds, sum(ratios) / len(ratios)))
print("\nResponse cache on (as deployed):\n")
print(head)
labels = {"plan_cached": "POST /v1/plan/inference, one body (cached)",
          "plan_distinct": "POST /v1/plan/inference, distinct bodies (computed)",
          "fit": "POST /v1/fit (1,000 candidates), one body"}
for name, label in labels.items():
    r = load(name)
    if r:
        row(label, r)
        errors += sum(r[e] for e in ("errors_connect", "errors_read", "errors_write", "errors_timeout", "non_2xx"))
print()
for name in ("off", "on"):
    rss = [int(x) for x in open(os.path.join(tmp, "rss." + name)).read().split() if x.strip()]
    if rss:
        print("RSS, cache %s (MiB): first %.1f, peak %.1f, last %.1f (%d samples)" % (
            name, rss[0] / 1024, max(rss) / 1024, rss[-1] / 1024, len(rss)))
print("errors: %d" % errors)
PY
