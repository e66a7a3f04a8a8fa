/*
 * mps_observe.h: the loop from running engines back to the predictions. An observation (POST /v1/observations) is an
 * engine start's report (vLLM's vllm:cache_config_info from its /metrics, or its start-up log; SGLang's log) set
 * beside memplan's prediction for the same launch; run backwards through the engine's arithmetic, the figure it
 * reported measures one memory term of the budget (vLLM: what the budget holds beyond the weights and the modelled
 * activation peak, non_torch_bytes; SGLang: what is taken before the weights, context_bytes). Stored in the catalog,
 * observations give memplan's own error per (engine, version, device, model), and where a term is consistently off
 * for an engine version on a device, plans of that engine on that device take the observations' median for it
 * (the engine block says "<term>_from": "observed" and how many). An observation never changes a preset or a
 * datasheet figure: it is its own row, read when a plan is answered. The daemon's --observed-terms off and a
 * request's "observed_terms": false keep the model's terms.
 *
 * The rule for "consistently off" (mps_obs_correct): at least MPS_OBS_MIN observations of the key (engine, version
 * line, device, term) among its newest MPS_OBS_WINDOW, and at least MPS_OBS_AGREE of them lying beyond their own
 * resolution (one block of every layer: a count the engine rounds down cannot say more) on the same side of the
 * model. Then the term is the median of what they imply.
 *
 * Ownership: requests are borrowed; results are caller-owned structs. Thread-safe as the service is.
 */
#ifndef MPS_OBSERVE_H
#define MPS_OBSERVE_H

#include "../types/fleet_types.h"
#include "mps_nodes.h"
#include "service.h"

/* The daemon's switch (--observed-terms): false keeps every plan on its model's terms. On by default. */
void mps_observed_terms_set(mps_service *s, bool on);
bool mps_observed_terms_on(const mps_service *s);

/* "0.11.0" -> "0.11", "0.5.23.post1" -> "0.5" (major.minor, digits only), into out (16 bytes); "" when it is not one. */
void mps_version_line(const char *version, char *out, size_t len);
/* The engine version a container image's tag names ("vllm/vllm-openai:v0.11.0" -> "0.11.0", "...:latest" -> ""). */
void mps_image_version(const char *image, char *out, size_t len);
/* The version line whose observations a plan takes: the release line its engine block follows (v, the request's
 * engine_version or the engine's newest: "0.33", "0.11", "0.5"; planner/engine.c mp_engine_versions), "" for none.
 * An observation's own line is mps_version_line of the release it names. */
const char *mps_engine_plan_line(const mp_engine_version *v);

/*
 * The correction samples give (newest first, n of them), as the rule above says, into *out (term set by the caller).
 * Worked example (tests/test_fleet.c): samples implying 1,207,959,552 / 1,208,221,696 / 1,207,697,408 bytes,
 * modelled 0, resolution 2,097,152 each -> applies, median 1,207,959,552, 3 of 3 on the same side.
 */
void mps_obs_correct(const mp_store_term_sample *samples, size_t n, mps_obs_correction *out);

/*
 * The terms plan p (an inference plan with its engine block and a device) takes from observations, applied in
 * place: each term's modelled value is recorded (p->engine.observed[t].modelled_bytes: vLLM, the release's terms
 * inside the budget but the profile's peak; SGLang, those outside it) and, where observations of the block's release
 * line apply and neither the service nor the job turned them off, the engine's figures are predicted again with the
 * median in place of those terms (mp_engine_inputs.observed), and a warning says so once. Nothing for a plan without an engine prediction. Errors: MP_EDB, the
 * engine arithmetic's.
 */
mp_status mps_observed_apply(mps_service *s, mps_inference_plan *p, mp_error *err);

/*
 * POST /v1/observations, first half: the launch planned as memplan answers it now and the report set beside it.
 * The pod form's plan is built here: its model as the extender resolves it, its device the node's (the node cache
 * at now), its engine its serving container's; the person's form plans rq->check.plan. The plan follows the release
 * line of the observed engine_version (the image tag's in the pod form) when it names none and the line is one
 * memplan follows; a plan naming another line is a 422 at "/plan/engine_version" ("/pod" for the pod form's
 * memplan.io/engine-version). *check gets the plan and
 * the figure-by-figure comparison (mps_engine_check_run); *out the observation row, all but settings_json, id and
 * (when rq gives none) observed_at. Errors: MP_EINVAL naming "/pod" (not a serving pod memplan reads), "/metrics"
 * or "/log" (no figure that measures a term: vLLM num_gpu_blocks or kv_cache_tokens, SGLang kv_cache_tokens),
 * MP_ENOTFOUND ("/node", the model), those of mps_engine_check_run.
 */
mp_status mps_observation_evaluate(mps_service *s, mps_node_cache *cache, int64_t now, mps_observation_request *rq,
				   mps_engine_check *check, mps_observation *out, mp_error *err);
/* Second half: stores o (observed_at now when ""); *existed when its key was stored before (o->id that row's). */
mp_status mps_observation_store(mps_service *s, mps_observation *o, bool *existed, mp_error *err);

/* The stored observations matching f, newest first (mp_store_observation_page). */
mp_status mps_observation_page(mps_service *s, const mp_store_observation_filter *f, int64_t before,
			       mps_observation *rows, size_t cap, size_t *n, bool *more, mp_error *err);
/* memplan's error per (engine, version, device, model, figure): the median of each group's newest MPS_OBS_WINDOW,
 * at most cap groups. */
mp_status mps_observation_summaries(mps_service *s, mps_obs_summary *rows, size_t cap, size_t *n, mp_error *err);
/* The correction of term for (engine, version line, device) as plans would take it now. */
mp_status mps_observation_correction(mps_service *s, mp_engine e, const char *version_line, const char *device_id,
				     mps_obs_term term, mps_obs_correction *out, mp_error *err);
/* The term an engine's observations measure (vLLM non_torch, SGLang context); MPS_OBS_TERM_COUNT for none. */
mps_obs_term mps_engine_term(mp_engine e);

#endif /* MPS_OBSERVE_H */
