/*
 * page.c: the data page format and the changes records make (engine layer).
 *
 * A heap page, page_size bytes, little-endian (PostgreSQL's PageHeaderData):
 *   0  pd_lsn      8  {xlogid u32 = lsn >> 32, xrecoff u32}: end LSN of the last change
 *   8  pd_checksum 2  pg_checksum_page() over the page with this field as 0, 0 if off
 *  10  pd_flags    2  0x4 PD_ALL_VISIBLE
 *  12  pd_lower    2  end of the line pointers
 *  14  pd_upper    2  start of tuple data; [pd_lower, pd_upper) is the hole FPIs leave out
 *  16  pd_special  2  = page_size (heap pages have no special space)
 *  18  pd_pagesize_version 2  page_size | 4
 *  20  pd_prune_xid 4
 *  24  line pointers, 4 B each {lp_off u16, lp_len u16}
 *  ... hole ...
 *  pd_upper  tuples, PN_TUPLE_LEN each: 24 B header {t_xmin u32, t_xmax u32, t_cid u32,
 *            t_ctid 6, t_infomask2 u16, t_infomask u16 (hint bits 0x0100.., frozen 0x0300),
 *            t_hoff u8, pad u8} then the payload, whose first 4 bytes updates change.
 *
 * The vacuum and btree_dedup workloads format their own pages (int-row heap pages, the
 * visibility map, btree leaves): their layouts and record meanings are in wl_vacuum.c and
 * wl_btree.c, and pn_page_apply() dispatches to them.
 *
 * An SLRU (commit status) page is 2 bits per xid; with slru_headers it also starts with
 * the 24 B header above (LSN, checksum) and has no hole.
 *
 * pn_page_apply() is the one meaning of every record kind: normal operation applies it to
 * the buffer before inserting the record, redo applies it to the page it reads.
 */
#include "engine.h"

#include <string.h>

static const struct {
	const char *name;
	uint8_t rmid, info;
} rec_ids[PN_REC_COUNT] = {
	[PN_REC_HEAP_HOT_UPDATE] = {"Heap/HOT_UPDATE", PN_RM_HEAP, 0x40},
	[PN_REC_HEAP2_FREEZE_PAGE] = {"Heap2/FREEZE_PAGE", PN_RM_HEAP2, 0x30},
	[PN_REC_BTREE_DEDUP] = {"Btree/DEDUP", PN_RM_BTREE, 0xD0},
	[PN_REC_XACT_COMMIT] = {"Transaction/COMMIT", PN_RM_XACT, 0x00},
	[PN_REC_XACT_ABORT] = {"Transaction/ABORT", PN_RM_XACT, 0x20},
	[PN_REC_XLOG_CHECKPOINT_ONLINE] = {"XLOG/CHECKPOINT_ONLINE", PN_RM_XLOG, 0x10},
	[PN_REC_XLOG_CHECKPOINT_SHUTDOWN] = {"XLOG/CHECKPOINT_SHUTDOWN", PN_RM_XLOG, 0x00},
	[PN_REC_XLOG_FPI_FOR_HINT] = {"XLOG/FPI_FOR_HINT", PN_RM_XLOG, 0xA0},
	[PN_REC_CLOG_SET] = {"CLOG/SET", PN_RM_CLOG, 0x10},
	[PN_REC_HEAP2_VISIBLE] = {"Heap2/VISIBLE", PN_RM_HEAP2, 0x40},
	[PN_REC_BTREE_INSERT_LEAF] = {"Btree/INSERT_LEAF", PN_RM_BTREE, 0x00},
	[PN_REC_BTREE_SPLIT_L] = {"Btree/SPLIT_L", PN_RM_BTREE, 0x30},
	[PN_REC_BTREE_SPLIT_R] = {"Btree/SPLIT_R", PN_RM_BTREE, 0x40},
};

const char *pn_rec_name(enum pn_rec r) { return rec_ids[r].name; }

void pn_rec_ids(enum pn_rec r, uint8_t *rmid, uint8_t *info)
{
	*rmid = rec_ids[r].rmid;
	*info = rec_ids[r].info;
}

bool pn_rec_from_ids(uint8_t rmid, uint8_t info, enum pn_rec *out)
{
	for (int r = 0; r < PN_REC_COUNT; r++) {
		if (rec_ids[r].rmid == rmid && rec_ids[r].info == info) {
			*out = (enum pn_rec)r;
			return true;
		}
	}
	return false;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

pn_lsn pn_page_lsn(const uint8_t *page)
{
	return ((uint64_t)pn_get32(page) << 32) | pn_get32(page + 4);
}

void pn_page_set_lsn(uint8_t *page, pn_lsn lsn)
{
	pn_put32(page, (uint32_t)(lsn >> 32));
	pn_put32(page + 4, (uint32_t)lsn);
}

uint32_t pn_page_nitems(const uint8_t *page)
{
	uint16_t lower = pn_get16(page + 12);
	return lower > PN_PAGE_HEADER ? (lower - PN_PAGE_HEADER) / 4u : 0;
}

static void header_init(uint8_t *page, uint32_t page_size, uint16_t lower, uint16_t upper)
{
	pn_put16(page + 12, lower);
	pn_put16(page + 14, upper);
	pn_put16(page + 16, (uint16_t)page_size);
	pn_put16(page + 18, (uint16_t)(page_size | 4u));
}

void pn_page_init(uint8_t *page, uint32_t page_size, uint32_t blkno, bool slru)
{
	memset(page, 0, page_size);
	if (slru)
		return; /* headerless SLRU: zeros; the caller adds a header when asked */
	uint32_t n = (page_size - PN_PAGE_HEADER) * 9u / 10u / (PN_TUPLE_LEN + 4u);
	uint16_t upper = (uint16_t)(page_size - n * PN_TUPLE_LEN);
	header_init(page, page_size, (uint16_t)(PN_PAGE_HEADER + 4u * n), upper);
	for (uint32_t i = 0; i < n; i++) {
		uint16_t off = (uint16_t)(upper + i * PN_TUPLE_LEN);
		pn_put16(page + PN_PAGE_HEADER + 4 * i, off);
		pn_put16(page + PN_PAGE_HEADER + 4 * i + 2, PN_TUPLE_LEN);
		uint8_t *t = page + off;
		pn_put32(t, 2);              /* t_xmin: frozen-ish bootstrap xid */
		pn_put16(t + 18, 1);         /* t_infomask2: one attribute */
		t[22] = PN_TUPLE_HEADER;     /* t_hoff */
		for (uint32_t j = PN_TUPLE_HEADER; j < PN_TUPLE_LEN; j += 8) {
			uint64_t v = mix64(((uint64_t)blkno << 32) ^ (i << 8) ^ j);
			memcpy(t + j, &v, PN_MIN(8u, PN_TUPLE_LEN - j));
		}
	}
}

void pn_page_hole(const uint8_t *page, uint32_t page_size, uint16_t *off, uint16_t *len)
{
	uint16_t lower = pn_get16(page + 12), upper = pn_get16(page + 14);
	*off = 0;
	*len = 0;
	if (lower >= PN_PAGE_HEADER && upper > lower && upper <= page_size) {
		*off = lower;
		*len = (uint16_t)(upper - lower);
	}
}

void pn_page_set_checksum(uint8_t *page, uint32_t page_size, uint32_t blkno)
{
	pn_put16(page + 8, pn_page_checksum(page, page_size, blkno));
}

static bool all_zero(const uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

bool pn_page_verify(const uint8_t *page, uint32_t page_size, uint32_t blkno, bool checksums)
{
	uint16_t lower = pn_get16(page + 12), upper = pn_get16(page + 14);
	uint16_t special = pn_get16(page + 16);
	if (lower == 0 && upper == 0 && all_zero(page, page_size))
		return true; /* PageIsNew: an all-zero page is accepted */
	if (lower < PN_PAGE_HEADER || lower > upper || upper > special || special > page_size)
		return false;
	if (checksums && pn_get16(page + 8) != pn_page_checksum(page, page_size, blkno))
		return false;
	return true;
}

static uint8_t *tuple_at(uint8_t *page, uint32_t page_size, uint32_t item)
{
	if (item >= pn_page_nitems(page))
		return NULL;
	uint16_t off = pn_get16(page + PN_PAGE_HEADER + 4 * item);
	uint16_t len = pn_get16(page + PN_PAGE_HEADER + 4 * item + 2);
	if (len < PN_TUPLE_LEN || (uint32_t)off + len > page_size)
		return NULL;
	return page + off;
}

void pn_page_set_hint(uint8_t *page, uint32_t item)
{
	uint32_t page_size = pn_get16(page + 16);
	uint8_t *t = tuple_at(page, page_size, item);
	if (t)
		pn_put16(t + 20, pn_get16(t + 20) | PN_HINT_XMIN_COMMITTED);
}

static bool apply_hot_update(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			     const struct pn_wal_block *b)
{
	if (r->main_len != 14 || b->data_len != 9)
		return false;
	uint32_t item = (uint32_t)pn_get16(r->main_data + 12) - 1u;
	uint8_t *t = tuple_at(page, page_size, item);
	if (!t)
		return false;
	pn_put32(t, r->xid);                          /* t_xmin of the new version */
	pn_put32(t + 4, 0);                           /* t_xmax */
	pn_put16(t + 18, pn_get16(b->data));          /* t_infomask2 */
	pn_put16(t + 20, pn_get16(b->data + 2));      /* t_infomask: hint bits cleared */
	memcpy(t + PN_TUPLE_HEADER, b->data + 5, 4);  /* the changed column */
	pn_put32(page + 20, r->xid);                  /* pd_prune_xid */
	return true;
}

static bool apply_freeze(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r)
{
	if (r->main_len < 6)
		return false;
	uint32_t n = pn_get16(r->main_data + 4);
	if (r->main_len != 6 + 12 * n)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *f = r->main_data + 6 + 12 * i;
		uint8_t *t = tuple_at(page, page_size, (uint32_t)pn_get16(f) - 1u);
		if (!t)
			return false;
		pn_put16(t + 20, pn_get16(f + 8));
	}
	pn_put16(page + 10, pn_get16(page + 10) | PN_PD_ALL_VISIBLE);
	return true;
}

static bool apply_dedup(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			const struct pn_wal_block *b)
{
	/* Deduplication merges the page's tuples: a small record, most of the page rewritten. */
	if (r->main_len != 2 || b->data_len != 4)
		return false;
	uint32_t n = pn_page_nitems(page);
	uint8_t salt = b->data[0];
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *t = tuple_at(page, page_size, i);
		if (!t)
			return false;
		for (uint32_t j = PN_TUPLE_HEADER; j < PN_TUPLE_LEN; j++)
			t[j] = (uint8_t)(t[j] * 5u + salt + i);
	}
	return true;
}

bool pn_page_apply(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
		   const struct pn_wal_block *b)
{
	enum pn_rec kind;
	if (b->has_image && b->image_apply) {
		memcpy(page, b->image, page_size);
		return true;
	}
	if (!pn_rec_from_ids(r->rmid, r->info, &kind))
		return false;
	switch (kind) {
	case PN_REC_HEAP_HOT_UPDATE: return apply_hot_update(page, page_size, r, b);
	case PN_REC_HEAP2_FREEZE_PAGE: /* PG16's freeze plans (7 B main) or the script op's */
		return r->main_len == 7 ? pn_wl_apply_freeze_plans(page, page_size, r, b)
					: apply_freeze(page, page_size, r);
	case PN_REC_BTREE_DEDUP: /* a btree leaf (wl_btree.c) or the script op's page */
		return pn_wl_btree_is_leaf(page, page_size)
			       ? pn_wl_apply_btree_dedup(page, page_size, r, b)
			       : apply_dedup(page, page_size, r, b);
	case PN_REC_HEAP2_VISIBLE: return pn_wl_apply_visible(page, page_size, r, b);
	case PN_REC_BTREE_INSERT_LEAF: return pn_wl_apply_insert_leaf(page, page_size, r, b);
	case PN_REC_BTREE_SPLIT_L:
	case PN_REC_BTREE_SPLIT_R: return pn_wl_apply_split(page, page_size, r, b);
	case PN_REC_CLOG_SET: {
		if (r->main_len != 5)
			return false;
		pn_slru_set(page, page_size, r->main_data[4] != 0, pn_get32(r->main_data));
		return true;
	}
	default: return false;
	}
}

uint32_t pn_slru_page_of(uint32_t xid, uint32_t page_size, bool header, uint32_t slru_pages)
{
	uint32_t per_page = (page_size - (header ? PN_PAGE_HEADER : 0)) * 4u;
	return (xid / per_page) % slru_pages;
}

void pn_slru_set(uint8_t *page, uint32_t page_size, bool header, uint32_t xid)
{
	uint32_t base = header ? PN_PAGE_HEADER : 0;
	uint32_t per_page = (page_size - base) * 4u;
	uint32_t bit = (xid % per_page) * 2u;
	if (header && pn_get16(page + 12) == 0)
		header_init(page, page_size, (uint16_t)page_size, (uint16_t)page_size);
	page[base + bit / 8] |= (uint8_t)(1u << (bit % 8)); /* TRANSACTION_STATUS_COMMITTED */
}
