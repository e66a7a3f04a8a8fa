#!/bin/sh
# build.sh: builds llama.cpp from the source PyPI's llama-cpp-python sdist vendors (CPU backend and the RPC backend,
# whose servers stand in for a second and third device when the references need layers off the host; llama-server,
# llama-completion and llama-cli, whose argument parsers the engine tests check memplan's commands with), under
# $LLAMACPP_CACHE (default /work/cache/gguf), and ggml_types (this folder) against it. Run by hand (make
# llamacpp-groundtruth), never by CI. Prints the folder of the build.
set -eu
VERSION=${LLAMA_CPP_PYTHON_VERSION:-0.3.36}
CACHE=${LLAMACPP_CACHE:-/work/cache/gguf}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$CACHE/sdist"
if [ ! -f "$CACHE/sdist/llama_cpp_python-$VERSION.tar.gz" ]; then
	python3 -m pip download --no-deps --no-binary :all: -d "$CACHE/sdist" "llama-cpp-python==$VERSION" >&2
fi
SRC=$CACHE/llama_cpp_python-$VERSION/vendor/llama.cpp
[ -d "$SRC" ] || tar -C "$CACHE" -xzf "$CACHE/sdist/llama_cpp_python-$VERSION.tar.gz"
B=$CACHE/build-cpu
mkdir -p "$B"
if [ ! -f "$B/build.ninja" ]; then
	cmake -S "$SRC" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
		-DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
		-DGGML_NATIVE=ON -DGGML_RPC=ON -DBUILD_SHARED_LIBS=OFF >&2
fi
ninja -C "$B" -j"${JOBS:-2}" llama-quantize llama-completion llama-server llama-cli llama-fit-params ggml-rpc-server \
	llama-gguf-split >&2
cc -O1 -I"$SRC/ggml/include" "$HERE/ggml_types.c" "$B/ggml/src/libggml-base.a" -lm -lpthread -lstdc++ -fopenmp \
	-o "$B/ggml_types"
echo "$B"
