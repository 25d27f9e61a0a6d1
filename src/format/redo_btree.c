/*
 * redo_btree.c: what the btree's records do to leaf pages, and the split records built
 * (format layer, redo_btree.h; rows of rmgrlist.h). Leaf layout in btree.c.
 *
 *   Btree/INSERT_LEAF (11, 0x00): main {offnum u16}; block 0 data the index tuple; it is
 *     added at offnum, the line pointers from offnum on move up by one.
 *   Btree/SPLIT_L, SPLIT_R (11, 0x30, 0x40): main {level u32, firstrightoff u16, newitemoff
 *     u16, postingoff u16}; block 0 (left) data: [the new item, SPLIT_L] + the left page's
 *     new high key (logged, not stored: our leaves have no high-key item); block 1 (right,
 *     WILL_INIT) data: the right page's items, concatenated (the new item among them for
 *     SPLIT_R); block 2, when the left page had a right sibling, no data. Left keeps items
 *     1 .. firstrightoff-1, repacked from pd_special down in line-pointer order, then
 *     (SPLIT_L) the new item at newitemoff, btpo_next = right; right is a fresh leaf with
 *     btpo_prev = left, btpo_next = block 2 (else P_NONE, 0) holding the logged items in
 *     order; block 2 gets btpo_prev = right.
 *   Btree/DEDUP (11, 0x60): when a tuple does not fit (_bt_dedup_pass): main
 *     xl_btree_dedup {nintervals u16}; block 0 data = intervals {baseoff u16, nitems u16},
 *     runs of equal keys with at least two items: 24 + 20 + 2 + 2 + 4 k B. Redo: the page's
 *     tuples are rebuilt in order, each interval merged into one posting tuple (TIDs of its
 *     items in order), every tuple re-placed from pd_special down (as the new page
 *     _bt_dedup_pass builds). Often the first change of a leaf after a checkpoint, so it
 *     carries the FPI under full_page_writes (the seed's point).
 *     The script op's Btree/DEDUP on a heap page (main 2 B, block data 4 B: a salt) rewrites
 *     every tuple's payload (t[j] = t[j] * 5 + salt + item): a small record that changes
 *     most of the page. The row tells the two apart by the page (pn_btree_is_leaf).
 */
#include "redo_btree.h"

#include <stdio.h>
#include <string.h>

#define LP(page, i) ((page) + PN_PAGE_HEADER + 4u * (i))

static bool btree_sane(const uint8_t *page, uint32_t page_size)
{
	return pn_get16(page + 16) == page_size - PN_BTREE_SPECIAL &&
	       pn_get16(page + 12) >= PN_PAGE_HEADER;
}

static bool apply_btree_insert(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			       const struct pn_wal_block *b)
{
	if (r->main_len != 2 || !btree_sane(page, page_size))
		return false;
	return pn_btree_add(page, page_size, b->data, b->data_len, pn_get16(r->main_data));
}

static bool apply_btree_split(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			      const struct pn_wal_block *b, bool left_gets_new)
{
	if (r->main_len != 10 || r->nblocks < 2 || r->nblocks > 3)
		return false;
	uint32_t firstright = pn_get16(r->main_data + 4), newoff = pn_get16(r->main_data + 6);
	if (b == &r->blocks[1]) {
		pn_btree_page_init(page, page_size, r->blocks[0].blkno,
				   r->nblocks == 3 ? r->blocks[2].blkno : 0);
		return pn_btree_add_all(page, page_size, b->data, b->data_len);
	}
	if (!btree_sane(page, page_size))
		return false;
	if (b == &r->blocks[2]) { /* the old right sibling */
		pn_put32(page + page_size - PN_BTREE_SPECIAL, r->blocks[1].blkno);
		return true;
	}
	uint32_t n = pn_page_nitems(page);
	if (firstright == 0 || firstright > n + 1)
		return false;
	uint8_t keep[32768];
	uint32_t len = 0;
	for (uint32_t i = 0; i + 1 < firstright; i++) {
		uint32_t l = pn_get16(page + PN_PAGE_HEADER + 4 * i + 2);
		if (l < PN_ITUP_HEADER || len + l > sizeof(keep))
			return false;
		memcpy(keep + len, pn_btree_item(page, i), l);
		len += l;
	}
	uint8_t *o = page + page_size - PN_BTREE_SPECIAL;
	uint32_t prev = pn_get32(o);
	pn_btree_page_init(page, page_size, prev, r->blocks[1].blkno);
	if (!pn_btree_add_all(page, page_size, keep, len))
		return false;
	if (!left_gets_new)
		return true;
	if (b->data_len < PN_ITUP_HEADER)
		return false;
	uint32_t l = pn_itup_len(b->data);
	return l <= b->data_len && pn_btree_add(page, page_size, b->data, l, newoff);
}

static bool dedup_script(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			 const struct pn_wal_block *b)
{
	/* Deduplication merges the page's tuples: a small record, most of the page rewritten. */
	if (r->main_len != 2 || b->data_len != 4)
		return false;
	uint32_t n = pn_page_nitems(page);
	uint8_t salt = b->data[0];
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *t = pn_page_tuple(page, page_size, i, PN_TUPLE_LEN);
		if (!t)
			return false;
		for (uint32_t j = PN_TUPLE_HEADER; j < PN_TUPLE_LEN; j++)
			t[j] = (uint8_t)(t[j] * 5u + salt + i);
	}
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
	const uint8_t *first = pn_btree_leaf_item(page, page_size, base, &len);
	memset(buf, 0, PN_BTREE_POSTING_MAX);
	pn_put32(buf + 8, pn_get32(first + 8));
	for (uint32_t i = base; i < base + count; i++) {
		const uint8_t *t = pn_btree_leaf_item(page, page_size, i, &len);
		uint32_t k = pn_btree_ntids(t, len);
		memcpy(buf + PN_BTREE_POSTING_HDR + n * PN_BTREE_TID, pn_btree_tids(t),
		       k * PN_BTREE_TID);
		n += k;
	}
	uint32_t size = PN_ALIGN8(PN_BTREE_POSTING_HDR + n * PN_BTREE_TID);
	pn_put16(buf + 2, PN_BTREE_POSTING_HDR);
	pn_put16(buf + 4, (uint16_t)(n | PN_BTREE_ALT_TID));
	pn_put16(buf + 6, (uint16_t)(size | PN_BTREE_ALT_TID));
	return size;
}

static bool intervals_ok(const uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			 const struct pn_wal_block *b)
{
	uint32_t k = pn_get16(r->main_data), n = pn_page_nitems(page), prev_end = 1, len = 0;
	if (r->main_len != 2 || b->data_len != 4u * k || k == 0)
		return false;
	for (uint32_t j = 0; j < k; j++) {
		uint32_t base = pn_get16(b->data + 4 * j), cnt = pn_get16(b->data + 4 * j + 2);
		if (base < prev_end || cnt < 2 || base + cnt - 1 > n)
			return false;
		uint32_t tot = 0;
		for (uint32_t i = base - 1; i < base - 1 + cnt; i++) {
			const uint8_t *t = pn_btree_leaf_item(page, page_size, i, &len);
			if (!t || pn_btree_ntids(t, len) == 0)
				return false;
			tot += pn_btree_ntids(t, len);
		}
		if (PN_ALIGN8(PN_BTREE_POSTING_HDR + tot * PN_BTREE_TID) >
		    pn_btree_posting_max(page_size))
			return false;
		prev_end = base + cnt;
	}
	for (uint32_t i = 0; i < n; i++)
		if (!pn_btree_leaf_item(page, page_size, i, &len))
			return false;
	return true;
}

/* Re-lays the page's first `keep` items from the special space down, merging each of the
 * k intervals at iv (baseoff u16, nitems u16; sane: intervals_ok) into a posting tuple. */
static void relay(uint8_t *page, uint32_t page_size, const uint8_t *iv, uint32_t k, uint32_t keep)
{
	uint8_t out[32768], posting[PN_BTREE_POSTING_MAX];
	PN_ASSERT(page_size <= sizeof(out) && keep <= pn_page_nitems(page));
	memcpy(out, page, PN_PAGE_HEADER);
	memcpy(out + page_size - PN_BTREE_SPECIAL, page + page_size - PN_BTREE_SPECIAL,
	       PN_BTREE_SPECIAL);
	uint32_t upper = page_size - PN_BTREE_SPECIAL, n = 0, j = 0, len = 0;
	for (uint32_t i = 0; i < keep;) {
		uint32_t base = j < k ? pn_get16(iv + 4 * j) - 1u : UINT32_MAX;
		if (i == base) {
			uint32_t cnt = pn_get16(iv + 4 * j + 2);
			put_tuple(out, &upper, &n, posting,
				  merge(page, page_size, i, cnt, posting));
			i += cnt;
			j++;
			continue;
		}
		const uint8_t *t = pn_btree_leaf_item(page, page_size, i, &len);
		put_tuple(out, &upper, &n, t, len);
		i++;
	}
	memset(out + PN_PAGE_HEADER + 4u * n, 0, upper - (PN_PAGE_HEADER + 4u * n));
	pn_put16(out + 12, (uint16_t)(PN_PAGE_HEADER + 4u * n));
	pn_put16(out + 14, (uint16_t)upper);
	memcpy(page, out, page_size);
}

static bool dedup_leaf(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
		       const struct pn_wal_block *b)
{
	if (!intervals_ok(page, page_size, r, b))
		return false;
	relay(page, page_size, b->data, pn_get16(r->main_data), pn_page_nitems(page));
	return true;
}

bool pn_redo_btree_dedup(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			 const struct pn_wal_block *b)
{
	return pn_btree_is_leaf(page, page_size) ? dedup_leaf(page, page_size, r, b)
						 : dedup_script(page, page_size, r, b);
}

bool pn_redo_btree_insert(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			  const struct pn_wal_block *b)
{
	return apply_btree_insert(page, page_size, r, b);
}

bool pn_redo_btree_split_l(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			   const struct pn_wal_block *b)
{
	return apply_btree_split(page, page_size, r, b, true);
}

bool pn_redo_btree_split_r(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			   const struct pn_wal_block *b)
{
	return apply_btree_split(page, page_size, r, b, false);
}

int pn_redo_btree_describe(const struct pn_wal_record *r, char *out, size_t len)
{
	const uint8_t *m = r->main_data;
	enum pn_rec kind;
	int n = 0;
	if (pn_rec_from_ids(r->rmid, r->info, &kind) && kind == PN_REC_BTREE_DEDUP)
		n = snprintf(out, len, " nintervals %u", pn_get16(m));
	else if (r->main_len == 2) /* INSERT_LEAF */
		n = snprintf(out, len, " off %u", pn_get16(m));
	else if (r->main_len == 10) /* SPLIT_L, SPLIT_R */
		n = snprintf(out, len, " level %u firstright %u newitemoff %u", pn_get32(m),
			     pn_get16(m + 4), pn_get16(m + 6));
	return n;
}

enum pn_rec pn_btree_split_record(const uint8_t *left, uint32_t page_size, const uint8_t *itup,
				  uint32_t itup_len, uint64_t split_key, struct pn_wal_record *rec,
				  uint8_t *main, uint8_t *data0, uint8_t *data1)
{
	return pn_btree_split_record_at(left, page_size, itup, itup_len,
					pn_btree_count_below(left, split_key), split_key, rec, main,
					data0, data1);
}

enum pn_rec pn_btree_split_record_at(const uint8_t *left, uint32_t page_size, const uint8_t *itup,
				     uint32_t itup_len, uint16_t below, uint64_t split_key,
				     struct pn_wal_record *rec, uint8_t *main, uint8_t *data0,
				     uint8_t *data1)
{
	uint64_t key = pn_get64(itup + 8);
	bool goes_left = key < split_key;
	PN_ASSERT(below <= pn_page_nitems(left) && below >= pn_btree_count_below(left, split_key));
	uint16_t newoff = pn_btree_insert_offnum(left, key);
	uint32_t len1 = pn_btree_items_copy(left, below, data1, page_size);
	uint32_t len0 = 0;
	if (goes_left) {
		memcpy(data0, itup, itup_len);
		len0 = itup_len;
	} else {
		/* the new item among the right page's items, after every key <= it */
		uint32_t pos = 0;
		while (pos < len1 && pn_get64(data1 + pos + 8) <= key)
			pos += pn_itup_len(data1 + pos);
		memmove(data1 + pos + itup_len, data1 + pos, len1 - pos);
		memcpy(data1 + pos, itup, itup_len);
		len1 += itup_len;
		newoff = (uint16_t)(newoff - below);
	}
	pn_itup_make(data0 + len0, itup_len, split_key, 0, 0); /* the left's high key */
	len0 += itup_len;
	pn_put32(main, 0);                         /* level */
	pn_put16(main + 4, (uint16_t)(below + 1)); /* firstrightoff */
	pn_put16(main + 6, newoff);
	pn_put16(main + 8, 0); /* postingoff */
	rec->main_data = main;
	rec->main_len = 10;
	rec->blocks[0].data = data0;
	rec->blocks[0].data_len = (uint16_t)len0;
	rec->blocks[1].data = data1;
	rec->blocks[1].data_len = (uint16_t)len1;
	return goes_left ? PN_REC_BTREE_SPLIT_L : PN_REC_BTREE_SPLIT_R;
}
