#!/bin/sh
# bench/load/fit_rss.sh: peak memory of the daemon for the largest fit it takes: 4,000 jobs (every fifth a training
# job) x 25 devices (the 24 presets and an inline profile) x 16 GPU counts = 1.6 million rows, about 70 MB of answer.
# Starts the daemon on a fresh database (response cache on, as deployed), reads VmRSS when idle, sends the fit once
# alone, then CONCURRENT (default 8) at once with --max-heavy-requests CONCURRENT so that all of them compute
# together, and prints VmHWM - idle for each, with the wall time and the answers' status codes.
# Usage: bench/load/fit_rss.sh [CONCURRENT] (make bench-fit-memory). Figures go to bench/RESULTS.md.
set -eu
cd "$(dirname "$0")/../.."
CONCURRENT=${1:-8}
BIN=${MEMPLAN_BIN:-build/memplan}
tmp=$(mktemp -d /tmp/memplan-fitrss-XXXXXX)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT INT TERM

python3 - "$tmp/fit.json" <<'PY'
import json, sys
ids = [d["id"] for d in json.load(open("db/presets/devices.json"))]
devices = ids + [{"name": "inline", "memory_bytes": 85899345920, "memory_bandwidth_bytes_per_second": 2e12,
                  "peak_flops_per_second": {"bf16": 5e14}}]
models = ["llama-3-8b", "llama-3.1-70b", "qwen2.5-7b", "mixtral-8x7b", "gemma-7b", "qwen2.5-72b-instruct",
          "mistral-7b-v0.1", "phi-3-mini-4k"]
jobs = []
for i in range(4000):
    m = models[i % 8]
    if i % 5 == 4:
        jobs.append({"id": "t%d" % i, "training": {"model": m, "precision": "mixed_bf16", "optimizer": "adamw",
                     "micro_batch_size": 1 + i % 4, "sequence_length": 1024 << (i % 3)}})
    else:
        jobs.append({"id": "i%d" % i, "inference": {"model": m, "weight_dtype": "bf16", "kv_cache_dtype": "bf16",
                     "batch_size": 1 << (i % 7), "sequence_length": 1024 << (i % 3)}})
body = {"jobs": jobs, "devices": devices, "gpu_counts": [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 24, 32, 48, 64, 128]}
open(sys.argv[1], "w").write(json.dumps(body, separators=(",", ":")))
PY

start() { # extra serve flags
	"$BIN" serve --listen 127.0.0.1:0 --db "$tmp/memplan.db" --threads 2 --log-level warn "$@" 2>"$tmp/daemon.log" &
	pid=$!
	port=""
	for _ in $(seq 1 100); do
		port=$(ss -ltnpH 2>/dev/null | grep "pid=$pid," | sed -n 's/.*127\.0\.0\.1:\([0-9]*\) .*/\1/p' | head -1)
		[ -n "$port" ] && break
		sleep 0.05
	done
	[ -n "$port" ] || { echo "fit_rss: the daemon did not start"; cat "$tmp/daemon.log"; exit 1; }
	curl -sf -o /dev/null "http://127.0.0.1:$port/v1/health"
}
kib() { awk -v k="$1" '$1 == k":" {print $2}' "/proc/$pid/status"; }
post() { curl -s -o /dev/null -w '%{http_code} %{size_download}\n' -H 'Content-Type: application/json' \
	--data-binary @"$tmp/fit.json" "http://127.0.0.1:$port/v1/fit"; }

echo "fit_rss: body $(wc -c <"$tmp/fit.json") bytes, $(nproc) CPUs"
for n in 1 "$CONCURRENT"; do
	start --max-body-bytes 1048576 --max-heavy-requests "$n"
	idle=$(kib VmRSS)
	t0=$(date +%s.%N)
	i=0
	clients=""
	while [ "$i" -lt "$n" ]; do
		post >"$tmp/ans.$i" &
		clients="$clients $!"
		i=$((i + 1))
	done
	for c in $clients; do wait "$c" || true; done
	t1=$(date +%s.%N)
	sleep 0.2
	peak=$(kib VmHWM)
	last=$(kib VmRSS)
	codes=$(cat "$tmp"/ans.* | awk '{print $1}' | sort | uniq -c | tr -s ' ' | tr '\n' ',')
	printf '%d at once: idle %.1f MiB, peak %.1f MiB (%.1f MiB above idle), after %.1f MiB, %.2f s, answers %s %s bytes each\n' \
		"$n" "$(echo "$idle / 1024" | bc -l)" "$(echo "$peak / 1024" | bc -l)" "$(echo "($peak - $idle) / 1024" | bc -l)" \
		"$(echo "$last / 1024" | bc -l)" "$(echo "$t1 - $t0" | bc -l)" "$codes" "$(awk '{print $2}' "$tmp/ans.0")"
	kill -TERM "$pid"
	wait "$pid" || true
	rm -f "$tmp"/ans.* "$tmp"/memplan.db*
done
