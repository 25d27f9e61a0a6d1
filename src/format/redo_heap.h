/*
 * redo_heap.h: the heap's rows of the redo table (format layer, owned by redo_heap.c;
 * rmgrlist.h, redo.h): Heap/INSERT, UPDATE, HOT_UPDATE, LOCK, DELETE (+INIT), Heap2/PRUNE,
 * FREEZE_PAGE, VISIBLE. Each applies block b of record r to its page; false when the
 * record does not fit the page.
 */
#ifndef PN_REDO_HEAP_H
#define PN_REDO_HEAP_H

#include "page.h"
#include "walfmt.h"

/* Heap2/FREEZE_PAGE in PostgreSQL 16's layout: the main data and one freeze plan. */
#define PN_FREEZE_MAIN 7u
#define PN_FREEZE_PLAN 12u
/* ... and in PostgreSQL 15's (the script op's): xl_heap_freeze_page and one
 * xl_heap_freeze_tuple of block 0's data. */
#define PN_FREEZE_MAIN_PG15 6u
#define PN_FREEZE_TUPLE 12u

/* Block 0's data of a PostgreSQL 15 FREEZE_PAGE that freezes the page's first n tuples:
 * per tuple its offset, its current t_xmax and t_infomask2, and t_infomask = infomask.
 * Returns the length (n * PN_FREEZE_TUPLE). */
uint16_t pn_heap_freeze_tuples(const uint8_t *page, uint32_t page_size, uint32_t n,
			       uint16_t infomask, uint8_t *out);

bool pn_redo_heap_hot_update(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			     const struct pn_wal_block *b);
bool pn_redo_heap2_freeze(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			  const struct pn_wal_block *b);
bool pn_redo_heap_insert(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			 const struct pn_wal_block *b);
bool pn_redo_heap_insert_init(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			      const struct pn_wal_block *b);
bool pn_redo_heap_update(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			 const struct pn_wal_block *b);
bool pn_redo_heap_update_init(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			      const struct pn_wal_block *b);
bool pn_redo_heap_lock(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
		       const struct pn_wal_block *b);
bool pn_redo_heap_delete(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			 const struct pn_wal_block *b);
bool pn_redo_heap2_prune(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			 const struct pn_wal_block *b);
bool pn_redo_heap2_visible(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			   const struct pn_wal_block *b);
int pn_redo_heap_describe(const struct pn_wal_record *r, char *out, size_t len);

#endif
