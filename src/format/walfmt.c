/*
 * walfmt.c: the WAL's bytes, as PostgreSQL 15 lays them out (xlogrecord.h, xlog_internal.h,
 * xlogreader.c; docs/postgres-facts.md sections 2, 3 and 8). Format layer, pure: it allocates
 * nothing; the reader of these bytes is walread.c's. All integers are little-endian. Nothing inside a record is aligned; only a record's start is (MAXALIGN 8).
 *
 * 1. A record (xl_tot_len bytes):
 *
 *      offset size field
 *      0      4    xl_tot_len     the whole record, header included, images without holes
 *      4      4    xl_xid
 *      8      8    xl_prev        start LSN of the previous record
 *      16     1    xl_info
 *      17     1    xl_rmid        <= PN_RM_MAX
 *      18     2    padding        zero
 *      20     4    xl_crc         CRC-32C over bytes [24, xl_tot_len), then over [0, 20)
 *      24     ...  per block i = 0 .. nblocks-1, in order:
 *                    1  id = i
 *                    1  fork_flags  fork (low 3 bits) | SLOT_SHIFT 0x08 | HAS_IMAGE 0x10 |
 *                                   HAS_DATA 0x20 | WILL_INIT 0x40 | SAME_REL 0x80
 *                    2  data_length  block data bytes (HAS_DATA iff > 0)
 *                    if HAS_IMAGE:   2 length (page_size - hole_length), 2 hole_offset
 *                                    (0 without a hole), 1 bimg_info (HAS_HOLE 0x01,
 *                                    APPLY 0x02)
 *                    if SLOT_SHIFT:  1 source, 1 target
 *                    unless SAME_REL (block 0 only): 12 RelFileLocator 1663 / 5 / 16384
 *                    4  BlockNumber
 *             ...  main-data header: none if main_len == 0; {255, u8 len} if main_len <= 255;
 *                  else {254, u32 len}
 *             ...  payloads: per block in order its image minus the hole, then its data;
 *                  then the main data.
 *
 *    So xl_tot_len = 24 + sum over blocks of (4 + [5 + image bytes] + [2] + [12] + 4 +
 *    data_len) + main-data header + main_len, as postgres-facts.md section 2 states.
 *
 * 2. A WAL page (PN_XLOG_BLCKSZ = 8192 bytes) starts with its header:
 *
 *      offset size field
 *      0      2    xlp_magic      0xD110
 *      2      2    xlp_info       FIRST_IS_CONTRECORD 0x0001 if the page opens with the
 *                                 continuation of a record; LONG_HEADER 0x0002 on the first
 *                                 page of a segment (and only there)
 *      4      4    xlp_tli        1
 *      8      8    xlp_pageaddr   LSN of the page's first byte
 *      16     4    xlp_rem_len    bytes of the continued record still to come, 0 if none
 *      20     4    padding        zero: the short header is MAXALIGN(20) = 24 bytes
 *    long header (segment start), 40 bytes:
 *      24     8    xlp_sysid
 *      32     4    xlp_seg_size
 *      36     4    xlp_xlog_blcksz 8192
 *
 * 3. Positions. An LSN counts every byte of the WAL, page headers included. A "byte position"
 *    counts only usable bytes: 8168 per page, 8152 on a segment's first page. Records are
 *    reserved MAXALIGN(xl_tot_len) usable bytes; their starts are 8-aligned in both spaces
 *    (8168 and 8152 are multiples of 8). A byte position exactly at a page start maps to
 *    just after that page's header as a start (bytepos_to_recptr) and to the page boundary
 *    itself as an end (bytepos_to_endrecptr).
 *
 * Invariants:
 *   WF1. encode(r) is exactly pn_wal_record_size(r) bytes; decode(encode(r)) == r with holes
 *       zero-filled.
 *   WF2. recptr_to_bytepos(bytepos_to_recptr(b)) == b == recptr_to_bytepos(
 *       bytepos_to_endrecptr(b)).
 *   WF3. pn_wal_copy_record() writes the header of every page it enters and zeroes the rest
 *       of that page past the record (as AdvanceXLInsertBuffer does, which zeroes it all
 *       first), so records are copied in LSN order; on a page an earlier record entered it
 *       zeroes the MAXALIGN padding after the record (the rest is zero already).
 *
 * Not modelled (the engine never writes them; decode rejects them): compressed images,
 * origin and top-level-xid headers, gaps in block ids, XLOG_SWITCH's jump to the segment
 * end (a switch record reads as an ordinary 24-byte record).
 */
#include "walfmt.h"

#include "crc32c.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define BLCKSZ PN_XLOG_BLCKSZ
#define USABLE_PER_PAGE (PN_XLOG_BLCKSZ - PN_WAL_SHORT_PHD) /* 8168 */
#define LONG_PHD_EXTRA (PN_WAL_LONG_PHD - PN_WAL_SHORT_PHD) /* 16 */
#define XLP_ALL_FLAGS 0x000Fu /* PostgreSQL 15 defines four page-header flags */
#define TIMELINE 1u
#define CRC_COVERED_HEADER 20u /* offsetof(XLogRecord, xl_crc) */
#define ID_DATA_SHORT 255u
#define ID_DATA_LONG 254u
#define REL_LOCATOR_BYTES 12u
#define REL_SPC 1663u
#define REL_DB 5u
#define REL_NUMBER 16384u
#define BLOCK_HEADER_BYTES 4u
#define IMAGE_HEADER_BYTES 5u
#define SHIFT_HEADER_BYTES 2u
#define BLOCK_NUMBER_BYTES 4u

#define LSN_FMT "%X/%08X"
#define LSN_ARGS(lsn) (unsigned)((lsn) >> 32), (unsigned)(lsn)

/* ---- record size and encoding ---------------------------------------------------------- */

static void check_block(const struct pn_wal_block *b, uint32_t page_size)
{
	PN_ASSERT(b->fork <= PN_BKP_FORK_MASK);
	PN_ASSERT(b->data_len == 0 || b->data != NULL);
	PN_ASSERT(b->ext_len <= PN_WAL_BLOCK_EXT_MAX && (b->ext_len == 0 || b->has_shift));
	PN_ASSERT(!(b->shift_target & PN_WAL_SHIFT_HAS_EXT));
	if (!b->has_image)
		return;
	PN_ASSERT(b->image != NULL);
	PN_ASSERT(page_size <= UINT16_MAX);
	PN_ASSERT(b->hole_length < page_size);
	PN_ASSERT((uint32_t)b->hole_offset + b->hole_length <= page_size);
	PN_ASSERT(b->hole_length == 0 || b->hole_offset > 0);
}

static uint32_t main_header_bytes(uint32_t main_len)
{
	return main_len == 0 ? 0 : main_len <= 255 ? 2 : 5;
}

static uint32_t block_header_bytes(const struct pn_wal_block *b, unsigned i)
{
	return BLOCK_HEADER_BYTES + (b->has_image ? IMAGE_HEADER_BYTES : 0) +
	       (b->has_shift ? SHIFT_HEADER_BYTES : 0) + (b->ext_len ? 1u + b->ext_len : 0) +
	       (i == 0 ? REL_LOCATOR_BYTES : 0) + BLOCK_NUMBER_BYTES;
}

static uint32_t image_bytes(const struct pn_wal_block *b, uint32_t page_size)
{
	return b->has_image ? page_size - b->hole_length : 0;
}

uint32_t pn_wal_record_size(const struct pn_wal_record *r, uint32_t page_size)
{
	uint64_t size = PN_WAL_RECORD_HEADER;

	PN_ASSERT(r->nblocks <= PN_WAL_MAX_BLOCKS);
	PN_ASSERT(r->main_len == 0 || r->main_data != NULL);
	for (unsigned i = 0; i < r->nblocks; i++) {
		const struct pn_wal_block *b = &r->blocks[i];
		check_block(b, page_size);
		size += block_header_bytes(b, i) + b->data_len + image_bytes(b, page_size);
	}
	size += main_header_bytes(r->main_len) + (uint64_t)r->main_len;
	PN_ASSERT(size <= UINT32_MAX);
	return (uint32_t)size;
}

uint32_t pn_wal_record_fpi_bytes(const struct pn_wal_record *r, uint32_t page_size)
{
	uint32_t bytes = 0;

	for (unsigned i = 0; i < r->nblocks; i++)
		bytes += image_bytes(&r->blocks[i], page_size);
	return bytes;
}

static uint8_t *put_block_header(uint8_t *p, const struct pn_wal_block *b, unsigned i,
				 uint32_t page_size)
{
	uint8_t flags = b->fork;

	flags |= b->has_shift ? PN_BKP_HAS_SLOT_SHIFT : 0;
	flags |= b->has_image ? PN_BKP_HAS_IMAGE : 0;
	flags |= b->data_len > 0 ? PN_BKP_HAS_DATA : 0;
	flags |= b->will_init ? PN_BKP_WILL_INIT : 0;
	flags |= i > 0 ? PN_BKP_SAME_REL : 0;
	p[0] = (uint8_t)i;
	p[1] = flags;
	pn_put16(p + 2, b->data_len);
	p += BLOCK_HEADER_BYTES;
	if (b->has_image) {
		bool hole = b->hole_length > 0;
		pn_put16(p, (uint16_t)(page_size - b->hole_length));
		pn_put16(p + 2, hole ? b->hole_offset : 0);
		p[4] = (uint8_t)((hole ? PN_BKPIMAGE_HAS_HOLE : 0) |
				 (b->image_apply ? PN_BKPIMAGE_APPLY : 0));
		p += IMAGE_HEADER_BYTES;
	}
	if (b->has_shift) {
		p[0] = b->shift_source;
		p[1] = b->shift_target | (b->ext_len ? PN_WAL_SHIFT_HAS_EXT : 0);
		p += SHIFT_HEADER_BYTES;
	}
	if (b->ext_len) {
		p[0] = b->ext_len;
		memcpy(p + 1, b->ext, b->ext_len);
		p += 1u + b->ext_len;
	}
	if (i == 0) {
		pn_put32(p, REL_SPC);
		pn_put32(p + 4, REL_DB);
		pn_put32(p + 8, REL_NUMBER);
		p += REL_LOCATOR_BYTES;
	}
	pn_put32(p, b->blkno);
	return p + BLOCK_NUMBER_BYTES;
}

static uint8_t *put_main_header(uint8_t *p, uint32_t main_len)
{
	if (main_len == 0)
		return p;
	if (main_len <= 255) {
		p[0] = ID_DATA_SHORT;
		p[1] = (uint8_t)main_len;
		return p + 2;
	}
	p[0] = ID_DATA_LONG;
	pn_put32(p + 1, main_len);
	return p + 5;
}

/* The image without its hole, then the block data (DecodeXLogRecord's order). */
static uint8_t *put_block_payload(uint8_t *p, const struct pn_wal_block *b, uint32_t page_size)
{
	if (b->has_image) {
		uint32_t before = b->hole_length > 0 ? b->hole_offset : page_size;
		uint32_t after = b->hole_length > 0 ? before + b->hole_length : page_size;
		memcpy(p, b->image, before);
		p += before;
		memcpy(p, b->image + after, page_size - after);
		p += page_size - after;
	}
	if (b->data_len > 0) {
		memcpy(p, b->data, b->data_len);
		p += b->data_len;
	}
	return p;
}

uint32_t pn_wal_record_crc(const uint8_t *rec, uint32_t tot_len)
{
	uint32_t crc = pn_crc32c_init();

	crc = pn_crc32c_update(crc, rec + PN_WAL_RECORD_HEADER, tot_len - PN_WAL_RECORD_HEADER);
	crc = pn_crc32c_update(crc, rec, CRC_COVERED_HEADER);
	return pn_crc32c_final(crc);
}

/* The size is where the bytes end (WF1: the size formula's terms, placed in order). */
uint32_t pn_wal_record_encode(const struct pn_wal_record *r, uint32_t page_size, uint8_t *out)
{
	uint8_t *p = out + PN_WAL_RECORD_HEADER;

	PN_ASSERT(r->nblocks <= PN_WAL_MAX_BLOCKS);
	PN_ASSERT(r->main_len == 0 || r->main_data != NULL);
	for (unsigned i = 0; i < r->nblocks; i++) {
		check_block(&r->blocks[i], page_size);
		p = put_block_header(p, &r->blocks[i], i, page_size);
	}
	p = put_main_header(p, r->main_len);
	for (unsigned i = 0; i < r->nblocks; i++)
		p = put_block_payload(p, &r->blocks[i], page_size);
	if (r->main_len > 0) {
		memcpy(p, r->main_data, r->main_len);
		p += r->main_len;
	}
	PN_ASSERT(p - out <= (ptrdiff_t)UINT32_MAX);
	uint32_t tot_len = (uint32_t)(p - out);

	pn_put32(out, tot_len);
	pn_put32(out + 4, r->xid);
	pn_put64(out + 8, r->prev);
	out[16] = r->info;
	out[17] = r->rmid;
	out[18] = 0;
	out[19] = 0;
	pn_put32(out + 20, pn_wal_record_crc(out, tot_len));
	return tot_len;
}

/* ---- record decoding ------------------------------------------------------------------- */

struct decoder {
	struct pn_wal_record *out;
	uint32_t page_size;
	uint8_t *image_buf;
	const uint8_t *p;   /* cursor */
	uint32_t left;      /* bytes after the cursor */
	uint64_t datatotal; /* payload bytes the headers parsed so far announce */
	uint16_t bimg_len[PN_WAL_MAX_BLOCKS];
	char *why;
	size_t why_len;
};

__attribute__((format(printf, 2, 3))) static bool reject(struct decoder *d, const char *fmt, ...)
{
	if (d->why != NULL && d->why_len > 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(d->why, d->why_len, fmt, ap);
		va_end(ap);
	}
	return false;
}

/* Takes n header bytes; NULL (and a reason) if the record ends first. */
static const uint8_t *take(struct decoder *d, uint32_t n)
{
	const uint8_t *p = d->p;

	if (d->left < n) {
		reject(d, "record with invalid length");
		return NULL;
	}
	d->p += n;
	d->left -= n;
	return p;
}

static bool parse_image_header(struct decoder *d, struct pn_wal_block *b, unsigned id)
{
	const uint8_t *h = take(d, IMAGE_HEADER_BYTES);
	if (h == NULL)
		return false;
	uint32_t len = pn_get16(h), hole_offset = pn_get16(h + 2), info = h[4];

	if ((info & ~(uint32_t)(PN_BKPIMAGE_HAS_HOLE | PN_BKPIMAGE_APPLY)) != 0)
		return reject(d, "unsupported bimg_info %02X (compressed image)", info);
	if (len > d->page_size)
		return reject(d, "block image length %u exceeds the page size %u", len,
			      d->page_size);
	uint32_t hole_length = d->page_size - len;
	if (info & PN_BKPIMAGE_HAS_HOLE) {
		if (hole_offset == 0 || hole_length == 0)
			return reject(d,
				      "BKPIMAGE_HAS_HOLE set, but hole offset %u length %u "
				      "block image length %u",
				      hole_offset, hole_length, len);
		if (hole_offset + hole_length > d->page_size)
			return reject(d, "hole offset %u length %u beyond the page", hole_offset,
				      hole_length);
	} else if (hole_offset != 0 || hole_length != 0) {
		return reject(d, "BKPIMAGE_HAS_HOLE not set, but hole offset %u length %u",
			      hole_offset, hole_length);
	}
	b->image_apply = (info & PN_BKPIMAGE_APPLY) != 0;
	b->hole_offset = (uint16_t)hole_offset;
	b->hole_length = (uint16_t)hole_length;
	d->bimg_len[id] = (uint16_t)len;
	d->datatotal += len;
	return true;
}

static bool parse_block_header(struct decoder *d, unsigned id)
{
	struct pn_wal_block *b = &d->out->blocks[id];
	const uint8_t *h = take(d, BLOCK_HEADER_BYTES - 1); /* the id is already taken */
	if (h == NULL)
		return false;
	uint8_t flags = h[0];
	uint16_t data_len = pn_get16(h + 1);

	b->fork = flags & PN_BKP_FORK_MASK;
	b->has_shift = (flags & PN_BKP_HAS_SLOT_SHIFT) != 0;
	b->has_image = (flags & PN_BKP_HAS_IMAGE) != 0;
	b->will_init = (flags & PN_BKP_WILL_INIT) != 0;
	if ((flags & PN_BKP_HAS_DATA) && data_len == 0)
		return reject(d, "BKPBLOCK_HAS_DATA set, but no data included");
	if (!(flags & PN_BKP_HAS_DATA) && data_len != 0)
		return reject(d, "BKPBLOCK_HAS_DATA not set, but data length is %u", data_len);
	b->data_len = data_len;
	d->datatotal += data_len;
	if (b->has_image && !parse_image_header(d, b, id))
		return false;
	if (b->has_shift) {
		if ((h = take(d, SHIFT_HEADER_BYTES)) == NULL)
			return false;
		b->shift_source = h[0];
		b->shift_target = h[1] & (uint8_t)~PN_WAL_SHIFT_HAS_EXT;
	}
	b->ext_len = 0;
	if (b->has_shift && (h[1] & PN_WAL_SHIFT_HAS_EXT)) {
		if ((h = take(d, 1)) == NULL)
			return false;
		if (h[0] == 0 || h[0] > PN_WAL_BLOCK_EXT_MAX)
			return reject(d, "block header extension of %u bytes", h[0]);
		b->ext_len = h[0];
		if ((h = take(d, b->ext_len)) == NULL)
			return false;
		memcpy(b->ext, h, b->ext_len);
	}
	if (!(flags & PN_BKP_SAME_REL)) {
		if (take(d, REL_LOCATOR_BYTES) == NULL)
			return false;
	} else if (id == 0) {
		return reject(d, "BKPBLOCK_SAME_REL set but no previous rel");
	}
	if ((h = take(d, BLOCK_NUMBER_BYTES)) == NULL)
		return false;
	b->blkno = pn_get32(h);
	return true;
}

/* Block headers up to the main-data header (always last) or the payloads' start. */
static bool parse_headers(struct decoder *d)
{
	struct pn_wal_record *out = d->out;

	while (d->left > d->datatotal) {
		const uint8_t *h = take(d, 1);
		unsigned id = h[0];
		if (id == ID_DATA_SHORT || id == ID_DATA_LONG) {
			uint32_t n = id == ID_DATA_SHORT ? 1 : 4;
			if ((h = take(d, n)) == NULL)
				return false;
			out->main_len = n == 1 ? h[0] : pn_get32(h);
			d->datatotal += out->main_len;
			break;
		}
		if (id >= PN_WAL_MAX_BLOCKS)
			return reject(d, "invalid block_id %u", id);
		if (id != out->nblocks)
			return reject(d, "out-of-order block_id %u", id);
		if (!parse_block_header(d, id))
			return false;
		out->nblocks++;
	}
	if (d->left != d->datatotal)
		return reject(d, "record with invalid length");
	return true;
}

/* Rebuilds a page from its hole-free image: the hole reads as zeros. */
static void restore_image(uint8_t *page, const uint8_t *img, const struct pn_wal_block *b,
			  uint32_t page_size)
{
	uint32_t before = b->hole_length > 0 ? b->hole_offset : page_size;
	uint32_t after = before + b->hole_length;

	memcpy(page, img, before);
	memset(page + before, 0, b->hole_length);
	memcpy(page + after, img + before, page_size - after);
}

static void parse_payloads(struct decoder *d)
{
	struct pn_wal_record *out = d->out;

	for (unsigned i = 0; i < out->nblocks; i++) {
		struct pn_wal_block *b = &out->blocks[i];
		if (b->has_image) {
			uint8_t *page = d->image_buf + (size_t)i * d->page_size;
			restore_image(page, d->p, b, d->page_size);
			b->image = page;
			d->p += d->bimg_len[i];
		}
		if (b->data_len > 0) {
			b->data = d->p;
			d->p += b->data_len;
		}
	}
	if (out->main_len > 0) {
		out->main_data = d->p;
		d->p += out->main_len;
	}
}

/* Both decoders: crc, whether to check the record's CRC. */
static bool decode(const uint8_t *buf, uint32_t len, uint32_t page_size, uint8_t *image_buf,
		   struct pn_wal_record *out, char *why, size_t why_len, bool crc)
{
	struct decoder d = {
		.out = out,
		.page_size = page_size,
		.image_buf = image_buf,
		.why = why,
		.why_len = why_len,
	};

	memset(out, 0, sizeof(*out));
	if (len < PN_WAL_RECORD_HEADER || pn_get32(buf) != len)
		return reject(&d, "record with invalid length");
	if (crc && pn_get32(buf + 20) != pn_wal_record_crc(buf, len))
		return reject(&d, "incorrect resource manager data checksum in record");
	out->xid = pn_get32(buf + 4);
	out->prev = pn_get64(buf + 8);
	out->info = buf[16];
	out->rmid = buf[17];
	d.p = buf + PN_WAL_RECORD_HEADER;
	d.left = len - PN_WAL_RECORD_HEADER;
	if (!parse_headers(&d))
		return false;
	parse_payloads(&d);
	PN_ASSERT(d.p == buf + len);
	return true;
}

bool pn_wal_record_decode(const uint8_t *buf, uint32_t len, uint32_t page_size, uint8_t *image_buf,
			  struct pn_wal_record *out, char *why, size_t why_len)
{
	return decode(buf, len, page_size, image_buf, out, why, why_len, true);
}

bool pn_wal_record_decode_checked(const uint8_t *buf, uint32_t len, uint32_t page_size,
				  uint8_t *image_buf, struct pn_wal_record *out, char *why,
				  size_t why_len)
{
	return decode(buf, len, page_size, image_buf, out, why, why_len, false);
}

/* ---- position arithmetic --------------------------------------------------------------- */

static void check_seg_size(uint32_t seg_size)
{
	PN_ASSERT(seg_size >= BLCKSZ && (seg_size & (seg_size - 1)) == 0);
}

static uint64_t usable_per_segment(uint32_t seg_size)
{
	return (uint64_t)(seg_size / BLCKSZ) * USABLE_PER_PAGE - LONG_PHD_EXTRA;
}

/*
 * Both directions pretend the segment's first page had a short header too: shifting a
 * segment's usable bytes by LONG_PHD_EXTRA makes every page hold USABLE_PER_PAGE of them.
 */
pn_lsn pn_wal_bytepos_to_recptr(uint64_t bytepos, uint32_t seg_size)
{
	check_seg_size(seg_size);
	uint64_t per_seg = usable_per_segment(seg_size);
	uint64_t in_seg = bytepos % per_seg + LONG_PHD_EXTRA;

	return bytepos / per_seg * seg_size + in_seg / USABLE_PER_PAGE * BLCKSZ + PN_WAL_SHORT_PHD +
	       in_seg % USABLE_PER_PAGE;
}

pn_lsn pn_wal_bytepos_to_endrecptr(uint64_t bytepos, uint32_t seg_size)
{
	check_seg_size(seg_size);
	uint64_t per_seg = usable_per_segment(seg_size);
	uint64_t seg_start = bytepos / per_seg * seg_size;
	uint64_t in_seg = bytepos % per_seg + LONG_PHD_EXTRA;

	if (in_seg == LONG_PHD_EXTRA)
		return seg_start; /* the end of a segment's last page */
	if (in_seg % USABLE_PER_PAGE == 0)
		return seg_start + in_seg / USABLE_PER_PAGE * BLCKSZ; /* a page boundary */
	return seg_start + in_seg / USABLE_PER_PAGE * BLCKSZ + PN_WAL_SHORT_PHD +
	       in_seg % USABLE_PER_PAGE;
}

uint64_t pn_wal_recptr_to_bytepos(pn_lsn lsn, uint32_t seg_size)
{
	check_seg_size(seg_size);
	uint64_t seg_base = lsn / seg_size * usable_per_segment(seg_size);
	uint32_t page = (uint32_t)(lsn % seg_size / BLCKSZ);
	uint32_t in_page = (uint32_t)(lsn % BLCKSZ);

	if (in_page == 0)
		return seg_base +
		       (page == 0 ? 0 : (uint64_t)page * USABLE_PER_PAGE - LONG_PHD_EXTRA);
	PN_ASSERT(in_page >= (page == 0 ? PN_WAL_LONG_PHD : PN_WAL_SHORT_PHD));
	return seg_base + (uint64_t)page * USABLE_PER_PAGE + (in_page - PN_WAL_SHORT_PHD) -
	       LONG_PHD_EXTRA;
}

uint32_t pn_wal_page_header_size(pn_lsn page_addr, uint32_t seg_size)
{
	return page_addr % seg_size < BLCKSZ ? PN_WAL_LONG_PHD : PN_WAL_SHORT_PHD;
}

/* Page by page: a position that fills its page to the end is that page's boundary as an end
 * and the next page's first usable byte as a start (section 3). seg_size is a power of two. */
void pn_wal_lsn_advance(pn_lsn start, uint64_t bytes, uint32_t seg_size, pn_lsn *end, pn_lsn *next)
{
	pn_lsn at = start;
	uint64_t left = bytes;

	PN_ASSERT(at % BLCKSZ != 0);
	PN_ASSERT(bytes > 0); /* none: a start at a page's first byte would also be its end */
	for (;;) {
		uint32_t room = BLCKSZ - (uint32_t)(at % BLCKSZ);
		if (left < room) {
			*end = *next = at + left;
			return;
		}
		left -= room;
		pn_lsn page = at + room;
		uint32_t hdr = (page & (seg_size - 1)) == 0 ? PN_WAL_LONG_PHD : PN_WAL_SHORT_PHD;
		if (left == 0) {
			*end = page;
			*next = page + hdr;
			return;
		}
		at = page + hdr;
	}
}

/* ---- writing pages --------------------------------------------------------------------- */

static void put_page_header(uint8_t *page, pn_lsn page_addr, uint32_t seg_size, uint64_t sysid,
			    uint16_t info, uint32_t rem_len)
{
	bool is_long = page_addr % seg_size == 0;

	PN_ASSERT(page_addr % BLCKSZ == 0);
	if (is_long)
		info |= PN_XLP_LONG_HEADER;
	pn_put16(page, PN_WAL_PAGE_MAGIC);
	pn_put16(page + 2, info);
	pn_put32(page + 4, TIMELINE);
	pn_put64(page + 8, page_addr);
	pn_put32(page + 16, rem_len);
	pn_put32(page + 20, 0);
	if (is_long) {
		pn_put64(page + 24, sysid);
		pn_put32(page + 32, seg_size);
		pn_put32(page + 36, BLCKSZ);
	}
}

/* A page the WAL enters: its header (invariant WF3: the caller zeroes what follows the record
 * it places there). Returns the header size. */
static uint32_t begin_page(uint8_t *page, pn_lsn page_addr, uint32_t seg_size, uint64_t sysid,
			   uint16_t info, uint32_t rem_len)
{
	put_page_header(page, page_addr, seg_size, sysid, info, rem_len);
	return pn_wal_page_header_size(page_addr, seg_size);
}

void pn_wal_page_init(uint8_t *page, pn_lsn page_addr, uint32_t seg_size, uint64_t sysid)
{
	check_seg_size(seg_size);
	uint32_t hdr = begin_page(page, page_addr, seg_size, sysid, 0, 0);
	memset(page + hdr, 0, BLCKSZ - hdr);
}

void pn_wal_copy_record(const uint8_t *rec, uint32_t len, pn_lsn start, uint32_t seg_size,
			uint64_t sysid, pn_wal_page_fn page_fn, void *arg)
{
	pn_lsn page_addr = start - start % BLCKSZ;
	uint32_t off = (uint32_t)(start % BLCKSZ);
	uint8_t *page = page_fn(arg, page_addr);
	uint32_t done = 0;

	check_seg_size(seg_size);
	PN_ASSERT(len >= PN_WAL_RECORD_HEADER && start % 8 == 0);
	PN_ASSERT(off >= pn_wal_page_header_size(page_addr, seg_size));
	PN_ASSERT(page != NULL);
	/* begun: this call entered the page, so its bytes past the record are not yet zero */
	bool begun = off == pn_wal_page_header_size(page_addr, seg_size);
	if (begun)
		begin_page(page, page_addr, seg_size, sysid, 0, 0);
	for (;;) {
		uint32_t n = PN_MIN(BLCKSZ - off, len - done);
		memcpy(page + off, rec + done, n);
		done += n;
		off += n;
		PN_TESTCASE("wal record continues on the next page", done < len);
		if (done == len)
			break;
		page_addr += BLCKSZ;
		PN_TESTCASE("wal record continues into the next segment",
			    page_addr % seg_size == 0);
		page = page_fn(arg, page_addr);
		PN_ASSERT(page != NULL);
		off = begin_page(page, page_addr, seg_size, sysid, PN_XLP_FIRST_IS_CONTRECORD,
				 len - done);
		begun = true;
	}
	/* WF3: a page entered here is zero past the record; on a page an earlier record entered,
	 * that is already so past the MAXALIGN padding */
	memset(page + off, 0, (begun ? BLCKSZ : PN_ALIGN8(off)) - off);
}
