/*
 * xlogread.h: a reader of real PostgreSQL 15, 16 and 17 WAL (format layer: it uses only pn.h and
 * walfmt.h's CRC-32C and page constants; it names no engine, workload or loader type).
 *
 * Input is segment files named as PostgreSQL names them (TTTTTTTTXXXXXXXXYYYYYYYY: timeline,
 * then the segment number split at 4 GiB), given as files or as a directory (pg_wal). The
 * segment size is read from the first segment's long page header (a power of two, 1 MiB to
 * 1 GiB), the version from its page magic (every page must carry the same: XR0). The reader
 * decodes every record as PostgreSQL 15's xlogreader.c does (16's and 17's decode the same
 * page, record and block headers) and stops
 * where it stops (page header, xl_tot_len, rmid, xl_prev, contrecord flag and length, CRC,
 * the block headers), so the records it returns are the ones pg_waldump prints, less the
 * corrupt ones XR5 refuses:
 *   XR0. the version is the first segment's page magic (15 D110, 16 D113, 17 D116); a page
 *        of another magic ends the WAL as PostgreSQL's invalid magic number does;
 *   XR1. a record is returned only if all its bytes lie before the `to` limit (pg_waldump
 *        --end: its page reader refuses bytes at or past the limit);
 *   XR2. the first record is the first one that starts at or after `from`
 *        (XLogFindNextRecord: continuation data at a page start is skipped);
 *   XR3. XLOG_SWITCH ends its segment: the next record is at the next segment's start;
 *   XR4. images are not kept (XR5 decompresses lz4 and zstd ones into one page buffer and
 *        walks pglz ones, only to check them): their stored length (bimg_len) is what the
 *        statistics count, as pg_waldump's XLogRecGetLen does;
 *   XR5. a record whose CRC is right is corrupt, not the WAL's end, when it breaks one of
 *        the decoder's checks (PostgreSQL's block header cross-checks, and the ones its redo
 *        relies on without checking: an image's hole lies between the 24-byte page header
 *        and the page's end, bimg_len <= BLCKSZ, a compressed image is shorter than what it
 *        stands for and it decompresses (pglz walked; lz4, zstd by their libraries) to exactly
 *        BLCKSZ - hole_length bytes, a block's data is at most BLCKSZ (a Generic delta BLCKSZ + 8),
 *        fork 0..3): reading stops with r->refused set and r->why naming the segment file,
 *        the offset in it and the record's LSN;
 *   XR6. one end-of-range rule (pn_xlr_whole): a range was read whole when reading stopped
 *        at the `to` limit, or, without one, where PostgreSQL's reader stops (a torn or
 *        zeroed tail, a missing segment, a wrong CRC); never after a refused record.
 * Memory: one WAL page, the reassembly buffer of the longest record read so far (grown as a
 * record's pages are read: a length in a header alone allocates nothing).
 */
#ifndef PN_XLOGREAD_H
#define PN_XLOGREAD_H

#include <stdio.h>

#include "pn.h"
#include "xlogdecode.h"

#define PN_XLR_RM_BUILTIN 22      /* PostgreSQL 15's managers are ids 0 .. 21 */
#define PN_XLR_RM_CUSTOM_MIN 128  /* RM_MIN_CUSTOM_ID .. 255: extension managers */
#define PN_XLR_PG_VERSION_MIN 15u /* the versions whose XLOG_PAGE_MAGIC it reads: 15 D110, */
#define PN_XLR_PG_VERSION_MAX 17u /* 16 D113, 17 D116 (r->pg_version) */

enum pn_xlr_rm {
	PN_XLR_RM_XLOG = 0,
	PN_XLR_RM_XACT = 1,
	PN_XLR_RM_SMGR = 2,
	PN_XLR_RM_HEAP2 = 9,
	PN_XLR_RM_HEAP = 10
};
#define PN_XLR_XLOG_CHECKPOINT_SHUTDOWN 0x00u
#define PN_XLR_XLOG_CHECKPOINT_ONLINE 0x10u
#define PN_XLR_XLOG_SWITCH 0x40u

struct pn_xlr_seg {
	uint32_t tli;
	uint64_t segno;
	char *path;
};

struct pn_xlr {
	struct pn_xlr_seg *segs; /* sorted by segno, one per segno (the highest timeline) */
	uint16_t magic;          /* XLOG_PAGE_MAGIC of the first segment: every page's (XR0) */
	uint32_t pg_version;     /* the PostgreSQL version of that magic */
	size_t nsegs;
	uint32_t seg_size;
	pn_lsn limit; /* no byte at or past it is read (0: none) */
	bool limit_reached;
	FILE *file;      /* the open segment */
	size_t file_seg; /* its index in segs */
	uint8_t page[8192];
	struct pn_xlr_decoder dec; /* XR4, XR5: its page buffer and a refusal's reason */
	pn_lsn page_addr;          /* of the validated page in `page`; 1 = none */
	uint64_t hdr_segno;        /* segment whose first page was validated; UINT64_MAX none */
	pn_lsn latest_page;
	uint32_t latest_tli;
	uint8_t *rec;
	uint32_t rec_cap;
	pn_lsn next;            /* where the next record starts */
	pn_lsn prev;            /* start of the last record read; 0: first read (random) */
	char why[PN_ERROR_LEN]; /* why reading stopped; empty when it stopped at the limit */
	bool refused;           /* XR5: it stopped at a corrupt record whose CRC is right */
};

/* Collects the segment files of paths (files or directories) and reads the segment size.
 * False: err says why (no segment file, an unreadable path, a bad long header). */
bool pn_xlr_open(struct pn_xlr *r, char *const *paths, size_t npaths, char *err, size_t len);
void pn_xlr_close(struct pn_xlr *r);
/* The first LSN of the lowest segment found. */
pn_lsn pn_xlr_first_lsn(const struct pn_xlr *r);
/* Positions the reader on the first record at or after from (0: the first segment's start),
 * reading nothing at or past `to` (0: no limit); returns that record's LSN, 0 if there is
 * none (r->why says why, empty if the limit came first). */
pn_lsn pn_xlr_begin(struct pn_xlr *r, pn_lsn from, pn_lsn to);
/* Reads the next record. False: the end (r->why, empty at the limit). */
bool pn_xlr_read(struct pn_xlr *r, struct pn_xlr_record *out);
/* XR5: refuses the record at `at`, read from r (for a check of its content beyond the
 * decoder's): r->why becomes "FILE, offset N: record at X/Y: " and what fmt says, r->refused
 * is set, and the next read starts nothing. */
void pn_xlr_refuse(struct pn_xlr *r, pn_lsn at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* XR6, after pn_xlr_begin or pn_xlr_read returned the end: whether the range was read whole. */
bool pn_xlr_whole(const struct pn_xlr *r);

/* The PostgreSQL version whose XLOG_PAGE_MAGIC is magic, 0 if none this reader reads. */
uint32_t pn_xlr_version_of_magic(uint16_t magic);
/* Names as pg_waldump of that version prints them: the manager ("Heap", "custom130"; buf >=
 * 16 bytes), and the record type of the info value in `version` (NULL when the manager
 * defines none there: a record of unknown format for that version). */
const char *pn_xlr_rm_name(uint8_t rmid, char *buf, size_t len);
const char *pn_xlr_identify(uint32_t version, uint8_t rmid, uint8_t info);

/* pg_waldump --stats=record's counters (XLogRecStoreStats): per manager and the upper four
 * info bits (Transaction: the three opcode bits). */
struct pn_xlr_stat {
	uint64_t count, rec_len, fpi_len;
};
struct pn_xlr_stats {
	uint64_t count;
	pn_lsn start, end;
	struct pn_xlr_stat rec[256][16];
};
void pn_xlr_stats_add(struct pn_xlr_stats *s, const struct pn_xlr_record *rec);
/* The row name of stats cell (rmid, recid), "Heap/INSERT+INIT" or "Gin/UNKNOWN (90)". */
void pn_xlr_stats_name(uint32_t version, uint8_t rmid, uint8_t recid, char *buf, size_t len);

/* "X/Y" (hex) to an LSN; false if it is not one. */
bool pn_xlr_parse_lsn(const char *s, pn_lsn *out);

#endif
