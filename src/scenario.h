/*
 * scenario.h: a scenario as the engine, the simulator and the checker see it, after the
 * YAML loader (scenario_load.c) has parsed and validated a file. Every key of the scenario
 * format (docs/scenarios.md) has a field here and a documented default; pn_scenario_defaults()
 * sets them. Sizes are bytes, durations nanoseconds (virtual time in the simulator).
 */
#ifndef PN_SCENARIO_H
#define PN_SCENARIO_H

#include "pn.h"

enum pn_mode { PN_MODE_FPW, PN_MODE_NOFPW, PN_MODE_UMBRA, PN_MODE_DOUBLEWRITE, PN_MODE_PUSHDOWN };
enum pn_layout { PN_LAYOUT_INTERLEAVED, PN_LAYOUT_STRIPED };
enum pn_policy { PN_POLICY_PROTOTYPE, PN_POLICY_L3, PN_POLICY_L4 };

/* protocol.mutations: deliberate bugs (docs/protocol.md section 5), one bit each. */
enum pn_mutation {
	PN_MUT_FPW_OFF = 1u << 0,
	PN_MUT_NO_WAL_BEFORE_DATA = 1u << 1,
	PN_MUT_ACK_BEFORE_FLUSH = 1u << 2,
	PN_MUT_SHIFT_SPLIT = 1u << 3,
	PN_MUT_CKPT_ACTIVE_ONLY = 1u << 4,
	PN_MUT_AIO_LATE_BIND = 1u << 5,
	PN_MUT_EARLY_RECLAIM = 1u << 6,
	PN_MUT_SELECTOR_UNSYNCED = 1u << 7,
	PN_MUT_HINT_NO_FPI = 1u << 8,
	PN_MUT_DEDUP_NO_IMAGE = 1u << 9,
	PN_MUT_SLRU_HEADER_UNPROTECTED = 1u << 10,
	PN_MUT_DOUBLEWRITE_NO_FSYNC = 1u << 11,
};
#define PN_MUT_COUNT 12
/* Name of mutation bit i (0-based), e.g. "fpw_off"; NULL past the end. */
const char *pn_mutation_name(int i);
const char *pn_mode_name(enum pn_mode m);
/* Parses a mode name; returns false when it is not one. */
bool pn_mode_parse(const char *s, enum pn_mode *out);

enum pn_workload_kind {
	PN_WL_SCRIPT, PN_WL_RANDOM, PN_WL_PGBENCH, PN_WL_TPCC, PN_WL_VACUUM, PN_WL_BTREE_DEDUP, PN_WL_SLRU
};

enum pn_op {
	PN_OP_UPDATE, PN_OP_COMMIT, PN_OP_ABORT, PN_OP_CHECKPOINT, PN_OP_CHECKPOINT_BEGIN,
	PN_OP_CHECKPOINT_END, PN_OP_EVICT, PN_OP_HINT, PN_OP_VACUUM, PN_OP_DEDUP, PN_OP_SLRU_SET,
	PN_OP_CHANGE /* generated only (pgbench, tpcc): the change in the backend's pn_proc.chg */
};

struct pn_step {
	enum pn_op op;
	uint32_t page;   /* update, evict, hint, vacuum, dedup */
	uint32_t xid;    /* slru_set */
	uint32_t client; /* default 0 */
	int line;        /* source line, for messages */
	int column;      /* source column (1-based) of the step, for messages */
};

enum pn_tear { PN_TEAR_NONE, PN_TEAR_HALVES, PN_TEAR_SECTORS };
enum pn_points_kind { PN_POINTS_ALL, PN_POINTS_EVERY, PN_POINTS_LIST };

struct pn_scenario {
	char name[128];
	char description[512];
	char path[512]; /* the file it came from */
	uint64_t seed;

	struct {
		uint32_t pages;
		uint32_t page_size;
		uint32_t sector_size;
		uint32_t buffers;
		uint32_t wal_segment_size; /* storage.wal_segment_size, default 16MiB */
	} storage;

	struct {
		enum pn_mode mode;
		uint32_t generations;
		enum pn_layout layout;
		enum pn_policy policy;
		bool checksums;
		bool wal_log_hints;
		bool slru_headers;   /* protocol.slru_headers: SLRU pages carry LSN + checksum */
		uint32_t image_threshold;
		uint32_t mutations;  /* enum pn_mutation bits */
	} protocol;

	struct {
		uint64_t interval_ns;        /* 0 = no time trigger (checkpoint_timeout) */
		uint32_t every_transactions; /* 0 = no count trigger */
		double completion_target;
		uint64_t max_wal_size;       /* bytes; 0 = no WAL-volume trigger */
		bool overlap;
	} checkpoint;

	struct {
		uint32_t queue_depth;
		bool reorder;
	} aio;

	struct {
		enum pn_workload_kind kind;
		uint32_t clients;
		uint64_t transactions;
		uint32_t pages_per_transaction;
		uint32_t scale, warehouses, distinct_keys;
		uint64_t rows, inserts;
		struct pn_step *script; /* kind script: steps in order (owned) */
		uint32_t script_len;
	} workload;

	struct {
		uint32_t runs;
		uint32_t preemption_bound;
	} schedules;

	struct {
		bool present; /* a scenario without crash: is a cost scenario */
		enum pn_points_kind points;
		uint64_t every;
		uint64_t *list; /* owned */
		uint32_t list_len;
		uint32_t max_unsynced;
		enum pn_tear tear;
		uint32_t samples;
	} crash;

	struct {
		bool violation; /* expect.verdict: violation */
	} expect;

	/* replay: present in a counterexample trace (docs/checker.md). */
	struct {
		bool present;
		uint32_t schedule;   /* which schedule run (0-based) */
		uint64_t crash_point; /* event number the world stopped after */
		char state[256];     /* the crash state, as the checker printed it */
		/* a second crash inside the recovery from that state (0 = none) */
		uint64_t recovery_crash_point;
		char recovery_state[256];
	} replay;
};

void pn_scenario_defaults(struct pn_scenario *s);
void pn_scenario_free(struct pn_scenario *s);

/*
 * Loads and validates a scenario file. On error returns false and writes one message of
 * the form "FILE:LINE:COLUMN: what was found; what was expected" into err (never crashes,
 * whatever the input). The caller exits 2 on false.
 */
bool pn_scenario_load(const char *path, struct pn_scenario *out, char *err, size_t err_len);
/* The same, from a string in memory; `name` stands for the file name in messages. */
bool pn_scenario_load_string(const char *name, const char *text, size_t len,
			     struct pn_scenario *out, char *err, size_t err_len);

/* Parses "64MiB", "8kB", "8192" into bytes; "4min", "250ms", "30s", "1h" into ns. */
bool pn_parse_size(const char *s, uint64_t *out);
bool pn_parse_duration(const char *s, uint64_t *out_ns);

/*
 * The same parsers, saying why a string was refused (for messages naming what was found
 * and what was expected). pn_parse_uint takes an unsigned decimal integer: no sign, no
 * fraction, no exponent, no other base, no surrounding space.
 */
enum pn_parse_status {
	PN_PARSE_OK,
	PN_PARSE_EMPTY,    /* "" */
	PN_PARSE_NEGATIVE, /* "-3" */
	PN_PARSE_SIGN,     /* "+3" */
	PN_PARSE_FRACTION, /* "1.5", "1.5GiB" */
	PN_PARSE_OVERFLOW, /* more than UINT64_MAX (after the unit) */
	PN_PARSE_NO_UNIT,  /* a duration without its unit: "10" */
	PN_PARSE_BAD_UNIT, /* "64MB3", "10m" */
	PN_PARSE_SYNTAX,   /* not a number at all */
};
enum pn_parse_status pn_parse_uint(const char *s, uint64_t *out);
enum pn_parse_status pn_parse_size_status(const char *s, uint64_t *out);
enum pn_parse_status pn_parse_duration_status(const char *s, uint64_t *out_ns);

#endif
