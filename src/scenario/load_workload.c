/*
 * load_workload.c: the workload section's script, and what the engine can run (scenario
 * layer; part of the loader, load.c). Reads workload.script step by step (each step's keys
 * against its op), then, once the whole document is read, checks the steps against
 * storage.pages and workload.clients and the scenario against the engine's limits.
 *
 * Rules it keeps:
 *   LD6 What the engine cannot run is refused at its key, with what it would need
 *       (load_validate_engine(), validate_memory(); docs/scenarios.md, "Limits").
 */
#include "load_walk.h"
#include "load_workload.h"
#include "load_yaml.h"
#include "parse.h"
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A script step's keys; their indices are the STEP_* bits of check_step(). */
enum { STEP_OP, STEP_PAGE, STEP_XID, STEP_CLIENT };
/* clang-format off */
static const struct field step_fields[] = {
	{.key = "op", .type = V_ENUM, .off = offsetof(struct pn_step, op), .names = pn_script_op_names},
	{.key = "page", .type = V_U32, .off = offsetof(struct pn_step, page), .max = UINT32_MAX},
	{.key = "xid", .type = V_U32, .off = offsetof(struct pn_step, xid), .max = UINT32_MAX},
	{.key = "client", .type = V_U32, .off = offsetof(struct pn_step, client), .max = UINT32_MAX},
};
/* clang-format on */
static const struct table step_table = TABLE(step_fields);

/* Which keys an op takes besides op and client: page, xid. */
static bool op_has_page(enum pn_op op)
{
	return op == PN_OP_UPDATE || op == PN_OP_EVICT || op == PN_OP_HINT || op == PN_OP_VACUUM ||
	       op == PN_OP_DEDUP || op == PN_OP_UPDATE_HOLD || op == PN_OP_TRUNCATE;
}

/* The step of `client` next after step i (dir +1) or before it (dir -1), or NULL. */
static const struct pn_step *client_step(const struct pn_scenario *s, uint32_t i, int dir)
{
	for (int64_t j = (int64_t)i + dir; j >= 0 && j < (int64_t)s->workload.script_len; j += dir)
		if (s->workload.script[j].client == s->workload.script[i].client)
			return &s->workload.script[j];
	return NULL;
}

/* Each update_hold paired with a release (whether the row runs them: validate_protocol). */
static bool validate_hold(struct loader *L, uint32_t i)
{
	const struct pn_scenario *s = L->s;
	const struct pn_step *st = &s->workload.script[i], *o;

	PN_ASSERT(i < s->workload.script_len && st->line >= 1 && st->column >= 1);
	/* the row runs these steps: validate_protocol */
	if (st->op == PN_OP_UPDATE_HOLD && (!(o = client_step(s, i, 1)) || o->op != PN_OP_RELEASE))
		return load_fail_at(
			L, (size_t)st->line, (size_t)st->column,
			"workload.script[%u] is an update_hold of client %u whose next step is %s; expected {op: release, client: %u} as that client's next step",
			i, st->client, o ? pn_op_names[o->op] : "missing", st->client);
	if (st->op == PN_OP_RELEASE && (!(o = client_step(s, i, -1)) || o->op != PN_OP_UPDATE_HOLD))
		return load_fail_at(
			L, (size_t)st->line, (size_t)st->column,
			"workload.script[%u] releases client %u, which holds nothing (its step before is %s); expected an update_hold of client %u before it",
			i, st->client, o ? pn_op_names[o->op] : "missing", st->client);
	return true;
}

static bool check_step(struct loader *L, const struct pn_step *st, const struct seen *seen,
		       yaml_mark_t m, const char *where)
{
	uint32_t allowed = 1u << STEP_OP | 1u << STEP_CLIENT;
	char list[WANT_LEN];
	const char *op;

	if (!(seen->mask & 1u << STEP_OP)) {
		load_join_names(list, sizeof list, pn_script_op_names, PN_OP_SCRIPT_COUNT);
		return load_fail(L, m, "%s has no 'op'; expected op: one of %s", where, list);
	}
	PN_ASSERT(st->op < PN_OP_SCRIPT_COUNT); /* read_enum stored an index of the names */
	op = pn_op_names[st->op];
	if (op_has_page(st->op))
		allowed |= 1u << STEP_PAGE;
	if (st->op == PN_OP_SLRU_SET)
		allowed |= 1u << STEP_XID;
	for (size_t i = 0; i < step_table.count; i++) {
		if ((seen->mask & 1u << i) && !(allowed & 1u << i))
			return load_fail(L, seen->key[i],
					 "key '%s' is not used by op '%s' in %s; expected %s",
					 step_fields[i].key, op, where,
					 st->op == PN_OP_SLRU_SET ? "op, xid, client"
					 : op_has_page(st->op)    ? "op, page, client"
								  : "op, client");
	}
	if ((allowed & 1u << STEP_PAGE) && !(seen->mask & 1u << STEP_PAGE))
		return load_fail(L, m, "%s has op '%s' but no 'page'; expected page: N", where, op);
	if ((allowed & 1u << STEP_XID) && !(seen->mask & 1u << STEP_XID))
		return load_fail(L, m, "%s has op '%s' but no 'xid'; expected xid: N", where, op);
	return true;
}

static bool read_step(struct loader *L, struct pn_step *st, const char *where)
{
	yaml_mark_t m = L->ev.start_mark;
	struct seen seen;

	memset(st, 0, sizeof *st);
	st->line = (int)load_position(L, m).line;
	st->column = (int)load_position(L, m).col;
	if (L->ev.type != YAML_MAPPING_START_EVENT)
		return load_fail(L, m, "%s is %s; expected a step like {op: update, page: 3}",
				 where, load_found(L));
	if (!load_read_mapping(L, &step_table, st, where, &seen))
		return false;
	return check_step(L, st, &seen, m, where);
}

bool load_read_script(struct loader *L, const struct field *f, void *base, const char *path)
{
	struct pn_scenario *s = L->s;
	char where[PATH_LEN];

	if (load_is_null(L))
		return true;
	if (L->ev.type != YAML_SEQUENCE_START_EVENT)
		return load_fail(
			L, L->ev.start_mark,
			"%s is %s; expected a list of steps like [{op: update, page: 3}, {op: commit}]",
			path, load_found(L));
	for (;;) {
		if (!load_next(L))
			return false;
		if (L->ev.type == YAML_SEQUENCE_END_EVENT)
			return true;
		if (s->workload.script_len >= MAX_STEPS)
			return load_fail(L, L->ev.start_mark,
					 "%s has more than %u steps; expected at most %u", path,
					 MAX_STEPS, MAX_STEPS);
		if (!load_grow(L, (void **)&s->workload.script, &L->script_cap,
			       s->workload.script_len, sizeof *s->workload.script))
			return false;
		PN_ASSERT(s->workload.script_len < L->script_cap);
		snprintf(where, sizeof where, "%s[%u]", path, s->workload.script_len);
		if (!read_step(L, &s->workload.script[s->workload.script_len++], where))
			return false;
	}
}

/* Steps against storage.pages and workload.clients, known only once the document is read. */
bool load_validate_script(struct loader *L)
{
	const struct pn_scenario *s = L->s;
	yaml_mark_t m;
	bool has_script = load_given(L, &s->workload.script, &m);

	if (s->workload.kind == PN_WL_SCRIPT && s->workload.script_len == 0)
		return load_fail(
			L, load_mark_of(L, &s->workload.script, &s->workload.kind),
			"workload.kind is script but workload.script %s; expected a non-empty list of steps",
			has_script ? "is empty" : "is missing");
	if (s->workload.kind != PN_WL_SCRIPT && has_script)
		return load_fail(
			L, m,
			"workload.script is given but workload.kind is %s; expected kind: script",
			pn_workload_kind_name(s->workload.kind));
	if (s->workload.kind == PN_WL_IMPORT && !load_given(L, &s->workload.trace, &m))
		return load_fail(
			L, load_mark_of(L, &s->workload.kind, NULL),
			"workload.kind is import but workload.trace is missing; expected the trace file penumbra import --out wrote");
	if (s->workload.kind != PN_WL_IMPORT && load_given(L, &s->workload.trace, &m))
		return load_fail(
			L, m,
			"workload.trace is given but workload.kind is %s; expected kind: import",
			pn_workload_kind_name(s->workload.kind));
	for (uint32_t i = 0; i < s->workload.script_len; i++) {
		const struct pn_step *st = &s->workload.script[i];
		if (op_has_page(st->op) && st->page >= s->storage.pages)
			return load_fail_at(
				L, (size_t)st->line, (size_t)st->column,
				"workload.script[%u].page is %u, out of range; expected a page below storage.pages (%u)",
				i, st->page, s->storage.pages);
		if (st->client >= s->workload.clients)
			return load_fail_at(
				L, (size_t)st->line, (size_t)st->column,
				"workload.script[%u].client is %u, out of range; expected a client below workload.clients (%u)",
				i, st->client, s->workload.clients);
		if (!validate_hold(L, i))
			return false;
	}
	return true;
}

/* 1.5GiB, 12.0MiB, 800B: a memory size for messages, one decimal. */
static void format_memory(char *buf, size_t len, uint64_t v)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double x = (double)v;
	size_t u = 0;

	while (u + 1 < PN_ARRAY_LEN(units) && x >= 1024) {
		x /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%lluB", (unsigned long long)v);
	else
		snprintf(buf, len, "%.1f%s", x, units[u]);
}

/* "128.0GiB of page images on the device, 64.0KiB of buffers": the parts that are not 0. */
static void memory_parts(char *buf, size_t len, const struct pn_scenario_memory *m)
{
	const struct {
		uint64_t bytes;
		const char *what;
	} parts[] = {
		{m->device, "of page images on the device"},
		{m->oracle, "for the oracle's three images of each page"},
		{m->buffers, "of buffers"},
		{m->logs, "of per-transaction logs"},
	};
	size_t at = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < PN_ARRAY_LEN(parts) && at < len; i++) {
		char v[32];
		if (!parts[i].bytes)
			continue;
		format_memory(v, sizeof v, parts[i].bytes);
		at += (size_t)snprintf(buf + at, len - at, "%s%s %s", at ? ", " : "", v,
				       parts[i].what);
	}
}

/* The memory a scenario may need: PENUMBRA_MEMORY_LIMIT if set, else physical memory. */
static bool memory_limit(struct loader *L, uint64_t *limit, const char **source)
{
	const char *env = getenv("PENUMBRA_MEMORY_LIMIT");
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	if (env) {
		*source = "PENUMBRA_MEMORY_LIMIT";
		if (pn_parse_size(env, limit) && *limit > 0)
			return true;
		return load_fail_at(
			L, 1, 1,
			"the environment variable PENUMBRA_MEMORY_LIMIT is '%s'; expected a size like 16GiB",
			load_show(L, env));
	}
	*source = "this machine's physical memory; PENUMBRA_MEMORY_LIMIT sets another";
	*limit = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : UINT64_MAX;
	return true;
}

/*
 * The memory a simulated run needs (pn_scenario_memory) against the limit, blamed on the
 * key whose part is the largest, with the most that key may be.
 */
static bool validate_memory(struct loader *L)
{
	const struct pn_scenario *s = L->s;
	struct pn_scenario_memory m;
	const char *source, *key, *unit;
	const void *field;
	char need[32], lim[32], parts[256];
	uint64_t limit, per, rest, given_v, most;

	pn_scenario_memory(s, &m);
	if (!memory_limit(L, &limit, &source))
		return false;
	if (m.total <= limit)
		return true;
	if (m.device + m.oracle >= PN_MAX(m.buffers, m.logs)) {
		bool rows = s->workload.kind == PN_WL_VACUUM;
		per = pn_scenario_page_bytes(s);
		rest = m.buffers + m.logs + 2 * per;
		field = rows ? (const void *)&s->workload.rows : &s->storage.pages;
		key = rows ? "workload.rows" : "storage.pages";
		given_v = rows ? s->workload.rows : s->storage.pages;
		most = limit > rest ? (limit - rest) / per : 0;
		if (rows)
			most *= s->storage.page_size > 24 ? (s->storage.page_size - 24) / 36 : 1;
		unit = rows ? "rows" : "pages";
	} else if (m.buffers >= m.logs) {
		field = &s->storage.buffers;
		key = "storage.buffers";
		given_v = s->storage.buffers;
		rest = m.total - m.buffers;
		most = limit > rest ? (limit - rest) / s->storage.page_size : 0;
		unit = "buffers";
	} else {
		bool script = s->workload.kind == PN_WL_SCRIPT;
		field = script ? (const void *)&s->workload.script : &s->workload.transactions;
		key = script ? "workload.script" : "workload.transactions";
		given_v = script ? s->workload.script_len : s->workload.transactions;
		rest = m.total - m.logs;
		most = limit > rest ? (limit - rest) / 20 : 0;
		unit = script ? "steps" : "transactions";
	}
	format_memory(need, sizeof need, m.total);
	format_memory(lim, sizeof lim, limit);
	memory_parts(parts, sizeof parts, &m);
	return load_fail(
		L, load_mark_of(L, field, NULL),
		"%s is %llu: a simulated run needs at least %s of memory (%s), more than the limit of %s (%s); expected at most %llu %s",
		key, (unsigned long long)given_v, need, parts, lim, source,
		(unsigned long long)most, unit);
}

/* btree_dedup's bounds (src/workload/wl_btree.c, its init): the leaves
 * (pn_scenario_btree_leaves) number at most a quarter of 2^32, and a transaction exists to
 * carry them.
 * A key may have any number of inserts: a leaf of one key's duplicates splits as nbtree's
 * single-value strategy does. */
static bool validate_btree(struct loader *L)
{
	const struct pn_scenario *s = L->s;
	uint64_t n = s->workload.inserts;
	uint64_t leaves = pn_scenario_btree_leaves(s);

	if (s->workload.kind != PN_WL_BTREE_DEDUP)
		return true;
	if (leaves > UINT32_MAX / 4)
		return load_fail(
			L, load_mark_of(L, &s->workload.inserts, &s->workload.kind),
			"workload.inserts is %llu: the btree_dedup model's index would need %llu leaf pages; expected at most %u",
			(unsigned long long)n, (unsigned long long)leaves, UINT32_MAX / 4);
	if (s->workload.transactions == 0)
		return load_fail(
			L, load_mark_of(L, &s->workload.transactions, &s->workload.kind),
			"workload.transactions is 0: btree_dedup's inserts are made by transactions; expected at least 1");
	return true;
}

/* pgbench and tpcc lay their tables out on storage.pages: the engine's own sizing
 * (pn_scenario_layout_pages), refused at storage.pages, or the workload's kind if absent. */
static bool validate_pages(struct loader *L)
{
	const struct pn_scenario *s = L->s;
	uint32_t need = pn_scenario_layout_pages(s);
	char what[64];

	if (s->storage.pages >= need)
		return true;
	if (s->workload.kind == PN_WL_TPCC)
		snprintf(what, sizeof what, "tpcc with %u warehouses", s->workload.warehouses);
	else
		snprintf(what, sizeof what, "pgbench at scale %u", s->workload.scale);
	return load_fail(
		L, load_mark_of(L, &s->storage.pages, &s->workload.kind),
		"storage.pages is %u; %s and %llu transactions needs %u pages (its tables, indexes and room to grow); expected storage.pages: %u or more",
		s->storage.pages, what, (unsigned long long)s->workload.transactions, need, need);
}

/* What the engine refuses at its start (src/engine/engine.c, src/wl_*.c), refused here at its key. */
bool load_validate_engine(struct loader *L)
{
	const struct pn_scenario *s = L->s;
	enum pn_workload_kind k = s->workload.kind;
	uint32_t buffers = (k == PN_WL_PGBENCH || k == PN_WL_TPCC) ? 2 * s->workload.clients + 2
								   : s->workload.clients + 2;
	uint64_t per = s->storage.page_size > 24 ? (s->storage.page_size - 24) / 36 : 1;

	if (s->storage.buffers < buffers)
		return load_fail(
			L, load_mark_of(L, &s->storage.buffers, &s->workload.clients),
			"storage.buffers (%u) is too few for %u clients%s; expected at least %u (%sworkload.clients + 2)",
			s->storage.buffers, s->workload.clients,
			buffers > s->workload.clients + 2 ? " of a pgbench or tpcc workload" : "",
			buffers, buffers > s->workload.clients + 2 ? "2 x " : "");
	if (k == PN_WL_TPCC && s->workload.transactions > 50000000)
		return load_fail(
			L, load_mark_of(L, &s->workload.transactions, &s->workload.kind),
			"workload.transactions is %llu; the tpcc model runs at most 50000000 transactions",
			(unsigned long long)s->workload.transactions);
	if (k == PN_WL_PGBENCH && s->workload.scale > UINT32_MAX / 100000)
		return load_fail(
			L, load_mark_of(L, &s->workload.scale, &s->workload.kind),
			"workload.scale is %u; the pgbench model has at most %u (100000 accounts each, counted in 32 bits)",
			s->workload.scale, UINT32_MAX / 100000);
	if (k == PN_WL_PGBENCH && s->workload.transactions > UINT32_MAX)
		return load_fail(
			L, load_mark_of(L, &s->workload.transactions, &s->workload.kind),
			"workload.transactions is %llu; the pgbench model runs at most %u transactions",
			(unsigned long long)s->workload.transactions, UINT32_MAX);
	if (k == PN_WL_VACUUM &&
	    (s->workload.rows == 0 || s->workload.rows / per >= UINT32_MAX / 2))
		return load_fail(
			L, load_mark_of(L, &s->workload.rows, &s->workload.kind),
			"workload.rows is %llu; the vacuum workload needs 1 to %llu rows at this page_size",
			(unsigned long long)s->workload.rows,
			(unsigned long long)((UINT32_MAX / 2 - 1) * per));
	return validate_btree(L) && validate_pages(L) && validate_memory(L);
}
