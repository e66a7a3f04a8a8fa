#!/bin/sh
# startup.sh: start-up cost of memplan in the CUDA build and the CUDA=0 build, side by side. Builds both (build/
# with nvcc when it is on PATH, build/cuda0 with CUDA=0), then runs build/bench/startup on each: CPU time of
# `memplan --version` and of `memplan plan inference`, and the daemon's resident memory idle, after a health
# probe and after a plan. Figures go to bench/RESULTS.md with the date and this command:
#   make bench-startup [RUNS=20]       (or bench/startup.sh [RUNS])
set -eu
cd "$(dirname "$0")/.."
RUNS=${1:-20}
JOBS=${JOBS:-2}
make --no-print-directory -j"$JOBS" all build/bench/startup >/dev/null
make --no-print-directory -j"$JOBS" BUILD=build/cuda0 CUDA=0 all >/dev/null
echo "== $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) CPUs ($(uname -m)), $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
if [ -x build/memplan-gpu ]; then
	echo "== CUDA build (build/memplan; its GPU helper build/memplan-gpu is not loaded by these commands)"
else
	echo "== default build (no nvcc on PATH: this is a CUDA=0 build too)"
fi
build/bench/startup build/memplan "$RUNS"
echo "== CUDA=0 build (build/cuda0/memplan)"
build/bench/startup build/cuda0/memplan "$RUNS"
if [ -x build/memplan-gpu ]; then
	echo "== for scale: the GPU helper's own start (build/memplan-gpu --version: CUDA runtime and cuBLASLt loaded)"
	/usr/bin/env time -f "memplan-gpu --version   CPU %U s user + %S s system; peak RSS %M KiB" build/memplan-gpu --version \
		>/dev/null 2>/tmp/memplan-startup-helper.$$ && cat /tmp/memplan-startup-helper.$$ || echo "(GNU time is not installed)"
	rm -f /tmp/memplan-startup-helper.$$
fi
