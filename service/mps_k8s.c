/*
 * mps_k8s.c: the kube-scheduler extender's placement (see mps_k8s.h for the rules). The pod's model is resolved once, its
 * job planned once without a device (so a layout its GPU count cannot take is the pod's error, not every node's),
 * then each distinct kind of node (same device facts) is mapped to a profile and judged once with the planner's
 * fit verdict; nodes share their class's answer. 5,000 nodes of a handful of kinds cost a handful of plans.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mps_k8s.h"
#include "mps_nodes.h"
#include "service_int.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define MIB (UINT64_C(1) << 20)
/* A GPU's NVML total (the gpu.memory label) is below its marketed memory by what ECC and the driver keep: 0.4% on
 * an H100 80GB HBM3 (81,559 of 81,920 MiB), 6.3% on an L40S (46,068 of 49,152 MiB; shared/reference/integrations.md
 * section 1.2). A profile is a candidate for a label when the label is within this fraction below its memory. */
#define MEMORY_MATCH_SLACK 0.10

const char *mps_k8s_outcome_name(mps_k8s_outcome o)
{
	switch (o) {
	case MPS_K8S_OUT_NO_JOB: return "no_job";
	case MPS_K8S_OUT_PLANNED: return "planned";
	case MPS_K8S_OUT_UNKNOWN_MODEL: return "unknown_model";
	case MPS_K8S_OUT_UNSUPPORTED: return "unsupported";
	case MPS_K8S_OUT_ERROR: return "error";
	}
	return "invalid";
}

int mps_k8s_score(bool fits, int64_t headroom_bytes, uint64_t budget_bytes, double floor)
{
	double h, steps;
	int score;

	if (!fits || budget_bytes == 0 || headroom_bytes < 0)
		return 0;
	if (floor < 0)
		floor = 0;
	if (floor > 0.9)
		floor = 0.9;
	h = (double)headroom_bytes / (double)budget_bytes;
	if (h < floor)
		return 1;
	steps = 10.0 * (h - floor) / (1.0 - floor);
	score = 10 - (int)steps;
	return score < 1 ? 1 : score > 10 ? 10 : score;
}

void mps_k8s_result_free(mps_k8s_result *r)
{
	if (r == NULL)
		return;
	free(r->nodes);
	free(r->classes);
	r->nodes = NULL;
	r->classes = NULL;
	r->nclasses = 0;
}

/* ----- the model ------------------------------------------------------------------------------------------ */

static mps_model_ref *job_model_ref(mps_fit_job *j)
{
	return j->training ? &j->u.train.model : &j->u.inference.model;
}

/* The pod's model: the inline one, or the first stored candidate. MP_ENOTFOUND when no candidate is stored. */
static mp_status resolve_model(mps_service *s, const mps_k8s_pod *pod, mps_fit_job *job, mps_model *m,
			       char *id, mp_error *err)
{
	mps_model_ref *ref = job_model_ref(job);
	mp_status st = MP_ENOTFOUND;

	if (ref->kind != MPS_MODEL_STORED || pod->ncandidates == 0) {
		st = mps_model_resolve(s, ref, m, err);
		if (st == MP_OK && ref->kind == MPS_MODEL_STORED)
			snprintf(id, MP_STORE_ID_MAX, "%s", ref->id);
		return st;
	}
	for (size_t i = 0; i < pod->ncandidates; i++) {
		snprintf(ref->id, sizeof(ref->id), "%s", pod->candidates[i]);
		st = mps_model_resolve(s, ref, m, err);
		if (st != MP_ENOTFOUND) {
			if (st == MP_OK)
				snprintf(id, MP_STORE_ID_MAX, "%s", ref->id);
			return st;
		}
	}
	return st;
}

/* "tried a, b, c" for an unknown model's message. */
static void candidate_list(const mps_k8s_pod *pod, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (size_t i = 0; i < pod->ncandidates && n < len; i++) {
		int k = snprintf(out + n, len - n, "%s%s", i ? ", " : "", pod->candidates[i]);

		if (k < 0)
			break;
		n += (size_t)k;
	}
}

/* ----- the job, planned once without a device -------------------------------------------------------------- */

typedef struct judge {
	mps_service *s;
	const mps_k8s_request *rq;
	const mps_k8s_policy *policy;
	mps_fit_job job;		/* the pod's, with num_gpus and the sequence length resolved */
	mps_model model;
	mp_inference_memory mem;	/* inference: the device-independent plan */
	mp_training_memory tmem;	/* training */
	mp_store_device *all;		/* every stored device, read once when a node needs the memory fallback */
	size_t nall, capall;
	bool all_read;
	mps_k8s_node node;		/* the node as judged when the node cache's report gave its facts */
} judge;

/* Problem text of the pod, naming where its description came from. */
static void pod_error(mps_k8s_result *out, const mps_k8s_pod *pod, const mp_error *e)
{
	out->outcome = MPS_K8S_OUT_ERROR;
	if (e->field[0])
		snprintf(out->error, sizeof(out->error), "memplan: %s: %s: %s", pod->source, e->field, e->message);
	else
		snprintf(out->error, sizeof(out->error), "memplan: %s: %s", pod->source, e->message);
}

/* The job with the pod's GPU count and, when the pod gave none, the model's context as the sequence length (vLLM's
 * max_model_len default); then its device-independent plan, whose errors are the pod's. */
static mp_status prepare_job(judge *j, mps_k8s_result *out, mp_error *err)
{
	const mps_k8s_pod *pod = &j->rq->pod;
	mp_error e = MP_ERROR_INIT;
	mp_status st;

	memset(&e, 0, sizeof(e));
	if (j->job.training) {
		mp_training_req *r = &j->job.u.train.req;

		mps_training_defaults(&j->job.u.train, r); /* as the plan endpoint resolves it */
		if (!pod->num_gpus_given)
			r->num_gpus = pod->gpus;
		r->json_pointer = j->job.u.train.pointer;
		if (pod->sequence_from_model && (r->sequence_length = mp_model_sequence_ceiling(&j->model.arch, false)) == 0)
			goto no_length;
		st = mp_plan_training(j->model.architecture_known ? &j->model.arch : NULL, &j->model.params, r, &j->tmem,
				      &e);
	} else {
		mp_inference_req *r = &j->job.u.inference.req;

		if (!j->model.architecture_known) {
			mp_fail(&e, MP_EINVAL, "/model", "inference needs the architecture for the KV cache: name a stored "
				"model or give {\"hf_config\": {...}}");
			pod_error(out, pod, &e);
			return MP_OK;
		}
		/* the dtypes a memplan.io/inference annotation left "auto": the model's, as the plan endpoint resolves
		 * them (no device yet: bf16 and fp16 are the same 2 bytes on every node) */
		mps_inference_defaults(&j->model.arch, NULL, &j->job.u.inference, NULL, NULL);
		if (!pod->num_gpus_given) /* the pod's GPUs; an engine's launch says how many it uses (tp x dp) */
			r->num_gpus = pod->gpus;
		r->json_pointer = j->job.u.inference.pointer;
		if (pod->sequence_from_model && (r->sequence_length = mp_model_sequence_ceiling(&j->model.arch, false)) == 0)
			goto no_length;
		st = mp_plan_inference_ex(&j->model.arch, &j->model.params, r, &j->job.u.inference.opts, NULL, &j->mem,
					  NULL, &e);
	}
	if (st == MP_EINVAL || st == MP_EOVERFLOW || st == MP_EUNSUPPORTED) {
		pod_error(out, pod, &e);
		return MP_OK;
	}
	if (st != MP_OK)
		*err = e;
	return st;
no_length:
	mp_fail(&e, MP_EINVAL, "", "the model states no context length: give the sequence length "
		"(memplan.io/sequence-length, or --max-model-len)");
	pod_error(out, pod, &e);
	return MP_OK;
}

/* ----- devices of nodes ------------------------------------------------------------------------------------- */

/* The profiles the memory fallback may choose (by_memory): NVIDIA's, not measured ones (a measured profile is one
 * machine's). */
static bool memory_candidate(const mp_store_device *d)
{
	return strcmp(d->source, "measured") != 0 && strcasecmp(d->vendor, "NVIDIA") == 0;
}

static mp_status collect(const mp_store_device *d, void *ctx)
{
	judge *j = ctx;

	if (!memory_candidate(d))
		return MP_OK;
	if (j->nall == j->capall) {
		size_t cap = j->capall ? j->capall * 2 : 32;
		mp_store_device *p = realloc(j->all, cap * sizeof(*p));

		if (p == NULL)
			return MP_ENOMEM;
		j->all = p;
		j->capall = cap;
	}
	j->all[j->nall++] = *d;
	return MP_OK;
}

/* Every stored profile the memory fallback may choose, read once per request (copies, each page with the store's
 * lock released before any is judged). */
static mp_status read_all(judge *j, mp_error *err)
{
	mp_status st;

	if (j->all_read)
		return MP_OK;
	st = mps_each_device(j->s, NULL, NULL, 0, collect, j, NULL, err);
	j->all_read = st == MP_OK;
	return st;
}

/*
 * The memory fallback: among stored GPU profiles that are not measured ones (a measured profile is one machine's),
 * those whose memory_bytes the label could be (label <= memory <= label / (1 - slack)); of them the one with the
 * least memory, then the least capacity (usable memory), then the least bandwidth: the most conservative profile
 * the node's memory allows. Case: a label of 81,920 MiB matches the four 80 GiB profiles, and the A100 80GB PCIe
 * (84,986,036,224 usable bytes) is chosen.
 */
static const mp_store_device *by_memory(judge *j, uint64_t memory_mib, mp_error *err, mp_status *st)
{
	const mp_store_device *best = NULL;
	double label = (double)memory_mib * (double)MIB;

	*st = read_all(j, err);
	if (*st != MP_OK)
		return NULL;
	for (size_t i = 0; i < j->nall; i++) {
		const mp_store_device *d = &j->all[i];
		double mem = (double)d->hw.memory_bytes;

		if (!(label <= mem && label >= mem * (1.0 - MEMORY_MATCH_SLACK)))
			continue;
		if (best == NULL || d->hw.memory_bytes < best->hw.memory_bytes ||
		    (d->hw.memory_bytes == best->hw.memory_bytes &&
		     (mp_device_capacity_bytes(&d->hw) < mp_device_capacity_bytes(&best->hw) ||
		      (mp_device_capacity_bytes(&d->hw) == mp_device_capacity_bytes(&best->hw) &&
		       d->hw.memory_bandwidth_bytes_per_second < best->hw.memory_bandwidth_bytes_per_second))))
			best = d;
	}
	return best;
}

/* The product label without GFD's suffixes: "-SHARED" (time-slicing or MPS with renaming) and "-MIG-<profile>"
 * (MIG single strategy: "NVIDIA-A100-80GB-PCIe-MIG-1g.10gb"). */
static void base_product(const char *product, char *out, size_t len, bool *shared, bool *mig)
{
	const char *m;
	size_t n;

	snprintf(out, len, "%s", product);
	n = strlen(out);
	*shared = n > 7 && strcmp(out + n - 7, "-SHARED") == 0;
	if (*shared)
		out[n - 7] = '\0';
	m = strstr(out, "-MIG-");
	*mig = m != NULL;
	if (m)
		out[m - out] = '\0';
}

static mp_status lookup_alias(judge *j, const char *name, mp_store_device *out, bool *found, mp_error *err)
{
	mp_error e = MP_ERROR_INIT;
	mp_status st = name[0] ? mp_store_device_by_alias(mps_store(j->s), name, out, &e) : MP_ENOTFOUND;

	*found = st == MP_OK;
	if (st == MP_ENOTFOUND || st == MP_OK)
		return MP_OK;
	*err = e;
	return st;
}

/* Maps a class to a profile (mps_k8s.h: the order of the rules) and its capacity per GPU. */
static mp_status resolve_device(judge *j, mps_k8s_class *c, mp_error *err)
{
	char base[128];
	bool shared = false, mig = false, found = false;
	const bool mig_resource = strncmp(j->rq->pod.resource, "nvidia.com/mig-", 15) == 0;
	mp_status st = MP_OK;
	uint64_t cap;

	base_product(c->product, base, sizeof(base), &shared, &mig);
	mig = mig || mig_resource;
	c->mig = mig;
	if (c->profile_label[0] && mp_valid_id(c->profile_label)) {
		mp_error e = MP_ERROR_INIT;

		found = mps_device_get(j->s, c->profile_label, &c->device, &e) == MP_OK;
		c->matched_by = "memplan-profile";
	}
	if (!found && base[0]) {
		st = lookup_alias(j, base, &c->device, &found, err);
		c->matched_by = "gpu.product";
	}
	if (st == MP_OK && !found && c->gke_accelerator[0]) {
		st = lookup_alias(j, c->gke_accelerator, &c->device, &found, err);
		c->matched_by = "gke-accelerator";
	}
	if (st == MP_OK && !found && c->memory_mib && !mig) {
		const mp_store_device *d = by_memory(j, c->memory_mib, err, &st);

		if (d) {
			c->device = *d;
			found = true;
			c->matched_by = "gpu.memory";
		}
	}
	if (st != MP_OK)
		return st;
	c->known = found && (!mig || c->memory_mib > 0); /* a MIG slice is judged on its own memory only */
	if (!c->known)
		return MP_OK;
	if (strchr(base, ' '))
		/* an NVML name (a node agent's report): DCGM's modelName itself, whatever profile it matched */
		snprintf(c->model_name_label, sizeof(c->model_name_label), "%s", base);
	else if (c->device.naliases)
		snprintf(c->model_name_label, sizeof(c->model_name_label), "%s", c->device.aliases[0]);
	cap = mp_device_capacity_bytes(&c->device.hw);
	if (c->memory_mib && c->memory_mib * MIB < cap)
		cap = c->memory_mib * MIB; /* the label is the GPU's (or MIG slice's) NVML total */
	c->shared = shared || c->replicas > 1; /* GFD: "-SHARED" with renaming, nvidia.com/gpu.replicas always */
	if (c->shared && c->replicas > 1)
		cap /= c->replicas; /* MPS caps each client at total / replicas; time-slicing promises nothing more */
	c->capacity_bytes = cap;
	c->device.hw.usable_memory_bytes = cap;
	if (c->device.hw.memory_bytes < cap)
		c->device.hw.memory_bytes = cap;
	return MP_OK;
}

/* ----- judging a class -------------------------------------------------------------------------------------- */

static const char *dtype_or(mp_dtype d, const char *dflt)
{
	return d == MP_DTYPE_INVALID ? dflt : mp_dtype_name(d);
}

/* A short name of the device for people: the node's own label when there is one. */
static const char *shown_device(const mps_k8s_class *c)
{
	return c->product[0] ? c->product : c->gke_accelerator[0] ? c->gke_accelerator : c->device.id;
}

/* The job's verdict on dev (per GPU): *total the job's bytes per GPU there, *min_gpus the smallest
 * tensor-parallel degree that fits (inference; 0 = none or training). */
static void verdict_on(judge *j, const mp_store_device *dev, mp_fit *fit, uint64_t *total, uint64_t *min_gpus)
{
	memset(fit, 0, sizeof(*fit));
	*min_gpus = 0;
	if (j->job.training) {
		mp_training_verdict(&j->tmem, &dev->hw, fit);
		*total = j->tmem.total_bytes;
	} else {
		mp_error e = MP_ERROR_INIT;
		mp_inference_memory *mem = &j->mem;
		mp_inference_opts opts = j->job.u.inference.opts;

		/* with the device: its engine's serving defaults (the prefill chunk), as the plan endpoint takes them;
		 * then the verdict, and the smallest GPU count that would fit it */
		if (mps_inference_opts_for(&j->job.u.inference, dev, &opts, NULL, &e) != MP_OK)
			opts = j->job.u.inference.opts;
		if (mp_plan_inference_ex(&j->model.arch, &j->model.params, &j->job.u.inference.req, &opts, &dev->hw, mem,
					 fit, &e) != MP_OK)
			mp_fit_verdict(&j->mem, &opts, &dev->hw, fit);
		*total = mem->total_bytes;
		*min_gpus = fit->min_gpus;
	}
}

/* A node with no profile but a gpu.memory label: the label alone is the GPU's NVML total, so a job that needs more
 * per GPU than it cannot fit there, whatever the device is (the unknown-device policy is for what the label
 * cannot tell). */
static void judge_by_label(judge *j, mps_k8s_class *c)
{
	mp_store_device *lab = calloc(1, sizeof(*lab));
	mp_fit fit;
	uint64_t total = 0, min_gpus = 0;

	if (lab == NULL || c->memory_mib == 0 || c->replicas > 1) {
		free(lab);
		return;
	}
	snprintf(lab->id, sizeof(lab->id), "gpu-memory-label");
	snprintf(lab->vendor, sizeof(lab->vendor), "NVIDIA");
	snprintf(lab->kind, sizeof(lab->kind), "gpu");
	lab->hw.memory_bytes = lab->hw.usable_memory_bytes = c->memory_mib * MIB;
	lab->hw.memory_bandwidth_bytes_per_second = 1e12; /* not read by a verdict */
	verdict_on(j, lab, &fit, &total, &min_gpus);
	free(lab);
	if (fit.fits)
		return;
	c->label_no_fit = true;
	snprintf(c->reason, sizeof(c->reason),
		 "memplan: %s needs %.2f GiB per GPU and the node's GPUs have %llu MiB (nvidia.com/gpu.memory), so it "
		 "cannot fit whatever %s is (no stored profile names it)",
		 j->model.id[0] ? j->model.id : "the model", (double)total / GIB, (unsigned long long)c->memory_mib,
		 c->product[0] ? c->product : c->gke_accelerator[0] ? c->gke_accelerator : "the device");
}

static void judge_class(judge *j, mps_k8s_class *c)
{
	const mps_k8s_pod *pod = &j->rq->pod;
	mp_fit fit;
	char fitsw[96] = "", layout[96] = "";

	if (!c->known) {
		if (c->name_only)
			snprintf(c->reason, sizeof(c->reason),
				 "memplan: the node cache holds no report of this node (its node agent has not reported, or "
				 "its lease ended) and kube-scheduler sent its name only (nodeCacheCapable: true)");
		else if (c->product[0] || c->gke_accelerator[0] || c->memory_mib)
			snprintf(c->reason, sizeof(c->reason),
				 "memplan: no device profile for %s%s%s (%llu MiB): name it in a profile's aliases "
				 "(PATCH /v1/devices/{id} {\"aliases\": [...]})",
				 c->product[0] ? "nvidia.com/gpu.product " : "cloud.google.com/gke-accelerator ",
				 c->product[0] ? c->product : c->gke_accelerator, "", (unsigned long long)c->memory_mib);
		else
			snprintf(c->reason, sizeof(c->reason),
				 "memplan: the node has no nvidia.com/gpu.product, gpu.memory or memplan-profile label");
		if (!c->mig && !c->shared)
			judge_by_label(j, c);
		return;
	}
	verdict_on(j, &c->device, &fit, &c->total_bytes, &c->fits_with_gpus);
	c->fits = fit.fits;
	c->budget_bytes = fit.budget_bytes ? fit.budget_bytes : fit.capacity_bytes;
	c->headroom_bytes = fit.headroom_bytes;
	c->score = mps_k8s_score(c->fits, c->headroom_bytes, c->budget_bytes, j->policy->headroom_floor);
	if (c->fits)
		return;
	/* more MIG slices or shared replicas add no memory to one process (a CUDA process sees one MIG device, and
	 * replicas may sit on one GPU): a count is suggested for whole GPUs only */
	if (c->mig || c->shared)
		c->fits_with_gpus = 0;
	else if (!j->job.training && c->fits_with_gpus)
		snprintf(fitsw, sizeof(fitsw), "; it fits with tensor_parallel_size %llu (%llu GPUs a replica)",
			 (unsigned long long)c->fits_with_gpus, (unsigned long long)c->fits_with_gpus);
	else if (!j->job.training)
		snprintf(fitsw, sizeof(fitsw), "; no GPU count of this device fits it");
	/* the pod's GPUs split into replicas of tensor_parallel_size each (vLLM --tensor-parallel-size 4 on 8 GPUs) */
	if (!j->job.training && j->mem.tensor_parallel_size && j->mem.tensor_parallel_size != pod->gpus)
		snprintf(layout, sizeof(layout), " at tensor_parallel_size %llu (of the pod's %llu GPUs)",
			 (unsigned long long)j->mem.tensor_parallel_size, (unsigned long long)pod->gpus);
	if (j->job.training)
		snprintf(c->reason, sizeof(c->reason),
			 "memplan: %s training needs %.2f GiB per GPU on %llu x %s (%s), over its %.2f GiB",
			 j->model.id[0] ? j->model.id : "the model", (double)c->total_bytes / GIB,
			 (unsigned long long)pod->gpus, shown_device(c), c->device.id, (double)c->budget_bytes / GIB);
	else
		snprintf(c->reason, sizeof(c->reason),
			 "memplan: %s (%s weights, %s KV, %llu x %llu tokens) needs %.2f GiB per GPU on %llu x %s (%s)%s, "
			 "over its %.2f GiB budget%s",
			 j->model.id[0] ? j->model.id : "the model", dtype_or(j->job.u.inference.req.weight_dtype, "?"),
			 dtype_or(j->job.u.inference.req.kv_cache_dtype, "?"),
			 (unsigned long long)j->job.u.inference.req.batch_size,
			 (unsigned long long)j->job.u.inference.req.sequence_length, (double)c->total_bytes / GIB,
			 (unsigned long long)pod->gpus, shown_device(c), c->device.id, layout, (double)c->budget_bytes / GIB,
			 fitsw);
}

/* ----- nodes ------------------------------------------------------------------------------------------------ */

static bool same_class(const mps_k8s_class *c, const mps_k8s_node *n)
{
	return c->memory_mib == n->memory_mib && c->replicas == n->replicas && c->name_only == n->name_only &&
	       strcmp(c->product, n->product) == 0 &&
	       strcmp(c->gke_accelerator, n->gke_accelerator) == 0 && strcmp(c->profile_label, n->profile) == 0;
}

/* The GPUs the node has for the pod's resource: status.allocatable, else the GFD count label (times the replicas of
 * a shared GPU); 0 when neither says. */
static uint64_t node_gpus(const mps_k8s_node *n)
{
	if (n->has_allocatable)
		return n->allocatable;
	if (n->label_count && n->replicas > 1)
		return n->label_count * n->replicas;
	return n->label_count;
}

/*
 * The facts node n is judged by: its agent's report in the node cache when one holds (the agent read the GPUs
 * themselves: product, NVML memory, count, MIG layout, the measured profile), keeping the request's allocatable
 * count when the request has one (kube-scheduler's own); else the labels the request carries. A report is turned
 * into what GPU Feature Discovery would label, for the pod's resource: a mixed-strategy MIG resource
 * (nvidia.com/mig-<profile>) takes that profile's slice memory and count (none: 0 allocatable); the single
 * strategy gives the product "-MIG-<profile>" and the slices' memory and count. *cached says which it was.
 */
/* src into dst (cap bytes), cut to fit: snprintf's work without its formatting, per node. */
static void copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);

	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

typedef struct node_read {
	const char *resource;		/* the pod's GPU resource */
	mps_k8s_node *out;
} node_read;

/* Under the cache's read lock: the report as GFD would label it (effective_node). */
static void from_report(const mps_node_facts *f, void *ctx)
{
	node_read *nr = ctx;
	mps_k8s_node *tmp = nr->out;
	const char *res = nr->resource;

	copy_str(tmp->profile, sizeof(tmp->profile), f->profile);
	copy_str(tmp->product, sizeof(tmp->product), f->product);
	copy_str(tmp->sharing_strategy, sizeof(tmp->sharing_strategy), f->sharing_strategy);
	tmp->replicas = f->replicas;
	if (strncmp(res, "nvidia.com/mig-", 15) == 0) {
		size_t k;

		for (k = 0; k < f->nmig && strcmp(f->mig[k].profile, res + 15) != 0; k++)
			;
		tmp->has_allocatable = true;
		if (k < f->nmig) {
			tmp->memory_mib = f->mig[k].memory_mib;
			tmp->label_count = tmp->allocatable = f->mig[k].count;
		}
		tmp->replicas = 0;
	} else if (strcmp(f->mig_strategy, "single") == 0 && f->nmig > 0) {
		snprintf(tmp->product, sizeof(tmp->product), "%.90s-MIG-%.30s", f->product, f->mig[0].profile);
		tmp->memory_mib = f->mig[0].memory_mib;
		tmp->label_count = f->mig[0].count;
	} else {
		tmp->memory_mib = f->memory_mib;
		tmp->label_count = f->count;
		tmp->count_stated = f->count_given;
	}
}

/*
 * The facts node n is judged by: its agent's report in the node cache when one holds (the agent read the GPUs
 * themselves: product, NVML memory, count, MIG layout, the measured profile), keeping the request's allocatable
 * count when the request has one (kube-scheduler's own); else the labels the request carries. A report is turned
 * into what GPU Feature Discovery would label, for the pod's resource: a mixed-strategy MIG resource
 * (nvidia.com/mig-<profile>) takes that profile's slice memory and count (none: 0 allocatable); the single
 * strategy gives the product "-MIG-<profile>" and the slices' memory and count. *cached says which it was.
 */
static const mps_k8s_node *effective_node(judge *j, const mps_k8s_node *n, mps_k8s_node *tmp, bool *cached)
{
	node_read nr = { j->rq->pod.resource, tmp };

	/* the fields from_report and the judging read, cleared (the whole struct is 1 KB: per node it shows) */
	tmp->profile[0] = tmp->product[0] = tmp->gke_accelerator[0] = tmp->sharing_strategy[0] = tmp->bad[0] = '\0';
	tmp->memory_mib = tmp->label_count = tmp->replicas = tmp->allocatable = 0;
	tmp->has_allocatable = tmp->count_stated = false;
	tmp->name_only = n->name_only;
	*cached = j->policy->cache && mps_node_cache_read(j->policy->cache, n->name, j->policy->now, from_report, &nr);
	if (!*cached)
		return n;
	copy_str(tmp->name, sizeof(tmp->name), n->name);
	tmp->name_only = false;
	if (n->has_allocatable) {
		tmp->has_allocatable = true;
		tmp->allocatable = n->allocatable;
	}
	return tmp;
}

static void pass_all(mps_k8s_result *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		out->nodes[i].verdict = MPS_K8S_PASS;
		out->nodes[i].cls = SIZE_MAX;
	}
	out->passed = n;
}

static mp_status place_nodes(judge *j, mps_k8s_result *out, mp_error *err)
{
	const mps_k8s_request *rq = j->rq;
	size_t cap = 0;
	mp_status st = MP_OK;

	for (size_t i = 0; i < rq->nnodes && st == MP_OK; i++) {
		mps_k8s_node_result *r = &out->nodes[i];
		bool cached;
		const mps_k8s_node *n = effective_node(j, &rq->nodes[i], &j->node, &cached);
		uint64_t have = node_gpus(n);
		size_t k;

		r->cls = SIZE_MAX;
		out->from_cache += cached;
		out->unreported += !cached && n->name_only;
		if (n->bad[0]) {
			r->verdict = MPS_K8S_FAIL;
			snprintf(r->own_reason, sizeof(r->own_reason), "memplan: %s", n->bad);
			r->reason = r->own_reason;
			continue;
		}
		if ((n->has_allocatable || n->label_count || n->count_stated) && have < rq->pod.gpus) {
			r->verdict = MPS_K8S_UNRESOLVABLE;
			snprintf(r->own_reason, sizeof(r->own_reason), "memplan: the node has %llu %s; the pod asks for %llu",
				 (unsigned long long)have, rq->pod.resource[0] ? rq->pod.resource : "GPUs",
				 (unsigned long long)rq->pod.gpus);
			r->reason = r->own_reason;
			continue;
		}
		for (k = 0; k < out->nclasses && !same_class(&out->classes[k], n); k++)
			;
		if (k == out->nclasses) {
			mps_k8s_class *c;

			if (out->nclasses == cap) {
				size_t nc = cap ? cap * 2 : 8;
				mps_k8s_class *p = realloc(out->classes, nc * sizeof(*p));

				if (p == NULL)
					return mp_fail(err, MP_ENOMEM, "", "out of memory");
				out->classes = p;
				cap = nc;
			}
			c = &out->classes[out->nclasses++];
			memset(c, 0, sizeof(*c));
			snprintf(c->product, sizeof(c->product), "%s", n->product);
			snprintf(c->gke_accelerator, sizeof(c->gke_accelerator), "%s", n->gke_accelerator);
			snprintf(c->profile_label, sizeof(c->profile_label), "%s", n->profile);
			c->memory_mib = n->memory_mib;
			c->replicas = n->replicas;
			c->name_only = n->name_only;
			st = resolve_device(j, c, err);
			if (st == MP_OK)
				judge_class(j, c);
		}
		r->cls = k;
	}
	if (st != MP_OK)
		return st;
	for (size_t i = 0; i < rq->nnodes; i++) {
		mps_k8s_node_result *r = &out->nodes[i];
		const mps_k8s_class *c;

		if (r->cls == SIZE_MAX) {
			out->failed += r->verdict == MPS_K8S_FAIL;
			out->unresolvable += r->verdict == MPS_K8S_UNRESOLVABLE;
			continue;
		}
		c = &out->classes[r->cls];
		if (!c->known && c->label_no_fit) {
			r->verdict = MPS_K8S_UNRESOLVABLE; /* the label alone shows it (judge_by_label) */
		} else if (!c->known) {
			out->unknown_device++;
			r->verdict = j->policy->unknown_device_fails ? MPS_K8S_FAIL : MPS_K8S_PASS;
		} else {
			r->verdict = c->fits ? MPS_K8S_PASS : MPS_K8S_UNRESOLVABLE;
			r->score = c->score;
		}
		r->reason = r->verdict == MPS_K8S_PASS ? NULL : c->reason;
		out->passed += r->verdict == MPS_K8S_PASS;
		out->failed += r->verdict == MPS_K8S_FAIL;
		out->unresolvable += r->verdict == MPS_K8S_UNRESOLVABLE;
	}
	return MP_OK;
}

mp_status mps_k8s_place(mps_service *s, const mps_k8s_request *rq, const mps_k8s_policy *policy, mps_k8s_result *out,
			mp_error *err)
{
	const mps_k8s_pod *pod = &rq->pod;
	judge *j;
	mp_status st;
	mp_error e = MP_ERROR_INIT;

	memset(out, 0, sizeof(*out));
	if (rq->nnodes > MPS_K8S_MAX_NODES)
		return mp_fail(err, MP_ETOOLARGE, "/Nodes/items", "%zu nodes is more than the %d one call may judge",
			       rq->nnodes, MPS_K8S_MAX_NODES);
	out->nodes = calloc(rq->nnodes ? rq->nnodes : 1, sizeof(*out->nodes));
	if (out->nodes == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	switch (pod->state) {
	case MPS_K8S_NO_JOB:
		pass_all(out, rq->nnodes);
		return MP_OK;
	case MPS_K8S_UNSUPPORTED:
		out->outcome = MPS_K8S_OUT_UNSUPPORTED;
		pass_all(out, rq->nnodes);
		return MP_OK;
	case MPS_K8S_BAD_JOB:
		out->outcome = MPS_K8S_OUT_ERROR;
		snprintf(out->error, sizeof(out->error), "%s", pod->error);
		return MP_OK;
	case MPS_K8S_JOB:
		break;
	}
	j = calloc(1, sizeof(*j));
	if (j == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	j->s = s;
	j->rq = rq;
	j->policy = policy;
	j->job = pod->job;
	memset(&e, 0, sizeof(e));
	st = resolve_model(s, pod, &j->job, &j->model, out->model_id, &e);
	if (st == MP_ENOTFOUND) {
		char tried[400];

		candidate_list(pod, tried, sizeof(tried));
		st = MP_OK;
		if (pod->explicit_model) {
			out->outcome = MPS_K8S_OUT_ERROR;
			snprintf(out->error, sizeof(out->error),
				 "memplan: %s: no stored model for '%.200s' (tried %s): store its config.json with PUT "
				 "/v1/models/{id}, or name a stored id",
				 pod->model_from[0] ? pod->model_from : pod->source, pod->model_name, tried);
		} else {
			out->outcome = MPS_K8S_OUT_UNKNOWN_MODEL;
			pass_all(out, rq->nnodes);
		}
		goto out;
	}
	if (st == MP_EINVAL || st == MP_EUNSUPPORTED || st == MP_EOVERFLOW) {
		pod_error(out, pod, &e);
		st = MP_OK;
		goto out;
	}
	if (st != MP_OK) {
		*err = e;
		goto out;
	}
	snprintf(j->model.id, sizeof(j->model.id), "%s", out->model_id);
	st = prepare_job(j, out, err);
	if (st != MP_OK || out->outcome == MPS_K8S_OUT_ERROR)
		goto out;
	out->outcome = MPS_K8S_OUT_PLANNED;
	st = place_nodes(j, out, err);
out:
	free(j->all);
	free(j);
	return st;
}

/* ----- the rules, for one pod or one node (service/mps_observe.c) ------------------------------------------------ */

mp_status mps_k8s_pod_model(mps_service *s, const mps_k8s_pod *pod, mps_fit_job *job, mps_model *m, char *id,
			    mp_error *err)
{
	return resolve_model(s, pod, job, m, id, err);
}

mp_status mps_k8s_node_device(mps_service *s, mps_node_cache *cache, int64_t now, const char *node,
			      const char *resource, mp_store_device *out, mp_error *err)
{
	judge *j = calloc(1, sizeof(*j));
	mps_k8s_request *rq = calloc(1, sizeof(*rq));
	mps_k8s_class *c = calloc(1, sizeof(*c));
	mps_k8s_policy policy = { false, 0.1, cache, now };
	mps_k8s_node n;
	const mps_k8s_node *e;
	bool cached = false;
	mp_status st = MP_OK;

	if (j == NULL || rq == NULL || c == NULL) {
		st = mp_fail(err, MP_ENOMEM, "", "out of memory");
		goto out;
	}
	memset(&n, 0, sizeof(n));
	snprintf(n.name, sizeof(n.name), "%s", node);
	n.name_only = true;
	snprintf(rq->pod.resource, sizeof(rq->pod.resource), "%s", resource ? resource : "");
	j->s = s;
	j->rq = rq;
	j->policy = &policy;
	e = effective_node(j, &n, &j->node, &cached);
	if (!cached) {
		st = mp_fail(err, MP_ENOTFOUND, "/node", "the node cache holds no report of node %.200s: its node agent "
			     "reports the node (PUT /v1/nodes/{name}) before its pods", node);
		goto out;
	}
	snprintf(c->product, sizeof(c->product), "%s", e->product);
	snprintf(c->profile_label, sizeof(c->profile_label), "%s", e->profile);
	c->memory_mib = e->memory_mib;
	c->replicas = e->replicas;
	st = resolve_device(j, c, err);
	if (st == MP_OK && !c->known)
		st = mp_fail(err, MP_ENOTFOUND, "/node", "node %.200s's GPUs (%.100s, %llu MiB) map to no device profile: "
			     "name it in a profile's aliases", node, e->product, (unsigned long long)e->memory_mib);
	if (st == MP_OK)
		*out = c->device;
out:
	if (j)
		free(j->all);
	free(j);
	free(rq);
	free(c);
	return st;
}
