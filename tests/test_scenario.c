/*
 * test_scenario.c: Check suite for the scenario loader (src/base/scenario.c,
 * src/scenario/load.c, src/scenario/parse.c; label unit). Covers the defaults, every key of docs/scenarios.md, the size, duration and
 * integer parsers, the names of modes and mutations, the error messages' form
 * "FILE:LINE:COL: what", the malformed corpus in tests/bad/ (each file's first line is
 * "# expect: <substring>"; found through $PN_SOURCE_DIR, which CTest sets), and a
 * deterministic sweep of truncated and corrupted inputs that must fail cleanly (CI runs it
 * under ASan+UBSan, so a leak or overflow fails it too).
 */
#include "load.h"
#include "parse.h"
#include "scenario.h"
#include "env.h"
#include "shrink.h"
#include "walfmt.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ERR_LEN 1024

static char err[ERR_LEN];

static bool load(const char *text, struct pn_scenario *s)
{
	return pn_scenario_load_string("t.yaml", text, strlen(text), s, err, sizeof err);
}

/* Loads text that must fail, and returns the message. */
static const char *load_bad(const char *text)
{
	struct pn_scenario s;

	ck_assert_msg(!load(text, &s), "loaded but should not have: %s", text);
	pn_scenario_free(&s);
	return err;
}

/* Does msg start with "NAME:LINE:COL: "? */
static bool has_location(const char *msg, const char *name)
{
	size_t n = strlen(name);
	const char *p = msg + n;

	if (strncmp(msg, name, n) != 0 || *p++ != ':')
		return false;
	for (int field = 0; field < 2; field++) {
		if (*p < '0' || *p > '9')
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p++ != ':')
			return false;
	}
	return *p == ' ' && !strchr(msg, '\n');
}

static const char full_example[] = "name: umbra-basic\n"
				   "description: one line\n"
				   "seed: 42\n"
				   "storage:\n"
				   "  pages: 16\n"
				   "  page_size: 8192\n"
				   "  sector_size: 512\n"
				   "  buffers: 8\n"
				   "  wal_segment_size: 1MiB\n"
				   "protocol:\n"
				   "  mode: umbra\n"
				   "  generations: 3\n"
				   "  layout: striped\n"
				   "  policy: prototype\n"
				   "  checksums: false\n"
				   "  wal_log_hints: true\n"
				   "  slru_headers: yes\n"
				   "  mutations: [shift_split, doublewrite_no_fsync]\n"
				   "checkpoint:\n"
				   "  interval: 200ms\n"
				   "  every_transactions: 50\n"
				   "  completion_target: 0.9\n"
				   "  max_wal_size: 64MiB\n"
				   "  overlap: false\n"
				   "aio:\n"
				   "  queue_depth: 4\n"
				   "  reorder: true\n"
				   "workload:\n"
				   "  kind: script\n"
				   "  clients: 2\n"
				   "  transactions: 100\n"
				   "  pages_per_transaction: 2\n"
				   "  scale: 10\n"
				   "  warehouses: 10\n"
				   "  rows: 1000000\n"
				   "  inserts: 100000\n"
				   "  distinct_keys: 1000\n"
				   "  script:\n"
				   "    - {op: update, page: 3}\n"
				   "    - {op: commit}\n"
				   "    - {op: checkpoint}\n"
				   "    - {op: checkpoint_begin}\n"
				   "    - {op: update, page: 3}\n"
				   "    - {op: evict, page: 3}\n"
				   "    - {op: checkpoint_end}\n"
				   "    - {op: hint, page: 5}\n"
				   "    - {op: vacuum, page: 5}\n"
				   "    - {op: dedup, page: 6}\n"
				   "    - {op: slru_set, xid: 17}\n"
				   "    - op: abort\n"
				   "      client: 1\n"
				   "schedules:\n"
				   "  runs: 3\n"
				   "  preemption_bound: 0\n"
				   "crash:\n"
				   "  points: all\n"
				   "  max_unsynced: 6\n"
				   "  tear: sectors\n"
				   "  samples: 1000\n"
				   "expect:\n"
				   "  verdict: violation\n"
				   "replay:\n"
				   "  schedule: 2\n"
				   "  crash_point: 1234\n"
				   "  state: \"kept 1,3; torn 2@sector 4\"\n";

START_TEST(test_defaults)
{
	struct pn_scenario s;

	ck_assert(load("name: minimal\n", &s));
	ck_assert_str_eq(s.name, "minimal");
	ck_assert_str_eq(s.description, "");
	ck_assert_str_eq(s.path, "t.yaml");
	ck_assert_uint_eq(s.seed, 1);
	ck_assert_uint_eq(s.storage.pages, 16);
	ck_assert_uint_eq(s.storage.page_size, 8192);
	ck_assert_uint_eq(s.storage.sector_size, 512);
	ck_assert_uint_eq(s.storage.buffers, 8);
	ck_assert_uint_eq(s.storage.wal_segment_size, 16u << 20);
	ck_assert_int_eq(s.protocol.mode, PN_MODE_FPW);
	ck_assert_uint_eq(s.protocol.generations, 3);
	ck_assert_int_eq(s.protocol.layout, PN_LAYOUT_INTERLEAVED);
	ck_assert_int_eq(s.protocol.policy, PN_POLICY_PROTOTYPE);
	ck_assert(s.protocol.checksums && !s.protocol.wal_log_hints && !s.protocol.slru_headers);
	ck_assert_uint_eq(s.protocol.image_threshold, 16);
	ck_assert_uint_eq(s.protocol.mutations, 0);
	ck_assert_uint_eq(s.checkpoint.interval_ns, 300ull * 1000000000ull);
	ck_assert_uint_eq(s.checkpoint.every_transactions, 0);
	ck_assert_double_eq(s.checkpoint.completion_target, 0.9);
	ck_assert_uint_eq(s.checkpoint.max_wal_size, 1ull << 30);
	ck_assert(!s.checkpoint.overlap);
	ck_assert_uint_eq(s.aio.queue_depth, 4);
	ck_assert(s.aio.reorder);
	ck_assert_int_eq(s.workload.kind, PN_WL_RANDOM);
	ck_assert_uint_eq(s.workload.clients, 1);
	ck_assert_uint_eq(s.workload.transactions, 100);
	ck_assert_uint_eq(s.workload.pages_per_transaction, 2);
	ck_assert_uint_eq(s.workload.scale, 1);
	ck_assert_uint_eq(s.workload.warehouses, 1);
	ck_assert_uint_eq(s.workload.rows, 1000000);
	ck_assert_uint_eq(s.workload.inserts, 100000);
	ck_assert_uint_eq(s.workload.distinct_keys, 1000);
	ck_assert_ptr_null(s.workload.script);
	ck_assert_uint_eq(s.schedules.runs, 1);
	ck_assert_uint_eq(s.schedules.preemption_bound, 0);
	ck_assert(!s.crash.present);
	ck_assert(!s.expect.violation);
	ck_assert(!s.replay.present);
	pn_scenario_free(&s);
}
END_TEST

START_TEST(test_crash_defaults)
{
	struct pn_scenario s;

	ck_assert(load("name: c\ncrash:\n", &s));
	ck_assert(s.crash.present);
	ck_assert_int_eq(s.crash.points, PN_POINTS_ALL);
	ck_assert_uint_eq(s.crash.max_unsynced, 6);
	ck_assert_int_eq(s.crash.tear, PN_TEAR_SECTORS);
	ck_assert_uint_eq(s.crash.samples, 1000);
	pn_scenario_free(&s);
	ck_assert(load("name: c\ncrash: {}\nstorage: ~\n", &s));
	ck_assert(s.crash.present);
	ck_assert_uint_eq(s.storage.pages, 16);
	pn_scenario_free(&s);
}
END_TEST

START_TEST(test_full_example)
{
	struct pn_scenario s;
	const struct pn_step *st;

	ck_assert_msg(load(full_example, &s), "%s", err);
	ck_assert_str_eq(s.name, "umbra-basic");
	ck_assert_str_eq(s.description, "one line");
	ck_assert_uint_eq(s.seed, 42);
	ck_assert_uint_eq(s.storage.wal_segment_size, 1u << 20);
	ck_assert_int_eq(s.protocol.mode, PN_MODE_UMBRA);
	ck_assert_int_eq(s.protocol.layout, PN_LAYOUT_STRIPED);
	ck_assert_int_eq(s.protocol.policy, PN_POLICY_PROTOTYPE);
	ck_assert(!s.protocol.checksums && s.protocol.wal_log_hints && s.protocol.slru_headers);
	ck_assert_uint_eq(s.protocol.mutations, PN_MUT_SHIFT_SPLIT | PN_MUT_DOUBLEWRITE_NO_FSYNC);
	ck_assert_uint_eq(s.checkpoint.interval_ns, 200ull * 1000000);
	ck_assert_uint_eq(s.checkpoint.every_transactions, 50);
	ck_assert_uint_eq(s.checkpoint.max_wal_size, 64ull << 20);
	ck_assert_int_eq(s.workload.kind, PN_WL_SCRIPT);
	ck_assert_uint_eq(s.workload.clients, 2);
	ck_assert_uint_eq(s.workload.scale, 10);
	ck_assert_uint_eq(s.workload.warehouses, 10);
	ck_assert_uint_eq(s.workload.script_len, 12);
	st = s.workload.script;
	ck_assert(st[0].op == PN_OP_UPDATE && st[0].page == 3 && st[0].client == 0);
	ck_assert_int_eq(st[0].line, 39);
	ck_assert_int_eq(st[0].column, 7);
	ck_assert(st[1].op == PN_OP_COMMIT && st[2].op == PN_OP_CHECKPOINT);
	ck_assert(st[3].op == PN_OP_CHECKPOINT_BEGIN && st[6].op == PN_OP_CHECKPOINT_END);
	ck_assert(st[5].op == PN_OP_EVICT && st[7].op == PN_OP_HINT && st[8].op == PN_OP_VACUUM);
	ck_assert(st[9].op == PN_OP_DEDUP && st[9].page == 6);
	ck_assert(st[10].op == PN_OP_SLRU_SET && st[10].xid == 17);
	ck_assert(st[11].op == PN_OP_ABORT && st[11].client == 1);
	ck_assert_int_eq(st[11].line, 50);
	ck_assert_uint_eq(s.schedules.runs, 3);
	ck_assert(s.crash.present);
	ck_assert_int_eq(s.crash.tear, PN_TEAR_SECTORS);
	ck_assert(s.expect.violation);
	ck_assert(s.replay.present);
	ck_assert_uint_eq(s.replay.schedule, 2);
	ck_assert_uint_eq(s.replay.crash_point, 1234);
	ck_assert_str_eq(s.replay.state, "kept 1,3; torn 2@sector 4");
	pn_scenario_free(&s);
	pn_scenario_free(&s); /* idempotent */
}
END_TEST

START_TEST(test_parse_size)
{
	static const struct {
		const char *text;
		uint64_t bytes;
		enum pn_parse_status status;
	} cases[] = {
		{"8192", 8192, PN_PARSE_OK},
		{"0", 0, PN_PARSE_OK},
		{"8kB", 8192, PN_PARSE_OK},
		{"8KiB", 8192, PN_PARSE_OK},
		{"64MiB", 64ull << 20, PN_PARSE_OK},
		{"64MB", 64ull << 20, PN_PARSE_OK},
		{"1GB", 1ull << 30, PN_PARSE_OK},
		{"1GiB", 1ull << 30, PN_PARSE_OK},
		{"2TB", 2ull << 40, PN_PARSE_OK},
		{"512B", 512, PN_PARSE_OK},
		{"16 MiB", 16ull << 20, PN_PARSE_OK},
		{"18446744073709551615", UINT64_MAX, PN_PARSE_OK},
		{"", 0, PN_PARSE_EMPTY},
		{"-1", 0, PN_PARSE_NEGATIVE},
		{"+1", 0, PN_PARSE_SIGN},
		{"1.5GiB", 0, PN_PARSE_FRACTION},
		{".5", 0, PN_PARSE_FRACTION},
		{"64MB3", 0, PN_PARSE_BAD_UNIT},
		{"8kb", 0, PN_PARSE_BAD_UNIT},
		{"8 k B", 0, PN_PARSE_BAD_UNIT},
		{"8B ", 0, PN_PARSE_BAD_UNIT},
		{"MiB", 0, PN_PARSE_SYNTAX},
		{" 8", 0, PN_PARSE_SYNTAX},
		{"18446744073709551616", 0, PN_PARSE_OVERFLOW},
		{"16777216TiB", 0, PN_PARSE_OVERFLOW},
	};
	uint64_t v;

	for (size_t i = 0; i < PN_ARRAY_LEN(cases); i++) {
		v = 7;
		ck_assert_msg(pn_parse_size_status(cases[i].text, &v) == cases[i].status, "'%s'",
			      cases[i].text);
		ck_assert(pn_parse_size(cases[i].text, &v) == (cases[i].status == PN_PARSE_OK));
		if (cases[i].status == PN_PARSE_OK)
			ck_assert_msg(v == cases[i].bytes, "'%s' gave %llu", cases[i].text,
				      (unsigned long long)v);
	}
	ck_assert(!pn_parse_size(NULL, &v));
}
END_TEST

START_TEST(test_parse_duration)
{
	static const struct {
		const char *text;
		uint64_t ns;
		enum pn_parse_status status;
	} cases[] = {
		{"250ms", 250000000ull, PN_PARSE_OK},
		{"4min", 240000000000ull, PN_PARSE_OK},
		{"30s", 30000000000ull, PN_PARSE_OK},
		{"1h", 3600000000000ull, PN_PARSE_OK},
		{"2d", 172800000000000ull, PN_PARSE_OK},
		{"15us", 15000, PN_PARSE_OK},
		{"0s", 0, PN_PARSE_OK},
		{"10 s", 10000000000ull, PN_PARSE_OK},
		{"10", 0, PN_PARSE_NO_UNIT},
		{"fast", 0, PN_PARSE_SYNTAX},
		{"5m", 0, PN_PARSE_BAD_UNIT},
		{"5ns", 0, PN_PARSE_BAD_UNIT},
		{"1.5s", 0, PN_PARSE_FRACTION},
		{"-1s", 0, PN_PARSE_NEGATIVE},
		{"", 0, PN_PARSE_EMPTY},
		{"213504d", 0, PN_PARSE_OVERFLOW},
	};
	uint64_t v;

	for (size_t i = 0; i < PN_ARRAY_LEN(cases); i++) {
		ck_assert_msg(pn_parse_duration_status(cases[i].text, &v) == cases[i].status,
			      "'%s'", cases[i].text);
		ck_assert(pn_parse_duration(cases[i].text, &v) == (cases[i].status == PN_PARSE_OK));
		if (cases[i].status == PN_PARSE_OK)
			ck_assert_uint_eq(v, cases[i].ns);
	}
}
END_TEST

START_TEST(test_parse_uint)
{
	uint64_t v = 0;

	ck_assert_int_eq(pn_parse_uint("0", &v), PN_PARSE_OK);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(pn_parse_uint("18446744073709551615", &v), PN_PARSE_OK);
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert_int_eq(pn_parse_uint("18446744073709551616", &v), PN_PARSE_OVERFLOW);
	ck_assert_int_eq(pn_parse_uint("99999999999999999999999", &v), PN_PARSE_OVERFLOW);
	ck_assert_int_eq(pn_parse_uint("-0", &v), PN_PARSE_NEGATIVE);
	ck_assert_int_eq(pn_parse_uint("+7", &v), PN_PARSE_SIGN);
	ck_assert_int_eq(pn_parse_uint("1.0", &v), PN_PARSE_FRACTION);
	ck_assert_int_eq(pn_parse_uint("1.", &v), PN_PARSE_FRACTION);
	ck_assert_int_eq(pn_parse_uint("0x10", &v), PN_PARSE_SYNTAX);
	ck_assert_int_eq(pn_parse_uint("1e3", &v), PN_PARSE_SYNTAX);
	ck_assert_int_eq(pn_parse_uint("12 ", &v), PN_PARSE_SYNTAX);
	ck_assert_int_eq(pn_parse_uint("", &v), PN_PARSE_EMPTY);
	ck_assert_int_eq(pn_parse_uint(NULL, &v), PN_PARSE_EMPTY);
}
END_TEST

START_TEST(test_names)
{
	static const char *const modes[] = {"fpw", "nofpw", "umbra", "doublewrite", "pushdown"};
	static const char *const mutations[PN_MUT_COUNT] = {
		"fpw_off",
		"no_wal_before_data",
		"ack_before_flush",
		"shift_split",
		"ckpt_active_only",
		"aio_late_bind",
		"early_reclaim",
		"selector_unsynced",
		"hint_no_fpi",
		"dedup_no_image",
		"slru_header_unprotected",
		"doublewrite_no_fsync",
		"no_delay_chkpt",
		"pushdown_image_unsynced",
		"pushdown_horizon_early",
		"pushdown_ingest_unflushed",
		"pool_early_return",
		"pool_no_fallback",
		"pool_map_unsynced",
		"truncate_reset_no_wal",
		"gen2_no_fallback",
		"gen2_early_reuse",
		"gen2_no_image",
		"remap_early_reclaim",
		"remap_map_before_wal",
		"remap_map_torn",
		"remap_next_free_unlogged",
		"remap_compact_unsafe",
		"remap_meta_concurrent",
	};
	char text[1024];
	struct pn_scenario s;
	enum pn_mode m;

	for (int i = 0; i < (int)PN_ARRAY_LEN(modes); i++) {
		ck_assert_str_eq(pn_mode_name((enum pn_mode)i), modes[i]);
		ck_assert(pn_mode_parse(modes[i], &m) && m == (enum pn_mode)i);
		snprintf(text, sizeof text, "name: m\nprotocol: {mode: %s}\n", modes[i]);
		ck_assert(load(text, &s) && s.protocol.mode == (enum pn_mode)i);
		pn_scenario_free(&s);
	}
	ck_assert(!pn_mode_parse("FPW", &m) && !pn_mode_parse("", &m) && !pn_mode_parse(NULL, &m));
	strcpy(text, "name: m\nprotocol:\n  mutations:\n");
	for (int i = 0; i < PN_MUT_COUNT; i++) {
		ck_assert_str_eq(pn_mutation_name(i), mutations[i]);
		strcat(text, "    - ");
		strcat(text, mutations[i]);
		strcat(text, "\n");
	}
	ck_assert_ptr_null(pn_mutation_name(PN_MUT_COUNT));
	ck_assert_ptr_null(pn_mutation_name(-1));
	ck_assert(load(text, &s));
	ck_assert_uint_eq(s.protocol.mutations, (1u << PN_MUT_COUNT) - 1);
	ck_assert_uint_eq(PN_MUT_REMAP_META_CONCURRENT, 1u << (PN_MUT_COUNT - 1));
	pn_scenario_free(&s);
	/* protocol.spare_slots: a count or a percentage up to 200% */
	ck_assert(load("name: m\nprotocol: {mode: umbra, policy: pool, spare_slots: 35%}\n", &s));
	ck_assert(s.protocol.policy == PN_POLICY_POOL && s.protocol.spare_slots == 35 &&
		  s.protocol.spare_percent);
	pn_scenario_free(&s);
	ck_assert(load("name: m\nprotocol: {mode: umbra, policy: pool, spare_slots: 7}\n", &s));
	ck_assert(s.protocol.spare_slots == 7 && !s.protocol.spare_percent);
	pn_scenario_free(&s);
	static const char *const bad_spares[] = {"201%", "'%'", "x5"};
	for (unsigned i = 0; i < PN_ARRAY_LEN(bad_spares); i++) {
		snprintf(text, sizeof text, "name: m\nprotocol: {spare_slots: %s}\n",
			 bad_spares[i]);
		ck_assert_ptr_nonnull(strstr(load_bad(text), "spare_slots"));
	}
}
END_TEST

/* Every name table comes from its enum's one list: one distinct name per value, NULL
 * after the last, the loader taking each name back to its value. */
static void check_table(const char *const *names, unsigned count, const char *fmt)
{
	char text[256];
	struct pn_scenario s;

	for (unsigned i = 0; i < count; i++) {
		ck_assert_ptr_nonnull(names[i]);
		ck_assert(names[i][0] != '\0' && strcmp(names[i], "(null)") != 0);
		for (unsigned j = 0; j < i; j++)
			ck_assert_str_ne(names[i], names[j]);
		if (!fmt)
			continue;
		snprintf(text, sizeof text, fmt, names[i]);
		ck_assert_msg(load(text, &s), "%s", err);
		pn_scenario_free(&s);
	}
	ck_assert_ptr_null(names[count]);
}

START_TEST(test_name_tables)
{
	struct pn_scenario s;

	check_table(pn_mode_names, PN_MODE_COUNT, "name: m\nprotocol: {mode: %s}\n");
	check_table(pn_layout_names, PN_LAYOUT_COUNT,
		    "name: m\nprotocol: {mode: umbra, layout: %s}\n");
	check_table(pn_policy_names, PN_POLICY_COUNT, NULL);
	check_table(pn_tear_names, PN_TEAR_COUNT, "name: m\ncrash: {tear: %s}\n");
	check_table(pn_workload_kind_names, PN_WL_COUNT, NULL);
	check_table(pn_op_names, PN_OP_COUNT, NULL);
	check_table(pn_script_op_names, PN_OP_SCRIPT_COUNT, NULL);
	check_table(pn_mutation_names, PN_MUT_COUNT, "name: m\nprotocol: {mutations: [%s]}\n");
	for (unsigned i = 0; i < PN_OP_SCRIPT_COUNT; i++)
		ck_assert_str_eq(pn_op_name((enum pn_op)i), pn_script_op_names[i]);
	ck_assert_str_eq(pn_op_name(PN_OP_BT_SPLIT), "bt_split");
	ck_assert_str_eq(pn_op_name(PN_OP_COUNT), "?");
	ck_assert_str_eq(pn_mode_name(PN_MODE_COUNT), "?");
	ck_assert_str_eq(pn_policy_name(PN_POLICY_L4), "l4");
	ck_assert_str_eq(pn_tear_name(PN_TEAR_HALVES), "halves");
	for (int f = 0; f < PN_FILE_COUNT; f++) {
		ck_assert_str_ne(pn_file_name((enum pn_file)f), "?");
		ck_assert_str_ne(pn_file_disk_name((enum pn_file)f), "?");
	}
	ck_assert_str_eq(pn_file_disk_name(PN_FILE_PAGESERVER), "pageserver");
	ck_assert_str_eq(pn_file_disk_name(PN_FILE_COUNT), "?");
	/* a generated op is not a script step */
	load_bad("name: m\nworkload: {kind: script, script: [{op: change}]}\n");
	ck_assert(strstr(err, "unknown workload.script[0].op 'change'") != NULL);
	ck_assert(load("name: m\nprotocol: {mode: umbra, policy: l4}\n", &s));
	ck_assert_int_eq(s.protocol.policy, PN_POLICY_L4);
	pn_scenario_free(&s);
}
END_TEST

/* Issue 10, items 17, 19, 25: limits of the engine, preemption_bound, positions. */
START_TEST(test_limits_and_positions)
{
	struct pn_scenario s;
	struct pn_scenario_memory m;

	setenv("PENUMBRA_MEMORY_LIMIT", "8GiB", 1);
	load_bad("name: t\nstorage: {pages: 16777216}\ncrash: {}\n");
	ck_assert_msg(
		strstr(err,
		       "t.yaml:2:18: storage.pages is 16777216: a simulated run needs at least 512.0GiB") ==
			err,
		"%s", err);
	ck_assert_ptr_nonnull(strstr(err, "limit of 8.0GiB (PENUMBRA_MEMORY_LIMIT)"));
	load_bad("name: t\nworkload: {transactions: 1000000000000}\n");
	ck_assert_msg(strstr(err, "t.yaml:2:26: workload.transactions is 1000000000000") == err,
		      "%s", err);
	/* what the loader sizes */
	ck_assert(load(
		"name: t\nstorage: {pages: 1000, buffers: 100}\nprotocol: {mode: umbra, generations: 3}\ncrash: {}\n",
		&s));
	pn_scenario_memory(&s, &m);
	ck_assert_uint_eq(m.device, 1002ull * 8192 * 3);
	ck_assert_uint_eq(m.oracle, 3ull * 1002 * 8192);
	ck_assert_uint_eq(m.buffers, 100ull * 8192);
	ck_assert_uint_eq(m.total, m.device + m.oracle + m.buffers + m.logs);
	pn_scenario_free(&s);
	setenv("PENUMBRA_MEMORY_LIMIT", "lots", 1);
	load_bad("name: t\n");
	ck_assert_str_eq(
		err,
		"t.yaml:1:1: the environment variable PENUMBRA_MEMORY_LIMIT is 'lots'; expected a size like 16GiB");
	unsetenv("PENUMBRA_MEMORY_LIMIT");
	load_bad("name: t\nworkload: {kind: tpcc, warehouses: 1001}\n");
	ck_assert_ptr_nonnull(strstr(err, "expected an integer from 1 to 1000"));
	/* a preemption bound asks for the bounded search; with another strategy it is refused */
	ck_assert(load("name: t\nschedules: {preemption_bound: 0}\n", &s));
	ck_assert_int_eq(s.schedules.strategy, PN_STRATEGY_SEEDED);
	pn_scenario_free(&s);
	ck_assert(load("name: t\nschedules: {preemption_bound: 2}\n", &s));
	ck_assert_int_eq(s.schedules.strategy, PN_STRATEGY_BOUNDED);
	ck_assert_uint_eq(s.schedules.preemption_bound, 2);
	ck_assert(s.schedules.reduce);
	pn_scenario_free(&s);
	load_bad("name: t\nschedules: {strategy: seeded, preemption_bound: 1}\n");
	ck_assert_msg(strstr(err,
			     "t.yaml:2:49: schedules.preemption_bound is 1 with strategy seeded") ==
			      err,
		      "%s", err);
	/* U+0085, U+2028, U+2029 do not end lines in positions; a lone CR and CRLF do */
	load_bad("name: t\ndescription: \"a\xC2\x85"
		 "b\xE2\x80\xA8"
		 "c\xE2\x80\xA9"
		 "d\"\nseed: -1\n");
	ck_assert_msg(strncmp(err, "t.yaml:3:7: ", 12) == 0, "%s", err);
	load_bad("name: t\r\ndescription: x\rseed: -1\r\n");
	ck_assert_msg(strncmp(err, "t.yaml:3:7: ", 12) == 0, "%s", err);
	load_bad("name: t\nreplay: {state: \"\xC3\xA9\xC3\xA9\", crash_point: -1}\n");
	ck_assert_msg(strncmp(err, "t.yaml:2:36: ", 13) == 0, "%s", err);
	/* duplicate keys: both positions editor positions */
	load_bad("name: t\ndescription: \"\xC2\x85\"\nseed: 1\nseed: 2\n");
	ck_assert_msg(strstr(err,
			     "t.yaml:4:1: duplicate key 'seed' at the top level (first at 3:1)") ==
			      err,
		      "%s", err);
	/* a step's position, kept for later messages */
	load_bad(
		"name: t\ndescription: \"\xC2\x85\"\nworkload:\n  kind: script\n  script:\n    - {op: update, page: 99}\n");
	ck_assert_msg(strncmp(err, "t.yaml:6:7: ", 12) == 0, "%s", err);
	/* a BOM: skipped at the start, refused in mid-file with what it is */
	ck_assert(load("\xEF\xBB\xBFname: t\n", &s));
	pn_scenario_free(&s);
	load_bad("name: t\n\xEF\xBB\xBFseed: 1\n");
	ck_assert_str_eq(
		err,
		"t.yaml:2:1: a byte-order mark (U+FEFF) in mid-file (two files joined?); expected one only at the very start of the file, or none");
	load_bad("\xFF\xFEn\0a\0");
	ck_assert_ptr_nonnull(strstr(err, "t.yaml:1:1: the file looks like UTF-16 or UTF-32"));
}
END_TEST

/* The trace writer's text loads back as the same scenario, whatever the loader took (the
 * fuzz_scenario harness's F2; these inputs once gave traces that did not load). */
START_TEST(test_writer_round_trip)
{
	static const char *const texts[] = {
		"name: 'a: b'\n",
		"name: '#x'\ndescription: \"tab\\there, \\\"quoted\\\"\"\n",
		"name: t\ncheckpoint: {completion_target: 0.00001}\n",
		"name: t\ncheckpoint: {completion_target: 0.33333333333333333333333333333}\n",
		"name: '- x'\ncheckpoint: {completion_target: 0.00000000000000000000000000001}\n",
		/* YAML's escapes of NEL, LS, PS: written raw, NEL loaded back as a folded space */
		"name: \"x\\N\"\ndescription: \"a\\Nb\\Lc\\Pd\"\n",
		"name: t\ncrash: {tear: sectors, atomic_unit: 4KiB}\n",
	};
	for (size_t i = 0; i < PN_ARRAY_LEN(texts); i++) {
		struct pn_scenario s, again;
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		ck_assert_msg(load(texts[i], &s), "%s", err);
		pn_scenario_write(f, &s);
		fclose(f);
		ck_assert_msg(pn_scenario_load_string("w.yaml", text, len, &again, err, sizeof err),
			      "%s\n%s", err, text);
		ck_assert_str_eq(again.name, s.name);
		ck_assert_str_eq(again.description, s.description);
		ck_assert(again.checkpoint.completion_target == s.checkpoint.completion_target);
		ck_assert_uint_eq(again.crash.atomic_unit, s.crash.atomic_unit);
		free(text);
		pn_scenario_free(&again);
		pn_scenario_free(&s);
	}
}
END_TEST

START_TEST(test_values)
{
	struct pn_scenario s;

	ck_assert(load("name: v\nprotocol: {checksums: off, wal_log_hints: On, slru_headers: YES}\n"
		       "aio: {reorder: no}\ncheckpoint: {overlap: True, completion_target: 1,"
		       " interval: 0s, max_wal_size: 0}\ndescription: |\n  folded\n",
		       &s));
	ck_assert(!s.protocol.checksums && s.protocol.wal_log_hints && s.protocol.slru_headers);
	ck_assert(!s.aio.reorder && s.checkpoint.overlap);
	ck_assert_double_eq(s.checkpoint.completion_target, 1.0);
	ck_assert_uint_eq(s.checkpoint.interval_ns, 0);
	ck_assert_uint_eq(s.checkpoint.max_wal_size, 0);
	ck_assert_str_eq(s.description, "folded");
	pn_scenario_free(&s);
	/* edges of the ranges, and sizes written with units (with a memory limit that lets
	 * the largest through: the loader also sizes what the run needs) */
	setenv("PENUMBRA_MEMORY_LIMIT", "16000000TiB", 1);
	ck_assert_msg(
		load("name: e\nstorage: {pages: 16777216, page_size: 32kB, sector_size: 32KiB,"
		     " buffers: 1048576, wal_segment_size: 64kB}\n"
		     "protocol: {mode: umbra, generations: 8}\n"
		     "workload: {pages_per_transaction: 4, transactions: 1000000000000, clients: 1024}\n"
		     "schedules: {runs: 100000}\ncrash: {max_unsynced: 64, samples: 1000000000}\n"
		     "checkpoint: {completion_target: .5, max_wal_size: 128kB}\n",
		     &s),
		"%s", err);
	ck_assert_uint_eq(s.storage.page_size, 32768);
	ck_assert_uint_eq(s.storage.sector_size, 32768);
	ck_assert_uint_eq(s.storage.wal_segment_size, 65536);
	ck_assert_double_eq(s.checkpoint.completion_target, 0.5);
	pn_scenario_free(&s);
	unsetenv("PENUMBRA_MEMORY_LIMIT");
	ck_assert(load("name: '42'\nseed: 0\n", &s));
	ck_assert_str_eq(s.name, "42");
	ck_assert_uint_eq(s.seed, 0);
	pn_scenario_free(&s);
	ck_assert(load(
		"name: \"quoted sizes\"\nstorage: {page_size: \"4kB\"}\ncheckpoint: {interval: '1h'}\n",
		&s));
	ck_assert_uint_eq(s.storage.page_size, 4096);
	pn_scenario_free(&s);
}
END_TEST

START_TEST(test_points)
{
	struct pn_scenario s;

	ck_assert(load("name: p\ncrash: {points: {every: 7}}\n", &s));
	ck_assert_int_eq(s.crash.points, PN_POINTS_EVERY);
	ck_assert_uint_eq(s.crash.every, 7);
	pn_scenario_free(&s);
	ck_assert(load("name: p\ncrash:\n  points: [30, 4, 0, 30, 18446744073709551615, 4]\n", &s));
	ck_assert_int_eq(s.crash.points, PN_POINTS_LIST);
	ck_assert_uint_eq(s.crash.list_len, 4);
	ck_assert_uint_eq(s.crash.list[0], 0);
	ck_assert_uint_eq(s.crash.list[1], 4);
	ck_assert_uint_eq(s.crash.list[2], 30);
	ck_assert_uint_eq(s.crash.list[3], UINT64_MAX);
	pn_scenario_free(&s);
	ck_assert_ptr_null(s.crash.list);
	ck_assert(load("name: p\ncrash: {points: all}\n", &s));
	ck_assert_int_eq(s.crash.points, PN_POINTS_ALL);
	pn_scenario_free(&s);
}
END_TEST

START_TEST(test_script_checked_after_document)
{
	struct pn_scenario s;
	const char *msg;

	/* storage and clients after the script: ranges are checked against the final values */
	ck_assert(load(
		"name: s\nworkload:\n  kind: script\n  script:\n    - {op: update, page: 30, client: 2}\n"
		"  clients: 3\nstorage:\n  pages: 31\n",
		&s));
	ck_assert_uint_eq(s.workload.script[0].page, 30);
	pn_scenario_free(&s);
	msg = load_bad("name: s\nworkload:\n  kind: script\n  script:\n    - {op: commit}\n"
		       "    - {op: update, page: 30}\nstorage:\n  pages: 30\n");
	ck_assert_str_eq(msg,
			 "t.yaml:6:7: workload.script[1].page is 30, out of range; expected a page "
			 "below storage.pages (30)");
	msg = load_bad(
		"name: s\nworkload:\n  kind: script\n  script:\n    - op: commit\n      client: 1\n");
	ck_assert_str_eq(msg,
			 "t.yaml:5:7: workload.script[0].client is 1, out of range; expected a "
			 "client below workload.clients (1)");
}
END_TEST

START_TEST(test_messages)
{
	const char *msg;

	msg = load_bad("name: x\nstorage:\n  pagez: 4\n");
	ck_assert_str_eq(msg, "t.yaml:3:3: unknown key 'pagez' in storage (did you mean 'pages'?)");
	msg = load_bad("name: x\nprotocol:\n  mode: umbre\n");
	ck_assert_str_eq(msg, "t.yaml:3:9: unknown protocol.mode 'umbre' (did you mean 'umbra'?); "
			      "expected one of fpw, nofpw, umbra, doublewrite, pushdown");
	msg = load_bad("");
	ck_assert_str_eq(msg,
			 "t.yaml:1:1: the file is empty (or only comments); expected a mapping "
			 "with at least 'name'");
	msg = load_bad("name: x\ncheckpoint: {interval: 10}\n");
	ck_assert_ptr_nonnull(strstr(msg, "expected a duration like 250ms or 4min"));
	msg = load_bad("name: x\nstorage:\n  pages: 4\n  pages: 4\n");
	ck_assert_str_eq(msg,
			 "t.yaml:4:3: duplicate key 'pages' in storage (first at 3:3); expected "
			 "each key once");
	/* a long unknown key is cut, and control characters in it do not reach the message */
	msg = load_bad(
		"name: x\n\"bad\\tkey\\nwith a very long name that goes on and on and on and on and on\": 1\n");
	ck_assert(has_location(msg, "t.yaml"));
	ck_assert_ptr_nonnull(strstr(msg, "unknown key 'bad?key?with"));
	ck_assert_ptr_nonnull(strstr(msg, "...'"));
}
END_TEST

START_TEST(test_files)
{
	char path[] = "/tmp/pn_test_scenario_XXXXXX";
	struct pn_scenario s;
	int fd = mkstemp(path);
	const char *text = "name: from-file\nstorage: {pages: 9}\n";

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_msg(pn_scenario_load(path, &s, err, sizeof err), "%s", err);
	ck_assert_str_eq(s.name, "from-file");
	ck_assert_str_eq(s.path, path);
	ck_assert_uint_eq(s.storage.pages, 9);
	pn_scenario_free(&s);
	/* larger than 16 MiB: refused before reading (a sparse file) */
	ck_assert_int_eq(ftruncate(fd, (16 << 20) + 1), 0);
	ck_assert(!pn_scenario_load(path, &s, err, sizeof err));
	ck_assert(has_location(err, path));
	ck_assert_ptr_nonnull(strstr(err, "larger than 16 MiB"));
	close(fd);
	unlink(path);
	ck_assert(!pn_scenario_load("/nonexistent/x.yaml", &s, err, sizeof err));
	ck_assert_str_eq(err, "/nonexistent/x.yaml:1:1: cannot read: No such file or directory");
	ck_assert(!pn_scenario_load("/", &s, err, sizeof err));
	ck_assert_str_eq(err,
			 "/:1:1: cannot read: it is a directory; expected a regular scenario file");
	/* a FIFO without a writer: refused at once, never waited on (item 5 of issue 10) */
	snprintf(path, sizeof path, "%s", "/tmp/pn_test_fifo.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(path);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert(!pn_scenario_load(path, &s, err, sizeof err));
	ck_assert(has_location(err, path));
	ck_assert_ptr_nonnull(
		strstr(err, "it is a FIFO (named pipe); expected a regular scenario file"));
	unlink(path);
	ck_assert(!pn_scenario_load("/dev/null", &s, err, sizeof err));
	ck_assert_ptr_nonnull(strstr(err, "it is a character device"));
	pn_scenario_free(&s);
}
END_TEST

/* Exactly 16 MiB loads; one byte more does not. */
START_TEST(test_size_limit)
{
	size_t len = 16u << 20;
	char *text = malloc(len + 1);
	struct pn_scenario s;

	ck_assert_ptr_nonnull(text);
	memset(text, ' ', len + 1);
	memcpy(text, "name: big\n#", 11);
	text[len - 1] = '\n';
	ck_assert_msg(pn_scenario_load_string("big.yaml", text, len, &s, err, sizeof err), "%s",
		      err);
	pn_scenario_free(&s);
	ck_assert(!pn_scenario_load_string("big.yaml", text, len + 1, &s, err, sizeof err));
	ck_assert_ptr_nonnull(strstr(err, "at most 16 MiB"));
	free(text);
}
END_TEST

START_TEST(test_err_buffer)
{
	struct pn_scenario s;
	char small[8];

	ck_assert(!pn_scenario_load_string("t.yaml", "seed: 1\n", 8, &s, NULL, 0));
	memset(small, 'x', sizeof small);
	ck_assert(!pn_scenario_load_string("t.yaml", "seed: 1\n", 8, &s, small, sizeof small));
	ck_assert_str_eq(small, "t.yaml:");
	ck_assert(!pn_scenario_load_string("t.yaml", "seed: 1\n", 8, &s, small, 1));
	ck_assert_str_eq(small, "");
	/* a NUL byte inside the text */
	ck_assert(!pn_scenario_load_string("t.yaml", "name: a\0b\n", 10, &s, err, sizeof err));
	ck_assert_str_eq(err,
			 "t.yaml:1:8: control characters are not allowed (byte 0x00); expected "
			 "UTF-8 YAML text");
	ck_assert(!pn_scenario_load_string(NULL, NULL, 0, &s, err, sizeof err));
	ck_assert(has_location(err, "<string>"));
}
END_TEST

/* The malformed corpus: every file fails with FILE:LINE:COL: and its expected words. */
static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void expect_bad_file(const char *path)
{
	char line[512], *expect;
	struct pn_scenario s;
	FILE *f = fopen(path, "rb");

	ck_assert_msg(f != NULL, "cannot open %s", path);
	ck_assert_msg(fgets(line, sizeof line, f) != NULL, "%s is empty", path);
	fclose(f);
	line[strcspn(line, "\r\n")] = '\0';
	ck_assert_msg(strncmp(line, "# expect: ", 10) == 0, "%s: no '# expect:' line", path);
	expect = line + 10;
	ck_assert_msg(!pn_scenario_load(path, &s, err, sizeof err), "%s loaded", path);
	ck_assert_msg(has_location(err, path), "%s: no location in '%s'", path, err);
	ck_assert_msg(strstr(err, expect) != NULL, "%s: '%s' does not contain '%s'", path, err,
		      expect);
	ck_assert_ptr_null(s.workload.script);
	ck_assert_ptr_null(s.crash.list);
}

START_TEST(test_bad_corpus)
{
	const char *root = getenv("PN_SOURCE_DIR");
	char dir[1024], path[2048], *names[2048];
	size_t n = 0;
	struct dirent *e;
	DIR *d;

	/* the memory messages name the limit: the one tests/bad_input.sh pins */
	setenv("PENUMBRA_MEMORY_LIMIT", "8GiB", 1);
	ck_assert_msg(root != NULL,
		      "PN_SOURCE_DIR is not set (CTest sets it to the repository root)");
	snprintf(dir, sizeof dir, "%s/tests/bad", root);
	d = opendir(dir);
	ck_assert_msg(d != NULL, "cannot open %s", dir);
	while ((e = readdir(d)) != NULL && n < PN_ARRAY_LEN(names)) {
		size_t len = strlen(e->d_name);
		if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0)
			names[n++] = strdup(e->d_name);
	}
	closedir(d);
	ck_assert_uint_lt(n, PN_ARRAY_LEN(names));
	qsort(names, n, sizeof *names, by_name);
	ck_assert_uint_ge(n, 150);
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		expect_bad_file(path);
		free(names[i]);
	}
	unsetenv("PENUMBRA_MEMORY_LIMIT");
}
END_TEST

/* Every prefix of a valid scenario, and many corrupted copies: fail cleanly or load. */
static void must_not_crash(const char *text, size_t len)
{
	struct pn_scenario s;

	if (pn_scenario_load_string("f.yaml", text, len, &s, err, sizeof err)) {
		ck_assert(s.name[0] != '\0');
		pn_scenario_free(&s);
		return;
	}
	ck_assert_msg(has_location(err, "f.yaml"), "bad message '%s'", err);
	ck_assert_ptr_null(s.workload.script);
}

START_TEST(test_sweep)
{
	static const char bytes[] = "\t\n :{}[],-#&*!|>'\"%@`\x00\xff\xc3";
	size_t len = strlen(full_example);
	char *copy = malloc(len);
	uint64_t x = 0x9E3779B97F4A7C15ull;

	ck_assert_ptr_nonnull(copy);
	for (size_t cut = 0; cut <= len; cut++) {
		memcpy(copy, full_example, cut); /* an exact-size copy: ASan sees any over-read */
		must_not_crash(copy, cut);
	}
	for (int round = 0; round < 3000; round++) {
		memcpy(copy, full_example, len);
		for (int k = 0; k < 1 + round % 4; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			copy[x % len] = bytes[(x >> 32) % (sizeof bytes - 1)];
		}
		must_not_crash(copy, len);
	}
	free(copy);
}
END_TEST

static Suite *scenario_suite(void)
{
	Suite *s = suite_create("scenario");
	TCase *tc = tcase_create("loader");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_crash_defaults);
	tcase_add_test(tc, test_full_example);
	tcase_add_test(tc, test_parse_size);
	tcase_add_test(tc, test_parse_duration);
	tcase_add_test(tc, test_parse_uint);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_name_tables);
	tcase_add_test(tc, test_limits_and_positions);
	tcase_add_test(tc, test_writer_round_trip);
	tcase_add_test(tc, test_values);
	tcase_add_test(tc, test_points);
	tcase_add_test(tc, test_script_checked_after_document);
	tcase_add_test(tc, test_messages);
	tcase_add_test(tc, test_files);
	tcase_add_test(tc, test_size_limit);
	tcase_add_test(tc, test_err_buffer);
	tcase_add_test(tc, test_bad_corpus);
	tcase_add_test(tc, test_sweep);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(scenario_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
