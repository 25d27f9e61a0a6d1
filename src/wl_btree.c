/*
 * wl_btree.c: the `btree_dedup` workload, seed 004's experiment (engine layer): random
 * inserts of int4 keys drawn uniformly from `distinct_keys` values into a deduplicating
 * btree (PostgreSQL 13+ nbtree), `inserts` in all, spread evenly over `transactions`
 * transactions that each end with a commit.
 *
 * The index is its leaf level only, sized at format time: L leaf pages, leaf
 * key * L / distinct_keys holds a key. L is the smallest count whose leaves hold every
 * insert once deduplicated, with a margin for the random spread (leaves()), so no leaf
 * ever splits and leaves end nearly full. Left out: page splits (Btree/SPLIT_L, SPLIT_R), inner pages, the growth of
 * the index over the run, the table's own heap inserts (only the index's WAL is counted,
 * as seed 004's nbtree_wal_volume).
 *
 * Leaf page bytes (PostgreSQL's nbtree leaf layout, simplified where noted):
 *   24 B page header; pd_special = page_size - 16; line pointers {lp_off u16, lp_len u16}
 *   in key order (no high key: each leaf is its own key range); tuples from pd_special
 *   down; special space 16 B: btpo_prev u32, btpo_next u32, btpo_level u32 (0),
 *   btpo_flags u16 (BTP_LEAF 0x0001), btpo_cycleid u16.
 *   plain tuple, 16 B: 0 heap TID {bi_hi u16, bi_lo u16, ip_posid u16}, 6 t_info u16
 *   (size), 8 key u32, 12 zero;
 *   posting tuple, MAXALIGN(16 + 6 n) B: 0 {0, 16 (offset of the TIDs), n | 0x2000}
 *   (BT_IS_POSTING), 6 t_info u16 (size | 0x2000 INDEX_ALT_TID_MASK), 8 key u32, 12 zero,
 *   16 n heap TIDs of 6 B in order; at most POSTING_MAX bytes (BTMaxItemSize, 8 KiB pages).
 *   Heap TIDs: (xid, n-th insert of the transaction), increasing as a growing heap's are.
 *
 * Records:
 *   Btree/INSERT_LEAF (11, 0x00): main xl_btree_insert {offnum u16}; block 0 data = the
 *     16 B tuple: 24 + 20 + 2 + 2 + 16 = 64 B (53 + image with an FPI). Redo: the tuple
 *     goes in at offnum, the line pointers from offnum on move up one.
 *   Btree/DEDUP (11, 0xD0): when a tuple does not fit (_bt_dedup_pass): main
 *     xl_btree_dedup {nintervals u16}; block 0 data = intervals {baseoff u16, nitems u16},
 *     runs of equal keys with at least two items: 24 + 20 + 2 + 2 + 4 k B. Redo: the page's
 *     tuples are rebuilt in order, each interval merged into one posting tuple (TIDs of its
 *     items in order), every tuple re-placed from pd_special down (as the new page
 *     _bt_dedup_pass builds). Often the first change of a leaf after a checkpoint, so it
 *     carries the FPI under full_page_writes (the seed's point).
 */
#include "engine.h"

#include <stdio.h>
#include <string.h>

#define SPECIAL 16u
#define BTP_LEAF 0x0001u
#define PLAIN 16u
#define POSTING_HDR 16u
#define TID 6u
#define ALT_TID 0x2000u
#define POSTING_MAX 2704u
#define LP(page, i) ((page) + PN_PAGE_HEADER + 4u * (i))

static uint64_t isqrt(uint64_t x)
{
	uint64_t r = 0;
	while ((r + 1) * (r + 1) <= x)
		r++;
	return r;
}

/* The fewest leaves that hold every insert once deduplicated, with room to spare for a
 * leaf that draws 4 standard deviations more inserts than the mean (the draws per leaf are
 * about Poisson), so that no leaf ever needs a split: leaves end the run nearly full, the
 * steady state of a btree that splits. */
static uint32_t leaves(const struct pn_engine *e)
{
	uint64_t d = e->sc->workload.distinct_keys, n = e->sc->workload.inserts;
	uint64_t usable = e->page_size - PN_PAGE_HEADER - SPECIAL - PLAIN - 4u;
	uint64_t l = PN_MAX(1u, (28u * d + TID * n) / usable);
	for (;; l++) {
		uint64_t keys = (d + l - 1) / l, m = n / l + 1, tids = m + 4u * isqrt(m) + 4u;
		/* per key: a posting tuple (header, MAXALIGN slack) and its line pointer, one more
		 * per POSTING_MAX of TIDs; 6 B per TID */
		uint64_t need = keys * (POSTING_HDR + 8u + 4u) * (1u + tids * TID / POSTING_MAX / keys) +
				TID * tids;
		if (need <= usable || l >= d)
			return (uint32_t)l;
	}
}

bool pn_wl_btree_init(struct pn_engine *e)
{
	const struct pn_scenario *sc = e->sc;
	uint64_t l = leaves(e);
	if (l > sc->workload.distinct_keys || l > UINT32_MAX / 2 || sc->workload.transactions == 0) {
		snprintf(e->error, sizeof(e->error),
			 "%s: btree_dedup with %llu inserts over %u distinct keys needs %llu leaf "
			 "pages, more than it has keys (the model has no page splits) or "
			 "transactions is 0; raise distinct_keys, or lower inserts",
			 sc->path, (unsigned long long)sc->workload.inserts,
			 sc->workload.distinct_keys, (unsigned long long)l);
		return false;
	}
	/* The index is sized by the workload: storage.pages is replaced (docs/scenarios.md). */
	e->heap_pages = (uint32_t)l;
	e->pages = e->heap_pages + e->slru_pages;
	return true;
}

void pn_wl_btree_page_init(const struct pn_engine *e, uint32_t p, uint8_t *page)
{
	uint32_t ps = e->page_size;
	(void)p;
	memset(page, 0, ps);
	pn_put16(page + 12, PN_PAGE_HEADER);
	pn_put16(page + 14, (uint16_t)(ps - SPECIAL));
	pn_put16(page + 16, (uint16_t)(ps - SPECIAL));
	pn_put16(page + 18, (uint16_t)(ps | 4u));
	pn_put16(page + ps - SPECIAL + 12, BTP_LEAF);
}

bool pn_wl_btree_is_leaf(const uint8_t *page, uint32_t page_size)
{
	uint32_t lower = pn_get16(page + 12), upper = pn_get16(page + 14);
	return pn_get16(page + 16) == page_size - SPECIAL && lower >= PN_PAGE_HEADER &&
	       lower <= upper && upper <= page_size - SPECIAL &&
	       (pn_get16(page + page_size - SPECIAL + 12) & BTP_LEAF);
}

/* ---- the generator ---------------------------------------------------------------------- */

enum pn_wl_next pn_wl_btree_next(struct pn_engine *e, uint32_t client, struct pn_step *out)
{
	const struct pn_scenario *sc = e->sc;
	struct pn_proc *p = &e->procs[client];
	*out = (struct pn_step){.op = PN_OP_BT_INSERT, .client = client};
	if (p->txn_pos < p->txn_len) {
		p->txn_pos++;
		uint32_t d = sc->workload.distinct_keys;
		out->key = (uint32_t)(e->env.random(e->env.ctx) % d);
		out->page = (uint32_t)((uint64_t)out->key * e->heap_pages / d);
		return PN_WL_OP;
	}
	enum pn_wl_next next;
	if (!pn_workload_txn_next(e, p, out, &next))
		return next;
	uint64_t k = e->txns_started - 1, n = sc->workload.inserts, t = sc->workload.transactions;
	p->txn_len = (uint32_t)(n * (k + 1) / t - n * k / t);
	p->txn_pos = 0;
	if (p->txn_len == 0) { /* more transactions than inserts: an empty one */
		out->op = PN_OP_COMMIT;
		return PN_WL_OP;
	}
	return pn_wl_btree_next(e, client, out);
}

/* ---- page access ------------------------------------------------------------------------ */

static uint32_t nitems(const uint8_t *page) { return pn_page_nitems(page); }

/* Item i's tuple if its line pointer is sane (i 0-based), else NULL. */
static const uint8_t *item(const uint8_t *page, uint32_t page_size, uint32_t i, uint32_t *len)
{
	if (i >= nitems(page))
		return NULL;
	uint32_t off = pn_get16(LP(page, i)), l = pn_get16(LP(page, i) + 2);
	if (off < PN_PAGE_HEADER || l < PLAIN || off + l > page_size - SPECIAL)
		return NULL;
	*len = l;
	return page + off;
}

static bool is_posting(const uint8_t *t) { return (pn_get16(t + 6) & ALT_TID) != 0; }

static uint32_t ntids(const uint8_t *t, uint32_t len)
{
	if (!is_posting(t))
		return 1;
	uint32_t n = pn_get16(t + 4) & ~ALT_TID;
	return POSTING_HDR + n * TID <= len ? n : 0;
}

static const uint8_t *tids(const uint8_t *t) { return is_posting(t) ? t + POSTING_HDR : t; }

/* The offset (1-based) a tuple with `key` goes to: after every item with a key <= key. */
static uint32_t insert_pos(const uint8_t *page, uint32_t page_size, uint32_t key)
{
	uint32_t n = nitems(page), i = 0, len = 0;
	const uint8_t *t;
	while (i < n && (t = item(page, page_size, i, &len)) && pn_get32(t + 8) <= key)
		i++;
	return i + 1;
}

static bool fits(const uint8_t *page, uint32_t need)
{
	return (uint32_t)pn_get16(page + 14) >= pn_get16(page + 12) + need + 4u;
}

/* ---- redo (pn_page_apply) --------------------------------------------------------------- */

bool pn_wl_apply_insert_leaf(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			     const struct pn_wal_block *b)
{
	if (r->main_len != 2 || b->data_len != PLAIN || !pn_wl_btree_is_leaf(page, page_size))
		return false;
	uint32_t off = pn_get16(r->main_data), n = nitems(page);
	if (off < 1 || off > n + 1 || !fits(page, PLAIN))
		return false;
	uint16_t upper = (uint16_t)(pn_get16(page + 14) - PLAIN);
	memmove(LP(page, off), LP(page, off - 1), 4u * (n - (off - 1)));
	pn_put16(LP(page, off - 1), upper);
	pn_put16(LP(page, off - 1) + 2, PLAIN);
	memcpy(page + upper, b->data, PLAIN);
	pn_put16(page + 12, (uint16_t)(pn_get16(page + 12) + 4u));
	pn_put16(page + 14, upper);
	return true;
}

/* Appends tuple bytes at the scratch page's next place (from the top down). */
static void put_tuple(uint8_t *out, uint32_t *upper, uint32_t *n, const uint8_t *t, uint32_t len)
{
	*upper -= len;
	memcpy(out + *upper, t, len);
	pn_put16(LP(out, *n), (uint16_t)*upper);
	pn_put16(LP(out, *n) + 2, (uint16_t)len);
	(*n)++;
}

/* Merges items [base, base + count) of page into one posting tuple in `buf`. */
static uint32_t merge(const uint8_t *page, uint32_t page_size, uint32_t base, uint32_t count,
		      uint8_t *buf)
{
	uint32_t len = 0, n = 0;
	const uint8_t *first = item(page, page_size, base, &len);
	memset(buf, 0, POSTING_MAX);
	pn_put32(buf + 8, pn_get32(first + 8));
	for (uint32_t i = base; i < base + count; i++) {
		const uint8_t *t = item(page, page_size, i, &len);
		uint32_t k = ntids(t, len);
		memcpy(buf + POSTING_HDR + n * TID, tids(t), k * TID);
		n += k;
	}
	uint32_t size = PN_ALIGN8(POSTING_HDR + n * TID);
	pn_put16(buf + 2, POSTING_HDR);
	pn_put16(buf + 4, (uint16_t)(n | ALT_TID));
	pn_put16(buf + 6, (uint16_t)(size | ALT_TID));
	return size;
}

static bool intervals_ok(const uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			 const struct pn_wal_block *b)
{
	uint32_t k = pn_get16(r->main_data), n = nitems(page), prev_end = 1, len = 0;
	if (r->main_len != 2 || b->data_len != 4u * k || k == 0)
		return false;
	for (uint32_t j = 0; j < k; j++) {
		uint32_t base = pn_get16(b->data + 4 * j), cnt = pn_get16(b->data + 4 * j + 2);
		if (base < prev_end || cnt < 2 || base + cnt - 1 > n)
			return false;
		uint32_t tot = 0;
		for (uint32_t i = base - 1; i < base - 1 + cnt; i++) {
			const uint8_t *t = item(page, page_size, i, &len);
			if (!t || ntids(t, len) == 0)
				return false;
			tot += ntids(t, len);
		}
		if (PN_ALIGN8(POSTING_HDR + tot * TID) > POSTING_MAX)
			return false;
		prev_end = base + cnt;
	}
	for (uint32_t i = 0; i < n; i++)
		if (!item(page, page_size, i, &len))
			return false;
	return true;
}

bool pn_wl_apply_btree_dedup(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			     const struct pn_wal_block *b)
{
	if (!intervals_ok(page, page_size, r, b))
		return false;
	uint8_t out[32768], posting[POSTING_MAX];
	PN_ASSERT(page_size <= sizeof(out));
	memcpy(out, page, PN_PAGE_HEADER);
	memcpy(out + page_size - SPECIAL, page + page_size - SPECIAL, SPECIAL);
	uint32_t upper = page_size - SPECIAL, n = 0, k = pn_get16(r->main_data), j = 0, len = 0;
	for (uint32_t i = 0; i < nitems(page);) {
		uint32_t base = j < k ? pn_get16(b->data + 4 * j) - 1u : UINT32_MAX;
		if (i == base) {
			uint32_t cnt = pn_get16(b->data + 4 * j + 2);
			put_tuple(out, &upper, &n, posting, merge(page, page_size, i, cnt, posting));
			i += cnt;
			j++;
			continue;
		}
		const uint8_t *t = item(page, page_size, i, &len);
		put_tuple(out, &upper, &n, t, len);
		i++;
	}
	memset(out + PN_PAGE_HEADER + 4u * n, 0, upper - (PN_PAGE_HEADER + 4u * n));
	pn_put16(out + 12, (uint16_t)(PN_PAGE_HEADER + 4u * n));
	pn_put16(out + 14, (uint16_t)upper);
	memcpy(page, out, page_size);
	return true;
}

/* ---- one insert (pn_wl_btree_change) ---------------------------------------------------- */

/* _bt_dedup_pass: the intervals of equal keys, each at most POSTING_MAX once merged. */
static uint32_t plan_dedup(const uint8_t *page, uint32_t page_size, uint8_t *data)
{
	uint32_t n = nitems(page), k = 0, len = 0;
	for (uint32_t i = 0; i < n;) {
		const uint8_t *t = item(page, page_size, i, &len);
		uint32_t key = pn_get32(t + 8), tot = ntids(t, len), cnt = 1;
		while (i + cnt < n) {
			const uint8_t *u = item(page, page_size, i + cnt, &len);
			if (pn_get32(u + 8) != key ||
			    PN_ALIGN8(POSTING_HDR + (tot + ntids(u, len)) * TID) > POSTING_MAX)
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

static void dedup(struct pn_engine *e, struct pn_proc *p, uint8_t *page)
{
	uint8_t data[4 * 2048]; /* intervals: at most one per two items */
	uint8_t main[2];
	PN_ASSERT(nitems(page) <= 4096);
	uint32_t k = plan_dedup(page, e->page_size, data);
	if (k == 0)
		return;
	pn_put16(main, (uint16_t)k);
	struct pn_wal_record rec = {.xid = p->xid, .nblocks = 1, .main_data = main, .main_len = 2};
	struct pn_wal_block *b = &rec.blocks[0];
	b->blkno = p->op.page;
	b->data = data;
	b->data_len = (uint16_t)(4 * k);
	if (!pn_wl_apply_btree_dedup(page, e->page_size, &rec, b))
		PN_ASSERT(!"a deduplication that does not fit its page");
	if (!(e->sc->protocol.mutations & PN_MUT_DEDUP_NO_IMAGE)) /* else REGBUF_NO_IMAGE */
		pn_wl_protect(e, b, p->op.page, page, true, false);
	pn_wl_insert(e, &rec, PN_REC_BTREE_DEDUP, &p->frame);
	e->m.logical_bytes_changed += 4u * k;
}

void pn_wl_btree_change(struct pn_engine *e, struct pn_proc *p)
{
	uint8_t *page = pn_frame_page(e, p->frame);
	uint8_t tup[PLAIN] = {0}, main[2];
	PN_ASSERT(pn_wl_btree_is_leaf(page, e->page_size));
	if (!fits(page, PLAIN))
		dedup(e, p, page);
	if (!fits(page, PLAIN)) /* leaves() sizes the index so that this never happens */
		PN_ASSERT(!"a btree leaf full after deduplication (the model has no splits)");
	pn_put16(tup, (uint16_t)(p->xid >> 16)); /* heap TID: (xid, n-th insert) */
	pn_put16(tup + 2, (uint16_t)p->xid);
	pn_put16(tup + 4, (uint16_t)p->ops_in_txn);
	pn_put16(tup + 6, PLAIN);
	pn_put32(tup + 8, p->op.key);
	pn_put16(main, (uint16_t)insert_pos(page, e->page_size, p->op.key));
	struct pn_wal_record rec = {.xid = p->xid, .nblocks = 1, .main_data = main, .main_len = 2};
	struct pn_wal_block *b = &rec.blocks[0];
	b->blkno = p->op.page;
	b->data = tup;
	b->data_len = PLAIN;
	if (!pn_wl_apply_insert_leaf(page, e->page_size, &rec, b))
		PN_ASSERT(!"an insert that does not fit its leaf");
	pn_wl_protect(e, b, p->op.page, page, true, false);
	pn_wl_insert(e, &rec, PN_REC_BTREE_INSERT_LEAF, &p->frame);
	e->m.logical_bytes_changed += PLAIN;
}
