/*
 * gguf_llamacpp.h: a GGUF file (model/gguf.h) as llama.cpp's loader sees it, for the planner's llama.cpp arithmetic
 * (planner/mp_llamacpp.h). No files, no HTTP.
 */
#ifndef MPM_GGUF_LLAMACPP_H
#define MPM_GGUF_LLAMACPP_H

#include "gguf.h"

/*
 * Fills the model half of *p (n_layer, widths, per-layer KV widths, the SWA layers, n_ctx_train, n_vocab; the launch
 * half is the caller's) and *out with one entry per tensor (its layer, expert and feed-forward flags, absolute file
 * offset), plus token_embd again as the output of a tied model (llama.cpp's TENSOR_DUPLICATED). Worked example
 * (tests/test_llamacpp.c): the gemma3 reference -> 6 layers, 5 of them SWA, 58 tensors + the tied output.
 * Errors: MP_EINVAL (block_count, embedding_length or head_count missing; a tensor of a layer beyond block_count),
 * MP_ENOMEM. Owned by the caller: *out (free()).
 */
mp_status mpm_gguf_llamacpp(const mpm_gguf *g, const char *pointer, mp_llamacpp_params *p, mp_llamacpp_tensor **out,
			    size_t *n_out, mp_error *err);

#endif /* MPM_GGUF_LLAMACPP_H */
