/*
 * walgen.c: writes a small PostgreSQL 15 WAL segment with one chosen corrupt record whose
 * CRC is right (tests/import_bad.sh; the cases are tests/bad/import/cases), or one of a
 * record type a version has (tests/import_versions.sh). Test helper, not installed.
 *
 * Usage: walgen DIR CASE [VERSION]
 *
 * Writes DIR/000000010000000000000001 (1 MiB, segment size 1 MiB, LSN 0/100000 on): an
 * online checkpoint whose redo point is its own LSN, a heap insert with an image that has a
 * hole, one with block data, a commit, then the record of CASE, then a heap insert with a
 * valid image of each compression (pglz; lz4 and zstd by their libraries) and a commit; the rest zeros. Every
 * record is laid into pages by walfmt.c's pn_wal_copy_record, and its CRC is computed over
 * the bytes written, so the reader decodes past the CRC into what CASE breaks. CASE `ok`
 * writes a valid heap insert in its place; CASE `first-C` makes the leading checkpoint the
 * record of case C (a checkpoint case); CASE `checkpoint-redo` writes an XLOG/CHECKPOINT_REDO
 * (info E0, 4 bytes of main data: PostgreSQL 17's), `prune-vacuum-scan` a Heap2 record of
 * info 20 with block data (17's PRUNE_VACUUM_SCAN, 15's and 16's VACUUM). VERSION (15, 16 or
 * 17; default 15) sets every page's XLOG_PAGE_MAGIC: D110, D113, D116 (the page header has
 * no CRC; the page, record and block headers are alike in the three). Prints the case
 * record's LSN.
 * Exit status: 0 written, 2 bad usage or an unknown case.
 */
#include "walfmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lz4.h>
#include <zstd.h>

#define SEG (1u << 20)
#define SYSID 7300000000000000001ull
#define BLCKSZ 8192u
#define RM_XLOG 0
#define RM_XACT 1
#define RM_HEAP2 9
#define RM_HEAP 10
#define IMG 0x10u   /* BKPBLOCK_HAS_IMAGE */
#define DATA 0x20u  /* BKPBLOCK_HAS_DATA */
#define HOLE 0x01u  /* BKPIMAGE_HAS_HOLE */
#define APPLY 0x02u /* BKPIMAGE_APPLY */
#define PGLZ 0x04u
#define LZ4 0x08u
#define ZSTD 0x10u

/* One record being built: its headers, then its payload (images and data in block order). */
struct rec {
	uint8_t b[4 * BLCKSZ];
	uint32_t n;
	uint8_t payload[4 * BLCKSZ];
	uint32_t np;
};

static uint8_t *wal;
static uint64_t bytepos;
static pn_lsn prev;

static void u8(struct rec *r, uint32_t v) { r->b[r->n++] = (uint8_t)v; }
static void u16(struct rec *r, uint32_t v)
{
	pn_put16(r->b + r->n, (uint16_t)v);
	r->n += 2;
}
static void u32(struct rec *r, uint32_t v)
{
	pn_put32(r->b + r->n, v);
	r->n += 4;
}

static void begin(struct rec *r, uint8_t rmid, uint8_t info)
{
	memset(r, 0, sizeof *r);
	r->n = PN_WAL_RECORD_HEADER;
	r->b[16] = info;
	r->b[17] = rmid;
}

/* A block header: id, fork_flags, data_len, then RelFileLocator and block number after the
 * image header, which the caller writes between (block_rel). */
static void block(struct rec *r, uint8_t id, uint8_t flags, uint32_t data_len)
{
	u8(r, id);
	u8(r, flags);
	u16(r, data_len);
}

static void block_rel(struct rec *r, uint32_t blkno)
{
	u32(r, 1663);
	u32(r, 5);
	u32(r, 16384);
	u32(r, blkno);
}

static void image(struct rec *r, uint32_t bimg_len, uint32_t hole_offset, uint8_t info,
		  uint32_t hole_length)
{
	u16(r, bimg_len);
	u16(r, hole_offset);
	u8(r, info);
	if ((info & (PGLZ | LZ4 | ZSTD)) && (info & HOLE))
		u16(r, hole_length);
}

static void payload(struct rec *r, const uint8_t *bytes, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		r->payload[r->np++] = bytes ? bytes[i] : (uint8_t)(i * 7 + 1);
}

static uint8_t *page_of(void *arg, pn_lsn addr)
{
	(void)arg;
	if (addr < SEG || addr >= 2 * (pn_lsn)SEG) {
		fprintf(stderr, "walgen: the WAL outgrew its segment\n");
		exit(2);
	}
	return wal + (addr - SEG);
}

/* The main data (short header), the payload after the headers, the CRC; laid into the WAL.
 * Returns the record's LSN. */
static pn_lsn put(struct rec *r, uint32_t main_len, const uint8_t *main_data)
{
	pn_lsn at = pn_wal_bytepos_to_recptr(bytepos, SEG);

	u8(r, 255);
	u8(r, main_len);
	memcpy(r->b + r->n, r->payload, r->np);
	r->n += r->np;
	for (uint32_t i = 0; i < main_len; i++)
		r->b[r->n++] = main_data ? main_data[i] : (uint8_t)i;
	pn_put32(r->b, r->n);
	pn_put32(r->b + 4, 700);
	pn_put64(r->b + 8, prev);
	pn_put32(r->b + 20, pn_wal_record_crc(r->b, r->n));
	pn_wal_copy_record(r->b, r->n, at, SEG, SYSID, page_of, NULL);
	bytepos += PN_ALIGN8(r->n);
	prev = at;
	return at;
}

static void checkpoint(struct rec *r, pn_lsn redo_delta, uint64_t redo_fixed, uint32_t len)
{
	uint8_t main[88] = {0};
	pn_lsn at = pn_wal_bytepos_to_recptr(bytepos, SEG);

	begin(r, RM_XLOG, 0x10);
	pn_put64(main, redo_fixed ? redo_fixed : at + redo_delta);
	pn_put32(main + 8, 1);
	pn_put32(main + 12, 1);
	put(r, len, main);
}

/* A heap insert on block blkno with an uncompressed image with a hole at 200..8000. */
static void heap_image(struct rec *r, uint32_t blkno)
{
	begin(r, RM_HEAP, 0x00);
	block(r, 0, IMG, 0);
	image(r, BLCKSZ - 7800, 200, HOLE | APPLY, 0);
	block_rel(r, blkno);
	payload(r, NULL, BLCKSZ - 7800);
	put(r, 3, NULL);
}

static void heap_data(struct rec *r, uint32_t blkno, uint32_t len)
{
	begin(r, RM_HEAP, 0x00);
	block(r, 0, DATA, len);
	block_rel(r, blkno);
	payload(r, NULL, len);
	put(r, 3, NULL);
}

/* An lz4 block of `want` bytes (liblz4's, as PostgreSQL's LZ4_compress_default writes it). */
static uint32_t lz4_stream(uint8_t *out, uint32_t cap, uint32_t want)
{
	static char plain[BLCKSZ];
	memset(plain, 'A', want);
	int n = LZ4_compress_default(plain, (char *)out, (int)want, (int)cap);
	if (n <= 0) {
		fprintf(stderr, "walgen: lz4 failed\n");
		exit(2);
	}
	return (uint32_t)n;
}

/* An lz4 block of `want` bytes that liblz4 refuses: a literal, a match at offset 1 up to
 * one byte before the end, a 1-byte last literal (LZ4's block format ends with at least 5
 * literal bytes, and a match starts at least 12 bytes before the end). */
static uint32_t lz4_end_short(uint8_t *out, uint32_t want)
{
	uint32_t n = 0, m = want - 2 - 4 - 15;
	out[n++] = 0x1F;
	out[n++] = 'A';
	out[n++] = 1;
	out[n++] = 0;
	for (; m >= 255; m -= 255)
		out[n++] = 255;
	out[n++] = (uint8_t)m;
	out[n++] = 0x10;
	out[n++] = 'B';
	return n;
}

/* A pglz stream of `want` bytes: a literal, tags of up to 273 bytes at offset 1, literals;
 * with cut, its last item is an 18-byte tag without the length byte that such a tag has
 * (a stream cut short: PostgreSQL's pglz_decompress refuses it). */
static uint32_t pglz_stream(uint8_t *out, uint32_t want, bool cut)
{
	uint32_t n = 0, got = 0, item = 0, ctrl = 0, body = want - (cut ? 18u : 0u);

	while (got < want) {
		uint32_t left = body - got;
		if (item % 8 == 0)
			ctrl = n++, out[ctrl] = 0;
		if (got == body) { /* cut: the 18-byte tag, its length byte left out */
			out[ctrl] |= (uint8_t)(1u << (item % 8));
			out[n++] = 15;
			out[n++] = 1;
			got += 18;
		} else if (got == 0 || left < 3) {
			out[n++] = 'A';
			got++;
		} else {
			uint32_t len = PN_MIN(left, 273u);
			out[ctrl] |= (uint8_t)(1u << (item % 8));
			out[n++] = (uint8_t)(len >= 18 ? 15 : len - 3);
			out[n++] = 1;
			if (len >= 18)
				out[n++] = (uint8_t)(len - 18);
			got += len;
		}
		item++;
	}
	return n;
}

/* A zstd frame of `size` bytes (libzstd's, as PostgreSQL's ZSTD_compress writes it). */
static uint32_t zstd_frame(uint8_t *out, uint32_t cap, uint32_t size)
{
	static uint8_t plain[BLCKSZ];
	memset(plain, 'A', size);
	size_t n = ZSTD_compress(out, cap, plain, size, 1);
	if (ZSTD_isError(n)) {
		fprintf(stderr, "walgen: zstd: %s\n", ZSTD_getErrorName(n));
		exit(2);
	}
	return (uint32_t)n;
}

/* A zstd frame header saying `size` bytes (single segment, 2-byte content size), and a few
 * bytes after it (the reader refuses the size before it decodes them). */
static uint32_t zstd_stream(uint8_t *out, uint32_t size)
{
	pn_put32(out, 0xFD2FB528u);
	out[4] = 0x60; /* FCS_flag 1, Single_Segment */
	pn_put16(out + 5, (uint16_t)(size - 256));
	memset(out + 7, 0x11, 9);
	return 16;
}

static void heap_compressed(struct rec *r, uint8_t how, uint32_t image_bytes, uint32_t hole)
{
	uint8_t s[512];
	uint32_t n = how == PGLZ  ? pglz_stream(s, image_bytes, false)
		     : how == LZ4 ? lz4_stream(s, sizeof s, image_bytes)
				  : zstd_frame(s, sizeof s, image_bytes);
	begin(r, RM_HEAP, 0x00);
	block(r, 0, IMG, 0);
	image(r, n, 200, how | HOLE | APPLY, hole);
	block_rel(r, 3);
	payload(r, s, n);
	put(r, 3, NULL);
}

/* The record of a case that is a heap insert with one odd block; false: no such case. */
static bool odd_block(struct rec *r, const char *c)
{
	uint8_t s[512];
	begin(r, RM_HEAP, 0x00);
	if (strcmp(c, "hole-offset-9000") == 0) {
		block(r, 0, IMG, 0);
		image(r, BLCKSZ - 7800, 9000, HOLE | APPLY, 0);
		payload(r, NULL, BLCKSZ - 7800);
	} else if (strcmp(c, "hole-in-page-header") == 0) {
		block(r, 0, IMG, 0);
		image(r, BLCKSZ - 7800, 8, HOLE | APPLY, 0);
		payload(r, NULL, BLCKSZ - 7800);
	} else if (strcmp(c, "hole-empty") == 0) {
		block(r, 0, IMG, 0);
		image(r, BLCKSZ - 7800, 0, HOLE | APPLY, 0);
		payload(r, NULL, BLCKSZ - 7800);
	} else if (strcmp(c, "bimg-len-over-page") == 0) {
		block(r, 0, IMG, 0);
		image(r, 9000, 100, HOLE | APPLY, 0);
		payload(r, NULL, 9000);
	} else if (strcmp(c, "data-over-page") == 0) {
		block(r, 0, DATA, 9000);
		payload(r, NULL, 9000);
	} else if (strcmp(c, "fork-out-of-range") == 0) {
		block(r, 0, DATA | 5, 40);
		payload(r, NULL, 40);
	} else if (strcmp(c, "compressed-full-page") == 0) {
		block(r, 0, IMG, 0);
		image(r, BLCKSZ, 0, PGLZ | APPLY, 0);
		payload(r, NULL, BLCKSZ);
	} else if (strcmp(c, "compressed-not-smaller") == 0) {
		block(r, 0, IMG, 0);
		image(r, 5000, 200, LZ4 | HOLE | APPLY, 4000);
		payload(r, NULL, 5000);
	} else if (strcmp(c, "pglz-corrupt") == 0) {
		block(r, 0, IMG, 0);
		image(r, 40, 200, PGLZ | HOLE | APPLY, 4000);
		payload(r,
			(const uint8_t *)"\xff\x0f\x09\x0f\x09\x0f\x09\x0f\x09\x0f\x09\x0f\x09"
					 "\x0f\x09\x0f\x09\x0f\x09\x0f\x09\x0f\x09\x0f\x09\x0f"
					 "\x09\x0f\x09\x0f\x09\x0f\x09\x0f\x09\x0f\x09\x0f\x09\x0f",
			40);
	} else if (strcmp(c, "pglz-cut") == 0) {
		uint32_t n = pglz_stream(s, BLCKSZ - 4000, true);
		block(r, 0, IMG, 0);
		image(r, n, 200, PGLZ | HOLE | APPLY, 4000);
		payload(r, s, n);
	} else if (strcmp(c, "lz4-short") == 0) {
		uint32_t n = lz4_stream(s, sizeof s, 1000);
		block(r, 0, IMG, 0);
		image(r, n, 200, LZ4 | HOLE | APPLY, 4000);
		payload(r, s, n);
	} else if (strcmp(c, "lz4-end-of-block") == 0) {
		uint32_t n = lz4_end_short(s, BLCKSZ - 4000);
		block(r, 0, IMG, 0);
		image(r, n, 200, LZ4 | HOLE | APPLY, 4000);
		payload(r, s, n);
	} else if (strcmp(c, "zstd-size") == 0) {
		uint32_t n = zstd_stream(s, 1000);
		block(r, 0, IMG, 0);
		image(r, n, 200, ZSTD | HOLE | APPLY, 4000);
		payload(r, s, n);
	} else {
		return false;
	}
	block_rel(r, 1);
	return true;
}

/* The case's record; false: an unknown case. */
static bool case_record(struct rec *r, const char *c)
{
	if (odd_block(r, c)) {
		put(r, 3, NULL);
	} else if (strcmp(c, "ok") == 0) {
		heap_data(r, 2, 60);
	} else if (strcmp(c, "block-id-out-of-order") == 0 || strcmp(c, "block-id-repeated") == 0) {
		begin(r, RM_HEAP, 0x00);
		block(r, 1, DATA, 10);
		block_rel(r, 1);
		block(r, c[9] == 'o' ? 0 : 1, DATA, 10);
		block_rel(r, 2);
		payload(r, NULL, 20);
		put(r, 3, NULL);
	} else if (strcmp(c, "data-length-mismatch") == 0) {
		begin(r, RM_HEAP, 0x00);
		block(r, 0, DATA, 50);
		block_rel(r, 1);
		payload(r, NULL, 40);
		put(r, 3, NULL);
	} else if (strcmp(c, "redo-ffffffff") == 0) {
		checkpoint(r, 0, UINT64_MAX, 88);
	} else if (strcmp(c, "redo-after-record") == 0) {
		checkpoint(r, 0x2000, 0, 88);
	} else if (strcmp(c, "checkpoint-short") == 0) {
		checkpoint(r, 0, 0, 8);
	} else if (strcmp(c, "checkpoint-redo") == 0) {
		begin(r, RM_XLOG, 0xE0);
		put(r, 4, NULL);
	} else if (strcmp(c, "prune-vacuum-scan") == 0) {
		begin(r, RM_HEAP2, 0x20);
		block(r, 0, DATA, 12);
		block_rel(r, 1);
		payload(r, NULL, 12);
		put(r, 10, NULL);
	} else {
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	static struct rec r;
	char path[4096];
	pn_lsn at;
	bool lead;
	FILE *f;

	uint16_t magic = argc == 4 && strcmp(argv[3], "16") == 0   ? 0xD113
			 : argc == 4 && strcmp(argv[3], "17") == 0 ? 0xD116
								   : PN_WAL_PAGE_MAGIC;
	if (argc < 3 || argc > 4 ||
	    (argc == 4 && magic == PN_WAL_PAGE_MAGIC && strcmp(argv[3], "15"))) {
		fprintf(stderr, "usage: walgen DIR CASE [15|16|17]\n");
		return 2;
	}
	wal = calloc(1, SEG);
	if (!wal)
		return 2;
	bytepos = pn_wal_recptr_to_bytepos((pn_lsn)SEG + PN_WAL_LONG_PHD, SEG);
	prev = 0;
	pn_wal_page_init(wal, SEG, SEG, SYSID);
	lead = strncmp(argv[2], "first-", 6) == 0; /* the case is the leading checkpoint */
	at = pn_wal_bytepos_to_recptr(bytepos, SEG);
	if (lead ? !case_record(&r, argv[2] + 6) : (checkpoint(&r, 0, 0, 88), false)) {
		fprintf(stderr, "walgen: unknown case '%s'\n", argv[2]);
		return 2;
	}
	heap_image(&r, 1);
	heap_data(&r, 1, 50);
	begin(&r, RM_XACT, 0x00);
	put(&r, 8, NULL);
	if (lead) {
		heap_data(&r, 2, 60);
	} else {
		at = pn_wal_bytepos_to_recptr(bytepos, SEG);
		if (!case_record(&r, argv[2])) {
			fprintf(stderr, "walgen: unknown case '%s'\n", argv[2]);
			return 2;
		}
	}
	heap_compressed(&r, PGLZ, BLCKSZ - 4000, 4000);
	heap_compressed(&r, LZ4, BLCKSZ - 4000, 4000);
	heap_compressed(&r, ZSTD, BLCKSZ - 4000, 4000);
	begin(&r, RM_XACT, 0x00);
	put(&r, 8, NULL);
	for (uint32_t off = 0; off < SEG; off += PN_XLOG_BLCKSZ) /* the pages written */
		if (pn_get16(wal + off) == PN_WAL_PAGE_MAGIC)
			pn_put16(wal + off, magic);
	snprintf(path, sizeof path, "%s/000000010000000000000001", argv[1]);
	if (!(f = fopen(path, "wb")) || fwrite(wal, 1, SEG, f) != SEG || fclose(f) != 0) {
		fprintf(stderr, "walgen: %s cannot be written\n", path);
		return 2;
	}
	printf("%X/%X\n", (unsigned)(at >> 32), (unsigned)at);
	free(wal);
	return 0;
}
