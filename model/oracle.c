/*
 * oracle.c: the reference applier behind C2 exactness (model layer; see oracle.h): the
 * records logged as ops, the pages computed from them, compared with masking. What each op
 * does to a page is oracleop.c's (oracleop.h: the page format's offsets, the kinds of op).
 *
 * It owns its own reading of the page format and of every record kind, written from the
 * specification below, not from the engine's redo (src/format/redo.c, src/engine/recovery.c are never
 * called): two independent readings of one contract, so a bug in either shows up as a
 * difference. Only src/format/walfmt.h (record decoding) and src/base/pn.h (byte helpers) are shared.
 *
 * Page format (little-endian, page_size bytes):
 *   heap pages (ids 0 .. heap_pages-1), a 24 B header:
 *     0 pd_lsn {hi u32 = lsn >> 32, lo u32}   8 pd_checksum u16   10 pd_flags u16 (0x4
 *     ALL_VISIBLE)   12 pd_lower u16   14 pd_upper u16   16 pd_special u16
 *     18 pd_pagesize_version u16   20 pd_prune_xid u32
 *   line pointers from 24: item i (0-based) at 24+4i = {lp_off u16, lp_len u16};
 *   nitems = (pd_lower - 24) / 4 (0 when pd_lower is outside [24, page_size]);
 *   a tuple (104 B) at lp_off: 0 t_xmin u32, 4 t_xmax u32, 8 t_cid u32, 12 t_ctid 6 B,
 *     18 t_infomask2 u16, 20 t_infomask u16, 22 t_hoff u8, 23 pad, 24.. payload.
 *   SLRU pages (ids heap_pages .. heap_pages+slru_pages-1): 2 bits per xid. Headerless:
 *     bits from byte 0, no LSN, no checksum. With slru_headers: the header above (pd_lower
 *     = pd_upper = pd_special = page_size, pd_pagesize_version = page_size | 4), bits from 24.
 *
 * Record meanings, per block of the record (rmid, info & 0xF0):
 *   any block with an image and BKPIMAGE_APPLY: the page becomes the image (hole zeros);
 *   Heap/HOT_UPDATE (10, 0x40): main 14 B, new_offnum u16 at 12; block data 9 B
 *     {t_infomask2 u16, t_infomask u16, t_hoff u8, 4 new bytes}. Tuple new_offnum-1:
 *     t_xmin = xid, t_xmax = 0, t_infomask2, t_infomask, payload[0..3]; pd_prune_xid = xid;
 *   Heap2/FREEZE_PAGE (9, 0x30; main 6 B, PostgreSQL 15's): main {cutoff u32, n u16};
 *     block data n x 12 B {xmax u32, offnum u16, t_infomask2 u16, t_infomask u16, frzflags
 *     u8, pad}: each tuple's t_xmax, t_infomask2 and t_infomask; then pd_flags |= ALL_VISIBLE;
 *   Btree/DEDUP (11, 0x60) on a heap page (the script op): main 2 B; block data 4 B, salt
 *     s = byte 0: for every item i,
 *     every payload byte b (tuple offsets 24..103): b = b*5 + s + i (mod 256);
 *   CLOG/SET (3, 0x20): main 5 B {xid u32, header u8}: base = header ? 24 : 0,
 *     per_page = (page_size-base)*4, bit = (xid % per_page)*2, byte base+bit/8 |= 1<<(bit%8);
 *     with header, a page whose pd_lower is 0 first gets its four header fields;
 *   XLOG2/HINT_DELTA (22, 0x00; Umbra l4): block data u16 n, n x {offset u16, length u16},
 *     then the fragments' bytes in order: each fragment's bytes are copied to its offset;
 *   the records of the pgbench and tpcc workloads (variable-length tuples: a tuple is
 *   found through its line pointer and must hold the bytes a change touches; "place a
 *   tuple of n bytes at offset k" means: pd_upper -= n rounded up to 8, those bytes zeroed,
 *   line pointers pd_lower/4 .. k-1 added as {0,0} if k is past them (k may also name a
 *   {0,0} one), pointer k = {pd_upper, n}, pd_lower = 24 + 4 * max(count, k)):
 *   Heap/INSERT (10, 0x00; 0x80 = +INIT: the page first becomes an empty heap page, its
 *     LSN kept, every other byte zero, pd_lower 24, pd_upper = pd_special = page_size,
 *     version page_size | 4): main {k u16, flags u8}; block data {infomask2 u16,
 *     infomask u16, hoff u8, bytes}: a tuple of 23 + |bytes| bytes at k with t_xmin =
 *     xid, t_ctid = {blk >> 16, blk & 0xFFFF, k}, the two infomasks, t_hoff, bytes from 23;
 *   Heap/UPDATE (10, 0x20; 0xA0 +INIT of block 0): main {old_xmax u32, old_k u16, u8, u8,
 *     new_xmax u32, new_k u16}: block 0 as INSERT at new_k; block 1: tuple old_k gets
 *     t_xmax = old_xmax, t_ctid = {block 0's blk, new_k}, infomask2 |= 0x2000, infomask
 *     &= ~0x0800, and the page pd_prune_xid = xid;
 *   Heap/HOT_UPDATE with main flags (byte 7) 0x20 / 0x40: the block data starts with a
 *     u16 prefix / u16 suffix, then the 5 header bytes, then one byte for tuple byte 23,
 *     then the changed bytes, written at tuple offset 24 + prefix;
 *   Heap/LOCK (10, 0x60), Heap/DELETE (10, 0x10): main {xid u32, k u16, u8, u8}: tuple k
 *     gets t_xmax = xid and infomask &= ~0x0800; LOCK also sets infomask 0x0040 | 0x0080;
 *     DELETE sets infomask2 0x2000 and pd_prune_xid = xid;
 *   Heap2/PRUNE (9, 0x10): main {xid u32, nredirected u16, ndead u16}, block data u16
 *     offsets, at least 2 * nredirected + ndead of them: pd_prune_xid = 0, nothing else
 *     (the workloads update tuples in place, so no version is left to remove);
 *   Btree pages: pd_special = page_size - 16, 16 bytes {prev u32, next u32, level u32,
 *     flags u16 (1 = leaf), cycle u16}; index tuples with length = u16 at 6 & 0x1FFF: a
 *     plain one {TID 6, t_info u16, key u64 (an int4 key: u32 then 4 zero bytes), zeros},
 *     a posting one (btree_dedup) MAXALIGN(16+6n) B {0 u16, 16 u16, n|0x2000 u16,
 *     size|0x2000 u16, key u32, 0 u32, n TIDs of 6 B}.
 *     "An empty leaf" is the empty heap page above with pd_upper = pd_special =
 *     page_size - 16 and that trailer {prev, next, 0, 1, 0};
 *   Btree/INSERT_LEAF (11, 0x00; pgbench, tpcc, btree_dedup alike): main {k u16}: the
 *     pointers k.. move up one, the tuple (block data) goes to pd_upper - its length
 *     rounded to 8, pointer k names it;
 *   Btree/SPLIT_L / SPLIT_R (11, 0x30 / 0x40), 2 or 3 blocks: main {level u32, firstright
 *     u16, newk u16, u16}: block 1 becomes an empty leaf {prev = block 0's blk, next =
 *     block 2's blk or 0} receiving the block data's tuples in order, each appended; block
 *     0's first firstright-1 tuples are copied out, it becomes an empty leaf {its old prev,
 *     next = block 1's blk} receiving them in order, then for SPLIT_L the first tuple of
 *     its block data at newk; block 2 (the old right sibling) gets prev = block 1's blk;
 *   Heap2/FREEZE_PAGE with a 7 B main {horizon u32, nplans u16, catalog u8} (PG16, the
 *     vacuum workload): block data = nplans x 12 B plans {xmax u32, t_infomask2 u16,
 *     t_infomask u16, frzflags u8, pad, ntuples u16} then the offsets u16 of each plan in
 *     turn: every tuple named gets the plan's t_xmax, t_infomask2, t_infomask;
 *   Heap2/VISIBLE (9, 0x40): 2 blocks, main 5 B {cutoff u32, flags u8}. Block 0 (fork 2,
 *     vm; its block number is the page id): heap block h = block 1's number, slot =
 *     h % ((page_size-24)*4), byte 24+slot/4 |= (flags & 3) << 2*(slot%4). Block 1:
 *     pd_flags |= ALL_VISIBLE;
 *   Btree/DEDUP on a leaf: main {nintervals u16}, block data {baseoff u16, nitems u16} each:
 *     the leaf is rebuilt in item order from the special space down, each interval's items
 *     merged into one posting tuple (their TIDs in order), the others copied as they are;
 *     masking of tuple hint bits does not apply to these pages;
 *   any record with info bit 0x08 (a real WAL's record replayed by the import workload,
 *     any rmid): block data {lower u16, upper u16, filler}: a BKPBLOCK_WILL_INIT block
 *     first becomes the empty heap page above; pd_lower, pd_upper = lower, upper unless
 *     both are 0 (refused unless 24 <= lower <= upper <= page_size); then the bytes from
 *     pd_lower to pd_upper become zero and the filler is copied from pd_upper on, as much
 *     as fits before page_size;
 *   Storage/TRUNCATE (2, 0x20): no block; main (20 B or more) {blkno u32, spcNode u32,
 *     dbNode u32, relNode u32, flags u32}: when the relation is 1663/5/16384 and flags has
 *     bit 0x1 (the heap), heap pages blkno and up stop existing (I5); their bytes are kept
 *     and no longer compared;
 *   a block of a heap page at or past the relation's size extends the relation to it (the
 *     pages between come into existence too, I5); the engine gives such a block an image;
 *   XLOG/FPI_FOR_HINT (0, 0xA0), Transaction COMMIT/ABORT (1, 0x00/0x20), XLOG
 *     CHECKPOINT_SHUTDOWN/ONLINE (0, 0x00/0x10): no change to any block but an image;
 *   any other kind: accepted without blocks (or with images only), refused otherwise.
 *   After a change (image or not) a page with a header gets pd_lsn = the record's end LSN;
 *   a headerless SLRU page never does (its bytes 0..7 are status bits), image or not; nor
 *   does VISIBLE's block 1 (the heap page) without an image when hint bits are not logged
 *   (pn_oracle_set_hints_logged false: neither data checksums nor wal_log_hints), as
 *   PostgreSQL's visibilitymap_set and heap_xlog_visible leave it.
 *   A change naming a tuple the page lacks (lp_len < 104 or beyond the page) skips that
 *   tuple and is counted as a misfit (pn_oracle_stats); the LSN is still set.
 *   Every record is applied exactly once, in LSN order: no page-LSN skipping.
 *
 * Masking (pn_oracle_compare): bytes 8..9 of pages with a header; in heap pages, for each
 * tuple the EXPECTED page's line pointers locate, t_infomask compared as
 * (x & ~0x0F00) | (frozen(x) ? 0x0300 : 0), frozen = both 0x0100 and 0x0200 set.
 *
 * Data structures. Each (record, block) change is an `op` (end LSN, xid, kind, and an
 * offset into one payload arena: the hole-free image, or main data then block data). Each
 * page keeps the indices of its ops in LSN order, its state after all of them (tip), its
 * bases and a cursor (the state last computed). A base is a position from which the page
 * can be rebuilt without what came before: a stored state (a checkpoint), or an image op
 * (it overwrites the whole page, so it costs no memory). A checkpoint is stored once the
 * ops since the last base weigh `ckpt_weight` (an op weighs about the bytes it rewrites /
 * 64, at least 1: 64 small changes, or one deduplication of a full page). Invariants:
 *   I1 record ends strictly increase; a page's ops are in nondecreasing end order.
 *   I2 a page's bases have strictly increasing positions in [1, nops]; a stored base holds
 *      the state after `pos` ops; an image base names the page's op at pos-1, an image.
 *   I3 tip = state after all the page's ops; cursor = state after cursor_n ops.
 *   I4 ckpt_bytes = checkpoints * page_size <= budget after every add: over it,
 *      ckpt_weight doubles and every page drops every other checkpoint (image bases stay).
 *      ckpt_weight is a power of two >= 64.
 *   I5 the relation's size: size events {end, nblocks} in strictly increasing end order, one
 *      per record that changed the size (a truncation to fewer blocks, a block at or past
 *      the size), nblocks <= heap_pages; size_tip = the last event's nblocks (heap_pages
 *      with none). After recovery to `upto` the relation has the nblocks of the last event
 *      ending at or before upto (heap_pages before the first): heap pages below it exist
 *      and are compared, the others must not exist (pn_oracle_rel_blocks).
 * pn_oracle_page() starts from the nearest base at or below the asked position, or from the
 * cursor when it lies between the two, applies the few ops after it, and allocates nothing.
 * Memory: 3 pages per page (initial, tip, cursor), 48 B per op plus its payload, 16 B per
 * base, and at most the budget in checkpoints.
 */
#include "oracle.h"
#include "oracleop.h"

#include "walfmt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WEIGHT_MIN 64u   /* initial ckpt_weight */
#define WEIGHT_BYTES 64u /* bytes rewritten per unit of weight */
#define INFO_MASK 0xF0u

#define INFO_IMPORTED 0x08u
#define INFO_LAYOUT 0x04u

static const struct {
	uint8_t rmid, info;
	uint8_t kind;
} meanings[] = {
	{PN_RM_HEAP, 0x40, OP_HOT_UPDATE}, {PN_RM_HEAP2, 0x30, OP_FREEZE},
	{PN_RM_BTREE, 0x60, OP_DEDUP},     {PN_RM_CLOG, 0x20, OP_CLOG_SET},
	{PN_RM_XLOG, 0xA0, OP_NONE},       {PN_RM_XACT, 0x00, OP_NONE},
	{PN_RM_XACT, 0x20, OP_NONE},       {PN_RM_XLOG, 0x00, OP_NONE},
	{PN_RM_XLOG, 0x10, OP_NONE},       {PN_RM_XLOG2, 0x00, OP_HINT_DELTA},
	{PN_RM_HEAP, 0x00, OP_INSERT},     {PN_RM_HEAP, 0x80, OP_INSERT_INIT},
	{PN_RM_HEAP, 0x20, OP_UPDATE},     {PN_RM_HEAP, 0xA0, OP_UPDATE_INIT},
	{PN_RM_HEAP, 0x60, OP_LOCK},       {PN_RM_HEAP, 0x10, OP_DELETE},
	{PN_RM_BTREE, 0x00, OP_BT_INSERT}, {PN_RM_BTREE, 0x30, OP_SPLIT_L},
	{PN_RM_BTREE, 0x40, OP_SPLIT_R},   {PN_RM_HEAP2, 0x10, OP_PRUNE},
	{PN_RM_HEAP2, 0x40, OP_VM_SET},
};

/* A position from which a page can be rebuilt (I2). */
struct base {
	uint32_t pos;   /* the state after the page's first `pos` ops */
	uint32_t op;    /* state == NULL: that op (an image) rebuilds it */
	uint8_t *state; /* a stored state (checkpoint) */
};

struct page_log {
	uint32_t *ops; /* indices into pn_oracle.ops, LSN order (I1) */
	pn_lsn *ends;  /* their end LSNs, beside them for the binary search */
	uint32_t nops, ops_cap, ends_cap;
	struct base *bases;
	uint32_t nbases, bases_cap;
	uint32_t nstored;  /* bases with a state */
	uint32_t weight;   /* of the ops since the last base */
	uint32_t cursor_n; /* I3 */
};

struct pn_oracle {
	uint32_t heap_pages, slru_pages, npages, page_size;
	bool slru_headers;
	bool hints_logged; /* VISIBLE stamps its heap page (pn_oracle_set_hints_logged) */
	uint8_t *initial;  /* npages * page_size each */
	uint8_t *tips;
	uint8_t *cursors;
	struct page_log *pages;
	struct pn_oracleop *ops;
	uint64_t nops, ops_cap;
	uint8_t *arena;
	uint64_t arena_len, arena_cap;
	pn_lsn *ends; /* end LSN of every record (I1) */
	uint64_t nrecords, ends_cap;
	uint32_t ckpt_weight;
	uint64_t nstored, nimages, ckpt_bytes, ckpt_budget;
	uint64_t misfits;
	uint8_t *images;   /* decode scratch: PN_WAL_MAX_BLOCKS pages */
	pn_lsn *size_ends; /* I5: the size events' ends and their sizes */
	uint32_t *size_blocks;
	uint64_t nsizes, size_ends_cap, size_blocks_cap;
	uint32_t size_tip;
};

/* ---- small helpers --------------------------------------------------------------------- */

/* Growth of an array; running out of memory stops the checker (nothing sensible remains). */
static void *grow(void *p, uint64_t *cap, uint64_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	uint64_t n = *cap ? *cap : 16;
	while (n < need)
		n *= 2;
	void *q = realloc(p, (size_t)(n * elem));
	PN_ASSERT(q != NULL);
	*cap = n;
	return q;
}

static void *grow32(void *p, uint32_t *cap, uint32_t need, size_t elem)
{
	uint64_t c = *cap;
	p = grow(p, &c, need, elem);
	PN_ASSERT(c <= UINT32_MAX);
	*cap = (uint32_t)c;
	return p;
}

static bool fail(char *why, size_t why_len, const char *fmt, ...)
{
	if (why && why_len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return false;
}

static bool has_header(const struct pn_oracle *o, uint32_t page)
{
	return page < o->heap_pages || o->slru_headers;
}

static uint8_t *page_in(uint8_t *base, const struct pn_oracle *o, uint32_t page)
{
	return base + (size_t)page * o->page_size;
}

/* Applies one change to `page` (logical id `id`) as oracleop.c gives it its meaning; false
 * if a tuple it names is missing. */
static bool apply(const struct pn_oracle *o, uint32_t id, uint8_t *page,
		  const struct pn_oracleop *op)
{
	struct pn_oracleop_pages pages = {.arena = o->arena,
					  .page_size = o->page_size,
					  .heap_pages = o->heap_pages,
					  .slru_headers = o->slru_headers,
					  .hints_logged = o->hints_logged};
	return pn_oracleop_apply(&pages, id, page, op);
}

/* ---- logging records ------------------------------------------------------------------- */

/* The meaning of block `i` of a record: two-block records mean one thing per block. */
static uint8_t kind_of(uint8_t rmid, uint8_t info, uint32_t i)
{
	for (size_t k = 0; k < PN_ARRAY_LEN(meanings); k++) {
		if (meanings[k].rmid != rmid || meanings[k].info != (info & INFO_MASK))
			continue;
		uint8_t kind = meanings[k].kind;
		if (i == 1 && (kind == OP_UPDATE || kind == OP_UPDATE_INIT))
			return OP_UPDATE_OLD;
		if (i >= 1 && (kind == OP_SPLIT_L || kind == OP_SPLIT_R))
			return i == 1 ? OP_SPLIT_RIGHT_PAGE : OP_SPLIT_SIBLING;
		return kind;
	}
	return OP_UNKNOWN;
}

/* XLOG2/HINT_DELTA block data: u16 n, n x {u16 offset, u16 length}, then the bytes. */
static bool hint_delta_fits(const struct pn_wal_record *r, const struct pn_wal_block *b,
			    uint32_t page_size)
{
	if (r->main_len != 0 || b->data_len < 2)
		return false;
	uint32_t n = pn_get16(b->data), total = 2 + 4u * n;
	for (uint32_t k = 0; k < n && total <= b->data_len; k++) {
		uint32_t off = pn_get16(b->data + 2 + 4u * k), len = pn_get16(b->data + 4 + 4u * k);
		if (off + len > page_size)
			return false;
		total += len;
	}
	return total == b->data_len;
}

static bool sizes_fit(const struct pn_oracle *o, uint8_t kind, const struct pn_wal_record *r,
		      const struct pn_wal_block *b)
{
	switch (kind) {
	case OP_HOT_UPDATE: return r->main_len == 14 && b->data_len >= 5;
	case OP_FREEZE: return r->main_len == 6 && b->data_len == 12u * pn_get16(r->main_data + 4);
	case OP_DEDUP: return r->main_len == 2 && b->data_len == 4u * pn_get16(r->main_data);
	case OP_FREEZE_PLANS: return b->data_len >= FREEZE_PLAN_BYTES * pn_get16(r->main_data + 4);
	case OP_VM_SET: return r->nblocks == 2 && r->main_len == 5;
	case OP_CLOG_SET: return r->main_len == 5;
	case OP_HINT_DELTA: return hint_delta_fits(r, b, o->page_size);
	case OP_IMPORTED:
	case OP_IMPORTED_INIT: return true;
	case OP_IMPORTED_L:
	case OP_IMPORTED_L_INIT: {
		uint32_t lower = b->data_len >= 4 ? pn_get16(b->data) : 0;
		uint32_t upper = b->data_len >= 4 ? pn_get16(b->data + 2) : 0;
		return b->data_len >= 4 &&
		       ((lower == 0 && upper == 0) ||
			(lower >= PAGE_HEADER && lower <= upper && upper <= o->page_size));
	}
	case OP_INSERT:
	case OP_INSERT_INIT: return r->main_len == 3;
	case OP_UPDATE:
	case OP_UPDATE_INIT:
	case OP_UPDATE_OLD: return r->main_len == 14 && r->nblocks == 2;
	case OP_LOCK:
	case OP_DELETE: return r->main_len == 8;
	case OP_BT_INSERT: return r->main_len == 2;
	case OP_PRUNE:
		return r->main_len == 8 && b->data_len % 2 == 0 &&
		       b->data_len / 2u >=
			       2u * pn_get16(r->main_data + 4) + pn_get16(r->main_data + 6);
	case OP_SPLIT_L:
	case OP_SPLIT_R:
	case OP_SPLIT_RIGHT_PAGE:
	case OP_SPLIT_SIBLING: return r->main_len == 10 && r->nblocks >= 2 && r->nblocks <= 3;
	default: return true;
	}
}

/* What block `b` of record `r` does to its page: an op kind, or OP_NONE; false if refused. */
static bool plan_block(const struct pn_oracle *o, const struct pn_wal_record *r,
		       const struct pn_wal_block *b, uint8_t *kind, char *why, size_t why_len)
{
	if (b->fork != 0 && b->fork != VM_FORK)
		return fail(why, why_len, "a block of fork %u (the oracle models main and vm)",
			    b->fork);
	if (b->blkno >= o->npages)
		return fail(why, why_len, "a block names page %u of %u", b->blkno, o->npages);
	if (b->has_image && b->image_apply) {
		*kind = OP_IMAGE;
		return true;
	}
	*kind = kind_of(r->rmid, r->info, (uint32_t)(b - r->blocks));
	if (r->info & INFO_IMPORTED)
		*kind = r->info & INFO_LAYOUT ? (b->will_init ? OP_IMPORTED_L_INIT : OP_IMPORTED_L)
					      : (b->will_init ? OP_IMPORTED_INIT : OP_IMPORTED);
	if (*kind == OP_FREEZE && r->main_len == 7)
		*kind = OP_FREEZE_PLANS; /* PostgreSQL 16's layout, the vacuum workload's */
	if (*kind == OP_VM_SET && b != &r->blocks[0])
		*kind = OP_ALL_VISIBLE; /* VISIBLE's block 1 is the heap page */
	if (*kind == OP_UNKNOWN)
		return fail(why, why_len, "rmid %u info %02X: a block change of unknown meaning",
			    r->rmid, r->info);
	if (!sizes_fit(o, *kind, r, b))
		return fail(why, why_len, "rmid %u info %02X: main data %u B, block data %u B",
			    r->rmid, r->info, r->main_len, b->data_len);
	return true;
}

static uint64_t op_bytes(const struct pn_oracle *o, const struct pn_wal_record *r,
			 const struct pn_wal_block *b, uint8_t kind)
{
	if (kind == OP_IMAGE)
		return o->page_size - b->hole_length;
	return (uint64_t)r->main_len + b->data_len;
}

/* Copies the bytes an op needs into the arena; returns their offset. */
static uint64_t copy_payload(struct pn_oracle *o, const struct pn_wal_record *r,
			     const struct pn_wal_block *b, uint8_t kind)
{
	uint64_t off = o->arena_len, n = op_bytes(o, r, b, kind);
	o->arena = grow(o->arena, &o->arena_cap, off + n, 1);
	uint8_t *dst = o->arena + off;
	if (kind == OP_IMAGE) {
		uint32_t before = b->hole_length ? b->hole_offset : o->page_size;
		memcpy(dst, b->image, before);
		memcpy(dst + before, b->image + before + b->hole_length,
		       o->page_size - before - b->hole_length);
	} else {
		if (r->main_len)
			memcpy(dst, r->main_data, r->main_len);
		if (b->data_len)
			memcpy(dst + r->main_len, b->data, b->data_len);
	}
	o->arena_len += n;
	return off;
}

/* I4: doubles ckpt_weight and drops every other checkpoint until within the budget. */
static void thin(struct pn_oracle *o)
{
	while (o->ckpt_bytes > o->ckpt_budget && o->nstored > 0) {
		PN_ASSERT(o->ckpt_weight < (1u << 30));
		o->ckpt_weight *= 2;
		for (uint32_t p = 0; p < o->npages; p++) {
			struct page_log *pl = &o->pages[p];
			uint32_t kept = 0, seen = 0;
			for (uint32_t j = 0; j < pl->nbases; j++) {
				struct base *b = &pl->bases[j];
				if (b->state && seen++ % 2 == 0) {
					free(b->state);
					pl->nstored--;
					o->nstored--;
					o->ckpt_bytes -= o->page_size;
					continue;
				}
				pl->bases[kept++] = *b;
			}
			pl->nbases = kept;
		}
	}
	PN_ASSERT(o->ckpt_bytes == (uint64_t)o->nstored * o->page_size); /* I4 */
}

static void add_base(struct pn_oracle *o, uint32_t page, uint32_t op, bool store)
{
	struct page_log *pl = &o->pages[page];
	/* I2: positions in [1, nops], strictly increasing; an image base names an image op */
	PN_ASSERT(pl->nops >= 1 && (pl->nbases == 0 || pl->bases[pl->nbases - 1].pos < pl->nops));
	PN_ASSERT(store || o->ops[op].kind == OP_IMAGE);
	pl->bases = grow32(pl->bases, &pl->bases_cap, pl->nbases + 1, sizeof(*pl->bases));
	struct base b = {.pos = pl->nops, .op = op};
	if (store) {
		b.state = malloc(o->page_size);
		PN_ASSERT(b.state != NULL);
		memcpy(b.state, page_in(o->tips, o, page), o->page_size);
		pl->nstored++;
		o->nstored++;
		o->ckpt_bytes += o->page_size;
	} else {
		o->nimages++;
	}
	pl->bases[pl->nbases++] = b;
	pl->weight = 0;
	if (store)
		thin(o);
}

/* About the bytes an op rewrites / WEIGHT_BYTES, at least 1; `page` is the state before. */
static uint32_t op_weight(const struct pn_oracle *o, const uint8_t *page,
			  const struct pn_oracleop *op)
{
	if (op->kind == OP_DEDUP)
		return 1 + pn_oracleop_nitems(page, o->page_size) * (TUP_LEN - TUP_HEADER) /
				   WEIGHT_BYTES;
	if (op->kind == OP_FREEZE)
		return 1 + pn_get16(o->arena + op->off + 4) * 2u / WEIGHT_BYTES;
	return 1;
}

/* Indexes one change of page `page`, applies it to the tip, adds a base if due (I2). */
static void log_op(struct pn_oracle *o, uint32_t page, const struct pn_oracleop *op)
{
	PN_ASSERT(o->nops < UINT32_MAX && page < o->npages);
	/* I1: a page's ops in nondecreasing end order */
	PN_ASSERT(o->pages[page].nops == 0 ||
		  o->pages[page].ends[o->pages[page].nops - 1] <= op->end);
	o->ops = grow(o->ops, &o->ops_cap, o->nops + 1, sizeof(*o->ops));
	o->ops[o->nops] = *op;
	struct page_log *pl = &o->pages[page];
	uint8_t *tip = page_in(o->tips, o, page);
	uint32_t index = (uint32_t)o->nops++;
	pl->ops = grow32(pl->ops, &pl->ops_cap, pl->nops + 1, sizeof(*pl->ops));
	pl->ends = grow32(pl->ends, &pl->ends_cap, pl->nops + 1, sizeof(*pl->ends));
	pl->ends[pl->nops] = op->end;
	pl->ops[pl->nops++] = index;
	uint32_t weight = op_weight(o, tip, op);
	if (!apply(o, page, tip, op))
		o->misfits++;
	if (op->kind == OP_IMAGE) {
		add_base(o, page, index, false);
		return;
	}
	pl->weight += weight;
	if (pl->weight >= o->ckpt_weight)
		add_base(o, page, index, true);
}

static void log_record(struct pn_oracle *o, const struct pn_wal_record *r, const uint8_t *kinds,
		       pn_lsn end)
{
	for (uint32_t i = 0; i < r->nblocks; i++) {
		const struct pn_wal_block *b = &r->blocks[i];
		if (kinds[i] == OP_NONE)
			continue;
		struct pn_oracleop op = {
			.end = end,
			.xid = r->xid,
			.kind = kinds[i],
			.main_len = r->main_len,
			.data_len = b->data_len,
			.blkno = b->blkno,
			.other = r->nblocks < 2 ? 0 : r->blocks[i == 0 ? 1 : i - 1].blkno,
			.next = r->nblocks == 3 && i == 1 ? r->blocks[2].blkno : 0,
		};
		if (kinds[i] == OP_IMAGE) {
			op.main_len = op.data_len = 0;
			op.hole_off = b->hole_offset;
			op.hole_len = b->hole_length;
		}
		op.off = copy_payload(o, r, b, kinds[i]);
		log_op(o, b->blkno, &op);
	}
	PN_ASSERT(o->nrecords == 0 || o->ends[o->nrecords - 1] < end); /* I1 */
	o->ends = grow(o->ends, &o->ends_cap, o->nrecords + 1, sizeof(*o->ends));
	o->ends[o->nrecords++] = end;
}

/* How many of n ends in nondecreasing order are at or before upto (a binary search). */
static uint64_t ends_upto(const pn_lsn *ends, uint64_t n, pn_lsn upto)
{
	uint64_t lo = 0, hi = n;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (ends[mid] <= upto)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* I5: the size after record r (a truncation of this relation, then its blocks). */
static void resize(struct pn_oracle *o, const struct pn_wal_record *r, pn_lsn end)
{
	uint32_t n = o->size_tip;
	const uint8_t *m = r->main_data;
	if (r->rmid == 2 && (r->info & 0xF0u) == 0x20u && r->main_len >= 20 &&
	    pn_get32(m + 4) == 1663u && pn_get32(m + 8) == 5u && pn_get32(m + 12) == 16384u &&
	    (pn_get32(m + 16) & 1u) && pn_get32(m) < n)
		n = pn_get32(m);
	for (uint32_t i = 0; i < r->nblocks; i++)
		if (r->blocks[i].blkno < o->heap_pages && r->blocks[i].blkno >= n)
			n = r->blocks[i].blkno + 1;
	if (n == o->size_tip)
		return;
	o->size_ends = grow(o->size_ends, &o->size_ends_cap, o->nsizes + 1, sizeof(pn_lsn));
	o->size_blocks = grow(o->size_blocks, &o->size_blocks_cap, o->nsizes + 1, sizeof(uint32_t));
	o->size_ends[o->nsizes] = end;
	o->size_blocks[o->nsizes++] = n;
	o->size_tip = n;
}

uint32_t pn_oracle_rel_blocks(const struct pn_oracle *o, uint64_t upto)
{
	uint64_t n = ends_upto(o->size_ends, o->nsizes, upto);
	return n ? o->size_blocks[n - 1] : o->heap_pages;
}

bool pn_oracle_add_why(struct pn_oracle *o, const uint8_t *rec, uint32_t len, uint64_t start,
		       uint64_t end, char *why, size_t why_len)
{
	struct pn_wal_record r;
	uint8_t kinds[PN_WAL_MAX_BLOCKS];
	char reason[160];
	PN_ASSERT(start < end);
	PN_ASSERT(o->nrecords == 0 || start >= o->ends[o->nrecords - 1]); /* I1 */
	if (!pn_wal_record_decode(rec, len, o->page_size, o->images, &r, reason, sizeof(reason)))
		return fail(why, why_len, "%s", reason);
	for (uint32_t i = 0; i < r.nblocks; i++)
		if (!plan_block(o, &r, &r.blocks[i], &kinds[i], why, why_len))
			return false;
	log_record(o, &r, kinds, end);
	resize(o, &r, end);
	return true;
}

bool pn_oracle_add(struct pn_oracle *o, const uint8_t *rec, uint32_t len, uint64_t start,
		   uint64_t end)
{
	return pn_oracle_add_why(o, rec, len, start, end, NULL, 0);
}

/* ---- computing pages ------------------------------------------------------------------- */

/* How many of the page's ops end at or before upto (I1: a binary search). */
static uint32_t ops_upto(const struct page_log *pl, pn_lsn upto)
{
	return (uint32_t)ends_upto(pl->ends, pl->nops, upto);
}

/* How many of the page's bases lie at or below position n (I2: a binary search). */
static uint32_t bases_upto(const struct page_log *pl, uint32_t n)
{
	uint32_t lo = 0, hi = pl->nbases;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (pl->bases[mid].pos <= n)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Writes the state a base stands for (NULL: the initial page) into out. */
static void materialize(const struct pn_oracle *o, uint32_t page, const struct base *b,
			uint8_t *out)
{
	PN_ASSERT(page < o->npages && (b == NULL || b->state || o->ops[b->op].kind == OP_IMAGE));
	if (b == NULL)
		memcpy(out, o->initial + (size_t)page * o->page_size, o->page_size);
	else if (b->state)
		memcpy(out, b->state, o->page_size);
	else
		apply(o, page, out, &o->ops[b->op]);
}

/* Moves the page's cursor to the state after n ops, from the nearest state below (I2, I3). */
static void advance_cursor(struct pn_oracle *o, uint32_t page, uint32_t n)
{
	struct page_log *pl = &o->pages[page];
	uint8_t *cursor = page_in(o->cursors, o, page);
	PN_ASSERT(n <= pl->nops);
	uint32_t k = bases_upto(pl, n);
	const struct base *b = k ? &pl->bases[k - 1] : NULL;
	uint32_t base_n = b ? b->pos : 0;
	if (pl->cursor_n < base_n || pl->cursor_n > n) {
		materialize(o, page, b, cursor);
		pl->cursor_n = base_n;
	}
	for (; pl->cursor_n < n; pl->cursor_n++)
		apply(o, page, cursor, &o->ops[pl->ops[pl->cursor_n]]);
	PN_ASSERT(pl->cursor_n == n); /* I3 */
}

void pn_oracle_page(struct pn_oracle *o, uint32_t page, uint64_t upto, uint8_t *out)
{
	PN_ASSERT(page < o->npages);
	struct page_log *pl = &o->pages[page];
	uint32_t n = ops_upto(pl, upto);
	if (n == pl->nops) {
		memcpy(out, page_in(o->tips, o, page), o->page_size);
		return;
	}
	advance_cursor(o, page, n);
	memcpy(out, page_in(o->cursors, o, page), o->page_size);
}

/* ---- comparing ------------------------------------------------------------------------- */

static uint16_t mask_infomask(uint16_t x)
{
	uint16_t frozen = (x & HINT_FROZEN) == HINT_FROZEN ? HINT_FROZEN : 0;
	return (uint16_t)((x & ~HINT_BITS) | frozen);
}

static int first_diff(const uint8_t *a, const uint8_t *b, uint32_t from, uint32_t to)
{
	if (from >= to || memcmp(a + from, b + from, to - from) == 0)
		return -1; /* the common case, in one call */
	while (from < to) {
		uint32_t n = PN_MIN(64u, to - from);
		if (memcmp(a + from, b + from, n) != 0)
			for (uint32_t i = from; i < from + n; i++)
				if (a[i] != b[i])
					return (int)i;
		from += n;
	}
	return -1;
}

/* Whether the difference at byte d is one the masking ignores. */
static bool masked(const struct pn_oracle *o, uint32_t page, const uint8_t *expected,
		   const uint8_t *found, uint32_t d)
{
	if (has_header(o, page) && (d == OFF_CHECKSUM || d == OFF_CHECKSUM + 1))
		return true;
	if (page >= o->heap_pages || pn_get16(expected + OFF_SPECIAL) != o->page_size)
		return false; /* tuple masking is for heap pages (no special space) only */
	uint32_t n = pn_oracleop_nitems(expected, o->page_size);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t t = pn_oracleop_tuple_off(expected, o->page_size, i, TUP_HEADER);
		if (t == 0 || d < t + TUP_INFOMASK || d > t + TUP_INFOMASK + 1)
			continue;
		uint16_t e = pn_get16(expected + t + TUP_INFOMASK);
		uint16_t f = pn_get16(found + t + TUP_INFOMASK);
		return mask_infomask(e) == mask_infomask(f);
	}
	return false;
}

int pn_oracle_compare(const struct pn_oracle *o, uint32_t page, const uint8_t *expected,
		      const uint8_t *found)
{
	PN_ASSERT(page < o->npages);
	uint32_t at = 0;
	for (;;) {
		int d = first_diff(expected, found, at, o->page_size);
		if (d < 0 || !masked(o, page, expected, found, (uint32_t)d))
			return d;
		at = (uint32_t)d + 1;
	}
}

/* ---- life cycle and introspection ------------------------------------------------------ */

struct pn_oracle *pn_oracle_new(uint32_t heap_pages, uint32_t slru_pages, uint32_t page_size,
				bool slru_headers, const uint8_t *initial)
{
	uint64_t npages = (uint64_t)heap_pages + slru_pages;
	if (npages == 0 || npages > UINT32_MAX || page_size < 2 * TUP_LEN || page_size > 32768 ||
	    initial == NULL)
		return NULL;
	struct pn_oracle *o = calloc(1, sizeof(*o));
	if (o == NULL)
		return NULL;
	size_t bytes = (size_t)npages * page_size;
	*o = (struct pn_oracle){
		.heap_pages = heap_pages,
		.size_tip = heap_pages,
		.slru_pages = slru_pages,
		.npages = (uint32_t)npages,
		.page_size = page_size,
		.slru_headers = slru_headers,
		.hints_logged = true,
		.ckpt_weight = WEIGHT_MIN,
		.ckpt_budget = PN_ORACLE_CKPT_BUDGET_DEFAULT,
		.initial = malloc(bytes),
		.tips = malloc(bytes),
		.cursors = malloc(bytes),
		.pages = calloc(npages, sizeof(struct page_log)),
		.images = malloc((size_t)PN_WAL_MAX_BLOCKS * page_size),
	};
	if (!o->initial || !o->tips || !o->cursors || !o->pages || !o->images) {
		pn_oracle_free(o);
		return NULL;
	}
	memcpy(o->initial, initial, bytes);
	memcpy(o->tips, initial, bytes);
	memcpy(o->cursors, initial, bytes);
	return o;
}

void pn_oracle_free(struct pn_oracle *o)
{
	if (o == NULL)
		return;
	for (uint32_t p = 0; o->pages && p < o->npages; p++) {
		struct page_log *pl = &o->pages[p];
		for (uint32_t j = 0; j < pl->nbases; j++)
			free(pl->bases[j].state);
		free(pl->bases);
		free(pl->ops);
		free(pl->ends);
	}
	free(o->pages);
	free(o->initial);
	free(o->tips);
	free(o->cursors);
	free(o->ops);
	free(o->arena);
	free(o->ends);
	free(o->size_ends);
	free(o->size_blocks);
	free(o->images);
	free(o);
}

void pn_oracle_set_hints_logged(struct pn_oracle *o, bool logged)
{
	PN_ASSERT(o->nrecords == 0); /* read as each record is logged */
	o->hints_logged = logged;
}

void pn_oracle_set_ckpt_budget(struct pn_oracle *o, uint64_t bytes)
{
	o->ckpt_budget = bytes;
	thin(o);
}

uint64_t pn_oracle_records(const struct pn_oracle *o) { return o->nrecords; }

uint64_t pn_oracle_last_end(const struct pn_oracle *o, uint64_t upto)
{
	uint64_t lo = 0, hi = o->nrecords;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (o->ends[mid] <= upto)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? o->ends[lo - 1] : 0;
}

void pn_oracle_stats(const struct pn_oracle *o, struct pn_oracle_stats *out)
{
	*out = (struct pn_oracle_stats){
		.records = o->nrecords,
		.ops = o->nops,
		.misfits = o->misfits,
		.ckpts = o->nstored,
		.image_bases = o->nimages,
		.ckpt_bytes = o->ckpt_bytes,
		.payload_bytes = o->arena_len,
		.ckpt_weight = o->ckpt_weight,
	};
}

static bool check_bases(const struct pn_oracle *o, uint32_t p, uint32_t *stored, char *why,
			size_t why_len)
{
	const struct page_log *pl = &o->pages[p];
	*stored = 0;
	for (uint32_t j = 0; j < pl->nbases; j++) {
		const struct base *b = &pl->bases[j];
		if (b->pos == 0 || b->pos > pl->nops || (j > 0 && b->pos <= pl->bases[j - 1].pos))
			return fail(why, why_len, "page %u: base %u at %u of %u ops (I2)", p, j,
				    b->pos, pl->nops);
		if (b->state) {
			(*stored)++;
			continue;
		}
		if (b->op != pl->ops[b->pos - 1] || o->ops[b->op].kind != OP_IMAGE)
			return fail(why, why_len, "page %u: base %u is no image (I2)", p, j);
	}
	if (*stored != pl->nstored)
		return fail(why, why_len, "page %u: %u checkpoints counted %u", p, *stored,
			    pl->nstored);
	return true;
}

static bool check_page(const struct pn_oracle *o, uint32_t p, uint32_t *stored, char *why,
		       size_t why_len)
{
	const struct page_log *pl = &o->pages[p];
	if (pl->cursor_n > pl->nops)
		return fail(why, why_len, "page %u: cursor at %u of %u ops (I3)", p, pl->cursor_n,
			    pl->nops);
	for (uint32_t i = 0; i < pl->nops; i++) {
		if (pl->ops[i] >= o->nops)
			return fail(why, why_len, "page %u: op index %u of %llu", p, pl->ops[i],
				    (unsigned long long)o->nops);
		if (pl->ends[i] != o->ops[pl->ops[i]].end ||
		    (i > 0 && pl->ends[i] < pl->ends[i - 1]))
			return fail(why, why_len, "page %u: op %u ends before op %u (I1)", p, i,
				    i - 1);
	}
	return check_bases(o, p, stored, why, why_len);
}

bool pn_oracle_check(const struct pn_oracle *o, char *why, size_t why_len)
{
	uint64_t ckpts = 0, refs = 0;
	for (uint64_t i = 1; i < o->nrecords; i++)
		if (o->ends[i] <= o->ends[i - 1])
			return fail(why, why_len,
				    "record %llu ends at or before its predecessor (I1)",
				    (unsigned long long)i);
	for (uint32_t p = 0; p < o->npages; p++) {
		uint32_t stored = 0;
		if (!check_page(o, p, &stored, why, why_len))
			return false;
		ckpts += stored;
		refs += o->pages[p].nops;
	}
	if (refs != o->nops)
		return fail(why, why_len, "%llu page references for %llu ops",
			    (unsigned long long)refs, (unsigned long long)o->nops);
	if (ckpts != o->nstored || o->ckpt_bytes != ckpts * o->page_size ||
	    o->ckpt_bytes > o->ckpt_budget)
		return fail(why, why_len, "%llu checkpoints counted %llu, %llu B, budget %llu (I4)",
			    (unsigned long long)ckpts, (unsigned long long)o->nstored,
			    (unsigned long long)o->ckpt_bytes, (unsigned long long)o->ckpt_budget);
	if (o->ckpt_weight < WEIGHT_MIN || (o->ckpt_weight & (o->ckpt_weight - 1)) != 0)
		return fail(why, why_len, "ckpt_weight %u (I4)", o->ckpt_weight);
	for (uint64_t i = 0; i < o->nsizes; i++)
		if ((i && o->size_ends[i] <= o->size_ends[i - 1]) ||
		    o->size_blocks[i] > o->heap_pages ||
		    (i && o->size_blocks[i] == o->size_blocks[i - 1]))
			return fail(why, why_len, "size event %llu of %llu (I5)",
				    (unsigned long long)i, (unsigned long long)o->nsizes);
	if (o->size_tip != (o->nsizes ? o->size_blocks[o->nsizes - 1] : o->heap_pages))
		return fail(why, why_len, "size_tip %u (I5)", o->size_tip);
	return true;
}
