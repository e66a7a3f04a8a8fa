#!/bin/sh
# run.sh NAME SECONDS FUZZ_BUILD: runs build/fuzz/fuzz_NAME for SECONDS. New inputs go to
# FUZZ_BUILD/corpus-NAME; the committed seeds (fuzz/corpus/NAME) and crash reproducers kept as regression
# tests (fuzz/regress/NAME) are read-only inputs, all replayed first. Exits 1 when a crash was found.
set -eu
name=$1 secs=$2 build=$3
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$build/corpus-$name" "$build/artifacts"
log="$build/fuzz_$name.log"
rc=0
"$build/fuzz_$name" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$build/artifacts/$name-" \
	"$build/corpus-$name" "$root/fuzz/corpus/$name" "$root/fuzz/regress/$name" >"$log" 2>&1 || rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log")
if [ "$rc" -ne 0 ] || ls "$build/artifacts" | grep -q "^$name-"; then
	tail -60 "$log"
	echo "fuzz_$name: FAILED after ${execs:-?} runs: reproducer in $build/artifacts (copy it to fuzz/regress/$name/)"
	exit 1
fi
echo "fuzz_$name: ${execs:-?} runs in ${secs} s, no crash (peak RSS ${rss:-?} MB, corpus $(ls "$build/corpus-$name" | wc -l) new)"
