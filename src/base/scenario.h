/*
 * scenario.h: a scenario as the engine, the simulator and the checker see it, after the YAML
 * loader (src/scenario/load.h) has parsed and validated a file (base layer: the value only;
 * the loader and its libyaml are the scenario layer's). Every key of the scenario format
 * (docs/scenarios.md) has a field here and a documented default; pn_scenario_defaults() sets
 * them. Sizes are bytes, durations nanoseconds (virtual time in the simulator).
 */
#ifndef PN_SCENARIO_H
#define PN_SCENARIO_H

#include "pn.h"

/*
 * Every enumeration that has names in the scenario format (or in output) is written once,
 * as an X-macro list X(ENUMERATOR, "name"): the enum, its NULL-terminated name table
 * (pn_<x>_names in scenario.c, filled by designated initializers) and its count come from
 * that one list, so a value without a name, or a name table one short, cannot be built.
 */
/* clang-format off */
#define PN_MODE_LIST(X)                                                                    \
	X(PN_MODE_FPW, "fpw") X(PN_MODE_NOFPW, "nofpw") X(PN_MODE_UMBRA, "umbra")              \
	X(PN_MODE_DOUBLEWRITE, "doublewrite") X(PN_MODE_PUSHDOWN, "pushdown")
#define PN_LAYOUT_LIST(X) X(PN_LAYOUT_INTERLEAVED, "interleaved") X(PN_LAYOUT_STRIPED, "striped")
#define PN_POLICY_LIST(X)                                                                  \
	X(PN_POLICY_PROTOTYPE, "prototype") X(PN_POLICY_L3, "l3") X(PN_POLICY_L4, "l4")        \
	X(PN_POLICY_POOL, "pool") X(PN_POLICY_GEN2, "gen2") X(PN_POLICY_REMAP, "remap")
/* clang-format on */

enum pn_mode { PN_MODE_LIST(PN_ENUM_VALUE) PN_MODE_COUNT };
enum pn_layout { PN_LAYOUT_LIST(PN_ENUM_VALUE) PN_LAYOUT_COUNT };
enum pn_policy { PN_POLICY_LIST(PN_ENUM_VALUE) PN_POLICY_COUNT };

/* protocol.mutations: deliberate bugs (docs/protocol.md section 5), one bit each, in
 * the order of their bits. */
/* clang-format off */
#define PN_MUTATION_LIST(X)                                                               \
	X(FPW_OFF, "fpw_off") X(NO_WAL_BEFORE_DATA, "no_wal_before_data")                 \
	X(ACK_BEFORE_FLUSH, "ack_before_flush") X(SHIFT_SPLIT, "shift_split")             \
	X(CKPT_ACTIVE_ONLY, "ckpt_active_only") X(AIO_LATE_BIND, "aio_late_bind")         \
	X(EARLY_RECLAIM, "early_reclaim") X(SELECTOR_UNSYNCED, "selector_unsynced")       \
	X(HINT_NO_FPI, "hint_no_fpi") X(DEDUP_NO_IMAGE, "dedup_no_image")                 \
	X(SLRU_HEADER_UNPROTECTED, "slru_header_unprotected")                             \
	X(DOUBLEWRITE_NO_FSYNC, "doublewrite_no_fsync")                                   \
	/* umbra l3/l4: selection does not wait for publication */                        \
	X(NO_DELAY_CHKPT, "no_delay_chkpt")                                               \
	X(PUSHDOWN_IMAGE_UNSYNCED, "pushdown_image_unsynced")                             \
	X(PUSHDOWN_HORIZON_EARLY, "pushdown_horizon_early")                               \
	X(PUSHDOWN_INGEST_UNFLUSHED, "pushdown_ingest_unflushed")                         \
	/* umbra pool: protocol/umbra_pool.c */                                           \
	X(POOL_EARLY_RETURN, "pool_early_return") X(POOL_NO_FALLBACK, "pool_no_fallback") \
	X(POOL_MAP_UNSYNCED, "pool_map_unsynced")                                         \
	/* umbra l3/l4: the truncate's selector reset written with no WAL-before-data */  \
	X(TRUNCATE_RESET_NO_WAL, "truncate_reset_no_wal")                                 \
	/* umbra gen2: protocol/umbra_gen2.c */                                           \
	X(GEN2_NO_FALLBACK, "gen2_no_fallback") X(GEN2_EARLY_REUSE, "gen2_early_reuse")   \
	X(GEN2_NO_IMAGE, "gen2_no_image")                                                 \
	/* umbra remap: protocol/umbra_remap.c */                                         \
	X(REMAP_EARLY_RECLAIM, "remap_early_reclaim") X(REMAP_MAP_BEFORE_WAL, "remap_map_before_wal") \
	X(REMAP_MAP_TORN, "remap_map_torn") X(REMAP_NEXT_FREE_UNLOGGED, "remap_next_free_unlogged") \
	X(REMAP_COMPACT_UNSAFE, "remap_compact_unsafe") X(REMAP_META_CONCURRENT, "remap_meta_concurrent")
/* clang-format on */
#define PN_MUT_BIT_(e, name) PN_MUT_BIT_##e,
#define PN_MUT_MASK_(e, name) PN_MUT_##e = 1u << PN_MUT_BIT_##e,
enum { PN_MUTATION_LIST(PN_MUT_BIT_) PN_MUT_COUNT };
enum pn_mutation { PN_MUTATION_LIST(PN_MUT_MASK_) };
_Static_assert(PN_MUT_COUNT <= 32, "protocol.mutations is a 32-bit mask");

extern const char *const pn_mode_names[PN_MODE_COUNT + 1];
extern const char *const pn_layout_names[PN_LAYOUT_COUNT + 1];
extern const char *const pn_policy_names[PN_POLICY_COUNT + 1];
extern const char *const pn_mutation_names[PN_MUT_COUNT + 1];
/* Name of mutation bit i (0-based), e.g. "fpw_off"; NULL past the end. */
const char *pn_mutation_name(int i);
/* The name of a value; "?" for a value out of range (never NULL). */
const char *pn_mode_name(enum pn_mode m);
const char *pn_layout_name(enum pn_layout l);
const char *pn_policy_name(enum pn_policy p);
/* Parses a mode name; returns false when it is not one. */
bool pn_mode_parse(const char *s, enum pn_mode *out);

/* clang-format off */
#define PN_WORKLOAD_KIND_LIST(X)                                                           \
	X(PN_WL_SCRIPT, "script") X(PN_WL_RANDOM, "random") X(PN_WL_PGBENCH, "pgbench")        \
	X(PN_WL_TPCC, "tpcc") X(PN_WL_VACUUM, "vacuum") X(PN_WL_BTREE_DEDUP, "btree_dedup")    \
	X(PN_WL_SLRU, "slru") X(PN_WL_IMPORT, "import")
/* clang-format on */
enum pn_workload_kind { PN_WORKLOAD_KIND_LIST(PN_ENUM_VALUE) PN_WL_COUNT };
extern const char *const pn_workload_kind_names[PN_WL_COUNT + 1];
const char *pn_workload_kind_name(enum pn_workload_kind k);

/* Script steps (workload.script's op names, in this order), then the ops that workloads
 * generate, never a script. */
/* clang-format off */
#define PN_SCRIPT_OP_LIST(X)                                                               \
	X(PN_OP_UPDATE, "update") X(PN_OP_COMMIT, "commit") X(PN_OP_ABORT, "abort")            \
	X(PN_OP_CHECKPOINT, "checkpoint") X(PN_OP_CHECKPOINT_BEGIN, "checkpoint_begin")        \
	X(PN_OP_CHECKPOINT_END, "checkpoint_end") X(PN_OP_EVICT, "evict")                      \
	X(PN_OP_HINT, "hint") X(PN_OP_VACUUM, "vacuum") X(PN_OP_DEDUP, "dedup")                \
	X(PN_OP_SLRU_SET, "slru_set")                                                          \
	/* Umbra l3/l4 only (docs/scenarios.md): pause a checkpoint before it selects         \
	 * buffers; an update held between its shift's WAL and its publication; release of  \
	 * that hold. */                                                                       \
	X(PN_OP_CHECKPOINT_EPOCH, "checkpoint_epoch") X(PN_OP_UPDATE_HOLD, "update_hold")      \
	X(PN_OP_RELEASE, "release")                                                            \
	/* any mode: let a paused checkpoint go on without waiting for it to complete */       \
	X(PN_OP_CHECKPOINT_RESUME, "checkpoint_resume")                                        \
	/* relation truncation (vacuum's tail truncation): page N and up stop existing */      \
	X(PN_OP_TRUNCATE, "truncate")
/* PN_OP_CHANGE (pgbench, tpcc: the change in the backend's pn_proc.chg), the others
 * src/workload/wl_vacuum.c, src/workload/wl_btree.c */
#define PN_GENERATED_OP_LIST(X)                                                            \
	X(PN_OP_CHANGE, "change") X(PN_OP_VACUUM_PAGE, "vacuum_page")                          \
	X(PN_OP_BT_INSERT, "bt_insert") X(PN_OP_BT_SPLIT, "bt_split")                          \
	X(PN_OP_IMPORT, "import_record")
/* clang-format on */
enum pn_op { PN_SCRIPT_OP_LIST(PN_ENUM_VALUE) PN_GENERATED_OP_LIST(PN_ENUM_VALUE) PN_OP_COUNT };
#define PN_OP_SCRIPT_COUNT (0 PN_SCRIPT_OP_LIST(PN_ENUM_ONE))
/* Every op's name; pn_script_op_names: the script ops only (a prefix of it). */
extern const char *const pn_op_names[PN_OP_COUNT + 1];
extern const char *const pn_script_op_names[PN_OP_SCRIPT_COUNT + 1];
const char *pn_op_name(enum pn_op op);

struct pn_step {
	enum pn_op op;
	uint32_t page;   /* update, evict, hint, vacuum, dedup; truncate: the new size */
	uint32_t xid;    /* slru_set */
	uint32_t client; /* default 0 */
	uint32_t key;    /* bt_insert: the index key */
	int line;        /* source line, for messages */
	int column;      /* source column (1-based) of the step, for messages */
};

/* postgres: the PostgreSQL major version whose WAL the workloads write where versions differ
 * in what we model (VACUUM's freezing; docs/scenarios.md, "postgres"). Default 15. */
#define PN_PG_VERSION_LIST(X) X(PN_PG15, "15") X(PN_PG16, "16") X(PN_PG17, "17")
enum pn_pg_version { PN_PG_VERSION_LIST(PN_ENUM_VALUE) PN_PG_VERSION_COUNT };
extern const char *const pn_pg_version_names[PN_PG_VERSION_COUNT + 1];
const char *pn_pg_version_name(enum pn_pg_version v);

#define PN_TEAR_LIST(X) \
	X(PN_TEAR_NONE, "none") X(PN_TEAR_HALVES, "halves") X(PN_TEAR_SECTORS, "sectors")
enum pn_tear { PN_TEAR_LIST(PN_ENUM_VALUE) PN_TEAR_COUNT };
extern const char *const pn_tear_names[PN_TEAR_COUNT + 1];
const char *pn_tear_name(enum pn_tear t);
enum pn_points_kind { PN_POINTS_ALL, PN_POINTS_EVERY, PN_POINTS_LIST };
/* schedules.strategy (docs/checker.md section 13); a schedule's preemptions as text fit in
 * PN_CHOICES_TEXT_MAX bytes with their NUL (a pct run can take one at most events) */
#define PN_CHOICES_TEXT_MAX 16384
/* The keys of a trace's replay: section that replay holds to the run it re-runs (a crash
 * point past its end, a state its device does not have, ...): where a refusal points. */
enum pn_replay_key {
	PN_REPLAY_NO_KEY,
	PN_REPLAY_CRASH_POINT,
	PN_REPLAY_STATE,
	PN_REPLAY_RECOVERY_POINT,
	PN_REPLAY_RECOVERY_STATE,
	PN_REPLAY_CHOICES,
	PN_REPLAY_KEYS
};
#define PN_STRATEGY_LIST(X) \
	X(PN_STRATEGY_SEEDED, "seeded") X(PN_STRATEGY_BOUNDED, "bounded") X(PN_STRATEGY_PCT, "pct")
enum pn_strategy { PN_STRATEGY_LIST(PN_ENUM_VALUE) PN_STRATEGY_COUNT };
extern const char *const pn_strategy_names[PN_STRATEGY_COUNT + 1];
const char *pn_strategy_name(enum pn_strategy s);

struct pn_scenario {
	char name[128];
	char description[512];
	char path[512]; /* the file it came from */
	uint64_t seed;
	enum pn_pg_version postgres; /* postgres: 15 (default), 16 or 17 */

	struct {
		uint32_t pages;
		uint32_t page_size;
		uint32_t sector_size;
		uint32_t buffers;
		uint32_t wal_segment_size; /* storage.wal_segment_size, default 16MiB */
	} storage;

	struct {
		uint32_t row; /* enum pn_protocol_id (protocol/list.h); mode, policy: its family */
		enum pn_mode mode;
		uint32_t generations;
		enum pn_layout layout;
		enum pn_policy policy;
		bool checksums;
		bool wal_log_hints;
		bool slru_headers; /* protocol.slru_headers: SLRU pages carry LSN + checksum */
		uint32_t image_threshold;
		/* policy pool: spare slots shared by the heap pages, a count or (spare_percent)
		 * a percentage of storage.pages */
		uint32_t spare_slots;
		bool spare_percent;
		uint32_t mutations; /* enum pn_mutation bits */
		/* LINE and COLUMN of protocol.generations, .layout (0: not given): where a row
		 * --mode picks refuses them (the loader did for the file's own row) */
		uint32_t generations_at[2], layout_at[2];
	} protocol;

	struct {
		uint64_t interval_ns;        /* 0 = no time trigger (checkpoint_timeout) */
		uint32_t every_transactions; /* 0 = no count trigger */
		double completion_target;
		uint64_t max_wal_size; /* bytes; 0 = no WAL-volume trigger */
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
		char trace[512];        /* kind import: the trace file (src/workload/wl_import.c) */
		struct pn_step *script; /* kind script: steps in order (owned) */
		uint32_t script_len;
	} workload;

	struct {
		uint32_t runs; /* seeded, bounded: schedule indexes 0..runs-1; pct: its runs */
		enum pn_strategy strategy;
		uint32_t preemption_bound; /* bounded: at most this many preemptions */
		uint32_t depth;            /* pct: d (d - 1 priority change points a run) */
		bool reduce, prune;    /* bounded: skip points met before (RD2); cut runs (RD3) */
		uint32_t choice_width; /* candidates at a choice point (sim/world.h) */
		bool named;            /* strategy or preemption_bound given (else: the default) */
		uint32_t budget; /* the default's search: schedules at most (0: sized, model/) */
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
		uint32_t search_samples; /* past the run's first preemption (crashstate.h SP2) */
		/* crash.atomic_unit: bytes the device writes atomically at aligned offsets (a
		 * torn write is cut only between such blocks); 0 = storage.sector_size */
		uint32_t atomic_unit;
		/* crash.torn_writes: how many writes one enumerated state may tear, 1 or 2
		 * (model/crashstate.h); 0 = not given (1), and then left out of traces */
		uint32_t torn_writes;
	} crash;

	struct {
		bool violation; /* expect.verdict: violation */
	} expect;

	/* replay: present in a counterexample trace (docs/checker.md). */
	struct {
		bool present;
		uint32_t schedule;    /* which schedule run (0-based) */
		uint64_t crash_point; /* event number the world stopped after */
		char state[256];      /* the crash state, as the checker printed it */
		/* a second crash inside the recovery from that state (0 = none) */
		uint64_t recovery_crash_point;
		char recovery_state[256];
		/* the schedule's preemptions, "E:I,E:I" (event E ran candidate I; "" = none) */
		char choices[PN_CHOICES_TEXT_MAX];
		/* the hash of the scenario as check wrote it (model/trace.h); "" = not recorded */
		char scenario_hash[24];
		/* LINE and COLUMN of each key replay holds to the run (index enum
		 * pn_replay_key; 0: not given): a refusal after loading names its position */
		uint32_t at[PN_REPLAY_KEYS][2];
	} replay;
};

/*
 * What a simulated run of s needs in memory at least, by part (docs/scenarios.md,
 * "Limits"): the loader refuses a scenario whose total is above the memory limit.
 */
struct pn_scenario_memory {
	uint64_t pages;   /* heap pages the run has: storage.pages, or what workload.rows fill */
	uint64_t device;  /* page images on the simulated device (every slot of every page) */
	uint64_t oracle;  /* the oracle's three images of every page (a crash: section) */
	uint64_t buffers; /* the buffer pool */
	uint64_t logs;    /* per transaction or step: acknowledged xid, LSN and latency */
	uint64_t total;
};
void pn_scenario_memory(const struct pn_scenario *s, struct pn_scenario_memory *m);
/* Bytes of the device and oracle per heap page, for "at most N pages". */
uint64_t pn_scenario_page_bytes(const struct pn_scenario *s);
void pn_scenario_defaults(struct pn_scenario *s);
/* The device's atomic write unit (DV4): crash.atomic_unit when given, else the sector size. */
uint32_t pn_scenario_atomic_unit(const struct pn_scenario *s);
/* crash.torn_writes when given, else 1. */
uint32_t pn_scenario_torn_writes(const struct pn_scenario *s);
void pn_scenario_free(struct pn_scenario *s);

#endif
