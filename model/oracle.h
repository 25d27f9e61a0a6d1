/*
 * oracle.h: the checker's reference applier (model layer), the judge of C2 exactness
 * (docs/protocol.md section 2).
 *
 * The oracle answers one question: what must page P hold after exactly the records whose
 * end LSN is <= U, applied once each, in LSN order, to the initial pages? It writes the page
 * semantics of every record kind itself, from the specification in oracle.c's header, and
 * shares no redo code with the engine (src/format/redo.c, src/engine/recovery.c): only the WAL format
 * layer (src/format/walfmt.h) to parse records. It never skips a record by page LSN.
 *
 * pn_oracle_compare() masks what PostgreSQL does not WAL-log (wal_consistency_checking
 * style): pd_checksum, and the hint bits of heap tuples (frozen stays visible).
 */
#ifndef PN_ORACLE_H
#define PN_ORACLE_H

#include "pn.h"

/* Default bound on the bytes of cached page states (checkpoints); see oracle.c. */
#define PN_ORACLE_CKPT_BUDGET_DEFAULT (64ull << 20)

struct pn_oracle;

/* What the oracle holds, for tests and reports. */
struct pn_oracle_stats {
	uint64_t records;       /* records logged */
	uint64_t ops;           /* (record, page) changes indexed */
	uint64_t misfits;       /* changes that named a missing tuple (skipped) */
	uint64_t ckpts;         /* stored page states (checkpoints) */
	uint64_t image_bases;   /* images a page is rebuilt from (no extra memory) */
	uint64_t ckpt_bytes;    /* bytes of the stored states */
	uint64_t payload_bytes; /* copied record bytes (main data, block data, images) */
	uint32_t ckpt_weight;   /* a state is stored once the changes since the last one
				  * weigh this much (a small change weighs 1) */
};

/* initial: npages*page_size bytes, the pages before any record (page p at p*page_size).
 * Pages 0..heap_pages-1 are heap pages, the next slru_pages are SLRU pages. NULL on bad
 * arguments or no memory. */
struct pn_oracle *pn_oracle_new(uint32_t heap_pages, uint32_t slru_pages, uint32_t page_size,
				bool slru_headers, const uint8_t *initial);
void pn_oracle_free(struct pn_oracle *o);

/* Whether the cluster logs hint bits (data checksums or wal_log_hints; true until set):
 * without, VISIBLE leaves its heap page's LSN. Set before the first record is logged. */
void pn_oracle_set_hints_logged(struct pn_oracle *o, bool logged);

/* Bounds the cached page states (default PN_ORACLE_CKPT_BUDGET_DEFAULT); thins them now
 * if they exceed it. Only speed depends on it, never a result. */
void pn_oracle_set_ckpt_budget(struct pn_oracle *o, uint64_t bytes);

/*
 * Logs one encoded record (xl_tot_len bytes, as inserted) that spans [start, end); records
 * arrive in LSN order. Copies what it needs. Returns false, logging nothing, if it cannot
 * decode it or give it a meaning (a block beyond the pages, of another fork, with data of
 * the wrong size, or of an unknown kind); `why` (may be NULL) then says why.
 */
bool pn_oracle_add(struct pn_oracle *o, const uint8_t *rec, uint32_t len, uint64_t start,
		   uint64_t end);
bool pn_oracle_add_why(struct pn_oracle *o, const uint8_t *rec, uint32_t len, uint64_t start,
		       uint64_t end, char *why, size_t why_len);

/* The expected bytes of page `page` after applying, in order, every logged record with
 * end <= upto. Allocates nothing; moves the page's cursor (one thread per oracle). */
void pn_oracle_page(struct pn_oracle *o, uint32_t page, uint64_t upto, uint8_t *out);

/* Compares found against expected with the masking above; -1 if equal, else the first
 * differing byte offset. */
int pn_oracle_compare(const struct pn_oracle *o, uint32_t page, const uint8_t *expected,
		      const uint8_t *found);

/* How many records were logged. */
uint64_t pn_oracle_records(const struct pn_oracle *o);
/* The end LSN of the last logged record with end <= upto (0 if none). */
uint64_t pn_oracle_last_end(const struct pn_oracle *o, uint64_t upto);

/* The relation's size in heap pages after every logged record with end <= upto (I5):
 * heap pages at or past it do not exist (truncated, not regrown); SLRU pages always do. */
uint32_t pn_oracle_rel_blocks(const struct pn_oracle *o, uint64_t upto);

void pn_oracle_stats(const struct pn_oracle *o, struct pn_oracle_stats *out);
/* Verifies every field relationship; false (and why) on the first broken one. */
bool pn_oracle_check(const struct pn_oracle *o, char *why, size_t why_len);

#endif
