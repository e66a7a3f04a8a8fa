/*
 * hf_vq.c: the image tokenizers (VQ-VAEs) of the early-fusion models, under transformers 5.24's names, and the
 * models built around them: Chameleon (modeling_chameleon.py: ChameleonVQVAE's encoder, Llama's decoder with per-head
 * LayerNorms on q and k) and Janus (modeling_janus.py: JanusVQVAE's encoder and decoder, a SigLIP-style tower for
 * understanding and the image-generation head). A VQ-VAE runs once per image, outside the decoder: every tensor is vision (its kind, its
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
		if ((rs->r[i].path == path || (rs->r[i].path && path && strcmp(rs->r[i].path, path) == 0)) &&
		    strcmp(rs->r[i].leaf, leaf) == 0 && rs->r[i].ndim == nd &&
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
 * latent -> embed_dim and, where n says, post_quant_conv back (1x1); the levels' blocks at n's paths. Returns the
 * last level's channels.
 */
/* Where an encoder keeps its levels' blocks (static paths, "{i}" the level, "{j}" the block) and whether a
 * post_quant_conv follows the quantizer. */
typedef struct vq_names {
	const char *block, *attn, *downsample;
	bool post_quant;
} vq_names;

/* ChameleonVQVAE's (JanusVQVAE's the same) */
static const vq_names vq_names_chameleon = {"encoder.down.{i}.block.{j}", "encoder.down.{i}.attn.{j}",
                                            "encoder.down.{i}.downsample", true};

static uint64_t vq_encoder(vq_rows *rs, const vq_shape *s, const vq_names *n)
{
	uint64_t in = s->base, out = s->base;

	vq_conv(rs, "encoder", "conv_in.weight", "conv_in.bias", s->base, s->in_ch, 3);
	for (uint64_t l = 0; l < s->levels; l++) {
		out = s->base * s->mult[l];
		for (uint64_t b = 0; b < s->blocks; b++) {
			vq_resnet(rs, n->block, in, out);
			in = out;
			if (s->attn[l])
				vq_attn(rs, n->attn, out);
		}
		if (l + 1 < s->levels)
			vq_conv(rs, n->downsample, "conv.weight", "conv.bias", out, out, 3);
	}
	vq_resnet(rs, "encoder.mid.block_1", out, out);
	if (s->mid_attn)
		vq_attn(rs, "encoder.mid.attn_1", out);
	vq_resnet(rs, "encoder.mid.block_2", out, out);
	vq_norm(rs, "encoder", "norm_out.weight", "norm_out.bias", out);
	vq_conv(rs, "encoder", "conv_out.weight", "conv_out.bias", s->double_latent ? 2 * s->latent : s->latent, out, 3);
	vq_put(rs, "quantize", "embedding.weight", (const uint64_t[]){s->codes, s->embed_dim}, 2);
	vq_conv(rs, NULL, "quant_conv.weight", "quant_conv.bias", s->embed_dim, s->latent, 1);
	if (n->post_quant)
		vq_conv(rs, NULL, "post_quant_conv.weight", "post_quant_conv.bias", s->latent, s->embed_dim, 1);
	return out;
}

/*
 * The decoder (JanusVQVAEDecoder): conv_in latent_channels -> base x mult[last]; the middle (block_1, attn_1, block_2);
 * up.{i} for the levels last to first (up.0 is the last level): num_res_blocks + 1 blocks to base x mult[level], each
 * with an attention block where attn[level], a 3x3 upsample but at the first level; norm_out, conv_out to out_ch.
 */
static void vq_decoder(vq_rows *rs, const vq_shape *s, uint64_t out_ch)
{
	uint64_t in = s->base * s->mult[s->levels - 1];

	vq_conv(rs, "decoder", "conv_in.weight", "conv_in.bias", in, s->latent, 3);
	vq_resnet(rs, "decoder.mid.block_1", in, in);
	vq_attn(rs, "decoder.mid.attn_1", in);
	vq_resnet(rs, "decoder.mid.block_2", in, in);
	for (uint64_t l = s->levels; l-- > 0;) {
		uint64_t out = s->base * s->mult[l];

		for (uint64_t b = 0; b <= s->blocks; b++) {
			vq_resnet(rs, "decoder.up.{i}.block.{j}", in, out);
			in = out;
			if (s->attn[l])
				vq_attn(rs, "decoder.up.{i}.attn.{j}", out);
		}
		if (l > 0)
			vq_conv(rs, "decoder.up.{i}.upsample", "conv.weight", "conv.bias", out, out, 3);
	}
	vq_norm(rs, "decoder", "norm_out.weight", "norm_out.bias", in);
	vq_conv(rs, "decoder", "conv_out.weight", "conv_out.bias", out_ch, in, 3);
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
	vq_encoder(&rs, &s, &vq_names_chameleon);
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.vqmodel.");
	vq_flush(&v, "channel_multiplier", &rs, m, MP_ROOT_TOWER);
	c->st = v.st;
}

/* nn.Linear(in, out) and its bias into rows (a tower's linear: out x in, [out]). */
static void vq_linear(vq_rows *rs, const char *path, const char *w, const char *b, uint64_t out, uint64_t in)
{
	vq_put(rs, path, w, (const uint64_t[]){out, in}, 2);
	vq_vec(rs, path, b, out);
}

/*
 * Janus (JanusConfig, JanusForConditionalGeneration; modeling_janus.py; tied by default): text_config's decoder
 * (Llama's class defaults) under model.language_model., lm_head at the top; the understanding tower under
 * model.vision_model. (JanusVisionConfig: hidden 1024, 24 layers, 16 heads dividing it, MLP int(hidden x mlp_ratio
 * 4.0), 384 px images of 16 px patches with a position per patch, attention_bias on q, k and v, projection_layer
 * always biased, use_qk_norm's LayerNorms; planner/vision.c's SigLIP with those two flags) and its aligner (fc1 hidden
 * -> projection_dim 2048, depth - 1 hidden_layers, all biased); the VQ-VAE under model.vqmodel. (JanusVQVAEConfig:
 * ChameleonVQVAEConfig's keys with embed_dim 8 and 16384 codes, an attention block after every block of the last
 * level, the decoder to out_channels 3) and the generation modules: generation_embeddings [codes, embed_dim],
 * generation_aligner (fc1 embed_dim -> projection_dim, num_hidden_layers - 1 hidden_layers) and generation_head
 * (proj_out image_token_embed_dim -> projection_dim, vision_head -> codes), all biased.
 */
void mpm_read_janus(hf_ctx *c, mp_model *m)
{
	static const vq_shape dv = {.base = 128, .in_ch = 3, .latent = 256, .embed_dim = 8, .codes = 16384,
	                            .blocks = 2, .levels = 5, .mult = {1, 1, 2, 2, 4}, .mid_attn = true};
	char vp[MP_POINTER_MAX], qp[MP_POINTER_MAX];
	hf_ctx v, q;
	mp_vision *t = &m->vision;
	vq_shape s;
	vq_rows rs = {0};
	uint64_t h, L, heads, ch, image, patch, proj, depth, out_ch, gproj, glayers, gin;
	double ratio;

	if (!hf_wrap_read_text(c, "llama", false, m))
		return;
	m->inv.roots[MP_ROOT_DECODER] = "model.language_model.";
	hf_wrap_tie(c, m, true);
	if (!hf_sub_config(c, "vision_config", vp, sizeof(vp), &v))
		return;
	h = hf_get_u64(&v, KEYS("hidden_size"), 1024);
	L = hf_get_u64(&v, KEYS("num_hidden_layers"), 24);
	heads = hf_get_u64(&v, KEYS("num_attention_heads"), 16);
	ch = hf_get_u64(&v, KEYS("num_channels"), 3);
	image = hf_get_u64(&v, KEYS("image_size"), 384);
	patch = hf_get_u64(&v, KEYS("patch_size"), 16);
	proj = hf_get_u64(&v, KEYS("projection_dim"), 2048);
	depth = hf_get_u64(&v, KEYS("depth"), 2);
	ratio = hf_get_double(&v, v.cfg, "mlp_ratio", 4.0);
	t->attn_bias = hf_get_bool(&v, KEYS("attention_bias"), true);
	t->qk_layernorm = hf_get_bool(&v, KEYS("use_qk_norm"), false);
	if (v.st == MP_OK && (heads == 0 || h % heads != 0))
		hf_fail_key(&v, "num_attention_heads",
		            "hidden_size must be a multiple of num_attention_heads (JanusVisionAttention raises ValueError)");
	if (v.st == MP_OK && (h == 0 || h > (UINT64_C(1) << 20) || L == 0 || L > MP_MAX_LAYERS || ch == 0 || ch > 256 ||
	                      patch == 0 || patch > image || image > (UINT64_C(1) << 16) || proj == 0 ||
	                      proj > (UINT64_C(1) << 20) || depth == 0 || depth > 64 || ratio * (double)h < 1 ||
	                      ratio * (double)h > (double)(UINT64_C(1) << 24)))
		hf_fail_key(&v, h == 0 || h > (UINT64_C(1) << 20)     ? "hidden_size"
		               : L == 0 || L > MP_MAX_LAYERS           ? "num_hidden_layers"
		               : ch == 0 || ch > 256                   ? "num_channels"
		               : patch == 0 || patch > image || image > (UINT64_C(1) << 16) ? "patch_size"
		               : proj == 0 || proj > (UINT64_C(1) << 20) ? "projection_dim"
		               : depth == 0 || depth > 64                ? "depth"
		                                                         : "mlp_ratio",
		            "the Janus tower needs hidden_size from 1 to 2^20, num_hidden_layers from 1 to 1024, 1 to 256 "
		            "channels, a patch_size from 1 to image_size (at most 65536), projection_dim from 1 to 2^20, "
		            "depth from 1 to 64 and hidden_size x mlp_ratio from 1 to 2^24");
	c->st = v.st;
	if (c->st != MP_OK || !hf_sub_config(c, "vq_config", qp, sizeof(qp), &q))
		return;
	t->tower = MP_TOWER_SIGLIP;
	t->tower_root = "model.vision_model.";
	t->projector_root = "model.";
	t->hidden = h;
	t->intermediate = (uint64_t)((double)h * ratio); /* JanusVisionMLP: int(hidden_size * mlp_ratio) */
	t->layers = L;
	t->channels = ch;
	t->patch = patch;
	t->positions = (image / patch) * (image / patch);
	t->norm = MP_NORM_LAYER;
	t->patch_bias = t->post_norm = t->mlp_bias = t->projection_layer = true;
	t->projector = MP_PROJECTOR_NONE;
	t->merge = 1;
	t->out_hidden = m->hidden_size;
	vq_read(&q, &dv, &s);
	out_ch = hf_get_u64(&q, KEYS("out_channels"), 3);
	gproj = hf_get_u64(&q, KEYS("projection_dim"), 2048);
	glayers = hf_get_u64(&q, KEYS("num_hidden_layers"), 2);
	gin = hf_get_u64(&q, KEYS("image_token_embed_dim"), 2048);
	if (q.st == MP_OK && (out_ch == 0 || out_ch > 256 || gproj == 0 || gproj > (UINT64_C(1) << 20) || glayers == 0 ||
	                      glayers > 64 || gin == 0 || gin > (UINT64_C(1) << 20)))
		hf_fail_key(&q, out_ch == 0 || out_ch > 256 ? "out_channels"
		               : gproj == 0 || gproj > (UINT64_C(1) << 20) ? "projection_dim"
		               : glayers == 0 || glayers > 64              ? "num_hidden_layers"
		                                                           : "image_token_embed_dim",
		            "the VQ-VAE's generation side needs 1 to 256 out_channels, projection_dim and "
		            "image_token_embed_dim from 1 to 2^20 and 1 to 64 num_hidden_layers");
	c->st = q.st;
	if (c->st != MP_OK)
		return;
	s.attn[s.levels - 1] = true; /* JanusVQVAEEncoder and Decoder: attention on the last level only */
	vq_encoder(&rs, &s, &vq_names_chameleon);
	vq_decoder(&rs, &s, out_ch);
	mp_inventory_root(&m->inv, MP_ROOT_EXTRA, "model.vqmodel.");
	vq_flush(&q, "channel_multiplier", &rs, m, MP_ROOT_EXTRA);
	c->st = q.st;
	if (c->st != MP_OK)
		return;
	rs = (vq_rows){0};
	vq_linear(&rs, "aligner", "fc1.weight", "fc1.bias", proj, h);
	for (uint64_t i = 1; i < depth; i++)
		vq_linear(&rs, "aligner.hidden_layers.{i}", "weight", "bias", proj, proj);
	vq_put(&rs, "generation_embeddings", "weight", (const uint64_t[]){s.codes, s.embed_dim}, 2);
	vq_linear(&rs, "generation_aligner", "fc1.weight", "fc1.bias", gproj, s.embed_dim);
	for (uint64_t i = 1; i < glayers; i++)
		vq_linear(&rs, "generation_aligner.hidden_layers.{i}", "weight", "bias", gproj, gproj);
	vq_linear(&rs, "generation_head", "proj_out.weight", "proj_out.bias", gproj, gin);
	vq_linear(&rs, "generation_head", "vision_head.weight", "vision_head.bias", s.codes, gproj);
	mp_inventory_root(&m->inv, MP_ROOT_PROJECTOR, "model.");
	vq_flush(c, "vision_config", &rs, m, MP_ROOT_PROJECTOR);
}

/* ----- Apertus 1.5 ------------------------------------------------------------------------------------------------- */

/* nn.LSTM's per-layer leaves, for up to 8 layers (the leaves of layer k are entries 4k to 4k + 3). */
static const char *const lstm_leaves[32] = {
    "lstm.weight_ih_l0", "lstm.weight_hh_l0", "lstm.bias_ih_l0", "lstm.bias_hh_l0",
    "lstm.weight_ih_l1", "lstm.weight_hh_l1", "lstm.bias_ih_l1", "lstm.bias_hh_l1",
    "lstm.weight_ih_l2", "lstm.weight_hh_l2", "lstm.bias_ih_l2", "lstm.bias_hh_l2",
    "lstm.weight_ih_l3", "lstm.weight_hh_l3", "lstm.bias_ih_l3", "lstm.bias_hh_l3",
    "lstm.weight_ih_l4", "lstm.weight_hh_l4", "lstm.bias_ih_l4", "lstm.bias_hh_l4",
    "lstm.weight_ih_l5", "lstm.weight_hh_l5", "lstm.bias_ih_l5", "lstm.bias_hh_l5",
    "lstm.weight_ih_l6", "lstm.weight_hh_l6", "lstm.bias_ih_l6", "lstm.bias_hh_l6",
    "lstm.weight_ih_l7", "lstm.weight_hh_l7", "lstm.bias_ih_l7", "lstm.bias_hh_l7"};

/* WavTokenizerConv1d at path (static) from in to out channels over k taps: weight_norm's parametrizations (original0
 * [out, 1, 1], original1 [out, in, k]) or, with time_group_norm, a plain weight and a GroupNorm(1, out); a bias. */
static void wav_conv(vq_rows *rs, const char *path, bool weight_norm, uint64_t out, uint64_t in, uint64_t k)
{
	if (weight_norm) {
		vq_put(rs, path, "conv.parametrizations.weight.original0", (const uint64_t[]){out, 1, 1}, 3);
		vq_put(rs, path, "conv.parametrizations.weight.original1", (const uint64_t[]){out, in, k}, 3);
	} else {
		vq_put(rs, path, "conv.weight", (const uint64_t[]){out, in, k}, 3);
		vq_norm(rs, path, "norm.weight", "norm.bias", out);
	}
	vq_vec(rs, path, "conv.bias", out);
}

/*
 * WavTokenizerEncoderModel (modeling_wavtokenizer.py; WavTokenizerEncoderConfig: 1 audio channel, num_filters 32,
 * upsampling_ratios (6, 5, 5, 4), num_residual_layers 1, compress 2, use_conv_shortcut, kernel_size 7,
 * last_kernel_size 7, residual_kernel_size 3, num_lstm_layers 2, hidden_size 512, a codebook of 4096 x codebook_dim
 * 512, norm_type "weight_norm") under root: SEANet's encoder (encoder.layers.{i}: the first conv; per ratio, reversed,
 * residual blocks (block 1 to width / compress over residual_kernel_size taps, block 3 back over 1, a 1x1 shortcut)
 * and a strided conv doubling the width over 2 x ratio taps; the LSTM of num_lstm_layers over the last width; the
 * last conv to hidden_size), and the codebook's buffers (inited, cluster_size, embed, embed_avg). The decoder's keys
 * are validated as the class does, never built.
 */
static void wavtokenizer_encoder(hf_ctx *a, vq_rows *rs)
{
	uint64_t ratios[16] = {6, 5, 5, 4}, ach, nf, res, comp, k, lk, rk, lstm, h, codes, cdim, dh, dg, nr = 4, scale;
	const cJSON *rl = a->cfg ? cJSON_GetObjectItemCaseSensitive(a->cfg, "upsampling_ratios") : NULL, *e, *mt, *nt;
	bool wn, shortcut;
	const char *lay = "encoder.layers.{i}", *blk = "encoder.layers.{i}.block.{j}", *sc = "encoder.layers.{i}.shortcut";

	mt = a->cfg ? cJSON_GetObjectItemCaseSensitive(a->cfg, "model_type") : NULL;
	if (mt && !cJSON_IsNull(mt) && !(cJSON_IsString(mt) && strcmp(mt->valuestring, "wavtokenizer_encoder") == 0))
		hf_fail_key(a, "model_type",
		            "audio_config model_type must be wavtokenizer_encoder (Apertus1p5Config.validate_backbones: its "
		            "audio tokens come from the WavTokenizer encoder and codebook)");
	if (cJSON_IsArray(rl)) {
		nr = 0;
		cJSON_ArrayForEach(e, rl)
		{
			if (!cJSON_IsNumber(e) || e->valuedouble < 1 || e->valuedouble > 1024 || nr >= 16 ||
			    e->valuedouble != (double)(uint64_t)e->valuedouble) {
				hf_fail_key(a, "upsampling_ratios", "upsampling_ratios must list 1 to 16 integers from 1 to 1024");
				return;
			}
			ratios[nr++] = (uint64_t)e->valuedouble;
		}
	}
	ach = hf_get_u64(a, KEYS("audio_channels"), 1);
	nf = hf_get_u64(a, KEYS("num_filters"), 32);
	res = hf_get_u64(a, KEYS("num_residual_layers"), 1);
	comp = hf_get_u64(a, KEYS("compress"), 2);
	shortcut = hf_get_bool(a, KEYS("use_conv_shortcut"), true);
	k = hf_get_u64(a, KEYS("kernel_size"), 7);
	lk = hf_get_u64(a, KEYS("last_kernel_size"), 7);
	rk = hf_get_u64(a, KEYS("residual_kernel_size"), 3);
	lstm = hf_get_u64(a, KEYS("num_lstm_layers"), 2);
	h = hf_get_u64(a, KEYS("hidden_size"), 512);
	codes = hf_get_u64(a, KEYS("codebook_size"), 4096);
	cdim = hf_get_u64(a, KEYS("codebook_dim"), 512);
	dh = hf_get_u64(a, KEYS("decoder_hidden_size"), 768);
	dg = hf_get_u64(a, KEYS("decoder_attention_num_groups"), 32);
	nt = a->cfg ? cJSON_GetObjectItemCaseSensitive(a->cfg, "norm_type") : NULL;
	wn = !nt || cJSON_IsNull(nt) || (cJSON_IsString(nt) && strcmp(nt->valuestring, "weight_norm") == 0);
	if (a->st == MP_OK && !wn && !(cJSON_IsString(nt) && strcmp(nt->valuestring, "time_group_norm") == 0))
		hf_fail_key(a, "norm_type", "norm_type must be \"weight_norm\" or \"time_group_norm\" (WavTokenizerConfig)");
	if (a->st == MP_OK && cdim != h)
		hf_fail_key(a, "codebook_dim", "codebook_dim must equal hidden_size (WavTokenizerConfig: no projections "
		                               "around the quantizer)");
	if (a->st == MP_OK && (dg == 0 || dh % dg != 0))
		hf_fail_key(a, "decoder_attention_num_groups",
		            "decoder_hidden_size must be a multiple of decoder_attention_num_groups (WavTokenizerConfig)");
	if (a->st == MP_OK && (ach == 0 || ach > 64 || nf == 0 || nf > 65536 || res > 64 || comp == 0 || comp > nf ||
	                       k == 0 || k > 1024 || lk == 0 || lk > 1024 || rk == 0 || rk > 1024 || lstm == 0 || lstm > 8 ||
	                       h == 0 || h > (UINT64_C(1) << 20) || codes == 0 || codes > (UINT64_C(1) << 24) ||
	                       nf << nr > (UINT64_C(1) << 20)))
		hf_fail_key(a, ach == 0 || ach > 64 ? "audio_channels" : nf == 0 || nf > 65536 ? "num_filters"
		               : res > 64                                      ? "num_residual_layers"
		               : comp == 0 || comp > nf                        ? "compress"
		               : k == 0 || k > 1024                            ? "kernel_size"
		               : lk == 0 || lk > 1024                          ? "last_kernel_size"
		               : rk == 0 || rk > 1024                          ? "residual_kernel_size"
		               : lstm == 0 || lstm > 8                         ? "num_lstm_layers"
		               : h == 0 || h > (UINT64_C(1) << 20)             ? "hidden_size"
		               : codes == 0 || codes > (UINT64_C(1) << 24)     ? "codebook_size"
		                                                               : "num_filters",
		            "the WavTokenizer encoder needs 1 to 64 audio channels, 1 to 65536 filters (at most 2^20 after "
		            "the doublings), at most 64 residual layers, a compress from 1 to num_filters, kernels from 1 to "
		            "1024, 1 to 8 LSTM layers, a hidden_size from 1 to 2^20 and 1 to 2^24 codes");
	if (a->st != MP_OK)
		return;
	wav_conv(rs, lay, wn, nf, ach, k);
	scale = nf;
	for (uint64_t r = nr; r-- > 0;) {
		for (uint64_t j = 0; j < res; j++) {
			wav_conv(rs, blk, wn, scale / comp, scale, rk);
			wav_conv(rs, blk, wn, scale, scale / comp, 1);
			if (shortcut)
				wav_conv(rs, sc, wn, scale, scale, 1);
		}
		wav_conv(rs, lay, wn, 2 * scale, scale, 2 * ratios[r]);
		scale *= 2;
	}
	for (uint64_t l = 0; l < lstm; l++) {
		vq_put(rs, lay, lstm_leaves[4 * l], (const uint64_t[]){4 * scale, scale}, 2);
		vq_put(rs, lay, lstm_leaves[4 * l + 1], (const uint64_t[]){4 * scale, scale}, 2);
		vq_vec(rs, lay, lstm_leaves[4 * l + 2], 4 * scale);
		vq_vec(rs, lay, lstm_leaves[4 * l + 3], 4 * scale);
	}
	wav_conv(rs, lay, wn, h, scale, lk);
}

/* The codebook's buffers of the WavTokenizer quantizer (fp32; persistent, so the state_dict holds them). */
static void wav_codebook(hf_ctx *a, mp_model *m, uint8_t root)
{
	uint64_t codes = hf_get_u64(a, KEYS("codebook_size"), 4096), cdim = hf_get_u64(a, KEYS("codebook_dim"), 512);
	uint64_t one[1] = {1}, cs[1] = {codes}, emb[2] = {codes, cdim};

	hf_shape(m, root, "quantizer.codebook", "inited", MP_TK_VISION, MP_TF_BUFFER, one, 1, 1);
	hf_shape(m, root, "quantizer.codebook", "cluster_size", MP_TK_VISION, MP_TF_BUFFER, cs, 1, 1);
	hf_shape(m, root, "quantizer.codebook", "embed", MP_TK_VISION, MP_TF_BUFFER, emb, 2, 1);
	hf_shape(m, root, "quantizer.codebook", "embed_avg", MP_TK_VISION, MP_TF_BUFFER, emb, 2, 1);
}

/* Apertus1p5VisionTokenizerModel's encoder blocks */
static const vq_names vq_names_apertus1p5 = {"encoder.stages.{i}.layers.{j}.resnet",
                                             "encoder.stages.{i}.layers.{j}.attention", "encoder.stages.{i}.downsample",
                                             false};

/*
 * Apertus 1.5 (Apertus1p5Config; Apertus1p5ForConditionalGeneration): the Apertus 1.5 decoder (text_config, its
 * class's defaults; output_vocab_size prunes lm_head) under model.language_model., lm_head at the top, tied only by
 * tie_word_embeddings (False); the vision tokenizer (Apertus1p5VisionTokenizerModel: EMU3.5's VQGAN encoder as in
 * Chameleon, under model.vision_tokenizer.: base 256, multipliers (1, 1, 2, 2, 4), 4 blocks a stage, an attention
 * block after each block of the stages whose resolution (256 halved per stage) is in attn_resolutions (16,), the
 * middle's always; a codebook of codebook_size 131072 x embed_dim 256 as a linear, quant_conv, no post_quant_conv);
 * the audio tokenizer (wavtokenizer_encoder under model.audio_tokenizer.). Both tokenizers turn media into token ids
 * of the decoder's vocabulary: image_token_offset + codebook_size must be audio_token_offset, and the audio range must
 * end within vocab_size (validate_architecture).
 */
void mpm_read_apertus1p5(hf_ctx *c, mp_model *m)
{
	static const vq_shape dv = {.base = 256, .in_ch = 3, .latent = 256, .embed_dim = 256, .codes = 131072,
	                            .blocks = 4, .levels = 5, .mult = {1, 1, 2, 2, 4}, .mid_attn = true};
	char vp[MP_POINTER_MAX], ap[MP_POINTER_MAX];
	hf_ctx v, a;
	vq_shape s;
	vq_rows rs = {0}, ar = {0};
	const cJSON *at, *e;
	uint64_t res, ioff, aoff, vcodes, acodes;

	if (!hf_wrap_read_text(c, "apertus1p5_text", false, m))
		return;
	m->inv.roots[MP_ROOT_DECODER] = "model.language_model.";
	hf_wrap_tie(c, m, false);
	if (!hf_sub_config(c, "vision_config", vp, sizeof(vp), &v) || !hf_sub_config(c, "audio_config", ap, sizeof(ap), &a))
		return;
	vq_read(&v, &dv, &s);
	s.codes = hf_get_u64(&v, KEYS("codebook_size"), dv.codes);
	res = hf_get_u64(&v, KEYS("resolution"), 256);
	at = v.cfg ? cJSON_GetObjectItemCaseSensitive(v.cfg, "attn_resolutions") : NULL;
	if (at && !cJSON_IsNull(at) && !cJSON_IsArray(at))
		hf_fail_key(&v, "attn_resolutions", "attn_resolutions must be a list of resolutions");
	if (v.st == MP_OK && (s.codes == 0 || s.codes > (UINT64_C(1) << 24)))
		hf_fail_key(&v, "codebook_size", "codebook_size must be from 1 to 2^24");
	if (!cJSON_IsArray(at))
		at = NULL;
	for (uint64_t l = 0, r = res; l < s.levels && v.st == MP_OK; l++, r /= 2) {
		s.attn[l] = at == NULL && r == 16; /* the class default (16,) */
		cJSON_ArrayForEach(e, at)
		{
			s.attn[l] |= cJSON_IsNumber(e) && e->valuedouble == (double)r;
		}
	}
	c->st = v.st;
	if (c->st != MP_OK)
		return;
	wavtokenizer_encoder(&a, &ar);
	c->st = a.st;
	if (c->st != MP_OK)
		return;
	vcodes = s.codes;
	acodes = hf_get_u64(&a, KEYS("codebook_size"), 4096);
	ioff = hf_get_u64(c, KEYS("image_token_offset"), 131272);
	aoff = hf_get_u64(c, KEYS("audio_token_offset"), 262344);
	if (c->st == MP_OK && ioff + vcodes != aoff)
		hf_fail_key(c, "audio_token_offset",
		            "audio_token_offset must be image_token_offset + vision_config.codebook_size (the visual token "
		            "range ends where the audio range begins: Apertus1p5Config.validate_architecture)");
	if (c->st == MP_OK && aoff + acodes > m->vocab_size)
		hf_fail_key(c, "audio_token_offset",
		            "audio_token_offset + audio_config.codebook_size must be at most text_config.vocab_size (the audio "
		            "token range lies inside the vocabulary: Apertus1p5Config.validate_architecture)");
	if (c->st != MP_OK)
		return;
	vq_encoder(&rs, &s, &vq_names_apertus1p5);
	mp_inventory_root(&m->inv, MP_ROOT_TOWER, "model.vision_tokenizer.");
	vq_flush(&v, "channel_multiplier", &rs, m, MP_ROOT_TOWER);
	mp_inventory_root(&m->inv, MP_ROOT_EXTRA, "model.audio_tokenizer.");
	vq_flush(&a, "upsampling_ratios", &ar, m, MP_ROOT_EXTRA);
	wav_codebook(&a, m, MP_ROOT_EXTRA);
	c->st = a.st == MP_OK ? v.st : a.st;
}
