/*
 * page.h: the page format (engine layer, owned by page.c): the 24 B PostgreSQL page header
 * and its heap-like body, the record kinds (accounting shaped like pg_waldump
 * --stats=record), the changes records make (pn_page_apply, the same function for normal
 * operation and redo), the heap and btree page helpers of the realistic workloads, SLRU
 * commit-status bits. Bytes only: nothing here takes the engine.
 */
#ifndef PN_PAGE_H
#define PN_PAGE_H

#include "walfmt.h"

#define PN_PAGE_HEADER 24u
#define PN_PD_ALL_VISIBLE 0x0004u
#define PN_TUPLE_HEADER 24u
#define PN_TUPLE_LEN 104u          /* tuple header + 80 B payload */
#define PN_HINT_XMIN_COMMITTED 0x0100u
#define PN_HINT_FROZEN 0x0300u

/* Record kinds, for accounting shaped like pg_waldump --stats=record. */
enum pn_rec {
	PN_REC_HEAP_HOT_UPDATE, PN_REC_HEAP2_FREEZE_PAGE, PN_REC_BTREE_DEDUP, PN_REC_XACT_COMMIT,
	PN_REC_XACT_ABORT, PN_REC_XLOG_CHECKPOINT_ONLINE, PN_REC_XLOG_CHECKPOINT_SHUTDOWN,
	PN_REC_XLOG_FPI_FOR_HINT, PN_REC_CLOG_SET,
	PN_REC_XLOG2_HINT_DELTA, /* Umbra l4: hint bits as final-byte fragments (umbra_policy.c) */
	/* the records pgbench and tpcc produce (page.c; PostgreSQL 15's layouts) */
	PN_REC_HEAP_INSERT, PN_REC_HEAP_INSERT_INIT, PN_REC_HEAP_UPDATE, PN_REC_HEAP_UPDATE_INIT,
	PN_REC_HEAP_LOCK, PN_REC_HEAP_DELETE, PN_REC_BTREE_INSERT_LEAF, PN_REC_BTREE_SPLIT_L,
	PN_REC_BTREE_SPLIT_R, PN_REC_HEAP2_PRUNE,
	/* the vacuum workload's (wl_vacuum.c) */
	PN_REC_HEAP2_VISIBLE,
	/* a real PostgreSQL WAL's record, replayed (wl_import.c): its own rmid and info, with
	 * info bit PN_INFO_IMPORTED (one of XLR_INFO_MASK's bits PostgreSQL 15 leaves unused) */
	PN_REC_IMPORTED,
	PN_REC_COUNT
};
#define PN_INFO_IMPORTED 0x08u
const char *pn_rec_name(enum pn_rec r); /* "Heap/HOT_UPDATE" */
/* rmid/info of each kind */
void pn_rec_ids(enum pn_rec r, uint8_t *rmid, uint8_t *info);
bool pn_rec_from_ids(uint8_t rmid, uint8_t info, enum pn_rec *out);

void pn_page_init(uint8_t *page, uint32_t page_size, uint32_t blkno, bool slru);
pn_lsn pn_page_lsn(const uint8_t *page);
void pn_page_set_lsn(uint8_t *page, pn_lsn lsn);
uint32_t pn_page_nitems(const uint8_t *page);
/* The hole [pd_lower, pd_upper) if the header is sane, else {0,0}. */
void pn_page_hole(const uint8_t *page, uint32_t page_size, uint16_t *off, uint16_t *len);
void pn_page_set_checksum(uint8_t *page, uint32_t page_size, uint32_t blkno);
/* True when the page verifies: all zero, or sane header (and checksum when asked). */
bool pn_page_verify(const uint8_t *page, uint32_t page_size, uint32_t blkno, bool checksums);
/*
 * Applies the change a record describes to one page (block ref `b` of record `r`). Used by
 * normal operation after building a record and by redo: the same function, so a record
 * means one thing. Returns false if the record does not fit the page.
 */
bool pn_page_apply(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
		   const struct pn_wal_block *b);
/*
 * Heap and btree pages of the realistic workloads (page.c header): variable-length tuples
 * and index tuples. pn_heap_page_fill() formats a heap page holding `rows` tuples of t_len
 * bytes (payload derived from blkno); pn_btree_leaf_fill() a btree leaf holding index
 * tuples of `itup_len` bytes with the given keys, each pointing at heap TID (key, 1).
 */
#define PN_ITUP_HEADER 8u        /* IndexTupleData: t_tid 6 B + t_info 2 B */
#define PN_BTREE_SPECIAL 16u     /* BTPageOpaqueData */
void pn_heap_page_fill(uint8_t *page, uint32_t page_size, uint32_t blkno, uint32_t rows,
		       uint32_t t_len);
void pn_btree_leaf_fill(uint8_t *page, uint32_t page_size, const uint64_t *keys, uint32_t n,
			uint32_t itup_len);
uint32_t pn_heap_rows_per_page(uint32_t page_size, uint32_t t_len, uint32_t fillfactor);
uint32_t pn_btree_items_per_page(uint32_t page_size, uint32_t itup_len);
/* Writes an index tuple (key, heap TID) of itup_len bytes into out. */
void pn_itup_make(uint8_t *out, uint32_t itup_len, uint64_t key, uint32_t heap_blk,
		  uint16_t heap_off);
/* The offset number (1-based) a new index tuple with `key` takes on a leaf: after every
 * item whose key is <= key (so it also works on leaves holding out-of-range keys). */
uint16_t pn_btree_insert_offnum(const uint8_t *page, uint64_t key);
/* How many of the leaf's items have a key < `key`, i.e. firstrightoff - 1 of a split there. */
uint16_t pn_btree_count_below(const uint8_t *page, uint64_t key);
/* Concatenated index tuples of items [from, nitems) of a leaf into out; returns bytes. */
uint32_t pn_btree_items_copy(const uint8_t *page, uint16_t from, uint8_t *out, uint32_t cap);
/* The split record of leaf `left` (its items before the change) taking index tuple itup
 * (itup_len B, its key u64 at 8) at split_key, the first key that goes right: main (10 B),
 * block 0's data (the new item if it stays left, then the high key: data0 holds 2 tuples)
 * and block 1's (the right page's items, the new one among them if it goes right: data1
 * holds a page) into rec; returns SPLIT_L or SPLIT_R. rec's blocks' numbers are the
 * caller's (a third block, the old right sibling, too). */
enum pn_rec pn_btree_split_record(const uint8_t *left, uint32_t page_size, const uint8_t *itup,
				  uint32_t itup_len, uint64_t split_key, struct pn_wal_record *rec,
				  uint8_t *main, uint8_t *data0, uint8_t *data1);
/* The same with the split's place given: the first `below` items stay left, the others
 * (keys >= split_key, which may equal the last left key: a split among one key's
 * duplicates) go right; the new item goes left iff its key < split_key. */
enum pn_rec pn_btree_split_record_at(const uint8_t *left, uint32_t page_size,
				     const uint8_t *itup, uint32_t itup_len, uint16_t below,
				     uint64_t split_key, struct pn_wal_record *rec, uint8_t *main,
				     uint8_t *data0, uint8_t *data1);
/* True when the page is new (all-zero header: never initialized). */
bool pn_page_is_new(const uint8_t *page);
/* Free bytes between pd_lower and pd_upper. */
uint32_t pn_page_free(const uint8_t *page);
/* Sets a hint bit on item `item` (no record). */
void pn_page_set_hint(uint8_t *page, uint32_t item);
/* Commit-status bits of xid on an SLRU page (2 bits per xid). */
void pn_slru_set(uint8_t *page, uint32_t page_size, bool header, uint32_t xid);
uint32_t pn_slru_page_of(uint32_t xid, uint32_t page_size, bool header, uint32_t slru_pages);

#endif
