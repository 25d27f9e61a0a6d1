/*
 * oracleop.h: the oracle's changes: the page format as the oracle reads it, the kinds of
 * change a record block makes (an op), and their meaning (model layer; the specification is
 * at the top of oracle.c, which logs the ops; oracleop.c applies them). Private to the
 * oracle: nothing here calls the engine's redo.
 */
#ifndef PN_ORACLEOP_H
#define PN_ORACLEOP_H

#include <stdbool.h>
#include <stdint.h>

#include "pn.h"

#define PAGE_HEADER 24u
#define OFF_CHECKSUM 8u
#define OFF_FLAGS 10u
#define OFF_LOWER 12u
#define OFF_UPPER 14u
#define OFF_SPECIAL 16u
#define OFF_VERSION 18u
#define OFF_PRUNE_XID 20u
#define FLAG_ALL_VISIBLE 0x0004u
#define TUP_XMAX 4u
#define TUP_INFOMASK2 18u
#define TUP_INFOMASK 20u
#define TUP_HEADER 24u
#define TUP_LEN 104u
#define HINT_BITS 0x0F00u
#define HINT_FROZEN 0x0300u
#define FREEZE_PLAN_BYTES 12u /* PG16 xl_heap_freeze_plan */
#define VM_FORK 2u
#define BT_SPECIAL 16u
#define BT_PLAIN 16u
#define BT_POSTING_HDR 16u
#define BT_POSTING_MAX 2704u
#define BT_ALT_TID 0x2000u

enum pn_oracleop_kind {
	OP_IMAGE,
	OP_HOT_UPDATE,
	OP_FREEZE,
	OP_DEDUP,
	OP_CLOG_SET,
	OP_HINT_DELTA,
	OP_NONE,
	OP_UNKNOWN,
	OP_INSERT,
	OP_INSERT_INIT,
	OP_UPDATE,
	OP_UPDATE_INIT,
	OP_LOCK,
	OP_DELETE,
	OP_BT_INSERT,
	OP_SPLIT_L,
	OP_SPLIT_R,
	OP_PRUNE,
	/* per block of a two-block record: */
	OP_UPDATE_OLD,
	OP_SPLIT_RIGHT_PAGE,
	OP_SPLIT_SIBLING,
	/* the vacuum workload's */
	OP_FREEZE_PLANS,
	OP_VM_SET,
	OP_ALL_VISIBLE,
	/* the import workload's (any rmid, info bit 0x08), without and with WILL_INIT; _L: the
	 * block data starts with {pd_lower, pd_upper} (info bit 0x04) */
	OP_IMPORTED,
	OP_IMPORTED_INIT,
	OP_IMPORTED_L,
	OP_IMPORTED_L_INIT,
};

struct pn_oracleop {
	pn_lsn end;
	uint64_t off; /* arena: hole-free image, or main data followed by block data */
	uint32_t xid;
	uint32_t main_len;
	uint16_t data_len;
	uint16_t hole_off; /* images only */
	uint16_t hole_len;
	uint8_t kind;
	uint32_t blkno; /* the block's own number (t_ctid) */
	uint32_t other; /* the other block's number (a split's sibling: the right page's;
			    * VISIBLE's vm page: the heap page's) */
	uint32_t next;  /* a split's right page: the sibling's number, or 0 */
};

/* What applying an op reads of the oracle: the payload arena (an op's offset is into it),
 * the page size, which pages have a header, whether hint bits are logged. */
struct pn_oracleop_pages {
	const uint8_t *arena;
	uint32_t page_size, heap_pages;
	bool slru_headers, hints_logged;
};

/* Applies one change to `page` (logical id `id`), then sets its LSN where it has one (the
 * specification's last paragraph); false if a tuple it names is missing (a misfit). */
bool pn_oracleop_apply(const struct pn_oracleop_pages *o, uint32_t id, uint8_t *page,
		       const struct pn_oracleop *op);
/* A heap page's count of line pointers (0 when pd_lower is outside [24, page_size]). */
uint32_t pn_oracleop_nitems(const uint8_t *page, uint32_t page_size);
/* Offset of item `item`'s tuple if the page has it with at least `need` bytes; else 0. */
uint32_t pn_oracleop_tuple_off(const uint8_t *page, uint32_t page_size, uint32_t item,
			       uint32_t need);

#endif
