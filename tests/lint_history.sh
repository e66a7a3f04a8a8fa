#!/bin/sh
# lint_history.sh: comments carry knowledge, not history. Refuses, in the files tests/lint_history.scope lists, a
# line that gives the project's own history as the provenance of code: "appended for issue N", "issue 19 reported",
# "(issue-15)", "this session", "the second review". That is what git log and the commit messages are for; a
# comment says what the code does and why, with its source (a paper, a datasheet, another program's file or bug
# report by its URL, which this does not refuse: ".../issues/123"). Prints each offence; exits 1 on any.
# The scope is a list that grows as files are cleaned: one path or shell glob a line, from the repository's root.
set -u
cd "$(dirname "$0")/.."
pattern='appended for|added for issue|for issue[[:space:]]|(^|[^[:alnum:]_/#-])issues?[[:space:]-]+#?[0-9]+|(this|last|previous|first|second|third) (session|review)'
# the pattern refuses history and lets knowledge through (checked on every run, so the lint cannot go blind)
for bad in "/* appended for issue 12 */" "x; /* issue 19 reported /sequence_length */" "# the issue-15 mechanisms" \
	"/* found in the second review */" "/* (issues 14 and 15) */"; do
	printf '%s\n' "$bad" | grep -q -i -E "$pattern" || { echo "lint_history: the pattern misses: $bad"; exit 2; }
done
for good in "/* vLLM https://github.com/vllm-project/vllm/issues/1234: the cache is rounded */" \
	"/* an issue of the allocator: blocks of 512 B */"; do
	printf '%s\n' "$good" | grep -q -i -E "$pattern" && { echo "lint_history: the pattern refuses: $good"; exit 2; }
done
files=""
while IFS= read -r line; do
	line=${line%%#*}
	for f in $line; do
		[ -f "$f" ] || { echo "lint_history: tests/lint_history.scope names $f, which is not a file"; exit 2; }
		files="$files $f"
	done
done <tests/lint_history.scope
[ -n "$files" ] || { echo "lint_history: tests/lint_history.scope lists no file"; exit 2; }
# shellcheck disable=SC2086
if grep -n -i -E "$pattern" $files; then
	echo "lint_history: the lines above give the project's history as a comment; say what the code knows instead"
	exit 1
fi
echo "lint_history: ok ($(echo $files | wc -w) files carry no history in their comments)"
