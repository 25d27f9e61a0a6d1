/*
 * scenario.c: a scenario's defaults, its memory estimate and the names of its enumerations
 * (base layer; pure functions, no I/O, no state). The YAML loader that fills a struct
 * pn_scenario from a file is src/scenario/load.c, the scalar parsers it uses
 * src/scenario/parse.c; the format itself, with every key, default and range, is
 * docs/scenarios.md.
 */
#include "scenario.h"

#include <stdlib.h>
#include <string.h>

/* The name tables, each from its enum's one list (scenario.h), NULL-terminated. */
const char *const pn_mode_names[PN_MODE_COUNT + 1] = {PN_MODE_LIST(PN_ENUM_NAME) NULL};
const char *const pn_layout_names[PN_LAYOUT_COUNT + 1] = {PN_LAYOUT_LIST(PN_ENUM_NAME) NULL};
const char *const pn_policy_names[PN_POLICY_COUNT + 1] = {PN_POLICY_LIST(PN_ENUM_NAME) NULL};
const char *const pn_workload_kind_names[PN_WL_COUNT + 1] = {PN_WORKLOAD_KIND_LIST(PN_ENUM_NAME)
								     NULL};
const char *const pn_op_names[PN_OP_COUNT + 1] = {PN_SCRIPT_OP_LIST(PN_ENUM_NAME)
							  PN_GENERATED_OP_LIST(PN_ENUM_NAME) NULL};
const char *const pn_script_op_names[PN_OP_SCRIPT_COUNT + 1] = {PN_SCRIPT_OP_LIST(PN_ENUM_NAME)
									NULL};
const char *const pn_pg_version_names[PN_PG_VERSION_COUNT + 1] = {PN_PG_VERSION_LIST(PN_ENUM_NAME)
									  NULL};
const char *const pn_tear_names[PN_TEAR_COUNT + 1] = {PN_TEAR_LIST(PN_ENUM_NAME) NULL};
const char *const pn_strategy_names[PN_STRATEGY_COUNT + 1] = {PN_STRATEGY_LIST(PN_ENUM_NAME) NULL};
#define MUTATION_NAME_(e, name) [PN_MUT_BIT_##e] = name,
const char *const pn_mutation_names[PN_MUT_COUNT + 1] = {PN_MUTATION_LIST(MUTATION_NAME_) NULL};

/* Each table has one name per value and its NULL (a designated initializer past the
 * count would not compile; these catch a table declared too long). */
_Static_assert(PN_ARRAY_LEN(pn_mode_names) == PN_MODE_COUNT + 1, "pn_mode_names");
_Static_assert(PN_ARRAY_LEN(pn_op_names) == PN_OP_COUNT + 1, "pn_op_names");
_Static_assert(PN_OP_SCRIPT_COUNT == PN_OP_CHANGE, "script ops come first");
_Static_assert(PN_ARRAY_LEN(pn_mutation_names) == PN_MUT_COUNT + 1, "pn_mutation_names");

static const char *name_of(const char *const *names, size_t count, unsigned v)
{
	return v < count && names[v] ? names[v] : "?";
}

void pn_scenario_defaults(struct pn_scenario *s)
{
	memset(s, 0, sizeof *s);
	s->seed = 1;
	s->postgres = PN_PG15; /* Debian 12's packaged server (docs/scenarios.md) */
	s->storage.pages = 16;
	s->storage.page_size = 8192;
	s->storage.sector_size = 512;
	s->storage.buffers = 8;
	s->storage.wal_segment_size = 16u << 20;
	s->protocol.mode = PN_MODE_FPW;
	s->protocol.generations = 3;
	s->protocol.layout = PN_LAYOUT_INTERLEAVED;
	s->protocol.policy = PN_POLICY_PROTOTYPE;
	s->protocol.checksums = true; /* PostgreSQL 18 initializes clusters with checksums */
	s->protocol.image_threshold = 16;
	s->protocol.spare_slots = 100; /* policy pool: one spare a page (200%: never an image) */
	s->protocol.spare_percent = true;
	s->checkpoint.interval_ns = 5ull * 60 * 1000 * 1000 * 1000; /* checkpoint_timeout */
	s->checkpoint.completion_target = 0.9;
	s->checkpoint.max_wal_size = 1ull << 30;
	s->aio.queue_depth = 4;
	s->aio.reorder = true;
	s->workload.kind = PN_WL_RANDOM;
	s->workload.clients = 1;
	s->workload.transactions = 100;
	s->workload.pages_per_transaction = 2;
	s->workload.scale = 1;
	s->workload.warehouses = 1;
	s->workload.rows = 1000000;
	s->workload.inserts = 100000;
	s->workload.distinct_keys = 1000;
	s->schedules.runs = 1;
	s->schedules.depth = 3;
	s->schedules.reduce = true;
	s->schedules.choice_width = 3;
	s->crash.points = PN_POINTS_ALL;
	s->crash.max_unsynced = 6;
	s->crash.tear = PN_TEAR_SECTORS;
	s->crash.samples = 1000;
}

uint32_t pn_scenario_atomic_unit(const struct pn_scenario *s)
{
	PN_ASSERT(s->storage.sector_size >= 512);
	return PN_MAX(s->storage.sector_size, s->crash.atomic_unit);
}

uint32_t pn_scenario_torn_writes(const struct pn_scenario *s)
{
	return s->crash.torn_writes ? s->crash.torn_writes : 1;
}

/* Copies of each page on the simulated device: Umbra's slots; pushdown keeps the page
 * server's images beside the data file. */
static uint64_t page_copies(const struct pn_scenario *s)
{
	if (s->protocol.mode == PN_MODE_UMBRA)
		return s->protocol.generations;
	return s->protocol.mode == PN_MODE_PUSHDOWN ? 2 : 1;
}

uint64_t pn_scenario_page_bytes(const struct pn_scenario *s)
{
	return (uint64_t)s->storage.page_size * (page_copies(s) + (s->crash.present ? 3 : 0));
}

void pn_scenario_memory(const struct pn_scenario *s, struct pn_scenario_memory *m)
{
	/* the vacuum workload sizes its table by its rows (src/workload/wl_vacuum.c): 4 bytes of line
	 * pointer and 32 of tuple per row after the 24-byte page header */
	uint64_t per_page = s->storage.page_size > 24 ? (s->storage.page_size - 24) / 36 : 1;
	uint64_t work = s->workload.kind == PN_WL_SCRIPT ? s->workload.script_len
							 : s->workload.transactions;
	uint64_t pages = s->storage.pages;

	if (s->workload.kind == PN_WL_VACUUM)
		pages = s->workload.rows / PN_MAX(per_page, 1) + 2;
	memset(m, 0, sizeof *m);
	m->pages = pages;
	m->device = (pages + 2) * s->storage.page_size * page_copies(s);
	m->oracle = s->crash.present ? 3 * (pages + 2) * s->storage.page_size : 0;
	m->buffers = (uint64_t)s->storage.buffers * s->storage.page_size;
	m->logs = 20 * (work + 16);
	m->total = m->device + m->oracle + m->buffers + m->logs;
}

void pn_scenario_free(struct pn_scenario *s)
{
	free(s->workload.script);
	s->workload.script = NULL;
	s->workload.script_len = 0;
	free(s->crash.list);
	s->crash.list = NULL;
	s->crash.list_len = 0;
}

const char *pn_mutation_name(int i)
{
	if (i < 0 || i >= PN_MUT_COUNT)
		return NULL;
	return pn_mutation_names[i];
}

const char *pn_mode_name(enum pn_mode m) { return name_of(pn_mode_names, PN_MODE_COUNT, m); }
const char *pn_layout_name(enum pn_layout l)
{
	return name_of(pn_layout_names, PN_LAYOUT_COUNT, l);
}
const char *pn_policy_name(enum pn_policy p)
{
	return name_of(pn_policy_names, PN_POLICY_COUNT, p);
}
const char *pn_pg_version_name(enum pn_pg_version v)
{
	return name_of(pn_pg_version_names, PN_PG_VERSION_COUNT, v);
}
const char *pn_tear_name(enum pn_tear t) { return name_of(pn_tear_names, PN_TEAR_COUNT, t); }
const char *pn_strategy_name(enum pn_strategy s)
{
	return name_of(pn_strategy_names, PN_STRATEGY_COUNT, s);
}
const char *pn_op_name(enum pn_op op) { return name_of(pn_op_names, PN_OP_COUNT, op); }
const char *pn_workload_kind_name(enum pn_workload_kind k)
{
	return name_of(pn_workload_kind_names, PN_WL_COUNT, k);
}

bool pn_mode_parse(const char *s, enum pn_mode *out)
{
	for (unsigned i = 0; s && i < PN_MODE_COUNT; i++) {
		if (strcmp(s, pn_mode_names[i]) == 0) {
			*out = (enum pn_mode)i;
			return true;
		}
	}
	return false;
}
