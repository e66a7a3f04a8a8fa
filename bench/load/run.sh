#!/bin/sh
# bench/load/run.sh: load benchmark of the daemon with wrk (keep-alive connections). Runs, one after the other,
# GET /v1/health, POST /v1/plan/inference (one body repeated, which the response cache answers, then distinct
# bodies, each computed: bench/load/distinct.lua) and, when this build routes it, POST /v1/fit with 1,000 candidates,
# DURATION seconds each (default 30), sampling the daemon's RSS every second across the whole run. Prints
# requests/s, p50 and p99 latency, errors, the plan/health throughput ratio and RSS first/peak/last, as a
# Markdown table for bench/RESULTS.md. Usage: bench/load/run.sh [DURATION] (make bench-load).
set -eu
cd "$(dirname "$0")/../.."
DURATION=${1:-${DURATION:-30}}
CONNS=${CONNS:-16}
WRK_THREADS=${WRK_THREADS:-2}
SERVER_THREADS=${SERVER_THREADS:-2}
BIN=${MEMPLAN_BIN:-build/memplan}
command -v wrk >/dev/null || { echo "bench-load: wrk is not installed (apt-get install wrk)"; exit 1; }

tmp=$(mktemp -d /tmp/memplan-load-XXXXXX)
trap 'kill "$pid" 2>/dev/null || true; kill "$sampler" 2>/dev/null || true; rm -rf "$tmp"' EXIT INT TERM
"$BIN" serve --listen 127.0.0.1:0 --db "$tmp/memplan.db" --threads "$SERVER_THREADS" --log-level warn \
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
	awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null; sleep 1; done >"$tmp/rss" ) &
sampler=$!

printf '%s' '{"model":"llama-3-8b","weight_dtype":"bf16","kv_cache_dtype":"bf16","batch_size":1,"sequence_length":4096,"device":"h200-sxm-141gb"}' \
	>"$tmp/plan.json"
curl -sf -o /dev/null -H 'Content-Type: application/json' --data-binary @"$tmp/plan.json" "$url/v1/plan/inference" ||
	{ echo "bench-load: the plan request fails"; exit 1; }

cache_counts() { # "hits misses" of the response cache, from /metrics
	curl -sf "$url/metrics" | awk '/^memplan_response_cache_hits_total / {h=$2} /^memplan_response_cache_misses_total / {m=$2}
		END {print (h == "" ? 0 : h), (m == "" ? 0 : m)}'
}
run() { # name path [body file | script.lua]
	: >"$tmp/$1.lua"
	case "${3:-}" in
	"") ;;
	*.lua) cat "$3" >"$tmp/$1.lua" ;;
	*) { printf 'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = [==['
	     cat "$3"; printf ']==]\n'; } >"$tmp/$1.lua" ;;
	esac
	cat bench/load/report.lua >>"$tmp/$1.lua"
	set -- "$1" "$2" "$(cache_counts)"
	wc -l <"$tmp/rss" >"$tmp/$1.rss0"
	LOG_FIRST=1 wrk -t"$WRK_THREADS" -c"$CONNS" -d"${DURATION}s" -s "$tmp/$1.lua" "$url$2" | tail -1 >"$tmp/$1.json"
	echo "$3 $(cache_counts)" >"$tmp/$1.cache"
	wc -l <"$tmp/rss" >"$tmp/$1.rss1"
	echo "  $1: $(cat "$tmp/$1.json")" >&2
}
echo "bench-load: $DURATION s per endpoint, $CONNS keep-alive connections, wrk $WRK_THREADS threads," \
	"daemon $SERVER_THREADS threads, $(nproc) CPUs" >&2
run health /v1/health
run plan /v1/plan/inference "$tmp/plan.json"
run plan_distinct /v1/plan/inference bench/load/distinct.lua
if "$BIN" routes | grep -q '^POST /v1/fit$'; then
	if [ -x bench/load/fit_body.sh ]; then
		bench/load/fit_body.sh 1000 >"$tmp/fit.json"
		run fit /v1/fit "$tmp/fit.json"
	else
		echo "bench-load: POST /v1/fit is routed but bench/load/fit_body.sh (1,000 candidates) is missing: skipped" >&2
	fi
else
	echo "bench-load: POST /v1/fit is not in this build: skipped" >&2
fi
kill "$sampler" 2>/dev/null || true
kill -TERM "$pid"
wait "$pid" || { echo "bench-load: the daemon exited with an error"; exit 1; }

python3 - "$tmp" "$DURATION" "$CONNS" <<'PY'
import json, os, sys
tmp, duration, conns = sys.argv[1], sys.argv[2], sys.argv[3]
rows = {}
cache = {}
for name in ("health", "plan", "plan_distinct", "fit"):
    p = os.path.join(tmp, name + ".json")
    if os.path.exists(p):
        rows[name] = json.load(open(p))
        h0, m0, h1, m1 = (float(x) for x in open(os.path.join(tmp, name + ".cache")).read().split())
        cache[name] = (h1 - h0, m1 - m0)
rss = [int(x) for x in open(os.path.join(tmp, "rss")).read().split()]
paths = {"health": "GET /v1/health", "plan": "POST /v1/plan/inference, one body",
         "plan_distinct": "POST /v1/plan/inference, distinct bodies",
         "fit": "POST /v1/fit (1,000 candidates), one body"}
print("| endpoint | requests/s | p50 | p99 | requests | errors (connect/read/write/timeout/non-2xx) "
      "| response cache hits/misses |")
print("|---|---:|---:|---:|---:|---|---|")
for name, r in rows.items():
    hits, misses = cache[name]
    print("| %s | %.0f | %.3f ms | %.3f ms | %d | %d/%d/%d/%d/%d | %s |" % (
        paths[name], r["requests_per_second"], r["p50_seconds"] * 1e3, r["p99_seconds"] * 1e3, r["requests"],
        r["errors_connect"], r["errors_read"], r["errors_write"], r["errors_timeout"], r["non_2xx"],
        "%d/%d" % (hits, misses) if hits or misses else "-"))
health = rows["health"]["requests_per_second"]
print()
print("plan/health throughput ratio: %.2f with one body repeated (answered from the response cache), "
      "%.2f with distinct bodies (each computed; target >= 0.80)" % (
          rows["plan"]["requests_per_second"] / health, rows["plan_distinct"]["requests_per_second"] / health))
print("RSS over %d s (MiB): first %.1f, peak %.1f, last %.1f (%d samples)" % (
    len(rss), rss[0] / 1024, max(rss) / 1024, rss[-1] / 1024, len(rss)))
for name in rows:
    a = int(open(os.path.join(tmp, name + ".rss0")).read())
    b = min(int(open(os.path.join(tmp, name + ".rss1")).read()), len(rss))
    part = rss[a:b] or rss[-1:]
    print("  %-14s RSS (MiB) at its start %.1f, halfway %.1f, end %.1f, peak %.1f" % (
        name, part[0] / 1024, part[len(part) // 2] / 1024, part[-1] / 1024, max(part) / 1024))
errors = sum(r["errors_connect"] + r["errors_read"] + r["errors_write"] + r["errors_timeout"] + r["non_2xx"]
             for r in rows.values())
print("errors: %d" % errors)
PY
