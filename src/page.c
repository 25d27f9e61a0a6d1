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
 * The realistic workloads (pgbench, tpcc) use the same header with variable-length tuples:
 * lp_len = t_len (the bytes from t_xmin to the end of the data), each tuple stored at a
 * MAXALIGNed (8) offset; a line pointer {0, 0} is unused. Their btree leaves use
 * pd_special = page_size - 16 with BTPageOpaqueData there {btpo_prev u32, btpo_next u32,
 * btpo_level u32, btpo_flags u16 (BTP_LEAF 0x1), btpo_cycleid u16}, items in key order,
 * each an index tuple {t_tid 6 B = bi_hi u16, bi_lo u16, posid u16; t_info u16 = length;
 * key u64 at 8; zeros to the length (16 or 24)}. Our leaves carry no high-key item. An int4
 * key (btree_dedup) is the same 16 B tuple: its u32 at 8 and the zeros at 12 read as the
 * u64. btree_dedup's leaves also hold posting tuples (t_info has INDEX_ALT_TID_MASK 0x2000;
 * the length is t_info & 0x1FFF either way; layout and Btree/DEDUP in wl_btree.c).
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
 *
 * An SLRU (commit status) page is 2 bits per xid; with slru_headers it also starts with
 * the 24 B header above (LSN, checksum) and has no hole.
 *
 * pn_page_apply() is the one meaning of every record kind: normal operation applies it to
 * the buffer before inserting the record, redo applies it to the page it reads.
 */
#include "page.h"
#include "umbra_policy.h"
#include "workload.h"

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
	[PN_REC_XLOG2_HINT_DELTA] = {"XLOG2/HINT_DELTA", PN_RM_XLOG2, 0x00},
	[PN_REC_HEAP_INSERT] = {"Heap/INSERT", PN_RM_HEAP, 0x00},
	[PN_REC_HEAP_INSERT_INIT] = {"Heap/INSERT+INIT", PN_RM_HEAP, 0x80},
	[PN_REC_HEAP_UPDATE] = {"Heap/UPDATE", PN_RM_HEAP, 0x20},
	[PN_REC_HEAP_UPDATE_INIT] = {"Heap/UPDATE+INIT", PN_RM_HEAP, 0xA0},
	[PN_REC_HEAP_LOCK] = {"Heap/LOCK", PN_RM_HEAP, 0x60},
	[PN_REC_HEAP_DELETE] = {"Heap/DELETE", PN_RM_HEAP, 0x10},
	[PN_REC_BTREE_INSERT_LEAF] = {"Btree/INSERT_LEAF", PN_RM_BTREE, 0x00},
	[PN_REC_BTREE_SPLIT_L] = {"Btree/SPLIT_L", PN_RM_BTREE, 0x30},
	[PN_REC_BTREE_SPLIT_R] = {"Btree/SPLIT_R", PN_RM_BTREE, 0x40},
	[PN_REC_HEAP2_PRUNE] = {"Heap2/PRUNE", PN_RM_HEAP2, 0x10},
	[PN_REC_HEAP2_VISIBLE] = {"Heap2/VISIBLE", PN_RM_HEAP2, 0x40},
	[PN_REC_IMPORTED] = {"Imported/RECORD", PN_RM_XLOG, PN_INFO_IMPORTED},
};

const char *pn_rec_name(enum pn_rec r) { return rec_ids[r].name; }

void pn_rec_ids(enum pn_rec r, uint8_t *rmid, uint8_t *info)
{
	*rmid = rec_ids[r].rmid;
	*info = rec_ids[r].info;
}

bool pn_rec_from_ids(uint8_t rmid, uint8_t info, enum pn_rec *out)
{
	if (info & PN_INFO_IMPORTED) { /* any manager's: the records of wl_import.c */
		*out = PN_REC_IMPORTED;
		return true;
	}
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

/* Item `item`'s tuple if it has at least `need` bytes inside the page, else NULL. */
static uint8_t *tuple_need(uint8_t *page, uint32_t page_size, uint32_t item, uint32_t need)
{
	if (item >= pn_page_nitems(page))
		return NULL;
	uint16_t off = pn_get16(page + PN_PAGE_HEADER + 4 * item);
	uint16_t len = pn_get16(page + PN_PAGE_HEADER + 4 * item + 2);
	if (off < PN_PAGE_HEADER || len < need || (uint32_t)off + len > page_size)
		return NULL;
	return page + off;
}

static uint8_t *tuple_at(uint8_t *page, uint32_t page_size, uint32_t item)
{
	return tuple_need(page, page_size, item, PN_TUPLE_LEN);
}

void pn_page_set_hint(uint8_t *page, uint32_t item)
{
	uint32_t page_size = pn_get16(page + 16);
	uint8_t *t = tuple_need(page, page_size, item, PN_TUPLE_HEADER);
	if (t)
		pn_put16(t + 20, pn_get16(t + 20) | PN_HINT_XMIN_COMMITTED);
}

#define XLH_UPDATE_PREFIX_FROM_OLD 0x20u
#define XLH_UPDATE_SUFFIX_FROM_OLD 0x40u
#define HEAP_XMAX_LOCK_ONLY 0x0080u
#define HEAP_XMAX_EXCL_LOCK 0x0040u
#define HEAP_XMAX_INVALID 0x0800u
#define HEAP_KEYS_UPDATED 0x2000u
#define BTP_LEAF 0x0001u

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
	uint8_t *t = tuple_need(page, page_size, item, PN_TUPLE_HEADER + prefix + n);
	if (!t)
		return false;
	const uint8_t *h = b->data + pos;
	pn_put32(t, r->xid);                               /* t_xmin of the new version */
	pn_put32(t + 4, 0);                                /* t_xmax */
	pn_put16(t + 18, pn_get16(h));                     /* t_infomask2 */
	pn_put16(t + 20, pn_get16(h + 2));                 /* t_infomask: hint bits cleared */
	if (bits)
		t[23] = h[5];
	memcpy(t + PN_TUPLE_HEADER + prefix, h + 5 + bits, n); /* the changed columns */
	pn_put32(page + 20, r->xid);                       /* pd_prune_xid */
	return true;
}

uint32_t pn_page_free(const uint8_t *page)
{
	uint16_t lower = pn_get16(page + 12), upper = pn_get16(page + 14);
	return upper > lower ? (uint32_t)(upper - lower) : 0;
}

bool pn_page_is_new(const uint8_t *page)
{
	return pn_get16(page + 12) == 0 && pn_get16(page + 14) == 0;
}

static void heap_page_init(uint8_t *page, uint32_t page_size)
{
	memset(page + 8, 0, page_size - 8); /* keep pd_lsn: the caller stamps it */
	header_init(page, page_size, PN_PAGE_HEADER, (uint16_t)page_size);
}

/* Stores a tuple of t_len bytes at line pointer `offnum` (1-based): returns it, or NULL
 * when it does not fit or the line pointer is in use. Unused line pointers are added up to
 * offnum. */
static uint8_t *heap_place(uint8_t *page, uint32_t page_size, uint32_t offnum, uint32_t t_len)
{
	uint32_t n = pn_page_nitems(page), lower = pn_get16(page + 12), upper = pn_get16(page + 14);
	uint32_t room = (uint32_t)PN_ALIGN8(t_len);
	if (offnum == 0 || t_len < PN_TUPLE_HEADER || lower < PN_PAGE_HEADER || upper > page_size)
		return NULL;
	uint32_t new_lower = PN_PAGE_HEADER + 4u * PN_MAX(n, offnum);
	if (offnum <= n && pn_get16(page + PN_PAGE_HEADER + 4 * (offnum - 1) + 2) != 0)
		return NULL;
	if (upper < room || upper - room < new_lower)
		return NULL;
	for (uint32_t i = n; i < offnum; i++)
		pn_put32(page + PN_PAGE_HEADER + 4 * i, 0);
	upper -= room;
	memset(page + upper, 0, room);
	pn_put16(page + PN_PAGE_HEADER + 4 * (offnum - 1), (uint16_t)upper);
	pn_put16(page + PN_PAGE_HEADER + 4 * (offnum - 1) + 2, (uint16_t)t_len);
	pn_put16(page + 12, (uint16_t)new_lower);
	pn_put16(page + 14, (uint16_t)upper);
	return page + upper;
}

/* Block data {xl_heap_header, tuple bytes from 23} inserted at offnum of block b. */
static bool heap_insert_data(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			     const struct pn_wal_block *b, uint32_t offnum, bool init)
{
	if (b->data_len < 5 + 1)
		return false;
	if (init)
		heap_page_init(page, page_size);
	uint32_t t_len = 23u + b->data_len - 5u;
	uint8_t *t = heap_place(page, page_size, offnum, t_len);
	if (!t)
		return false;
	pn_put32(t, r->xid);                          /* t_xmin */
	pn_put16(t + 12, (uint16_t)(b->blkno >> 16)); /* t_ctid */
	pn_put16(t + 14, (uint16_t)b->blkno);
	pn_put16(t + 16, (uint16_t)offnum);
	pn_put16(t + 18, pn_get16(b->data));          /* t_infomask2 */
	pn_put16(t + 20, pn_get16(b->data + 2));      /* t_infomask */
	t[22] = b->data[4];                           /* t_hoff */
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
	uint8_t *t = tuple_need(page, page_size, pn_get16(r->main_data + 4) - 1u, PN_TUPLE_HEADER);
	if (!t || b->data_len != 0)
		return false;
	pn_put32(t + 4, pn_get32(r->main_data));                          /* t_xmax */
	pn_put16(t + 12, (uint16_t)(r->blocks[0].blkno >> 16));            /* t_ctid */
	pn_put16(t + 14, (uint16_t)r->blocks[0].blkno);
	pn_put16(t + 16, new_off);
	pn_put16(t + 18, pn_get16(t + 18) | HEAP_KEYS_UPDATED);
	pn_put16(t + 20, pn_get16(t + 20) & ~HEAP_XMAX_INVALID);
	pn_put32(page + 20, r->xid);                                       /* pd_prune_xid */
	return true;
}

static bool apply_heap_lock_delete(uint8_t *page, uint32_t page_size,
				   const struct pn_wal_record *r, bool lock)
{
	if (r->main_len != 8)
		return false;
	uint8_t *t = tuple_need(page, page_size, pn_get16(r->main_data + 4) - 1u, PN_TUPLE_HEADER);
	if (!t)
		return false;
	uint16_t mask = pn_get16(t + 20) & ~HEAP_XMAX_INVALID;
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

/* ---- btree leaves ---- */

static void btree_page_init(uint8_t *page, uint32_t page_size, uint32_t prev, uint32_t next)
{
	heap_page_init(page, page_size);
	uint16_t special = (uint16_t)(page_size - PN_BTREE_SPECIAL);
	pn_put16(page + 14, special);
	pn_put16(page + 16, special);
	uint8_t *o = page + special;
	pn_put32(o, prev);
	pn_put32(o + 4, next);
	pn_put32(o + 8, 0);                   /* btpo_level */
	pn_put16(o + 12, BTP_LEAF);
}

static uint32_t itup_len_of(const uint8_t *itup) { return pn_get16(itup + 6) & 0x1FFFu; }

static const uint8_t *btree_item(const uint8_t *page, uint32_t i)
{
	return page + pn_get16(page + PN_PAGE_HEADER + 4 * i);
}

/* Adds an index tuple at offnum (1-based), moving the line pointers from there up. */
static bool btree_add(uint8_t *page, uint32_t page_size, const uint8_t *itup, uint32_t len,
		      uint32_t offnum)
{
	uint32_t n = pn_page_nitems(page), lower = pn_get16(page + 12), upper = pn_get16(page + 14);
	uint32_t room = (uint32_t)PN_ALIGN8(len);
	if (len < PN_ITUP_HEADER + 8 || itup_len_of(itup) != len || offnum == 0 || offnum > n + 1 ||
	    lower < PN_PAGE_HEADER || upper > page_size || upper < room ||
	    upper - room < lower + 4)
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
	return btree_add(page, page_size, b->data, b->data_len, pn_get16(r->main_data));
}

/* Adds the concatenated index tuples of `data` at the end of a leaf. */
static bool btree_add_all(uint8_t *page, uint32_t page_size, const uint8_t *data, uint32_t len)
{
	uint32_t pos = 0;
	while (pos < len) {
		if (len - pos < PN_ITUP_HEADER)
			return false;
		uint32_t l = itup_len_of(data + pos);
		if (l > len - pos ||
		    !btree_add(page, page_size, data + pos, l, pn_page_nitems(page) + 1))
			return false;
		pos += l;
	}
	return true;
}

static bool apply_btree_split(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			      const struct pn_wal_block *b, bool left_gets_new)
{
	if (r->main_len != 10 || r->nblocks < 2 || r->nblocks > 3)
		return false;
	uint32_t firstright = pn_get16(r->main_data + 4), newoff = pn_get16(r->main_data + 6);
	if (b == &r->blocks[1]) {
		btree_page_init(page, page_size, r->blocks[0].blkno,
				r->nblocks == 3 ? r->blocks[2].blkno : 0);
		return btree_add_all(page, page_size, b->data, b->data_len);
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
		memcpy(keep + len, btree_item(page, i), l);
		len += l;
	}
	uint8_t *o = page + page_size - PN_BTREE_SPECIAL;
	uint32_t prev = pn_get32(o);
	btree_page_init(page, page_size, prev, r->blocks[1].blkno);
	if (!btree_add_all(page, page_size, keep, len))
		return false;
	if (!left_gets_new)
		return true;
	if (b->data_len < PN_ITUP_HEADER)
		return false;
	uint32_t l = itup_len_of(b->data);
	return l <= b->data_len && btree_add(page, page_size, b->data, l, newoff);
}

/* ---- formatting the realistic workloads' pages ---- */

uint32_t pn_heap_rows_per_page(uint32_t page_size, uint32_t t_len, uint32_t fillfactor)
{
	uint32_t usable = (page_size - PN_PAGE_HEADER) * fillfactor / 100u;
	return usable / ((uint32_t)PN_ALIGN8(t_len) + 4u);
}

uint32_t pn_btree_items_per_page(uint32_t page_size, uint32_t itup_len)
{
	return (page_size - PN_PAGE_HEADER - PN_BTREE_SPECIAL) / ((uint32_t)PN_ALIGN8(itup_len) + 4u);
}

void pn_heap_page_fill(uint8_t *page, uint32_t page_size, uint32_t blkno, uint32_t rows,
		       uint32_t t_len)
{
	memset(page, 0, page_size);
	heap_page_init(page, page_size);
	for (uint32_t i = 0; i < rows; i++) {
		uint8_t *t = heap_place(page, page_size, i + 1, t_len);
		PN_ASSERT(t != NULL);
		pn_put32(t, 2);                           /* t_xmin: frozen-ish bootstrap xid */
		pn_put16(t + 12, (uint16_t)(blkno >> 16));
		pn_put16(t + 14, (uint16_t)blkno);
		pn_put16(t + 16, (uint16_t)(i + 1));
		pn_put16(t + 18, 4);                      /* t_infomask2: natts */
		pn_put16(t + 20, HEAP_XMAX_INVALID);
		t[22] = PN_TUPLE_HEADER;
		for (uint32_t j = PN_TUPLE_HEADER; j < t_len; j += 8) {
			uint64_t v = mix64(((uint64_t)blkno << 32) ^ (i << 12) ^ j);
			memcpy(t + j, &v, PN_MIN(8u, t_len - j));
		}
	}
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
	uint8_t itup[64];
	PN_ASSERT(itup_len <= sizeof(itup));
	memset(page, 0, page_size);
	btree_page_init(page, page_size, 0, 0);
	for (uint32_t i = 0; i < n; i++) {
		pn_itup_make(itup, itup_len, keys[i], (uint32_t)(keys[i] >> 6), (uint16_t)(keys[i] % 64 + 1));
		bool ok = btree_add(page, page_size, itup, itup_len, i + 1);
		PN_ASSERT(ok);
	}
}

uint16_t pn_btree_insert_offnum(const uint8_t *page, uint64_t key)
{
	uint32_t n = pn_page_nitems(page), i = n;
	while (i > 0 && pn_get64(btree_item(page, i - 1) + 8) > key)
		i--;
	return (uint16_t)(i + 1);
}

uint16_t pn_btree_count_below(const uint8_t *page, uint64_t key)
{
	uint32_t n = pn_page_nitems(page), i = 0;
	while (i < n && pn_get64(btree_item(page, i) + 8) < key)
		i++;
	return (uint16_t)i;
}

uint32_t pn_btree_items_copy(const uint8_t *page, uint16_t from, uint8_t *out, uint32_t cap)
{
	uint32_t n = pn_page_nitems(page), len = 0;
	for (uint32_t i = from; i < n; i++) {
		uint32_t l = pn_get16(page + PN_PAGE_HEADER + 4 * i + 2);
		PN_ASSERT(len + l <= cap);
		memcpy(out + len, btree_item(page, i), l);
		len += l;
	}
	return len;
}

enum pn_rec pn_btree_split_record(const uint8_t *left, uint32_t page_size, const uint8_t *itup,
				  uint32_t itup_len, uint64_t split_key, struct pn_wal_record *rec,
				  uint8_t *main, uint8_t *data0, uint8_t *data1)
{
	return pn_btree_split_record_at(left, page_size, itup, itup_len,
					pn_btree_count_below(left, split_key), split_key, rec, main,
					data0, data1);
}

enum pn_rec pn_btree_split_record_at(const uint8_t *left, uint32_t page_size,
				     const uint8_t *itup, uint32_t itup_len, uint16_t below,
				     uint64_t split_key, struct pn_wal_record *rec, uint8_t *main,
				     uint8_t *data0, uint8_t *data1)
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
			pos += itup_len_of(data1 + pos);
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
	pn_put16(main + 8, 0);                     /* postingoff */
	rec->main_data = main;
	rec->main_len = 10;
	rec->blocks[0].data = data0;
	rec->blocks[0].data_len = (uint16_t)len0;
	rec->blocks[1].data = data1;
	rec->blocks[1].data_len = (uint16_t)len1;
	return goes_left ? PN_REC_BTREE_SPLIT_L : PN_REC_BTREE_SPLIT_R;
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
	case PN_REC_XLOG2_HINT_DELTA: return pn_umbra_apply_hint_delta(page, page_size, b);
	case PN_REC_HEAP2_FREEZE_PAGE: /* PG16's freeze plans (7 B main) or the script op's */
		return r->main_len == 7 ? pn_wl_apply_freeze_plans(page, page_size, r, b)
					: apply_freeze(page, page_size, r);
	case PN_REC_BTREE_DEDUP: /* a btree leaf (wl_btree.c) or the script op's page */
		return pn_wl_btree_is_leaf(page, page_size)
			       ? pn_wl_apply_btree_dedup(page, page_size, r, b)
			       : apply_dedup(page, page_size, r, b);
	case PN_REC_HEAP2_VISIBLE: return pn_wl_apply_visible(page, page_size, r, b);
	case PN_REC_IMPORTED: return pn_wl_apply_imported(page, page_size, r, b);
	case PN_REC_HEAP_INSERT: return apply_heap_insert(page, page_size, r, b, false);
	case PN_REC_HEAP_INSERT_INIT: return apply_heap_insert(page, page_size, r, b, true);
	case PN_REC_HEAP_UPDATE: return apply_heap_update(page, page_size, r, b, false);
	case PN_REC_HEAP_UPDATE_INIT: return apply_heap_update(page, page_size, r, b, true);
	case PN_REC_HEAP_LOCK: return apply_heap_lock_delete(page, page_size, r, true);
	case PN_REC_HEAP_DELETE: return apply_heap_lock_delete(page, page_size, r, false);
	case PN_REC_BTREE_INSERT_LEAF: return apply_btree_insert(page, page_size, r, b);
	case PN_REC_BTREE_SPLIT_L: return apply_btree_split(page, page_size, r, b, true);
	case PN_REC_BTREE_SPLIT_R: return apply_btree_split(page, page_size, r, b, false);
	case PN_REC_HEAP2_PRUNE: {
		if (r->main_len != 8 || b->data_len % 2 != 0 ||
		    b->data_len / 2u < 2u * pn_get16(r->main_data + 4) + pn_get16(r->main_data + 6))
			return false;
		pn_put32(page + 20, 0); /* pd_prune_xid */
		return true;
	}
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
