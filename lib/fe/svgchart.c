/* svgchart.c: a line chart as standalone SVG 1.1: fixed layout, plot on the left, legend on
 * the right, notes underneath; numbers in the C locale so the file is valid anywhere. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "svgchart.h"

#define WIDTH 1000
#define PLOT_LEFT 80
#define PLOT_RIGHT 760                  /* the legend lives to the right of this */
#define PLOT_TOP 70
#define PLOT_HEIGHT 430
#define NOTE_LINE 16
#define NOTE_CHARS 140                  /* longer notes wrap at a space */

struct frame {
	double lx0, lx1;                /* log2 of the x range */
	double fy0, fy1;                /* the y range, log10 when ylog */
	int ylog;
	double top, bottom;
};

/*
 * Text as XML character data: markup characters as entities, and nothing a parser refuses:
 * control characters are not allowed in XML 1.0, even escaped, and are left out; bytes that
 * are not UTF-8 (a CPU model from a hand-made tree) and the non-characters U+FFFE and U+FFFF
 * become U+FFFD, as --json writes them, so the file stays well-formed whatever it is given.
 */
static void put_text(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len = str != NULL ? strlen(str) : 0;

	for (size_t i = 0; i < len;) {
		int k;

		switch (s[i]) {
		case '&': fputs("&amp;", f); i++; continue;
		case '<': fputs("&lt;", f); i++; continue;
		case '>': fputs("&gt;", f); i++; continue;
		case '"': fputs("&quot;", f); i++; continue;
		case '\'': fputs("&apos;", f); i++; continue;
		}
		if (s[i] < 0x80) {
			if (s[i] >= 0x20 || s[i] == '\t' || s[i] == '\n')
				putc(s[i], f);
			i++;
			continue;
		}
		k = cli_utf8_seq(s + i, len - i);
		if (k < 0 || (k == 3 && cli_utf8_value(s + i, k) >= 0xfffe)) {
			fputs("\xef\xbf\xbd", f);
			i += (size_t)(k < 0 ? -k : k);
			continue;
		}
		fwrite(s + i, 1, (size_t)k, f);
		i += (size_t)k;
	}
}

static double px(const struct frame *fr, double x)
{
	return PLOT_LEFT + (log2(x) - fr->lx0) / (fr->lx1 - fr->lx0) * (PLOT_RIGHT - PLOT_LEFT);
}

static double py(const struct frame *fr, double y)
{
	double v = fr->ylog ? log10(y) : y;

	return fr->bottom - (v - fr->fy0) / (fr->fy1 - fr->fy0) * (fr->bottom - fr->top);
}

static int usable(const struct frame *fr, double x, double y)
{
	return isfinite(x) && x > 0 && isfinite(y) && (!fr->ylog || y > 0);
}

/* The 1-2-5 value at or below v (down = 1) or at or above it (down = 0). */
static double nice(double v, int down)
{
	static const double steps[] = { 1, 2, 5, 10 };
	double p = pow(10, floor(log10(v))), r = p;

	if (down) {
		for (int i = 0; i < 4; i++)
			if (steps[i] * p <= v * (1 + 1e-9))
				r = steps[i] * p;
	} else {
		for (int i = 3; i >= 0; i--)
			if (steps[i] * p >= v * (1 - 1e-9))
				r = steps[i] * p;
	}
	return r;
}

static void number(char *buf, size_t len, double v)
{
	if (v >= 100 || v == floor(v))
		snprintf(buf, len, "%.0f", v);
	else if (v >= 1)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.2g", v);
}

static void y_axis(FILE *f, const struct frame *fr)
{
	char buf[32];

	if (fr->ylog) {
		/* 1, 2, 5 in each decade. */
		for (int d = (int)floor(fr->fy0); d <= (int)ceil(fr->fy1); d++) {
			static const double m[] = { 1, 2, 5 };

			for (int i = 0; i < 3; i++) {
				double v = m[i] * pow(10, d), y;

				if (log10(v) < fr->fy0 - 1e-9 || log10(v) > fr->fy1 + 1e-9)
					continue;
				y = py(fr, v);
				number(buf, sizeof(buf), v);
				fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
					"stroke=\"#e3e3e3\"/>\n", PLOT_LEFT, y, PLOT_RIGHT, y);
				fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
					PLOT_LEFT - 8, y + 4, buf);
			}
		}
		return;
	}
	{
		double step = nice((fr->fy1 - fr->fy0) / 6, 0);

		for (double v = fr->fy0; v <= fr->fy1 + step * 1e-6; v += step) {
			double y = py(fr, v);

			number(buf, sizeof(buf), v);
			fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
				"stroke=\"#e3e3e3\"/>\n", PLOT_LEFT, y, PLOT_RIGHT, y);
			fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
				PLOT_LEFT - 8, y + 4, buf);
		}
	}
}

static void x_axis(FILE *f, const struct svg_chart *c, const struct frame *fr)
{
	int e0 = (int)ceil(fr->lx0 - 1e-9), e1 = (int)floor(fr->lx1 + 1e-9);
	int step = e1 - e0 > 16 ? 2 : 1;
	char buf[32];

	for (int e = e0; e <= e1; e++) {
		double x = ldexp(1, e), xp = px(fr, x);
		int labelled = (e % step) == 0;

		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
			xp, fr->top, xp, fr->bottom, labelled ? "#e3e3e3" : "#f2f2f2");
		if (!labelled)
			continue;
		if (c->xtick != NULL)
			c->xtick(x, buf, sizeof(buf));
		else
			snprintf(buf, sizeof(buf), "%.0f", x);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", xp, fr->bottom + 18);
		put_text(f, buf);
		fputs("</text>\n", f);
	}
}

static void draw_series(FILE *f, const struct frame *fr, const struct svg_series *s)
{
	int open = 0;

	/* Whiskers first, under the line. */
	for (size_t i = 0; s->lo != NULL && s->hi != NULL && i < s->n; i++) {
		if (!usable(fr, s->x[i], s->y[i]) || !usable(fr, s->x[i], s->lo[i]) ||
		    !usable(fr, s->x[i], s->hi[i]))
			continue;
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			"stroke-opacity=\"0.5\" stroke-width=\"3\"/>\n", px(fr, s->x[i]),
			py(fr, s->lo[i]), px(fr, s->x[i]), py(fr, s->hi[i]), s->color);
	}
	for (size_t i = 0; i <= s->n; i++) {
		int ok = i < s->n && usable(fr, s->x[i], s->y[i]);

		if (ok && !open) {
			fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
				s->color);
			open = 1;
		}
		if (ok)
			fprintf(f, "%.1f,%.1f ", px(fr, s->x[i]), py(fr, s->y[i]));
		if (!ok && open) {
			fputs("\"/>\n", f);
			open = 0;
		}
	}
	for (size_t i = 0; i < s->n; i++) {
		if (!usable(fr, s->x[i], s->y[i]))
			continue;
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"><title>",
			px(fr, s->x[i]), py(fr, s->y[i]), s->color);
		put_text(f, s->name);
		fprintf(f, ": %.4g at %.0f</title></circle>\n", s->y[i], s->x[i]);
	}
}

/* Length of the next line of text s when wrapped at NOTE_CHARS; *next is where the one
 * after starts. */
static size_t wrap(const char *s, const char **next)
{
	size_t len = strlen(s), cut;

	if (len <= NOTE_CHARS) {
		*next = s + len;
		return len;
	}
	for (cut = NOTE_CHARS; cut > NOTE_CHARS / 2 && s[cut] != ' '; cut--)
		;
	if (s[cut] != ' ')
		cut = NOTE_CHARS;
	*next = s + cut + (s[cut] == ' ');
	return cut;
}

static size_t note_lines(const struct svg_chart *c)
{
	size_t n = 0;

	for (size_t k = 0; k < c->nnotes; k++) {
		const char *p = c->notes[k], *next;

		do {
			wrap(p, &next);
			p = next;
			n++;
		} while (*p != '\0');
	}
	return n;
}

int svg_chart_write(FILE *f, const struct svg_chart *c)
{
	struct frame fr;
	double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
	int height = PLOT_TOP + PLOT_HEIGHT + 70 + (int)note_lines(c) * NOTE_LINE;
	size_t i, k;

	memset(&fr, 0, sizeof(fr));
	fr.ylog = c->ylog;
	fr.top = PLOT_TOP;
	fr.bottom = PLOT_TOP + PLOT_HEIGHT;
	for (k = 0; k < c->nseries; k++) {
		const struct svg_series *s = &c->series[k];

		for (i = 0; i < s->n; i++) {
			if (!usable(&fr, s->x[i], s->y[i]))
				continue;
			xmin = fmin(xmin, s->x[i]);
			xmax = fmax(xmax, s->x[i]);
			ymin = fmin(ymin, s->y[i]);
			ymax = fmax(ymax, s->y[i]);
			if (s->lo != NULL && usable(&fr, s->x[i], s->lo[i]))
				ymin = fmin(ymin, s->lo[i]);
			if (s->hi != NULL && usable(&fr, s->x[i], s->hi[i]))
				ymax = fmax(ymax, s->hi[i]);
		}
	}
	if (!isfinite(xmin)) {          /* nothing to draw: axes over an arbitrary range */
		xmin = 4096;
		xmax = 1 << 20;
		ymin = 1;
		ymax = 10;
	}
	if (xmax <= xmin)
		xmax = xmin * 2;
	fr.lx0 = log2(xmin);
	fr.lx1 = log2(xmax);
	if (c->ylog) {
		fr.fy0 = log10(nice(ymin, 1));
		fr.fy1 = log10(nice(ymax, 0));
		if (fr.fy1 <= fr.fy0)
			fr.fy1 = fr.fy0 + 1;
	} else {
		fr.fy0 = 0;
		fr.fy1 = ymax > 0 ? nice(ymax, 0) : 1;
	}

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, Arial, "
		"sans-serif\" font-size=\"12\">\n", WIDTH, height, WIDTH, height);
	fputs("<title>", f);
	put_text(f, c->title);
	fputs("</title>\n", f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n",
		WIDTH, height);
	fprintf(f, "<text x=\"%d\" y=\"30\" font-size=\"18\" font-weight=\"bold\">", PLOT_LEFT);
	put_text(f, c->title);
	fputs("</text>\n", f);
	if (c->subtitle != NULL) {
		fprintf(f, "<text x=\"%d\" y=\"52\" fill=\"#555555\">", PLOT_LEFT);
		put_text(f, c->subtitle);
		fputs("</text>\n", f);
	}

	y_axis(f, &fr);
	x_axis(f, c, &fr);
	fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"none\" "
		"stroke=\"#333333\"/>\n", PLOT_LEFT, fr.top, PLOT_RIGHT - PLOT_LEFT, PLOT_HEIGHT);
	fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\">",
		(PLOT_LEFT + PLOT_RIGHT) / 2, fr.bottom + 42);
	put_text(f, c->xlabel);
	fputs("</text>\n", f);
	fprintf(f, "<text x=\"22\" y=\"%.1f\" text-anchor=\"middle\" "
		"transform=\"rotate(-90 22 %.1f)\">", (fr.top + fr.bottom) / 2,
		(fr.top + fr.bottom) / 2);
	put_text(f, c->ylabel);
	fputs("</text>\n", f);

	for (k = 0; k < c->nmarkers; k++) {
		const struct svg_marker *m = &c->markers[k];
		double xp;

		if (!isfinite(m->x) || m->x <= 0 || log2(m->x) < fr.lx0 - 1e-9 ||
		    log2(m->x) > fr.lx1 + 1e-9)
			continue;
		xp = px(&fr, m->x);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			"stroke-dasharray=\"5,4\"/>\n", xp, fr.top, xp, fr.bottom, m->color);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"%s\" "
			"text-anchor=\"end\" transform=\"rotate(-90 %.1f %.1f)\">", xp - 4, fr.top + 6,
			m->color, xp - 4, fr.top + 6);
		put_text(f, m->label);
		fputs("</text>\n", f);
	}

	for (k = 0; k < c->nseries; k++)
		draw_series(f, &fr, &c->series[k]);

	/* Legend, right of the plot. */
	for (k = 0; k < c->nseries; k++) {
		double y = fr.top + 10 + 22 * (double)k;

		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" "
			"stroke-width=\"3\"/>\n", PLOT_RIGHT + 16, y, PLOT_RIGHT + 40, y,
			c->series[k].color);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\">", PLOT_RIGHT + 46, y + 4);
		put_text(f, c->series[k].name);
		fputs("</text>\n", f);
	}

	i = 0;
	for (k = 0; k < c->nnotes; k++) {
		const char *p = c->notes[k], *next;

		do {
			size_t len = wrap(p, &next);
			char line[NOTE_CHARS + 1];

			memcpy(line, p, len);
			line[len] = '\0';
			/* xml:space keeps a note's own indentation; continuation lines are
			 * indented further. */
			fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" fill=\"#444444\" "
				"xml:space=\"preserve\">", p == c->notes[k] ? PLOT_LEFT : PLOT_LEFT + 16,
				fr.bottom + 70 + (double)i++ * NOTE_LINE);
			put_text(f, line);
			fputs("</text>\n", f);
			p = next;
		} while (*p != '\0');
	}
	fputs("</svg>\n", f);
	return ferror(f) ? -1 : 0;
}
