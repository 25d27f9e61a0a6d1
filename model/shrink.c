/*
 * shrink.c: counterexample shrinking and scenario serialisation (model layer). See shrink.h.
 */
#include "shrink.h"

#include "explore.h"
#include "protocols.h"

#include <stdlib.h>
#include <string.h>

#define SHRINK_ATTEMPTS_MAX 48

bool pn_scenario_copy(const struct pn_scenario *src, struct pn_scenario *dst)
{
	*dst = *src;
	dst->workload.script = NULL;
	dst->crash.list = NULL;
	if (src->workload.script_len) {
		dst->workload.script = malloc(src->workload.script_len * sizeof(struct pn_step));
		if (!dst->workload.script)
			return false;
		memcpy(dst->workload.script, src->workload.script,
		       src->workload.script_len * sizeof(struct pn_step));
	}
	if (src->crash.list_len) {
		dst->crash.list = malloc(src->crash.list_len * sizeof(uint64_t));
		if (!dst->crash.list)
			return false;
		memcpy(dst->crash.list, src->crash.list, src->crash.list_len * sizeof(uint64_t));
	}
	return true;
}

static void duration(FILE *out, const char *key, uint64_t ns)
{
	if (ns % 1000000 == 0)
		fprintf(out, "%s: %llums", key, (unsigned long long)(ns / 1000000));
	else
		fprintf(out, "%s: %lluus", key, (unsigned long long)(ns / 1000));
}

/* protocol: its mode and policy spelled from the row's name, then the keys every row reads
 * and those its declaration reads (protocols.h), so the loader takes the trace back. */
static void write_protocol(FILE *out, const struct pn_scenario *sc)
{
	const struct pn_protocol_decl *d = pn_protocol_decl_of(sc);
	enum pn_protocol_id row = (enum pn_protocol_id)sc->protocol.row;
	fprintf(out, "protocol: {mode: %.*s, ", (int)pn_protocol_mode_len(row),
		pn_protocol_names[row]);
	if (d->keys & PN_KEY_POLICY)
		fprintf(out, "policy: %s, ", pn_protocol_policy(row));
	if (d->keys & PN_KEY_GENERATIONS)
		fprintf(out, "generations: %u, ", sc->protocol.generations);
	if (d->keys & PN_KEY_LAYOUT)
		fprintf(out, "layout: %s, ", pn_layout_name(sc->protocol.layout));
	if (d->keys & PN_KEY_IMAGE_THRESHOLD)
		fprintf(out, "image_threshold: %u, ", sc->protocol.image_threshold);
	if (d->keys & PN_KEY_SPARE_SLOTS)
		fprintf(out, "spare_slots: %u%s, ", sc->protocol.spare_slots,
			sc->protocol.spare_percent ? "%" : "");
	fprintf(out, "checksums: %s, wal_log_hints: %s, slru_headers: %s, mutations: [",
		sc->protocol.checksums ? "true" : "false",
		sc->protocol.wal_log_hints ? "true" : "false",
		sc->protocol.slru_headers ? "true" : "false");
	for (int i = 0, n = 0; i < PN_MUT_COUNT; i++)
		if (sc->protocol.mutations & (1u << i))
			fprintf(out, "%s%s", n++ ? ", " : "", pn_mutation_name(i));
	fprintf(out, "]}\n");
}

const char *const pn_workload_key_names[PN_WK_COUNT + 1] = {PN_WORKLOAD_KEY_LIST(PN_ENUM_NAME)};

#define WK(k) (1u << (k))
/* shrink.h: the sizing keys each kind reads; transactions by all but script. */
static const unsigned workload_keys[PN_WL_COUNT] = {
	[PN_WL_SCRIPT] = 0,
	[PN_WL_RANDOM] = WK(PN_WK_TRANSACTIONS) | WK(PN_WK_PAGES_PER_TRANSACTION),
	[PN_WL_PGBENCH] = WK(PN_WK_TRANSACTIONS) | WK(PN_WK_SCALE),
	[PN_WL_TPCC] = WK(PN_WK_TRANSACTIONS) | WK(PN_WK_WAREHOUSES),
	[PN_WL_VACUUM] = WK(PN_WK_TRANSACTIONS) | WK(PN_WK_ROWS),
	[PN_WL_BTREE_DEDUP] = WK(PN_WK_TRANSACTIONS) | WK(PN_WK_INSERTS) | WK(PN_WK_DISTINCT_KEYS),
	[PN_WL_SLRU] = WK(PN_WK_TRANSACTIONS) | WK(PN_WK_PAGES_PER_TRANSACTION),
	[PN_WL_IMPORT] = WK(PN_WK_TRANSACTIONS),
};

bool pn_workload_reads(enum pn_workload_kind kind, enum pn_workload_key key)
{
	PN_ASSERT(kind < PN_WL_COUNT && key < PN_WK_COUNT);
	return (workload_keys[kind] & WK(key)) != 0;
}

/* The sizing keys this workload reads, in the format's order. */
static void write_sizing(FILE *out, const struct pn_scenario *sc)
{
	const typeof(sc->workload) *w = &sc->workload;
	const unsigned long long value[PN_WK_COUNT] = {
		[PN_WK_TRANSACTIONS] = w->transactions,
		[PN_WK_PAGES_PER_TRANSACTION] = w->pages_per_transaction,
		[PN_WK_SCALE] = w->scale,
		[PN_WK_WAREHOUSES] = w->warehouses,
		[PN_WK_ROWS] = w->rows,
		[PN_WK_INSERTS] = w->inserts,
		[PN_WK_DISTINCT_KEYS] = w->distinct_keys,
	};
	for (int k = 0; k < PN_WK_COUNT; k++)
		if (pn_workload_reads(w->kind, (enum pn_workload_key)k))
			fprintf(out, "  %s: %llu\n", pn_workload_key_names[k], value[k]);
}

static void write_workload(FILE *out, const struct pn_scenario *sc)
{
	const typeof(sc->workload) *w = &sc->workload;
	fprintf(out, "workload:\n  kind: %s\n  clients: %u\n", pn_workload_kind_name(w->kind),
		w->clients);
	if (w->kind == PN_WL_IMPORT) { /* the trace where it is, whatever the new file's place */
		char given[PN_ERROR_LEN], *abs;
		const char *slash = strrchr(sc->path, '/');
		snprintf(given, sizeof given, "%.*s%s",
			 w->trace[0] == '/' || !slash ? 0 : (int)(slash - sc->path + 1), sc->path,
			 w->trace);
		abs = realpath(given, NULL);
		fprintf(out, "  trace: %s\n", abs ? abs : given);
		free(abs);
	}
	if (w->kind != PN_WL_SCRIPT) {
		write_sizing(out, sc);
		return;
	}
	fprintf(out, "  script:\n");
	for (uint32_t i = 0; i < w->script_len; i++) {
		const struct pn_step *s = &w->script[i];
		fprintf(out, "    - {op: %s", pn_op_name(s->op));
		if (s->op == PN_OP_SLRU_SET)
			fprintf(out, ", xid: %u", s->xid);
		else if (s->op == PN_OP_UPDATE || s->op == PN_OP_EVICT || s->op == PN_OP_HINT ||
			 s->op == PN_OP_VACUUM || s->op == PN_OP_DEDUP ||
			 s->op == PN_OP_UPDATE_HOLD || s->op == PN_OP_TRUNCATE)
			fprintf(out, ", page: %u", s->page);
		fprintf(out, ", client: %u}\n", s->client);
	}
}

/* key: "text", quoted, so that any name or description the loader took loads back. YAML's
 * other line breaks are escaped: NEL (U+0085, from a "\N" escape) written raw would load as a
 * line break and fold to a space; LS and PS (U+2028, U+2029) likewise, for any reader. */
static void quoted(FILE *out, const char *key, const char *text)
{
	fprintf(out, "%s: \"", key);
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (p[0] == 0xc2 && p[1] == 0x85) {
			fputs("\\N", out);
			p += 1;
		} else if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
			fputs(p[2] == 0xa8 ? "\\L" : "\\P", out);
			p += 2;
		} else
			fputc(*p, out);
	}
	fprintf(out, "\"\n");
}

/* The shortest fixed-point text (no exponent: the loader takes none) that reads back as v;
 * the loader reads it with strtod, so the text is stable however often it is written. */
static void fraction(char *buf, size_t len, double v)
{
	for (int digits = 1; digits <= 29; digits++) {
		snprintf(buf, len, "%.*f", digits, v);
		if (strtod(buf, NULL) == v)
			return;
	}
	for (size_t n = strlen(buf); n > 2 && buf[n - 1] == '0' && buf[n - 2] != '.'; n--)
		buf[n - 1] = '\0';
}

void pn_scenario_write(FILE *out, const struct pn_scenario *sc)
{
	char target[48];
	quoted(out, "name", sc->name);
	if (sc->description[0])
		quoted(out, "description", sc->description);
	fprintf(out, "seed: %llu\n", (unsigned long long)sc->seed);
	if (sc->postgres != PN_PG15) /* the default left out, as older traces were */
		fprintf(out, "postgres: %s\n", pn_pg_version_name(sc->postgres));
	fprintf(out,
		"storage: {pages: %u, page_size: %u, sector_size: %u, buffers: %u, "
		"wal_segment_size: %u}\n",
		sc->storage.pages, sc->storage.page_size, sc->storage.sector_size,
		sc->storage.buffers, sc->storage.wal_segment_size);
	write_protocol(out, sc);
	fprintf(out, "checkpoint: {");
	duration(out, "interval", sc->checkpoint.interval_ns);
	fraction(target, sizeof target, sc->checkpoint.completion_target);
	fprintf(out,
		", every_transactions: %u, completion_target: %s, max_wal_size: %llu, overlap: %s}\n",
		sc->checkpoint.every_transactions, target,
		(unsigned long long)sc->checkpoint.max_wal_size,
		sc->checkpoint.overlap ? "true" : "false");
	fprintf(out, "aio: {queue_depth: %u, reorder: %s}\n", sc->aio.queue_depth,
		sc->aio.reorder ? "true" : "false");
	write_workload(out, sc);
	fprintf(out, "schedules: {runs: %u", sc->schedules.runs);
	if (sc->schedules.strategy != PN_STRATEGY_SEEDED)
		fprintf(out,
			", strategy: %s, preemption_bound: %u, depth: %u, reduce: %s, prune: %s",
			pn_strategy_name(sc->schedules.strategy), sc->schedules.preemption_bound,
			sc->schedules.depth, sc->schedules.reduce ? "true" : "false",
			sc->schedules.prune ? "true" : "false");
	else if (sc->schedules.named) /* seeded only, as asked (explore_split.h D1) */
		fprintf(out, ", strategy: seeded");
	if (sc->schedules.budget)
		fprintf(out, ", budget: %u", sc->schedules.budget);
	if (sc->schedules.choice_width != PN_CHOICE_WIDTH) /* written only when not the default */
		fprintf(out, ", choice_width: %u", sc->schedules.choice_width);
	fprintf(out, "}\n");
	if (sc->crash.present) {
		fprintf(out, "crash: {points: ");
		if (sc->crash.points == PN_POINTS_ALL)
			fprintf(out, "all");
		else if (sc->crash.points == PN_POINTS_EVERY)
			fprintf(out, "{every: %llu}", (unsigned long long)sc->crash.every);
		else
			for (uint32_t i = 0; i < sc->crash.list_len; i++)
				fprintf(out, "%s%llu%s", i ? ", " : "[",
					(unsigned long long)sc->crash.list[i],
					i + 1 == sc->crash.list_len ? "]" : "");
		fprintf(out, ", max_unsynced: %u, tear: %s, samples: %u", sc->crash.max_unsynced,
			pn_tear_name(sc->crash.tear), sc->crash.samples);
		if (sc->crash.atomic_unit) /* given: left out otherwise, as older traces were */
			fprintf(out, ", atomic_unit: %u", sc->crash.atomic_unit);
		if (sc->crash.torn_writes) /* likewise */
			fprintf(out, ", torn_writes: %u", sc->crash.torn_writes);
		if (sc->crash.search_samples) /* 0 is the default */
			fprintf(out, ", search_samples: %u", sc->crash.search_samples);
		fprintf(out, "}\n");
	}
	fprintf(out, "expect: {verdict: %s}\n", sc->expect.violation ? "violation" : "pass");
}

/* Checks a candidate; true when it shows the same kind of violation (res then holds it). */
static bool still_fails(const struct pn_scenario *cand, const struct pn_check_options *opt,
			enum pn_violation_kind kind, struct pn_check_result *res)
{
	static struct pn_check_result r;
	struct pn_check_options o = *opt;
	o.progress = NULL;
	o.timeline = NULL;
	pn_check_scenario(cand, &o, &r);
	if (!r.violation || r.error || r.interrupted || r.kind != kind)
		return false;
	*res = r;
	return true;
}

/* One candidate variant number v of sc into cand; false when v is past the last. */
static bool variant(const struct pn_scenario *sc, uint32_t v, struct pn_scenario *cand)
{
	const typeof(sc->workload) *w = &sc->workload;
	bool script = w->kind == PN_WL_SCRIPT;
	/* vacuum and btree_dedup size their relation from rows / inserts: storage.pages and
	 * pages_per_transaction change nothing there */
	bool sized = w->kind == PN_WL_VACUUM || w->kind == PN_WL_BTREE_DEDUP;
	if (script ? v >= w->script_len || w->script_len <= 1 : v > 4)
		return false;
	if (!pn_scenario_copy(sc, cand))
		return false;
	if (script) {
		uint32_t drop = w->script_len - 1 - v;
		enum pn_op op = w->script[drop].op;
		if (op == PN_OP_UPDATE_HOLD || op == PN_OP_RELEASE)
			return true; /* a hold and its release go together (the loader pairs them) */
		memmove(&cand->workload.script[drop], &cand->workload.script[drop + 1],
			(w->script_len - drop - 1) * sizeof(struct pn_step));
		cand->workload.script_len--;
		return true;
	}
	switch (v) {
	case 0:
		if (w->transactions <= 1)
			return true;
		cand->workload.transactions = w->transactions / 2;
		return true;
	case 1:
		if (w->transactions <= 1)
			return true;
		cand->workload.transactions = w->transactions - 1;
		return true;
	case 2:
		if (w->clients <= 1)
			return true;
		cand->workload.clients = w->clients - 1;
		return true;
	case 3:
		if (w->pages_per_transaction <= 1 || sized)
			return true;
		cand->workload.pages_per_transaction--;
		return true;
	case 4:
		if (sized || sc->storage.pages / 2 < PN_MAX(w->pages_per_transaction, 2u))
			return true;
		cand->storage.pages = sc->storage.pages / 2;
		return true;
	default: return false;
	}
}

static bool same(const struct pn_scenario *a, const struct pn_scenario *b)
{
	return a->workload.transactions == b->workload.transactions &&
	       a->workload.clients == b->workload.clients &&
	       a->workload.pages_per_transaction == b->workload.pages_per_transaction &&
	       a->storage.pages == b->storage.pages &&
	       a->workload.script_len == b->workload.script_len;
}

static bool stop_requested(const struct pn_check_options *opt) { return opt->stop && *opt->stop; }

/* A smaller variant of a bounded search is searched only as deep as the violation was found
 * (its preemptions): a variant that needs more is not the smaller counterexample sought, and
 * the search of a variant that passes costs every schedule up to its bound. */
static void bound_to_found(struct pn_scenario *cand, const struct pn_check_result *res)
{
	uint32_t found = res->choices[0] ? 1 : 0;
	for (const char *p = res->choices; *p; p++)
		found += *p == ',';
	if (cand->schedules.strategy == PN_STRATEGY_BOUNDED)
		cand->schedules.preemption_bound = PN_MIN(cand->schedules.preemption_bound, found);
}

/* Fewer preemptions: the violation's schedule with one of them left out, each in turn, while
 * that still shows it (the schedule alone is checked, explore.h's fixed list). */
static void shrink_choices(const struct pn_scenario *sc, const struct pn_check_options *opt,
			   enum pn_violation_kind kind, struct pn_check_result *res,
			   struct pn_shrink_result *out)
{
	struct pn_schedule s;
	char why[160], text[sizeof(res->choices)];
	bool progress = true;
	while (progress && res->choices[0] && out->attempts < SHRINK_ATTEMPTS_MAX &&
	       !stop_requested(opt) && pn_schedule_parse(res->choices, &s, why, sizeof(why))) {
		progress = false;
		struct pn_schedule fewer = {calloc(s.n + 1, sizeof(*s.c)), s.n - 1};
		PN_ASSERT(fewer.c != NULL);
		for (uint32_t drop = s.n; drop-- > 0 && out->attempts < SHRINK_ATTEMPTS_MAX;) {
			memcpy(fewer.c, s.c, drop * sizeof(*s.c)); /* all but choice number drop */
			memcpy(fewer.c + drop, s.c + drop + 1, (s.n - drop - 1) * sizeof(*s.c));
			PN_ASSERT(pn_schedule_format(&fewer, text, sizeof(text)));
			struct pn_check_options o = *opt;
			o.choices = text;
			o.replay_schedule = res->schedule;
			out->attempts++;
			if (still_fails(sc, &o, kind, res)) {
				out->accepted++;
				out->choices_dropped++;
				progress = true;
				break;
			}
		}
		pn_schedule_free(&fewer);
		pn_schedule_free(&s);
	}
}

void pn_shrink(struct pn_scenario *sc, const struct pn_check_options *opt,
	       struct pn_check_result *res, struct pn_shrink_result *out)
{
	enum pn_violation_kind kind = res->kind;
	struct pn_scenario orig = *sc;
	memset(out, 0, sizeof(*out));
	bool progress = true;
	/* a stop request (a signal) ends shrinking: sc and res stay the last variant kept */
	while (progress && out->attempts < SHRINK_ATTEMPTS_MAX && !stop_requested(opt)) {
		progress = false;
		struct pn_scenario cand;
		for (uint32_t v = 0; out->attempts < SHRINK_ATTEMPTS_MAX && !stop_requested(opt) &&
				     variant(sc, v, &cand);
		     v++) {
			if (same(&cand, sc)) {
				pn_scenario_free(&cand);
				continue;
			}
			bound_to_found(&cand, res);
			out->attempts++;
			if (!still_fails(&cand, opt, kind, res)) {
				pn_scenario_free(&cand);
				continue;
			}
			out->accepted++;
			pn_scenario_free(sc);
			*sc = cand;
			progress = true;
			break;
		}
	}
	if (!stop_requested(opt))
		shrink_choices(sc, opt, kind, res, out);
	size_t at = (size_t)snprintf(out->summary, sizeof(out->summary),
				     "%u of %u smaller variants kept", out->accepted,
				     out->attempts);
	const struct {
		const char *what;
		uint64_t from, to;
	} change[] = {
		{"transactions", orig.workload.transactions, sc->workload.transactions},
		{"clients", orig.workload.clients, sc->workload.clients},
		{"pages per transaction", orig.workload.pages_per_transaction,
		 sc->workload.pages_per_transaction},
		{"pages", orig.storage.pages, sc->storage.pages},
		{"script steps", orig.workload.script_len, sc->workload.script_len},
	};
	for (size_t i = 0; i < PN_ARRAY_LEN(change) && at < sizeof(out->summary); i++)
		if (change[i].from != change[i].to)
			at += (size_t)snprintf(out->summary + at, sizeof(out->summary) - at,
					       ", %s %llu -> %llu", change[i].what,
					       (unsigned long long)change[i].from,
					       (unsigned long long)change[i].to);
	if (out->choices_dropped && at < sizeof(out->summary))
		snprintf(out->summary + at, sizeof(out->summary) - at, ", %u preemptions left out",
			 out->choices_dropped);
}
