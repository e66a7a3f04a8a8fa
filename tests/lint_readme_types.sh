#!/bin/sh
# lint_readme_types.sh: README.md's model type table is `memplan types --markdown`, the one table of
# model/mpm_types.c. Run with the built binary: sh tests/lint_readme_types.sh build/memplan. Prints the difference
# and the command that rewrites it; exits 1 when they differ.
set -u
cd "$(dirname "$0")/.."
bin=${1:-build/memplan}
want=$(mktemp)
have=$(mktemp)
trap 'rm -f "$want" "$have"' EXIT
"$bin" types --markdown >"$want" || exit 1
sed -n "/^<!-- types: made by 'memplan types --markdown' -->\$/,/^<!-- \/types -->\$/p" README.md | sed '1d;$d' >"$have"
if ! diff -u "$have" "$want"; then
	echo "lint_readme_types: README.md's model type table differs from 'memplan types --markdown' (model/mpm_types.c);"
	echo "  rewrite the block between the <!-- types --> markers with that command's output"
	exit 1
fi
echo "lint_readme_types: ok (README.md lists the $(grep -c '^| `' "$want") types of model/mpm_types.c)"
