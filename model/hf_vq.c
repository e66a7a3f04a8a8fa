/*
 * hf_vq.c: the image tokenizers (VQ-VAEs) of the early-fusion models, under transformers 5.24's names, and the
 * models built around them: Chameleon (modeling_chameleon.py: ChameleonVQVAE's encoder, Llama's decoder with per-head
 * LayerNorms on q and k). A VQ-VAE runs once per image, outside the decoder: every tensor is vision (its kind, its
 * component), replicated, read by no decoder step, and it keeps nothing per token.
 */
#include <stdio.h>
#include <string.h>

#include "hf_internal.h"
#include "mpm_types.h"
#include "model.h"

#define VQ_MAX_LEVELS 16
#define VQ_MAX_ROWS 224

/*
 * A VQ-VAE's shape (ChameleonVQVAEConfig; JanusVQVAEConfig the same keys): base_channels, channel_multiplier (one per
 * resolution level), num_res_blocks ResNet blocks a level, in_channels, latent_channels (twice at conv_out with
 * double_latent), embed_dim x num_embeddings codebook, and which levels' blocks are followed by an attention block.
 */
typedef struct vq_shape {
	uint64_t base, in_ch, latent, embed_dim, codes, blocks, levels;
	uint64_t mult[VQ_MAX_LEVELS];
	bool double_latent, mid_attn;
	bool attn[VQ_MAX_LEVELS];	/* the level's blocks each carry an AttnBlock */
} vq_shape;

/* The tensors of a VQ-VAE as (path, leaf, shape) rows with their counts: the levels repeat blocks of few shapes, so
 * they are gathered before they go into the inventory (one entry a row, not one a block). */
typedef struct vq_rows {
	size_t n;
	bool full;
	struct {
		const char *path, *leaf;
		uint64_t dims[4];
		unsigned ndim;
		uint64_t count;
	} r[VQ_MAX_ROWS];
} vq_rows;

static void vq_put(vq_rows *rs, const char *path, const char *leaf, const uint64_t *d, unsigned nd)
{
	uint64_t dims[4] = {0};

	memcpy(dims, d, nd * sizeof(dims[0]));
	for (size_t i = 0; i < rs->n; i++)
		if (rs->r[i].path == path && strcmp(rs->r[i].leaf, leaf) == 0 && rs->r[i].ndim == nd &&
		    memcmp(rs->r[i].dims, dims, sizeof(dims)) == 0) {
			rs->r[i].count++;
			return;
		}
	if (rs->n == VQ_MAX_ROWS) {
		rs->full = true;
		return;
	}
	rs->r[rs->n].path = path;
	rs->r[rs->n].leaf = leaf;
	memcpy(rs->r[rs->n].dims, dims, sizeof(dims));
	rs->r[rs->n].ndim = nd;
	rs->r[rs->n].count = 1;
	rs->n++;
}

static void vq_vec(vq_rows *rs, const char *path, const char *leaf, uint64_t n)
{
	vq_put(rs, path, leaf, (const uint64_t[]){n}, 1);
}

/* nn.Conv2d(in, out, k) named leaf_w / leaf_b: [out, in, k, k] and a bias [out]; nn.GroupNorm(32, c): [c] twice. */
static void vq_conv(vq_rows *rs, const char *path, const char *w, const char *b, uint64_t out, uint64_t in, uint64_t k)
{
	vq_put(rs, path, w, (const uint64_t[]){out, in, k, k}, 4);
	vq_vec(rs, path, b, out);
}

static void vq_norm(vq_rows *rs, const char *path, const char *w, const char *b, uint64_t c)
{
	vq_vec(rs, path, w, c);
	vq_vec(rs, path, b, c);
}

/* A ResNet block (ChameleonVQVAEEncoderResnetBlock): norm1 over in, conv1 in -> out 3x3, norm2, conv2 3x3, and a 1x1
 * nin_shortcut when in != out. */
static void vq_resnet(vq_rows *rs, const char *path, uint64_t in, uint64_t out)
{
	vq_norm(rs, path, "norm1.weight", "norm1.bias", in);
	vq_conv(rs, path, "conv1.weight", "conv1.bias", out, in, 3);
	vq_norm(rs, path, "norm2.weight", "norm2.bias", out);
	vq_conv(rs, path, "conv2.weight", "conv2.bias", out, out, 3);
	if (in != out)
		vq_conv(rs, path, "nin_shortcut.weight", "nin_shortcut.bias", out, in, 1);
}

/* An attention block (ChameleonVQVAEEncoderAttnBlock): a GroupNorm and q, k, v, proj_out 1x1 convolutions of c. */
static void vq_attn(vq_rows *rs, const char *path, uint64_t c)
{
	vq_norm(rs, path, "norm.weight", "norm.bias", c);
	vq_conv(rs, path, "q.weight", "q.bias", c, c, 1);
	vq_conv(rs, path, "k.weight", "k.bias", c, c, 1);
	vq_conv(rs, path, "v.weight", "v.bias", c, c, 1);
	vq_conv(rs, path, "proj_out.weight", "proj_out.bias", c, c, 1);
}

/*
 * The encoder (ChameleonVQVAEEncoder, JanusVQVAEEncoder) and the quantizer: conv_in in_channels -> base; per level l
 * num_res_blocks blocks from base x (1, mult...)[l] to base x mult[l] (each with an attention block where attn[l]),
 * a strided 3x3 downsample but after the last level; the middle (block_1, attn_1 when mid_attn, block_2); norm_out,
 * conv_out to latent_channels (x 2 with double_latent); quantize.embedding [num_embeddings, embed_dim], quant_conv
 * latent -> embed_dim and post_quant_conv back (1x1). Returns the last level's channels.
 */
static uint64_t vq_encoder(vq_rows *rs, const vq_shape *s)
{
	uint64_t in = s->base, out = s->base;

	vq_conv(rs, "encoder", "conv_in.weight", "conv_in.bias", s->base, s->in_ch, 3);
	for (uint64_t l = 0; l < s->levels; l++) {
		out = s->base * s->mult[l];
		for (uint64_t b = 0; b < s->blocks; b++) {
			vq_resnet(rs, "encoder.down.{i}.block.{j}", in, out);
			in = out;
			if (s->attn[l])
				vq_attn(rs, "encoder.down.{i}.attn.{j}", out);
		}
		if (l + 1 < s->levels)
			vq_conv(rs, "encoder.down.{i}.downsample", "conv.weight", "conv.bias", out, out, 3);
	}
	vq_resnet(rs, "encoder.mid.block_1", out, out);
	if (s->mid_attn)
		vq_attn(rs, "encoder.mid.attn_1", out);
	vq_resnet(rs, "encoder.mid.block_2", out, out);
	vq_norm(rs, "encoder", "norm_out.weight", "norm_out.bias", out);
	vq_conv(rs, "encoder", "conv_out.weight", "conv_out.bias", s->double_latent ? 2 * s->latent : s->latent, out, 3);
	vq_put(rs, "quantize", "embedding.weight", (const uint64_t[]){s->codes, s->embed_dim}, 2);
	vq_conv(rs, NULL, "quant_conv.weight", "quant_conv.bias", s->embed_dim, s->latent, 1);
	vq_conv(rs, NULL, "post_quant_conv.weight", "post_quant_conv.bias", s->latent, s->embed_dim, 1);
	return out;
}

/* The rows into the inventory under root (MP_TK_VISION); more rows than VQ_MAX_ROWS: a 422 naming key. */
static void vq_flush(hf_ctx *c, const char *key, vq_rows *rs, mp_model *m, uint8_t root)
{
	if (rs->full) {
		hf_fail_key(c, key, "this VQ-VAE has more distinct tensor shapes than memplan lists (224)");
		return;
	}
	for (size_t i = 0; i < rs->n; i++)
		hf_shape(m, root, rs->r[i].path, rs->r[i].leaf, MP_TK_VISION, 0, rs->r[i].dims, rs->r[i].ndim,
		         rs->r[i].count);
}

/*
 * The keys of a VQ-VAE config v with the class defaults d (d->mult, d->levels; attn and mid_attn are the caller's):
 * channel_multiplier a list of 1 to 16 positive integers, every channel count base x mult a multiple of 32 (its
 * GroupNorms have 32 groups: PyTorch refuses another) and at most 2^20.
 */
static void vq_read(hf_ctx *v, const vq_shape *d, vq_shape *s)
{
	const cJSON *cm = v->cfg ? cJSON_GetObjectItemCaseSensitive(v->cfg, "channel_multiplier") : NULL, *e;

	*s = *d;
	s->base = hf_get_u64(v, KEYS("base_channels"), d->base);
	s->in_ch = hf_get_u64(v, KEYS("in_channels"), d->in_ch);
	s->latent = hf_get_u64(v, KEYS("latent_channels"), d->latent);
	s->embed_dim = hf_get_u64(v, KEYS("embed_dim"), d->embed_dim);
	s->codes = hf_get_u64(v, KEYS("num_embeddings"), d->codes);
	s->blocks = hf_get_u64(v, KEYS("num_res_blocks"), d->blocks);
	s->double_latent = hf_get_bool(v, KEYS("double_latent"), d->double_latent);
	if (cm && !cJSON_IsNull(cm)) {
		s->levels = 0;
		if (!cJSON_IsArray(cm) || cJSON_GetArraySize(cm) < 1 || cJSON_GetArraySize(cm) > VQ_MAX_LEVELS)
			hf_fail_key(v, "channel_multiplier", "channel_multiplier must list 1 to 16 positive integers");
		if (v->st != MP_OK)
			cm = NULL;
		cJSON_ArrayForEach(e, cm)
		{
			if (!cJSON_IsNumber(e) || e->valuedouble < 1 || e->valuedouble > 65536 ||
			    e->valuedouble != (double)(uint64_t)e->valuedouble) {
				hf_fail_key(v, "channel_multiplier", "channel_multiplier must list 1 to 16 positive integers");
				break;
			}
			s->mult[s->levels++] = (uint64_t)e->valuedouble;
		}
	}
	if (v->st == MP_OK && (s->base == 0 || s->base % 32 != 0 || s->base > (UINT64_C(1) << 16)))
		hf_fail_key(v, "base_channels",
		            "base_channels must be a positive multiple of 32 up to 65536 (the VQ-VAE's GroupNorms have 32 "
		            "groups)");
	for (uint64_t l = 0; l < s->levels && v->st == MP_OK; l++)
		if (s->base * s->mult[l] > (UINT64_C(1) << 20))
			hf_fail_key(v, "channel_multiplier", "base_channels x channel_multiplier must stay at most 2^20");
	if (v->st == MP_OK && (s->in_ch == 0 || s->in_ch > 256 || s->latent == 0 || s->latent > (UINT64_C(1) << 20) ||
	                       s->embed_dim == 0 || s->embed_dim > (UINT64_C(1) << 20) || s->codes == 0 ||
	                       s->codes > (UINT64_C(1) << 24) || s->blocks == 0 || s->blocks > 64))
		hf_fail_key(v, s->in_ch == 0 || s->in_ch > 256                           ? "in_channels"
		               : s->latent == 0 || s->latent > (UINT64_C(1) << 20)       ? "latent_channels"
		               : s->embed_dim == 0 || s->embed_dim > (UINT64_C(1) << 20) ? "embed_dim"
		               : s->codes == 0 || s->codes > (UINT64_C(1) << 24)         ? "num_embeddings"
		                                                                         : "num_res_blocks",
		            "the VQ-VAE needs 1 to 256 in_channels, latent_channels and embed_dim from 1 to 2^20, 1 to 2^24 "
		            "num_embeddings and 1 to 64 num_res_blocks");
}

/*
 * Chameleon (ChameleonConfig; ChameleonForConditionalGeneration, modeling_chameleon.py): Llama's decoder (vocab 65536,
 * hidden 4096, FFN 11008, 32 layers, 32 heads, kv 32, 4096 positions, untied; attention_bias on q, k, v and o,
 * mlp_bias) whose heads are hidden_size // num_attention_heads (ChameleonAttention raises ValueError when they do not
 * divide; a head_dim key is not read: ChameleonConfig has none) and whose q_norm and k_norm are ChameleonLayerNorm((heads, head_dim)) and
 * ((kv_heads, head_dim)): a weight and a bias of that shape each. swin_norm moves the norms, not their shapes. Under
 * model.vqmodel. the VQ-VAE's encoder (vq_config, ChameleonVQVAEConfig: base 128, multipliers (1, 1, 2, 2, 4), 2
 * blocks a level, 3 in_channels, 256 latent channels, a codebook of 8192 x 256; attention blocks on the levels whose
 * resolution, 512 halved per level, is in attn_resolutions (None), and in the middle, with attn_type "vanilla").
 * vocabulary_map is required: transformers 5.24 builds nothing without it (ChameleonConfig reads
 * vocabulary_map.get("<image>"), AttributeError on None).
 */
void mpm_read_chameleon(hf_ctx *c, mp_model *m)
{
	static const mpm_dense d = {.vocab_size = 65536,
	                            .hidden_size = 4096,
	                            .intermediate_size = 11008,
	                            .num_layers = 32,
	                            .num_heads = 32,
	                            .num_kv_heads = 32,
	                            .max_positions = 4096,
	                            .norms = 2,
	                            .modules = MPM_ATTENTION_BIAS | MPM_MLP_BIAS_KEY};
	static const vq_shape dv = {.base = 128, .in_ch = 3, .latent = 256, .embed_dim = 256, .codes = 8192,
	                            .blocks = 2, .levels = 5, .mult = {1, 1, 2, 2, 4}};
	char pointer[MP_POINTER_MAX];
	const cJSON *vm = cJSON_GetObjectItemCaseSensitive(c->cfg, "vocabulary_map"), *ar, *at, *e;
	hf_ctx v;
	vq_shape s;
	vq_rows rs = {0};
	uint64_t res;

	if (!cJSON_IsObject(vm)) {
		hf_fail_key(c, "vocabulary_map",
		            "vocabulary_map is required (an object of the image tokenizer's token names and ids, "
		            "\"<image>\" among them, as the checkpoint's config.json has it): transformers 5.24 cannot build "
		            "ChameleonConfig without it (AttributeError: 'NoneType' object has no attribute 'get')");
		return;
	}
	mpm_read_dense(c, &d, m);
	if (c->st == MP_OK && (m->num_heads == 0 || m->hidden_size % m->num_heads != 0))
		hf_fail_key(c, "num_attention_heads",
		            "hidden_size must be a multiple of num_attention_heads (ChameleonAttention raises ValueError)");
	if (c->st != MP_OK)
		return;
	m->head_dim = m->hidden_size / m->num_heads;
	m->qk_norm_full = m->qk_norm_heads = m->qk_norm_heads_bias = true;
	if (!hf_sub_config(c, "vq_config", pointer, sizeof(pointer), &v))
		return;
	vq_read(&v, &dv, &s);
	res = hf_get_u64(&v, KEYS("resolution"), 512);
	at = v.cfg ? cJSON_GetObjectItemCaseSensitive(v.cfg, "attn_type") : NULL;
	if (at && !cJSON_IsNull(at) && !cJSON_IsString(at))
		hf_fail_key(&v, "attn_type", "attn_type must be a string (\"vanilla\" builds the attention blocks)");
	s.mid_attn = !at || cJSON_IsNull(at) || (cJSON_IsString(at) && strcmp(at->valuestring, "vanilla") == 0);
	ar = v.cfg ? cJSON_GetObjectItemCaseSensitive(v.cfg, "attn_resolutions") : NULL;
	if (ar && !cJSON_IsNull(ar) && !cJSON_IsArray(ar))
		hf_fail_key(&v, "attn_resolutions", "attn_resolutions must be a list of resolutions or null");
	if (!cJSON_IsArray(ar) || !s.mid_attn)
		ar = NULL; /* no attention blocks on the levels */
	for (uint64_t l = 0, r = res; l < s.levels && v.st == MP_OK; l++, r /= 2) {
		s.attn[l] = false;
		cJSON_ArrayForEach(e, ar)
		{
			s.attn[l] |= cJSON_IsNumber(e) && e->valuedouble == (double)r;
		}
	}
	c->st = v.st;
	if (c->st != MP_OK)
		return;
	vq_encoder(&rs, &s);
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.vqmodel.");
	vq_flush(&v, "channel_multiplier", &rs, m, MP_ROOT_TOWER);
	c->st = v.st;
}
