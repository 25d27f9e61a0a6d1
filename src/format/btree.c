/*
 * btree.c: btree leaf pages (format layer, btree.h).
 *
 * The realistic workloads' btree leaves use the heap page's 24 B header with pd_special =
 * page_size - 16 and BTPageOpaqueData there {btpo_prev u32, btpo_next u32, btpo_level u32,
 * btpo_flags u16 (BTP_LEAF 0x1), btpo_cycleid u16}, items in key order, each an index tuple
 * {t_tid 6 B = bi_hi u16, bi_lo u16, posid u16; t_info u16 = length; key u64 at 8; zeros to
 * the length (16 or 24)}. Our leaves carry no high-key item. An int4 key (btree_dedup) is
 * the same 16 B tuple: its u32 at 8 and the zeros at 12 read as the u64. btree_dedup's
 * leaves also hold posting tuples (t_info has INDEX_ALT_TID_MASK 0x2000; the length is
 * t_info & 0x1FFF either way; the layout in wl_btree.c's header). What the btree records
 * do to these pages, and the split records, are redo_btree.c's.
 */
#include "btree.h"

#include <string.h>

#define BTP_LEAF 0x0001u

uint32_t pn_itup_len(const uint8_t *itup) { return pn_get16(itup + 6) & 0x1FFFu; }

void pn_btree_page_init(uint8_t *page, uint32_t page_size, uint32_t prev, uint32_t next)
{
	pn_heap_page_init(page, page_size);
	uint16_t special = (uint16_t)(page_size - PN_BTREE_SPECIAL);
	pn_put16(page + 14, special);
	pn_put16(page + 16, special);
	uint8_t *o = page + special;
	pn_put32(o, prev);
	pn_put32(o + 4, next);
	pn_put32(o + 8, 0); /* btpo_level */
	pn_put16(o + 12, BTP_LEAF);
}

const uint8_t *pn_btree_item(const uint8_t *page, uint32_t i)
{
	return page + pn_get16(page + PN_PAGE_HEADER + 4 * i);
}

bool pn_btree_add(uint8_t *page, uint32_t page_size, const uint8_t *itup, uint32_t len,
		  uint32_t offnum)
{
	uint32_t n = pn_page_nitems(page), lower = pn_get16(page + 12), upper = pn_get16(page + 14);
	uint32_t room = (uint32_t)PN_ALIGN8(len);
	if (len < PN_ITUP_HEADER + 8 || pn_itup_len(itup) != len || offnum == 0 || offnum > n + 1 ||
	    lower < PN_PAGE_HEADER || upper > page_size || upper < room || upper - room < lower + 4)
		return false;
	uint8_t *lp = page + PN_PAGE_HEADER + 4 * (offnum - 1);
	memmove(lp + 4, lp, 4 * (n - (offnum - 1)));
	upper -= room;
	memset(page + upper, 0, room);
	memcpy(page + upper, itup, len);
	pn_put16(lp, (uint16_t)upper);
	pn_put16(lp + 2, (uint16_t)len);
	pn_put16(page + 12, (uint16_t)(lower + 4));
	pn_put16(page + 14, (uint16_t)upper);
	return true;
}

bool pn_btree_add_all(uint8_t *page, uint32_t page_size, const uint8_t *data, uint32_t len)
{
	uint32_t pos = 0;
	while (pos < len) {
		if (len - pos < PN_ITUP_HEADER)
			return false;
		uint32_t l = pn_itup_len(data + pos);
		if (l > len - pos ||
		    !pn_btree_add(page, page_size, data + pos, l, pn_page_nitems(page) + 1))
			return false;
		pos += l;
	}
	return true;
}

uint32_t pn_btree_items_per_page(uint32_t page_size, uint32_t itup_len)
{
	return (page_size - PN_PAGE_HEADER - PN_BTREE_SPECIAL) /
	       ((uint32_t)PN_ALIGN8(itup_len) + 4u);
}

void pn_itup_make(uint8_t *out, uint32_t itup_len, uint64_t key, uint32_t heap_blk,
		  uint16_t heap_off)
{
	memset(out, 0, itup_len);
	pn_put16(out, (uint16_t)(heap_blk >> 16));
	pn_put16(out + 2, (uint16_t)heap_blk);
	pn_put16(out + 4, heap_off);
	pn_put16(out + 6, (uint16_t)itup_len);
	pn_put64(out + 8, key);
}

void pn_btree_leaf_fill(uint8_t *page, uint32_t page_size, const uint64_t *keys, uint32_t n,
			uint32_t itup_len)
{
	/* what pn_btree_add of keys 1..n makes, in one pass (a lazily formatted device builds a
	 * leaf at each read of it: docs/performance.md) */
	memset(page, 0, 8);
	pn_btree_page_init(page, page_size, 0, 0);
	uint32_t room = (uint32_t)PN_ALIGN8(itup_len), upper = pn_get16(page + 14);
	PN_ASSERT(itup_len >= PN_ITUP_HEADER + 8 && itup_len <= 64);
	PN_ASSERT((uint64_t)n * (room + 4u) <= upper - PN_PAGE_HEADER);
	for (uint32_t i = 0; i < n; i++) {
		upper -= room;
		pn_itup_make(page + upper, itup_len, keys[i], (uint32_t)(keys[i] >> 6),
			     (uint16_t)(keys[i] % 64 + 1));
		pn_put16(page + PN_PAGE_HEADER + 4 * i, (uint16_t)upper);
		pn_put16(page + PN_PAGE_HEADER + 4 * i + 2, (uint16_t)itup_len);
	}
	pn_put16(page + 12, (uint16_t)(PN_PAGE_HEADER + 4u * n));
	pn_put16(page + 14, (uint16_t)upper);
}

uint16_t pn_btree_insert_offnum(const uint8_t *page, uint64_t key)
{
	uint32_t n = pn_page_nitems(page), i = n;
	while (i > 0 && pn_get64(pn_btree_item(page, i - 1) + 8) > key)
		i--;
	return (uint16_t)(i + 1);
}

uint16_t pn_btree_count_below(const uint8_t *page, uint64_t key)
{
	uint32_t n = pn_page_nitems(page), i = 0;
	while (i < n && pn_get64(pn_btree_item(page, i) + 8) < key)
		i++;
	return (uint16_t)i;
}

uint32_t pn_btree_items_copy(const uint8_t *page, uint16_t from, uint8_t *out, uint32_t cap)
{
	uint32_t n = pn_page_nitems(page), len = 0;
	for (uint32_t i = from; i < n; i++) {
		uint32_t l = pn_get16(page + PN_PAGE_HEADER + 4 * i + 2);
		PN_ASSERT(len + l <= cap);
		memcpy(out + len, pn_btree_item(page, i), l);
		len += l;
	}
	return len;
}

/* ---- btree_dedup's leaves: posting tuples ---- */

uint32_t pn_btree_posting_max(uint32_t page_size)
{
	uint32_t third = (page_size - 40u - PN_BTREE_SPECIAL) / 3u;
	return PN_MIN(PN_BTREE_POSTING_MAX, (third & ~7u) - 8u);
}

const uint8_t *pn_btree_leaf_item(const uint8_t *page, uint32_t page_size, uint32_t i,
				  uint32_t *len)
{
	if (i >= pn_page_nitems(page))
		return NULL;
	const uint8_t *lp = page + PN_PAGE_HEADER + 4u * i;
	uint32_t off = pn_get16(lp), l = pn_get16(lp + 2);
	if (off < PN_PAGE_HEADER || l < PN_BTREE_PLAIN || off + l > page_size - PN_BTREE_SPECIAL)
		return NULL;
	*len = l;
	return page + off;
}

static bool is_posting(const uint8_t *t) { return (pn_get16(t + 6) & PN_BTREE_ALT_TID) != 0; }

uint32_t pn_btree_ntids(const uint8_t *t, uint32_t len)
{
	if (!is_posting(t))
		return 1;
	uint32_t n = pn_get16(t + 4) & ~PN_BTREE_ALT_TID;
	return PN_BTREE_POSTING_HDR + n * PN_BTREE_TID <= len ? n : 0;
}

const uint8_t *pn_btree_tids(const uint8_t *t)
{
	return is_posting(t) ? t + PN_BTREE_POSTING_HDR : t;
}

bool pn_btree_is_leaf(const uint8_t *page, uint32_t page_size)
{
	uint32_t lower = pn_get16(page + 12), upper = pn_get16(page + 14);
	return pn_get16(page + 16) == page_size - PN_BTREE_SPECIAL && lower >= PN_PAGE_HEADER &&
	       lower <= upper && upper <= page_size - PN_BTREE_SPECIAL &&
	       (pn_get16(page + page_size - PN_BTREE_SPECIAL + 12) & BTP_LEAF);
}
