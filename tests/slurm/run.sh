#!/bin/sh
# run.sh: the Slurm scripts' test (tests/slurm/test_slurm.lua) against a real daemon: starts build/memplan on a free
# loopback port with a fresh database, exports the fit table of tests/slurm/jobs.json (POST /v1/slurm/fit-table),
# writes a site file naming both, runs the Lua test under lua5.4, stops the daemon. Run from the repository root:
#   sh tests/slurm/run.sh [MEMPLAN_BIN]
set -u
BIN=${1:-build/memplan}
command -v lua5.4 >/dev/null 2>&1 || { echo "tests/slurm: lua5.4 is missing (scripts/install-deps test)"; exit 1; }
lua5.4 -e 'require "cjson"' 2>/dev/null || { echo "tests/slurm: lua-cjson is missing (scripts/install-deps test)"; exit 1; }
command -v curl >/dev/null 2>&1 || { echo "tests/slurm: curl is missing"; exit 1; }
DIR=$(mktemp -d /tmp/memplan-slurm-XXXXXX) || exit 1
PID=""
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$DIR"; }
trap cleanup EXIT INT TERM
"$BIN" serve --listen 127.0.0.1:0 --db "$DIR/memplan.db" --log-level info >"$DIR/log" 2>&1 &
PID=$!
PORT=""
for _ in $(seq 1 100); do
	PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$DIR/log" | head -1)
	[ -n "$PORT" ] && break
	sleep 0.1
done
[ -n "$PORT" ] || { echo "tests/slurm: the daemon did not start:"; cat "$DIR/log"; exit 1; }
URL="http://127.0.0.1:$PORT"
code=$(curl -s -o "$DIR/memplan_fit.lua" -w '%{http_code}' -H 'Content-Type: application/json' \
	--data-binary @tests/slurm/jobs.json "$URL/v1/slurm/fit-table")
[ "$code" = 200 ] || { echo "tests/slurm: fit-table answered $code:"; cat "$DIR/memplan_fit.lua"; exit 1; }
sed -e "s|http://memplan.example.org:8080|$URL|" -e "s|/etc/slurm/memplan_fit.lua\"|$DIR/memplan_fit.lua\"|" \
	deploy/slurm/memplan_site.lua >"$DIR/memplan_site.lua"
grep -q "$DIR/memplan_fit.lua" "$DIR/memplan_site.lua" || { echo "tests/slurm: site file not rewritten"; exit 1; }
lua5.4 tests/slurm/test_slurm.lua "$DIR/memplan_site.lua" "$DIR/memplan_fit.lua" "$URL"
