/*
 * oracleop.c: the meaning of each change the oracle logs, applied to a page (model layer;
 * oracleop.h; the specification is at the top of oracle.c). Written from that specification,
 * never from the engine's redo (src/format/redo*.c): two independent readings of one
 * contract.
 */
#include "oracleop.h"

#include <stdlib.h>
#include <string.h>

static bool has_header(const struct pn_oracleop_pages *o, uint32_t page)
{
	return page < o->heap_pages || o->slru_headers;
}

uint32_t pn_oracleop_nitems(const uint8_t *page, uint32_t page_size)
{
	uint32_t lower = pn_get16(page + OFF_LOWER);
	if (lower < PAGE_HEADER || lower > page_size)
		return 0;
	return (lower - PAGE_HEADER) / 4u;
}

uint32_t pn_oracleop_tuple_off(const uint8_t *page, uint32_t page_size, uint32_t item,
			       uint32_t need)
{
	if (item >= pn_oracleop_nitems(page, page_size))
		return 0;
	uint32_t off = pn_get16(page + PAGE_HEADER + 4u * item);
	uint32_t len = pn_get16(page + PAGE_HEADER + 4u * item + 2u);
	if (off < PAGE_HEADER || len < need || off + need > page_size)
		return 0;
	return off;
}

static void set_lsn(uint8_t *page, pn_lsn lsn)
{
	pn_put32(page, (uint32_t)(lsn >> 32));
	pn_put32(page + 4, (uint32_t)lsn);
}

/* ---- the meaning of each change -------------------------------------------------------- */

static void apply_image(const struct pn_oracleop_pages *o, uint8_t *page,
			const struct pn_oracleop *op)
{
	const uint8_t *img = o->arena + op->off;
	uint32_t before = op->hole_len ? op->hole_off : o->page_size;
	uint32_t after = before + op->hole_len;
	memcpy(page, img, before);
	memset(page + before, 0, op->hole_len);
	memcpy(page + after, img + before, o->page_size - after);
}

static bool apply_hot_update(const struct pn_oracleop_pages *o, uint8_t *page,
			     const struct pn_oracleop *op)
{
	const uint8_t *main = o->arena + op->off, *data = main + op->main_len;
	uint32_t item = (uint32_t)pn_get16(main + 12) - 1u;
	uint8_t flags = main[7];
	uint32_t skip = 0, prefix = 0, extra = 0;
	if (flags & 0x20u) {
		prefix = op->data_len >= 2 ? pn_get16(data) : 0;
		skip += 2;
	}
	if (flags & 0x40u)
		skip += 2;
	if (flags & 0x60u)
		extra = 1;
	if (op->data_len < skip + 5 + extra)
		return false;
	const uint8_t *h = data + skip;
	uint32_t n = op->data_len - skip - 5 - extra;
	uint32_t t = pn_oracleop_tuple_off(page, o->page_size, item, TUP_HEADER + prefix + n);
	if (t == 0)
		return false;
	pn_put32(page + t, op->xid);
	pn_put32(page + t + TUP_XMAX, 0);
	pn_put16(page + t + TUP_INFOMASK2, pn_get16(h));
	pn_put16(page + t + TUP_INFOMASK, pn_get16(h + 2));
	if (extra)
		page[t + 23] = h[5];
	memcpy(page + t + TUP_HEADER + prefix, h + 5 + extra, n);
	pn_put32(page + OFF_PRUNE_XID, op->xid);
	return true;
}

static bool apply_freeze(const struct pn_oracleop_pages *o, uint8_t *page,
			 const struct pn_oracleop *op)
{
	const uint8_t *main = o->arena + op->off;
	uint32_t n = pn_get16(main + 4);
	bool fits = true;
	for (uint32_t k = 0; k < n; k++) {
		const uint8_t *f = main + op->main_len + 12u * k;
		uint32_t t = pn_oracleop_tuple_off(page, o->page_size,
						   (uint32_t)pn_get16(f + 4) - 1u, TUP_LEN);
		if (t == 0) {
			fits = false;
			continue;
		}
		pn_put32(page + t + TUP_XMAX, pn_get32(f));
		pn_put16(page + t + TUP_INFOMASK2, pn_get16(f + 6));
		pn_put16(page + t + TUP_INFOMASK, pn_get16(f + 8));
	}
	pn_put16(page + OFF_FLAGS, (uint16_t)(pn_get16(page + OFF_FLAGS) | FLAG_ALL_VISIBLE));
	return fits;
}

static bool apply_dedup(const struct pn_oracleop_pages *o, uint8_t *page,
			const struct pn_oracleop *op)
{
	uint8_t salt = o->arena[op->off + op->main_len];
	uint32_t n = pn_oracleop_nitems(page, o->page_size);
	bool fits = true;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t t = pn_oracleop_tuple_off(page, o->page_size, i, TUP_LEN);
		if (t == 0) {
			fits = false;
			continue;
		}
		uint8_t *b = page + t;
		for (uint32_t j = TUP_HEADER; j < TUP_LEN; j++)
			b[j] = (uint8_t)(b[j] * 5u + salt + i);
	}
	return fits;
}

static void apply_clog_set(const struct pn_oracleop_pages *o, uint8_t *page,
			   const struct pn_oracleop *op)
{
	const uint8_t *main = o->arena + op->off;
	uint32_t xid = pn_get32(main);
	bool header = main[4] != 0;
	uint32_t base = header ? PAGE_HEADER : 0;
	uint32_t per_page = (o->page_size - base) * 4u;
	uint32_t bit = (xid % per_page) * 2u;
	if (header && pn_get16(page + OFF_LOWER) == 0) {
		uint16_t size = (uint16_t)o->page_size;
		pn_put16(page + OFF_LOWER, size);
		pn_put16(page + OFF_UPPER, size);
		pn_put16(page + OFF_SPECIAL, size);
		pn_put16(page + OFF_VERSION, (uint16_t)(o->page_size | 4u));
	}
	page[base + bit / 8u] |= (uint8_t)(1u << (bit % 8u));
}

static void apply_hint_delta(const struct pn_oracleop_pages *o, uint8_t *page,
			     const struct pn_oracleop *op)
{
	const uint8_t *d = o->arena + op->off + op->main_len;
	uint32_t n = pn_get16(d), at = 2 + 4u * n;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t off = pn_get16(d + 2 + 4u * k), len = pn_get16(d + 4 + 4u * k);
		memcpy(page + off, d + at, len);
		at += len;
	}
}

#define TUP_XMIN 0u
#define TUP_CTID 12u
#define TUP_HOFF 22u
#define INFOMASK_XMAX_INVALID 0x0800u
#define INFOMASK2_KEYS_UPDATED 0x2000u

static void empty_page(const struct pn_oracleop_pages *o, uint8_t *page, uint32_t special)
{
	memset(page + 8, 0, o->page_size - 8);
	pn_put16(page + OFF_LOWER, PAGE_HEADER);
	pn_put16(page + OFF_UPPER, (uint16_t)special);
	pn_put16(page + OFF_SPECIAL, (uint16_t)special);
	pn_put16(page + OFF_VERSION, (uint16_t)(o->page_size | 4u));
}

static void empty_leaf(const struct pn_oracleop_pages *o, uint8_t *page, uint32_t prev,
		       uint32_t next)
{
	uint32_t special = o->page_size - BT_SPECIAL;
	empty_page(o, page, special);
	pn_put32(page + special, prev);
	pn_put32(page + special + 4, next);
	pn_put16(page + special + 12, 1);
}

/* Room of n bytes for pointer k (1-based): the tuple's offset, or 0 if it does not fit. */
static uint32_t place(const struct pn_oracleop_pages *o, uint8_t *page, uint32_t k, uint32_t n)
{
	uint32_t count = pn_oracleop_nitems(page, o->page_size);
	uint32_t upper = pn_get16(page + OFF_UPPER), need = (n + 7u) & ~7u;
	uint32_t lower = PAGE_HEADER + 4u * (k > count ? k : count);
	if (k == 0 || upper > o->page_size || upper < need || upper - need < lower)
		return 0;
	if (k <= count && pn_get16(page + PAGE_HEADER + 4u * (k - 1) + 2) != 0)
		return 0;
	for (uint32_t i = count; i < k; i++)
		memset(page + PAGE_HEADER + 4u * i, 0, 4);
	upper -= need;
	memset(page + upper, 0, need);
	pn_put16(page + PAGE_HEADER + 4u * (k - 1), (uint16_t)upper);
	pn_put16(page + PAGE_HEADER + 4u * (k - 1) + 2, (uint16_t)n);
	pn_put16(page + OFF_LOWER, (uint16_t)lower);
	pn_put16(page + OFF_UPPER, (uint16_t)upper);
	return upper;
}

static bool heap_tuple_in(const struct pn_oracleop_pages *o, uint8_t *page,
			  const struct pn_oracleop *op, const uint8_t *data, uint32_t k, bool init)
{
	if (init)
		empty_page(o, page, o->page_size);
	if (op->data_len < 6)
		return false;
	uint32_t t = place(o, page, k, 23u + op->data_len - 5u);
	if (t == 0)
		return false;
	pn_put32(page + t + TUP_XMIN, op->xid);
	pn_put16(page + t + TUP_CTID, (uint16_t)(op->blkno >> 16));
	pn_put16(page + t + TUP_CTID + 2, (uint16_t)(op->blkno & 0xFFFFu));
	pn_put16(page + t + TUP_CTID + 4, (uint16_t)k);
	pn_put16(page + t + TUP_INFOMASK2, pn_get16(data));
	pn_put16(page + t + TUP_INFOMASK, pn_get16(data + 2));
	page[t + TUP_HOFF] = data[4];
	memcpy(page + t + 23, data + 5, op->data_len - 5u);
	return true;
}

static bool apply_heap(const struct pn_oracleop_pages *o, uint8_t *page,
		       const struct pn_oracleop *op)
{
	const uint8_t *main = o->arena + op->off, *data = main + op->main_len;
	switch (op->kind) {
	case OP_INSERT:
	case OP_INSERT_INIT:
		return heap_tuple_in(o, page, op, data, pn_get16(main), op->kind == OP_INSERT_INIT);
	case OP_UPDATE:
	case OP_UPDATE_INIT:
		return heap_tuple_in(o, page, op, data, pn_get16(main + 12),
				     op->kind == OP_UPDATE_INIT);
	default: break;
	}
	uint32_t t = pn_oracleop_tuple_off(page, o->page_size, (uint32_t)pn_get16(main + 4) - 1u,
					   TUP_HEADER);
	if (t == 0)
		return false;
	uint16_t mask = (uint16_t)(pn_get16(page + t + TUP_INFOMASK) & ~INFOMASK_XMAX_INVALID);
	pn_put32(page + t + TUP_XMAX, pn_get32(main));
	if (op->kind == OP_LOCK) {
		pn_put16(page + t + TUP_INFOMASK, (uint16_t)(mask | 0x0040u | 0x0080u));
		return true;
	}
	pn_put16(page + t + TUP_INFOMASK, mask);
	pn_put16(page + t + TUP_INFOMASK2,
		 (uint16_t)(pn_get16(page + t + TUP_INFOMASK2) | INFOMASK2_KEYS_UPDATED));
	if (op->kind == OP_UPDATE_OLD) {
		uint16_t new_k = pn_get16(main + 12);
		pn_put16(page + t + TUP_CTID, (uint16_t)(op->other >> 16));
		pn_put16(page + t + TUP_CTID + 2, (uint16_t)(op->other & 0xFFFFu));
		pn_put16(page + t + TUP_CTID + 4, new_k);
		pn_put32(page + OFF_PRUNE_XID, op->xid);
	} else {
		pn_put32(page + OFF_PRUNE_XID, pn_get32(main));
	}
	return true;
}

static uint32_t itup_len(const uint8_t *p) { return pn_get16(p + 6) & 0x1FFFu; }

/* Index tuple `t` (len bytes) at pointer k; the pointers from k on move up one. */
static bool leaf_add(const struct pn_oracleop_pages *o, uint8_t *page, const uint8_t *t,
		     uint32_t len, uint32_t k)
{
	uint32_t count = pn_oracleop_nitems(page, o->page_size);
	uint32_t upper = pn_get16(page + OFF_UPPER), need = (len + 7u) & ~7u;
	uint32_t lower = pn_get16(page + OFF_LOWER);
	if (len < 16 || itup_len(t) != len || k == 0 || k > count + 1 || upper > o->page_size ||
	    upper < need || upper - need < lower + 4u)
		return false;
	for (uint32_t i = count; i >= k; i--)
		memcpy(page + PAGE_HEADER + 4u * i, page + PAGE_HEADER + 4u * (i - 1), 4);
	upper -= need;
	memset(page + upper, 0, need);
	memcpy(page + upper, t, len);
	pn_put16(page + PAGE_HEADER + 4u * (k - 1), (uint16_t)upper);
	pn_put16(page + PAGE_HEADER + 4u * (k - 1) + 2, (uint16_t)len);
	pn_put16(page + OFF_LOWER, (uint16_t)(lower + 4u));
	pn_put16(page + OFF_UPPER, (uint16_t)upper);
	return true;
}

static bool leaf_append_all(const struct pn_oracleop_pages *o, uint8_t *page, const uint8_t *p,
			    uint32_t len)
{
	for (uint32_t at = 0; at < len;) {
		uint32_t n = len - at >= 8 ? itup_len(p + at) : 0;
		if (n == 0 || n > len - at ||
		    !leaf_add(o, page, p + at, n, pn_oracleop_nitems(page, o->page_size) + 1))
			return false;
		at += n;
	}
	return true;
}

static bool apply_btree(const struct pn_oracleop_pages *o, uint8_t *page,
			const struct pn_oracleop *op)
{
	const uint8_t *main = o->arena + op->off, *data = main + op->main_len;
	uint32_t special = o->page_size - BT_SPECIAL;
	if (op->kind == OP_SPLIT_RIGHT_PAGE) {
		empty_leaf(o, page, op->other, op->next);
		return leaf_append_all(o, page, data, op->data_len);
	}
	if (pn_get16(page + OFF_SPECIAL) != special)
		return false;
	if (op->kind == OP_BT_INSERT)
		return leaf_add(o, page, data, op->data_len, pn_get16(main));
	if (op->kind == OP_SPLIT_SIBLING) {
		pn_put32(page + special, op->other); /* btpo_prev: the new right page */
		return true;
	}
	uint32_t firstright = pn_get16(main + 4), count = pn_oracleop_nitems(page, o->page_size);
	if (firstright == 0 || firstright > count + 1)
		return false;
	uint8_t *kept = malloc(o->page_size);
	PN_ASSERT(kept != NULL);
	uint32_t len = 0;
	bool ok = true;
	for (uint32_t i = 1; i < firstright && ok; i++) {
		uint32_t t = pn_oracleop_tuple_off(page, o->page_size, i - 1, 8);
		uint32_t n = t ? pn_get16(page + PAGE_HEADER + 4u * (i - 1) + 2) : 0;
		ok = t != 0 && len + n <= o->page_size;
		if (ok) {
			memcpy(kept + len, page + t, n);
			len += n;
		}
	}
	uint32_t prev = pn_get32(page + special);
	empty_leaf(o, page, prev, op->other);
	ok = ok && leaf_append_all(o, page, kept, len);
	free(kept);
	if (ok && op->kind == OP_SPLIT_L)
		ok = op->data_len >= 8 && itup_len(data) <= op->data_len &&
		     leaf_add(o, page, data, itup_len(data), pn_get16(main + 6));
	return ok;
}

/* ---- the vacuum workload: PG16 freeze plans, Heap2/VISIBLE ---------------------------- */

static bool apply_freeze_plans(const struct pn_oracleop_pages *o, uint8_t *page,
			       const struct pn_oracleop *op)
{
	const uint8_t *main = o->arena + op->off, *plans = main + op->main_len;
	uint32_t nplans = pn_get16(main + 4);
	const uint8_t *off = plans + FREEZE_PLAN_BYTES * nplans;
	bool fits = true;
	for (uint32_t k = 0; k < nplans; k++) {
		const uint8_t *plan = plans + FREEZE_PLAN_BYTES * k;
		for (uint32_t left = pn_get16(plan + 10); left > 0; left--, off += 2) {
			uint32_t t = pn_oracleop_tuple_off(page, o->page_size, pn_get16(off) - 1u,
							   TUP_HEADER);
			if (t == 0) {
				fits = false;
				continue;
			}
			memcpy(page + t + TUP_XMAX, plan, 4);
			memcpy(page + t + TUP_INFOMASK2, plan + 4, 4); /* t_infomask2, t_infomask */
		}
	}
	return fits;
}

static void apply_vm_set(const struct pn_oracleop_pages *o, uint8_t *page,
			 const struct pn_oracleop *op)
{
	uint32_t per_page = (o->page_size - PAGE_HEADER) * 4u; /* two bits per heap block */
	uint32_t slot = op->other % per_page;
	uint8_t bits = o->arena[op->off + 4] & 0x03u;
	page[PAGE_HEADER + slot / 4u] |= (uint8_t)(bits << ((slot % 4u) * 2u));
}

/* ---- the btree_dedup workload: leaf pages --------------------------------------------- */

static bool bt_leaf(const struct pn_oracleop_pages *o, const uint8_t *page)
{
	uint32_t special = o->page_size - BT_SPECIAL;
	uint32_t lower = pn_get16(page + OFF_LOWER), upper = pn_get16(page + OFF_UPPER);
	return pn_get16(page + OFF_SPECIAL) == special && (page[special + 12] & 1u) &&
	       lower >= PAGE_HEADER && lower <= upper && upper <= special;
}

/* Offset and length of leaf item i if sane, else false. */
static bool bt_item(const struct pn_oracleop_pages *o, const uint8_t *page, uint32_t i,
		    uint32_t *off, uint32_t *len)
{
	if (i >= pn_oracleop_nitems(page, o->page_size))
		return false;
	*off = pn_get16(page + PAGE_HEADER + 4u * i);
	*len = pn_get16(page + PAGE_HEADER + 4u * i + 2u);
	return *off >= PAGE_HEADER && *len >= BT_PLAIN && *off + *len <= o->page_size - BT_SPECIAL;
}

/* The heap TIDs a leaf item holds: 1 for a plain tuple, n for a posting one. */
static uint32_t bt_tids(const uint8_t *t, uint32_t len, const uint8_t **first)
{
	bool posting = (pn_get16(t + 6) & BT_ALT_TID) != 0;
	uint32_t n = posting ? pn_get16(t + 4) & ~BT_ALT_TID : 1u;
	*first = posting ? t + BT_POSTING_HDR : t;
	return !posting || BT_POSTING_HDR + 6u * n <= len ? n : 0;
}

/* The leaf as a list of tuples (merged where an interval says), re-laid from the special
 * space down into `out`; false if the intervals do not fit the page. */
static bool bt_rebuild(const struct pn_oracleop_pages *o, const uint8_t *page, const uint8_t *iv,
		       uint32_t niv, uint8_t *out)
{
	uint32_t n = pn_oracleop_nitems(page, o->page_size), ps = o->page_size,
		 top = ps - BT_SPECIAL, kept = 0;
	uint8_t tup[BT_POSTING_MAX];
	memset(out, 0, ps);
	memcpy(out, page, PAGE_HEADER);
	memcpy(out + top, page + top, BT_SPECIAL);
	uint32_t i = 1, next = 0; /* 1-based item, next interval */
	while (i <= n) {
		uint32_t take = 1, off, len, tlen;
		bool run = next < niv && pn_get16(iv + 4u * next) == i;
		if (run)
			take = pn_get16(iv + 4u * next + 2u);
		if (run && (take < 2 || i + take - 1u > n))
			return false;
		if (!bt_item(o, page, i - 1u, &off, &len))
			return false;
		if (run) {
			uint32_t tids = 0;
			memset(tup, 0, sizeof(tup));
			memcpy(tup + 8, page + off + 8, 4); /* the key */
			for (uint32_t j = i; j < i + take; j++) {
				const uint8_t *from;
				if (!bt_item(o, page, j - 1u, &off, &len))
					return false;
				uint32_t c = bt_tids(page + off, len, &from);
				if (c == 0 || BT_POSTING_HDR + 6u * (tids + c) > BT_POSTING_MAX)
					return false;
				memcpy(tup + BT_POSTING_HDR + 6u * tids, from, 6u * c);
				tids += c;
			}
			tlen = (BT_POSTING_HDR + 6u * tids + 7u) & ~7u;
			pn_put16(tup + 2, BT_POSTING_HDR);
			pn_put16(tup + 4, (uint16_t)(tids | BT_ALT_TID));
			pn_put16(tup + 6, (uint16_t)(tlen | BT_ALT_TID));
			next++;
		} else {
			tlen = len;
			memcpy(tup, page + off, len);
		}
		top -= tlen;
		memcpy(out + top, tup, tlen);
		pn_put16(out + PAGE_HEADER + 4u * kept, (uint16_t)top);
		pn_put16(out + PAGE_HEADER + 4u * kept + 2u, (uint16_t)tlen);
		kept++;
		i += take;
	}
	pn_put16(out + OFF_LOWER, (uint16_t)(PAGE_HEADER + 4u * kept));
	pn_put16(out + OFF_UPPER, (uint16_t)top);
	return next == niv;
}

static bool apply_bt_dedup(const struct pn_oracleop_pages *o, uint8_t *page,
			   const struct pn_oracleop *op)
{
	uint8_t out[32768];
	const uint8_t *main = o->arena + op->off;
	if (!bt_rebuild(o, page, main + op->main_len, pn_get16(main), out))
		return false;
	memcpy(page, out, o->page_size);
	return true;
}

/* The import workload's change: the page's hole as the record gives it, zeroed, and the
 * filler laid from pd_upper. */
static bool apply_imported(const struct pn_oracleop_pages *o, uint8_t *page,
			   const struct pn_oracleop *op)
{
	const uint8_t *data = o->arena + op->off + op->main_len;
	uint32_t layout = op->kind == OP_IMPORTED_L || op->kind == OP_IMPORTED_L_INIT ? 4u : 0u;
	uint32_t ps = o->page_size, lower = layout ? pn_get16(data) : 0;
	uint32_t upper = layout ? pn_get16(data + 2) : 0;
	if (op->kind == OP_IMPORTED_INIT || op->kind == OP_IMPORTED_L_INIT) {
		memset(page + 8, 0, ps - 8);
		pn_put16(page + OFF_LOWER, PAGE_HEADER);
		pn_put16(page + OFF_UPPER, (uint16_t)ps);
		pn_put16(page + 16, (uint16_t)ps);
		pn_put16(page + 18, (uint16_t)(ps | 4u));
	}
	if (lower != 0 || upper != 0) {
		pn_put16(page + OFF_LOWER, (uint16_t)lower);
		pn_put16(page + OFF_UPPER, (uint16_t)upper);
	}
	lower = pn_get16(page + OFF_LOWER);
	upper = pn_get16(page + OFF_UPPER);
	if (lower < PAGE_HEADER || upper < lower || upper > ps)
		return false;
	memset(page + lower, 0, upper - lower);
	memcpy(page + upper, data + layout, PN_MIN(op->data_len - layout, ps - upper));
	return true;
}

bool pn_oracleop_apply(const struct pn_oracleop_pages *o, uint32_t id, uint8_t *page,
		       const struct pn_oracleop *op)
{
	bool fits = true;
	PN_ASSERT(page != NULL && o->page_size > PAGE_HEADER);
	switch (op->kind) {
	case OP_IMAGE: apply_image(o, page, op); break;
	case OP_HOT_UPDATE: fits = apply_hot_update(o, page, op); break;
	case OP_FREEZE: fits = apply_freeze(o, page, op); break;
	case OP_DEDUP: /* a btree leaf's (wl_btree) or the script op's payload rewrite */
		fits = bt_leaf(o, page) ? apply_bt_dedup(o, page, op) : apply_dedup(o, page, op);
		break;
	case OP_CLOG_SET: apply_clog_set(o, page, op); break;
	case OP_HINT_DELTA: apply_hint_delta(o, page, op); break;
	case OP_INSERT:
	case OP_INSERT_INIT:
	case OP_UPDATE:
	case OP_UPDATE_INIT:
	case OP_UPDATE_OLD:
	case OP_LOCK:
	case OP_DELETE: fits = apply_heap(o, page, op); break;
	case OP_BT_INSERT:
	case OP_SPLIT_L:
	case OP_SPLIT_R:
	case OP_SPLIT_RIGHT_PAGE:
	case OP_SPLIT_SIBLING: fits = apply_btree(o, page, op); break;
	case OP_PRUNE: pn_put32(page + OFF_PRUNE_XID, 0); break;
	case OP_FREEZE_PLANS: fits = apply_freeze_plans(o, page, op); break;
	case OP_VM_SET: apply_vm_set(o, page, op); break;
	case OP_ALL_VISIBLE:
		pn_put16(page + OFF_FLAGS,
			 (uint16_t)(pn_get16(page + OFF_FLAGS) | FLAG_ALL_VISIBLE));
		break;
	case OP_IMPORTED:
	case OP_IMPORTED_INIT:
	case OP_IMPORTED_L:
	case OP_IMPORTED_L_INIT: fits = apply_imported(o, page, op); break;
	default: PN_ASSERT(!"an op of no kind");
	}
	if (has_header(o, id) && (op->kind != OP_ALL_VISIBLE || o->hints_logged))
		set_lsn(page, op->end);
	return fits;
}
