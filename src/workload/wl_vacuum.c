/*
 * wl_vacuum.c: the `vacuum` workload, seed 001's experiment (workload layer):
 *
 *   CREATE TABLE foo AS SELECT generate_series(1, rows); CHECKPOINT; VACUUM foo;
 *
 * The table is populated at format time (the row's page_init): the device starts with
 * the table written and a shutdown checkpoint after it, which is the state CHECKPOINT
 * leaves (every page LSN <= the redo pointer). Then one VACUUM pass, one op per heap page
 * (PN_OP_VACUUM_PAGE, no xid, like lazy vacuum), in block order over the clients.
 *
 * Page bytes (PostgreSQL's heap layout for one int4 column, page_size 8192):
 *   a tuple is t_len 28 = 24 B header (23 + pad, t_hoff 24) + the int4; it takes
 *   MAXALIGN(28) = 32 B, plus a 4 B line pointer, so a page holds
 *   (page_size - 24) / 36 = 226 rows; tuple i (0-based) at page_size - 32 (i + 1);
 *   header: t_xmin = CTAS_XID, t_xmax 0, t_cid 0, t_ctid (blk, i+1), t_infomask2 1,
 *   t_infomask HEAP_XMAX_INVALID 0x0800, t_hoff 24; data = the row's value.
 *   10,000,000 rows -> 44,248 heap pages (the last one with 178 rows).
 *   Visibility map: pages after the heap pages (VM_FORKNUM in the WAL, with the engine's
 *   page number as block number), PageInit'ed (pd_lower 24, pd_upper = pd_special =
 *   page_size), 2 bits per heap block from byte 24: bit 0 ALL_VISIBLE, bit 1 ALL_FROZEN;
 *   one VM page covers (page_size - 24) * 4 = 32,672 heap blocks.
 *
 * One page's VACUUM (change), as lazy_scan_prune and lazy_scan_heap do it for an
 * insert-only page, in the scenario's PostgreSQL version (`postgres:`, default 15):
 *   1. pruning's HeapTupleSatisfiesVacuum sets HEAP_XMIN_COMMITTED on every tuple; with
 *      checksums or wal_log_hints that is MarkBufferDirtyHint (client.c pn_client_hint):
 *      the first change after the checkpoint logs XLOG/FPI_FOR_HINT, 49 B + the page
 *      without its hole, or 44 B without an image under full_page_writes = off (PostgreSQL
 *      writes the record all the same and stamps the page); otherwise the hints dirty the
 *      page without WAL;
 *   2. 16 and 17 only: opportunistic freezing (PG16 commit 1de58df4: freeze the page when
 *      pruning emitted an FPI, since it costs no extra image): Heap2/FREEZE_PAGE in PG16's
 *      layout, one freeze plan for all tuples: main {snapshotConflictHorizon u32, nplans
 *      u16, isCatalogRel u8} (7 B), block 0 data = the plan {xmax u32, t_infomask2 u16,
 *      t_infomask u16, frzflags u8, pad, ntuples u16} (12 B) + ntuples offsets u16:
 *      24 + 20 + 2 + 7 + 12 + 2 n = 517 B for n = 226. PostgreSQL 17 writes the same
 *      freeze as Heap2/PRUNE_VACUUM_SCAN (info 0x20: main {flags u8, horizon u32}, block
 *      data {nplans u16, the plan, the offsets}), also 517 B: we write it under 16's type.
 *      PostgreSQL 15 does not freeze here (the tuples are younger than
 *      vacuum_freeze_min_age, and there is no FPI trigger);
 *   3. visibilitymap_set: Heap2/VISIBLE, block 0 = the VM page (not REGBUF_STANDARD: an
 *      image has no hole), block 1 = the heap page (SAME_REL), REGBUF_NO_IMAGE unless
 *      checksums or wal_log_hints; main {cutoff xid u32, flags u8}: 59 B without images;
 *      flags ALL_VISIBLE, and ALL_FROZEN when the page was frozen. The VM bits are set,
 *      the heap page gets PD_ALL_VISIBLE.
 * After the pass the workload is done; a run without end (bench, crashtest) idles instead,
 * as a second VACUUM of the all-visible, all-frozen table would write nothing, while
 * checkpoints go on.
 * Without checksums VISIBLE leaves the heap page's LSN, as PostgreSQL does (the record carries
 * no image of it): pn_client_insert stamps by format's pn_redo_sets_lsn.
 */
#include "engine.h"
#include "redo_heap.h"
#include "txn.h"
#include "workload.h"

#include <stdio.h>
#include <string.h>

#define TUPLE_T_LEN 28u /* 23 B header + pad + int4 */
#define TUPLE_SPACE 32u /* MAXALIGN(28) */
#define CTAS_XID 740u
#define INFOMASK_XMAX_INVALID 0x0800u
#define INFOMASK_XMIN_COMMITTED 0x0100u
#define INFOMASK_XMIN_FROZEN 0x0300u
#define VM_FORKNUM 2u
#define VM_ALL_VISIBLE PN_VM_ALL_VISIBLE /* page.h */
#define VM_ALL_FROZEN PN_VM_ALL_FROZEN
#define FREEZE_MAIN PN_FREEZE_MAIN /* redo_heap.h: PG16's layout */
#define FREEZE_PLAN PN_FREEZE_PLAN

static uint32_t rows_per_page(uint32_t page_size)
{
	return (page_size - PN_PAGE_HEADER) / (4u + TUPLE_SPACE);
}

static uint32_t heap_blocks_per_vm_page(uint32_t page_size) { return pn_vm_heap_blocks(page_size); }

struct vacuum {
	struct wl_base b;     /* b.txns_started: the heap pages handed out */
	uint32_t table_pages; /* heap pages of the table (the VM pages follow) */
};

static bool init(struct pn_client_setup *setup, void **state)
{
	uint64_t per = rows_per_page(setup->page_size);
	uint64_t heap = (setup->sc->workload.rows + per - 1) / per;
	if (setup->sc->workload.rows == 0 || heap > UINT32_MAX / 2) {
		snprintf(setup->error, setup->error_size,
			 "%s: workload.rows is %llu; the vacuum workload needs 1 to %llu rows",
			 setup->sc->path, (unsigned long long)setup->sc->workload.rows,
			 (unsigned long long)(UINT32_MAX / 2) * per);
		return false;
	}
	uint32_t per_vm = heap_blocks_per_vm_page(setup->page_size);
	uint32_t vm = (uint32_t)((heap + per_vm - 1) / per_vm);
	/* The relation is sized by the rows: storage.pages is replaced (docs/scenarios.md). */
	setup->heap_pages = (uint32_t)heap + vm;
	setup->pages = setup->heap_pages + setup->slru_pages;
	if (!wl_state_new(setup, state, sizeof(struct vacuum)))
		return false;
	struct vacuum *v = *state;
	v->table_pages = (uint32_t)heap;
	return wl_base_init(&v->b, setup, false);
}

/* The visibility-map page of heap page `p` (pinned with it). */
static uint32_t extra_pages(const void *state, const struct pn_client *c, uint32_t *pages)
{
	const struct vacuum *v = state;
	uint32_t p = c->op->page;
	if (c->op->op != PN_OP_VACUUM_PAGE || p >= v->table_pages)
		return 0;
	pages[0] = v->table_pages + p / heap_blocks_per_vm_page(v->b.page_size);
	return 1;
}

static void header(uint8_t *page, uint32_t page_size, uint16_t lower, uint16_t upper)
{
	pn_put16(page + 12, lower);
	pn_put16(page + 14, upper);
	pn_put16(page + 16, (uint16_t)page_size);
	pn_put16(page + 18, (uint16_t)(page_size | 4u));
}

static void page_init(const void *state, uint32_t p, uint8_t *page)
{
	const struct vacuum *v = state;
	uint32_t ps = v->b.page_size, per = rows_per_page(ps), heap = v->table_pages;
	memset(page, 0, ps);
	if (p >= heap) { /* a visibility-map page: PageInit, all bits clear */
		header(page, ps, PN_PAGE_HEADER, (uint16_t)ps);
		return;
	}
	uint64_t first = (uint64_t)p * per;
	uint32_t n = (uint32_t)PN_MIN((uint64_t)per, v->b.sc->workload.rows - first);
	header(page, ps, (uint16_t)(PN_PAGE_HEADER + 4u * n), (uint16_t)(ps - n * TUPLE_SPACE));
	for (uint32_t i = 0; i < n; i++) {
		uint32_t off = ps - (i + 1) * TUPLE_SPACE;
		uint8_t *t = page + off;
		pn_put16(page + PN_PAGE_HEADER + 4 * i, (uint16_t)off);
		pn_put16(page + PN_PAGE_HEADER + 4 * i + 2, TUPLE_T_LEN);
		pn_put32(t, CTAS_XID);                 /* t_xmin */
		pn_put16(t + 12, (uint16_t)(p >> 16)); /* t_ctid: block hi, lo, offset */
		pn_put16(t + 14, (uint16_t)p);
		pn_put16(t + 16, (uint16_t)(i + 1));
		pn_put16(t + 18, 1); /* t_infomask2: one attribute */
		pn_put16(t + 20, INFOMASK_XMAX_INVALID);
		t[22] = PN_PAGE_HEADER;                      /* t_hoff */
		pn_put32(t + 24, (uint32_t)(first + i + 1)); /* generate_series value */
	}
}

static enum pn_client_next next(void *state, const struct pn_client *c, struct pn_step *out)
{
	struct vacuum *v = state;
	if (v->b.txns_started >= v->table_pages) /* the pass is over; run without end: idle */
		return pn_workload_endless(&v->b) ? PN_CLIENT_WAIT : PN_CLIENT_DONE;
	*out = (struct pn_step){.op = PN_OP_VACUUM_PAGE,
				.client = c->id,
				.page = (uint32_t)v->b.txns_started++};
	return PN_CLIENT_OP;
}

/* Tuple i's header if the line pointer is sane, else NULL. */
static uint8_t *tuple(uint8_t *page, uint32_t page_size, uint32_t i)
{
	if (i >= pn_page_nitems(page))
		return NULL;
	uint32_t off = pn_get16(page + PN_PAGE_HEADER + 4 * i);
	uint32_t len = pn_get16(page + PN_PAGE_HEADER + 4 * i + 2);
	if (off < PN_PAGE_HEADER || len < PN_TUPLE_HEADER || off + len > page_size)
		return NULL;
	return page + off;
}

/* 1: hint bits on every tuple (client.c's pn_client_hint: FPI_FOR_HINT when they are
 * logged, with its image unless full_page_writes is off). True if it logged an image. */
static bool prune(const struct vacuum *v, const struct pn_client *c, uint8_t *page)
{
	uint32_t n = pn_page_nitems(page), set = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *t = tuple(page, v->b.page_size, i);
		if (t && !(pn_get16(t + 20) & INFOMASK_XMIN_COMMITTED)) {
			pn_put16(t + 20, pn_get16(t + 20) | INFOMASK_XMIN_COMMITTED);
			set++;
		}
	}
	if (set == 0)
		return false;
	pn_client_changed(c, 2u * set);
	return pn_client_hint(c, pn_client_frame(c, 0), c->op->page, page);
}

/* 2: Heap2/FREEZE_PAGE, PG16 layout, one plan freezing every tuple (PostgreSQL 16 and 17
 * only: freezes() below). */
static void freeze(const struct vacuum *v, const struct pn_client *c, uint8_t *page)
{
	uint32_t n = pn_page_nitems(page), ps = v->b.page_size, frame = pn_client_frame(c, 0);
	uint8_t main[FREEZE_MAIN], data[FREEZE_PLAN + 2 * 512];
	PN_ASSERT(n > 0 && n <= 512);
	uint8_t *t0 = tuple(page, ps, 0);
	PN_ASSERT(t0 != NULL);
	pn_put32(main, CTAS_XID); /* snapshotConflictHorizon */
	pn_put16(main + 4, 1);    /* nplans */
	main[6] = 0;              /* isCatalogRel */
	memset(data, 0, FREEZE_PLAN);
	pn_put16(data + 4, pn_get16(t0 + 18));                        /* t_infomask2 */
	pn_put16(data + 6, pn_get16(t0 + 20) | INFOMASK_XMIN_FROZEN); /* t_infomask */
	pn_put16(data + 10, (uint16_t)n);                             /* ntuples */
	for (uint32_t i = 0; i < n; i++)
		pn_put16(data + FREEZE_PLAN + 2 * i, (uint16_t)(i + 1));
	struct pn_wal_record rec = {.nblocks = 1, .main_data = main, .main_len = FREEZE_MAIN};
	struct pn_wal_block *b = &rec.blocks[0];
	b->blkno = c->op->page;
	b->data = data;
	b->data_len = (uint16_t)(FREEZE_PLAN + 2 * n);
	if (!pn_redo_heap2_freeze(page, ps, &rec, b))
		PN_ASSERT(!"a freeze plan that does not fit its page");
	pn_client_protect(c, b, c->op->page, page, PN_REG_STANDARD);
	pn_client_insert(c, &rec, PN_REC_HEAP2_FREEZE_PAGE, &frame);
	pn_client_changed(c, 2u * n);
}

/* 3: Heap2/VISIBLE: block 0 the VM page, block 1 the heap page. */
static void set_visible(const struct vacuum *v, const struct pn_client *c, uint8_t *page,
			bool frozen)
{
	const struct pn_scenario *sc = v->b.sc;
	uint8_t main[5];
	pn_put32(main, CTAS_XID); /* cutoff xid */
	main[4] = (uint8_t)(VM_ALL_VISIBLE | (frozen ? VM_ALL_FROZEN : 0));
	struct pn_wal_record rec = {.nblocks = 2, .main_data = main, .main_len = 5};
	rec.blocks[0].blkno = pn_client_blkno(c, 1);
	rec.blocks[0].fork = VM_FORKNUM;
	rec.blocks[1].blkno = c->op->page;
	uint8_t *vm = pn_client_page(c, 1);
	for (uint32_t i = 0; i < 2; i++)
		if (!pn_redo_heap2_visible(i ? page : vm, v->b.page_size, &rec, &rec.blocks[i]))
			PN_ASSERT(!"a VISIBLE record that does not fit its page");
	pn_client_protect(c, &rec.blocks[0], rec.blocks[0].blkno, vm, PN_REG_PLAIN);
	if (sc->protocol.checksums || sc->protocol.wal_log_hints) /* else REGBUF_NO_IMAGE */
		pn_client_protect(c, &rec.blocks[1], c->op->page, page, PN_REG_STANDARD);
	uint32_t frames[2] = {pn_client_frame(c, 1), pn_client_frame(c, 0)};
	pn_client_insert(c, &rec, PN_REC_HEAP2_VISIBLE, frames);
	pn_client_changed(c, 3);
}

/* Whether the page is frozen after its pruning logged an image: PostgreSQL 16's
 * opportunistic freezing (17 keeps the rule, in its combined prune/freeze record); 15 does
 * not freeze a page whose tuples are younger than vacuum_freeze_min_age. */
static bool freezes(const struct pn_scenario *sc, bool fpi)
{
	return fpi && sc->postgres != PN_PG15;
}

static void change(void *state, const struct pn_client *c)
{
	const struct vacuum *v = state;
	uint8_t *page = pn_client_page(c, 0);
	PN_ASSERT(pn_client_pinned(c) == 2);
	if (!(pn_get16(page + 10) & PN_PD_ALL_VISIBLE)) { /* else nothing left to do here */
		bool frozen = freezes(v->b.sc, prune(v, c, page));
		if (frozen)
			freeze(v, c, page);
		set_visible(v, c, page, frozen);
	}
}

const struct pn_client_ops pn_workload_vacuum = {
	.name = "vacuum",
	.init = init,
	.free = wl_base_only_free,
	.page_init = page_init,
	.page_init_fixed = page_init, /* state it reads never changes */
	.next = next,
	.change = change,
	.extra_pages = extra_pages,
};
