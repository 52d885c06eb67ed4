/* svgchart.h: a line chart written as one standalone SVG file (log-2 x axis, linear or
 * log-10 y axis, series with min-max whiskers, marker lines, legend, notes), so a tool can
 * draw its own curves without a plotting dependency. */
#ifndef SLAB_SVGCHART_H
#define SLAB_SVGCHART_H

#include <stddef.h>
#include <stdio.h>

struct svg_series {
	const char *name;               /* legend text */
	const char *color;              /* any SVG colour: "#1f77b4" */
	size_t n;
	const double *x;                /* > 0 */
	const double *y;                /* NAN: no point there, the line breaks */
	const double *lo, *hi;          /* whisker ends (e.g. min and max), or NULL */
};

/* A dashed vertical line at x, labelled along it. */
struct svg_marker {
	double x;
	const char *label;
	const char *color;
};

struct svg_chart {
	const char *title;
	const char *subtitle;           /* may be NULL */
	const char *xlabel, *ylabel;
	int ylog;                       /* log-10 y axis instead of linear from 0 */
	/* Label of the x tick at x (a power of two); NULL: the number itself. */
	const char *(*xtick)(double x, char *buf, size_t len);
	const struct svg_series *series;
	size_t nseries;
	const struct svg_marker *markers;
	size_t nmarkers;
	const char *const *notes;       /* lines of small text under the chart */
	size_t nnotes;
};

/* Write the chart as a complete SVG document to f. 0, or -1 when f reports a write error.
 * Text is XML-escaped; series without a finite point are listed in the legend only. */
int svg_chart_write(FILE *f, const struct svg_chart *c);

#endif
