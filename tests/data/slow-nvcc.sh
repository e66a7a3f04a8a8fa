#!/bin/sh
# slow-nvcc.sh: a stand-in for nvcc (tests/test_make_run.sh): answers --list-gpu-code as CUDA 13's nvcc does for
# the architectures the Makefile asks about, and otherwise takes 60 s and fails, writing nothing (not even to
# stderr: the build keeps what a compile prints as its warnings).
if [ "${1:-}" = "--list-gpu-code" ]; then
	printf 'sm_75\nsm_80\nsm_86\nsm_89\nsm_90\nsm_100\n'
	exit 0
fi
sleep 60
exit 1
