/*
 * wl_btree.c: the `btree_dedup` workload, seed 004's experiment (workload layer): random
 * inserts of int4 keys drawn uniformly from `distinct_keys` values into a deduplicating
 * btree (PostgreSQL 13+ nbtree), `inserts` in all, spread evenly over `transactions`
 * transactions that each end with a commit.
 *
 * The index is its leaf level: it starts as one empty leaf (page 0) and grows by splits
 * into the free pages after it (every page is formatted as an empty leaf, so any page
 * reads back valid). The inner levels are the generator's directory in memory (which
 * leaf holds which keys, each leaf's right sibling): what the inner pages would say, with
 * none of their WAL (no INSERT_UPPER, no NEWROOT, no metapage). One insert:
 *   1. INSERT_LEAF when the tuple fits;
 *   2. else a deduplication pass (DEDUP) if the leaf has equal keys, then INSERT_LEAF if it
 *      fits now;
 *   3. else a split (SPLIT_L / SPLIT_R, its own op so that the new page and the right
 *      sibling are pinned first), at the key boundary nearest to half the leaf's bytes
 *      (split_point: a leaf of one key splits among its items, as _bt_findsplitloc's
 *      single-value strategy does), the new tuple going in with it (as _bt_split's
 *      newitem); if another client split the leaf meanwhile, the insert again into the
 *      leaf that holds its key now.
 * Growth: inserts are spread over the transactions the run was sized for, and a run
 * without end (bench, crashtest) repeats that pattern; once every page is a leaf, a split
 * recycles one (recycle(): it leaves the directory, its key range joining its left
 * neighbour's, and the split rebuilds it), so the index never needs more pages.
 * Duplicates: a key's items may fill a leaf (posting tuples are capped at BTMaxItemSize, so
 * a leaf of one key holds several); that leaf splits among them and the key is then on
 * more than one leaf. The directory's low keys are non-decreasing, equal ones allowed, and a
 * key goes to the last leaf whose low key is <= it: the rightmost leaf of a key, where
 * PostgreSQL's heap-TID tiebreaker sends a growing heap's new duplicates. So the inserts a
 * key gets are not bounded, within the sized room or past it.
 * The table: each insert first writes its row (Heap/INSERT, 59 B: an int4 column, t_len 28;
 * +INIT and REGBUF_WILL_INIT on a page's first row) on the client's own table page (as a
 * backend's cached target block), the table's pages following the index's; then its
 * index entry, as ExecInsert does; the images of the table pages come with it under
 * full_page_writes, and so does the WAL volume that triggers checkpoints.
 * Left out: the table's free-space map, the rest of PostgreSQL's split-point heuristics (fillfactor, the
 * default strategy's split interval and suffix-truncation penalty: here the key boundary
 * nearest the middle), heap TIDs in the pivot (the left's high key is the right's first
 * key, with a zero TID), high-key items on the pages (the split logs the left's high key).
 *
 * Leaf page bytes (PostgreSQL's nbtree leaf layout, simplified where noted):
 *   24 B page header; pd_special = page_size - 16; line pointers {lp_off u16, lp_len u16}
 *   in key order (no high key); tuples from pd_special
 *   down; special space 16 B: btpo_prev u32, btpo_next u32, btpo_level u32 (0),
 *   btpo_flags u16 (BTP_LEAF 0x0001), btpo_cycleid u16.
 *   plain tuple, 16 B: 0 heap TID {bi_hi u16, bi_lo u16, ip_posid u16}, 6 t_info u16
 *   (size), 8 key u32, 12 zero (btree.c's index tuple: its u64 key at 8 reads the same);
 *   posting tuple, MAXALIGN(16 + 6 n) B: 0 {0, 16 (offset of the TIDs), n | 0x2000}
 *   (BT_IS_POSTING), 6 t_info u16 (size | 0x2000 INDEX_ALT_TID_MASK), 8 key u32, 12 zero,
 *   16 n heap TIDs of 6 B in order; at most posting_max() bytes (BTMaxItemSize: 2704 for
 *   8 KiB pages, a third of smaller pages, at most 2704 for larger ones).
 *   Heap TIDs: (xid, n-th insert of the transaction), increasing as a growing heap's are.
 *
 * Records:
 *   Btree/INSERT_LEAF (11, 0x00) and SPLIT_L / SPLIT_R (11, 0x30 / 0x40): redo_btree.c's
 *     records and redo, the same as pgbench's and tpcc's (pn_btree_split_record builds a split: the
 *     old right sibling is its third block). INSERT_LEAF with the 16 B tuple is 64 B (53 +
 *     image with an FPI).
 *   Btree/DEDUP (11, 0x60): when a tuple does not fit (_bt_dedup_pass): main
 *     xl_btree_dedup {nintervals u16}; block 0 data = intervals {baseoff u16, nitems u16},
 *     runs of equal keys with at least two items: 24 + 20 + 2 + 2 + 4 k B. Redo
 *     (redo_btree.c): the page's tuples are rebuilt in order, each interval merged into one
 *     posting tuple (TIDs of its items in order), every tuple re-placed from pd_special
 *     down (as the new page _bt_dedup_pass builds). Often the first change of a leaf after a checkpoint, so it
 *     carries the FPI under full_page_writes (the seed's point).
 */
#include "engine.h"
#include "redo_btree.h"
#include "redo_heap.h"
#include "txn.h"
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPECIAL PN_BTREE_SPECIAL /* btree.h: the leaf and posting-tuple layout */
#define PLAIN PN_BTREE_PLAIN
#define POSTING_HDR PN_BTREE_POSTING_HDR
#define TID PN_BTREE_TID

/* The generator's own state (the row's state, one allocation): the leaf directory (what the inner
 * pages would say: leaf i of nleaves, in key order, holds keys from low[i] up, low[]
 * non-decreasing: equal low keys after a single-value split), each page's
 * right sibling, and per client an insert waiting for its leaf's split. */
enum { BT_IDLE, BT_SPLIT_DUE, BT_RETRY_DUE };
#define BT_SPARE 64u
#define BT_RECYCLE_POLL_NS 100000u
struct bt_client {
	uint32_t state, key, leaf, new_page;
	/* the table's page this client inserts into (its own, as a backend's cached target
	 * block), the tuples on it, and whether the op's heap insert is still to be made */
	uint32_t heap_page, heap_rows;
	bool heap_due;
};
struct bt_state {
	struct wl_base b; /* first; b.clients[i].txn_pos/txn_len: client i's inserts */
	uint32_t nleaves, max_leaves, next_free;
	uint32_t heap_first, heap_count, heap_next, heap_per_page; /* the table's pages */
	uint64_t txns_sized; /* workload.transactions at init: inserts per transaction */
	uint64_t recycled;   /* splits that took a recycled leaf (past the sized inserts) */
	uint64_t single_value_splits; /* splits of a leaf of one key among that key's items */
	uint32_t nclients;
	uint32_t spare[BT_SPARE], nspare; /* new pages a split took and did not use */
	uint32_t *low, *page, *next;
	struct bt_client *client;
};
#define NO_PAGE 0u            /* P_NONE: page 0 is the leftmost leaf, nobody's right sibling */
#define NO_HEAP UINT32_MAX    /* a client that has no table page yet */
#define HEAP_T_LEN 28u        /* the table's row: 24 B header (23 + pad) + the int4 key */
#define SINGLE_VALUE_FILL 96u /* BTREE_SINGLEVAL_FILLFACTOR: % of a leaf of one key kept left */

/* Pages a run can need: every leaf at least a third full of plain tuples (20 B each). */
uint64_t pn_scenario_btree_leaves(const struct pn_scenario *sc)
{
	uint64_t bytes = 20u * sc->workload.inserts;
	return 3u * bytes / (sc->storage.page_size - PN_PAGE_HEADER - SPECIAL) + 4u;
}

static void free_state(void *state)
{
	struct bt_state *st = state;
	wl_base_free(&st->b);
	free(st);
}

static bool init(struct pn_client_setup *setup, void **state)
{
	const struct pn_scenario *sc = setup->sc;
	uint64_t l = pn_scenario_btree_leaves(sc);
	if (l > UINT32_MAX / 4 || sc->workload.inserts / 8 > UINT32_MAX / 4 ||
	    sc->workload.transactions == 0) {
		snprintf(
			setup->error, setup->error_size,
			"%s: btree_dedup with %llu inserts and %llu transactions: transactions must "
			"be at least 1, and the index at most %u pages; lower inserts",
			sc->path, (unsigned long long)sc->workload.inserts,
			(unsigned long long)sc->workload.transactions, UINT32_MAX / 4);
		return false;
	}
	size_t bytes = sizeof(struct bt_state) + 3u * l * sizeof(uint32_t) +
		       sc->workload.clients * sizeof(struct bt_client);
	if (!wl_state_new(setup, state, bytes))
		return false;
	struct bt_state *st = *state;
	st->client = (struct bt_client *)(st + 1);
	st->low = (uint32_t *)(st->client + sc->workload.clients);
	st->page = st->low + l;
	st->next = st->page + l;
	st->max_leaves = (uint32_t)l;
	st->nleaves = 1; /* page 0: the root leaf, every key */
	st->next_free = 1;
	st->txns_sized = sc->workload.transactions;
	st->nclients = sc->workload.clients;
	st->heap_per_page = pn_heap_rows_per_page(setup->page_size, HEAP_T_LEN, 100);
	st->heap_first = (uint32_t)l;
	st->heap_count = (uint32_t)(sc->workload.inserts / st->heap_per_page) + st->nclients + 1;
	for (uint32_t i = 0; i < st->nclients; i++)
		st->client[i].heap_page = NO_HEAP;
	/* The index and its table are sized by the workload: storage.pages is replaced
	 * (docs/scenarios.md). */
	setup->heap_pages = (uint32_t)l + st->heap_count;
	setup->pages = setup->heap_pages + setup->slru_pages;
	return wl_base_init(&st->b, setup, true);
}

/* The leaf a key belongs to now: the last one whose low key is <= key. */
static uint32_t leaf_of(const struct bt_state *st, uint32_t key)
{
	uint32_t lo = 0, hi = st->nleaves;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (st->low[mid] <= key)
			lo = mid;
		else
			hi = mid;
	}
	return st->page[lo];
}

/* Every index page starts as an empty leaf: page 0 is the root leaf, the others are the
 * free pages splits take (in page order), so that any page reads back as a valid page; the
 * table's pages (after them) as empty heap pages. */
static void page_init(const void *state, uint32_t p, uint8_t *page)
{
	const struct bt_state *st = state;
	if (p < st->heap_first) {
		pn_btree_leaf_fill(page, st->b.page_size, NULL, 0, PLAIN); /* btree.c's */
		return;
	}
	memset(page, 0, st->b.page_size); /* LSN 0 */
	pn_heap_page_init(page, st->b.page_size);
}

/* ---- the generator ---------------------------------------------------------------------- */

/* A page some client's split is about to use (its left leaf, that leaf's right sibling or
 * its new page): not one to recycle. */
static bool page_busy(const struct bt_state *st, uint32_t nclients, uint32_t pg)
{
	for (uint32_t i = 0; i < nclients; i++) {
		const struct bt_client *c = &st->client[i];
		if (c->state == BT_IDLE)
			continue;
		if (c->leaf == pg || st->next[c->leaf] == pg ||
		    (c->state == BT_RETRY_DUE && c->new_page == pg))
			return true;
	}
	return false;
}

/* Past the inserts the index was sized for (a run without end) every page is a leaf: the
 * leaf with the lowest directory position past the leftmost that no split uses leaves the
 * directory (its key range joins its left neighbour's, as index vacuum would empty it of
 * the entries of rows deleted meanwhile) and becomes client's new page: the split rebuilds
 * it (REGBUF_WILL_INIT). Rotating through positions spreads the reuse over the index. */
static bool recycle(struct bt_state *st, uint32_t client)
{
	if (st->nspare > 0) {
		st->client[client].new_page = st->spare[--st->nspare];
		return true;
	}
	for (uint32_t n = 0; n + 1 < st->nleaves; n++) {
		uint32_t i = 1 + (uint32_t)((st->recycled + n) % (st->nleaves - 1));
		uint32_t pg = st->page[i];
		if (page_busy(st, st->nclients, pg))
			continue;
		st->next[st->page[i - 1]] = st->next[pg];
		memmove(st->low + i, st->low + i + 1, (st->nleaves - i - 1) * sizeof(uint32_t));
		memmove(st->page + i, st->page + i + 1, (st->nleaves - i - 1) * sizeof(uint32_t));
		st->nleaves--;
		st->client[client].new_page = pg;
		st->recycled++;
		return true;
	}
	return false;
}

/* The table page client's next row goes to: its own page while it has room, else the
 * next page of the table in order (a new page: the insert is +INIT). Past the sized
 * inserts (a run without end) the table's pages are taken again from the first, skipping
 * those another client holds, as a table emptied meanwhile would be refilled. */
static void heap_target(struct bt_state *st, uint32_t client)
{
	struct bt_client *c = &st->client[client];
	c->heap_due = true;
	if (c->heap_page != NO_HEAP && c->heap_rows < st->heap_per_page)
		return;
	for (;;) {
		uint32_t pg = st->heap_first + st->heap_next++ % st->heap_count;
		bool held = false;
		for (uint32_t i = 0; i < st->nclients; i++)
			held |= i != client && st->client[i].heap_page == pg;
		if (!held) {
			c->heap_page = pg;
			c->heap_rows = 0;
			return;
		}
	}
}

static enum pn_client_next next(void *state, const struct pn_client *cl, struct pn_step *out)
{
	struct bt_state *st = state;
	const struct pn_scenario *sc = st->b.sc;
	uint32_t client = cl->id;
	struct bt_client *c = &st->client[client];
	struct wl_client *p = &st->b.clients[client];
	*out = (struct pn_step){.op = PN_OP_BT_INSERT, .client = client};
	if (c->state == BT_SPLIT_DUE) { /* the insert found its leaf full: split it first */
		if (st->next_free < st->max_leaves) {
			c->new_page = st->next_free++;
		} else if (!recycle(st, client)) {
			pn_client_wake(cl, client, BT_RECYCLE_POLL_NS); /* every leaf is busy */
			return PN_CLIENT_WAIT;
		}
		c->state = BT_RETRY_DUE;
		*out = (struct pn_step){.op = PN_OP_BT_SPLIT,
					.client = client,
					.page = c->leaf,
					.key = c->key};
		return PN_CLIENT_OP;
	}
	if (c->state == BT_RETRY_DUE) { /* then the insert again, into its leaf now */
		c->state = BT_IDLE;
		out->key = c->key;
		out->page = leaf_of(st, c->key);
		return PN_CLIENT_OP;
	}
	if (p->txn_pos < p->txn_len) {
		p->txn_pos++;
		out->key = (uint32_t)pn_client_random(cl, 0, sc->workload.distinct_keys - 1);
		out->page = leaf_of(st, out->key);
		heap_target(st, client);
		return PN_CLIENT_OP;
	}
	enum pn_client_next n;
	if (!pn_workload_txn_next(&st->b, cl, out, &n))
		return n;
	/* inserts spread over the transactions the run was sized for; a run without end
	 * (bench, crashtest) repeats that pattern */
	uint64_t k = (st->b.txns_started - 1) % st->txns_sized, ins = sc->workload.inserts;
	uint64_t t = st->txns_sized;
	p->txn_len = (uint32_t)(ins * (k + 1) / t - ins * k / t);
	p->txn_pos = 0;
	if (p->txn_len == 0) { /* more transactions than inserts: an empty one */
		out->op = PN_OP_COMMIT;
		return PN_CLIENT_OP;
	}
	return next(state, cl, out);
}

/* ---- page access ------------------------------------------------------------------------ */

/* BTMaxItemSize: a third of the page, less headers, less a TID (2704 B for 8 KiB pages). */
static uint32_t posting_max(uint32_t page_size) { return pn_btree_posting_max(page_size); }

static uint32_t nitems(const uint8_t *page) { return pn_page_nitems(page); }

/* Item i's tuple if its line pointer is sane (i 0-based), else NULL (btree.c's). */
static const uint8_t *item(const uint8_t *page, uint32_t page_size, uint32_t i, uint32_t *len)
{
	return pn_btree_leaf_item(page, page_size, i, len);
}

static uint32_t ntids(const uint8_t *t, uint32_t len) { return pn_btree_ntids(t, len); }

static bool fits(const uint8_t *page, uint32_t need)
{
	return (uint32_t)pn_get16(page + 14) >= pn_get16(page + 12) + need + 4u;
}

/* ---- one insert (insert) ---------------------------------------------------------------- */

/* _bt_dedup_pass: the intervals of equal keys, each at most posting_max() once merged. */
static uint32_t plan_dedup(const uint8_t *page, uint32_t page_size, uint8_t *data)
{
	uint32_t n = nitems(page), k = 0, len = 0;
	for (uint32_t i = 0; i < n;) {
		const uint8_t *t = item(page, page_size, i, &len);
		uint32_t key = pn_get32(t + 8), tot = ntids(t, len), cnt = 1;
		while (i + cnt < n) {
			const uint8_t *u = item(page, page_size, i + cnt, &len);
			if (pn_get32(u + 8) != key ||
			    PN_ALIGN8(POSTING_HDR + (tot + ntids(u, len)) * TID) >
				    posting_max(page_size))
				break;
			tot += ntids(u, len);
			cnt++;
		}
		if (cnt >= 2) {
			pn_put16(data + 4 * k, (uint16_t)(i + 1));
			pn_put16(data + 4 * k + 2, (uint16_t)cnt);
			k++;
		}
		i += cnt;
	}
	return k;
}

static void dedup(const struct bt_state *st, const struct pn_client *c, uint8_t *page)
{
	const struct pn_scenario *sc = st->b.sc;
	uint32_t frame = pn_client_frame(c, 0);
	uint8_t data[4 * 2048]; /* intervals: at most one per two items */
	uint8_t main[2];
	PN_ASSERT(nitems(page) <= 4096);
	uint32_t k = plan_dedup(page, st->b.page_size, data);
	if (k == 0)
		return;
	pn_put16(main, (uint16_t)k);
	struct pn_wal_record rec = {.xid = c->xid, .nblocks = 1, .main_data = main, .main_len = 2};
	struct pn_wal_block *b = &rec.blocks[0];
	b->blkno = c->op->page;
	b->data = data;
	b->data_len = (uint16_t)(4 * k);
	if (!pn_redo_btree_dedup(page, st->b.page_size, &rec, b))
		PN_ASSERT(!"a deduplication that does not fit its page");
	if (!(sc->protocol.mutations & PN_MUT_DEDUP_NO_IMAGE)) /* else REGBUF_NO_IMAGE */
		pn_client_protect(c, b, c->op->page, page, PN_REG_STANDARD);
	pn_client_insert(c, &rec, PN_REC_BTREE_DEDUP, &frame);
	pn_client_changed(c, 4u * k);
}

/* The index tuple of op c->op's key; heap TID (xid, n-th op of the transaction), increasing
 * as a growing heap's are. */
static void new_tuple(const struct pn_client *c, uint8_t *tup)
{
	pn_itup_make(tup, PLAIN, c->op->key, c->xid, (uint16_t)c->ops_in_txn);
}

/* heap_insert of the row (Heap/INSERT, +INIT on the page's first row): main {offnum u16,
 * flags u8}, block 0 data xl_heap_header {t_infomask2 1, t_infomask XMAX_INVALID, t_hoff
 * 24} + the row from byte 23 (a pad byte, the int4 key): 59 B, as PostgreSQL's. */
static void heap_insert(struct bt_state *st, const struct pn_client *c)
{
	struct bt_client *bc = &st->client[c->id];
	uint8_t *page = pn_client_page(c, 1), main[3], data[10];
	uint32_t frame = pn_client_frame(c, 1);
	bool init = bc->heap_rows == 0;
	PN_ASSERT(pn_client_blkno(c, 1) == bc->heap_page && bc->heap_rows < st->heap_per_page);
	pn_put16(main, (uint16_t)(bc->heap_rows + 1)); /* offnum */
	main[2] = 0;
	pn_put16(data, 1);                        /* t_infomask2: one attribute */
	pn_put16(data + 2, PN_HEAP_XMAX_INVALID); /* t_infomask */
	data[4] = PN_TUPLE_HEADER;                /* t_hoff */
	data[5] = 0;                              /* byte 23: pad */
	pn_put32(data + 6, c->op->key);           /* the row's k */
	struct pn_wal_record rec = {.xid = c->xid, .nblocks = 1, .main_data = main, .main_len = 3};
	struct pn_wal_block *b = &rec.blocks[0];
	b->blkno = bc->heap_page;
	b->data = data;
	b->data_len = sizeof(data);
	bool ok = init ? pn_redo_heap_insert_init(page, st->b.page_size, &rec, b)
		       : pn_redo_heap_insert(page, st->b.page_size, &rec, b);
	PN_ASSERT(ok);
	pn_client_protect(c, b, bc->heap_page, page, init ? PN_REG_WILL_INIT : PN_REG_STANDARD);
	pn_client_insert(c, &rec, init ? PN_REC_HEAP_INSERT_INIT : PN_REC_HEAP_INSERT, &frame);
	pn_client_changed(c, HEAP_T_LEN);
	bc->heap_rows++;
	bc->heap_due = false;
}

static void insert(struct bt_state *st, const struct pn_client *c)
{
	uint8_t *page = pn_client_page(c, 0);
	uint32_t ps = st->b.page_size, frame = pn_client_frame(c, 0);
	uint8_t tup[PLAIN], main[2];
	struct bt_client *bc = &st->client[c->id];
	PN_ASSERT(pn_btree_is_leaf(page, ps));
	if (bc->heap_due) /* the table's row first, then its index entry (ExecInsert) */
		heap_insert(st, c);
	if (!fits(page, PLAIN))
		dedup(st, c, page);
	if (!fits(page, PLAIN)) { /* _bt_split: the leaf splits first, then the insert again */
		bc->state = BT_SPLIT_DUE;
		bc->key = c->op->key;
		bc->leaf = c->op->page;
		return;
	}
	new_tuple(c, tup);
	pn_put16(main, pn_btree_insert_offnum(page, c->op->key));
	struct pn_wal_record rec = {.xid = c->xid, .nblocks = 1, .main_data = main, .main_len = 2};
	struct pn_wal_block *b = &rec.blocks[0];
	b->blkno = c->op->page;
	b->data = tup;
	b->data_len = PLAIN;
	pn_rec_ids(PN_REC_BTREE_INSERT_LEAF, &rec.rmid, &rec.info);
	if (!pn_redo_apply(page, ps, &rec, b))
		PN_ASSERT(!"an insert that does not fit its leaf");
	pn_client_protect(c, b, c->op->page, page, PN_REG_STANDARD);
	pn_client_insert(c, &rec, PN_REC_BTREE_INSERT_LEAF, &frame);
	pn_client_changed(c, PLAIN);
}

/* ---- one split (split) ------------------------------------------------------------------ */

/* An insert's page besides its leaf: the table page of its row (a first try only); a
 * split's: the new page, then the right sibling if any. */
static uint32_t extra_pages(const void *state, const struct pn_client *c, uint32_t *pages)
{
	const struct bt_state *st = state;
	if (c->op->op == PN_OP_BT_INSERT && st->client[c->id].heap_due) {
		pages[0] = st->client[c->id].heap_page; /* the table's page of the row */
		return 1;
	}
	if (c->op->op != PN_OP_BT_SPLIT)
		return 0;
	pages[0] = st->client[c->id].new_page;
	pages[1] = st->next[c->op->page];
	return pages[1] == NO_PAGE ? 1 : 2;
}

/* The key boundary nearest to half the leaf's bytes, as the 1-based offset of the first
 * item that goes right; 0 when the leaf holds one key only. */
static uint32_t key_boundary(const uint8_t *page, uint32_t page_size)
{
	uint32_t n = nitems(page), total = 0, acc = 0, best = 0, best_d = UINT32_MAX, len = 0;
	for (uint32_t i = 0; i < n; i++) {
		item(page, page_size, i, &len);
		total += len + 4u;
	}
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *t = item(page, page_size, i, &len);
		if (i > 0 && pn_get32(t + 8) != pn_get32(item(page, page_size, i - 1, &len) + 8)) {
			uint32_t d = 2u * acc > total ? 2u * acc - total : total - 2u * acc;
			if (d < best_d) {
				best = i + 1;
				best_d = d;
			}
		}
		item(page, page_size, i, &len);
		acc += len + 4u;
	}
	return best;
}

/* The item boundary nearest to SINGLE_VALUE_FILL % of the leaf's bytes on the left, with at
 * least one item on each side, as the count of the items that stay left. */
static uint32_t single_value_point(const uint8_t *page, uint32_t page_size)
{
	uint32_t n = nitems(page), total = 0, acc = 0, best = 1, best_d = UINT32_MAX, len = 0;
	PN_ASSERT(n >= 2);
	for (uint32_t i = 0; i < n; i++) {
		item(page, page_size, i, &len);
		total += len + 4u;
	}
	uint64_t target = (uint64_t)total * SINGLE_VALUE_FILL / 100u;
	for (uint32_t i = 0; i + 1 < n; i++) {
		item(page, page_size, i, &len);
		acc += len + 4u;
		uint64_t d = acc > target ? acc - target : target - acc;
		if (d < best_d) {
			best = i + 1;
			best_d = (uint32_t)d;
		}
	}
	return best;
}

/* Where full leaf `page` splits for the new item's key, _bt_findsplitloc's strategies over
 * this model's items: *below items stay left, *low is the right page's first key.
 *   - keys differ on the leaf (default / many duplicates): the key boundary nearest to half
 *     the bytes (key_boundary), however uneven;
 *   - one key K on the leaf, the new key another: the boundary the new item makes (it goes
 *     alone to the left, or to the right);
 *   - the new key is K too (single value; inserts of K go to the rightmost leaf of K, so
 *     the new item is the last of K): the left keeps about SINGLE_VALUE_FILL % of the
 *     bytes, the rest and the new item go right, and K is on two leaves.
 * Returns true in the last case. */
static bool split_point(const uint8_t *page, uint32_t page_size, uint32_t key, uint32_t *below,
			uint32_t *low)
{
	uint32_t first = key_boundary(page, page_size), len = 0, n = nitems(page);
	uint32_t only = pn_get32(item(page, page_size, 0, &len) + 8);
	if (first > 1) {
		*below = first - 1;
		*low = pn_get32(item(page, page_size, first - 1, &len) + 8);
		return false;
	}
	if (key != only) {
		*below = key < only ? 0 : n;
		*low = key < only ? only : key;
		return false;
	}
	*below = single_value_point(page, page_size);
	*low = only;
	return true;
}

/* The directory after a split: leaf `right` holds keys from `low` up, right of `left`. */
static void directory_split(struct bt_state *st, uint32_t left, uint32_t right, uint32_t low)
{
	uint32_t i = 0;
	while (st->page[i] != left)
		i++;
	PN_ASSERT(i < st->nleaves && st->nleaves < st->max_leaves);
	PN_ASSERT(st->low[i] <= low && (i + 1 == st->nleaves || low <= st->low[i + 1]));
	memmove(st->low + i + 2, st->low + i + 1, (st->nleaves - i - 1) * sizeof(uint32_t));
	memmove(st->page + i + 2, st->page + i + 1, (st->nleaves - i - 1) * sizeof(uint32_t));
	st->low[i + 1] = low;
	st->page[i + 1] = right;
	st->nleaves++;
	st->next[right] = st->next[left];
	st->next[left] = right;
}

uint64_t pn_workload_btree_recycled(const struct pn_engine *e)
{
	void *state;
	const struct bt_state *st = pn_engine_client(e, &state) == &pn_workload_btree_dedup ? state
											    : NULL;
	return st ? st->recycled : 0;
}

uint64_t pn_workload_btree_single_value_splits(const struct pn_engine *e)
{
	void *state;
	const struct bt_state *st = pn_engine_client(e, &state) == &pn_workload_btree_dedup ? state
											    : NULL;
	return st ? st->single_value_splits : 0;
}

/* A new page a split did not use: kept for the splits past the sized room (recycle);
 * before that, as ever, splits take the next free page and this one stays unused. */
static void spare(struct bt_state *st, uint32_t pg)
{
	if (st->nspare < BT_SPARE)
		st->spare[st->nspare++] = pg;
}

static void split(struct bt_state *st, const struct pn_client *cl)
{
	struct bt_client *c = &st->client[cl->id];
	uint8_t *page = pn_client_page(cl, 0);
	uint32_t ps = st->b.page_size, left = cl->op->page, sib = st->next[left];
	if (fits(page, PLAIN) || leaf_of(st, c->key) != left) {
		spare(st, c->new_page);
		return; /* another client split it meanwhile: just the insert again */
	}
	if (sib != (pn_client_pinned(cl) == 3 ? pn_client_blkno(cl, 2) : NO_PAGE)) {
		spare(st, c->new_page);
		c->state = BT_SPLIT_DUE; /* its right sibling changed since the pin: again */
		return;
	}
	uint32_t below = 0, low = 0;
	if (split_point(page, ps, c->key, &below, &low))
		st->single_value_splits++;
	uint8_t main[10], tup[PLAIN], data0[2 * PLAIN], data1[32768];
	PN_ASSERT(ps <= sizeof(data1));
	new_tuple(cl, tup);
	struct pn_wal_record rec = {.xid = cl->xid, .nblocks = sib == NO_PAGE ? 2 : 3};
	enum pn_rec kind = pn_btree_split_record_at(page, ps, tup, PLAIN, (uint16_t)below, low,
						    &rec, main, data0, data1);
	uint32_t frames[3] = {pn_client_frame(cl, 0), pn_client_frame(cl, 1),
			      rec.nblocks == 3 ? pn_client_frame(cl, 2) : 0};
	rec.blocks[0].blkno = left;
	rec.blocks[1].blkno = c->new_page;
	rec.blocks[2].blkno = sib;
	pn_rec_ids(kind, &rec.rmid, &rec.info);
	for (uint32_t i = rec.nblocks; i-- > 0;)
		if (!pn_redo_apply(pn_client_page(cl, i), ps, &rec, &rec.blocks[i]))
			PN_ASSERT(!"a split that does not fit its pages");
	for (uint32_t i = 0; i < rec.nblocks; i++)
		pn_client_protect(cl, &rec.blocks[i], rec.blocks[i].blkno, pn_client_page(cl, i),
				  i == 1 ? PN_REG_WILL_INIT : PN_REG_STANDARD);
	pn_client_insert(cl, &rec, kind, frames);
	directory_split(st, left, c->new_page, low);
	c->state = BT_IDLE; /* the new item went in with the split */
	pn_client_changed(cl, rec.blocks[0].data_len + rec.blocks[1].data_len);
}

/* The ops this workload changes itself: an insert, or a split its insert made due. */
static void change(void *state, const struct pn_client *c)
{
	if (c->op->op == PN_OP_BT_SPLIT)
		split(state, c);
	else
		insert(state, c);
}

const struct pn_client_ops pn_workload_btree_dedup = {
	.name = "btree_dedup",
	.init = init,
	.free = free_state,
	.page_init = page_init,
	.page_init_fixed = page_init, /* state it reads never changes */
	.next = next,
	.change = change,
	.extra_pages = extra_pages,
};
