/*
 * llamacpp.c: llama.cpp's placement and buffer arithmetic (mp_llamacpp.h), each rule with the file of llama.cpp
 * 0c1e5709 it follows. Owns nothing but arithmetic: the tensors and the launch come in, the buffers go out. Must not
 * know GGUF's bytes (model/gguf.c) or the engines' command lines (service/).
 */
#include <math.h>
#include <string.h>

#include "memplan.h"

#define PAD(x, n) (((x) + (n) - 1) / (n) * (n))

bool mp_llamacpp_kv_type_ok(uint32_t type)
{
	switch (type) {
	case MP_GGML_F32: case MP_GGML_F16: case MP_GGML_BF16: case MP_GGML_Q8_0: case MP_GGML_Q4_0:
	case MP_GGML_Q4_1: case MP_GGML_IQ4_NL: case MP_GGML_Q5_0: case MP_GGML_Q5_1:
		return true;
	default:
		return false;
	}
}

mp_status mp_llamacpp_context(const mp_llamacpp_params *p, mp_llamacpp_plan *out, mp_error *err)
{
	uint64_t n_ctx = p->n_ctx ? p->n_ctx : p->n_ctx_train, asked;
	uint32_t seqs = p->n_seq_max ? p->n_seq_max : 1;

	if (seqs > MP_LLAMACPP_MAX_SEQ)
		return mp_fail(err, MP_EINVAL, "/engine_options/parallel", "-np %u: llama.cpp takes at most %d sequences",
			       seqs, MP_LLAMACPP_MAX_SEQ);
	if (n_ctx == 0)
		return mp_fail(err, MP_EINVAL, "/sequence_length", "no context: -c is 0 and the model states no context_length");
	if (n_ctx > UINT32_MAX - MP_LLAMACPP_CTX_PAD)
		return mp_fail(err, MP_EOVERFLOW, "/sequence_length", "-c %llu does not fit llama.cpp's 32-bit n_ctx",
			       (unsigned long long)n_ctx);
	/* llama-context.cpp: n_ctx = GGML_PAD(n_ctx, 256); per stream GGML_PAD(n_ctx / n_seq_max, 256) */
	asked = n_ctx;
	n_ctx = PAD(n_ctx, MP_LLAMACPP_CTX_PAD);
	out->n_stream = p->kv_unified ? 1 : seqs;
	if (p->kv_unified) {
		out->n_ctx_seq = (uint32_t)n_ctx;
	} else {
		uint64_t per = PAD(n_ctx / seqs, MP_LLAMACPP_CTX_PAD);
		if (per == 0)
			return mp_fail(err, MP_EINVAL, "/sequence_length", "n_ctx_seq == 0: -c %llu over -np %u leaves no cells",
				       (unsigned long long)n_ctx, seqs);
		if (per * seqs > UINT32_MAX)
			return mp_fail(err, MP_EOVERFLOW, "/sequence_length", "the context overflows llama.cpp's 32-bit n_ctx");
		out->n_ctx_seq = (uint32_t)per;
		n_ctx = per * seqs;
	}
	out->n_ctx = (uint32_t)n_ctx;
	/* causal attention: n_batch = min(n_ctx, b) with the n_ctx asked for (before the padding); n_ubatch =
	 * min(n_batch, ub) (ub 0 = b) */
	out->n_batch = p->n_batch ? p->n_batch : 2048;
	if (out->n_batch > asked)
		out->n_batch = (uint32_t)asked;
	out->n_ubatch = p->n_ubatch ? p->n_ubatch : 512;
	if (out->n_ubatch > out->n_batch)
		out->n_ubatch = out->n_batch;
	return MP_OK;
}

/* The device slot of layer il (n_layer = the output layer); 0 = host. llama-model.cpp load_tensors. */
static uint32_t layer_slot(const mp_llamacpp_params *p, const double *splits, uint32_t il)
{
	int64_t ngl = p->n_gpu_layers < 0 ? (int64_t)p->n_layer + 1 : p->n_gpu_layers;
	int64_t start = (int64_t)p->n_layer + 1 - ngl, act;

	if (p->n_devices == 0)
		return 0;
	if (start < 0)
		start = 0;
	act = ngl < (int64_t)p->n_layer + 1 ? ngl : (int64_t)p->n_layer + 1;
	if ((int64_t)il < start || (int64_t)il - start >= act)
		return 0;
	{
		/* std::upper_bound(splits, splits + n, float(il - start) / act): the first split point above the share */
		float share = (float)(il - start) / (float)act;
		for (uint32_t d = 0; d < p->n_devices; d++)
			if ((float)splits[d] > share)
				return d + 1;
		return p->n_devices; /* upper_bound past the end: devices.at() would throw; the last split point is 1 */
	}
}

/* ggml_backend_buft_get_alloc_size padded to the buffer type's alignment (ggml-alloc.c). */
static bool alloc_size(mp_llamacpp_backend b, const mp_llamacpp_tensor *t, uint64_t *out)
{
	uint64_t size = t->bytes;
	mp_ggml_traits tr = mp_ggml_traits_of(t->type);

	if (b == MP_LLAMACPP_CUDA) {
		/* ggml-cuda.cu ggml_backend_cuda_buffer_type_get_alloc_size: quantised rows padded to 512 values */
		if (tr.quantized && t->ne0 % 512 != 0) {
			uint64_t extra;
			if (!mp_ggml_row_bytes(t->type, 512 - t->ne0 % 512, &extra) || !mp_add_u64(size, extra, &size))
				return false;
		}
		return mp_add_u64(size, 127, &size) && (*out = size / 128 * 128, true);
	}
	return mp_add_u64(size, 31, &size) && (*out = size / 32 * 32, true);
}

static bool kept_on_host(const mp_llamacpp_params *p, const mp_llamacpp_tensor *t)
{
	if (t->expert && t->layer >= 0 && (uint32_t)t->layer < p->n_cpu_moe)
		return true;
	if (p->override == MP_LLAMACPP_OT_EXPERTS && t->expert)
		return true;
	if (p->override == MP_LLAMACPP_OT_FFN && t->ffn)
		return true;
	return false;
}


#define MAX_FILES 256

/*
 * The slots tensor i occupies (llama-model.cpp load_tensors, llama-model-loader.cpp create_tensor): a repeating
 * layer's device, unless --n-cpu-moe or -ot keeps it on the host; the input layer on the host; a per-layer duplicate
 * (rope_freqs) once in each buffer that holds a layer (create_tensor's duplicate check is per context). A tied
 * output (`duplicate`) takes the output layer's slot: the caller decides whether it costs a buffer there.
 */
static mp_status tensor_slots(const mp_llamacpp_params *p, const mp_llamacpp_plan *pl, const mp_llamacpp_tensor *x,
			      size_t i, uint32_t *slots, uint32_t *ns, mp_error *err)
{
	*ns = 0;
	if (!mp_ggml_type_valid(x->type))
		return mp_fail(err, MP_EINVAL, "/model", "tensor %zu: ggml type %u", i, x->type);
	if (x->file >= MAX_FILES)
		return mp_fail(err, MP_EINVAL, "/model", "tensor %zu: file %u of a split model beyond %d", i, x->file,
			       MAX_FILES);
	if (x->every_layer) {
		bool seen[MP_LLAMACPP_SLOTS] = { false };
		for (uint32_t il = 0; il < p->n_layer; il++)
			seen[pl->layer_device[il]] = true;
		for (uint32_t s = 0; s < MP_LLAMACPP_SLOTS; s++)
			if (seen[s])
				slots[(*ns)++] = s;
	} else if (x->layer == MP_LLAMACPP_INPUT) {
		slots[(*ns)++] = 0;
	} else {
		uint32_t il = x->layer == MP_LLAMACPP_OUTPUT ? p->n_layer : (uint32_t)x->layer;
		if (x->layer < MP_LLAMACPP_OUTPUT || il > p->n_layer)
			return mp_fail(err, MP_EINVAL, "/model", "tensor %zu: layer %d beyond the model's %u", i, x->layer,
				       p->n_layer);
		slots[(*ns)++] = kept_on_host(p, x) ? 0 : pl->layer_device[il];
	}
	return MP_OK;
}

/*
 * Pipeline parallelism (llama-context.cpp llama_context: more than one device, every layer and the output offloaded
 * (n_gpu_layers > n_layer), --split-mode layer, the KV offloaded, no tensor override): the scheduler then keeps
 * GGML_SCHED_MAX_COPIES = 4 copies of every graph input and of every split's inputs (ggml-backend.cpp
 * ggml_backend_sched_new, split_graph passes 5 and 6), so the next ubatch can be set while one computes.
 */
static bool pipeline_parallel(const mp_llamacpp_params *p, const mp_llamacpp_plan *pl)
{
	return !p->no_pipeline && p->n_devices > 1 && pl->gpu_layers > p->n_layer && p->kv_offload &&
	       p->override == MP_LLAMACPP_OT_NONE && p->n_cpu_moe == 0;
}

/* Whether the host keeps the feed-forward weights of some offloaded layer (-ot ffn_.*, -ot exps, --n-cpu-moe). */
static bool host_ffn(const mp_llamacpp_params *p)
{
	return p->override == MP_LLAMACPP_OT_FFN || (p->n_expert && (p->override == MP_LLAMACPP_OT_EXPERTS || p->n_cpu_moe));
}

/*
 * The router of a MoE layer as llama.cpp's graph allocates it (llama-graph.cpp build_moe_ffn, in the order a tracing
 * ggml-alloc.c showed: tools/groundtruth/llamacpp/trace_alloc.sh): the logits [T, E] float32, the argsort [T, E]
 * int32, the top-k weights [T, k] float32 (the logits freed), their sum [T] and the normalised weights [T, k] (the
 * unnormalised and the sum freed). T tokens of the ubatch, E experts, k used. *as and *wn: the offsets of the argsort
 * and the normalised weights, still held (the caller frees them when its graph does).
 */
static void router_replay(mp_ggml_dyn_alloc *a, uint64_t T, uint64_t E, uint64_t k, uint64_t *as, uint64_t *wn)
{
	uint64_t lg, w, ws;

	lg = mp_ggml_dyn_take(a, T * E * 4);
	*as = mp_ggml_dyn_take(a, T * E * 4);
	w = mp_ggml_dyn_take(a, T * k * 4);
	mp_ggml_dyn_give(a, lg, T * E * 4);
	ws = mp_ggml_dyn_take(a, T * 4);
	*wn = mp_ggml_dyn_take(a, T * k * 4);
	mp_ggml_dyn_give(a, w, T * k * 4);
	mp_ggml_dyn_give(a, ws, T * 4);
}

/*
 * The host's compute buffer when every layer is offloaded and the host runs feed-forward work of theirs (-ot ffn_.*,
 * -ot exps, --n-cpu-moe): ggml-alloc's own placement (mp_ggml_dyn_alloc) replayed over the host's part of the
 * scheduler's graph, in the order ggml_gallocr_alloc_graph_impl allocates and frees it. The order was read from
 * llama.cpp 0c1e5709 with a ggml-alloc.c that prints every allocation and free (tests/ref/llamacpp/README.md).
 *
 * First the graph inputs, allocated before any node and in the order the graph first reads them: the tokens (i32),
 * the n_embd x n_tokens embeddings input (a leaf no node reads: never freed), the positions, then for each cache kind
 * in the order of its first layer the K and V row indices (i64: n_tokens, or n_tokens x n_embd_v_gqa for the
 * transposed V of attention without flash attention) and the mask, then out_ids (n_outputs = n_ubatch i32). Then the
 * token-embedding gather. The scheduler copies the gather, the positions and the first layer's cache inputs to the
 * GPU, and each is freed once copied (its one child is the copy); a kind whose first layer comes later (gemma3's
 * full cache) keeps its indices and mask on the host until that layer. The holes they leave are what the allocator
 * fits later tensors into, best fit first: a feed-forward activation wider than the hole goes past the inputs, which
 * is why the buffer can be the inputs plus three activations though the masks are long freed.
 *
 * Then per layer whose feed-forward runs here (llama-graph.cpp build_ffn, build_moe_ffn), the GPU's output copied in
 * (the FFN norm's input; its norm and weight multiply in place), then:
 *   gate and up (n_ff x n_tokens fp32 each), the norm freed, the GLU product, gate and up freed, down (n_embd),
 *   the product freed, down freed once copied back; a fused ffn_up (phi3) is one 2 x n_ff output split by the GLU;
 *   a plain block (gpt2) up (activation in place), the norm freed, down;
 *   a MoE layer whose router runs here too (-ot ffn_.*): the router's logits (n_expert x n_tokens, softmax in place),
 *   their argsort (i32), the selected weights (n_expert_used), the logits freed, the weights' sum (clamped in place)
 *   and the normalised weights (mixtral's and qwen3moe's norm_w), then gate, up, product and down of the selected
 *   experts (n_ff_exp x n_expert_used per token; down n_embd x n_expert_used), the argsort freed after down;
 *   the experts alone (-ot exps, --n-cpu-moe): the copied norm output and the selected experts' ids (a view of the
 *   GPU's argsort, copied whole: (n_tokens - 1) x n_expert + n_expert_used i32), then gate, up, product and down.
 * A shared expert (qwen2moe) is not in the replay. Sizes at the CPU buffer's 32-byte alignment.
 */
static bool host_ffn_replay(const mp_llamacpp_params *p, const mp_llamacpp_plan *pl, const uint32_t *first,
			    const uint64_t *kind_mask, uint64_t *out)
{
	mp_ggml_dyn_alloc a;
	uint64_t T = pl->n_ubatch, row = T * p->n_embd * 4, v_max = 0, tok, pos, gather, pe = 0;
	uint64_t kin[2][3] = { { 0 } }, ksz[2][3] = { { 0 } };
	uint64_t E = p->n_expert, k = p->n_expert_used, act_exp = T * k * p->n_ff_exp * 4, act = T * p->n_ff * 4;
	int order[2];

	for (uint32_t il = 0; il < p->n_layer; il++)
		if (p->n_embd_v_gqa[il] > v_max)
			v_max = p->n_embd_v_gqa[il];
	order[0] = first[1] < first[0] ? 1 : 0;
	order[1] = 1 - order[0];
	mp_ggml_dyn_init(&a, 32);
	tok = mp_ggml_dyn_take(&a, T * 4);
	(void)mp_ggml_dyn_take(&a, row); /* the embeddings input */
	pos = mp_ggml_dyn_take(&a, T * 4);
	for (int o = 0; o < 2; o++) {
		int kd = order[o];
		if (first[kd] == UINT32_MAX)
			continue;
		ksz[kd][0] = T * 8;
		ksz[kd][1] = p->flash_attn ? T * 8 : T * v_max * 8;
		ksz[kd][2] = kind_mask[kd];
		for (int j = 0; j < 3; j++)
			kin[kd][j] = mp_ggml_dyn_take(&a, ksz[kd][j]);
	}
	(void)mp_ggml_dyn_take(&a, T * 4); /* out_ids */
	gather = mp_ggml_dyn_take(&a, row);
	mp_ggml_dyn_give(&a, tok, T * 4);
	if (p->learned_positions) /* gpt2: the position-embedding gather, then both copied */
		pe = mp_ggml_dyn_take(&a, row);
	mp_ggml_dyn_give(&a, pos, T * 4);
	mp_ggml_dyn_give(&a, gather, row);
	if (p->learned_positions)
		mp_ggml_dyn_give(&a, pe, row);
	for (uint32_t il = 0; il < p->n_layer; il++) {
		bool experts = p->n_expert && (p->override == MP_LLAMACPP_OT_EXPERTS || il < p->n_cpu_moe);
		uint64_t norm, gate, up, glu, down, as, wn, ids;

		for (int kd = 0; kd < 2; kd++)
			if (first[kd] == il)
				for (int j = 0; j < 3; j++)
					mp_ggml_dyn_give(&a, kin[kd][j], ksz[kd][j]);
		if (p->override == MP_LLAMACPP_OT_FFN && p->n_expert) {
			norm = mp_ggml_dyn_take(&a, row);
			router_replay(&a, T, E, k, &as, &wn);
			gate = mp_ggml_dyn_take(&a, act_exp);
			up = mp_ggml_dyn_take(&a, act_exp);
			mp_ggml_dyn_give(&a, norm, row);
			glu = mp_ggml_dyn_take(&a, act_exp);
			mp_ggml_dyn_give(&a, gate, act_exp);
			mp_ggml_dyn_give(&a, up, act_exp);
			down = mp_ggml_dyn_take(&a, T * k * p->n_embd * 4);
			mp_ggml_dyn_give(&a, glu, act_exp);
			mp_ggml_dyn_give(&a, as, T * E * 4);
			mp_ggml_dyn_give(&a, down, T * k * p->n_embd * 4);
			mp_ggml_dyn_give(&a, wn, T * k * 4);
		} else if (experts) {
			uint64_t ids_bytes = T ? (T - 1) * E * 4 + k * 4 : 0;
			norm = mp_ggml_dyn_take(&a, row);
			ids = mp_ggml_dyn_take(&a, ids_bytes);
			gate = mp_ggml_dyn_take(&a, act_exp);
			up = mp_ggml_dyn_take(&a, act_exp);
			mp_ggml_dyn_give(&a, norm, row);
			glu = mp_ggml_dyn_take(&a, act_exp);
			mp_ggml_dyn_give(&a, gate, act_exp);
			mp_ggml_dyn_give(&a, up, act_exp);
			down = mp_ggml_dyn_take(&a, T * k * p->n_embd * 4);
			mp_ggml_dyn_give(&a, glu, act_exp);
			mp_ggml_dyn_give(&a, ids, ids_bytes);
			mp_ggml_dyn_give(&a, down, T * k * p->n_embd * 4);
		} else if (p->override == MP_LLAMACPP_OT_FFN) {
			norm = mp_ggml_dyn_take(&a, row);
			if (p->plain_ffn) {
				up = mp_ggml_dyn_take(&a, act);
				mp_ggml_dyn_give(&a, norm, row);
				down = mp_ggml_dyn_take(&a, row);
				mp_ggml_dyn_give(&a, up, act);
			} else if (p->fused_gate_up) {
				up = mp_ggml_dyn_take(&a, 2 * act);
				mp_ggml_dyn_give(&a, norm, row);
				glu = mp_ggml_dyn_take(&a, act);
				mp_ggml_dyn_give(&a, up, 2 * act);
				down = mp_ggml_dyn_take(&a, row);
				mp_ggml_dyn_give(&a, glu, act);
			} else {
				gate = mp_ggml_dyn_take(&a, act);
				up = mp_ggml_dyn_take(&a, act);
				mp_ggml_dyn_give(&a, norm, row);
				glu = mp_ggml_dyn_take(&a, act);
				mp_ggml_dyn_give(&a, gate, act);
				mp_ggml_dyn_give(&a, up, act);
				down = mp_ggml_dyn_take(&a, row);
				mp_ggml_dyn_give(&a, glu, act);
			}
			mp_ggml_dyn_give(&a, down, row);
		}
	}
	*out = a.max_size;
	return !a.overflow;
}

/*
 * The GPU's compute buffer when it runs every layer of a MoE model with flash attention and one cache, and the host
 * keeps feed-forward work of those layers (-ot ffn_.*, -ot exps, --n-cpu-moe): ggml-alloc's placement replayed, as
 * host_ffn_replay does for the host, in the order the traced ggml-alloc.c showed (mixtral; qwen3moe's Q and K norms
 * take the blocks the ropes take here). First the split inputs the scheduler copies in: the embeddings gathered on
 * the host, the positions, the K and V row indices and the mask, each freed after the last layer reads it. Per layer
 * the attention: the norm (its weight multiply in place), Q and its roped copy (the Q product freed), V and K, the
 * norm freed, K's roped copy, the attention output and its projection (the residual add in place; the residual
 * freed); the last layer gathers its out_ids rows of the projection and of the residual (n_outputs = n_ubatch). Then
 * the layer's feed-forward:
 *   experts here (--n-cpu-moe's later layers): the FFN norm, the router's logits (softmax in place), argsort,
 *   selected weights, their sum and the normalised weights, gate, up, the norm freed, the GLU product, down of the
 *   selected experts (weighted in place), the sum into one n_embd row, the layer's input freed;
 *   experts on the host (-ot exps, --n-cpu-moe's first layers): the router as above, the norm and argsort freed once
 *   copied to the host, the host's down output copied back (n_embd x n_expert_used), then the weighting and sum;
 *   the whole FFN on the host (-ot ffn_.*): the norm freed once copied, the host's down output and normalised
 *   weights copied back, then the weighting and sum.
 * The out_ids copy is an input of the split that runs the last layer's attention. The output layer ends on the
 * logits (n_ubatch x n_vocab fp32). CPU alignment (the RPC servers' buffers); a CUDA GPU's is 128 bytes.
 */
static bool gpu_moe_replay(const mp_llamacpp_params *p, const mp_llamacpp_plan *pl, uint32_t slot, uint64_t *out)
{
	mp_ggml_dyn_alloc a;
	uint64_t T = pl->n_ubatch, row = T * p->n_embd * 4, E = p->n_expert, k = p->n_expert_used;
	uint64_t act = T * k * p->n_ff_exp * 4, down_b = T * k * p->n_embd * 4;
	uint64_t kb = T * p->n_embd_k_gqa[0] * 4, vb = T * p->n_embd_v_gqa[0] * 4;
	uint64_t fa_b = T * (uint64_t)p->n_head * p->n_embd_head_v * 4, mask_b = (uint64_t)pl->n_ctx_seq * T * 2;
	uint64_t resid, pos, ki, vi, mask, oi = 0;
	int64_t split_last = (int64_t)p->n_layer - 2;
	bool oi_taken = false;

	if (p->override != MP_LLAMACPP_OT_FFN && p->override != MP_LLAMACPP_OT_EXPERTS && p->n_cpu_moe > 0 &&
	    (int64_t)p->n_cpu_moe - 1 < split_last)
		split_last = (int64_t)p->n_cpu_moe - 1;
	mp_ggml_dyn_init(&a, p->backend == MP_LLAMACPP_CUDA ? 128 : 32);
	resid = mp_ggml_dyn_take(&a, row);
	pos = mp_ggml_dyn_take(&a, T * 4);
	ki = mp_ggml_dyn_take(&a, T * 8);
	vi = mp_ggml_dyn_take(&a, T * 8);
	mask = mp_ggml_dyn_take(&a, mask_b);
	if (split_last < 0) {
		oi = mp_ggml_dyn_take(&a, T * 4);
		oi_taken = true;
	}
	for (uint32_t il = 0; il < p->n_layer; il++) {
		bool last = il + 1 == p->n_layer, here = p->override == MP_LLAMACPP_OT_NONE && il >= p->n_cpu_moe;
		uint64_t norm, q, q2, kc, k2, vc, fa, ao, inp, as, wn, dc, mo, gate, up, glu;

		norm = mp_ggml_dyn_take(&a, row);
		q = mp_ggml_dyn_take(&a, row);
		q2 = mp_ggml_dyn_take(&a, row);
		mp_ggml_dyn_give(&a, q, row);
		vc = mp_ggml_dyn_take(&a, vb);
		kc = mp_ggml_dyn_take(&a, kb);
		mp_ggml_dyn_give(&a, norm, row);
		k2 = mp_ggml_dyn_take(&a, kb);
		mp_ggml_dyn_give(&a, kc, kb);
		if (last)
			mp_ggml_dyn_give(&a, pos, T * 4);
		mp_ggml_dyn_give(&a, k2, kb);
		if (last)
			mp_ggml_dyn_give(&a, ki, T * 8);
		mp_ggml_dyn_give(&a, vc, vb);
		if (last)
			mp_ggml_dyn_give(&a, vi, T * 8);
		fa = mp_ggml_dyn_take(&a, fa_b);
		mp_ggml_dyn_give(&a, q2, row);
		if (last)
			mp_ggml_dyn_give(&a, mask, mask_b);
		ao = mp_ggml_dyn_take(&a, row);
		mp_ggml_dyn_give(&a, fa, fa_b);
		if (last) {
			uint64_t g2;
			inp = mp_ggml_dyn_take(&a, row);
			mp_ggml_dyn_give(&a, ao, row);
			g2 = mp_ggml_dyn_take(&a, row);
			mp_ggml_dyn_give(&a, resid, row);
			if (oi_taken)
				mp_ggml_dyn_give(&a, oi, T * 4);
			mp_ggml_dyn_give(&a, g2, row);
		} else {
			inp = ao;
			mp_ggml_dyn_give(&a, resid, row);
		}
		norm = mp_ggml_dyn_take(&a, row);
		if (p->override == MP_LLAMACPP_OT_FFN) {
			mp_ggml_dyn_give(&a, norm, row);
			dc = mp_ggml_dyn_take(&a, down_b);
			wn = mp_ggml_dyn_take(&a, T * k * 4);
			if ((int64_t)il == split_last) {
				oi = mp_ggml_dyn_take(&a, T * 4);
				oi_taken = true;
			}
			mp_ggml_dyn_give(&a, wn, T * k * 4);
		} else {
			router_replay(&a, T, E, k, &as, &wn);
			if (here) {
				gate = mp_ggml_dyn_take(&a, act);
				up = mp_ggml_dyn_take(&a, act);
				mp_ggml_dyn_give(&a, norm, row);
				glu = mp_ggml_dyn_take(&a, act);
				mp_ggml_dyn_give(&a, gate, act);
				mp_ggml_dyn_give(&a, up, act);
				dc = mp_ggml_dyn_take(&a, down_b);
				mp_ggml_dyn_give(&a, glu, act);
				mp_ggml_dyn_give(&a, as, T * E * 4);
			} else {
				mp_ggml_dyn_give(&a, norm, row);
				mp_ggml_dyn_give(&a, as, T * E * 4);
				dc = mp_ggml_dyn_take(&a, down_b);
				if ((int64_t)il == split_last) {
					oi = mp_ggml_dyn_take(&a, T * 4);
					oi_taken = true;
				}
			}
			mp_ggml_dyn_give(&a, wn, T * k * 4);
		}
		mo = mp_ggml_dyn_take(&a, row);
		mp_ggml_dyn_give(&a, dc, down_b);
		mp_ggml_dyn_give(&a, inp, row);
		resid = mo;
	}
	if (pl->layer_device[p->n_layer] == slot)
		(void)mp_ggml_dyn_take(&a, T * p->n_vocab * 4);
	*out = a.max_size;
	return !a.overflow;
}

/*
 * The compute buffer a graph reserve takes on each device (llama-context.cpp sched_reserve: the worst case is n_ubatch
 * tokens of one sequence with one output). A model, not the allocator: ggml-alloc places the graph's tensors with
 * reuse, so the reserve is the widest moment of the graph, plus what the scheduler keeps beside it. Measured against
 * llama.cpp's CPU and RPC backends (tests/ref/llamacpp/runs.json; tests/ref/llamacpp/README.md has the errors per class).
 *
 * A device that runs layers: its attention masks (n_kv x n_ubatch, f16 with flash attention, f32 without;
 * build_attn_inp_kq_mask, one per cache kind its layers use: the host holds every mask, as the inputs are set there),
 * and either the feed-forward moment (the layer input and the residual, the norm's output and its copy, and three
 * n_ff-wide activations: gate, up and their product, fp32, per token) or, without flash attention, the score matrix
 * (n_kv x n_ubatch x n_head, fp32) with the attention's inputs. A GPU does not hold the host's token-embedding
 * gather (one n_embd row per token less). A GPU that runs one layer only, its input a split input the scheduler
 * copied from the device before (ggml-backend.cpp split_graph pass 5), has no earlier layer's freed blocks to
 * place the moment among: two activations of the width and two rows of n_embd.
 *
 * The scheduler's copies: every tensor a split reads from another device is copied into the split's device (the
 * residual stream or the gathered embeddings, the masks, the positions); with pipeline parallelism each such copy and
 * each graph input on the host (tokens, positions, the embeddings input, the masks) is kept 4 times, flagged
 * output so ggml-alloc never reuses it (ggml_set_output in split_graph), above the moment. Without it the copy is
 * an ordinary node, freed after its last use, inside the moment.
 *
 * -nkvo: the attention runs on the GPU with the host's K and V (the ops go where their inputs are computed; the cache
 * is no weight), so each layer's whole K and V views are copied in for its attention: that moment (the layer input,
 * Q, the output and the two copies) where it is wider than the feed-forward's.
 *
 * A device whose layers are cut into many splits (-nkvo, overrides) copies each mask in at the split of its kind's
 * first layer and frees it after the last, so two kinds whose layers do not interleave hold one mask at a time.
 *
 * Tensor overrides: the host runs the feed-forward of the layers whose FFN weights it keeps (the op goes where the
 * weight is: ggml_backend_sched_backend_id_from_cur "1.wgt"); with every layer offloaded its buffer is ggml-alloc's
 * placement replayed (host_ffn_replay). A GPU whose layers' FFN are all on the host keeps the attention's moment:
 * the residual, the norm, Q and its roped (or normed) copy, K and V then taking the Q product's freed block; a fused
 * qkv projection's output is held whole (n_embd + K + V wide), and a MoE's selected experts' outputs come back
 * unweighted (n_embd x n_expert_used per token: the weighting and the sum have no weight of their own and run on
 * the GPU).
 *
 * The device of the output layer ends on the logits: n_outputs x n_vocab fp32 beside the last residual, with
 * n_outputs = n_ubatch in the reserve (llama-context.cpp sched_reserve: n_outputs_pp = min(n_ubatch, n_outputs_max),
 * n_outputs_max = n_batch), every mask freed by then.
 * Each term's source: src/llama-graph.cpp (build_attn_mha, build_ffn, build_moe_ffn, build_inp_embd).
 */
static bool compute_bytes(const mp_llamacpp_params *p, const mp_llamacpp_plan *pl, uint32_t slot, uint64_t *out)
{
	uint64_t T = pl->n_ubatch, n_kv = pl->n_ctx_seq;
	uint64_t mask_bytes = p->flash_attn ? 2 : 4, mask, mask_all, ffn, attn, width, moe, peak, row = T * p->n_embd * 4;
	uint64_t n_embd = p->n_embd, copies = pipeline_parallel(p, pl) ? 4 : 1, inputs, leafs;
	uint32_t layers = 0, first[2] = { UINT32_MAX, UINT32_MAX }, last[2] = { 0, 0 };
	bool host_runs_ffn = host_ffn(p), many_splits = copies == 1 && (!p->kv_offload || host_runs_ffn);
	uint64_t kind_mask[2], logits = T * p->n_vocab * 4;

	/* the attention masks: n_kv x n_ubatch (build_attn_inp_kq_mask; f16 for flash attention), one per cache kind
	 * (0 the full cache, 1 the SWA cache) */
	kind_mask[0] = n_kv * T * mask_bytes;
	kind_mask[1] = (uint64_t)pl->kv_size_swa * T * mask_bytes;
	for (uint32_t il = 0; il < p->n_layer; il++) {
		uint32_t k = p->is_swa[il] && pl->kv_size_swa ? 1 : 0;
		if (pl->layer_device[il] == slot)
			layers++;
		if (pl->layer_device[il] == slot || slot == 0) {
			if (first[k] == UINT32_MAX)
				first[k] = il;
			last[k] = il;
		}
	}
	mask_all = kind_mask[0] + kind_mask[1];
	mask = slot == 0 ? mask_all : (first[0] != UINT32_MAX ? kind_mask[0] : 0) + (first[1] != UINT32_MAX ? kind_mask[1] : 0);
	/* a device whose layers are cut into many splits (-nkvo, overrides) copies each mask in at the split of its first
	 * layer and frees it after its last: two kinds whose layers do not interleave (gemma3's 5 SWA layers, then one
	 * full) never hold their masks at once */
	if (slot != 0 && many_splits && first[0] != UINT32_MAX && first[1] != UINT32_MAX &&
	    (last[0] < first[1] || last[1] < first[0]))
		mask = kind_mask[0] > kind_mask[1] ? kind_mask[0] : kind_mask[1];
	/* the graph inputs the host sets (llama-graph.cpp: tokens, the n_embd x n_tokens embeddings input, positions,
	 * the masks) */
	leafs = mask_all + row + 2 * T * 4;
	if (layers == 0) {
		if (slot != 0) {
			*out = 0; /* a GPU that holds only the output layer: its logits row (one output) */
			return true;
		}
		/* the host with every layer offloaded: the inputs (the masks, the token embeddings it gathers); with -nkvo the
		 * attention runs where the cache is, and a fused qkv projection's output comes over whole (K and V are views
		 * of it) */
		*out = mask + (p->learned_positions ? 3 : 2) * row;
		if (!p->kv_offload && p->fused_qkv)
			*out += T * 4 * ((uint64_t)n_embd + p->n_embd_k_gqa[0] + p->n_embd_v_gqa[0]);
		if (copies > 1) /* the inputs kept 4 times, the gathers once */
			*out = copies * leafs + (p->learned_positions ? 2 : 1) * row;
		if (host_runs_ffn) {
			/* the feed-forward of the kept layers: ggml-alloc's placement replayed (host_ffn_replay) */
			uint64_t f;
			if (!host_ffn_replay(p, pl, first, kind_mask, &f))
				return false;
			if (f > *out)
				*out = f;
		}
		return true;
	}
	/* the feed-forward moment: the layer input, the residual, the norm's output and its copy, and three activations
	 * of the layer's width (gate, up, their product) in fp32 per token; a MoE layer's width is its selected experts' */
	moe = p->n_expert ? (uint64_t)p->n_ff_exp * p->n_expert_used + p->n_ff_shexp : 0;
	width = p->n_ff > moe ? p->n_ff : moe;
	/* a plain feed-forward block (up, GELU, down: gpt2) keeps two activations of its width and none of the layer's */
	ffn = p->plain_ffn ? T * 4 * (2 * width) : T * 4 * (3 * width + 4 * n_embd);
	if (slot != 0 && layers == 1 && copies == 1)
		ffn = T * 4 * ((p->plain_ffn ? 1 : 2) * width + 3 * n_embd);
	if (slot != 0 && p->override == MP_LLAMACPP_OT_FFN)
		/* the FFN runs on the host: the attention's moment (the residual, the norm, Q and its roped or normed copy,
		 * the copied-in split input and the host's result; K and V fit the Q product's freed block unless a fused
		 * qkv output holds them, and a MoE's experts' outputs come back unweighted (n_embd x n_expert_used per
		 * token: the weighting and the sum have no weight of their own and run on the GPU) */
		ffn = T * 4 * (5 * n_embd + (p->n_expert || p->fused_qkv ? p->n_embd_k_gqa[0] + p->n_embd_v_gqa[0] : 0) +
			       (p->n_expert ? (uint64_t)n_embd * p->n_expert_used : 0));
	/* without flash attention: the scores (n_kv x n_ubatch x n_head, fp32, softmax in place) and the attention's
	 * inputs */
	attn = p->flash_attn ? 0 : n_kv * T * p->n_head * 4 + T * 4 * (4 * n_embd);
	peak = ffn > attn ? ffn : attn;
	/* a GPU does not hold the host's token-embedding gather */
	if (slot != 0 && peak > row)
		peak -= row;
	if (slot != 0 && !p->kv_offload) {
		/* -nkvo: the attention reads the host's cache, and the scheduler copies the layer's whole K and V views
		 * (n_kv cells) into the GPU at the start of the attention's split, beside the layer input, Q (a view of the
		 * fused qkv output where there is one) and the attention's output */
		uint64_t krow, vrow, q = p->fused_qkv ? (uint64_t)n_embd + p->n_embd_k_gqa[0] + p->n_embd_v_gqa[0] : n_embd;
		uint64_t kv_copy;
		if (!mp_ggml_row_bytes(p->type_k, p->n_embd_k_gqa[0], &krow) ||
		    !mp_ggml_row_bytes(p->type_v, p->n_embd_v_gqa[0], &vrow))
			return false;
		kv_copy = T * 4 * (2 * n_embd + q) + n_kv * (krow + vrow);
		if (kv_copy > peak)
			peak = kv_copy;
	}
	if (slot != 0 && p->n_expert && host_ffn(p) && layers == p->n_layer && p->flash_attn && p->kv_offload &&
	    !pl->kv_size_swa && !p->fused_qkv && copies == 1)
		/* a MoE's every layer here with feed-forward work on the host: ggml-alloc's placement replayed */
		return gpu_moe_replay(p, pl, slot, out);
	if (slot == 0 || copies == 1) {
		*out = mask + peak + T * 16;
		if (pl->layer_device[p->n_layer] == slot && row + logits > *out)
			*out = row + logits;
		return true;
	}
	/* pipeline parallelism: the split's inputs (the masks of its layers, the layer input: the previous device's
	 * residual, or the host's gathers for the first, the positions) kept 4 times beside the moment */
	inputs = mask + row + T * 4;
	if (p->learned_positions && pl->layer_device[0] == slot)
		inputs += row;
	*out = copies * inputs + peak + T * 16;
	return true;
}

mp_status mp_llamacpp_plan_buffers(const mp_llamacpp_params *p, const mp_llamacpp_tensor *t, size_t n_tensors,
				   mp_llamacpp_plan *out, mp_error *err)
{
	double splits[MP_LLAMACPP_MAX_DEVICES], sum = 0;
	uint64_t first[MAX_FILES], last[MAX_FILES];
	uint32_t files = 0;
	mp_status st;

	memset(out, 0, sizeof(*out));
	if (p->n_layer == 0 || p->n_layer > MP_MAX_LAYERS)
		return mp_fail(err, MP_EINVAL, "/model", "%u layers: llama.cpp's model needs 1 to %d", p->n_layer,
			       MP_MAX_LAYERS);
	if (p->n_devices > MP_LLAMACPP_MAX_DEVICES)
		return mp_fail(err, MP_EINVAL, "/num_gpus", "%u GPUs: llama.cpp drives at most %d devices", p->n_devices,
			       MP_LLAMACPP_MAX_DEVICES);
	if (!mp_llamacpp_kv_type_ok(p->type_k) || !mp_llamacpp_kv_type_ok(p->type_v))
		return mp_fail(err, MP_EINVAL, "/kv_cache_dtype",
			       "llama.cpp's cache types are f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1");
	if ((st = mp_llamacpp_context(p, out, err)) != MP_OK)
		return st;

	/* the split points: -ts proportions, else each GPU's free memory; prefix sums normalised */
	for (uint32_t d = 0; d < p->n_devices; d++)
		sum += p->tensor_split[d];
	for (uint32_t d = 0; d < p->n_devices; d++) {
		double v = sum > 0 ? p->tensor_split[d] : (double)p->device_free_bytes[d];
		splits[d] = (d ? splits[d - 1] : 0) + v;
	}
	for (uint32_t d = 0; d < p->n_devices; d++)
		splits[d] = splits[p->n_devices - 1] > 0 ? splits[d] / splits[p->n_devices - 1] : (double)(d + 1) / p->n_devices;
	for (uint32_t il = 0; il <= p->n_layer; il++)
		out->layer_device[il] = layer_slot(p, splits, il);
	for (uint32_t il = 0; il < p->n_layer; il++)
		out->slot_layers[out->layer_device[il]]++;
	{
		int64_t ngl = p->n_gpu_layers < 0 ? (int64_t)p->n_layer + 1 : p->n_gpu_layers;
		out->gpu_layers = p->n_devices == 0 ? 0 : (uint32_t)(ngl < (int64_t)p->n_layer + 1 ? ngl : p->n_layer + 1);
	}

	/* model buffers */
	for (uint32_t f = 0; f < MAX_FILES; f++) {
		first[f] = UINT64_MAX;
		last[f] = 0;
	}
	for (size_t i = 0; i < n_tensors; i++) {
		const mp_llamacpp_tensor *x = &t[i];
		uint32_t slots[MP_LLAMACPP_SLOTS], ns = 0;
		if ((st = tensor_slots(p, out, x, i, slots, &ns, err)) != MP_OK)
			return st;
		/* token_embd again as the output (a tied model): in the host's buffer the first copy is reused */
		if (x->duplicate && slots[0] == 0)
			ns = 0;
		for (uint32_t k = 0; k < ns; k++) {
			uint32_t s = slots[k];
			if (s == 0 && p->mmap) {
				uint64_t end;
				if (!mp_add_u64(x->file_offset, x->bytes, &end))
					return mp_fail(err, MP_EOVERFLOW, "/model", "tensor %zu: offset overflows", i);
				if (x->file_offset < first[x->file])
					first[x->file] = x->file_offset;
				if (end > last[x->file])
					last[x->file] = end;
				if (x->file + 1 > files)
					files = x->file + 1;
			} else {
				uint64_t a = 0;
				if (!alloc_size(s == 0 ? MP_LLAMACPP_CPU : p->backend, x, &a) ||
				    !mp_add_u64(out->model_bytes[s], a, &out->model_bytes[s]))
					return mp_fail(err, MP_EOVERFLOW, "/model", "the model buffer overflows");
			}
		}
	}
	for (uint32_t f = 0; f < files; f++)
		if (last[f] > first[f]) {
			out->model_bytes[0] += last[f] - first[f];
			out->model_buffers_host++;
		}

	/* KV cache (llama-kv-cache.cpp, llama-kv-cache-iswa.cpp) */
	{
		uint32_t v_max = 0;
		bool any_swa = false;
		for (uint32_t il = 0; il < p->n_layer; il++) {
			if (p->n_embd_v_gqa[il] > v_max)
				v_max = p->n_embd_v_gqa[il];
			if (p->is_swa[il] && p->n_embd_k_gqa[il])
				any_swa = true;
		}
		if (any_swa) {
			uint64_t swa = (uint64_t)p->n_swa * (p->kv_unified ? (p->n_seq_max ? p->n_seq_max : 1) : 1) + out->n_ubatch;
			if (swa > out->n_ctx_seq)
				swa = out->n_ctx_seq;
			out->kv_size_swa = p->swa_full ? out->n_ctx_seq : (uint32_t)PAD(swa, 256);
		}
		for (uint32_t il = 0; il < p->n_layer; il++) {
			uint64_t cells, krow, vrow, k, v;
			uint32_t s;
			if (p->n_embd_k_gqa[il] == 0)
				continue;
			out->kv_layers++;
			cells = (uint64_t)(p->is_swa[il] ? out->kv_size_swa : out->n_ctx_seq) * out->n_stream;
			if (!mp_ggml_row_bytes(p->type_k, p->n_embd_k_gqa[il], &krow) ||
			    !mp_ggml_row_bytes(p->type_v, p->flash_attn ? p->n_embd_v_gqa[il] : v_max, &vrow))
				return mp_fail(err, MP_EINVAL, "/kv_cache_dtype",
					       "layer %u: a row of %u values is not a multiple of the cache type's block", il,
					       p->n_embd_k_gqa[il]);
			if (!mp_mul_u64(krow, cells, &k) || !mp_mul_u64(vrow, cells, &v))
				return mp_fail(err, MP_EOVERFLOW, "/sequence_length", "the KV cache overflows");
			s = p->kv_offload ? out->layer_device[il] : 0;
			{
				uint64_t ka, va;
				mp_llamacpp_backend b = s == 0 ? MP_LLAMACPP_CPU : p->backend;
				uint64_t al = b == MP_LLAMACPP_CUDA ? 128 : 32;
				ka = PAD(k, al);
				va = PAD(v, al);
				out->kv_bytes[s] += ka + va;
				if (p->is_swa[il])
					out->kv_bytes_swa[s] += ka + va;
			}
			if (p->is_swa[il]) {
				out->kv_layers_swa++;
				out->k_bytes_swa += k;
				out->v_bytes_swa += v;
			} else {
				out->k_bytes += k;
				out->v_bytes += v;
			}
		}
	}

	/* output buffer (llama-context.cpp output_reserve): logits of n_seq_max outputs, fp32 */
	out->output_bytes = (uint64_t)p->n_vocab * (p->n_seq_max ? p->n_seq_max : 1) * 4;

	out->sched_copies = pipeline_parallel(p, out) ? 4 : 1;
	for (uint32_t s = 0; s <= p->n_devices; s++) {
		if (!compute_bytes(p, out, s, &out->compute_bytes[s]))
			return mp_fail(err, MP_EOVERFLOW, "/model", "the compute buffer overflows");
		out->total_bytes[s] = out->model_bytes[s] + out->kv_bytes[s] + out->compute_bytes[s] +
				      (s == 0 ? out->output_bytes : 0);
	}
	return MP_OK;
}

static bool fits(const mp_llamacpp_params *p, const mp_llamacpp_plan *pl, const uint64_t *budget)
{
	for (uint32_t d = 1; d <= p->n_devices; d++)
		if (pl->total_bytes[d] > budget[d])
			return false;
	return true;
}

/*
 * The plan of q in *out and whether it fits; a pipeline-parallel plan that does not is planned again without it, as
 * llama.cpp does when the compute buffers fail to allocate (llama-context.cpp sched_reserve: "compute buffer
 * allocation failed, retrying without pipeline parallelism"), and *out says so (pipeline_fallback).
 */
static mp_status plan_fits(mp_llamacpp_params *q, const mp_llamacpp_tensor *t, size_t n_tensors, const uint64_t *budget,
			   mp_llamacpp_plan *out, bool *ok, mp_error *err)
{
	mp_status st;
	bool was = q->no_pipeline;

	if ((st = mp_llamacpp_plan_buffers(q, t, n_tensors, out, err)) != MP_OK)
		return st;
	*ok = fits(q, out, budget);
	if (*ok || out->sched_copies == 1)
		return MP_OK;
	q->no_pipeline = true;
	st = mp_llamacpp_plan_buffers(q, t, n_tensors, out, err);
	q->no_pipeline = was;
	if (st != MP_OK)
		return st;
	*ok = fits(q, out, budget);
	out->pipeline_fallback = true;
	return MP_OK;
}

mp_status mp_llamacpp_max_gpu_layers(const mp_llamacpp_params *p, const mp_llamacpp_tensor *t, size_t n_tensors,
				     const uint64_t *budget_bytes, int32_t *ngl, mp_llamacpp_plan *out, mp_error *err)
{
	bool ok;

	mp_llamacpp_params q = *p;
	mp_status st;

	*ngl = -1;
	/* the GPU totals grow with -ngl (each layer adds its weights and its KV): bisect the largest that fits */
	{
		int32_t lo = 0, hi = (int32_t)p->n_layer + 1;
		q.n_gpu_layers = hi;
		if ((st = plan_fits(&q, t, n_tensors, budget_bytes, out, &ok, err)) != MP_OK)
			return st;
		if (ok) {
			*ngl = hi;
			return MP_OK;
		}
		q.n_gpu_layers = 0;
		if ((st = mp_llamacpp_plan_buffers(&q, t, n_tensors, out, err)) != MP_OK)
			return st;
		if (!fits(&q, out, budget_bytes))
			return MP_OK;
		while (hi - lo > 1) {
			int32_t mid = lo + (hi - lo) / 2;
			q.n_gpu_layers = mid;
			if ((st = mp_llamacpp_plan_buffers(&q, t, n_tensors, out, err)) != MP_OK)
				return st;
			if (fits(&q, out, budget_bytes))
				lo = mid;
			else
				hi = mid;
		}
		q.n_gpu_layers = lo;
		*ngl = lo;
		return mp_llamacpp_plan_buffers(&q, t, n_tensors, out, err);
	}
}

mp_status mp_llamacpp_max_context(const mp_llamacpp_params *p, const mp_llamacpp_tensor *t, size_t n_tensors,
				  const uint64_t *budget_bytes, uint32_t limit, uint32_t *n_ctx, mp_error *err)
{
	mp_llamacpp_params q = *p;
	static const uint32_t step = MP_LLAMACPP_CTX_PAD;
	uint32_t lo = 0, hi = limit / step;
	mp_llamacpp_plan pl;
	mp_status st;
	bool ok;

	*n_ctx = 0;
	if (hi == 0)
		return MP_OK;
	q.n_ctx = hi * step;
	if ((st = plan_fits(&q, t, n_tensors, budget_bytes, &pl, &ok, err)) != MP_OK)
		return st;
	if (ok) {
		*n_ctx = hi * step;
		return MP_OK;
	}
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		q.n_ctx = mid * step;
		if ((st = plan_fits(&q, t, n_tensors, budget_bytes, &pl, &ok, err)) != MP_OK)
			return st;
		if (ok)
			lo = mid;
		else
			hi = mid;
	}
	*n_ctx = lo * step;
	return MP_OK;
}

mp_status mp_llamacpp_check_cache_types(const mp_llamacpp_params *p, const char *pointer_k, const char *pointer_v,
					mp_error *err)
{
	mp_ggml_traits k = mp_ggml_traits_of(p->type_k), v = mp_ggml_traits_of(p->type_v);

	if (!mp_llamacpp_kv_type_ok(p->type_k))
		return mp_fail(err, MP_EINVAL, pointer_k,
			       "llama.cpp's cache types are f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1");
	if (!mp_llamacpp_kv_type_ok(p->type_v))
		return mp_fail(err, MP_EINVAL, pointer_v,
			       "llama.cpp's cache types are f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1");
	/* llama-context.cpp llama_init_from_model: "quantized V cache was requested, but this requires Flash
	 * Attention" */
	if (v.quantized && !p->flash_attn)
		return mp_fail(err, MP_EINVAL, pointer_v,
			       "a quantised V cache (%s) needs flash attention: llama.cpp refuses -ctv %s with -fa off", v.name,
			       v.name);
	if (p->flash_attn && k.quantized && p->n_embd_head_k % k.block_values != 0)
		return mp_fail(err, MP_EINVAL, pointer_k,
			       "K cache type %s with block size %u does not divide n_embd_head_k=%u (llama.cpp refuses it)",
			       k.name, k.block_values, p->n_embd_head_k);
	if (p->flash_attn && v.quantized && p->n_embd_head_v % v.block_values != 0)
		return mp_fail(err, MP_EINVAL, pointer_v,
			       "V cache type %s with block size %u does not divide n_embd_head_v=%u (llama.cpp refuses it)",
			       v.name, v.block_values, p->n_embd_head_v);
	return MP_OK;
}

/* ----- speed bounds ------------------------------------------------------------------------------------- */

/* Values a tensor holds (its bytes over the type's block). */
static double tensor_values(const mp_llamacpp_tensor *x)
{
	mp_ggml_traits tr = mp_ggml_traits_of(x->type);

	return tr.block_bytes ? (double)x->bytes / tr.block_bytes * tr.block_values : 0;
}

/* The expected share of E experts that `tokens` tokens, each choosing k, touch: 1 - (1 - k/E)^tokens. */
static double expert_share(uint32_t k, uint32_t e, double tokens)
{
	if (e == 0 || k >= e)
		return 1;
	return 1 - pow(1 - (double)k / e, tokens);
}

static void phase_close(mp_llamacpp_phase *ph, const mp_llamacpp_speed_req *rq, uint32_t slots)
{
	ph->known = true;
	ph->seconds_total = 0;
	for (uint32_t s = 0; s < slots; s++) {
		const mp_llamacpp_rate *r = &rq->rate[s];
		double tb, tf;

		if (ph->bytes[s] == 0 && ph->flops[s] == 0)
			continue;
		if (r->bandwidth_bytes_per_second <= 0 || r->flops_per_second <= 0) {
			ph->unknown[s] = true;
			ph->known = false;
			continue;
		}
		tb = ph->bytes[s] / r->bandwidth_bytes_per_second;
		tf = ph->flops[s] / r->flops_per_second;
		ph->seconds[s] = tb > tf ? tb : tf;
		ph->compute_bound[s] = tf > tb;
		ph->seconds_total += ph->seconds[s];
	}
	if (!ph->known)
		ph->seconds_total = 0;
}

mp_status mp_llamacpp_speed_of(const mp_llamacpp_params *p, const mp_llamacpp_tensor *t, size_t n_tensors,
			       const mp_llamacpp_plan *pl, const mp_llamacpp_speed_req *rq, mp_llamacpp_speed *out,
			       mp_error *err)
{
	double seqs = rq->sequences, ctx = (double)rq->context_tokens, prompt = (double)rq->prompt_tokens;
	double tokens = seqs * prompt, ub = pl->n_ubatch ? pl->n_ubatch : 512;
	double ubatches = ceil(tokens / ub), frac_dec, frac_pre;
	double head_flops = 2.0 * p->n_head * ((double)p->n_embd_head_k + p->n_embd_head_v);
	double gather_dec = 0, gather_pre = 0;
	uint32_t slots = p->n_devices + 1;
	mp_status st;

	memset(out, 0, sizeof(*out));
	if (rq->sequences == 0)
		return mp_fail(err, MP_EINVAL, "/batch_size", "the speed of a placement needs at least one sequence");
	if (slots > MP_LLAMACPP_SLOTS)
		return mp_fail(err, MP_EINVAL, "/num_gpus", "%u GPUs: llama.cpp drives at most %d devices", p->n_devices,
			       MP_LLAMACPP_MAX_DEVICES);
	frac_dec = expert_share(p->n_expert_used, p->n_expert, seqs);
	frac_pre = expert_share(p->n_expert_used, p->n_expert, ub < tokens ? ub : tokens);
	out->expert_fraction_decode = frac_dec;
	/* the weights: each tensor on the device that holds it; the tied output is read where the output layer is */
	for (size_t i = 0; i < n_tensors; i++) {
		const mp_llamacpp_tensor *x = &t[i];
		uint32_t sl[MP_LLAMACPP_SLOTS], ns = 0;
		double bytes = (double)x->bytes, values = tensor_values(x);
		double active = x->expert && p->n_expert ? (double)p->n_expert_used / p->n_expert : 1;

		if ((st = tensor_slots(p, pl, x, i, sl, &ns, err)) != MP_OK)
			return st;
		if (x->every_layer) /* rope_freqs: a table the rotation reads, no matrix product */
			continue;
		if (x->layer == MP_LLAMACPP_INPUT) {
			/* a gather: the rows of the tokens of the step (rows = values / ne0) */
			double rows = x->ne0 ? values / (double)x->ne0 : 1, row = rows > 0 ? bytes / rows : 0;
			gather_dec += row * seqs;
			gather_pre += row * tokens;
			continue;
		}
		if (ns == 0 || sl[0] >= slots)
			continue;
		out->decode.bytes[sl[0]] += bytes * (x->expert ? frac_dec : 1);
		out->prefill.bytes[sl[0]] += bytes * (x->expert ? frac_pre : 1) * ubatches;
		out->decode.flops[sl[0]] += 2 * values * active * seqs;
		out->prefill.flops[sl[0]] += 2 * values * active * tokens;
	}
	/* the caches: read where each layer's cache is (the host with -nkvo) */
	for (uint32_t il = 0; il < p->n_layer; il++) {
		uint64_t krow, vrow;
		uint32_t s;
		double cells, window, read_pre = 0, attn_pre = 0, row;

		if (p->n_embd_k_gqa[il] == 0)
			continue;
		if (!mp_ggml_row_bytes(p->type_k, p->n_embd_k_gqa[il], &krow) ||
		    !mp_ggml_row_bytes(p->type_v, p->n_embd_v_gqa[il], &vrow))
			return mp_fail(err, MP_EINVAL, "/kv_cache_dtype", "layer %u: a row the cache type cannot hold", il);
		s = p->kv_offload ? pl->layer_device[il] : 0;
		if (s >= slots)
			continue;
		row = (double)(krow + vrow);
		window = p->is_swa[il] && p->n_swa ? (double)p->n_swa : 0;
		cells = window > 0 && window < ctx ? window : ctx;
		out->decode.bytes[s] += seqs * cells * row;
		out->decode.flops[s] += seqs * cells * head_flops;
		/* prefill: each ubatch of a prompt reads the cells before it and its own; the scores over the causal
		 * half of the prompt (a window caps both) */
		for (double done = 0; done < prompt; done += ub) {
			double upto = done + ub < prompt ? done + ub : prompt;
			read_pre += window > 0 && window + ub < upto ? window + ub : upto;
		}
		if (window > 0 && window < prompt)
			attn_pre = window * (window + 1) / 2 + (prompt - window) * window;
		else
			attn_pre = prompt * (prompt + 1) / 2;
		out->prefill.bytes[s] += seqs * (read_pre + prompt) * row;
		out->prefill.flops[s] += seqs * attn_pre * head_flops;
	}
	/* the host's embedding gather (a row per token) is its only work when every layer and cache is elsewhere: too
	 * small to bound the step, and charged only beside the host's own layers */
	if (out->decode.bytes[0] > 0 || out->decode.flops[0] > 0) {
		out->decode.bytes[0] += gather_dec;
		out->prefill.bytes[0] += gather_pre;
	}
	phase_close(&out->decode, rq, slots);
	phase_close(&out->prefill, rq, slots);
	if (out->decode.known && out->decode.seconds_total > 0) {
		out->decode_tokens_per_second_per_sequence = 1 / out->decode.seconds_total;
		out->decode_tokens_per_second_total = seqs / out->decode.seconds_total;
	}
	if (out->prefill.known && out->prefill.seconds_total > 0)
		out->prefill_tokens_per_second = tokens / out->prefill.seconds_total;
	return MP_OK;
}

/* ----- Ollama 0.32.15 ------------------------------------------------------------------------------------ */

#define GIB_U (UINT64_C(1) << 30)
#define MIB_U (UINT64_C(1) << 20)

uint32_t mp_ollama_default_num_ctx(uint64_t total_vram_bytes)
{
	/* server/routes.go: "slightly lower thresholds (47/23 GiB vs. 48/24 GiB)" */
	if (total_vram_bytes >= 47 * GIB_U)
		return 262144;
	if (total_vram_bytes >= 23 * GIB_U)
		return 32768;
	return 4096;
}

uint64_t mp_ollama_predict_server_vram(uint64_t file_bytes, uint64_t block_count, uint64_t head_count_kv_min,
				       uint64_t head_dim, uint64_t num_ctx)
{
	uint64_t kv = 2, out;

	if (head_count_kv_min == 0)
		head_count_kv_min = 1;
	if (!mp_mul_u64(kv, block_count, &kv) || !mp_mul_u64(kv, head_count_kv_min, &kv) ||
	    !mp_mul_u64(kv, head_dim, &kv) || !mp_mul_u64(kv, num_ctx, &kv) || !mp_mul_u64(kv, 2, &kv) ||
	    !mp_add_u64(file_bytes, kv, &out))
		return UINT64_MAX;
	return out;
}

/* sched.go generationBatchFits */
static bool ollama_batch_fits(uint32_t batch, uint64_t predicted, uint64_t available)
{
	uint64_t threshold, surcharge;

	if (predicted == 0 || available == 0)
		return true;
	threshold = available / 100 * 80 + available % 100 * 80 / 100; /* available * 80 / 100 without overflow */
	if (predicted > threshold)
		return false;
	if (batch >= 2048 && predicted > available / 100 * 60 + available % 100 * 60 / 100)
		return false;
	if (batch >= 1024 && batch < 2048 && predicted > available / 100 * 75 + available % 100 * 75 / 100)
		return false;
	surcharge = batch >= 2048 ? 2 * GIB_U : batch >= 1024 ? 768 * MIB_U : 0;
	return surcharge <= threshold - predicted;
}

uint32_t mp_ollama_auto_num_batch(uint64_t effective_ctx, uint64_t predicted_vram, uint64_t available,
				  bool flash_attention_disabled, bool cuda, uint64_t smallest_gpu_bytes)
{
	uint32_t batch;

	if (flash_attention_disabled && cuda)
		return effective_ctx > 4096 && smallest_gpu_bytes > 0 && smallest_gpu_bytes <= 8 * GIB_U ? 256 : 512;
	batch = effective_ctx > 32768 ? 2048 : effective_ctx > 4096 ? 1024 : 512;
	while (batch > 512 && !ollama_batch_fits(batch, predicted_vram, available))
		batch = batch > 1024 ? 1024 : 512;
	return batch;
}
