#!/bin/sh
# run.sh: the Slurm scripts' test (tests/slurm/test_slurm.lua) against a real daemon, under every Lua that Slurm's
# Lua plugins can be built with (Slurm's configure takes 5.1 to 5.4; Debian 12's slurm-wlm 22.05 uses 5.1): starts
# build/memplan on a free loopback port with a fresh database, and for each of lua5.1 to lua5.4 installs
# deploy/slurm's four files in a temporary folder as deploy/slurm/README.md tells an admin (beside slurm.conf),
# exports the fit table of tests/slurm/jobs.json there (POST /v1/slurm/fit-table, curl -f), points the site file at
# it and at the daemon, and runs the Lua test; then stops the daemon. The running Slurm's test is real.sh. Run from
# the repository root:
#   sh tests/slurm/run.sh [MEMPLAN_BIN]
set -u
BIN=${1:-build/memplan}
LUAS="lua5.1 lua5.2 lua5.3 lua5.4"
for lua in $LUAS; do
	command -v $lua >/dev/null 2>&1 || { echo "tests/slurm: $lua is missing (scripts/install-deps test)"; exit 1; }
	$lua -e 'require "cjson"' 2>/dev/null || { echo "tests/slurm: lua-cjson is missing for $lua (scripts/install-deps test)"; exit 1; }
done
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
rc=0
for lua in $LUAS; do
	# a folder of its own for each run: the test rewrites the site file and the table
	ETC="$DIR/etc-$lua"
	mkdir -p "$ETC"
	cp deploy/slurm/cli_filter.lua deploy/slurm/job_submit.lua deploy/slurm/memplan_common.lua \
		deploy/slurm/memplan_site.conf "$ETC/"
	curl -sf -H 'Content-Type: application/json' --data-binary @tests/slurm/jobs.json -o "$ETC/memplan_fit.txt.new" \
		"$URL/v1/slurm/fit-table" && mv "$ETC/memplan_fit.txt.new" "$ETC/memplan_fit.txt" ||
		{ echo "tests/slurm: the fit-table export failed"; exit 1; }
	sed -i -e "s|^url = http://memplan.example.org:8080\$|url = $URL|" \
		-e "s|^fit_table = /etc/slurm/memplan_fit.txt\$|fit_table = $ETC/memplan_fit.txt|" "$ETC/memplan_site.conf"
	grep -q "^fit_table = $ETC/memplan_fit.txt\$" "$ETC/memplan_site.conf" && grep -q "^url = $URL\$" "$ETC/memplan_site.conf" ||
		{ echo "tests/slurm: site file not rewritten"; exit 1; }
	echo "-- under $($lua -v 2>&1 | head -1)"
	$lua tests/slurm/test_slurm.lua "$ETC" "$URL" || rc=1
done
exit $rc
