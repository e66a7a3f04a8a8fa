#!/bin/sh
# run.sh: what the answers for people cost, through HTTP against a fresh daemon: the roofline SVG (the README's
# three operations, and a crowded chart of 28 products plus a MoE model's steps, whose labels the placer keeps
# apart), and a plan as JSON (response-cache miss and hit), indented (?pretty, a hit reprinted) and as text
# (?format=text, computed each time). Prints the median wall time of N requests (curl's time_total, one at a
# time: latency, not throughput) and the SVG's size. Usage: bench/people/run.sh [N]  (MEMPLAN_BIN, default
# build/memplan). Figures in bench/RESULTS.md.
set -eu
N=${1:-31}
BIN=${MEMPLAN_BIN:-build/memplan}
DIR=$(mktemp -d)
PORT=$((20000 + $$ % 20000))
"$BIN" serve --listen "127.0.0.1:$PORT" --db "$DIR/m.db" --log-level warn >"$DIR/log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$DIR"' EXIT
B="http://127.0.0.1:$PORT"
i=0
until curl -s -o /dev/null "$B/v1/health"; do i=$((i + 1)); [ $i -lt 100 ] || exit 1; sleep 0.1; done

median() { sort -n | awk '{a[NR] = $1} END {printf "%.3f ms", a[int((NR + 1) / 2)] * 1e3}'; }
get() { for i in $(seq "$N"); do curl -s -o /dev/null -w '%{time_total}\n' "$1"; done | median; }
post() { # $1 path, $2 body with @I@ replaced by the request's number (distinct bodies: cache misses)
	for i in $(seq "$N"); do
		curl -s -o /dev/null -w '%{time_total}\n' "$B$1" -H 'Content-Type: application/json' \
			-d "$(printf '%s' "$2" | sed "s/@I@/$i/")"
	done | median
}

OPS=""
for m in 1 2 4 8 16 32 64 128 256 512 1024 2048 4096 8192; do
	for d in bf16 fp8_e4m3; do OPS="$OPS&op=matmul:m=$m,k=4096,n=4096,dtype=$d"; done
done
CROWD="$B/v1/devices/h100-sxm5-80gb/roofline.svg?model=mixtral-8x7b&batch_size=64&context_tokens=8192$OPS"
README="$B/v1/devices/h100-sxm5-80gb/roofline.svg?op=matmul:m=1,k=4096,n=4096,dtype=bf16,label=gemv&op=matmul:m=256,k=256,n=256,dtype=bf16&op=matmul:m=8192,k=8192,n=8192,dtype=bf16"
PLAN='{"model":"llama-3-8b","weight_dtype":"bf16","kv_cache_dtype":"bf16","batch_size":@I@,"sequence_length":4096,"device":"h200-sxm-141gb"}'
ONE='{"model":"llama-3-8b","weight_dtype":"bf16","kv_cache_dtype":"bf16","batch_size":1,"sequence_length":4096,"device":"h200-sxm-141gb"}'

echo "requests per figure: $N (median wall time, curl time_total)"
echo "svg, README chart (3 ops):            $(get "$README")  $(curl -s "$README" | wc -c) bytes"
echo "svg, crowded (28 ops + 2 x 12 steps): $(get "$CROWD")  $(curl -s "$CROWD" | wc -c) bytes"
echo "plan JSON, cache miss:                $(post /v1/plan/inference "$PLAN")"
echo "plan JSON, cache hit:                 $(post /v1/plan/inference "$ONE")"
echo "plan JSON ?pretty=true, cache hit:    $(post '/v1/plan/inference?pretty=true' "$ONE")"
echo "plan ?format=text (computed):         $(post '/v1/plan/inference?format=text' "$PLAN")"
