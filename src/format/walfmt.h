/*
 * walfmt.h: the WAL's bytes, exactly as PostgreSQL lays them out (xlogrecord.h,
 * xlog_internal.h; docs/postgres-facts.md section 2). Pure functions: no I/O, no state. Owns:
 *   - record assembly: XLogRecord (24 B) + block headers (4 B, + 5 B image header, + 12 B
 *     RelFileLocator unless SAME_REL, + 4 B BlockNumber, + 2 B slot-shift header) + main-data
 *     header (2 B short / 5 B long) + block data and hole-free images + main data;
 *     CRC-32C over everything after the header, then over the header's first 20 bytes;
 *   - position arithmetic: LSN = byte position in the WAL including page headers; 8 KiB WAL
 *     pages with a 24 B header (40 B at a segment start); records start MAXALIGNed in
 *     "usable byte" space (XLogBytePosToRecPtr / XLogBytePosToEndRecPtr);
 *   - placing a record's bytes into WAL pages (continuation pages carry
 *     XLP_FIRST_IS_CONTRECORD and xlp_rem_len);
 *   - (walread.h, included at the end) a reader that finds the end of valid WAL as crash
 *     recovery does: page magic and pageaddr, rem_len, xl_tot_len >= 24, a known rmid, the
 *     prev-link, the CRC.
 */
#ifndef PN_WALFMT_H
#define PN_WALFMT_H

#include "env.h"
#include "pn.h"

#define PN_XLOG_BLCKSZ 8192u
#define PN_WAL_PAGE_MAGIC 0xD110u /* PostgreSQL 15's XLOG_PAGE_MAGIC */
#define PN_XLP_FIRST_IS_CONTRECORD 0x0001u
#define PN_XLP_LONG_HEADER 0x0002u
#define PN_WAL_SHORT_PHD 24u
#define PN_WAL_LONG_PHD 40u
#define PN_WAL_RECORD_HEADER 24u
#define PN_WAL_MAX_BLOCKS 4
#define PN_WAL_BLOCK_EXT_MAX 16u   /* a block header's extension bytes (pn_wal_block.ext) */
#define PN_WAL_SHIFT_HAS_EXT 0x40u /* in shift_target's byte: an extension follows */

/* Resource managers (PostgreSQL's ids) and the info values we use. */
enum {
	PN_RM_XLOG = 0,
	PN_RM_XACT = 1,
	PN_RM_SMGR = 2, /* Storage/TRUNCATE */
	PN_RM_CLOG = 3,
	PN_RM_HEAP2 = 9,
	PN_RM_HEAP = 10,
	PN_RM_BTREE = 11,
	/* Umbra L4's RM_XLOG2_ID (XLOG2_HINT_DELTA); the fork appends it after PostgreSQL's
	 * built-in managers, so 22 here (its value was not read: an assumption). */
	PN_RM_XLOG2 = 22,
	PN_RM_MAX = 22
};

/* fork_flags bits of XLogRecordBlockHeader (with the slot-shift bit of Umbra's L3/L4). */
#define PN_BKP_FORK_MASK 0x07u
#define PN_BKP_HAS_SLOT_SHIFT 0x08u
#define PN_BKP_HAS_IMAGE 0x10u
#define PN_BKP_HAS_DATA 0x20u
#define PN_BKP_WILL_INIT 0x40u
#define PN_BKP_SAME_REL 0x80u
/* bimg_info */
#define PN_BKPIMAGE_HAS_HOLE 0x01u
#define PN_BKPIMAGE_APPLY 0x02u

struct pn_wal_block {
	uint32_t blkno; /* logical block number; the relation is fixed (1663/5/16384) */
	uint8_t fork;   /* 0 = main */
	bool will_init;
	/* full-page image: `image` points at page_size bytes; the hole [hole_offset,
	 * hole_offset+hole_length) is left out of the record and zero-filled on decode. */
	bool has_image;
	bool image_apply; /* BKPIMAGE_APPLY (false: a consistency-check image) */
	const uint8_t *image;
	uint16_t hole_offset;
	uint16_t hole_length;
	/* block data */
	const uint8_t *data;
	uint16_t data_len;
	/* Umbra slot shift (2-byte XLogRecordBlockSlotShiftHeader) */
	bool has_shift;
	uint8_t shift_source;
	uint8_t shift_target; /* high bit 0x80 = captured_source */
	/* A row's bytes after the shift header (umbra-remap's BKPBLOCK_HAS_REMAP payload),
	 * ext_len of them (0: none; only with has_shift). Encoded as bit 0x40 of the target
	 * byte, then a length byte and the bytes; counted in the record's size. */
	uint8_t ext_len;
	uint8_t ext[PN_WAL_BLOCK_EXT_MAX];
};

struct pn_wal_record {
	uint32_t xid;
	uint8_t rmid;
	uint8_t info;
	pn_lsn prev; /* xl_prev: start LSN of the previous record */
	uint8_t nblocks;
	struct pn_wal_block blocks[PN_WAL_MAX_BLOCKS];
	const uint8_t *main_data;
	uint32_t main_len;
};

/* xl_tot_len of the record (images without their holes), per the size formula. */
uint32_t pn_wal_record_size(const struct pn_wal_record *r, uint32_t page_size);
/* Image bytes the record carries (sum over blocks of page_size - hole_length). */
uint32_t pn_wal_record_fpi_bytes(const struct pn_wal_record *r, uint32_t page_size);
/* Writes the record (xl_tot_len bytes, CRC filled in) to out; returns xl_tot_len. */
uint32_t pn_wal_record_encode(const struct pn_wal_record *r, uint32_t page_size, uint8_t *out);
/*
 * Parses and verifies one record of `len` bytes (len == xl_tot_len). Pointers in *out point
 * into buf, except images: those are rebuilt (hole zero-filled) into image_buf, which must
 * hold PN_WAL_MAX_BLOCKS * page_size bytes. On failure returns false and says why in `why`.
 */
bool pn_wal_record_decode(const uint8_t *buf, uint32_t len, uint32_t page_size, uint8_t *image_buf,
			  struct pn_wal_record *out, char *why, size_t why_len);
/* pn_wal_record_decode without the CRC check, for bytes whose CRC the caller has checked
 * (walread.c WR4: a record a summarized read found valid). */
bool pn_wal_record_decode_checked(const uint8_t *buf, uint32_t len, uint32_t page_size,
				  uint8_t *image_buf, struct pn_wal_record *out, char *why,
				  size_t why_len);

/* Position arithmetic (seg_size: a power of two, a multiple of PN_XLOG_BLCKSZ). */
pn_lsn pn_wal_bytepos_to_recptr(uint64_t bytepos, uint32_t seg_size);
pn_lsn pn_wal_bytepos_to_endrecptr(uint64_t bytepos, uint32_t seg_size);
uint64_t pn_wal_recptr_to_bytepos(pn_lsn lsn, uint32_t seg_size);
/* From a start position (a value of pn_wal_bytepos_to_recptr) `bytes` (> 0) usable bytes on:
 * *end and *next are what pn_wal_bytepos_to_endrecptr and pn_wal_bytepos_to_recptr give for
 * that byte position (walfmt.c WF2), found without dividing (the insert path's arithmetic). */
void pn_wal_lsn_advance(pn_lsn start, uint64_t bytes, uint32_t seg_size, pn_lsn *end, pn_lsn *next);
/* Header size of the WAL page that starts at page_addr (40 at a segment start, else 24). */
uint32_t pn_wal_page_header_size(pn_lsn page_addr, uint32_t seg_size);

/* Returns the PN_XLOG_BLCKSZ buffer of the WAL page starting at page_addr. */
typedef uint8_t *(*pn_wal_page_fn)(void *arg, pn_lsn page_addr);
/* A whole record's xl_crc: CRC-32C of its bytes after the 24-byte header, then of the
 * header's first 20 bytes (PostgreSQL's order). */
uint32_t pn_wal_record_crc(const uint8_t *rec, uint32_t tot_len);
/*
 * Copies an encoded record of len bytes to WAL position `start` (a value returned by
 * pn_wal_bytepos_to_recptr), writing the header of every page it enters: a page it starts
 * on at the header's end gets rem_len 0; a page it continues onto gets
 * XLP_FIRST_IS_CONTRECORD and the remaining length. sysid fills the long headers.
 */
void pn_wal_copy_record(const uint8_t *rec, uint32_t len, pn_lsn start, uint32_t seg_size,
			uint64_t sysid, pn_wal_page_fn page, void *arg);
/* Writes the header of an empty WAL page at page_addr (rem_len 0, no CONTRECORD). */
void pn_wal_page_init(uint8_t *page, pn_lsn page_addr, uint32_t seg_size, uint64_t sysid);

/* The reader of these bytes is walread.h's; every user of walfmt.h sees it. */
#include "walread.h"

#endif
