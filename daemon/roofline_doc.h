/*
 * roofline_doc.h: the roofline documents, shared by POST /v1/roofline, GET /v1/devices/{id}/roofline.svg, the
 * inference plan's performance block and `memplan roofline`: request decoding (device id or inline profile,
 * operations as JSON or as compact "kind:key=value,..." specs), response encoding, and the text and SVG
 * charts. The arithmetic is the planner's (planner/mp_roofline.h); this module only moves values.
 */
#ifndef MPD_ROOFLINE_DOC_H
#define MPD_ROOFLINE_DOC_H

#include <cjson/cJSON.h>

#include "../db/store.h"
#include "../planner/memplan.h"
#include "plan.h"

#define MPD_ROOFLINE_MAX_OPS 64

/* POST /v1/roofline as a function: body in, document out (caller owns). Errors name the field. */
mp_status mpd_roofline(mp_store *store, const cJSON *body, cJSON **out, mp_error *err);

/*
 * Converts a compact operation spec ("matmul:m=1,k=4096,n=4096,dtype=bf16" or "elementwise:elements=1e6")
 * into the JSON operation object POST /v1/roofline takes. Numbers may use exponents when integral. The
 * result is owned by the caller. Errors: MP_EINVAL naming `field` (e.g. "?op" or "argv[3]").
 */
mp_status mpd_op_spec_json(const char *spec, const char *field, cJSON **out, mp_error *err);

/*
 * The inference plan's performance block on dev: decode step at the last token of sequence_length, prefill of
 * sequence_length tokens, tokens/s, bound, the batch where decode turns compute-bound. Same engine as
 * POST /v1/roofline. Per GPU when tp (the plan's tensor_parallel_size) is above 1: each GPU's share of the
 * weights and KV cache, all-reduces not modelled (a note says so). Never NULL unless out of memory; on a planner
 * error the block says so in "error".
 */
cJSON *mpd_performance_json(const mpd_model *m, const mp_inference_req *req, const mp_device *dev, uint64_t tp);

/* `memplan roofline ...` (argv after the subcommand): prints the table and the text chart, or the document
 * (--json), and writes an SVG (--svg FILE). Returns the exit status: 0, 1 (planner/store error), 2 (usage). */
int mpd_roofline_cli(int argc, char **argv, const char *usage);

/* ----- charts ------------------------------------------------------------------------------------------ */
typedef struct mpd_chart_point {
	char label[64];
	double intensity;  /* FLOP/byte */
	double attainable; /* FLOP/s */
	bool compute_bound;
} mpd_chart_point;

typedef struct mpd_chart {
	char title[160];
	double bandwidth;    /* DRAM, bytes/s */
	double peak;         /* matrix peak of the ridge dtype, FLOP/s */
	char peak_label[32]; /* "bf16 tensor" */
	double vector_peak;  /* 0 = none drawn */
	double l2_bandwidth; /* 0 = none drawn */
	size_t npoints;
	mpd_chart_point points[MPD_ROOFLINE_MAX_OPS];
} mpd_chart;

/* Fills a chart from a POST /v1/roofline response document. */
void mpd_chart_from_doc(const cJSON *doc, mpd_chart *c);

/*
 * An SVG chart: log-log axes (decades labelled), the bandwidth and compute ceilings, the ridge (a marked
 * point with id "ridge"), each operation as a labelled point (class "op"). Every element carries its data
 * value in data-* attributes. Caller frees. NULL when out of memory.
 */
char *mpd_roofline_svg(const mpd_chart *c);

/* A text log-log chart for terminals: axes labelled, the ridge marked, points numbered, a legend. Caller frees. */
char *mpd_roofline_text(const mpd_chart *c);

/* Escapes &, <, >, " and ' for XML text and attribute values into out (always NUL-terminated; truncates at
 * a character boundary). Returns the length written. */
size_t mpd_xml_escape(const char *in, char *out, size_t len);

#endif /* MPD_ROOFLINE_DOC_H */
