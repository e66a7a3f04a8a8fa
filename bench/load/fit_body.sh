#!/bin/sh
# bench/load/fit_body.sh: prints a POST /v1/fit body with N candidates (default 1,000) for bench/load/run.sh:
# N/10 inference jobs (stored models, batch sizes 1-64, sequence lengths 1,024-4,096: within every model's context) x 10 stored preset devices x
# one GPU count, so the daemon evaluates exactly N job/device pairs. Usage: bench/load/fit_body.sh [N]
set -eu
N=${1:-1000}
jobs=$(( (N + 9) / 10 ))
printf '{"gpu_counts":[1],"devices":["h200-sxm-141gb","h100-sxm5-80gb","h100-pcie-80gb","a100-sxm4-80gb",'
printf '"a100-sxm4-40gb","l40s-48gb","l4-24gb","rtx-4090-24gb","b200-180gb","mi300x-192gb"],"jobs":['
i=0
for m in $(seq 0 $((jobs - 1))); do
	case $((m % 8)) in
	0) model=llama-3-8b ;; 1) model=llama-3.1-70b ;; 2) model=qwen2.5-7b ;; 3) model=mixtral-8x7b ;;
	4) model=gemma-7b ;; 5) model=qwen2.5-14b ;; 6) model=mistral-7b-v0.1 ;; *) model=phi-3-mini-4k ;;
	esac
	[ "$i" -gt 0 ] && printf ','
	printf '{"id":"job-%d","inference":{"model":"%s","weight_dtype":"bf16","kv_cache_dtype":"bf16",' "$m" "$model"
	printf '"batch_size":%d,"sequence_length":%d}}' $((1 << (m % 7))) $((1024 << (m % 3)))
	i=$((i + 1))
done
printf ']}\n'
