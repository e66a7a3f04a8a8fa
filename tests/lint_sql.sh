#!/bin/sh
# lint_sql.sh: proves memplan builds no SQL from strings. Every SQL statement must be a prepared statement whose
# text is a string literal (or a const char[] / macro made only of literals); values are always bound. Checks:
#   1. no sqlite3_exec, sqlite3_mprintf/vmprintf/snprintf, sqlite3_prepare (v1/16) anywhere in the sources;
#   2. sqlite3_prepare_v2 / sqlite3_prepare_v3 appear only in db/store.c;
#   3. each prepare's SQL argument, each exec_script() argument and each stmt_get() argument (the store's
#      statement cache) is literals only (the exceptions are exec_script's and stmt_get's own parameter `sql`,
#      whose callers are checked by this same rule), or a name declared `static const char NAME[] =` from
#      literals, or `cond ? "literal" : "literal"`;
#   4. no printf-family call formats text that contains SQL keywords.
# Run with a file argument to lint only that file (the self-test below feeds it a bad one and expects failure).
set -u
cd "$(dirname "$0")/.." || exit 2

lint_file() { # $1: a C file whose SQL is checked; prints problems, returns 1 on any
	awk -v FILE="$1" '
	{ text = text $0 "\n" }
	END {
		bad = 0
		flat = text
		gsub(/\n/, " ", flat)
		# names of const char arrays and macros built only from literals
		n = split(text, lines, "\n")
		for (i = 1; i <= n; i++) {
			if (match(lines[i], /^#define [A-Z_0-9]+[ \t]/)) {
				name = lines[i]; sub(/^#define /, "", name); sub(/[ \t].*/, "", name)
				body = lines[i]; sub(/^#define [A-Z_0-9]+/, "", body); j = i
				while (body ~ /\\[ \t]*$/ && j < n) { sub(/\\[ \t]*$/, "", body); j++; body = body " " lines[j] }
				rest = body; gsub(/"([^"\\]|\\.)*"/, "", rest); gsub(/[ \t]/, "", rest)
				if (rest == "" && body ~ /"/) safe[name] = 1
			}
		}
		for (i = 1; i <= n; i++) {
			if (match(lines[i], /static const char [a-z_0-9]+\[\] =/)) {
				name = lines[i]; sub(/.*static const char /, "", name); sub(/\[\].*/, "", name)
				# the initialiser: this line after "=" and the following lines up to ";"
				init = lines[i]; sub(/[^=]*=/, "", init); j = i
				while (init !~ /;[ \t]*$/ && j < n) { j++; init = init " " lines[j] }
				rest = init; gsub(/"([^"\\]|\\.)*"/, " ", rest); gsub(/;/, " ", rest)
				m = split(rest, parts, /[ \t]+/); rest = ""
				for (x = 1; x <= m; x++) if (parts[x] != "" && !(parts[x] in safe)) rest = rest parts[x]
				if (rest == "") safe[name] = 1
				else { print FILE ": " name " is not built from literals only: " rest; bad = 1 }
			}
		}
		# every prepare and every exec_script call
		s = flat; consumed = 0
		def = index(flat, "static mp_status exec_script(sqlite3 *db, const char *sql, mp_error *err)")
		gdef = index(flat, "static sqlite3_stmt *stmt_get(mp_store *s, const char *sql)")
		np = split("sqlite3_prepare_v2(|sqlite3_prepare_v3(|stmt_get(|exec_script(", pats, "|")
		while (1) {
			best = 0; pat = ""
			for (x = 1; x <= np; x++) { p = index(s, pats[x]); if (p > 0 && (best == 0 || p < best)) { best = p; pat = pats[x] } }
			if (best == 0) break
			s = substr(s, best + length(pat)); consumed += best + length(pat) - 1
			kind = pat ~ /^sqlite3_prepare/ ? "prepare" : pat == "stmt_get(" ? "stmt_get" : "exec_script"
			c = index(s, ","); arg = substr(s, c + 1)
			# the argument runs to the next top-level comma outside string literals
			out = ""; inq = 0; depth = 0
			for (k = 1; k <= length(arg); k++) {
				ch = substr(arg, k, 1)
				if (inq) { out = out ch; if (ch == "\\") { k++; out = out substr(arg, k, 1) } else if (ch == "\"") inq = 0; continue }
				if (ch == "\"") { inq = 1; out = out ch; continue }
				if (ch == "(") depth++
				if (ch == ")") { if (depth == 0) break; depth-- }
				if (ch == "," && depth == 0) break
				out = out ch
			}
			a = out; gsub(/"([^"\\]|\\.)*"/, "\"L\"", a); gsub(/^[ \t]+|[ \t]+$/, "", a)
			rest = a; gsub(/"L"/, "", rest); gsub(/[ \t]/, "", rest)
			ok = 0
			if (rest == "") ok = 1                                   # literals only
			else if (rest in safe) ok = 1                            # const char[] of literals
			else if (kind == "prepare" && rest == "sql" && def > 0 && consumed > def && consumed - def < 700) ok = 1
			else if (kind == "prepare" && rest == "sql" && gdef > 0 && consumed > gdef && consumed - gdef < 1000) ok = 1
			else if (kind == "stmt_get" && rest == "constchar*sql" && gdef > 0 && consumed - gdef < 40) ok = 1
			else if (rest ~ /^[a-z_]+\?:$/ && a ~ /\? *"L" *: *"L"$/) ok = 1 # cond ? "lit" : "lit"
			else {
				# literals and macros made of literals
				t = a; gsub(/"L"/, " ", t); m = split(t, parts, /[ \t]+/); ok = 1
				for (x = 1; x <= m; x++) if (parts[x] != "" && !(parts[x] in safe)) ok = 0
				if (kind == "exec_script" && (rest == "sql" || rest == "constchar*sql")) ok = 1
			}
			if (!ok) { print FILE ": " kind " takes SQL that is not a literal: " out; bad = 1 }
		}
		exit bad
	}' "$1"
}

fail=0
if [ $# -gt 0 ]; then
	for f in "$@"; do lint_file "$f" || fail=1; done
	exit $fail
fi

SRC=$(find db daemon planner kernels -name '*.c' 2>/dev/null)
if grep -nE 'sqlite3_(exec|mprintf|vmprintf|snprintf|vsnprintf|prepare|prepare16[a-z0-9_]*)[ \t]*\(' $SRC; then
	echo "lint_sql: forbidden SQLite call above (use a prepared statement with bound values)"; fail=1
fi
if grep -lE 'sqlite3_prepare_v[23]' $SRC | grep -v '^db/store\.c$'; then
	echo "lint_sql: sqlite3_prepare_v2/v3 outside db/store.c (all SQL lives in the store)"; fail=1
fi
if grep -nE '(printf|snprintf|strcat|strcpy)[ \t]*\([^;]*"[^"]*\b(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|WHERE)\b' $SRC; then
	echo "lint_sql: SQL text formatted with printf above"; fail=1
fi
lint_file db/store.c || fail=1

# self-test: the checker must reject string-built SQL, or it proves nothing
tmp=$(mktemp -d)
cat > "$tmp/bad_store.c" <<'BAD'
static int f(sqlite3 *db, const char *id)
{
	char sql[128];
	snprintf(sql, sizeof(sql), "SELECT * FROM devices WHERE id = '%s'", id);
	return sqlite3_prepare_v2(db, sql, -1, &st, NULL);
}
BAD
cat > "$tmp/good_store.c" <<'GOOD'
static const char q[] = "SELECT 1"
	" FROM devices";
#define COLS "id, name"
static int f(sqlite3 *db, bool m)
{
	sqlite3_prepare_v2(db, "SELECT " COLS " FROM devices WHERE id = ?1", -1, &st, NULL);
	sqlite3_prepare_v2(db, m ? "SELECT 1" : "SELECT 2", -1, &st, NULL);
	return sqlite3_prepare_v2(db, q, -1, &st, NULL);
}
GOOD
cat > "$tmp/bad_cache.c" <<'BAD'
static sqlite3_stmt *g(mp_store *s, const char *id)
{
	char q[128];
	snprintf(q, sizeof(q), "SELECT * FROM models WHERE id = '%s'", id);
	return stmt_get(s, q);
}
BAD
if sh "$0" "$tmp/bad_store.c" > /dev/null; then echo "lint_sql: self-test failed: string-built SQL passed"; fail=1; fi
if sh "$0" "$tmp/bad_cache.c" > /dev/null; then echo "lint_sql: self-test failed: string-built SQL via stmt_get passed"; fail=1; fi
if ! sh "$0" "$tmp/good_store.c"; then echo "lint_sql: self-test failed: literal SQL rejected"; fail=1; fi
rm -rf "$tmp"
[ $fail -eq 0 ] && echo "lint_sql: ok (every SQL statement is a literal, prepared, with bound values)"
exit $fail
