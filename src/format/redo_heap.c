/*
 * redo_heap.c: what the heap's records do to heap and visibility-map pages (format layer,
 * redo_heap.h; rows of rmgrlist.h). Page layouts in page.c.
 *
 * Records of the realistic workloads, PostgreSQL 15's layouts (main data / block data):
 *   Heap/INSERT (10, 0x00; +INIT 0x80 first initializes block 0 as an empty heap page):
 *     main {offnum u16, flags u8}; block 0 data xl_heap_header {t_infomask2 u16,
 *     t_infomask u16, t_hoff u8} + the tuple's bytes from offset 23. The tuple (t_xmin =
 *     xid, t_ctid = (blkno, offnum)) is stored at pd_upper - MAXALIGN(t_len) and line
 *     pointer offnum is set; line pointers between the old pd_lower and offnum are
 *     added unused (the workload assigns offsets, so concurrent inserts may land out of
 *     order); offnum may also reuse an unused line pointer.
 *   Heap/UPDATE (10, 0x20; +INIT 0xA0): main xl_heap_update {old_xmax u32, old_offnum u16,
 *     old_infobits u8, flags u8, new_xmax u32, new_offnum u16}; block 0 (new page) data as
 *     INSERT's, inserted at new_offnum; block 1 (old page, no data): the old tuple gets
 *     t_xmax = old_xmax, HEAP_XMAX_INVALID cleared, HEAP_KEYS_UPDATED, t_ctid = (block 0,
 *     new_offnum); pd_prune_xid = xid.
 *   Heap/HOT_UPDATE (10, 0x40): main as UPDATE; block 0 data [prefix u16 if flags & 0x20]
 *     [suffix u16 if flags & 0x40] xl_heap_header, [byte 23 of the tuple, when a prefix
 *     or suffix is given: the bytes up to t_hoff], then the changed bytes. Our HOT update
 *     is in place: tuple new_offnum gets t_xmin = xid, t_xmax = 0, the header's infomasks,
 *     and the changed bytes at payload offset `prefix` (offset 24 + prefix).
 *   Heap/LOCK (10, 0x60): main {locking_xid u32, offnum u16, infobits u8, flags u8}:
 *     t_xmax = locking_xid, XMAX_INVALID cleared, XMAX_EXCL_LOCK | XMAX_LOCK_ONLY set.
 *   Heap/DELETE (10, 0x10): main {xmax u32, offnum u16, infobits u8, flags u8}: t_xmax,
 *     XMAX_INVALID cleared, HEAP_KEYS_UPDATED; pd_prune_xid = xmax.
 *   Heap2/PRUNE (9, 0x10): main xl_heap_prune {latestRemovedXid u32, nredirected u16,
 *     ndead u16}; block 0 data: the offsets (u16) of nredirected pairs, ndead dead and the
 *     rest unused line pointers. Our HOT updates are in place, so there are no dead
 *     versions on the page to remove: its effect is pd_prune_xid = 0 (the record's size
 *     and count are what is modelled).
 *   Heap2/FREEZE_PAGE (9, 0x30), two layouts told apart by the main data's length:
 *     PostgreSQL 15's (the script op's): main xl_heap_freeze_page {cutoff_xid u32, ntuples
 *     u16}, block 0 data ntuples xl_heap_freeze_tuple {xmax u32, offset u16, t_infomask2
 *     u16, t_infomask u16, frzflags u8, pad} (each tuple's t_xmax and infomasks set, then
 *     PD_ALL_VISIBLE: the op's "VISIBLE-like" part); and PostgreSQL 16's freeze plans
 *     (the vacuum workload's, main {snapshotConflictHorizon u32, nplans u16, isCatalogRel
 *     u8}, PN_FREEZE_MAIN bytes; block 0 data = nplans plans {xmax u32, t_infomask2 u16,
 *     t_infomask u16, frzflags u8, pad, ntuples u16} (PN_FREEZE_PLAN bytes) + the plans'
 *     offsets u16, in order): each tuple gets its plan's xmax and infomasks.
 *   Heap2/VISIBLE (9, 0x40): main {cutoff xid u32, flags u8}; block 0 the VM page: the
 *     flags' ALL_VISIBLE and ALL_FROZEN bits of block 1's heap block are set; block 1 the
 *     heap page: PD_ALL_VISIBLE.
 */
#include "redo_heap.h"

#include <stdio.h>
#include <string.h>

#define XLH_UPDATE_PREFIX_FROM_OLD 0x20u
#define XLH_UPDATE_SUFFIX_FROM_OLD 0x40u
#define HEAP_XMAX_LOCK_ONLY 0x0080u
#define HEAP_XMAX_EXCL_LOCK 0x0040u
#define HEAP_KEYS_UPDATED 0x2000u

static bool apply_hot_update(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			     const struct pn_wal_block *b)
{
	if (r->main_len != 14)
		return false;
	uint8_t flags = r->main_data[7];
	uint32_t pos = 0, prefix = 0;
	if (flags & XLH_UPDATE_PREFIX_FROM_OLD) {
		if (b->data_len < pos + 2)
			return false;
		prefix = pn_get16(b->data + pos);
		pos += 2;
	}
	if (flags & XLH_UPDATE_SUFFIX_FROM_OLD)
		pos += 2;
	if (b->data_len < pos + 5)
		return false;
	/* with prefix or suffix, the bytes from 23 to t_hoff (one: t_hoff is 24) come first */
	uint32_t bits = (flags & (XLH_UPDATE_PREFIX_FROM_OLD | XLH_UPDATE_SUFFIX_FROM_OLD)) ? 1 : 0;
	if (b->data_len < pos + 5 + bits)
		return false;
	uint32_t n = b->data_len - pos - 5 - bits;
	uint32_t item = (uint32_t)pn_get16(r->main_data + 12) - 1u;
	uint8_t *t = pn_page_tuple(page, page_size, item, PN_TUPLE_HEADER + prefix + n);
	if (!t)
		return false;
	const uint8_t *h = b->data + pos;
	pn_put32(t, r->xid);               /* t_xmin of the new version */
	pn_put32(t + 4, 0);                /* t_xmax */
	pn_put16(t + 18, pn_get16(h));     /* t_infomask2 */
	pn_put16(t + 20, pn_get16(h + 2)); /* t_infomask: hint bits cleared */
	if (bits)
		t[23] = h[5];
	memcpy(t + PN_TUPLE_HEADER + prefix, h + 5 + bits, n); /* the changed columns */
	pn_put32(page + 20, r->xid);                           /* pd_prune_xid */
	return true;
}

static bool heap_insert_data(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			     const struct pn_wal_block *b, uint32_t offnum, bool init)
{
	if (b->data_len < 5 + 1)
		return false;
	if (init)
		pn_heap_page_init(page, page_size);
	uint32_t t_len = 23u + b->data_len - 5u;
	uint8_t *t = pn_heap_place(page, page_size, offnum, t_len);
	if (!t)
		return false;
	pn_put32(t, r->xid);                          /* t_xmin */
	pn_put16(t + 12, (uint16_t)(b->blkno >> 16)); /* t_ctid */
	pn_put16(t + 14, (uint16_t)b->blkno);
	pn_put16(t + 16, (uint16_t)offnum);
	pn_put16(t + 18, pn_get16(b->data));     /* t_infomask2 */
	pn_put16(t + 20, pn_get16(b->data + 2)); /* t_infomask */
	t[22] = b->data[4];                      /* t_hoff */
	memcpy(t + 23, b->data + 5, b->data_len - 5u);
	return true;
}

static bool apply_heap_insert(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			      const struct pn_wal_block *b, bool init)
{
	if (r->main_len != 3)
		return false;
	return heap_insert_data(page, page_size, r, b, pn_get16(r->main_data), init);
}

static bool apply_heap_update(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			      const struct pn_wal_block *b, bool init)
{
	if (r->main_len != 14 || r->nblocks != 2)
		return false;
	uint16_t new_off = pn_get16(r->main_data + 12);
	if (b == &r->blocks[0])
		return heap_insert_data(page, page_size, r, b, new_off, init);
	uint8_t *t = pn_page_tuple(page, page_size, pn_get16(r->main_data + 4) - 1u,
				   PN_TUPLE_HEADER);
	if (!t || b->data_len != 0)
		return false;
	pn_put32(t + 4, pn_get32(r->main_data));                /* t_xmax */
	pn_put16(t + 12, (uint16_t)(r->blocks[0].blkno >> 16)); /* t_ctid */
	pn_put16(t + 14, (uint16_t)r->blocks[0].blkno);
	pn_put16(t + 16, new_off);
	pn_put16(t + 18, pn_get16(t + 18) | HEAP_KEYS_UPDATED);
	pn_put16(t + 20, pn_get16(t + 20) & ~PN_HEAP_XMAX_INVALID);
	pn_put32(page + 20, r->xid); /* pd_prune_xid */
	return true;
}

static bool apply_heap_lock_delete(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
				   bool lock)
{
	if (r->main_len != 8)
		return false;
	uint8_t *t = pn_page_tuple(page, page_size, pn_get16(r->main_data + 4) - 1u,
				   PN_TUPLE_HEADER);
	if (!t)
		return false;
	uint16_t mask = pn_get16(t + 20) & ~PN_HEAP_XMAX_INVALID;
	pn_put32(t + 4, pn_get32(r->main_data));
	if (lock) {
		pn_put16(t + 20, mask | HEAP_XMAX_EXCL_LOCK | HEAP_XMAX_LOCK_ONLY);
		return true;
	}
	pn_put16(t + 20, mask);
	pn_put16(t + 18, pn_get16(t + 18) | HEAP_KEYS_UPDATED);
	pn_put32(page + 20, pn_get32(r->main_data));
	return true;
}

uint16_t pn_heap_freeze_tuples(const uint8_t *page, uint32_t page_size, uint32_t n,
			       uint16_t infomask, uint8_t *out)
{
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *t = pn_page_tuple((uint8_t *)page, page_size, i, PN_TUPLE_LEN);
		uint8_t *f = out + PN_FREEZE_TUPLE * i;
		PN_ASSERT(t != NULL);
		memset(f, 0, PN_FREEZE_TUPLE);
		pn_put32(f, pn_get32(t + 4));       /* xmax */
		pn_put16(f + 4, (uint16_t)(i + 1)); /* offset */
		pn_put16(f + 6, pn_get16(t + 18));  /* t_infomask2 */
		pn_put16(f + 8, infomask);          /* t_infomask; frzflags 0 */
	}
	return (uint16_t)(PN_FREEZE_TUPLE * n);
}

static bool freeze_tuples(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			  const struct pn_wal_block *b)
{
	uint32_t n = pn_get16(r->main_data + 4);
	if (b->data_len != PN_FREEZE_TUPLE * n)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *f = b->data + PN_FREEZE_TUPLE * i;
		uint8_t *t = pn_page_tuple(page, page_size, (uint32_t)pn_get16(f + 4) - 1u,
					   PN_TUPLE_LEN);
		if (!t)
			return false;
		pn_put32(t + 4, pn_get32(f));      /* t_xmax */
		pn_put16(t + 18, pn_get16(f + 6)); /* t_infomask2 */
		pn_put16(t + 20, pn_get16(f + 8)); /* t_infomask */
	}
	pn_put16(page + 10, pn_get16(page + 10) | PN_PD_ALL_VISIBLE);
	return true;
}

static bool freeze_plans(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			 const struct pn_wal_block *b)
{
	if (r->main_len != PN_FREEZE_MAIN || b->data_len < PN_FREEZE_PLAN)
		return false;
	uint32_t nplans = pn_get16(r->main_data + 4), used = nplans * PN_FREEZE_PLAN;
	const uint8_t *offs = b->data + used;
	for (uint32_t k = 0; k < nplans; k++) {
		const uint8_t *plan = b->data + k * PN_FREEZE_PLAN;
		uint32_t nt = pn_get16(plan + 10);
		if (used + 2 * nt > b->data_len)
			return false;
		for (uint32_t j = 0; j < nt; j++, offs += 2) {
			uint8_t *t = pn_page_tuple(page, page_size, (uint32_t)pn_get16(offs) - 1u,
						   PN_TUPLE_HEADER);
			if (!t)
				return false;
			pn_put32(t + 4, pn_get32(plan));      /* t_xmax */
			pn_put16(t + 18, pn_get16(plan + 4)); /* t_infomask2 */
			pn_put16(t + 20, pn_get16(plan + 6)); /* t_infomask */
		}
		used += 2 * nt;
	}
	return used == b->data_len;
}

bool pn_redo_heap2_visible(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			   const struct pn_wal_block *b)
{
	if (r->nblocks != 2 || r->main_len != 5)
		return false;
	if (b == &r->blocks[1]) {
		pn_put16(page + 10, pn_get16(page + 10) | PN_PD_ALL_VISIBLE);
		return true;
	}
	uint32_t heap_blk = r->blocks[1].blkno % pn_vm_heap_blocks(page_size);
	uint8_t flags = r->main_data[4] & (PN_VM_ALL_VISIBLE | PN_VM_ALL_FROZEN);
	page[PN_PAGE_HEADER + heap_blk / 4u] |= (uint8_t)(flags << (2u * (heap_blk % 4u)));
	return true;
}

bool pn_redo_heap_hot_update(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			     const struct pn_wal_block *b)
{
	return apply_hot_update(page, page_size, r, b);
}

bool pn_redo_heap2_freeze(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			  const struct pn_wal_block *b)
{
	if (r->main_len == PN_FREEZE_MAIN)
		return freeze_plans(page, page_size, r, b);
	return r->main_len == PN_FREEZE_MAIN_PG15 && freeze_tuples(page, page_size, r, b);
}

bool pn_redo_heap_insert(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			 const struct pn_wal_block *b)
{
	return apply_heap_insert(page, page_size, r, b, false);
}

bool pn_redo_heap_insert_init(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			      const struct pn_wal_block *b)
{
	return apply_heap_insert(page, page_size, r, b, true);
}

bool pn_redo_heap_update(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			 const struct pn_wal_block *b)
{
	return apply_heap_update(page, page_size, r, b, false);
}

bool pn_redo_heap_update_init(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			      const struct pn_wal_block *b)
{
	return apply_heap_update(page, page_size, r, b, true);
}

bool pn_redo_heap_lock(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
		       const struct pn_wal_block *b)
{
	return apply_heap_lock_delete(page, page_size, r, true);
}

bool pn_redo_heap_delete(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			 const struct pn_wal_block *b)
{
	return apply_heap_lock_delete(page, page_size, r, false);
}

bool pn_redo_heap2_prune(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			 const struct pn_wal_block *b)
{
	if (r->main_len != 8 || b->data_len % 2 != 0 ||
	    b->data_len / 2u < 2u * pn_get16(r->main_data + 4) + pn_get16(r->main_data + 6))
		return false;
	pn_put32(page + 20, 0); /* pd_prune_xid */
	return true;
}

int pn_redo_heap_describe(const struct pn_wal_record *r, char *out, size_t len)
{
	const uint8_t *m = r->main_data;
	int n = 0;
	if (r->rmid == PN_RM_HEAP && r->main_len == 3) /* INSERT */
		n = snprintf(out, len, " off %u", pn_get16(m));
	else if (r->rmid == PN_RM_HEAP && r->main_len == 14) /* UPDATE, HOT_UPDATE */
		n = snprintf(out, len, " old_xmax %u old_off %u new_off %u", pn_get32(m),
			     pn_get16(m + 4), pn_get16(m + 12));
	else if (r->rmid == PN_RM_HEAP && r->main_len == 8) /* LOCK, DELETE */
		n = snprintf(out, len, " xmax %u off %u", pn_get32(m), pn_get16(m + 4));
	else if (r->rmid == PN_RM_HEAP2 && r->main_len >= 6) /* PRUNE, FREEZE_PAGE, VISIBLE */
		n = snprintf(out, len, " xid %u n %u", pn_get32(m), pn_get16(m + 4));
	return n;
}
