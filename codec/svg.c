/*
 * svg.c: roofline charts from a chart (mpc_chart_from_result): an SVG (log-log axes, bandwidth and compute ceilings, the
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

/* ----- from the document ------------------------------------------------------------------------------------ */


/* ----- axes ------------------------------------------------------------------------------------------- */

typedef struct axes {
	int x0, x1, y0, y1; /* decades: 10^x0 .. 10^x1 FLOP/B, 10^y0 .. 10^y1 FLOP/s */
} axes;

static bool drawable(const mpc_chart_point *p)
{
	return p->intensity > 0 && p->attainable > 0 && isfinite(p->intensity) && isfinite(p->attainable);
}

static axes axes_of(const mpc_chart *c)
{
	double ridge = c->bandwidth > 0 ? c->peak / c->bandwidth : 1;
	double lo = ridge / 100, hi = ridge * 10, ylo, yhi = c->peak > 0 ? c->peak : 1e12;
	axes a;

	if (!(ridge > 0))
		ridge = 1, lo = 0.01, hi = 10;
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

/* ----- SVG ---------------------------------------------------------------------------------------------- */

#define W 860
#define H 540
#define ML 90
#define MR 30
#define MT 50
#define MB 70

static double sx(const axes *a, double v)
{
	return ML + (log10(v) - a->x0) / (a->x1 - a->x0) * (W - ML - MR);
}

static double sy(const axes *a, double v)
{
	return MT + (a->y1 - log10(v)) / (a->y1 - a->y0) * (H - MT - MB);
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

/* A sloped bandwidth ceiling bw from the left edge to where it meets `peak`. */
static void bandwidth_line(sbuf *b, const axes *a, const char *id, double bw, double peak, const char *style)
{
	double i0 = pow(10, a->x0), i1 = clipx(a, peak / bw);
	double f0 = bw * i0;

	if (f0 < pow(10, a->y0)) { /* start where the line enters the plot */
		i0 = pow(10, a->y0) / bw;
		f0 = pow(10, a->y0);
	}
	if (i0 >= i1)
		return;
	sb_printf(b,
	          "<line id=\"%s\" class=\"ceiling\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
	          "data-bandwidth-bytes-per-second=\"%.6g\" %s/>\n",
	          id, sx(a, i0), sy(a, f0), sx(a, i1), sy(a, bw * i1), bw, style);
}

char *mpc_roofline_svg(const mpc_chart *c)
{
	sbuf b = {0};
	axes a = axes_of(c);
	double ridge = c->bandwidth > 0 ? c->peak / c->bandwidth : 0;
	char num[64];

	sb_printf(&b,
	          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
	          "font-family=\"sans-serif\" font-size=\"12\">\n<title>",
	          W, H, W, H);
	sb_escaped(&b, c->title);
	sb_printf(&b, "</title>\n<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
	sb_printf(&b, "<text x=\"%d\" y=\"28\" font-size=\"16\">", ML);
	sb_escaped(&b, c->title);
	sb_printf(&b, "</text>\n");
	/* plot frame and decade grid */
	sb_printf(&b,
	          "<g id=\"axes\" data-x-min-log10=\"%d\" data-x-max-log10=\"%d\" data-y-min-log10=\"%d\" "
	          "data-y-max-log10=\"%d\">\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
	          "stroke=\"black\"/>\n",
	          a.x0, a.x1, a.y0, a.y1, ML, MT, W - ML - MR, H - MT - MB);
	for (int e = a.x0; e <= a.x1; e++) {
		double x = sx(&a, pow(10, e));

		sb_printf(&b,
		          "<line class=\"xtick\" data-value=\"1e%d\" x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" "
		          "stroke=\"#ddd\"/>\n<text class=\"xtick-label\" x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">"
		          "10<tspan dy=\"-6\" font-size=\"9\">%d</tspan></text>\n",
		          e, x, MT, x, H - MB, x, H - MB + 18, e);
	}
	for (int e = a.y0; e <= a.y1; e++) {
		double y = sy(&a, pow(10, e));

		sb_printf(&b,
		          "<line class=\"ytick\" data-value=\"1e%d\" x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\" "
		          "stroke=\"#ddd\"/>\n<text class=\"ytick-label\" x=\"%d\" y=\"%.2f\" text-anchor=\"end\">"
		          "10<tspan dy=\"-6\" font-size=\"9\">%d</tspan></text>\n",
		          e, ML, y, W - MR, y, ML - 8, y + 4, e);
	}
	sb_printf(&b,
	          "<text id=\"x-label\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">Arithmetic intensity (FLOP/byte, "
	          "log scale)</text>\n<text id=\"y-label\" transform=\"translate(22 %d) rotate(-90)\" "
	          "text-anchor=\"middle\">Attainable FLOP/s (log scale)</text>\n</g>\n",
	          (ML + W - MR) / 2, H - 22, (MT + H - MB) / 2);
	/* ceilings */
	if (c->bandwidth > 0 && c->peak > 0) {
		bandwidth_line(&b, &a, "memory-ceiling", c->bandwidth, c->peak,
		               "stroke=\"#1f77b4\" stroke-width=\"2.5\"");
		sb_printf(
		    &b,
		    "<line id=\"compute-ceiling\" class=\"ceiling\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
		    "data-flops-per-second=\"%.6g\" stroke=\"#d62728\" stroke-width=\"2.5\"/>\n",
		    sx(&a, clipx(&a, ridge)), sy(&a, c->peak), sx(&a, pow(10, a.x1)), sy(&a, c->peak), c->peak);
		if (c->vector_peak > 0 && c->vector_peak < c->peak && c->vector_peak > pow(10, a.y0))
			sb_printf(&b,
			          "<line id=\"vector-ceiling\" class=\"ceiling\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" "
			          "y2=\"%.2f\" data-flops-per-second=\"%.6g\" stroke=\"#ff7f0e\" stroke-dasharray=\"6 "
			          "4\"/>\n",
			          sx(&a, clipx(&a, c->vector_peak / c->bandwidth)), sy(&a, c->vector_peak),
			          sx(&a, pow(10, a.x1)), sy(&a, c->vector_peak), c->vector_peak);
		if (c->l2_bandwidth > c->bandwidth)
			bandwidth_line(&b, &a, "l2-ceiling", c->l2_bandwidth, c->peak,
			               "stroke=\"#2ca02c\" stroke-dasharray=\"6 4\"");
		/* the ridge */
		sb_printf(
		    &b,
		    "<line id=\"ridge-line\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%d\" stroke=\"#555\" "
		    "stroke-dasharray=\"3 3\"/>\n<circle id=\"ridge\" cx=\"%.2f\" cy=\"%.2f\" r=\"5\" fill=\"#555\" "
		    "data-intensity=\"%.6g\" data-flops-per-second=\"%.6g\"/>\n"
		    "<text id=\"ridge-label\" x=\"%.2f\" y=\"%.2f\">ridge %.1f FLOP/B</text>\n",
		    sx(&a, ridge), sy(&a, c->peak), sx(&a, ridge), H - MB, sx(&a, ridge), sy(&a, c->peak), ridge,
		    c->peak, sx(&a, ridge) + 8, sy(&a, c->peak) + 18, ridge);
	}
	/* points */
	sb_printf(&b, "<g id=\"ops\">\n");
	for (size_t i = 0; i < c->npoints; i++) {
		const mpc_chart_point *p = &c->points[i];

		if (!drawable(p))
			continue;
		sb_printf(&b,
		          "<g class=\"op\" data-index=\"%zu\" data-intensity=\"%.6g\" data-attainable=\"%.6g\" "
		          "data-bound=\"%s\" data-label=\"",
		          i, p->intensity, p->attainable, p->compute_bound ? "compute" : "memory");
		sb_escaped(&b, p->label);
		sb_printf(&b, "\"><circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"%s\"/><text x=\"%.2f\" y=\"%.2f\">",
		          sx(&a, p->intensity), sy(&a, p->attainable), p->compute_bound ? "#d62728" : "#1f77b4",
		          sx(&a, p->intensity) + 7, sy(&a, p->attainable) - 7);
		sb_escaped(&b, p->label);
		sb_printf(&b, "</text></g>\n");
	}
	sb_printf(&b, "</g>\n");
	/* legend */
	snprintf(num, sizeof(num), "%.0f", c->bandwidth / 1e9);
	sb_printf(&b,
	          "<g id=\"legend\" transform=\"translate(%d %d)\">\n"
	          "<line x1=\"0\" y1=\"0\" x2=\"24\" y2=\"0\" stroke=\"#1f77b4\" stroke-width=\"2.5\"/>"
	          "<text x=\"30\" y=\"4\">memory bandwidth %s GB/s</text>\n"
	          "<line x1=\"0\" y1=\"18\" x2=\"24\" y2=\"18\" stroke=\"#d62728\" stroke-width=\"2.5\"/>"
	          "<text x=\"30\" y=\"22\">peak %.4g TFLOP/s (",
	          ML + 14, MT + 18, num, c->peak / 1e12);
	sb_escaped(&b, c->peak_label);
	sb_printf(&b, ")</text>\n");
	if (c->vector_peak > 0 && c->vector_peak < c->peak)
		sb_printf(&b,
		          "<line x1=\"0\" y1=\"36\" x2=\"24\" y2=\"36\" stroke=\"#ff7f0e\" stroke-dasharray=\"6 4\"/>"
		          "<text x=\"30\" y=\"40\">vector peak %.4g TFLOP/s</text>\n",
		          c->vector_peak / 1e12);
	sb_printf(&b, "</g>\n</svg>\n");
	return sb_take(&b);
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
	static const char marks[] = "123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ@#$%&*+=?";

	return i < sizeof(marks) - 1 ? marks[i] : '?';
}

char *mpc_roofline_text(const mpc_chart *c)
{
	char grid[TH][TW + 1];
	sbuf b = {0};
	axes a = axes_of(c);
	double ridge = c->bandwidth > 0 ? c->peak / c->bandwidth : 0;

	for (int r = 0; r < TH; r++) {
		memset(grid[r], ' ', TW);
		grid[r][TW] = '\0';
	}
	/* the roof: '/' under the bandwidth slope, '-' along the peak; '|' marks the ridge's column */
	if (c->bandwidth > 0 && c->peak > 0) {
		for (int col = 0; col < TW; col++) {
			double i = pow(10, a.x0 + (double)col / (TW - 1) * (a.x1 - a.x0));
			double f = fmin(c->peak, c->bandwidth * i);

			if (f >= pow(10, a.y0))
				grid[trow(&a, f)][col] = f < c->peak ? '/' : '-';
		}
		for (int r = trow(&a, c->peak) + 1; r < TH; r++)
			if (grid[r][tcol(&a, ridge)] == ' ')
				grid[r][tcol(&a, ridge)] = ':';
		grid[trow(&a, c->peak)][tcol(&a, ridge)] = 'R';
	}
	for (size_t i = 0; i < c->npoints; i++)
		if (drawable(&c->points[i]))
			grid[trow(&a, c->points[i].attainable)][tcol(&a, c->points[i].intensity)] = mark_of(i);

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
	sb_printf(&b, "Legend: '/' bandwidth roof %.4g GB/s, '-' compute roof %.4g TFLOP/s (%s), R ridge %.1f FLOP/B\n",
	          c->bandwidth / 1e9, c->peak / 1e12, c->peak_label, ridge);
	for (size_t i = 0; i < c->npoints; i++) {
		const mpc_chart_point *p = &c->points[i];

		if (drawable(p))
			sb_printf(&b, "  %c  %-32s %10.4g FLOP/B  %10.4g TFLOP/s  %s-bound\n", mark_of(i), p->label,
			          p->intensity, p->attainable / 1e12, p->compute_bound ? "compute" : "memory");
		else
			sb_printf(&b, "  -  %-32s (no FLOPs: not drawn)\n", p->label);
	}
	return sb_take(&b);
}
