/*
 * redo.h: the record kinds and what each does to a page (format layer, owned by redo.c, the
 * table of rmgrlist.h's rows): pn_redo_apply() is the one meaning of every record kind,
 * used by normal operation after building a record and by redo, so a record means one
 * thing. The kinds' accounting is shaped like pg_waldump --stats=record.
 */
#ifndef PN_REDO_H
#define PN_REDO_H

#include "walfmt.h"

enum pn_rec {
#define PN_RECORD(symbol, name, rmid, info, apply, describe) PN_REC_##symbol,
#include "rmgrlist.h"
#undef PN_RECORD
	/* a real PostgreSQL WAL's record, replayed (src/workload/wl_import.c): its own rmid and
	 * info, with info bit PN_INFO_IMPORTED (one of XLR_INFO_MASK's bits PostgreSQL 15 leaves
	 * unused), so it is no row of rmgrlist.h's [rmid][info >> 4] index but every rmid's;
	 * its redo is pn_redo_imported (redo_xlog.c) */
	PN_REC_IMPORTED,
	PN_REC_COUNT
};
#define PN_INFO_IMPORTED 0x08u

/* A row's functions: apply changes the page of block b of record r (false: the record
 * does not fit the page); describe writes a line of text (snprintf's result). */
typedef bool (*pn_redo_apply_fn)(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
				 const struct pn_wal_block *b);
typedef int (*pn_redo_describe_fn)(const struct pn_wal_record *r, char *out, size_t len);

const char *pn_rec_name(enum pn_rec r); /* "Heap/HOT_UPDATE" */
/* rmid/info of each kind, and back (a [rmid][info >> 4] index: no scan) */
void pn_rec_ids(enum pn_rec r, uint8_t *rmid, uint8_t *info);
bool pn_rec_from_ids(uint8_t rmid, uint8_t info, enum pn_rec *out);
/*
 * Applies the change record r makes to one page (block ref b of r): a full-page image to
 * restore (BKPIMAGE_APPLY) is copied, else the row of r's kind is applied. Returns false
 * if the record does not fit the page, its kind is unknown or it changes no page.
 */
bool pn_redo_apply(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
		   const struct pn_wal_block *b);
/*
 * Whether block b of record r stamps its page with the record's LSN (PageSetLSN), at insert
 * and in redo alike: every block of every kind does, except Heap2/VISIBLE's heap page (block
 * 1) when hint bits are not WAL-logged (hints_logged: data checksums or wal_log_hints, PG's
 * XLogHintBitIsNeeded()). There visibilitymap_set and heap_xlog_visible leave the heap
 * page's LSN: the record carries no image of it (REGBUF_NO_IMAGE), and its PD_ALL_VISIBLE is
 * set again by redo from any redo point before the record, as an unstamped page never looks
 * newer than the record (docs/umbra-findings.md section 8).
 */
bool pn_redo_sets_lsn(const struct pn_wal_record *r, const struct pn_wal_block *b,
		      bool hints_logged);
/* "Heap/INSERT off 3; blk 7" (pg_waldump's shape): the name, the row's description. */
int pn_redo_describe(const struct pn_wal_record *r, char *out, size_t len);

#endif
