/*
 * redo_btree.h: the btree's rows of the redo table (format layer, owned by redo_btree.c;
 * rmgrlist.h, redo.h): Btree/INSERT_LEAF, SPLIT_L, SPLIT_R, DEDUP; and the split records
 * the workloads build. Each row applies block b of record r to its page; false when the
 * record does not fit the page.
 */
#ifndef PN_REDO_BTREE_H
#define PN_REDO_BTREE_H

#include "btree.h"
#include "redo.h"

bool pn_redo_btree_dedup(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			 const struct pn_wal_block *b);
bool pn_redo_btree_insert(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			  const struct pn_wal_block *b);
bool pn_redo_btree_split_l(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			   const struct pn_wal_block *b);
bool pn_redo_btree_split_r(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			   const struct pn_wal_block *b);
int pn_redo_btree_describe(const struct pn_wal_record *r, char *out, size_t len);

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
enum pn_rec pn_btree_split_record_at(const uint8_t *left, uint32_t page_size, const uint8_t *itup,
				     uint32_t itup_len, uint16_t below, uint64_t split_key,
				     struct pn_wal_record *rec, uint8_t *main, uint8_t *data0,
				     uint8_t *data1);

#endif
