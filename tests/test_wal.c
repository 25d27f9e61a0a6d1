/*
 * test_wal.c: the WAL module (src/engine/wal.c) through its own interface: struct pn_wal
 * with real services over a stub environment that holds every submitted I/O until the test
 * completes it. Insert positions and metrics (W1), the flush state machine and its illegal
 * edges (W3), waiters, the WAL-volume trigger, keep_from and the horizon (W4, W6), the ring
 * offsets, and continuing after recovery.
 */
#include "wal.h"

#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define SEG (1u << 20) /* 1 MiB segments: a few records fill one */
#define MAXIO 64

struct stub {
	struct pn_io *ios[MAXIO];
	uint32_t nios;
	uint32_t woken[8];
	uint32_t nwoken;
	uint32_t inserted;
	pn_lsn inserted_end;
	uint32_t seg_calls;
	uint8_t wal_file[2 * PN_XLOG_BLCKSZ]; /* what read_sync returns for the WAL */
};

static struct stub stub;
static struct pn_scenario sc;
static struct pn_services svc;
static struct pn_metrics m;
static struct pn_wal wal;
static uint32_t due_calls;
static pn_lsn horizon_lsn;

static void stub_submit(void *ctx, struct pn_io *io)
{
	struct stub *s = ctx;
	ck_assert_uint_lt(s->nios, MAXIO);
	s->ios[s->nios++] = io;
}
static uint64_t stub_now(void *ctx)
{
	(void)ctx;
	return 5;
}
static void stub_schedule(void *ctx, uint32_t proc, uint64_t delay_ns, uint64_t token)
{
	struct stub *s = ctx;
	(void)delay_ns;
	(void)token;
	s->woken[s->nwoken++ % 8] = proc;
}
static void stub_inserted(void *ctx, const uint8_t *rec, uint32_t len, pn_lsn start, pn_lsn end)
{
	struct stub *s = ctx;
	ck_assert_ptr_nonnull(rec);
	ck_assert_uint_gt(len, 0);
	ck_assert_uint_lt(start, end);
	s->inserted++;
	s->inserted_end = end;
}
static void stub_segment(void *ctx, uint64_t offset, uint64_t len, bool remove)
{
	(void)offset;
	(void)remove;
	ck_assert_uint_eq(len, SEG);
	((struct stub *)ctx)->seg_calls++;
}
static bool stub_read(void *ctx, enum pn_file f, uint64_t off, uint32_t len, uint8_t *out)
{
	struct stub *s = ctx;
	ck_assert_int_eq(f, PN_FILE_WAL);
	(void)off;
	memcpy(out, s->wal_file, len);
	return true;
}

static void segments_due(void *ctx)
{
	(void)ctx;
	due_calls++;
}
static pn_lsn horizon(void *ctx)
{
	(void)ctx;
	return horizon_lsn;
}

static void setup_env(bool unread)
{
	memset(&stub, 0, sizeof(stub));
	memset(&m, 0, sizeof(m));
	due_calls = 0;
	pn_scenario_defaults(&sc);
	sc.storage.wal_segment_size = SEG;
	sc.checkpoint.max_wal_size = 4ull * SEG;
	sc.checkpoint.completion_target = 0.5;
	static struct pn_env_fast fast;
	fast = (struct pn_env_fast){.wal_segment = stub_segment, .wal_unread = unread};
	struct pn_env env = {.ctx = &stub,
			     .submit = stub_submit,
			     .now_ns = stub_now,
			     .schedule = stub_schedule,
			     .read_sync = stub_read,
			     .wal_inserted = stub_inserted,
			     .fast = &fast};
	ck_assert(pn_svc_init(&svc, &env, 64, 2 * sc.storage.page_size, 4));
	ck_assert(pn_wal_init(&wal, &sc, &svc, &m, 42, 4));
	pn_wal_on_segments(&wal, segments_due, NULL);
	pn_wal_set_redo(&wal, pn_wal_insert_start(&wal)); /* as formatting does */
}

static void setup(void) { setup_env(false); }

static void teardown(void)
{
	pn_wal_free(&wal);
	pn_svc_free(&svc);
	pn_scenario_free(&sc);
}

/* A commit-sized record of `bytes` main data. */
static pn_lsn insert(uint32_t bytes, pn_lsn *start)
{
	static uint8_t main[4096];
	struct pn_wal_record r = {.xid = 7, .main_data = main, .main_len = bytes};
	return pn_wal_insert(&wal, &r, PN_REC_XACT_COMMIT, start);
}

/* Completes every I/O submitted so far, in order, each first given to check (if any) as it
 * is at its dispatch; returns how many. */
static uint32_t complete_each(void (*check)(const struct pn_io *io))
{
	uint32_t n = 0;
	while (stub.nios) {
		struct pn_io *io = stub.ios[0];
		if (check)
			check(io);
		memmove(stub.ios, stub.ios + 1, --stub.nios * sizeof(stub.ios[0]));
		pn_io_dispatched(io);
		pn_io_complete(&svc, io);
		n++;
	}
	return n;
}

static uint32_t complete_all(void) { return complete_each(NULL); }

START_TEST(test_init_positions)
{
	pn_lsn start = (pn_lsn)SEG + PN_WAL_LONG_PHD;
	ck_assert_uint_eq(pn_wal_insert_start(&wal), start);
	ck_assert_uint_eq(pn_wal_flushed(&wal), start);
	ck_assert_uint_eq(pn_wal_written(&wal), start);
	ck_assert_uint_eq(pn_wal_keep_from(&wal), start);
	ck_assert_uint_eq(pn_wal_seg_size(&wal), SEG);
	/* CheckPointSegments = 4 / 1.5 = 2: the ring holds 3 * 2 + 4, at least 8 */
	ck_assert_uint_eq(pn_wal_nsegs(&wal), 10);
	ck_assert(!pn_wal_flushing(&wal));
	ck_assert_int_eq(pn_wal_room(&wal, 100), PN_WAL_ROOM_OK);
	ck_assert_uint_eq(pn_wal_file_offset(&wal, 3ull * SEG + 100), 3ull * SEG + 100);
	ck_assert_uint_eq(pn_wal_file_offset(&wal, 13ull * SEG + 100), 3ull * SEG + 100);
}
END_TEST

START_TEST(test_insert_links_and_counts)
{
	pn_lsn s1, s2;
	pn_lsn e1 = insert(100, &s1);
	pn_lsn e2 = insert(100, &s2);
	ck_assert_uint_eq(s1, (pn_lsn)SEG + PN_WAL_LONG_PHD);
	ck_assert_uint_gt(e1, s1);
	ck_assert_uint_ge(s2, e1);    /* W1: the next record starts at or after the end */
	ck_assert_uint_eq(s2 % 8, 0); /* MAXALIGNed */
	ck_assert_uint_eq(e2, pn_wal_insert_lsn(&wal));
	ck_assert_uint_eq(stub.inserted, 2);
	ck_assert_uint_eq(stub.inserted_end, e2);
	ck_assert_uint_eq(m.wal_records, 2);
	ck_assert_uint_eq(m.rec_count[PN_REC_XACT_COMMIT], 2);
	ck_assert_uint_eq(m.wal_bytes, m.rec_bytes[PN_REC_XACT_COMMIT]);
	ck_assert_uint_eq(m.fpi_count, 0);
	/* the ring page holds the first record's bytes */
	const uint8_t *page = pn_wal_ring_page(&wal, s1 - s1 % PN_XLOG_BLCKSZ);
	ck_assert_uint_ne(page[s1 % PN_XLOG_BLCKSZ], 0);
	pn_wal_check(&wal, false);
}
END_TEST

START_TEST(test_flush_state_machine)
{
	pn_lsn end = insert(200, NULL);
	ck_assert(!pn_wal_flush_request(&wal, end, 2));
	ck_assert_int_eq(wal.flush_state, PN_WAL_WRITING);
	ck_assert(pn_wal_flushing(&wal));
	ck_assert_uint_eq(stub.nios, 1); /* one page, one write */
	ck_assert_int_eq(stub.ios[0]->op, PN_IO_WRITE);
	ck_assert_int_eq(stub.ios[0]->file, PN_FILE_WAL);
	pn_wal_check(&wal, false);
	/* a second request while flushing waits for the same flush */
	ck_assert(!pn_wal_flush_request(&wal, end, 3));
	ck_assert_uint_eq(stub.nios, 1);
	struct pn_io *wr = stub.ios[0];
	stub.nios = 0;
	pn_io_dispatched(wr);
	pn_io_complete(&svc, wr);
	ck_assert_int_eq(wal.flush_state, PN_WAL_FSYNC);
	ck_assert_uint_eq(pn_wal_written(&wal), end);
	ck_assert_uint_lt(pn_wal_flushed(&wal), end);
	ck_assert_uint_eq(stub.nios, 1);
	ck_assert_int_eq(stub.ios[0]->op, PN_IO_FSYNC);
	pn_wal_check(&wal, false);
	ck_assert_uint_eq(complete_all(), 1);
	ck_assert_int_eq(wal.flush_state, PN_WAL_IDLE);
	ck_assert_uint_eq(pn_wal_flushed(&wal), end);
	ck_assert_uint_eq(m.wal_flushes, 1);
	ck_assert_uint_eq(stub.nwoken, 2); /* both waiters */
	ck_assert_uint_eq(stub.woken[0], 2);
	ck_assert_uint_eq(stub.woken[1], 3);
	ck_assert(pn_wal_flush_request(&wal, end, 2)); /* already durable */
	ck_assert(pn_io_all_free(&svc));
	pn_wal_check(&wal, false);
}
END_TEST

START_TEST(test_flush_group_follow_up)
{
	pn_lsn e1 = insert(200, NULL);
	ck_assert(!pn_wal_flush_request(&wal, e1, 0));
	pn_lsn e2 = insert(200, NULL); /* inserted during the flush */
	ck_assert(!pn_wal_flush_request(&wal, e2, 1));
	complete_all(); /* first flush ends at e1, wakes 0, starts the next for 1 */
	ck_assert_uint_ge(pn_wal_flushed(&wal), e1);
	complete_all();
	ck_assert_uint_eq(pn_wal_flushed(&wal), e2);
	ck_assert_uint_eq(m.wal_flushes, 2);
	ck_assert_int_eq(wal.flush_state, PN_WAL_IDLE);
}
END_TEST

START_TEST(test_rewait_moves_a_pending_wait)
{
	pn_lsn e1 = insert(200, NULL);
	ck_assert(!pn_wal_flush_request(&wal, e1, 1)); /* flushes up to e1 */
	pn_lsn e2 = insert(200, NULL);
	pn_wal_rewait(&wal, 1, e2); /* proc 1 now waits for e2 */
	pn_wal_rewait(&wal, 2, e2); /* proc 2 waits for nothing: stays so */
	ck_assert_uint_eq(stub.nios, 1);
	struct pn_io *wr = stub.ios[0];
	stub.nios = 0;
	pn_io_dispatched(wr);
	pn_io_complete(&svc, wr); /* the write: the fsync is issued */
	ck_assert_uint_eq(stub.nios, 1);
	struct pn_io *fs = stub.ios[0];
	stub.nios = 0;
	pn_io_dispatched(fs);
	pn_io_complete(&svc, fs);
	ck_assert_uint_eq(pn_wal_flushed(&wal), e1);
	ck_assert_uint_eq(stub.nwoken, 0); /* e1 is not enough for proc 1 */
	ck_assert(wal.waiters[1].waiting);
	ck_assert(!wal.waiters[2].waiting);
	ck_assert_int_eq(wal.flush_state, PN_WAL_WRITING); /* a follow-up flush for it */
	complete_all();
	ck_assert_uint_eq(pn_wal_flushed(&wal), e2);
	ck_assert_uint_eq(stub.nwoken, 1);
	ck_assert_uint_eq(stub.woken[0], 1);
}
END_TEST

START_TEST(test_illegal_edge)
{
	pn_wal_set_state(&wal, PN_WAL_FSYNC); /* IDLE -> FSYNC skips the writes */
}
END_TEST

START_TEST(test_start_flush_twice_writing)
{
	pn_wal_set_state(&wal, PN_WAL_WRITING);
	pn_wal_set_state(&wal, PN_WAL_WRITING);
}
END_TEST

START_TEST(test_segments_trigger)
{
	pn_wal_set_redo(&wal, pn_wal_insert_start(&wal));
	/* fill past CheckPointSegments (2) segments, flushing as we go */
	while (pn_wal_insert_lsn(&wal) < 3ull * SEG + 100) {
		pn_lsn end = insert(4000, NULL);
		if (!pn_wal_flush_request(&wal, end, 0))
			complete_all();
	}
	ck_assert_uint_ge(due_calls, 1);
	ck_assert_uint_gt(stub.seg_calls, 0); /* W6: the next segments were created */
	pn_wal_check(&wal, false);
}
END_TEST

START_TEST(test_keep_from_and_horizon)
{
	pn_lsn redo = pn_wal_insert_start(&wal);
	pn_wal_set_redo(&wal, redo);
	while (pn_wal_insert_lsn(&wal) < 4ull * SEG) {
		pn_lsn end = insert(4000, NULL);
		if (!pn_wal_flush_request(&wal, end, 0))
			complete_all();
	}
	pn_lsn redo2 = pn_wal_insert_start(&wal);
	pn_wal_set_redo(&wal, redo2);
	horizon_lsn = redo + 1000;
	pn_wal_set_horizon(&wal, horizon, NULL);
	pn_wal_checkpoint_done(&wal, redo2);
	ck_assert_uint_eq(pn_wal_keep_from(&wal), redo + 1000); /* the horizon holds it back */
	horizon_lsn = UINT64_MAX;
	uint32_t before = stub.seg_calls;
	pn_wal_checkpoint_done(&wal, redo2);
	ck_assert_uint_eq(pn_wal_keep_from(&wal), redo2);
	ck_assert_uint_gt(stub.seg_calls, before); /* W6: passed segments removed */
	pn_wal_check(&wal, false);
}
END_TEST

START_TEST(test_no_room_when_keep_from_pins_the_ring)
{
	/* W4: with keep_from pinned at the start, the insert position may not wrap the ring */
	uint32_t n = 0;
	while (pn_wal_room(&wal, 4000) == PN_WAL_ROOM_OK && n++ < 100000) {
		pn_lsn end = insert(4000, NULL);
		if (!pn_wal_flush_request(&wal, end, 0))
			complete_all();
	}
	ck_assert_int_eq(pn_wal_room(&wal, 4000), PN_WAL_ROOM_SEGMENTS);
	uint64_t segs = pn_wal_insert_lsn(&wal) / SEG - pn_wal_keep_from(&wal) / SEG;
	ck_assert_uint_lt(segs + 1, pn_wal_nsegs(&wal));
}
END_TEST

START_TEST(test_full_ring_is_not_the_segments)
{
	/* W5: inserts never flushed fill the in-memory ring: that is a write, not a checkpoint */
	uint32_t n = 0;
	while (pn_wal_room(&wal, 4000) == PN_WAL_ROOM_OK && n++ < 100000)
		insert(4000, NULL);
	ck_assert_int_eq(pn_wal_room(&wal, 4000), PN_WAL_ROOM_RING);
	pn_wal_start_flush(&wal, pn_wal_insert_lsn(&wal));
	complete_all();
	ck_assert_int_eq(pn_wal_room(&wal, 4000), PN_WAL_ROOM_OK);
}
END_TEST

/* Stale bytes in every slot of the ring that holds no page still to be written. */
static void poison_free_slots(void)
{
	for (uint32_t i = 0; i < wal.npages; i++)
		if (wal.tags[i] == UINT64_MAX || wal.tags[i] < wal.ring_base)
			memset(wal.pages + (size_t)i * PN_XLOG_BLCKSZ, 0xaa, PN_XLOG_BLCKSZ);
}

/* A pool of 256 buffers: a ring of 640 pages. */
static void big_ring(void)
{
	pn_wal_free(&wal);
	sc.storage.buffers = 256;
	ck_assert(pn_wal_init(&wal, &sc, &svc, &m, 42, 4));
	pn_wal_set_redo(&wal, pn_wal_insert_start(&wal));
	ck_assert_uint_eq(wal.npages, 640);
}

/* An I/O checked against the ring's pages as they are now (its dispatch): the WAL here
 * stays below the ring's 10 segments, so a file offset is the page's LSN. */
static void check_against_ring(const struct pn_io *io)
{
	for (uint32_t off = 0; off < io->len; off += PN_XLOG_BLCKSZ)
		ck_assert_msg(memcmp(io->buf + off, pn_wal_ring_page(&wal, io->offset + off),
				     PN_XLOG_BLCKSZ) == 0,
			      "write at %llu: page %u differs from the ring's",
			      (unsigned long long)io->offset, off / PN_XLOG_BLCKSZ);
}

static uint32_t complete_checked(void) { return complete_each(check_against_ring); }

/* A big ring, with bursts of inserts of up to about 75 pages and a record inserted while the
 * writes are in flight (it reaches the flush's last page): every write carries the ring's
 * bytes at its dispatch. */
START_TEST(test_ring_writes_match)
{
	big_ring();
	uint32_t round = 0;
	pn_lsn end = 0;
	while (pn_wal_insert_lsn(&wal) < 8ull * SEG) {
		uint32_t burst = round % 17 == 0 ? 200 : 1 + round % 4; /* 200: about 75 pages */
		for (uint32_t i = 0; i < burst; i++)
			end = insert(1000 + (round * 977 + i * 131) % 3000, NULL);
		round++;
		if (pn_wal_flush_request(&wal, end, 0))
			continue;
		insert(40, NULL); /* while the writes are in flight */
		while (stub.nios)
			complete_checked();
	}
	ck_assert_uint_gt(round, 100);
}
END_TEST

/* The ring does not zero a page it hands to pn_wal_copy_record: the copy begins every page
 * it enters (walfmt.c WF3: header, then zeros). With stale bytes in every free slot before
 * each insert, over three turns of the ring, the pages the records entered hold no run of
 * 16 stale bytes (more than a CRC or an LSN could make), the zeros past the last record
 * included. */
/* Inserts 3000-byte records until the insert position passes `until`, poisoning the free
 * slots before each: no page a record entered holds a run of 16 stale bytes. */
static void check_pages_begun_whole(pn_lsn until)
{
	pn_lsn start = 0, end = 0;
	while (pn_wal_insert_lsn(&wal) < until) {
		poison_free_slots();
		end = insert(3000, &start);
		for (pn_lsn page = start - start % PN_XLOG_BLCKSZ; page < end;
		     page += PN_XLOG_BLCKSZ) {
			const uint8_t *p = pn_wal_ring_page(&wal, page);
			uint32_t run = 0;
			for (uint32_t i = 0; i < PN_XLOG_BLCKSZ; i++) {
				run = p[i] == 0xaa ? run + 1 : 0;
				ck_assert_msg(run < 16, "stale bytes at %u of the page at %llu", i,
					      (unsigned long long)page);
			}
		}
		if (!pn_wal_flush_request(&wal, end, 0))
			complete_all();
	}
}

START_TEST(test_ring_pages_begun_whole)
{
	check_pages_begun_whole(3ull * wal.npages * PN_XLOG_BLCKSZ);
}
END_TEST

START_TEST(test_start_at_after_recovery)
{
	pn_wal_set_durable(&wal, UINT64_MAX / 2); /* replay's sentinel */
	ck_assert_uint_eq(pn_wal_flushed(&wal), UINT64_MAX / 2);
	pn_wal_check(&wal, true);
	memset(stub.wal_file, 0xAB, sizeof(stub.wal_file));
	pn_lsn end = 2ull * SEG + 3 * PN_XLOG_BLCKSZ + 40;
	pn_wal_start_at(&wal, end, end - 24);
	ck_assert_uint_eq(pn_wal_flushed(&wal), end);
	ck_assert_uint_eq(pn_wal_written(&wal), end);
	ck_assert_uint_eq(pn_wal_insert_lsn(&wal), end);
	const uint8_t *page = pn_wal_ring_page(&wal, end - end % PN_XLOG_BLCKSZ);
	ck_assert_uint_eq(page[39], 0xAB); /* the valid part kept */
	ck_assert_uint_eq(page[40], 0);    /* the rest zeroed */
	pn_lsn s;
	insert(10, &s);
	ck_assert_uint_eq(s, end);
	pn_wal_set_redo(&wal, end);
	pn_wal_check(&wal, false);
}
END_TEST

/* W7: what one run of inserts, flushes and completions shows of the WAL, dispatch by
 * dispatch: every record's start and end and every I/O's op, offset and length, with the
 * metrics after it. Records carry main data, block data and images with and without holes;
 * the run crosses segments (8 of them) and fills the ring. */
#define SHOWN_MAX 40000
struct shown {
	uint64_t v[SHOWN_MAX];
	uint32_t n;
	uint32_t null_bufs, bufs; /* WAL writes without and with a buffer */
};

static void show(struct shown *sh, uint64_t a) { sh->v[sh->n++ % SHOWN_MAX] = a; }

static void unread_run(struct shown *sh)
{
	static uint8_t page[8192], data[300];
	for (uint32_t i = 0; i < sizeof(page); i++)
		page[i] = (uint8_t)(i * 7);
	for (uint32_t round = 0; pn_wal_insert_lsn(&wal) < 8ull * SEG; round++) {
		pn_lsn start, end = 0;
		for (uint32_t i = 0; i < 1 + round % 5; i++) {
			struct pn_wal_block b = {.blkno = round, .data = data, .data_len = 40};
			b.has_image = (round + i) % 3 == 0;
			b.image = page;
			b.hole_offset = (uint16_t)(b.has_image && i % 2 ? 200 + round % 64 : 0);
			b.hole_length = (uint16_t)(b.hole_offset ? 3000 : 0);
			struct pn_wal_record r = {.xid = round,
						  .main_data = data,
						  .main_len = 10 + (round * 37 + i) % 280,
						  .nblocks = 1,
						  .blocks = {b}};
			end = pn_wal_insert(&wal, &r, PN_REC_HEAP_INSERT, &start);
			show(sh, start);
			show(sh, end);
		}
		if (pn_wal_flush_request(&wal, end, 0))
			continue;
		while (stub.nios) {
			struct pn_io *io = stub.ios[0];
			show(sh, (uint64_t)io->op << 32 | io->file);
			show(sh, io->offset);
			show(sh, io->len);
			if (io->op == PN_IO_WRITE) {
				sh->null_bufs += io->buf == NULL;
				sh->bufs += io->buf != NULL;
			}
			memmove(stub.ios, stub.ios + 1, --stub.nios * sizeof(stub.ios[0]));
			pn_io_dispatched(io);
			pn_io_complete(&svc, io);
		}
		show(sh, m.wal_bytes);
		show(sh, m.fpi_bytes);
		show(sh, m.wal_write_bytes);
		show(sh, m.wal_flushes);
	}
}

/* W7: with wal_unread the WAL module shows the same positions, I/Os and metrics as with its
 * bytes built, and builds none: no record reaches wal_inserted, no page is held, no write
 * has a buffer. */
START_TEST(test_unread_same)
{
	static struct shown built, unread;
	memset(&built, 0, sizeof(built));
	memset(&unread, 0, sizeof(unread));
	unread_run(&built);
	struct pn_metrics built_m = m;
	uint32_t built_inserted = stub.inserted, built_segs = stub.seg_calls;
	ck_assert_uint_gt(built_inserted, 1000);
	ck_assert_uint_gt(built.bufs, 100);
	ck_assert_uint_eq(built.null_bufs, 0);
	teardown();
	setup_env(true);
	unread_run(&unread);
	ck_assert_uint_eq(stub.inserted, 0);
	ck_assert_uint_eq(unread.bufs, 0);
	ck_assert_uint_eq(unread.null_bufs, built.bufs);
	ck_assert_ptr_null(
		pn_wal_ring_page(&wal, pn_wal_insert_start(&wal) -
					       pn_wal_insert_start(&wal) % PN_XLOG_BLCKSZ));
	ck_assert_uint_eq(stub.seg_calls, built_segs);
	ck_assert_uint_eq(unread.n, built.n);
	for (uint32_t i = 0; i < PN_MIN(built.n, SHOWN_MAX); i++)
		ck_assert_msg(unread.v[i] == built.v[i], "differs at %u: %llu, built %llu", i,
			      (unsigned long long)unread.v[i], (unsigned long long)built.v[i]);
	ck_assert_int_eq(memcmp(&m, &built_m, sizeof(m)), 0);
}
END_TEST

START_TEST(test_redo_only_forward)
{
	pn_wal_set_redo(&wal, 2ull * SEG);
	pn_wal_set_redo(&wal, SEG);
}
END_TEST

static Suite *wal_suite(void)
{
	Suite *s = suite_create("wal");
	TCase *tc = tcase_create("wal");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_init_positions);
	tcase_add_test(tc, test_insert_links_and_counts);
	tcase_add_test(tc, test_flush_state_machine);
	tcase_add_test(tc, test_flush_group_follow_up);
	tcase_add_test(tc, test_rewait_moves_a_pending_wait);
	tcase_add_test_raise_signal(tc, test_illegal_edge, SIGABRT);
	tcase_add_test_raise_signal(tc, test_start_flush_twice_writing, SIGABRT);
	tcase_add_test(tc, test_segments_trigger);
	tcase_add_test(tc, test_keep_from_and_horizon);
	tcase_add_test(tc, test_no_room_when_keep_from_pins_the_ring);
	tcase_add_test(tc, test_full_ring_is_not_the_segments);
	tcase_add_test(tc, test_ring_pages_begun_whole);
	tcase_add_test(tc, test_ring_writes_match);
	tcase_add_test(tc, test_start_at_after_recovery);
	tcase_add_test(tc, test_unread_same);
	tcase_add_test_raise_signal(tc, test_redo_only_forward, SIGABRT);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(wal_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
