/*
 * mpc_human.c: numbers for people, the one place the text renderings (mpc_text.c, mpc_svg.c, mpc_capacity.c) turn figures into
 * words: exact counts with thousands separators, measured or derived figures to three significant digits with
 * their unit, byte counts in GB (1e9) beside GiB (2^30), both labelled. Pure formatting into caller buffers: no
 * allocation, no JSON.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codec.h"

/* v rounded to 3 significant digits (0 stays 0). */
static double round3(double v)
{
	double a = fabs(v), scale;
	int e;

	if (a == 0 || !isfinite(a))
		return v;
	e = (int)floor(log10(a));
	scale = pow(10, 2 - e);
	return round(v * scale) / scale;
}

/* Decimals that show 3 significant digits of an already rounded value (none at 100 and above). */
static int decimals3(double r)
{
	double a = fabs(r);
	int e;

	if (a == 0 || !isfinite(a))
		return 0;
	e = (int)floor(log10(a) + 1e-9);
	return e >= 2 ? 0 : 2 - e;
}

char *mpc_fmt_count(char *buf, size_t len, double v)
{
	char digits[48];
	size_t n, j = 0;
	bool neg = v < 0;

	if (len == 0)
		return buf;
	if (!isfinite(v)) {
		snprintf(buf, len, "%s", isnan(v) ? "n/a" : v < 0 ? "-inf" : "inf");
		return buf;
	}
	snprintf(digits, sizeof(digits), "%.0f", fabs(v));
	n = strlen(digits);
	if (neg && strcmp(digits, "0") != 0 && j + 1 < len)
		buf[j++] = '-';
	for (size_t i = 0; i < n && j + 1 < len; i++) {
		buf[j++] = digits[i];
		if ((n - i - 1) % 3 == 0 && i + 1 < n && j + 1 < len)
			buf[j++] = ',';
	}
	buf[j] = '\0';
	return buf;
}

char *mpc_fmt_sig3(char *buf, size_t len, double v)
{
	double r = round3(v);

	if (!isfinite(r) || fabs(r) >= 1000)
		return mpc_fmt_count(buf, len, r);
	snprintf(buf, len, "%.*f", decimals3(r), r);
	return buf;
}

/* The SI prefix of a magnitude, with the value scaled to it after 3-digit rounding (999.96e9 is "1.00 T"). */
static const char *si_scale(double v, double step, const char *const *prefixes, int nprefix, double *scaled)
{
	int p = 0;
	double a = fabs(v);

	while (p + 1 < nprefix && round3(a / pow(step, p)) >= step)
		p++;
	*scaled = v / pow(step, p);
	return prefixes[p];
}

char *mpc_fmt_si(char *buf, size_t len, double v, const char *unit)
{
	static const char *const prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
	char num[48];
	double s;
	const char *p;

	if (fabs(v) < 1 && v != 0 && isfinite(v)) { /* below one unit: plain digits ("0.125 FLOP/B") */
		snprintf(buf, len, "%s %s", mpc_fmt_sig3(num, sizeof(num), v), unit);
		return buf;
	}
	p = si_scale(v, 1000, prefixes, 7, &s);
	snprintf(buf, len, "%s %s%s", mpc_fmt_sig3(num, sizeof(num), s), p, unit);
	return buf;
}

char *mpc_fmt_bytes(char *buf, size_t len, double bytes)
{
	static const char *const dec[] = {"B", "kB", "MB", "GB", "TB", "PB"};
	static const char *const bin[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double a = fabs(bytes), sd, sb;
	char n1[32], n2[32];
	int p = 0;

	if (!isfinite(bytes)) {
		snprintf(buf, len, "n/a");
		return buf;
	}
	if (a < 1000) {
		snprintf(buf, len, "%s B", mpc_fmt_count(n1, sizeof(n1), bytes));
		return buf;
	}
	while (p + 1 < 6 && round3(a / pow(1000, p + 1)) >= 1)
		p++;
	sd = bytes / pow(1000, p);
	sb = bytes / pow(1024, p);
	snprintf(buf, len, "%s %s (%s %s)", mpc_fmt_sig3(n1, sizeof(n1), sd), dec[p], mpc_fmt_sig3(n2, sizeof(n2), sb),
	         bin[p]);
	return buf;
}

char *mpc_fmt_seconds(char *buf, size_t len, double s)
{
	char num[32];
	double a = fabs(s);

	if (!isfinite(s))
		snprintf(buf, len, "n/a");
	else if (a == 0)
		snprintf(buf, len, "0 s");
	else if (round3(a) < 1e-6)
		snprintf(buf, len, "%s ns", mpc_fmt_sig3(num, sizeof(num), s * 1e9));
	else if (round3(a) < 1e-3)
		snprintf(buf, len, "%s us", mpc_fmt_sig3(num, sizeof(num), s * 1e6));
	else if (round3(a) < 1)
		snprintf(buf, len, "%s ms", mpc_fmt_sig3(num, sizeof(num), s * 1e3));
	else
		snprintf(buf, len, "%s s", mpc_fmt_sig3(num, sizeof(num), s));
	return buf;
}

char *mpc_fmt_percent(char *buf, size_t len, double fraction)
{
	char num[32];

	snprintf(buf, len, "%s%%", mpc_fmt_sig3(num, sizeof(num), 100 * fraction));
	return buf;
}
