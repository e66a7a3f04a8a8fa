#!/bin/sh
# lint_links.sh BUILD BIN...: each program of codec/'s stack (codec, types, model, planner, core) links without the
# store, the kernels or the service: no shared library of SQLite, OpenBLAS, CUDA or libmicrohttpd among those it
# needs (ldd), and none of the functions libservice.a, libdb.a or libkernels.a define (nm). make check runs it on
# the codec tests and benchmarks; exits 1 naming each offence.
set -u
build=$1
shift
tmp=${TMPDIR:-/tmp}/lint_links.$$
for lib in service db kernels; do
	nm --defined-only -g "$build/lib$lib.a" 2>/dev/null | awk 'NF == 3 && $2 ~ /[TDBR]/ { print $3 }'
done | sort -u >"$tmp.upper"
[ -s "$tmp.upper" ] || { echo "lint_links: no symbols read from $build/lib{service,db,kernels}.a"; rm -f "$tmp".*; exit 1; }
bad=0
for bin in "$@"; do
	[ -x "$bin" ] || { echo "lint_links: $bin is not built"; bad=1; continue; }
	libs=$(ldd "$bin" 2>/dev/null | grep -E 'libsqlite3|libopenblas|libblas|libcuda|libcublas|libmicrohttpd' | awk '{ print $1 }')
	if [ -n "$libs" ]; then
		echo "lint_links: $bin needs $(echo $libs)"
		bad=1
	fi
	nm --defined-only -g "$bin" | awk 'NF == 3 { print $3 }' | sort -u >"$tmp.bin"
	used=$(comm -12 "$tmp.upper" "$tmp.bin" | head -5)
	if [ -n "$used" ]; then
		echo "lint_links: $bin holds the service's, the store's or the kernels' $(echo $used)"
		bad=1
	fi
	[ $bad = 0 ] && echo "lint_links: $bin: $(ldd "$bin" | awk '{ print $1 }' | grep -v 'linux-vdso' | tr '\n' ' ')"
done
rm -f "$tmp".*
[ $bad = 0 ] && echo "lint_links: ok (codec/'s programs link without the store, the kernels and the service)"
exit $bad
