#!/bin/sh
# lint_layers.sh: the house's one direction. Every quoted #include of a source folder must point at its own folder
# or at one below it, by the levels of LEVELS (lowest first; folders of one level may not include each other):
#   core < planner < {model, db, hub, kernels} < types < {service, codec} < daemon < cli
# and the libraries stay in their rooms: <microhttpd.h> only in daemon/, <sqlite3.h> only in db/, CUDA only in
# kernels/, <cjson/...> never in core/, planner/, db/, kernels/, types/ or service/. The store's functions
# (db/store.h) are reached from service/ alone: codec/, daemon/ and cli/ see its rows (db/rows.h) through types/;
# service/service_int.h is the service's own. Prints each offence; exits 1 on any.
set -u
cd "$(dirname "$0")/.."
# The levels: one line to change when a folder is added.
LEVELS="core:0 planner:1 model:2 db:2 hub:2 kernels:2 types:3 service:4 codec:4 daemon:5 cli:6"
level() {
	for pair in $LEVELS; do
		[ "${pair%%:*}" = "$1" ] && { echo "${pair##*:}"; return; }
	done
	echo 99
}
bad=0
for dir in $(for pair in $LEVELS; do printf '%s ' "${pair%%:*}"; done); do
	lv=$(level "$dir")
	for f in "$dir"/*.c "$dir"/*.h "$dir"/*.cu; do
		[ -f "$f" ] || continue
		# quoted includes: "x.h" (same folder) or "../other/x.h"
		grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | while IFS= read -r line; do
			inc=$(printf '%s\n' "$line" | sed 's/.*include[[:space:]]*"\([^"]*\)".*/\1/')
			case "$inc" in
			../*/*) target=$(printf '%s\n' "$inc" | cut -d/ -f2) ;;
			*/*) target=$(printf '%s\n' "$inc" | cut -d/ -f1) ;;
			*) target=$dir ;;
			esac
			tl=$(level "$target")
			if [ "$target" != "$dir" ] && { [ "$tl" -ge "$lv" ]; }; then
				echo "lint_layers: $f:${line%%:*}: $dir/ (level $lv) includes $inc ($target/, level $tl): the house's direction is down only"
				echo x >>"${TMPDIR:-/tmp}/lint_layers.$$"
			fi
			case "$dir:$inc" in
			codec:*db/store.h | daemon:*db/store.h | cli:*db/store.h)
				echo "lint_layers: $f:${line%%:*}: $dir/ includes $inc: the store is reached through service/ only"
				echo x >>"${TMPDIR:-/tmp}/lint_layers.$$"
				;;
			service:*) ;;
			*service_int.h)
				echo "lint_layers: $f:${line%%:*}: $dir/ includes $inc, the service's own helpers"
				echo x >>"${TMPDIR:-/tmp}/lint_layers.$$"
				;;
			esac
		done
		for pair in "microhttpd.h:daemon" "sqlite3.h:db" "cuda_runtime.h:kernels" "cublasLt.h:kernels"; do
			hdr=${pair%%:*}
			room=${pair##*:}
			if [ "$dir" != "$room" ] && grep -q "#[[:space:]]*include[[:space:]]*<$hdr>" "$f"; then
				echo "lint_layers: $f: includes <$hdr>, which only $room/ may"
				echo x >>"${TMPDIR:-/tmp}/lint_layers.$$"
			fi
		done
		case "$dir" in
		core | planner | db | kernels | types | service)
			if grep -q '#[[:space:]]*include[[:space:]]*<cjson/' "$f"; then
				echo "lint_layers: $f: includes cJSON, which $dir/ may not (JSON lives in model/, codec/ and above)"
				echo x >>"${TMPDIR:-/tmp}/lint_layers.$$"
			fi
			;;
		esac
	done
done
if [ -f "${TMPDIR:-/tmp}/lint_layers.$$" ]; then
	rm -f "${TMPDIR:-/tmp}/lint_layers.$$"
	exit 1
fi
echo "lint_layers: ok (every include points down)"
