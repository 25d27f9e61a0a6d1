/*
 * report_svg.h: the HTML and SVG writer of `penumbra report` (cli layer). Text only, no
 * library: a plot is an <svg> with axes, ticks, grid and labels; what it draws gets a
 * `data-tip` that the page's one small script shows on hover. Every figure a reader sees as
 * text and that comes from an input's JSON is written by pn_rep_num() with its JSON path in
 * `data-j` (and the input's index in the enclosing section's `data-src`), so a test can check
 * each against the input (tests/report_check.py).
 */
#ifndef PN_REPORT_SVG_H
#define PN_REPORT_SVG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

/* The one way a string reaches the page (every string from an input, every label): escaped
 * for where it goes. In text (element content) & < > become references; in an attribute
 * value (always written in double quotes) " and ' too. In both, a byte that is not part of
 * well-formed UTF-8, and a control character other than tab and line feed, becomes U+FFFD,
 * so a string cut short (a tip truncated by snprintf) cannot leave a broken character. */
enum pn_rep_ctx { PN_REP_TEXT, PN_REP_ATTR };
void pn_rep_esc(FILE *f, enum pn_rep_ctx ctx, const char *s);
/* R4, the page's one number format, for every number it shows (a table's, a label's, a
 * tick's, a tip's): fixed point, a comma between each three digits of the whole part
 * ("1,234,567", "12,345.68"); a value from 1e15 up or nonzero below 1e-4 in exponent form.
 * pn_rep_fmt: `decimals` after the point (len >= 40); pn_rep_int: an integer, exactly;
 * pn_rep_real: `sig` significant digits, no trailing zeros after the point (as %g).
 * pn_plot_log_tick: a log axis's power of ten. Each returns buf. */
const char *pn_rep_fmt(char *buf, size_t len, double v, int decimals);
const char *pn_rep_int(char *buf, size_t len, uint64_t v);
const char *pn_rep_real(char *buf, size_t len, double v, int sig);
const char *pn_plot_log_tick(char *buf, size_t len, double v);
/* <TAG class="num" data-j="PATH">TEXT</TAG>: the JSON value v (integer: with thousands
 * separators; real: 4 significant digits; null or absent: "-"). */
void pn_rep_num(FILE *f, const char *tag, const char *path, const json_t *v);
/* The colour of a mode's label ("fpw", "umbra-l3", ...), fixed per name. */
const char *pn_rep_mode_color(const char *mode);
#define PN_REP_FPI_COLOR "#d62728"

/* ---- plots ---- */
struct pn_axis {
	double lo, hi;
	bool log;          /* log10 scale (lo > 0) */
	const char *label; /* with its unit: "WAL (MiB)" */
};
struct pn_plot {
	FILE *f;
	int w, h;           /* the whole svg, px */
	int ml, mr, mt, mb; /* margins: the plot area is inside */
	struct pn_axis x, y;
	bool x_ticks, y_ticks; /* draw ticks and grid (false: categories, drawn by the caller) */
};
/* Opens the <svg> (role img, aria-label = title) and draws the frame, grid, ticks and the
 * axis labels. */
void pn_plot_begin(struct pn_plot *p, const char *title);
void pn_plot_end(struct pn_plot *p);
double pn_plot_px(const struct pn_plot *p, double x);
double pn_plot_py(const struct pn_plot *p, double y);
/* A polyline through n points, with a hover point each (tip: "NAME: Y YUNIT at X XUNIT"). */
void pn_plot_line(struct pn_plot *p, const double *x, const double *y, uint32_t n,
		  const char *color, const char *name, const char *xunit, const char *yunit);
/* A vertical marker at x over the plot area, with a tip. */
void pn_plot_vline(struct pn_plot *p, double x, const char *color, const char *tip);
/* A rectangle in plot coordinates with a tip (NULL: none). */
void pn_plot_rect(struct pn_plot *p, double x0, double y0, double x1, double y1, const char *fill,
		  const char *tip);
/* Text at pixel coordinates (anchor: "start", "middle", "end"). */
void pn_plot_text(struct pn_plot *p, double px, double py, const char *anchor, const char *cls,
		  const char *text);

/* A number bound to its JSON path in SVG text: <text data-j="PATH" data-scale="S">; the text
 * is the value divided by scale, with sig significant digits (integers shown whole when
 * scale is 1). */
void pn_plot_num(struct pn_plot *p, double px, double py, const char *anchor, const char *path,
		 const json_t *v, double scale, int sig);

/* An HTML legend: a coloured swatch and a name each. */
void pn_rep_legend(FILE *f, const char *const *names, const char *const *colors, int n);

/* The page: head (style, the hover script) and tail. */
void pn_rep_page_begin(FILE *f, const char *title);
void pn_rep_page_end(FILE *f);

#endif
