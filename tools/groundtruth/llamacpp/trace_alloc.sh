#!/bin/sh
# trace_alloc.sh: a llama-completion whose ggml-alloc.c prints every allocation, in-place reuse and free of the
# compute graph ("TRACE A|R|F <buffer> <op> <name> <bytes> <offset>" on stderr), linked against build.sh's build of
# llama.cpp (the same objects; only ggml-alloc.c compiled again with the prints). planner/llamacpp.c host_ffn_replay
# follows the order these traces show. Run by hand after build.sh; prints the program's path. Usage, e.g.:
#   ggml-rpc-server -H 127.0.0.1 -p 27999 &
#   $(tools/groundtruth/llamacpp/trace_alloc.sh) -m mixtral-f16.gguf -p hi -n 1 -no-cnv --fit off --no-warmup -nr -v \
#       -c 2048 -ngl 99 -ot 'ffn_.*=CPU' --rpc 127.0.0.1:27999 2>&1 | grep TRACE
# The last "n_tokens =  512" graph_reserve's events of one buffer id replay to the size sched_reserve prints.
set -eu
VERSION=${LLAMA_CPP_PYTHON_VERSION:-0.3.36}
CACHE=${LLAMACPP_CACHE:-/work/cache/gguf}
SRC=$CACHE/llama_cpp_python-$VERSION/vendor/llama.cpp
B=$CACHE/build-cpu
OUT=$CACHE/trace-alloc
mkdir -p "$OUT"
python3 - "$SRC/ggml/src/ggml-alloc.c" "$OUT/ggml-alloc-trace.c" <<'PY'
import sys
s = open(sys.argv[1]).read()
def sub(old, new):
    global s
    if old not in s:
        sys.exit("trace_alloc.sh: ggml-alloc.c of this version lacks: " + old)
    s = s.replace(old, new, 1)
sub('        hn->addr = ggml_dyn_tallocr_alloc(alloc, size, node);\n',
    '        hn->addr = ggml_dyn_tallocr_alloc(alloc, size, node);\n'
    '        fprintf(stderr, "TRACE A %d %s %s %zu %zu\\n", buffer_id, ggml_op_desc(node), node->name, size, hn->addr.offset);\n')
sub('                        AT_PRINTF("reusing parent %s for %s\\n", parent->name, node->name);\n',
    '                        fprintf(stderr, "TRACE R %d %s %s <- %s\\n", p_hn->buffer_id, ggml_op_desc(node), node->name, parent->name);\n')
sub('    ggml_dyn_tallocr_free_bytes(alloc, hn->addr, size);\n    hn->allocated = false;\n',
    '    fprintf(stderr, "TRACE F %d %s %s %zu %zu\\n", buffer_id, ggml_op_desc(node), node->name, size, hn->addr.offset);\n'
    '    ggml_dyn_tallocr_free_bytes(alloc, hn->addr, size);\n    hn->allocated = false;\n')
open(sys.argv[2], 'w').write(s)
PY
cc -DGGML_SCHED_MAX_COPIES=4 -DGGML_USE_OPENMP -D_GNU_SOURCE -D_XOPEN_SOURCE=600 -I"$SRC/ggml/src" -I"$B/ggml/src" \
	-I"$SRC/ggml/include" -O2 -fopenmp -std=gnu11 -c "$OUT/ggml-alloc-trace.c" -o "$OUT/ggml-alloc-trace.o"
cd "$B"
g++ -O3 tools/completion/CMakeFiles/llama-completion.dir/main.cpp.o "$OUT/ggml-alloc-trace.o" -o "$OUT/llama-completion" \
	tools/completion/libllama-completion-impl.a common/libllama-common.a common/libllama-common-base.a \
	vendor/cpp-httplib/libcpp-httplib.a src/libllama.a ggml/src/libggml.a -ldl ggml/src/libggml-cpu.a \
	ggml/src/ggml-rpc/libggml-rpc.a ggml/src/libggml-base.a -fopenmp -lpthread -lm
echo "$OUT/llama-completion"
