#!/bin/sh
# setup.sh: what make llamacpp-real runs against, made once per machine in a cache outside the clone and keyed by
# the version:
#   ${MEMPLAN_LLAMACPP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memplan/llamacpp}/llama-cpp-python-0.3.36/
#     bin/      llama-completion, llama-server, ggml-rpc-server of llama.cpp 0c1e5709: the source PyPI's
#               llama-cpp-python 0.3.36 sdist vendors (pip download, its sha256 checked), CPU backend + RPC backend
#     models/   the GGUF files the tier's cases name (<arch>/<arch>-<type>.gguf): each reference header of
#               tests/ref/llamacpp/models/<arch>-<type>.gguf.hdr (written by llama.cpp's own convert_hf_to_gguf.py
#               and llama-quantize: metadata, tokenizer and tensor infos) followed by a zero-filled tensor-data
#               region of the size runs.json records (file_bytes); no torch, no converter. llama.cpp reads the
#               weights only to compute with them, and no buffer size depends on their values.
# Prints the folder. Needs cmake, ninja and g++ (scripts/install-deps test) and PyPI for the sdist the first time
# (1745 s measured on a shared 2-core machine at load average 7 to 9; 74 MB downloaded, 30 MB kept); then nothing.
# JOBS (default 2) bounds the build.
set -eu
VERSION=0.3.36
SDIST_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
DIR=${MEMPLAN_LLAMACPP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memplan/llamacpp}/llama-cpp-python-$VERSION
BIN="llama-completion llama-server ggml-rpc-server"
MODELS="llama/llama-q4_k_m llama/llama-f16 qwen3/qwen3-q4_k_m qwen3/qwen3-q8_0 gemma3/gemma3-q6_k gemma3/gemma3-q4_k_m
	mixtral/mixtral-q4_k_m phi3/phi3-q8_0 gpt2/gpt2-q8_0 qwen2/qwen2-q4_k_m"
mkdir -p "$DIR"

built=1
for b in $BIN; do [ -x "$DIR/bin/$b" ] || built=0; done
if [ $built = 0 ]; then
	for t in cmake ninja g++; do
		command -v $t >/dev/null 2>&1 || { echo "setup.sh: $t is missing (scripts/install-deps test installs it)" >&2; exit 3; }
	done
	work=$(mktemp -d "$DIR/build.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	echo "setup.sh: building llama.cpp of llama-cpp-python $VERSION into $DIR (the first time: about half an hour on 2 cores)" >&2
	python3 -m pip download -q --no-deps --no-binary :all: -d "$work" "llama-cpp-python==$VERSION" >&2
	got=$(sha256sum "$work/llama_cpp_python-$VERSION.tar.gz" | cut -d' ' -f1)
	if [ "$got" != "$SDIST_SHA256" ]; then
		echo "setup.sh: llama_cpp_python-$VERSION.tar.gz has sha256 $got, not the pinned $SDIST_SHA256" >&2
		exit 4
	fi
	tar -C "$work" -xzf "$work/llama_cpp_python-$VERSION.tar.gz"
	src=$work/llama_cpp_python-$VERSION/vendor/llama.cpp
	cmake -S "$src" -B "$work/b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF \
		-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF \
		-DLLAMA_USE_PREBUILT_UI=OFF -DGGML_NATIVE=ON -DGGML_RPC=ON -DBUILD_SHARED_LIBS=OFF >"$work/cmake.log" 2>&1 ||
		{ tail -20 "$work/cmake.log" >&2; exit 5; }
	# shellcheck disable=SC2086 # $BIN is a list of targets
	ninja -C "$work/b" -j"${JOBS:-2}" $BIN >"$work/ninja.log" 2>&1 || { tail -30 "$work/ninja.log" >&2; exit 5; }
	mkdir -p "$work/bin"
	for b in $BIN; do cp "$work/b/bin/$b" "$work/bin/$b"; done
	rm -rf "${DIR:?}/bin"
	mv "$work/bin" "$DIR/bin"
fi

for m in $MODELS; do
	f="$DIR/models/$m.gguf"
	[ -f "$f" ] && continue
	mkdir -p "$(dirname "$f")"
	python3 - "$ROOT/tests/ref/llamacpp" "$(basename "$m")" "$f" <<'PY'
import json, os, sys
ref, key, out = sys.argv[1:]
facts = json.load(open(os.path.join(ref, "runs.json")))["models"][key]
header = open(os.path.join(ref, "models", key + ".gguf.hdr"), "rb").read()
if len(header) != facts["header_bytes"] or header[:4] != b"GGUF":
    sys.exit("setup.sh: %s.gguf.hdr is not the %d-byte header runs.json records" % (key, facts["header_bytes"]))
with open(out + ".part", "wb") as f:
    f.write(header)
    f.truncate(facts["file_bytes"])  # the tensor data: zeros
os.replace(out + ".part", out)
PY
done
echo "$DIR"
