/*
 * report_svg.c: the HTML and SVG writer of `penumbra report` (cli layer). See report_svg.h.
 */
#include "report_svg.h"

#include <math.h>
#include <string.h>

#include "pn.h"

/* The length of the well-formed UTF-8 sequence at s (1 to 4), or 0 when it is not one (a stray
 * continuation byte, an overlong form, a surrogate, past U+10FFFF, or cut short). */
static int utf8_len(const unsigned char *s)
{
	int n = s[0] < 0x80                    ? 1
		: s[0] >= 0xc2 && s[0] <= 0xdf ? 2
		: s[0] >= 0xe0 && s[0] <= 0xef ? 3
		: s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
					       : 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	return n;
}

void pn_rep_esc(FILE *f, enum pn_rep_ctx ctx, const char *s)
{
	PN_ASSERT(ctx == PN_REP_TEXT || ctx == PN_REP_ATTR);
	for (const unsigned char *p = (const unsigned char *)s; p && *p;) {
		int n = utf8_len(p);
		const char *ref = *p == '<'   ? "&lt;"
				  : *p == '>' ? "&gt;"
				  : *p == '&' ? "&amp;"
					      : NULL;
		if (ctx == PN_REP_ATTR && !ref)
			ref = *p == '"' ? "&quot;" : *p == '\'' ? "&#39;" : NULL;
		if (ref)
			fputs(ref, f);
		else if (n == 0 || (*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f)
			fputs("\xef\xbf\xbd", f); /* U+FFFD */
		else
			fwrite(p, 1, (size_t)n, f);
		p += n ? n : 1;
	}
}

/* R4's grouping: the plain decimal text `plain` ("-1234567.25") into buf with a comma between
 * each three digits of its whole part ("-1,234,567.25"). */
static const char *grouped(char *buf, size_t len, const char *plain)
{
	const char *digits = plain + (plain[0] == '-');
	size_t whole = strcspn(digits, ".e"), at = 0;
	PN_ASSERT(len >= strlen(plain) + whole / 3 + 1);
	if (plain[0] == '-')
		buf[at++] = '-';
	for (size_t i = 0; i < whole; i++) {
		if (i > 0 && (whole - i) % 3 == 0)
			buf[at++] = ',';
		buf[at++] = digits[i];
	}
	snprintf(buf + at, len - at, "%s", digits + whole);
	return buf;
}

const char *pn_rep_fmt(char *buf, size_t len, double v, int decimals)
{
	char plain[64];
	PN_ASSERT(decimals >= 0 && decimals <= 15 && len >= 40);
	if (fabs(v) >= 1e15 || (v != 0 && fabs(v) < 1e-4))
		snprintf(plain, sizeof(plain), "%.*e", decimals, v);
	else
		snprintf(plain, sizeof(plain), "%.*f", decimals, v);
	return grouped(buf, len, plain);
}

const char *pn_rep_int(char *buf, size_t len, uint64_t v)
{
	char digits[24];
	snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v); /* exact past 2^53 */
	return grouped(buf, len, digits);
}

const char *pn_rep_real(char *buf, size_t len, double v, int sig)
{
	PN_ASSERT(sig >= 1 && sig <= 15);
	int mag = v != 0 ? (int)floor(log10(fabs(v))) : 0;
	int decimals = fabs(v) >= 1e15 || (v != 0 && fabs(v) < 1e-4) ? sig - 1
		       : sig - 1 - mag > 0                           ? sig - 1 - mag
								     : 0;
	pn_rep_fmt(buf, len, v, decimals > 15 ? 15 : decimals);
	char *point = strchr(buf, '.'), *exp = strchr(buf, 'e');
	if (point && !exp) { /* as %g: no trailing zeros after the point */
		size_t n = strlen(buf);
		while (n > 0 && buf[n - 1] == '0')
			buf[--n] = '\0';
		if (buf[n - 1] == '.')
			buf[n - 1] = '\0';
	}
	return buf;
}

void pn_rep_num(FILE *f, const char *tag, const char *path, const json_t *v)
{
	char buf[64] = "-";
	if (json_is_integer(v) && json_integer_value(v) >= 0)
		pn_rep_int(buf, sizeof(buf), (uint64_t)json_integer_value(v));
	else if (json_is_number(v))
		pn_rep_real(buf, sizeof(buf), json_number_value(v), 4);
	fprintf(f, "<%s class=\"num\" data-j=\"", tag);
	pn_rep_esc(f, PN_REP_ATTR, path);
	fprintf(f, "\">%s</%s>", buf, tag);
}

const char *pn_rep_mode_color(const char *mode)
{
	static const struct {
		const char *name, *color;
	} colors[] = {
		{"fpw", "#1f77b4"},         {"nofpw", "#7f7f7f"},           {"umbra", "#2ca02c"},
		{"doublewrite", "#9467bd"}, {"pushdown", "#ff7f0e"},        {"umbra-l3", "#17becf"},
		{"umbra-l4", "#bcbd22"},    {"umbra-prototype", "#8c564b"},
	};
	for (size_t i = 0; i < PN_ARRAY_LEN(colors); i++)
		if (strcmp(colors[i].name, mode) == 0)
			return colors[i].color;
	return "#444444";
}

/* ---- plots ---- */

static double axis_frac(const struct pn_axis *a, double v)
{
	if (a->log) {
		double lo = log10(a->lo), hi = log10(a->hi);
		return hi > lo ? (log10(v > a->lo ? v : a->lo) - lo) / (hi - lo) : 0;
	}
	return a->hi > a->lo ? (v - a->lo) / (a->hi - a->lo) : 0;
}

double pn_plot_px(const struct pn_plot *p, double x)
{
	return p->ml + axis_frac(&p->x, x) * (p->w - p->ml - p->mr);
}

double pn_plot_py(const struct pn_plot *p, double y)
{
	return p->h - p->mb - axis_frac(&p->y, y) * (p->h - p->mt - p->mb);
}

/* A step of 1, 2 or 5 times a power of ten giving about 5 ticks over the range. */
static double nice_step(double range)
{
	double raw = range / 5, mag = pow(10, floor(log10(raw)));
	double f = raw / mag;
	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

static void tick_label(char *buf, size_t len, double v, double step)
{
	int decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
	pn_rep_fmt(buf, len, fabs(v) < step / 1e6 ? 0.0 : v, decimals > 6 ? 6 : decimals);
}

const char *pn_plot_log_tick(char *buf, size_t len, double v)
{
	return pn_rep_fmt(buf, len, v, v >= 1 ? 0 : (int)ceil(-log10(v) - 1e-9));
}

static void ticks_x(struct pn_plot *p)
{
	char buf[48];
	if (p->x.hi <= p->x.lo)
		return;
	double step = nice_step(p->x.hi - p->x.lo);
	for (double v = ceil(p->x.lo / step) * step; v <= p->x.hi + step * 1e-9; v += step) {
		double x = pn_plot_px(p, v);
		fprintf(p->f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>",
			x, p->mt, x, p->h - p->mb);
		tick_label(buf, sizeof(buf), v, step);
		pn_plot_text(p, x, p->h - p->mb + 14, "middle", "tick", buf);
	}
}

static void ticks_y(struct pn_plot *p)
{
	char buf[48];
	if (p->y.hi <= p->y.lo)
		return;
	if (p->y.log) {
		for (double v = pow(10, ceil(log10(p->y.lo))); v <= p->y.hi * 1.000001; v *= 10) {
			double y = pn_plot_py(p, v);
			fprintf(p->f,
				"<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>",
				p->ml, y, p->w - p->mr, y);
			pn_plot_log_tick(buf, sizeof(buf), v);
			pn_plot_text(p, p->ml - 5, y + 4, "end", "tick", buf);
		}
		return;
	}
	double step = nice_step(p->y.hi - p->y.lo);
	for (double v = ceil(p->y.lo / step) * step; v <= p->y.hi + step * 1e-9; v += step) {
		double y = pn_plot_py(p, v);
		fprintf(p->f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>",
			p->ml, y, p->w - p->mr, y);
		tick_label(buf, sizeof(buf), v, step);
		pn_plot_text(p, p->ml - 5, y + 4, "end", "tick", buf);
	}
}

void pn_plot_begin(struct pn_plot *p, const char *title)
{
	PN_ASSERT(p->f != NULL && p->w > p->ml + p->mr && p->h > p->mt + p->mb);
	fprintf(p->f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
		p->w, p->h, p->w, p->h);
	pn_rep_esc(p->f, PN_REP_ATTR, title);
	fputs("\">", p->f);
	if (p->x_ticks)
		ticks_x(p);
	if (p->y_ticks)
		ticks_y(p);
	fprintf(p->f, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>", p->ml,
		p->mt, p->w - p->ml - p->mr, p->h - p->mt - p->mb);
	if (p->x.label)
		pn_plot_text(p, p->ml + (p->w - p->ml - p->mr) / 2.0, p->h - 6, "middle", "axis",
			     p->x.label);
	if (p->y.label) {
		fprintf(p->f,
			"<text class=\"axis\" text-anchor=\"middle\" transform=\"translate(13 %.1f) "
			"rotate(-90)\">",
			p->mt + (p->h - p->mt - p->mb) / 2.0);
		pn_rep_esc(p->f, PN_REP_TEXT, p->y.label);
		fputs("</text>", p->f);
	}
}

void pn_plot_end(struct pn_plot *p) { fputs("</svg>\n", p->f); }

void pn_plot_text(struct pn_plot *p, double px, double py, const char *anchor, const char *cls,
		  const char *text)
{
	fprintf(p->f, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", cls, px, py,
		anchor);
	pn_rep_esc(p->f, PN_REP_TEXT, text);
	fputs("</text>", p->f);
}

void pn_plot_line(struct pn_plot *p, const double *x, const double *y, uint32_t n,
		  const char *color, const char *name, const char *xunit, const char *yunit)
{
	char xs[48], ys[48];
	if (n == 0)
		return;
	fprintf(p->f, "<polyline class=\"line\" stroke=\"%s\" points=\"", color);
	for (uint32_t i = 0; i < n; i++)
		fprintf(p->f, "%s%.1f,%.1f", i ? " " : "", pn_plot_px(p, x[i]),
			pn_plot_py(p, y[i]));
	fputs("\"/>", p->f);
	for (uint32_t i = 0; i < n; i++) {
		fprintf(p->f, "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" data-tip=\"",
			pn_plot_px(p, x[i]), pn_plot_py(p, y[i]));
		pn_rep_esc(p->f, PN_REP_ATTR, name);
		fprintf(p->f, ": %s %s at %s %s\"/>", pn_rep_real(ys, sizeof(ys), y[i], 5), yunit,
			pn_rep_real(xs, sizeof(xs), x[i], 5), xunit);
	}
}

void pn_plot_vline(struct pn_plot *p, double x, const char *color, const char *tip)
{
	double px = pn_plot_px(p, x);
	fprintf(p->f,
		"<line class=\"mark\" stroke=\"%s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
		"data-tip=\"",
		color, px, p->mt, px, p->h - p->mb);
	pn_rep_esc(p->f, PN_REP_ATTR, tip);
	fputs("\"/>", p->f);
}

void pn_plot_rect(struct pn_plot *p, double x0, double y0, double x1, double y1, const char *fill,
		  const char *tip)
{
	double a = pn_plot_px(p, x0), b = pn_plot_px(p, x1);
	double c = pn_plot_py(p, y0), d = pn_plot_py(p, y1);
	fprintf(p->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"",
		a < b ? a : b, c < d ? c : d, fabs(b - a), fabs(d - c), fill);
	if (tip) {
		fputs(" data-tip=\"", p->f);
		pn_rep_esc(p->f, PN_REP_ATTR, tip);
		fputc('"', p->f);
	}
	fputs("/>", p->f);
}

void pn_rep_legend(FILE *f, const char *const *names, const char *const *colors, int n)
{
	fputs("<div class=\"legend\">", f);
	for (int i = 0; i < n; i++) {
		fprintf(f, "<span><i style=\"background:%s\"></i>", colors[i]);
		pn_rep_esc(f, PN_REP_TEXT, names[i]);
		fputs("</span> ", f); /* copied as text, the names stay apart */
	}
	fputs("</div>\n", f);
}

static const char style[] =
	"body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;"
	"max-width:1180px;color:#222;padding:0 16px}\n"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;border-bottom:1px solid #ccc;"
	"padding-bottom:3px;margin-top:32px}h3{font-size:15px;margin:18px 0 4px}\n"
	"p.note{color:#555;margin:2px 0 8px;max-width:900px}\n"
	"table{border-collapse:collapse;margin:6px 0 12px}td,th{border:1px solid #ddd;"
	"padding:2px 8px}th{background:#f4f4f4;text-align:left}td.num,th.num{text-align:right;"
	"font-variant-numeric:tabular-nums}\n"
	"svg{display:block;margin:4px 0;background:#fff}svg text{font:11px sans-serif;fill:#333}"
	"svg text.axis{font-size:12px;fill:#111}svg text.tick{fill:#555}"
	"svg text.lane{font-size:11px}svg text.hex{font:12px monospace}\n"
	".grid{stroke:#e6e6e6;stroke-width:1}.frame{fill:none;stroke:#999}"
	".line{fill:none;stroke-width:1.8}.pt{fill:transparent;stroke:none}"
	".pt:hover{fill:#000}.mark{stroke-width:1;stroke-dasharray:4 3}\n"
	".legend span{margin-right:14px;white-space:nowrap}.legend i{display:inline-block;"
	"width:11px;height:11px;margin-right:4px;vertical-align:-1px;border:1px solid #0003}\n"
	".row{display:flex;flex-wrap:wrap;gap:12px}.ok{color:#1a7f37;font-weight:600;white-space:nowrap}"
	".bad{color:#c62828;font-weight:600;white-space:nowrap}.warn{color:#b26a00;font-weight:600}code,pre{background:#f6f6f6;padding:1px 4px}pre{white-space:pre-wrap}"
	"pre{padding:6px 8px;overflow-x:auto}\n"
	"#tip{position:fixed;pointer-events:none;background:#222;color:#fff;font-size:12px;"
	"padding:3px 6px;border-radius:3px;display:none;z-index:9;white-space:pre}\n";

/* The one script: show an element's data-tip next to the pointer. */
static const char script[] =
	"(function(){var t=document.getElementById('tip');"
	"document.addEventListener('mouseover',function(e){var s=e.target.getAttribute&&"
	"e.target.getAttribute('data-tip');if(!s){t.style.display='none';return;}"
	"t.textContent=s;t.style.display='block';});"
	"document.addEventListener('mousemove',function(e){t.style.left=(e.clientX+12)+'px';"
	"t.style.top=(e.clientY+12)+'px';});})();\n";

void pn_rep_page_begin(FILE *f, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width\">\n<title>",
	      f);
	pn_rep_esc(f, PN_REP_TEXT, title);
	fprintf(f, "</title>\n<style>\n%s</style></head>\n<body>\n<div id=\"tip\"></div>\n", style);
}

void pn_rep_page_end(FILE *f) { fprintf(f, "<script>\n%s</script>\n</body></html>\n", script); }

void pn_plot_num(struct pn_plot *p, double px, double py, const char *anchor, const char *path,
		 const json_t *v, double scale, int sig)
{
	char buf[64] = "-";
	PN_ASSERT(scale > 0);
	if (json_is_integer(v) && scale == 1 && json_integer_value(v) >= 0)
		pn_rep_int(buf, sizeof(buf), (uint64_t)json_integer_value(v));
	else if (json_is_number(v))
		pn_rep_real(buf, sizeof(buf), json_number_value(v) / scale, sig);
	fprintf(p->f, "<text class=\"num\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" data-j=\"", px,
		py, anchor);
	pn_rep_esc(p->f, PN_REP_ATTR, path);
	fprintf(p->f, "\" data-scale=\"%.17g\">%s</text>", scale, buf);
}
