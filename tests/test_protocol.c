/*
 * test_protocol.c: the protocol table (src/engine/protocol.h, src/protocol/; label unit).
 * The row pn_protocol_of picks for each mode and policy; every row's image / shift decision
 * for every kind of block, against the table the engine's own decide() and
 * pn_client_protect() computed before the decision moved into the rows (so a row that
 * decides otherwise changes the WAL), with and without the four mutants the rows own; the
 * files each row sizes; the checkpoint run's state machine (pn_ckpt_set_state) that the
 * rows' steps enter and leave; and the checks of the runs and the backends (pn_ckpt_check,
 * pn_backend_check) that pn_engine_check runs.
 */
#include "engine.h"
#include "load.h"
#include "protocols.h"
#include "rowstate.h"
#include "workload.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FPW, NOFPW, DW, PUSHDOWN, PROTO, L3, L4, ROWS };
static const struct pn_protocol_ops *const rows[ROWS] = {
	&pn_protocol_fpw,   &pn_protocol_nofpw,    &pn_protocol_doublewrite, &pn_protocol_pushdown,
	&pn_protocol_umbra, &pn_protocol_umbra_l3, &pn_protocol_umbra_l4,
};
static const enum pn_mode row_mode[ROWS] = {PN_MODE_FPW,      PN_MODE_NOFPW, PN_MODE_DOUBLEWRITE,
					    PN_MODE_PUSHDOWN, PN_MODE_UMBRA, PN_MODE_UMBRA,
					    PN_MODE_UMBRA};
static const enum pn_policy row_policy[ROWS] = {PN_POLICY_PROTOTYPE, PN_POLICY_PROTOTYPE,
						PN_POLICY_PROTOTYPE, PN_POLICY_PROTOTYPE,
						PN_POLICY_PROTOTYPE, PN_POLICY_L3,
						PN_POLICY_L4};

#define I PN_PROTECT_IMAGE
#define S PN_PROTECT_SHIFT
/* decide(use, before_redo = true) without mutants, per row; before_redo = false is 0. */
static const unsigned expect[PN_USE_SLRU + 1][ROWS] = {
	/*                    fpw nofpw dw pushdown proto l3     l4 */
	[PN_USE_CHANGE] = {I, 0, 0, 0, S, S, S},
	[PN_USE_WILL_INIT] = {0, 0, 0, 0, S, S, S},
	[PN_USE_DEDUP] = {I, 0, 0, 0, S, S, S},
	[PN_USE_HINT] = {I, 0, 0, 0, I | S, I, S}, /* l3 keeps FPI_FOR_HINT; l4 HINT_DELTA */
	[PN_USE_HINT_BLOCK] = {I, 0, 0, 0, I | S, I | S, I | S},
	[PN_USE_SLRU] = {I, 0, I, 0, I, I, I},
};

static unsigned decide(int row, uint32_t mutations, enum pn_block_use use, bool before)
{
	struct pn_scenario sc;
	pn_scenario_defaults(&sc);
	sc.protocol.mode = row_mode[row];
	sc.protocol.policy = row_policy[row];
	sc.protocol.mutations = mutations;
	struct pn_engine *e = pn_engine_new();
	e->sc = &sc;
	e->pctx.sc = &sc;
	e->proto = rows[row];
	e->pctx.row = rows[row];
	unsigned got = e->proto->write.decide(&e->pctx, use, before);
	free(e); /* never initialised: nothing to free but the struct */
	pn_scenario_free(&sc);
	return got;
}

START_TEST(test_row_of_mode)
{
	struct pn_scenario sc;
	pn_scenario_defaults(&sc);
	static const enum pn_protocol_id row_id[ROWS] = {PN_PROTOCOL_FPW,
							 PN_PROTOCOL_NOFPW,
							 PN_PROTOCOL_DOUBLEWRITE,
							 PN_PROTOCOL_PUSHDOWN,
							 PN_PROTOCOL_UMBRA,
							 PN_PROTOCOL_UMBRA_L3,
							 PN_PROTOCOL_UMBRA_L4};
	for (int r = 0; r < ROWS; r++) {
		pn_protocol_set(&sc, row_id[r]);
		ck_assert(sc.protocol.mode == row_mode[r] && sc.protocol.policy == row_policy[r]);
		ck_assert_ptr_eq(pn_protocol_of(&sc), rows[r]);
		ck_assert_ptr_nonnull(rows[r]->write.decide);
		ck_assert_ptr_nonnull(rows[r]->name);
		for (int o = 0; o < r; o++)
			ck_assert_str_ne(rows[o]->name, rows[r]->name);
	}
	for (int m = 0; m < PN_PROTOCOL_COUNT; m++)
		ck_assert_ptr_nonnull(pn_protocols[m]);
	/* the policy only matters in mode umbra */
	pn_protocol_set(&sc, PN_PROTOCOL_FPW);
	sc.protocol.policy = PN_POLICY_L4;
	ck_assert_ptr_eq(pn_protocol_of(&sc), &pn_protocol_fpw);
	/* the row data the engine reads instead of the mode */
	ck_assert(pn_protocol_fpw.fpw_byte && !pn_protocol_nofpw.fpw_byte &&
		  !pn_protocol_umbra.fpw_byte);
	ck_assert(pn_protocol_umbra_l4.hint_delta && !pn_protocol_umbra_l3.hint_delta);
	ck_assert_uint_eq(pn_protocol_umbra.store_flags, PN_STORE_SLOTTED);
	ck_assert_uint_eq(pn_protocol_doublewrite.store_flags, 0);
	ck_assert_uint_eq(pn_protocol_pushdown.store_flags, 0);
	pn_scenario_free(&sc);
}
END_TEST

START_TEST(test_decide_table)
{
	for (int r = 0; r < ROWS; r++)
		for (int u = 0; u <= PN_USE_SLRU; u++) {
			ck_assert_msg(decide(r, 0, (enum pn_block_use)u, true) == expect[u][r],
				      "%s use %d: %u, not %u", rows[r]->name, u,
				      decide(r, 0, (enum pn_block_use)u, true), expect[u][r]);
			ck_assert_msg(decide(r, 0, (enum pn_block_use)u, false) == 0,
				      "%s use %d protects a page changed after the redo pointer",
				      rows[r]->name, u);
		}
}
END_TEST

/* Each mutant the rows own takes away exactly its own protection. */
START_TEST(test_decide_mutants)
{
	for (int r = 0; r < ROWS; r++)
		for (int u = 0; u <= PN_USE_SLRU; u++) {
			enum pn_block_use use = (enum pn_block_use)u;
			unsigned want = expect[u][r];
			unsigned fpw_off = r == FPW && (use == PN_USE_CHANGE || use == PN_USE_DEDUP)
						   ? 0
						   : want;
			unsigned no_fpi = use == PN_USE_HINT || use == PN_USE_HINT_BLOCK ? 0 : want;
			unsigned no_image = use == PN_USE_DEDUP ? 0 : want;
			unsigned slru = use == PN_USE_SLRU ? 0 : want;
			ck_assert_uint_eq(decide(r, PN_MUT_FPW_OFF, use, true), fpw_off);
			ck_assert_uint_eq(decide(r, PN_MUT_HINT_NO_FPI, use, true), no_fpi);
			ck_assert_uint_eq(decide(r, PN_MUT_DEDUP_NO_IMAGE, use, true), no_image);
			ck_assert_uint_eq(decide(r, PN_MUT_SLRU_HEADER_UNPROTECTED, use, true),
					  slru);
		}
}
END_TEST

static uint64_t stub_random(void *ctx)
{
	(void)ctx;
	return 0;
}
static uint64_t stub_now(void *ctx)
{
	(void)ctx;
	return 0;
}
static void stub_schedule(void *ctx, uint32_t p, uint64_t d, uint64_t t)
{
	(void)ctx;
	(void)p;
	(void)d;
	(void)t;
}
static void stub_submit(void *ctx, struct pn_io *io)
{
	(void)ctx;
	(void)io;
	ck_abort_msg("init issues no I/O");
}

/* An engine of mode/policy through pn_engine_init, as the assembly builds it. */
static struct pn_engine *engine_sized(struct pn_scenario *sc, const char *mode, uint32_t pages,
				      uint32_t buffers)
{
	char yaml[256], err[PN_ERROR_LEN];
	snprintf(yaml, sizeof(yaml),
		 "name: p\nseed: 1\nstorage: {pages: %u, buffers: %u}\nprotocol: {mode: %s}\n"
		 "workload: {kind: random, clients: 1, transactions: 2}\n",
		 pages, buffers, mode);
	ck_assert_msg(pn_scenario_load_string("p.yaml", yaml, strlen(yaml), sc, err, sizeof(err)),
		      "%s", err);
	struct pn_env env = {.submit = stub_submit,
			     .now_ns = stub_now,
			     .schedule = stub_schedule,
			     .random = stub_random};
	struct pn_engine *e = pn_engine_new();
	ck_assert_msg(pn_engine_init(e, sc, &env, true, pn_workload_of(sc), pn_protocol_of(sc)),
		      "%s", pn_engine_error(e));
	return e;
}

static struct pn_engine *engine_of(struct pn_scenario *sc, const char *mode)
{
	return engine_sized(sc, mode, 64, 8);
}

/* The files a row owns get their size from it; the others have none. */
START_TEST(test_file_sizes)
{
	static const char *const modes[] = {"fpw", "umbra", "doublewrite", "pushdown"};
	for (unsigned m = 0; m < PN_ARRAY_LEN(modes); m++) {
		struct pn_scenario sc;
		struct pn_engine *e = engine_of(&sc, modes[m]);
		bool umbra = m == 1, dw = m == 2;
		struct pn_geometry g = pn_engine_geometry(e);
		ck_assert_uint_eq(g.generations, umbra ? sc.protocol.generations : 1);
		ck_assert_uint_eq(pn_engine_file_size(e, PN_FILE_SELECTOR) > 0, umbra);
		ck_assert_uint_eq(pn_engine_file_size(e, PN_FILE_DW),
				  dw ? 32ull * (sc.storage.sector_size + g.page_size) : 0);
		ck_assert_uint_eq(pn_engine_file_size(e, PN_FILE_DATA),
				  (uint64_t)(g.heap_pages * g.generations + g.slru_pages) *
					  g.page_size);
		ck_assert_uint_eq(pn_engine_file_size(e, PN_FILE_CONTROL), PN_CONTROL_SIZE);
		ck_assert_uint_eq(e->pctx.state != NULL, dw || m == 3); /* the rows with state */
		pn_engine_finish_metrics(e); /* the space metric: the area's entries are slots */
		ck_assert_uint_eq(e->m.slots_used, g.heap_pages + (dw ? 32u : 0u));
		pn_engine_delete(e);
		pn_scenario_free(&sc);
	}
}
END_TEST

/* The fingerprint of the engine's memory (pn_engine_memory), FNV-1a over what it feeds. */
static void fnv_feed(void *ctx, const void *bytes, size_t len)
{
	uint64_t *h = ctx;
	for (size_t i = 0; i < len; i++)
		*h = (*h ^ ((const uint8_t *)bytes)[i]) * 0x100000001b3ull;
}

static uint64_t memory_of(const struct pn_engine *e)
{
	uint64_t h = 0xcbf29ce484222325ull;
	pn_engine_memory(e, &(struct pn_hasher){fnv_feed, &h});
	return h;
}

static uint64_t memory_last;
static void memory_moved(struct pn_engine *e, const char *field)
{
	uint64_t now = memory_of(e);
	ck_assert_msg(now != memory_last, "%s: %s changed and the fingerprint did not",
		      e->proto->name, field);
	memory_last = now;
}

/* Every row's state is in the fingerprint (docs/checker.md section 13): the memory hook is
 * required, and each field of each row's state, changed alone, moves it. */
START_TEST(test_row_memory)
{
	static const struct {
		const char *mode;
		void (*change_each)(struct pn_engine *e, rowstate_moved_fn moved);
	} rows_with_state[] = {
		{"doublewrite", rowstate_doublewrite},
		{"umbra, policy: pool, spare_slots: 4", rowstate_pool},
		{"umbra, policy: gen2", rowstate_gen2},
		{"pushdown", rowstate_pushdown},
		{"umbra, policy: remap", rowstate_remap},
	};
	for (int r = 0; r < ROWS; r++)
		ck_assert_ptr_nonnull(rows[r]->state.memory);
	ck_assert_ptr_nonnull(pn_protocol_umbra_pool.state.memory);
	ck_assert_ptr_nonnull(pn_protocol_umbra_gen2.state.memory);
	for (unsigned i = 0; i < PN_ARRAY_LEN(rows_with_state); i++) {
		struct pn_scenario sc;
		struct pn_engine *e = engine_of(&sc, rows_with_state[i].mode);
		memory_last = memory_of(e);
		rows_with_state[i].change_each(e, memory_moved);
		pn_engine_delete(e);
		pn_scenario_free(&sc);
	}
}
END_TEST

/* The buffer pool's whole state is in the fingerprint: each field of a frame, a resident
 * page's bytes, the clock sweep's hand, a process's victim and the data writes in flight,
 * changed alone, move it (engine.c's size assertion stops a new field of pn_frame). */
START_TEST(test_frame_memory)
{
	struct pn_scenario sc;
	struct pn_engine *e = engine_of(&sc, "fpw");
	struct pn_bufpool *b = &e->buf;
	struct pn_frame *f = pn_buf_frame(b, 1);
	memory_last = memory_of(e);
#define MOVE(field, value)               \
	do {                             \
		f->field = value;        \
		memory_moved(e, #field); \
	} while (0)
	MOVE(page, 3);
	MOVE(dirty, true);
	MOVE(dirty_hint_only, true);
	MOVE(redirtied, true);
	MOVE(locked, true);
	MOVE(pins, 2);
	MOVE(usage, 4);
	MOVE(io_reads, 1);
	MOVE(io_writes, 1);
	MOVE(built, true);
	MOVE(ckpt_needed, 1);
	MOVE(ckpt_slot[0], 2);
	MOVE(ckpt_slot[1], 1);
	MOVE(held, true);
	MOVE(holder, 1);
	MOVE(held_lsn, 77);
	MOVE(ckpt_run_seq[0], 5);
	MOVE(ckpt_run_seq[1], 6);
	MOVE(last_lsn, 99);
	MOVE(shift_epoch, 4);
	MOVE(redirtied_seq, 3);
	MOVE(valid, true); /* and its bytes with it */
#undef MOVE
	pn_frame_page(b, 1)[100] ^= 1;
	memory_moved(e, "a resident page's byte");
	b->clock_hand = 2;
	memory_moved(e, "clock_hand");
	b->data_writes_inflight = 1;
	memory_moved(e, "data_writes_inflight");
	b->victims[0].frame = 3;
	memory_moved(e, "victims.frame");
	b->victims[0].held = true;
	memory_moved(e, "victims.held");
	pn_engine_delete(e);
	pn_scenario_free(&sc);
}
END_TEST

/* umbra-pool (umbra_pool.c): a shift takes a spare from the pool, falls back to an image
 * when the pool is empty, and a spare returns only when the control file of a checkpoint
 * whose baselines do not need it is durable (ckpt_end), not at its control write (P1). */
START_TEST(test_pool_spares)
{
	struct pn_scenario sc;
	struct pn_engine *e = engine_of(&sc, "umbra, policy: pool, spare_slots: 1");
	const struct pn_protocol_ops *row = e->proto;
	struct pn_ckpt_run *run = &e->ckpt.runs[0];
	ck_assert_ptr_eq(row, &pn_protocol_umbra_pool);
	ck_assert_uint_eq(pn_engine_geometry(e).generations, 3);
	/* 64 home slots, 1 spare, 2 SLRU pages */
	ck_assert_uint_eq(pn_engine_file_size(e, PN_FILE_DATA), (64ull + 1 + 2) * 8192);
	ck_assert_uint_eq(row->write.shift_target(&e->pctx, 0), 1); /* page 0 takes the spare */
	pn_store_set_slot(&e->store, 0, 1);
	ck_assert_uint_eq(pn_store_offset(&e->store, 0, 1), 64ull * 8192);
	ck_assert_uint_eq(row->write.shift_target(&e->pctx, 1), PN_SHIFT_IMAGE); /* pool empty */
	/* checkpoint 1 completes with page 0 on its spare: its baseline */
	run->seq = 1;
	run->state = PN_C_CONTROL_WRITE;
	memcpy(run->snapshot, pn_store_slots(&e->store), 64);
	row->ckpt.control(&e->pctx, run);
	row->ckpt.end(&e->pctx, run);
	e->store.inflight_valid = false;
	run->state = PN_C_IDLE;
	ck_assert_uint_eq(e->store.base_done[0], 1);
	ck_assert_uint_eq(row->write.shift_target(&e->pctx, 0), 0); /* home is free */
	pn_store_set_slot(&e->store, 0, 0);
	ck_assert_uint_eq(row->write.shift_target(&e->pctx, 1),
			  PN_SHIFT_IMAGE); /* still a baseline */
	/* checkpoint 2, page 0 at home: its control write in flight keeps the spare taken */
	run->seq = 2;
	run->state = PN_C_CONTROL_WRITE;
	memcpy(run->snapshot, pn_store_slots(&e->store), 64);
	row->ckpt.control(&e->pctx, run);
	ck_assert_uint_eq(row->write.shift_target(&e->pctx, 1), PN_SHIFT_IMAGE);
	row->ckpt.end(&e->pctx, run); /* the control file is durable: the spare returns */
	e->store.inflight_valid = false;
	run->state = PN_C_IDLE;
	ck_assert_uint_eq(row->write.shift_target(&e->pctx, 1), 1);
	ck_assert_uint_eq(pn_store_offset(&e->store, 1, 1), 64ull * 8192);
	pn_engine_delete(e);
	pn_scenario_free(&sc);
}
END_TEST

/* umbra-gen2 (umbra_gen2.c): two slots a page, home first; a shift takes the other slot
 * only when no possible recovery reads it (G1), else an image (G3); the completed
 * checkpoint's baseline is free again only at the end of a checkpoint that does not name it
 * (G2). */
START_TEST(test_gen2_fallback)
{
	struct pn_scenario sc;
	struct pn_engine *e = engine_of(&sc, "umbra, policy: gen2");
	const struct pn_protocol_ops *row = e->proto;
	struct pn_ckpt_run *run = &e->ckpt.runs[0];
	ck_assert_ptr_eq(row, &pn_protocol_umbra_gen2);
	ck_assert_uint_eq(pn_engine_geometry(e).generations, 2);
	/* 64 home slots, 64 second slots, 2 SLRU pages */
	ck_assert_uint_eq(pn_engine_file_size(e, PN_FILE_DATA), (2 * 64ull + 2) * 8192);
	ck_assert_uint_eq(pn_store_offset(&e->store, 3, 0), 3ull * 8192);
	ck_assert_uint_eq(pn_store_offset(&e->store, 3, 1), (64ull + 3) * 8192);
	ck_assert_uint_eq(row->write.shift_target(&e->pctx, 0), 1); /* the second slot is free */
	pn_store_set_slot(&e->store, 0, 1);
	/* checkpoint 1 begins with page 0 on slot 1: home is still checkpoint 0's baseline */
	run->seq = 1;
	run->state = PN_C_WRITING;
	memcpy(run->snapshot, pn_store_slots(&e->store), 64);
	ck_assert_uint_eq(row->write.shift_target(&e->pctx, 0), PN_SHIFT_IMAGE);
	ck_assert_uint_eq(row->write.shift_target(&e->pctx, 1), 1); /* page 1 still may shift */
	run->state = PN_C_CONTROL_WRITE;
	row->ckpt.control(&e->pctx, run);
	ck_assert_uint_eq(row->write.shift_target(&e->pctx, 0), PN_SHIFT_IMAGE);
	row->ckpt.end(&e->pctx, run); /* the control file naming slot 1 is durable */
	e->store.inflight_valid = false;
	run->state = PN_C_IDLE;
	ck_assert_uint_eq(e->store.base_done[0], 1);
	ck_assert_uint_eq(row->write.shift_target(&e->pctx, 0), 0); /* home is free again */
	ck_assert(!pn_engine_failed(e));
	pn_engine_delete(e);
	pn_scenario_free(&sc);
	/* gen2_early_reuse takes home back while checkpoint 1 runs: G1's check reports it */
	e = engine_of(&sc, "umbra, policy: gen2, mutations: [gen2_early_reuse]");
	run = &e->ckpt.runs[0];
	pn_store_set_slot(&e->store, 0, 1);
	run->seq = 1;
	run->state = PN_C_WRITING;
	memcpy(run->snapshot, pn_store_slots(&e->store), 64);
	ck_assert_uint_eq(e->proto->write.shift_target(&e->pctx, 0), 0);
	ck_assert(pn_engine_failed(e));
	ck_assert_int_eq(pn_engine_violation_of(e)->kind, PN_VIOL_PROTECTED_SLOT);
	run->state = PN_C_IDLE;
	pn_engine_delete(e);
	pn_scenario_free(&sc);
}
END_TEST

/* The checks pn_engine_check runs hold on a fresh engine and on the states the engine makes;
 * each of the two below breaks one of them. */
START_TEST(test_checks_hold)
{
	struct pn_scenario sc;
	struct pn_engine *e = engine_of(&sc, "fpw");
	pn_ckpt_check(&e->ckpt);
	pn_backend_check(&e->bk);
	e->ckpt.seq_begun = 1;
	e->ckpt.runs[0].state = PN_C_WRITING; /* run 1 in progress */
	e->ckpt.runs[0].seq = 1;
	e->procs[0].state = PN_B_INSERT; /* an update with its page pinned and locked */
	e->procs[0].op.op = PN_OP_UPDATE;
	e->procs[0].frame = 3;
	pn_buf_frame(&e->buf, 3)->pins = 1;
	pn_buf_frame(&e->buf, 3)->locked = true;
	pn_ckpt_check(&e->ckpt);
	pn_backend_check(&e->bk);
	pn_engine_delete(e);
	pn_scenario_free(&sc);
}
END_TEST

/* A run in progress that was never begun (its seq beyond ckpt_seq_begun). */
START_TEST(test_ckpt_check_unbegun_run)
{
	struct pn_scenario sc;
	struct pn_engine *e = engine_of(&sc, "fpw");
	e->ckpt.runs[1].state = PN_C_RECORD;
	e->ckpt.runs[1].seq = 1;
	pn_ckpt_check(&e->ckpt);
}
END_TEST

/* A big pool (1,024 frames, fpw: no check_frame hook) checks the frames an event changed
 * right after it (bufpool.h PN_BUF_TOUCHED): a broken frame the pool touched stops the
 * first pn_engine_check, between the rotation's turns. */
static struct pn_engine *big_pool(struct pn_scenario *sc)
{
	struct pn_engine *e = engine_sized(sc, "fpw", 2048, 1024);
	uint32_t n = 0;
	(void)pn_buf_take_touched(&e->buf, &n); /* what init touched */
	e->rcv.active = true; /* a formatted engine not started: its WAL is as recovery's */
	return e;
}

START_TEST(test_engine_check_touched_frame)
{
	struct pn_scenario sc;
	struct pn_engine *e = big_pool(&sc);
	pn_buf_frame(&e->buf, 700)->usage = 6; /* beyond the clock sweep's 5 */
	pn_buf_touch(&e->buf, 700);
	pn_engine_check(e);
}
END_TEST

/* ... and every frame is still reached by the slower rotation (every CHECK_EVERY calls). */
START_TEST(test_engine_check_rotation_reaches_all)
{
	struct pn_scenario sc;
	struct pn_engine *e = big_pool(&sc);
	for (uint32_t call = 0; call < 1024 * 8; call++) /* no abort before the broken frame */
		pn_engine_check(e);
	pn_buf_frame(&e->buf, 1023)->usage = 6;
	for (uint32_t call = 0; call < 1024 * 8; call++)
		pn_engine_check(e);
	pn_engine_delete(e);
	pn_scenario_free(&sc);
}
END_TEST

/* A backend inserting a change into a page it does not hold. */
START_TEST(test_backend_check_unpinned)
{
	struct pn_scenario sc;
	struct pn_engine *e = engine_of(&sc, "umbra");
	e->procs[0].state = PN_B_INSERT;
	e->procs[0].op.op = PN_OP_HINT;
	e->procs[0].frame = 2;
	pn_backend_check(&e->bk);
}
END_TEST

/* A run through every state the rows' steps use: the sub-state starts at 0 on entry. */
START_TEST(test_ckpt_edges)
{
	struct pn_ckpt_run run = {.state = PN_C_IDLE};
	static const enum pn_cstate walk[] = {
		PN_C_WRITING, PN_C_PROTO_SELECT, PN_C_WRITING,       PN_C_WAIT_WRITES,
		PN_C_WRITING, PN_C_WAIT_WRITES,  PN_C_FSYNC_DATA,    PN_C_PROTO_DURABLE,
		PN_C_RECORD,  PN_C_RECORD_FLUSH, PN_C_CONTROL_WRITE, PN_C_CONTROL_FSYNC,
		PN_C_IDLE,
	};
	for (unsigned i = 0; i < PN_ARRAY_LEN(walk); i++) {
		run.proto_sub = 7;
		pn_ckpt_set_state(&run, walk[i]);
		ck_assert_int_eq(run.state, walk[i]);
		bool proto = walk[i] == PN_C_PROTO_SELECT || walk[i] == PN_C_PROTO_DURABLE;
		ck_assert_int_eq(run.proto_sub, proto ? 0 : 7);
	}
	ck_assert_int_eq(pn_ckpt_run_phase(&(struct pn_ckpt_run){.state = PN_C_PROTO_SELECT}),
			 PN_CKPT_PHASE_BEFORE_FSYNC);
	ck_assert_int_eq(pn_ckpt_run_phase(&(struct pn_ckpt_run){.state = PN_C_PROTO_DURABLE}),
			 PN_CKPT_PHASE_AFTER_FSYNC);
}
END_TEST

/* The control file is never written before the data is durable (R5): an edge the table
 * does not have stops the process. */
START_TEST(test_ckpt_illegal_edge)
{
	struct pn_ckpt_run run = {.state = PN_C_WRITING};
	pn_ckpt_set_state(&run, PN_C_CONTROL_WRITE);
}
END_TEST

START_TEST(test_ckpt_no_protocol_step_after_record)
{
	struct pn_ckpt_run run = {.state = PN_C_RECORD};
	pn_ckpt_set_state(&run, PN_C_PROTO_DURABLE);
}
END_TEST

static Suite *protocol_suite(void)
{
	Suite *s = suite_create("protocol");
	TCase *tc = tcase_create("table");
	tcase_add_test(tc, test_row_of_mode);
	tcase_add_test(tc, test_decide_table);
	tcase_add_test(tc, test_decide_mutants);
	tcase_add_test(tc, test_file_sizes);
	tcase_add_test(tc, test_row_memory);
	tcase_add_test(tc, test_frame_memory);
	tcase_add_test(tc, test_pool_spares);
	tcase_add_test(tc, test_gen2_fallback);
	tcase_add_test(tc, test_ckpt_edges);
	tcase_add_test(tc, test_checks_hold);
	tcase_add_test_raise_signal(tc, test_ckpt_check_unbegun_run, SIGABRT);
	tcase_add_test_raise_signal(tc, test_backend_check_unpinned, SIGABRT);
	tcase_add_test_raise_signal(tc, test_engine_check_touched_frame, SIGABRT);
	tcase_add_test_raise_signal(tc, test_engine_check_rotation_reaches_all, SIGABRT);
	tcase_add_test_raise_signal(tc, test_ckpt_illegal_edge, SIGABRT);
	tcase_add_test_raise_signal(tc, test_ckpt_no_protocol_step_after_record, SIGABRT);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(protocol_suite());
	srunner_run_all(r, CK_NORMAL);
	int failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
