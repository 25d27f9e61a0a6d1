/*
 * load_schema.c: the scenario format as data (scenario layer; part of the loader, load.c):
 * one table of fields per mapping, as docs/scenarios.md describes them, and the document
 * read against the top table, the second pass of LD3 (load_yaml.c).
 */
#include "load_schema.h"
#include "load_sections.h"
#include "load_walk.h"
#include "load_workload.h"
#include "load_yaml.h"
#include "protocols.h"
#include "walfmt.h"
#include "workload.h"

/* ---- the schema ---- */

/* clang-format off */
#define POW2(k, m, lo, hi) {.key = k, .type = V_SIZE32, .off = OFF(m), .min = lo, .max = hi, .pow2 = true}
#define FLAG(k, m) {.key = k, .type = V_BOOL, .off = OFF(m)}
#define ENUM(k, m, n) {.key = k, .type = V_ENUM, .off = OFF(m), .names = n}
#define STR(k, m, lo) {.key = k, .type = V_STRING, .off = OFF(m), .min = lo, .max = sizeof(((struct pn_scenario *)0)->m)}
#define CUSTOM(k, m, fn) {.key = k, .type = V_CUSTOM, .off = OFF(m), .read = fn}
#define SECTION(k, t) {.key = k, .type = V_SECTION, .section = &t}
/* clang-format on */

static const struct field storage_fields[] = {
	NUM("pages", V_U32, storage.pages, 1, 16777216),
	POW2("page_size", storage.page_size, 1024, 32768),
	POW2("sector_size", storage.sector_size, 512, 32768),
	NUM("buffers", V_U32, storage.buffers, 2, 1048576),
	POW2("wal_segment_size", storage.wal_segment_size, 64u << 10, 1u << 30),
};
static const struct field protocol_fields[] = {
	CUSTOM("mode", protocol.mode, load_read_spelling),
	NUM("generations", V_U32, protocol.generations, 2, 8),
	ENUM("layout", protocol.layout, pn_layout_names),
	CUSTOM("policy", protocol.policy, load_read_spelling),
	FLAG("checksums", protocol.checksums),
	FLAG("wal_log_hints", protocol.wal_log_hints),
	FLAG("slru_headers", protocol.slru_headers),
	NUM("image_threshold", V_U32, protocol.image_threshold, 1, UINT32_MAX),
	CUSTOM("spare_slots", protocol.spare_slots, load_read_spare_slots),
	CUSTOM("mutations", protocol.mutations, load_read_mutations),
};
static const struct field checkpoint_fields[] = {
	NUM("interval", V_DURATION, checkpoint.interval_ns, 0, UINT64_MAX),
	NUM("every_transactions", V_U32, checkpoint.every_transactions, 0, UINT32_MAX),
	{.key = "completion_target", .type = V_FRACTION, .off = OFF(checkpoint.completion_target)},
	NUM("max_wal_size", V_SIZE64, checkpoint.max_wal_size, 0, UINT64_MAX),
	FLAG("overlap", checkpoint.overlap),
};
static const struct field aio_fields[] = {
	NUM("queue_depth", V_U32, aio.queue_depth, 1, 1024),
	FLAG("reorder", aio.reorder),
};
static const struct field workload_fields[] = {
	ENUM("kind", workload.kind, pn_workload_kind_names),
	NUM("clients", V_U32, workload.clients, 1, 1024),
	NUM("transactions", V_U64, workload.transactions, 0, 1000000000000ull),
	NUM("pages_per_transaction", V_U32, workload.pages_per_transaction, 1, PN_WAL_MAX_BLOCKS),
	NUM("scale", V_U32, workload.scale, 1, 100000),
	NUM("warehouses", V_U32, workload.warehouses, 1, 1000),
	NUM("rows", V_U64, workload.rows, 0, 1000000000000ull),
	NUM("inserts", V_U64, workload.inserts, 0, 1000000000000ull),
	NUM("distinct_keys", V_U32, workload.distinct_keys, 1, UINT32_MAX),
	CUSTOM("script", workload.script, load_read_script),
	STR("trace", workload.trace, 1),
};
static const struct field schedules_fields[] = {
	NUM("runs", V_U32, schedules.runs, 1, 100000),
	ENUM("strategy", schedules.strategy, pn_strategy_names),
	NUM("preemption_bound", V_U32, schedules.preemption_bound, 0, 8),
	NUM("depth", V_U32, schedules.depth, 1, 16),
	FLAG("reduce", schedules.reduce),
	FLAG("prune", schedules.prune),
	NUM("choice_width", V_U32, schedules.choice_width, 2, 16),
	NUM("budget", V_U32, schedules.budget, 1, 1000000),
};
static const struct field crash_fields[] = {
	CUSTOM("points", crash.points, load_read_points),
	NUM("max_unsynced", V_U32, crash.max_unsynced, 0, 64),
	ENUM("tear", crash.tear, pn_tear_names),
	NUM("samples", V_U32, crash.samples, 0, 1000000000),
	NUM("search_samples", V_U32, crash.search_samples, 0, 1000000000),
	POW2("atomic_unit", crash.atomic_unit, 512, 32768),
	NUM("torn_writes", V_U32, crash.torn_writes, 1, 2),
};
static const struct field expect_fields[] = {
	CUSTOM("verdict", expect.violation, load_read_verdict),
};
static const struct field replay_fields[] = {
	NUM("schedule", V_U32, replay.schedule, 0, UINT32_MAX),
	/* crash points are after an event: check never crashes before the first */
	NUM("crash_point", V_U64, replay.crash_point, 1, UINT64_MAX),
	STR("state", replay.state, 0), /* empty strings: validate_replay says what to write */
	NUM("recovery_crash_point", V_U64, replay.recovery_crash_point, 1, UINT64_MAX),
	STR("recovery_state", replay.recovery_state, 0),
	STR("choices", replay.choices, 0),
	STR("scenario_hash", replay.scenario_hash, 0),
};

static const struct table storage_table = TABLE(storage_fields);
static const struct table protocol_table = TABLE(protocol_fields);
static const struct table checkpoint_table = TABLE(checkpoint_fields);
static const struct table aio_table = TABLE(aio_fields);
static const struct table workload_table = TABLE(workload_fields);
static const struct table schedules_table = TABLE(schedules_fields);
static const struct table crash_table = {crash_fields, PN_ARRAY_LEN(crash_fields), true,
					 OFF(crash.present)};
static const struct table expect_table = TABLE(expect_fields);
static const struct table replay_table = {replay_fields, PN_ARRAY_LEN(replay_fields), true,
					  OFF(replay.present)};

static const struct field top_fields[] = {
	STR("name", name, 1),
	STR("description", description, 0),
	NUM("seed", V_U64, seed, 0, UINT64_MAX),
	ENUM("postgres", postgres, pn_pg_version_names),
	SECTION("storage", storage_table),
	SECTION("protocol", protocol_table),
	SECTION("checkpoint", checkpoint_table),
	SECTION("aio", aio_table),
	SECTION("workload", workload_table),
	SECTION("schedules", schedules_table),
	SECTION("crash", crash_table),
	SECTION("expect", expect_table),
	SECTION("replay", replay_table),
};
static const struct table top_table = TABLE(top_fields);

/* ---- the document ---- */

bool load_document(struct loader *L)
{
	struct seen seen;

	if (!load_next(L) || !load_next(L)) /* STREAM-START, then DOCUMENT-START or STREAM-END */
		return false;
	if (L->ev.type == YAML_STREAM_END_EVENT)
		return load_fail_at(
			L, 1, 1,
			"the file is empty (or only comments); expected a mapping with at least 'name'");
	if (!load_next(L))
		return false;
	L->top = L->ev.start_mark;
	if (load_is_null(L))
		return load_fail(L, L->top,
				 "the document is empty; expected a mapping with at least 'name'");
	if (L->ev.type != YAML_MAPPING_START_EVENT)
		return load_fail(
			L, L->top,
			"the top level is %s; expected a mapping of scenario keys (name, storage, protocol, ...)",
			load_found(L));
	if (!load_read_mapping(L, &top_table, L->s, "", &seen))
		return false;
	if (!load_next(L) || !load_next(L)) /* DOCUMENT-END, then STREAM-END */
		return false;
	if (L->ev.type != YAML_STREAM_END_EVENT)
		return load_fail(
			L, L->ev.start_mark,
			"a second YAML document starts here; expected one scenario per file");
	return true;
}
