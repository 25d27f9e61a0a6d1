/*
 * redo_xlog.h: the rows of the redo table for XLOG, Transaction, CLOG and XLOG2 records
 * (format layer, owned by redo_xlog.c; rmgrlist.h, redo.h), and the hint-delta codec of
 * XLOG2/HINT_DELTA (Umbra l4).
 */
#ifndef PN_REDO_XLOG_H
#define PN_REDO_XLOG_H

#include "walfmt.h"

/* An imported record whose blocks' data each start with the page's {pd_lower, pd_upper}
 * (the other XLR_INFO_MASK bit PostgreSQL 15 leaves unused): set only when PostgreSQL's
 * image showed them, so that a block without it carries PostgreSQL's data size exactly. */
#define PN_INFO_LAYOUT 0x04u

bool pn_redo_clog_set(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
		      const struct pn_wal_block *b);
bool pn_redo_hint_delta(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			const struct pn_wal_block *b);
/* XLOG/FPI_FOR_HINT's block without an image (full_page_writes off: XLogSaveBufferForHint's
 * record, which PostgreSQL's redo skips): no change to the page (redo.c restores an image
 * before it is asked); false for a block that carries data, or a check image. */
bool pn_redo_fpi_for_hint(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			  const struct pn_wal_block *b);
/* An imported record's block (PN_REC_IMPORTED; src/workload/wl_import.c writes them). */
bool pn_redo_imported(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
		      const struct pn_wal_block *b);
/* Storage/TRUNCATE's main data, PostgreSQL 15's xl_smgr_truncate (PN_SMGR_TRUNCATE_BYTES):
 * {blkno u32 = the new size in blocks, RelFileNode {spcNode, dbNode, relNode} u32 each =
 * 1663 / 5 / 16384, flags i32 = SMGR_TRUNCATE_ALL 7}. */
#define PN_SMGR_TRUNCATE_BYTES 20u
void pn_smgr_truncate_encode(uint32_t nblocks, uint8_t *out);
/* The new size of a Storage/TRUNCATE record of the model's relation; false for any other
 * record (another kind, another relation, no heap flag, a short main). */
bool pn_smgr_truncate_decode(const struct pn_wal_record *r, uint32_t *nblocks);
int pn_redo_xlog_describe(const struct pn_wal_record *r, char *out, size_t len);
/* XLOG2/HINT_DELTA's block data for the bytes that differ between before and after
 * (page_size each) into out (cap bytes); returns its length. The block data: u16 n, n x
 * {u16 offset, u16 length}, then the final bytes of each fragment in order. */
uint16_t pn_hint_delta_encode(const uint8_t *before, const uint8_t *after, uint32_t page_size,
			      uint8_t *out, uint16_t cap);
/* Copies the fragments of b's data onto page; false when they do not add up. */
bool pn_hint_delta_apply(uint8_t *page, uint32_t page_size, const struct pn_wal_block *b);

#endif
