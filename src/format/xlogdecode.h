/*
 * xlogdecode.h: one record of real PostgreSQL WAL decoded (format layer, owned by
 * xlogdecode.c; its rules XD1-XD2 are there, and it keeps xlogread.h's XR4 and XR5): the
 * record's blocks, images and main data, as DecodeXLogRecord gives them, from a record's
 * bytes whose CRC the reader (xlogread.h) checked. xlogread.h includes it.
 */
#ifndef PN_XLOGDECODE_H
#define PN_XLOGDECODE_H

#include "pn.h"

#define PN_XLR_MAX_BLOCK_ID 32 /* XLR_MAX_BLOCK_ID */
#define PN_XLR_BLCKSZ 8192u    /* data page size (BLCKSZ) of a default build */

/* bimg_info: how an image is stored. */
enum pn_xlr_compress { PN_XLR_PLAIN, PN_XLR_PGLZ, PN_XLR_LZ4, PN_XLR_ZSTD };

struct pn_xlr_block {
	bool in_use;
	uint8_t fork;          /* fork_flags & 7: 0 main, 1 fsm, 2 vm, 3 init */
	uint8_t flags;         /* fork_flags as written */
	uint32_t spc, db, rel; /* RelFileLocator (SAME_REL: the previous block's) */
	uint32_t blkno;
	uint16_t data_len;
	bool has_image, apply_image, will_init;
	uint8_t bimg_info;
	enum pn_xlr_compress compress;
	uint16_t bimg_len; /* image bytes stored in the record */
	uint16_t hole_offset, hole_length;
};

struct pn_xlr_record {
	pn_lsn start; /* ReadRecPtr */
	pn_lsn end;   /* EndRecPtr: where the next record starts */
	pn_lsn prev;  /* xl_prev */
	uint32_t tot_len, xid;
	uint8_t rmid, info;
	bool has_origin;
	uint16_t origin;
	uint32_t toplevel_xid; /* 0: none */
	int max_block_id;      /* -1: no block */
	struct pn_xlr_block blocks[PN_XLR_MAX_BLOCK_ID + 1];
	uint32_t main_len;
	const uint8_t *main_data; /* valid until the next read */
	uint32_t fpi_len;         /* sum of bimg_len */
};

/* The decoder's own memory: a page to decompress an lz4 or zstd image into (XR4: measured,
 * then dropped), and why the last record was refused. */
struct pn_xlr_decoder {
	uint8_t image[PN_XLR_BLCKSZ];
	char why[PN_ERROR_LEN / 2];
};

/* Decodes the record of len bytes at buf (xl_tot_len == len; its CRC checked), which starts
 * at LSN `at`, into out (main_data points into buf). False: it is refused (XR5), d->why says
 * why, without where (pn_xlr_refuse adds the file, the offset and the LSN). */
bool pn_xlr_decode(struct pn_xlr_decoder *d, pn_lsn at, const uint8_t *buf, uint32_t len,
		   struct pn_xlr_record *out);

#endif
