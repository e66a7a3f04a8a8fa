#!/bin/sh
# help.sh: the arguments llama.cpp's own parser takes (common/arg.cpp), as each program prints them with --help, into
# tests/ref/llamacpp/help/<program>.txt with the build's version on the first lines (commented '# '). The C tests
# (tests/test_llamacpp_engine.c) check every flag and enumerated value of memplan's llama.cpp and Ollama commands
# against these files. Run by hand after build.sh (make llamacpp-groundtruth), never by CI.
set -eu
CACHE=${LLAMACPP_CACHE:-/work/cache/gguf}
BIN=${LLAMACPP_BIN:-$CACHE/build-cpu/bin}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$HERE/../../../tests/ref/llamacpp/help
mkdir -p "$OUT"
for p in llama-server llama-completion llama-cli; do
	[ -x "$BIN/$p" ] || { echo "help.sh: $BIN/$p is not built (build.sh builds it)" >&2; exit 1; }
	{
		echo "# $p --help, printed by llama.cpp built from llama-cpp-python 0.3.36's sdist (tools/groundtruth/llamacpp/build.sh)"
		"$BIN/$p" --version 2>&1 | sed 's/^/# /'
		"$BIN/$p" --help 2>&1
	} > "$OUT/$p.txt"
	echo "wrote $OUT/$p.txt"
done
