/*
 * xlogdecode.c: one record of real PostgreSQL 15, 16 or 17 WAL decoded as xlogreader.c's
 * DecodeXLogRecord decodes it (format layer; xlogdecode.h). The reader (xlogread.c) finds the
 * record's bytes and checks its CRC; this file reads its structure:
 *
 *   - the headers a record may carry before its main data, in any order between block
 *     headers: 253 origin (2 B RepOriginId), 252 top-level xid (4 B); block ids 0..32
 *     ascending with gaps; 255 / 254 the short / long main-data header, always last;
 *   - an image header of 5 B (length, hole offset, bimg_info) plus, when the image is
 *     compressed (bimg_info 0x04 pglz, 0x08 lz4, 0x10 zstd) and has a hole, 2 B of hole
 *     length; an uncompressed image's hole is BLCKSZ - length.
 *
 * It keeps xlogread.h's XR4 (images are measured, not kept) and XR5 (a record whose CRC is
 * right is refused when it breaks one of the checks: the block headers' cross-checks, then
 * what the page asks of images and block data: image_fits, data_fits, images_fit), and:
 *   XD1. the headers announce exactly the bytes the record holds: a record whose headers run
 *        past its length, or leave bytes over, is refused;
 *   XD2. nothing is written outside `out` and the decoder's page buffer, which holds at most
 *        one decompressed image (PN_XLR_BLCKSZ bytes) and is dropped after its length is
 *        measured.
 */
#include "xlogdecode.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <lz4.h>
#include <zstd.h>

#include "walfmt.h"

#define REC_HDR 24u

#define ID_DATA_SHORT 255
#define ID_DATA_LONG 254
#define ID_ORIGIN 253
#define ID_TOPLEVEL_XID 252

#define BKP_HAS_IMAGE 0x10u
#define BKP_HAS_DATA 0x20u
#define BKP_WILL_INIT 0x40u
#define BKP_SAME_REL 0x80u
#define BIMG_HAS_HOLE 0x01u
#define BIMG_APPLY 0x02u
#define BIMG_PGLZ 0x04u
#define BIMG_LZ4 0x08u
#define BIMG_ZSTD 0x10u
#define BIMG_COMPRESSED (BIMG_PGLZ | BIMG_LZ4 | BIMG_ZSTD)

#define PAGE_HEADER 24u /* SizeOfPageHeaderData: a hole starts at pd_lower, past it */
#define MAX_FORK 3u     /* MAX_FORKNUM: main, fsm, vm, init */
#define RM_GENERIC 20

/* XR5: the record is refused; d->why says why (the reader adds where). */
static void refuse(struct pn_xlr_decoder *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void refuse(struct pn_xlr_decoder *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->why, sizeof d->why, fmt, ap);
	va_end(ap);
}

/* ---- 1. the cursor over a record's bytes ---------------------------------------------------- */

struct cursor {
	const uint8_t *p;
	uint32_t left;
};

static bool take(struct cursor *c, void *dst, uint32_t n)
{
	PN_ASSERT(dst != NULL && c->p != NULL && n <= 4);
	if (c->left < n)
		return false;
	memcpy(dst, c->p, n);
	c->p += n;
	c->left -= n;
	return true;
}

static bool take8(struct cursor *c, uint8_t *v) { return take(c, v, 1); }

static bool take16(struct cursor *c, uint16_t *v)
{
	uint8_t b[2];
	if (!take(c, b, 2))
		return false;
	*v = pn_get16(b);
	return true;
}

static bool take32(struct cursor *c, uint32_t *v)
{
	uint8_t b[4];
	if (!take(c, b, 4))
		return false;
	*v = pn_get32(b);
	return true;
}

/* ---- 2. the headers: blocks, images, origin, top-level xid, main data -------------------- */

/* An image's hole and lengths against the page (XR5): PostgreSQL's cross-checks, then what
 * its redo (RestoreBlockImage) relies on. True if it fits. */
static bool image_fits(struct pn_xlr_decoder *d, uint8_t id, const struct pn_xlr_block *b)
{
	uint8_t i = b->bimg_info;
	uint32_t hole_end = (uint32_t)b->hole_offset + b->hole_length;

	if ((i & BIMG_HAS_HOLE) &&
	    (b->hole_offset == 0 || b->hole_length == 0 || b->bimg_len == PN_XLR_BLCKSZ))
		refuse(d,
		       "block %u: BKPIMAGE_HAS_HOLE set, but hole offset %u length %u block "
		       "image length %u",
		       id, b->hole_offset, b->hole_length, b->bimg_len);
	else if (!(i & BIMG_HAS_HOLE) && (b->hole_offset != 0 || b->hole_length != 0))
		refuse(d, "block %u: BKPIMAGE_HAS_HOLE not set, but hole offset %u length %u", id,
		       b->hole_offset, b->hole_length);
	else if ((i & BIMG_COMPRESSED) && b->bimg_len == PN_XLR_BLCKSZ)
		refuse(d, "block %u: BKPIMAGE_COMPRESSED set, but block image length %u", id,
		       b->bimg_len);
	else if (!(i & (BIMG_HAS_HOLE | BIMG_COMPRESSED)) && b->bimg_len != PN_XLR_BLCKSZ)
		refuse(d,
		       "block %u: neither BKPIMAGE_HAS_HOLE nor BKPIMAGE_COMPRESSED set, but "
		       "block image length is %u",
		       id, b->bimg_len);
	else if (b->bimg_len > PN_XLR_BLCKSZ)
		refuse(d, "block %u: an image of %u bytes, expected at most a page (%u)", id,
		       b->bimg_len, PN_XLR_BLCKSZ);
	else if ((i & BIMG_HAS_HOLE) && b->hole_offset < PAGE_HEADER)
		refuse(d,
		       "block %u: image hole at offset %u, expected one at or after the "
		       "%u-byte page header (pd_lower)",
		       id, b->hole_offset, PAGE_HEADER);
	else if (hole_end > PN_XLR_BLCKSZ)
		refuse(d,
		       "block %u: image hole at offset %u of %u bytes ends at %u, past the "
		       "%u-byte page",
		       id, b->hole_offset, b->hole_length, hole_end, PN_XLR_BLCKSZ);
	else if ((i & BIMG_COMPRESSED) && b->bimg_len >= PN_XLR_BLCKSZ - b->hole_length)
		refuse(d,
		       "block %u: a compressed image of %u bytes, expected fewer than the %u "
		       "bytes it stands for",
		       id, b->bimg_len, PN_XLR_BLCKSZ - b->hole_length);
	else {
		/* what RestoreBlockImage relies on: the image and its hole within one page */
		PN_ASSERT(b->bimg_len <= PN_XLR_BLCKSZ && hole_end <= PN_XLR_BLCKSZ);
		return true;
	}
	return false;
}

/* Image header fields (the checks are image_fits'); 1 ok, 0 short, -1 refused (d->why). */
static int image_header(struct pn_xlr_decoder *d, struct cursor *c, uint8_t id,
			struct pn_xlr_block *b)
{
	uint8_t i;

	if (!take16(c, &b->bimg_len) || !take16(c, &b->hole_offset) || !take8(c, &b->bimg_info))
		return 0;
	i = b->bimg_info;
	b->apply_image = (i & BIMG_APPLY) != 0;
	b->compress = (i & BIMG_PGLZ)   ? PN_XLR_PGLZ
		      : (i & BIMG_LZ4)  ? PN_XLR_LZ4
		      : (i & BIMG_ZSTD) ? PN_XLR_ZSTD
					: PN_XLR_PLAIN;
	if (i & BIMG_COMPRESSED) {
		b->hole_length = 0;
		if ((i & BIMG_HAS_HOLE) && !take16(c, &b->hole_length))
			return 0;
	} else {
		b->hole_length = (uint16_t)(PN_XLR_BLCKSZ - b->bimg_len);
	}
	return image_fits(d, id, b) ? 1 : -1;
}

/* A block's data against the page (XR5): at most a page, a Generic delta two fragment
 * headers more (generic_xlog.c's MAX_DELTA_SIZE); a fork PostgreSQL has. */
static bool data_fits(struct pn_xlr_decoder *d, uint8_t id, uint8_t rmid,
		      const struct pn_xlr_block *b)
{
	uint32_t max = PN_XLR_BLCKSZ + (rmid == RM_GENERIC ? 8u : 0u);

	if (b->data_len > max)
		refuse(d, "block %u: %u bytes of block data, expected at most %u (a page)", id,
		       b->data_len, max);
	else if (b->fork > MAX_FORK)
		refuse(d, "block %u: fork %u, expected 0..%u (main, fsm, vm, init)", id, b->fork,
		       MAX_FORK);
	else {
		PN_ASSERT(b->data_len <= max && b->fork <= MAX_FORK);
		return true;
	}
	return false;
}

/* One block header with id `id`; 1 ok, 0 short, -1 refused (d->why). */
static int block_header(struct pn_xlr_decoder *d, struct cursor *c, uint8_t id,
			struct pn_xlr_record *out, const struct pn_xlr_block **rel,
			uint64_t *datatotal)
{
	struct pn_xlr_block *b;
	uint8_t ff;
	int rc;

	PN_ASSERT(id <= PN_XLR_MAX_BLOCK_ID); /* headers() refused any other */
	if ((int)id <= out->max_block_id) {
		refuse(d, "out-of-order block_id %u, expected one above %d", id, out->max_block_id);
		return -1;
	}
	out->max_block_id = id;
	b = &out->blocks[id];
	PN_ASSERT(!b->in_use); /* ids rise strictly: each block once */
	b->in_use = true;
	if (!take8(c, &ff) || !take16(c, &b->data_len))
		return 0;
	b->flags = ff;
	b->fork = ff & PN_BKP_FORK_MASK;
	b->has_image = (ff & BKP_HAS_IMAGE) != 0;
	b->will_init = (ff & BKP_WILL_INIT) != 0;
	if ((ff & BKP_HAS_DATA) && b->data_len == 0) {
		refuse(d, "block %u: BKPBLOCK_HAS_DATA set, but no data included", id);
		return -1;
	}
	if (!(ff & BKP_HAS_DATA) && b->data_len != 0) {
		refuse(d, "block %u: BKPBLOCK_HAS_DATA not set, but data length is %u", id,
		       (unsigned)b->data_len);
		return -1;
	}
	if (!data_fits(d, id, out->rmid, b))
		return -1;
	*datatotal += b->data_len;
	if (b->has_image) {
		if ((rc = image_header(d, c, id, b)) <= 0)
			return rc;
		*datatotal += b->bimg_len;
		out->fpi_len += b->bimg_len;
	}
	if (!(ff & BKP_SAME_REL)) {
		if (!take32(c, &b->spc) || !take32(c, &b->db) || !take32(c, &b->rel))
			return 0;
		*rel = b;
	} else if (!*rel) {
		refuse(d, "block %u: BKPBLOCK_SAME_REL set but no previous rel", id);
		return -1;
	} else {
		b->spc = (*rel)->spc;
		b->db = (*rel)->db;
		b->rel = (*rel)->rel;
	}
	return take32(c, &b->blkno) ? 1 : 0;
}

/* ---- 3. what a compressed image decompresses to (XR5), measured, never written ----------- */

/* pglz (pg_lzcompress.c): a control byte, then 8 items, each a literal byte (bit 0) or a
 * 2-byte tag (bit 1: length 3..18 in the low nibble + 3, offset 12 bits; length 18 takes
 * one more byte); decompressed with check_complete, as RestoreBlockImage does: the output
 * ends exactly where the input does. The output length; -1 if corrupt. */
static int64_t pglz_size(const uint8_t *p, uint32_t n, uint32_t cap)
{
	uint32_t sp = 0, dp = 0;

	while (sp < n && dp < cap) {
		uint8_t ctrl = p[sp++];
		for (int k = 0; k < 8 && sp < n && dp < cap; k++, ctrl >>= 1) {
			uint32_t len, off;
			if (!(ctrl & 1)) {
				sp++, dp++;
				continue;
			}
			if (n - sp < 2)
				return -1;
			len = (p[sp] & 0x0Fu) + 3u;
			off = (uint32_t)(p[sp] & 0xF0u) << 4 | p[sp + 1];
			sp += 2;
			if (len == 18 && sp == n)
				return -1; /* the extra length byte is missing */
			if (len == 18)
				len += p[sp++];
			if (off == 0 || off > dp)
				return -1;
			dp += PN_MIN(len, cap - dp);
		}
	}
	return sp == n ? (int64_t)dp : -1;
}

/* An lz4 block, decompressed by liblz4 into the reader's page buffer as RestoreBlockImage
 * does (LZ4_decompress_safe, at most cap bytes): the output length; -1 if corrupt. */
static int64_t lz4_size(struct pn_xlr_decoder *d, const uint8_t *p, uint32_t n, uint32_t cap)
{
	PN_ASSERT(cap <= sizeof d->image && n <= INT32_MAX);
	int got = LZ4_decompress_safe((const char *)p, (char *)d->image, (int)n, (int)cap);
	return got > 0 ? (int64_t)got : -1;
}

/* A zstd frame, by libzstd: the content size its header gives, when it gives one that is not
 * cap (the size is refused before any decoding), else the frame decompressed into the
 * reader's page buffer as RestoreBlockImage does (ZSTD_decompress, at most cap bytes): the
 * output length; -1 if it is no zstd frame or does not decompress. */
static int64_t zstd_size(struct pn_xlr_decoder *d, const uint8_t *p, uint32_t n, uint32_t cap)
{
	unsigned long long declared = ZSTD_getFrameContentSize(p, n);
	size_t got;

	PN_ASSERT(cap <= sizeof d->image);
	if (declared == ZSTD_CONTENTSIZE_ERROR)
		return -1;
	if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != cap)
		return declared > INT64_MAX ? -1 : (int64_t)declared;
	got = ZSTD_decompress(d->image, cap, p, n);
	return ZSTD_isError(got) ? -1 : (int64_t)got;
}

/* Each compressed image of a decoded record must yield BLCKSZ - hole_length bytes (what
 * RestoreBlockImage asks of its decompressor); data: the block data region (images and
 * data in block order). */
static bool images_fit(struct pn_xlr_decoder *d, const struct pn_xlr_record *rec,
		       const uint8_t *data)
{
	static const char *const names[] = {"", "pglz", "lz4", "zstd"};

	for (int id = 0; id <= rec->max_block_id; id++) {
		const struct pn_xlr_block *b = &rec->blocks[id];
		uint32_t want = PN_XLR_BLCKSZ - b->hole_length;
		int64_t got;
		if (!b->in_use)
			continue;
		PN_ASSERT(!b->has_image || b->hole_length <= PN_XLR_BLCKSZ); /* image_fits */
		if (b->has_image && b->compress != PN_XLR_PLAIN) {
			got = b->compress == PN_XLR_PGLZ  ? pglz_size(data, b->bimg_len, want)
			      : b->compress == PN_XLR_LZ4 ? lz4_size(d, data, b->bimg_len, want)
							  : zstd_size(d, data, b->bimg_len, want);
			if (got == -1) {
				refuse(d,
				       "block %u: a %s image that does not decompress, "
				       "expected %u bytes from its %u",
				       (unsigned)id, names[b->compress], want, b->bimg_len);
				return false;
			}
			if (got >= 0 && got != (int64_t)want) {
				refuse(d,
				       "block %u: a %s image of %lld bytes decompressed, "
				       "expected %u (BLCKSZ - hole length)",
				       (unsigned)id, names[b->compress], (long long)got, want);
				return false;
			}
		}
		data += (b->has_image ? b->bimg_len : 0u) + b->data_len;
	}
	return true;
}

static int headers(struct pn_xlr_decoder *d, struct cursor *c, struct pn_xlr_record *out,
		   uint64_t *datatotal)
{
	const struct pn_xlr_block *rel = NULL;
	uint8_t id;
	int rc;

	while (c->left > *datatotal) {
		if (!take8(c, &id))
			return 0;
		if (id == ID_DATA_SHORT || id == ID_DATA_LONG) {
			uint8_t s = 0;
			if (id == ID_DATA_SHORT ? !take8(c, &s) : !take32(c, &out->main_len))
				return 0;
			if (id == ID_DATA_SHORT)
				out->main_len = s;
			*datatotal += out->main_len;
			return 1; /* the main data header is always last */
		} else if (id == ID_ORIGIN) {
			out->has_origin = true;
			if (!take16(c, &out->origin))
				return 0;
		} else if (id == ID_TOPLEVEL_XID) {
			if (!take32(c, &out->toplevel_xid))
				return 0;
		} else if (id <= PN_XLR_MAX_BLOCK_ID) {
			if ((rc = block_header(d, c, id, out, &rel, datatotal)) <= 0)
				return rc;
		} else {
			refuse(d, "invalid block_id %u, expected 0..%u, 252, 253, 254 or 255", id,
			       PN_XLR_MAX_BLOCK_ID);
			return -1;
		}
	}
	return 1;
}

/* ---- 4. the record ------------------------------------------------------------------------- */

bool pn_xlr_decode(struct pn_xlr_decoder *d, pn_lsn at, const uint8_t *buf, uint32_t len,
		   struct pn_xlr_record *out)
{
	struct cursor c = {buf + REC_HDR, len - REC_HDR};
	uint64_t datatotal = 0;
	int rc;

	PN_ASSERT(len >= REC_HDR && pn_get32(buf) == len); /* a whole record, its CRC checked */
	memset(out, 0, sizeof *out);
	out->start = at;
	out->tot_len = len;
	out->xid = pn_get32(buf + 4);
	out->prev = pn_get64(buf + 8);
	out->info = buf[16];
	out->rmid = buf[17];
	out->max_block_id = -1;
	rc = headers(d, &c, out, &datatotal);
	if (rc < 0)
		return false;
	if (rc == 0) {
		refuse(d, "record with invalid length: its headers run past its %u bytes", len);
		return false;
	}
	if (c.left != datatotal) {
		refuse(d,
		       "record with invalid length: its headers announce %" PRIu64
		       " bytes of data, it holds %u",
		       datatotal, c.left);
		return false;
	}
	/* the data regions fill the record's rest exactly: the main data ends the record */
	PN_ASSERT(out->main_len <= c.left && c.p + c.left == buf + len);
	out->main_data = buf + len - out->main_len;
	return images_fit(d, out, c.p);
}
