#!/bin/sh
# test_stages.sh: make test's summary line (scripts/test-stages), with stand-in stages: one that passes (a test in
# it that skips is not the stage skipping), one a script skips (tests/slurm/real.sh's line without root), one with pytest's skipped tests beside passed ones, one
# whose tests all skip, one that fails. Every stage runs after the failure, the last line names each with its state,
# and the exit status is 1; with no failure, "all N stages passed" and 0.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
out=$("$here/scripts/test-stages" "pass=echo 'test_make_run: skipped: a test inside the stage, not the stage'" \
	"slurm-real=echo 'slurm-real: SKIPPED: not root (not root and not CI; run it as root)'" \
	"some=printf 'SKIPPED [2] tests/x.py:45: Chromium is not installed\n=== 3 passed, 2 skipped in 1.0s ===\n'" \
	"all=printf 'SKIPPED [15] tests/browser/conftest.py:45: no Chromium\n=== 15 skipped in 0.3s ===\n'" \
	"fail=echo broken; exit 3" "after=true" 2>&1)
rc=$?
# the seconds vary with the machine's load: compared as "N s"
last=$(printf '%s\n' "$out" | tail -n 1 | sed 's/([0-9]* s)/(N s)/g')
want="make test: pass ok (N s), slurm-real skipped: not root (not root and not CI; run it as root) (N s), some ok, 2 skipped (Chromium is not installed) (N s), all skipped: no Chromium (N s), fail FAILED (exit 3) (N s), after ok (N s); 1 of 6 stages FAILED"
case "$last" in
"$want"*) ;;
*)
	printf 'test_stages: FAILED: the summary line is\n  %s\nnot\n  %s ...\n' "$last" "$want" >&2
	exit 1
	;;
esac
if [ "$rc" != 1 ]; then
	echo "test_stages: FAILED: a failed stage must make the exit status 1, not $rc" >&2
	exit 1
fi
out=$("$here/scripts/test-stages" "a=true" "b=echo fine" 2>&1)
rc=$?
last=$(printf '%s\n' "$out" | tail -n 1 | sed 's/([0-9]* s)/(N s)/g')
case "$last" in
"make test: a ok (N s), b ok (N s); all 2 stages passed in "*) ;;
*)
	echo "test_stages: FAILED: the summary line of passing stages is: $last" >&2
	exit 1
	;;
esac
[ "$rc" = 0 ] || { echo "test_stages: FAILED: passing stages exited $rc" >&2; exit 1; }
echo "test_stages: ok ($last)"
