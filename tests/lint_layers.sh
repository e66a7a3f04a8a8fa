#!/bin/sh
# lint_layers.sh: the house's one direction. Every quoted #include of a source folder must point at its own folder
# or at one below it, in this order (lowest first):
#   core, planner, {model, db, kernels}, service, codec, {daemon}, cli
# and the libraries stay in their rooms: <microhttpd.h> only in daemon/, <sqlite3.h> only in db/, CUDA only in
# kernels/, <cjson/...> never in core/, planner/, db/, kernels/ or service/. Prints each offence; exits 1 on any.
set -u
cd "$(dirname "$0")/.."
level() {
	case "$1" in
	core) echo 0 ;; planner) echo 1 ;; model | db | kernels) echo 2 ;; service) echo 3 ;; codec) echo 4 ;;
	daemon) echo 5 ;; cli) echo 6 ;; *) echo 99 ;;
	esac
}
bad=0
for dir in core planner model db kernels service codec daemon cli; do
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
		core | planner | db | kernels | service)
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
