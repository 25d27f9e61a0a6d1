/*
 * walread.h: the reader of the WAL's bytes (format layer, owned by walread.c; its rules
 * WR1-WR3 are there): records read back from WAL pages as PostgreSQL 15's xlogreader.c reads
 * them, through a page callback (recovery reads the device; pushdown's page server its WAL
 * file). The layout it reads is walfmt.h's; walfmt.h includes this header, so a user of
 * either sees both.
 */
#ifndef PN_WALREAD_H
#define PN_WALREAD_H

#include "env.h"
#include "walfmt.h"

/* Reads the WAL page at page_addr into out (PN_XLOG_BLCKSZ bytes); false if unavailable. */
typedef bool (*pn_wal_read_fn)(void *arg, pn_lsn page_addr, uint8_t *out);
/* Reads [addr, addr + len) of one WAL page into out; false if unavailable. */
typedef bool (*pn_wal_part_fn)(void *arg, pn_lsn addr, uint32_t len, uint8_t *out);
/* A summarized read (env.h, sim/device.h DV8) of [addr, addr + len) of one WAL page. */
typedef bool (*pn_wal_summary_fn)(void *arg, pn_lsn addr, uint32_t len, const struct pn_summary *s,
				  struct pn_summary_value *out);

struct pn_wal_reader {
	uint32_t seg_size;
	uint32_t page_size; /* data page size, for images */
	uint64_t sysid;
	pn_wal_read_fn read;
	void *arg;
	pn_lsn next;   /* where the next record starts */
	pn_lsn prev;   /* start of the last record read; 0 = do not check the first */
	uint8_t *page; /* PN_XLOG_BLCKSZ scratch (owned) */
	uint8_t *rec;  /* reassembly buffer (owned) */
	uint32_t rec_cap;
	uint8_t *images; /* PN_WAL_MAX_BLOCKS * page_size (owned) */
	char why[160];   /* why reading stopped, PostgreSQL's wording where it has one */
	/* The validated WAL page held in `page` (read once for all the records it holds).
	 * Dropped on every failure and by pn_wal_reader_seek(). */
	pn_lsn page_addr;
	bool page_loaded;
	/* Optional (pn_wal_reader_parts): a page is read only as far as its records reach
	 * (page_have bytes of it are in `page`), and whether a record that starts on it is
	 * valid is taken as a summary before its bytes are read. */
	pn_wal_part_fn read_part;
	pn_wal_summary_fn summarize;
	uint32_t page_have;
	/* The last run of valid records summarized (walread.c run_summary), [run_start, run_end)
	 * on page_addr's page, and what ends it (run_end 0: none). */
	pn_lsn run_start, run_end;
	struct pn_summary_value run_stop;
	/* WR4: the start of the last record a summarized read found valid (0: none). */
	pn_lsn crc_checked;
};

/* Prepares a reader at `start`; max_record bounds xl_tot_len. Returns false on no memory. */
bool pn_wal_reader_init(struct pn_wal_reader *r, pn_lsn start, pn_lsn prev, uint32_t seg_size,
			uint32_t page_size, uint32_t max_record, uint64_t sysid,
			pn_wal_read_fn read, void *arg);
void pn_wal_reader_free(struct pn_wal_reader *r);
/* Reads pages in parts and records' validity as summaries from here on (recovery's reader:
 * the bytes past the last valid record are never read as bytes, only summarized). */
void pn_wal_reader_parts(struct pn_wal_reader *r, pn_wal_part_fn part, pn_wal_summary_fn summarize);
/* Repositions the reader (next, prev as in init) and drops its cached page: use it after
 * the WAL under the reader changed (e.g. more WAL appended to the page it last read). */
void pn_wal_reader_seek(struct pn_wal_reader *r, pn_lsn next, pn_lsn prev);
/*
 * Reads the record at r->next. True: *rec is decoded (valid until the next call), *start
 * and *end are its start LSN and its end LSN (the EndRecPtr PostgreSQL stamps on pages:
 * the position after its MAXALIGNed end), r->next advances. False: the end of valid WAL,
 * r->why says why (e.g. "invalid record length at 0/14000028: wanted 24, got 0").
 */
bool pn_wal_read_next(struct pn_wal_reader *r, struct pn_wal_record *rec, pn_lsn *start,
		      pn_lsn *end);

#endif
