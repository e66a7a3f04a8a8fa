#!/bin/sh
# test_make_run.sh: `make run` on a machine without a GPU answers before nvcc has built the GPU helper (issue 28:
# 118.6 s to the first answer, 51 s of it nvcc). The helper is made to look out of date (make -W, which touches
# nothing) and nvcc is a stand-in that takes 60 s (tests/data/slow-nvcc.sh: it answers --list-gpu-code, then sleeps
# and fails, writing nothing); GPU_PRESENT is empty, as on a machine where nvidia-smi finds no GPU. The daemon must
# answer /v1/health within 20 s of the start, while the stand-in still runs, and that build goes on in the
# background. Everything the test started is stopped by its process group id.
#   sh tests/test_make_run.sh BUILD_DIR
set -u
build=${1:-build}
if ! command -v curl >/dev/null 2>&1; then
	echo "test_make_run: skipped: curl is not installed"
	exit 0
fi
if [ ! -x "$build/memplan" ]; then
	echo "test_make_run: FAILED: $build/memplan is not built" >&2
	exit 1
fi
if ! grep -q 'mp_calib_cuda_build = 1' "$build/gen/cuda_mode.c" 2>/dev/null; then
	echo "test_make_run: skipped: this build has no GPU helper (no nvcc: CUDA=0), so make run has nothing to wait on"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/memplan-make-run.XXXXXX")
pgid=""
stop_group() {
	[ -n "$pgid" ] && kill -TERM "-$pgid" 2>/dev/null
	sleep 1
	[ -n "$pgid" ] && kill -KILL "-$pgid" 2>/dev/null
	pgid=""
}
cleanup() {
	stop_group
	rm -rf "$tmp"
}
trap cleanup EXIT
# a port the kernel had free a moment ago (another program may take it before the daemon binds: then another try)
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
ok=0
for attempt in 1 2 3; do
	port=$(free_port)
	rm -f "$tmp/pgid"
	start=$(date +%s)
	# its own session and process group (setsid, which may fork: the group's leader writes its own id), so that
	# make, the daemon and the background build are stopped together
	setsid sh -c 'echo $$ > "$1"; shift; exec "$@"' sh "$tmp/pgid" env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS \
		make --no-print-directory -W kernels/calib_gpu.cu run BUILD="$build" NVCC="$(pwd)/tests/data/slow-nvcc.sh" \
		GPU_PRESENT= LISTEN="127.0.0.1:$port" DB="$tmp/m.db" > "$tmp/run.log" 2>&1 &
	for i in $(seq 1 20); do
		[ -s "$tmp/pgid" ] && break
		sleep 0.1
	done
	pgid=$(cat "$tmp/pgid" 2>/dev/null)
	for i in $(seq 1 40); do
		if curl -sf "http://127.0.0.1:$port/v1/health" > "$tmp/health.json" 2>/dev/null; then
			ok=1
			break
		fi
		grep -q "cannot listen" "$tmp/run.log" && break
		sleep 0.5
	done
	[ "$ok" = 1 ] && break
	grep -q "cannot listen" "$tmp/run.log" || break
	echo "test_make_run: port $port was taken before the daemon bound it; another try"
	stop_group
done
secs=$(( $(date +%s) - start ))
if [ "$ok" != 1 ]; then
	echo "test_make_run: FAILED: no answer from make run's daemon within 20 s (it waits on nvcc?):" >&2
	cat "$tmp/run.log" >&2
	exit 1
fi
if ! grep -q "builds in the background" "$tmp/run.log"; then
	echo "test_make_run: FAILED: make run did not say the helper builds in the background:" >&2
	cat "$tmp/run.log" >&2
	exit 1
fi
if ! pgrep -g "$pgid" -f slow-nvcc.sh >/dev/null; then
	echo "test_make_run: FAILED: the helper's build is not running in the background:" >&2
	cat "$tmp/run.log" "$build/memplan-gpu.log" >&2
	exit 1
fi
echo "test_make_run: ok (the daemon answered after $secs s while nvcc still built the helper in the background)"
