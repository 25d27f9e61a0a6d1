/*
 * report_published.c: the seed's published figures beside a run's (cli layer; the costs
 * section's part, report_costs.h): a scenario that reproduces a figure of docs/results.md
 * shows its value at the figure's JSON path next to the published one, as bars and a table.
 */
#include "report_costs.h"

#include <math.h>
#include <string.h>

#include "pn.h"
#include "report_svg.h"

/* The published figures of docs/results.md that a scenario reproduces: its result's value
 * at `key` (a path inside the result) beside the seed's. */
static const struct published {
	const char *scenario, *mode, *key, *what, *source;
	double value;
} published[] = {
	{"seed000-tpcc", "fpw", ".transaction_types.NewOrder.all_wal_bytes_per_transaction",
	 "WAL per NewOrder (bytes)", "seed 000 section 7", 38318.65},
	{"seed000-tpcc", "nofpw", ".transaction_types.NewOrder.all_wal_bytes_per_transaction",
	 "WAL per NewOrder (bytes)", "seed 000 section 7", 8056.66},
	{"seed000-tpcc", "umbra", ".transaction_types.NewOrder.all_wal_bytes_per_transaction",
	 "WAL per NewOrder (bytes)", "seed 000 section 7", 8002.68},
};

/* ---- the published figure ---- */
static const json_t *path_get(const json_t *o, const char *path)
{
	char key[64];
	while (o && *path == '.') {
		size_t n = strcspn(path + 1, ".");
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path + 1, n);
		key[n] = '\0';
		o = json_object_get(o, key);
		path += 1 + n;
	}
	return o;
}

struct pub_row {
	const struct published *pb;
	int result;
	const json_t *ours;
};

/* Published beside ours: a pair of bars per figure (published grey, ours in its mode's colour). */
static void published_bars(struct costs *c, const struct pub_row *pubs, int n)
{
	struct pn_plot p = {.f = c->f,
			    .w = 150 + 110 * n,
			    .h = 250,
			    .ml = 70,
			    .mr = 10,
			    .mt = 14,
			    .mb = 44,
			    .y_ticks = true};
	double ymax = 0;
	for (int k = 0; k < n; k++)
		ymax = fmax(ymax, fmax(pubs[k].pb->value, json_number_value(pubs[k].ours)));
	p.x = (struct pn_axis){0, (double)n, false, NULL};
	p.y = (struct pn_axis){0, ymax * 1.15, false, pubs[0].pb->what};
	pn_plot_begin(&p, "published figure beside ours");
	for (int k = 0; k < n; k++) {
		char tip[160], path[192], buf[48];
		double pub = pubs[k].pb->value, ours = json_number_value(pubs[k].ours);
		snprintf(tip, sizeof(tip), "%s published (%s): %.2f", pubs[k].pb->mode,
			 pubs[k].pb->source, pub);
		pn_plot_rect(&p, k + 0.12, 0, k + 0.48, pub, "#dddddd", tip);
		snprintf(tip, sizeof(tip), "%s ours: %.2f (%.3f of published)", pubs[k].pb->mode,
			 ours, ours / pub);
		pn_plot_rect(&p, k + 0.52, 0, k + 0.88, ours, pn_rep_mode_color(pubs[k].pb->mode),
			     tip);
		pn_plot_text(&p, pn_plot_px(&p, k + 0.3), pn_plot_py(&p, pub) - 4, "middle", "tick",
			     pn_rep_real(buf, sizeof(buf), pub, 4));
		snprintf(path, sizeof(path), ".results[%d]%s", pubs[k].result, pubs[k].pb->key);
		pn_plot_num(&p, pn_plot_px(&p, k + 0.7), pn_plot_py(&p, ours) - 4, "middle", path,
			    pubs[k].ours, 1, 4);
		pn_plot_text(&p, pn_plot_px(&p, k + 0.5), p.h - p.mb + 14, "middle", "tick",
			     pubs[k].pb->mode);
	}
	pn_plot_end(&p);
	static const char *const names[] = {"published", "ours (in the mode's colour)"};
	static const char *const colors[] = {"#dddddd", "#2ca02c"};
	pn_rep_legend(c->f, names, colors, 2);
}

void pn_report_published(struct costs *c, const char *scenario)
{
	struct pub_row pubs[PN_ARRAY_LEN(published)];
	int n = 0;
	char path[192], buf[48];
	for (size_t k = 0; k < PN_ARRAY_LEN(published); k++) {
		for (int i = 0; i < c->n && strcmp(published[k].scenario, scenario) == 0; i++) {
			const json_t *ours = pn_rep_number(c->in,
							   path_get(c->res[i], published[k].key),
							   false, 0, TWO_63, "results[%d]%s",
							   c->idx[i], published[k].key);
			if (strcmp(c->mode[i], published[k].mode) == 0 && ours)
				pubs[n++] = (struct pub_row){&published[k], c->idx[i], ours};
		}
	}
	if (n == 0)
		return;
	fputs("<h3>Beside the published figure</h3><p class=\"note\">The seed's numbers "
	      "(docs/results.md) next to this run's.</p>\n",
	      c->f);
	published_bars(c, pubs, n);
	fputs("<table><tr><th>mode</th><th>figure</th><th class=\"num\">published</th>"
	      "<th class=\"num\">ours</th><th class=\"num\">ours / published</th><th>source</th>"
	      "</tr>\n",
	      c->f);
	for (int k = 0; k < n; k++) {
		const struct published *pb = pubs[k].pb;
		fprintf(c->f, "<tr><td>%s</td><td>%s</td><td class=\"num\">%s</td>", pb->mode,
			pb->what, pn_rep_real(buf, sizeof(buf), pb->value, 7));
		snprintf(path, sizeof(path), ".results[%d]%s", pubs[k].result, pb->key);
		pn_rep_num(c->f, "td", path, pubs[k].ours);
		fprintf(c->f, "<td class=\"num\">%.3f</td><td>%s</td></tr>\n",
			json_number_value(pubs[k].ours) / pb->value, pb->source);
	}
	fputs("</table>\n", c->f);
}
