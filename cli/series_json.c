/*
 * series_json.c: a run's time series as JSON (cli layer): the "series" key of a run or
 * compare result (docs/cli.md, "--json FILE"), written from sim/series.h's struct pn_series.
 * Column-wise: one array per counter, every array `samples` long, index i being sample i;
 * then the checkpoints held, each with Umbra's slots of the sampled pages when the run had
 * generations (null where a page was not yet sampled).
 */
#include "cli.h"

static json_t *u64_json(uint64_t v)
{
	PN_ASSERT(v <= (uint64_t)INT64_MAX);
	return json_integer((json_int_t)v);
}

static json_t *slots_json(const uint8_t *slots, uint32_t n)
{
	json_t *a = json_array();
	for (uint32_t i = 0; i < n; i++)
		json_array_append_new(a, slots[i] == PN_SERIES_UNKNOWN ? json_null()
								       : u64_json(slots[i]));
	return a;
}

static json_t *ckpt_json(const struct pn_series *s, const struct pn_series_ckpt *c)
{
	json_t *o = json_object();
	json_object_set_new(o, "number", u64_json(c->number));
	json_object_set_new(o, "begin_ns", u64_json(c->begin_ns));
	json_object_set_new(o, "end_ns", u64_json(c->end_ns));
	json_object_set_new(o, "wal_bytes", u64_json(c->wal_bytes));
	json_object_set_new(o, "fpi_count", u64_json(c->fpi_count));
	json_object_set_new(o, "commits", u64_json(c->commits));
	json_object_set_new(o, "shifts", u64_json(c->shifts));
	if (s->generations > 1) {
		json_object_set_new(o, "active", slots_json(c->active, s->npages));
		json_object_set_new(o, "baseline", slots_json(c->baseline, s->npages));
	}
	return o;
}

json_t *pn_cli_series_json(const struct pn_series *s)
{
	json_t *o = json_object(), *pages = json_array(), *ckpts = json_array();
	json_object_set_new(o, "samples", u64_json(s->n));
	json_object_set_new(o, "every_events", u64_json(s->every_events));
	for (int c = 0; c < PN_SC_COUNT; c++) {
		json_t *a = json_array();
		for (uint32_t i = 0; i < s->n; i++)
			json_array_append_new(a, u64_json(s->v[i][c]));
		json_object_set_new(o, pn_series_col_names[c], a);
	}
	json_object_set_new(o, "checkpoints_every", u64_json(s->ckpt_every));
	for (uint32_t i = 0; i < s->nckpt; i++)
		json_array_append_new(ckpts, ckpt_json(s, &s->ckpt[i]));
	json_object_set_new(o, "checkpoint_marks", ckpts);
	json_object_set_new(o, "slots", u64_json(s->generations));
	for (uint32_t i = 0; i < s->npages; i++)
		json_array_append_new(pages, u64_json(s->pages[i]));
	json_object_set_new(o, "pages", pages);
	return o;
}
