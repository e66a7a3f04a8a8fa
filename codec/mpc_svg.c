/*
 * mpc_svg.c: roofline charts from a chart (mpc_chart_from_result): an SVG (log-log axes, bandwidth and compute ceilings, the
 * ridge, labelled points) and a text chart for terminals. Owns the one XML escaping function; every string
 * that reaches the SVG (title, labels) goes through it. Draws only: every value comes from the chart.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

/* ----- a growable string ------------------------------------------------------------------------------------ */
typedef struct sbuf {
	char *s;
	size_t len, cap;
	bool failed;
} sbuf;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
sb_printf(sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		if (b->s && (size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t cap = b->cap ? b->cap : 4096;
			char *p;

			while (cap < b->len + (size_t)n + 1)
				cap *= 2;
			p = realloc(b->s, cap);
			if (p == NULL) {
				b->failed = true;
				return;
			}
			b->s = p;
			b->cap = cap;
		}
	}
}

static char *sb_take(sbuf *b)
{
	if (b->failed) {
		free(b->s);
		return NULL;
	}
	return b->s;
}

/*
 * Text as XML 1.0 character data (section 2.2: Char is tab, newline, CR, U+0020-U+D7FF, U+E000-U+FFFD and
 * U+10000-U+10FFFF): the five markup characters as entities, other control characters dropped, and every byte of an
 * ill-formed UTF-8 sequence, and U+FFFE and U+FFFF, replaced by U+FFFD. A label taken from a query string can be
 * any bytes ("%ff%fe", "%ef%bf%be"): without this an XML parser refuses the whole chart. Never cuts inside an entity
 * or a character.
 */
size_t mpc_xml_escape(const char *in, char *out, size_t len)
{
	static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */
	size_t n = 0, left = strlen(in);

	if (len == 0)
		return 0;
	while (left > 0) {
		const unsigned char c = (unsigned char)*in;
		const char *rep = NULL;
		size_t k, take = 1;

		switch (c) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		default:
			if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') { /* not a Char: dropped */
				in++;
				left--;
				continue;
			}
			if (c < 0x80) {
				rep = in;
				break;
			}
			/* the length of the well-formed sequence at in (0 when ill-formed) */
			take = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
			if (take > left || mpc_utf8_invalid_at(in, take) != take)
				take = 0;
			if (take == 3 && c == 0xEF && (unsigned char)in[1] == 0xBF && (unsigned char)in[2] >= 0xBE)
				take = 0; /* U+FFFE, U+FFFF: noncharacters XML excludes */
			if (take == 0) {
				rep = replacement;
				take = 1; /* one ill-formed byte at a time */
			} else {
				rep = in;
			}
		}
		k = rep == in ? take : strlen(rep);
		if (rep == replacement) /* replaces one byte of input, or the three of a noncharacter */
			take = ((unsigned char)in[0] == 0xEF && left >= 3 && (unsigned char)in[1] == 0xBF &&
				(unsigned char)in[2] >= 0xBE)
				       ? 3
				       : 1;
		if (n + k >= len)
			break;
		memcpy(out + n, rep, k);
		n += k;
		in += take;
		left -= take;
	}
	out[n] = '\0';
	return n;
}

/* ----- axes ------------------------------------------------------------------------------------------- */

typedef struct axes {
	int x0, x1, y0, y1; /* decades: 10^x0 .. 10^x1 FLOP/B, 10^y0 .. 10^y1 FLOP/s */
} axes;

static bool drawable(const mpc_chart_point *p)
{
	return p->intensity > 0 && p->attainable > 0 && isfinite(p->intensity) && isfinite(p->attainable);
}

/* The highest compute roof. */
static double top_roof(const mpc_chart *c)
{
	double top = c->peak;

	for (size_t k = 0; k < c->nroofs; k++)
		top = fmax(top, c->roofs[k].flops_per_second);
	return top;
}

static axes axes_of(const mpc_chart *c)
{
	double ridge = c->bandwidth > 0 ? c->peak / c->bandwidth : 1, top = top_roof(c);
	double lo = ridge / 100, hi = ridge * 10, ylo, yhi = top > 0 ? top : 1e12;
	axes a;

	if (!(ridge > 0))
		ridge = 1, lo = 0.01, hi = 10;
	if (c->bandwidth > 0 && top > 0)
		hi = fmax(hi, top / c->bandwidth * 10);
	for (size_t i = 0; i < c->npoints; i++) {
		if (!drawable(&c->points[i]))
			continue;
		lo = fmin(lo, c->points[i].intensity);
		hi = fmax(hi, c->points[i].intensity);
	}
	a.x0 = (int)floor(log10(lo));
	a.x1 = (int)ceil(log10(hi));
	if (a.x1 <= a.x0)
		a.x1 = a.x0 + 1;
	if (a.x1 - a.x0 > 12)
		a.x0 = a.x1 - 12;
	ylo = c->bandwidth > 0 ? c->bandwidth * pow(10, a.x0) : yhi / 1e4;
	for (size_t i = 0; i < c->npoints; i++)
		if (drawable(&c->points[i]))
			ylo = fmin(ylo, c->points[i].attainable);
	a.y1 = (int)ceil(log10(yhi * 1.5));
	a.y0 = (int)floor(log10(ylo));
	if (a.y1 - a.y0 > 12)
		a.y0 = a.y1 - 12;
	if (a.y1 <= a.y0)
		a.y0 = a.y1 - 1;
	return a;
}

/* ----- SVG layout ------------------------------------------------------------------------------------- */

#define W 1000      /* width */
#define ML 90       /* plot left */
#define MT 50       /* plot top */
#define PR 700      /* plot right */
#define PB 470      /* plot bottom */
#define LX 718      /* the legend, right of the plot */
#define BASE_H 540  /* height without the table of numbered points */
#define LABEL_PX 11 /* font size of every label in the plot and the legend */
#define LABEL_H 15  /* the height a label is given: font ascent + descent with a margin */
#define EM_WIDTH 0.62
#define NEAR_GAP 42 /* the farthest a label sits from its point (px) before it is numbered instead */
#define FAR_GAP 210 /* the farthest a number or the ridge's label may sit */

double mpc_svg_text_width(const char *s, double px)
{
	size_t chars = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		chars += (*p & 0xC0) != 0x80; /* UTF-8 lead bytes */
	return (double)chars * EM_WIDTH * px;
}

static double sx(const axes *a, double v)
{
	return ML + (log10(v) - a->x0) / (a->x1 - a->x0) * (PR - ML);
}

static double sy(const axes *a, double v)
{
	return MT + (a->y1 - log10(v)) / (a->y1 - a->y0) * (PB - MT);
}

/* clip a roof segment's intensity to the x range */
static double clipx(const axes *a, double v)
{
	return fmin(fmax(v, pow(10, a->x0)), pow(10, a->x1));
}

static void sb_escaped(sbuf *b, const char *s)
{
	char buf[512];

	mpc_xml_escape(s, buf, sizeof(buf));
	sb_printf(b, "%s", buf);
}

/* ----- label placement: boxes that may not overlap ---------------------------------------------------------- */

typedef struct box {
	double x0, y0, x1, y1;
} box;

#define MAX_BOXES (2 * MPC_CHART_MAX_POINTS + MPC_CHART_MAX_ROOFS + 8)

typedef struct segment {
	double x0, y0, x1, y1;
} segment;

#define MAX_SEGMENTS (MPC_CHART_MAX_ROOFS + 4)

typedef struct placer {
	box area; /* labels stay inside it */
	box taken[MAX_BOXES];
	size_t n;
	segment lines[MAX_SEGMENTS]; /* the roofs and the ridge: avoided when there is room elsewhere */
	size_t nlines;
	bool avoid_lines;
} placer;

/* Whether segment l crosses box b (Liang-Barsky clipping of the segment against the box). */
static bool crosses(const segment *l, const box *b)
{
	double t0 = 0, t1 = 1, dx = l->x1 - l->x0, dy = l->y1 - l->y0;
	double p[4] = { -dx, dx, -dy, dy }, q[4] = { l->x0 - b->x0, b->x1 - l->x0, l->y0 - b->y0, b->y1 - l->y0 };

	for (int i = 0; i < 4; i++) {
		if (p[i] == 0) {
			if (q[i] < 0)
				return false;
			continue;
		}
		{
			double t = q[i] / p[i];

			if (p[i] < 0)
				t0 = fmax(t0, t);
			else
				t1 = fmin(t1, t);
		}
		if (t0 > t1)
			return false;
	}
	return true;
}

static void add_line(placer *pl, double x0, double y0, double x1, double y1)
{
	if (pl->nlines < MAX_SEGMENTS)
		pl->lines[pl->nlines++] = (segment){ x0, y0, x1, y1 };
}

static bool overlaps(const box *a, const box *b)
{
	return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

static bool is_free(const placer *pl, const box *b)
{
	if (b->x0 < pl->area.x0 || b->y0 < pl->area.y0 || b->x1 > pl->area.x1 || b->y1 > pl->area.y1)
		return false;
	for (size_t i = 0; i < pl->n; i++)
		if (overlaps(b, &pl->taken[i]))
			return false;
	for (size_t i = 0; pl->avoid_lines && i < pl->nlines; i++)
		if (crosses(&pl->lines[i], b))
			return false;
	return true;
}

static void take(placer *pl, box b)
{
	if (pl->n < MAX_BOXES)
		pl->taken[pl->n++] = b;
}

/* A free box of w x h near (px, py): in rings of growing gap, eight positions each (right, the diagonals, above,
 * below, left), the box's nearest corner or edge `gap` away from the point, the right side first. Sets *far when
 * it sits away from the point (a leader line is drawn). */
static bool place_near(placer *pl, double px, double py, double w, double h, double max_gap, box *out, bool *far)
{
	static const double gaps[] = { 6, 14, 26, 42, 62, 88, 120, 160, 210 };
	static const int at[][2] = { { 1, 0 }, { 1, -1 }, { 1, 1 }, { 0, -1 }, { 0, 1 }, { -1, -1 }, { -1, 0 }, { -1, 1 } };

	/* first clear of the roofs' lines, then anywhere free of labels and points */
	for (int pass = 0; pass < 2; pass++)
	for (size_t g = 0; g < sizeof(gaps) / sizeof(gaps[0]) && gaps[g] <= max_gap; g++)
		for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
			double d = at[k][0] && at[k][1] ? gaps[g] * 0.7 : gaps[g];
			double x0 = at[k][0] > 0 ? px + d : at[k][0] < 0 ? px - d - w : px - w / 2;
			double y0 = at[k][1] > 0 ? py + d : at[k][1] < 0 ? py - d - h : py - h / 2;
			box b = { x0, y0, x0 + w, y0 + h };
			bool ok;

			pl->avoid_lines = pass == 0;
			ok = is_free(pl, &b);
			pl->avoid_lines = false;
			if (ok) {
				double ex = fmin(fmax(px, b.x0), b.x1), ey = fmin(fmax(py, b.y0), b.y1);

				take(pl, b);
				*out = b;
				*far = hypot(ex - px, ey - py) > 12;
				return true;
			}
		}
	return false;
}

/* A label's text element in box b (anchored at its left, baseline above the box's bottom margin). */
static void label_text(sbuf *sb, const char *id, const box *b, const char *text)
{
	sb_printf(sb, "<text%s%s%s class=\"label\" x=\"%.2f\" y=\"%.2f\" font-size=\"%d\">", id ? " id=\"" : "",
	          id ? id : "", id ? "\"" : "", b->x0, b->y1 - 4, LABEL_PX);
	sb_escaped(sb, text);
	sb_printf(sb, "</text>");
}

/* The point of b nearest to (px, py), where a leader line ends. */
static void nearest_on(const box *b, double px, double py, double *x, double *y)
{
	*x = fmin(fmax(px, b->x0), b->x1);
	*y = fmin(fmax(py, b->y0), b->y1);
}

/* text cut to fit width px at font size LABEL_PX, "..." marking the cut (never inside a UTF-8 sequence) */
static void fit_text(const char *in, double width, char *out, size_t len)
{
	size_t n;

	snprintf(out, len, "%s", in);
	if (mpc_svg_text_width(out, LABEL_PX) <= width)
		return;
	n = strlen(out);
	while (n > 0 && mpc_svg_text_width(out, LABEL_PX) + mpc_svg_text_width("...", LABEL_PX) > width) {
		do
			n--;
		while (n > 0 && ((unsigned char)out[n] & 0xC0) == 0x80);
		out[n] = '\0';
	}
	if (n + 4 <= len)
		memcpy(out + n, "...", 4);
}

/* ----- SVG ---------------------------------------------------------------------------------------------- */

static const char *const roof_colours[] = { "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
                                            "#7f7f7f", "#ff7f0e", "#2ca02c", "#aec7e8", "#c49c94", "#98df8a" };
#define MEMORY_BLUE "#1f77b4"
#define COMPUTE_RED "#d62728"

/* A cluster: the points drawn on one spot (closer than a marker), which share one label. */
typedef struct cluster {
	size_t first;      /* the first point, whose group holds the label */
	size_t members[MPC_CHART_MAX_POINTS];
	size_t n;
	int number;        /* first table number when numbered, else 0 */
} cluster;

typedef struct svg_state {
	sbuf b;
	axes a;
	placer pl;
	cluster *clusters;
	size_t nclusters;
	int *cluster_of; /* per point */
	int numbered;    /* table rows */
} svg_state;

static void svg_axes(svg_state *s, int h)
{
	sbuf *b = &s->b;
	const axes *a = &s->a;

	sb_printf(b,
	          "<g id=\"axes\" data-x-min-log10=\"%d\" data-x-max-log10=\"%d\" data-y-min-log10=\"%d\" "
	          "data-y-max-log10=\"%d\">\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
	          "stroke=\"black\"/>\n",
	          a->x0, a->x1, a->y0, a->y1, ML, MT, PR - ML, PB - MT);
	for (int e = a->x0; e <= a->x1; e++) {
		double x = sx(a, pow(10, e));

		sb_printf(b,
		          "<line class=\"xtick\" data-value=\"1e%d\" x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" "
		          "stroke=\"#ddd\"/>\n<text class=\"xtick-label\" x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">"
		          "10<tspan dy=\"-6\" font-size=\"9\">%d</tspan></text>\n",
		          e, x, MT, x, PB, x, PB + 18, e);
	}
	for (int e = a->y0; e <= a->y1; e++) {
		double y = sy(a, pow(10, e));

		sb_printf(b,
		          "<line class=\"ytick\" data-value=\"1e%d\" x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\" "
		          "stroke=\"#ddd\"/>\n<text class=\"ytick-label\" x=\"%d\" y=\"%.2f\" text-anchor=\"end\">"
		          "10<tspan dy=\"-6\" font-size=\"9\">%d</tspan></text>\n",
		          e, ML, y, PR, y, ML - 8, y + 4, e);
	}
	(void)h;
	sb_printf(b,
	          "<text id=\"x-label\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">Arithmetic intensity (FLOP/byte, "
	          "log scale)</text>\n<text id=\"y-label\" transform=\"translate(22 %d) rotate(-90)\" "
	          "text-anchor=\"middle\">Attainable FLOP/s (log scale)</text>\n</g>\n",
	          (ML + PR) / 2, PB + 42, (MT + PB) / 2);
}

/* A sloped bandwidth ceiling bw from the left edge to where it meets `peak`. */
static void bandwidth_line(svg_state *s, const char *id, double bw, double peak, const char *style)
{
	const axes *a = &s->a;
	double i0 = pow(10, a->x0), i1 = clipx(a, peak / bw);
	double f0 = bw * i0;

	if (f0 < pow(10, a->y0)) { /* start where the line enters the plot */
		i0 = pow(10, a->y0) / bw;
		f0 = pow(10, a->y0);
	}
	if (i0 >= i1)
		return;
	add_line(&s->pl, sx(a, i0), sy(a, f0), sx(a, i1), sy(a, bw * i1));
	sb_printf(&s->b,
	          "<line id=\"%s\" class=\"ceiling\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
	          "data-bandwidth-bytes-per-second=\"%.6g\" %s/>\n",
	          id, sx(a, i0), sy(a, f0), sx(a, i1), sy(a, bw * i1), bw, style);
}

/* The roofs: bandwidth to the highest roof, each compute roof from its own ridge to the right edge with a tag
 * at its right end where there is room, the ridge of roofs[0] marked and labelled. */
static void svg_roofs(svg_state *s, const mpc_chart *c)
{
	const axes *a = &s->a;
	double ridge = c->peak / c->bandwidth;
	char num[48], text[96];

	bandwidth_line(s, "memory-ceiling", c->bandwidth, top_roof(c), "stroke=\"" MEMORY_BLUE "\" stroke-width=\"2.5\"");
	if (c->l2_bandwidth > c->bandwidth)
		bandwidth_line(s, "l2-ceiling", c->l2_bandwidth, top_roof(c), "stroke=\"#2ca02c\" stroke-dasharray=\"6 4\"");
	for (size_t k = 0; k < c->nroofs; k++) {
		const mpc_chart_roof *rf = &c->roofs[k];
		double y = sy(a, rf->flops_per_second), w;
		box tag;
		char id[32]; /* "roof-tag-" and a size_t's 20 digits */

		if (!(rf->flops_per_second > 0) || rf->flops_per_second < pow(10, a->y0))
			continue;
		snprintf(id, sizeof(id), k ? "roof-%zu" : "compute-ceiling", k);
		add_line(&s->pl, sx(a, clipx(a, rf->flops_per_second / c->bandwidth)), y, PR, y);
		sb_printf(&s->b,
		          "<line id=\"%s\" class=\"ceiling%s\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\" "
		          "data-flops-per-second=\"%.6g\" data-label=\"",
		          id, k ? " roof" : "", sx(a, clipx(a, rf->flops_per_second / c->bandwidth)), y, PR, y,
		          rf->flops_per_second);
		sb_escaped(&s->b, rf->label);
		sb_printf(&s->b, "\" stroke=\"%s\" stroke-width=\"%s\"%s/>\n", roof_colours[k % 12], k ? "1.8" : "2.5",
		          rf->vector ? " stroke-dasharray=\"6 4\"" : "");
		/* the tag: above the line at the right end, else below, else the legend alone names it */
		snprintf(text, sizeof(text), "%s %s", rf->label, mpc_fmt_si(num, sizeof(num), rf->flops_per_second, "FLOP/s"));
		w = mpc_svg_text_width(text, LABEL_PX);
		{
			double x_start = sx(a, clipx(a, rf->flops_per_second / c->bandwidth)) + 4;
			bool found = false;

			/* from the right end leftwards along the line, above it then below it */
			for (double x1 = PR - 4; !found && x1 - w >= x_start; x1 -= 12)
				for (int side = 0; side < 2 && !found; side++) {
					tag = side ? (box){ x1 - w, y + 2, x1, y + 2 + LABEL_H }
						   : (box){ x1 - w, y - 2 - LABEL_H, x1, y - 2 };
					found = is_free(&s->pl, &tag);
				}
			if (!found)
				continue;
		}
		{
			take(&s->pl, tag);
			snprintf(id, sizeof(id), "roof-tag-%zu", k);
			label_text(&s->b, id, &tag, text);
			sb_printf(&s->b, "\n");
		}
	}
	/* the ridge of roofs[0] */
	{
		double x = sx(a, ridge), y = sy(a, c->peak), w;
		box rb;
		bool far;

		snprintf(text, sizeof(text), "ridge %s FLOP/B", mpc_fmt_sig3(num, sizeof(num), ridge));
		w = mpc_svg_text_width(text, LABEL_PX);
		add_line(&s->pl, x, y, x, PB);
		sb_printf(&s->b,
		          "<line id=\"ridge-line\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%d\" stroke=\"#555\" "
		          "stroke-dasharray=\"3 3\"/>\n<circle id=\"ridge\" cx=\"%.2f\" cy=\"%.2f\" r=\"5\" fill=\"#555\" "
		          "data-intensity=\"%.6g\" data-flops-per-second=\"%.6g\"/>\n",
		          x, y, x, PB, x, y, ridge, c->peak);
		if (place_near(&s->pl, x, y, w, LABEL_H, FAR_GAP, &rb, &far)) {
			label_text(&s->b, "ridge-label", &rb, text);
			sb_printf(&s->b, "\n");
		}
	}
}

/* Groups the drawable points by where they are drawn: closer than a marker share a cluster. */
static bool cluster_points(svg_state *s, const mpc_chart *c)
{
	s->clusters = calloc(c->npoints ? c->npoints : 1, sizeof(*s->clusters));
	s->cluster_of = calloc(c->npoints ? c->npoints : 1, sizeof(*s->cluster_of));
	if (s->clusters == NULL || s->cluster_of == NULL)
		return false;
	for (size_t i = 0; i < c->npoints; i++) {
		const mpc_chart_point *p = &c->points[i];
		double x, y;
		size_t k;

		s->cluster_of[i] = -1;
		if (!drawable(p))
			continue;
		x = sx(&s->a, p->intensity);
		y = sy(&s->a, p->attainable);
		for (k = 0; k < s->nclusters; k++) {
			const mpc_chart_point *q = &c->points[s->clusters[k].first];

			if (fabs(sx(&s->a, q->intensity) - x) < 6 && fabs(sy(&s->a, q->attainable) - y) < 6)
				break;
		}
		if (k == s->nclusters)
			s->clusters[s->nclusters++].first = i;
		s->clusters[k].members[s->clusters[k].n++] = i;
		s->cluster_of[i] = (int)k;
	}
	return true;
}

/* The label a cluster gets in the plot when there is room: its labels joined, else numbers. */
static void cluster_label(const mpc_chart *c, const cluster *cl, char *out, size_t len)
{
	size_t o = 0;
	const char *first = c->points[cl->members[0]].label, *rest = strchr(first, ' ');
	bool same_rest = rest != NULL && cl->n > 1;

	out[0] = '\0';
	/* "decode residual_add" and "prefill residual_add": "decode, prefill residual_add" */
	for (size_t m = 1; same_rest && m < cl->n; m++) {
		const char *r = strchr(c->points[cl->members[m]].label, ' ');

		same_rest = r != NULL && strcmp(r, rest) == 0;
	}
	if (same_rest) {
		for (size_t m = 0; m < cl->n && o < len; m++) {
			const char *l = c->points[cl->members[m]].label;

			o += (size_t)snprintf(out + o, len - o, "%s%.*s", m ? ", " : "", (int)(strchr(l, ' ') - l), l);
		}
		if (o < len)
			snprintf(out + o, len - o, "%s", rest);
		return;
	}
	/* "prefill mlp_gate_up" and "prefill mlp_down": "prefill mlp_gate_up, mlp_down" */
	for (size_t m = 0; m < cl->n && o < len; m++) {
		const char *l = c->points[cl->members[m]].label, *sp = strchr(l, ' ');
		const char *prev = m ? c->points[cl->members[m - 1]].label : NULL;

		if (prev && sp && strncmp(prev, l, (size_t)(sp - l) + 1) == 0)
			l = sp + 1;
		o += (size_t)snprintf(out + o, len - o, "%s%s", m ? ", " : "", l);
	}
}

static void number_label(const cluster *cl, char *out, size_t len)
{
	if (cl->n == 1)
		snprintf(out, len, "%d", cl->number);
	else if (cl->n == 2)
		snprintf(out, len, "%d, %d", cl->number, cl->number + 1);
	else
		snprintf(out, len, "%d-%d", cl->number, cl->number + (int)cl->n - 1);
}

/* Each point's marker, then each cluster's label where it fits (leader line when away from the point), else its
 * number (the table under the plot names it). */
static void svg_points(svg_state *s, const mpc_chart *c)
{
	char (*labels)[256] = calloc(s->nclusters ? s->nclusters : 1, sizeof(*labels));
	box *where = calloc(s->nclusters ? s->nclusters : 1, sizeof(*where));
	bool *placed = calloc(s->nclusters ? s->nclusters : 1, sizeof(*placed));
	bool *far = calloc(s->nclusters ? s->nclusters : 1, sizeof(*far));

	if (labels == NULL || where == NULL || placed == NULL || far == NULL) {
		s->b.failed = true;
		goto out;
	}
	for (size_t k = 0; k < s->nclusters; k++) {
		cluster *cl = &s->clusters[k];
		const mpc_chart_point *p = &c->points[cl->first];
		double x = sx(&s->a, p->intensity), y = sy(&s->a, p->attainable);
		char text[256];

		cluster_label(c, cl, text, sizeof(text));
		/* the labels themselves stay near their points; a number may go further */
		if (strlen(text) <= 64 && place_near(&s->pl, x, y, mpc_svg_text_width(text, LABEL_PX), LABEL_H, NEAR_GAP,
		                                      &where[k], &far[k])) {
			snprintf(labels[k], sizeof(labels[k]), "%s", text);
			placed[k] = true;
			continue;
		}
		cl->number = s->numbered + 1;
		s->numbered += (int)cl->n;
		number_label(cl, text, sizeof(text));
		if (place_near(&s->pl, x, y, mpc_svg_text_width(text, LABEL_PX), LABEL_H, FAR_GAP, &where[k], &far[k])) {
			snprintf(labels[k], sizeof(labels[k]), "%s", text);
			placed[k] = true;
		}
	}
	sb_printf(&s->b, "<g id=\"ops\">\n");
	for (size_t i = 0; i < c->npoints; i++) {
		const mpc_chart_point *p = &c->points[i];
		int k = s->cluster_of[i];
		double x, y;

		if (k < 0)
			continue;
		x = sx(&s->a, p->intensity);
		y = sy(&s->a, p->attainable);
		sb_printf(&s->b,
		          "<g class=\"op\" data-index=\"%zu\" data-intensity=\"%.6g\" data-attainable=\"%.6g\" "
		          "data-bound=\"%s\" data-roof=\"",
		          i, p->intensity, p->attainable, p->compute_bound ? "compute" : "memory");
		sb_escaped(&s->b, c->roofs[p->roof < c->nroofs ? p->roof : 0].label);
		sb_printf(&s->b, "\" data-label=\"");
		sb_escaped(&s->b, p->label);
		if (s->clusters[k].number) {
			size_t m = 0;

			while (m < s->clusters[k].n && s->clusters[k].members[m] != i)
				m++;
			sb_printf(&s->b, "\" data-number=\"%d", s->clusters[k].number + (int)m);
		}
		sb_printf(&s->b, "\"><circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"%s\"/>", x, y,
		          p->compute_bound ? COMPUTE_RED : MEMORY_BLUE);
		if (i == s->clusters[k].first && placed[k]) {
			if (far[k]) {
				double ex, ey;

				nearest_on(&where[k], x, y, &ex, &ey);
				sb_printf(&s->b,
				          "<line class=\"leader\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
				          "stroke=\"#999\" stroke-width=\"0.8\"/>",
				          x, y, ex, ey);
			}
			label_text(&s->b, NULL, &where[k], labels[k]);
		}
		sb_printf(&s->b, "</g>\n");
	}
	sb_printf(&s->b, "</g>\n");
out:
	free(labels);
	free(where);
	free(placed);
	free(far);
}

/* The legend beside the plot: the lines and the colours. */
static void svg_legend(svg_state *s, const mpc_chart *c)
{
	sbuf *b = &s->b;
	char num[48], text[128], cut[128];
	int y = MT + 8;
	const double room = W - LX - 40; /* text width after the swatch */

	sb_printf(b, "<g id=\"legend\">\n");
	mpc_fmt_si(num, sizeof(num), c->bandwidth, "B/s");
	snprintf(text, sizeof(text), "memory bandwidth %s", num);
	fit_text(text, room, cut, sizeof(cut));
	sb_printf(b,
	          "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"" MEMORY_BLUE "\" stroke-width=\"2.5\"/>"
	          "<text class=\"legend-label\" x=\"%d\" y=\"%d\" font-size=\"%d\">",
	          LX, y, LX + 24, y, LX + 32, y + 4, LABEL_PX);
	sb_escaped(b, cut);
	sb_printf(b, "</text>\n");
	y += 20;
	if (c->l2_bandwidth > c->bandwidth) {
		mpc_fmt_si(num, sizeof(num), c->l2_bandwidth, "B/s");
		snprintf(text, sizeof(text), "L2 bandwidth %s", num);
		sb_printf(b,
		          "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#2ca02c\" stroke-dasharray=\"6 4\"/>"
		          "<text class=\"legend-label\" x=\"%d\" y=\"%d\" font-size=\"%d\">",
		          LX, y, LX + 24, y, LX + 32, y + 4, LABEL_PX);
		sb_escaped(b, text);
		sb_printf(b, "</text>\n");
		y += 20;
	}
	for (size_t k = 0; k < c->nroofs; k++) {
		const mpc_chart_roof *rf = &c->roofs[k];

		if (!(rf->flops_per_second > 0))
			continue;
		snprintf(text, sizeof(text), "%s %s%s", rf->label, mpc_fmt_si(num, sizeof(num), rf->flops_per_second, "FLOP/s"),
		         k == 0 ? " (ridge)" : "");
		fit_text(text, room, cut, sizeof(cut));
		sb_printf(b,
		          "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"%s\"%s/>"
		          "<text class=\"legend-label\" x=\"%d\" y=\"%d\" font-size=\"%d\">",
		          LX, y, LX + 24, y, roof_colours[k % 12], k ? "1.8" : "2.5",
		          rf->vector ? " stroke-dasharray=\"6 4\"" : "", LX + 32, y + 4, LABEL_PX);
		sb_escaped(b, cut);
		sb_printf(b, "</text>\n");
		y += 20;
	}
	if (c->bandwidth > 0 && c->peak > 0) {
		snprintf(text, sizeof(text), "ridge %s FLOP/B", mpc_fmt_sig3(num, sizeof(num), c->peak / c->bandwidth));
		sb_printf(b,
		          "<circle cx=\"%d\" cy=\"%d\" r=\"5\" fill=\"#555\"/><text class=\"legend-label\" x=\"%d\" "
		          "y=\"%d\" font-size=\"%d\">%s</text>\n",
		          LX + 12, y, LX + 32, y + 4, LABEL_PX, text);
		y += 20;
	}
	sb_printf(b,
	          "<circle id=\"legend-memory\" cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"" MEMORY_BLUE "\"/><text "
	          "class=\"legend-label\" x=\"%d\" y=\"%d\" font-size=\"%d\">memory-bound operation</text>\n"
	          "<circle id=\"legend-compute\" cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"" COMPUTE_RED "\"/><text "
	          "class=\"legend-label\" x=\"%d\" y=\"%d\" font-size=\"%d\">compute-bound operation</text>\n</g>\n",
	          LX + 12, y, LX + 32, y + 4, LABEL_PX, LX + 12, y + 20, LX + 32, y + 24, LABEL_PX);
}

/* The table of numbered points, under the plot in two columns. */
#define TABLE_Y (PB + 66)
#define TABLE_ROW 16
#define TABLE_COL ((W - ML - 20) / 2)

static int table_rows(int numbered)
{
	return (numbered + 1) / 2;
}

static void svg_table(svg_state *s, const mpc_chart *c)
{
	int row = 0;

	if (s->numbered == 0)
		return;
	sb_printf(&s->b, "<g id=\"point-table\">\n");
	for (size_t k = 0; k < s->nclusters; k++) {
		const cluster *cl = &s->clusters[k];

		for (size_t m = 0; cl->number && m < cl->n; m++, row++) {
			const mpc_chart_point *p = &c->points[cl->members[m]];
			char text[200], cut[200], a[48], f[48];
			int col = row % 2, line = row / 2;

			snprintf(text, sizeof(text), "%d  %s: %s-bound, %s FLOP/B, %s", cl->number + (int)m, p->label,
			         p->compute_bound ? "compute" : "memory", mpc_fmt_sig3(a, sizeof(a), p->intensity),
			         mpc_fmt_si(f, sizeof(f), p->attainable, "FLOP/s"));
			fit_text(text, TABLE_COL - 12, cut, sizeof(cut));
			sb_printf(&s->b, "<text class=\"table-label\" data-number=\"%d\" x=\"%d\" y=\"%d\" font-size=\"%d\">",
			          cl->number + (int)m, ML + col * TABLE_COL, TABLE_Y + line * TABLE_ROW, LABEL_PX);
			sb_escaped(&s->b, cut);
			sb_printf(&s->b, "</text>\n");
		}
	}
	sb_printf(&s->b, "</g>\n");
}

char *mpc_roofline_svg(const mpc_chart *c)
{
	svg_state s;
	char title[160];
	int h;

	memset(&s, 0, sizeof(s));
	s.a = axes_of(c);
	s.pl.area = (box){ ML + 2, MT + 2, PR - 2, PB - 2 };
	if (!cluster_points(&s, c)) {
		free(s.clusters);
		free(s.cluster_of);
		return NULL;
	}
	/* the layout is decided before anything is written: the table under the plot sets the height */
	{
		sbuf body = { 0 };
		sbuf head = { 0 };

		s.b = body;
		/* the markers first (points and the ridge): no label may cover one */
		for (size_t k = 0; k < s.nclusters; k++) {
			const mpc_chart_point *p = &c->points[s.clusters[k].first];
			double x = sx(&s.a, p->intensity), y = sy(&s.a, p->attainable);

			take(&s.pl, (box){ x - 5, y - 5, x + 5, y + 5 });
		}
		if (c->bandwidth > 0 && c->peak > 0) {
			double x = sx(&s.a, c->peak / c->bandwidth), y = sy(&s.a, c->peak);

			take(&s.pl, (box){ x - 6, y - 6, x + 6, y + 6 });
		}
		if (c->bandwidth > 0 && c->peak > 0)
			svg_roofs(&s, c);
		svg_points(&s, c);
		svg_legend(&s, c);
		svg_table(&s, c);
		body = s.b;
		h = s.numbered ? TABLE_Y + table_rows(s.numbered) * TABLE_ROW : BASE_H;
		if (h < BASE_H)
			h = BASE_H;
		s.b = head;
		fit_text(c->title, (W - ML - 10) * LABEL_PX / 16.0, title, sizeof(title));
		sb_printf(&s.b,
		          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		          "font-family=\"DejaVu Sans, Verdana, sans-serif\" font-size=\"12\">\n<title>",
		          W, h, W, h);
		sb_escaped(&s.b, c->title);
		sb_printf(&s.b, "</title>\n<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, h);
		sb_printf(&s.b, "<text id=\"chart-title\" x=\"%d\" y=\"28\" font-size=\"16\">", ML);
		sb_escaped(&s.b, title);
		sb_printf(&s.b, "</text>\n");
		svg_axes(&s, h);
		if (c->have_steps) /* an empty group: the steps the model's points are of, for a page to check */
			sb_printf(&s.b,
			          "<g id=\"steps\" data-weight-dtype=\"%s\" data-kv-cache-dtype=\"%s\" data-batch-size=\"%llu\" "
			          "data-context-tokens=\"%llu\" data-prompt-tokens=\"%llu\" data-tensor-parallel-size=\"%llu\" "
			          "data-decode-step-seconds=\"%.9g\" data-prefill-seconds=\"%.9g\"/>\n",
			          c->weight_dtype, c->kv_cache_dtype, (unsigned long long)c->batch_size,
			          (unsigned long long)c->context_tokens, (unsigned long long)c->prompt_tokens,
			          (unsigned long long)c->tensor_parallel_size, c->decode_step_seconds, c->prefill_seconds);
		sb_printf(&s.b, "%s</svg>\n", body.s ? body.s : "");
		if (body.failed)
			s.b.failed = true;
		free(body.s);
	}
	free(s.clusters);
	free(s.cluster_of);
	return sb_take(&s.b);
}

/* ----- text ------------------------------------------------------------------------------------------------ */

#define TW 64 /* plot columns */
#define TH 18 /* plot rows */

static int tcol(const axes *a, double v)
{
	int c = (int)lround((log10(v) - a->x0) / (a->x1 - a->x0) * (TW - 1));

	return c < 0 ? 0 : c >= TW ? TW - 1 : c;
}

static int trow(const axes *a, double v)
{
	int r = (int)lround((a->y1 - log10(v)) / (a->y1 - a->y0) * (TH - 1));

	return r < 0 ? 0 : r >= TH ? TH - 1 : r;
}

static char mark_of(size_t i)
{
	static const char marks[] = "123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ@#$%&+=?";

	return i < sizeof(marks) - 1 ? marks[i] : '?';
}

char *mpc_roofline_text(const mpc_chart *c)
{
	char grid[TH][TW + 1];
	int owner[TH][TW]; /* the first point drawn in a cell, -1 none */
	sbuf b = { 0 };
	axes a = axes_of(c);
	double ridge = c->bandwidth > 0 ? c->peak / c->bandwidth : 0, top = top_roof(c);
	int lw = 12;
	char n1[48], n2[48];

	for (int r = 0; r < TH; r++) {
		memset(grid[r], ' ', TW);
		grid[r][TW] = '\0';
		for (int col = 0; col < TW; col++)
			owner[r][col] = -1;
	}
	/* the roofs: '/' under the bandwidth slope, '-' along each compute roof; ':' marks the ridge's column */
	if (c->bandwidth > 0 && c->peak > 0) {
		for (int col = 0; col < TW; col++) {
			double i = pow(10, a.x0 + (double)col / (TW - 1) * (a.x1 - a.x0));

			for (size_t k = 0; k < c->nroofs; k++) {
				double p = c->roofs[k].flops_per_second;

				if (p > 0 && c->bandwidth * i >= p && p >= pow(10, a.y0))
					grid[trow(&a, p)][col] = '-';
			}
			if (c->bandwidth * i < top && c->bandwidth * i >= pow(10, a.y0))
				grid[trow(&a, c->bandwidth * i)][col] = '/';
		}
		for (int r = trow(&a, c->peak) + 1; r < TH; r++)
			if (grid[r][tcol(&a, ridge)] == ' ')
				grid[r][tcol(&a, ridge)] = ':';
		grid[trow(&a, c->peak)][tcol(&a, ridge)] = 'R';
	}
	for (size_t i = 0; i < c->npoints; i++) {
		int r, col;

		if (!drawable(&c->points[i]))
			continue;
		r = trow(&a, c->points[i].attainable);
		col = tcol(&a, c->points[i].intensity);
		if (owner[r][col] >= 0) {
			grid[r][col] = '*'; /* two points in one cell: both listed as '*' with their cell mates */
		} else {
			owner[r][col] = (int)i;
			grid[r][col] = mark_of(i);
		}
		if ((int)strlen(c->points[i].label) > lw)
			lw = (int)strlen(c->points[i].label);
	}

	sb_printf(&b, "%s\nAttainable FLOP/s (log)\n", c->title);
	for (int r = 0; r < TH; r++) {
		double e = a.y1 - (double)r / (TH - 1) * (a.y1 - a.y0);
		bool decade =
		    fabs(e - lround(e)) < 0.5 * (a.y1 - a.y0) / (TH - 1) && trow(&a, pow(10, (double)lround(e))) == r;

		if (decade)
			sb_printf(&b, "%6s1e%-3ld|%s\n", "", lround(e), grid[r]);
		else
			sb_printf(&b, "%11s|%s\n", "", grid[r]);
	}
	sb_printf(&b, "%11s+", "");
	for (int col = 0; col < TW; col++)
		sb_printf(&b, "-");
	sb_printf(&b, "\n%12s", "");
	{
		int at = 0;

		for (int e = a.x0; e <= a.x1; e++) {
			int col = tcol(&a, pow(10, e));
			char lab[16];

			snprintf(lab, sizeof(lab), "1e%d", e);
			if (col < at)
				continue;
			sb_printf(&b, "%*s%s", col - at, "", lab);
			at = col + (int)strlen(lab);
		}
	}
	sb_printf(&b, "\n%12sArithmetic intensity (FLOP/byte, log)\n\n", "");
	sb_printf(&b, "Legend: '/' bandwidth roof %s, '-' compute roofs, R ridge %s FLOP/B (%s)\n",
	          mpc_fmt_si(n1, sizeof(n1), c->bandwidth, "B/s"), mpc_fmt_sig3(n2, sizeof(n2), ridge), c->peak_label);
	for (size_t k = 0; k < c->nroofs; k++)
		if (c->roofs[k].flops_per_second > 0)
			sb_printf(&b, "  roof %-20s %s\n", c->roofs[k].label,
			          mpc_fmt_si(n1, sizeof(n1), c->roofs[k].flops_per_second, "FLOP/s"));
	for (size_t i = 0; i < c->npoints; i++) {
		const mpc_chart_point *p = &c->points[i];
		int r, col;

		if (!drawable(p)) {
			sb_printf(&b, "  -  %-*s (no FLOPs: not on a log scale)\n", lw, p->label);
			continue;
		}
		r = trow(&a, p->attainable);
		col = tcol(&a, p->intensity);
		sb_printf(&b, "  %c  %-*s %10s FLOP/B  %14s  %s-bound", grid[r][col] == '*' ? '*' : mark_of(i), lw,
		          p->label, mpc_fmt_sig3(n1, sizeof(n1), p->intensity),
		          mpc_fmt_si(n2, sizeof(n2), p->attainable, "FLOP/s"), p->compute_bound ? "compute" : "memory");
		if (grid[r][col] == '*') {
			bool first = true;

			sb_printf(&b, "  (one cell with");
			for (size_t j = 0; j < c->npoints; j++)
				if (j != i && drawable(&c->points[j]) && trow(&a, c->points[j].attainable) == r &&
				    tcol(&a, c->points[j].intensity) == col) {
					sb_printf(&b, "%s %s", first ? "" : ",", c->points[j].label);
					first = false;
				}
			sb_printf(&b, ")");
		}
		sb_printf(&b, "\n");
	}
	return sb_take(&b);
}
