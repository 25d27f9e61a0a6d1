/*
 * walfix.c: a mutated WAL segment made self-consistent again (walfix.h). The byte layout is
 * src/format/walfmt.c's; the walk is the one xlogread.c's reader makes, without its checks.
 */
#include "walfix.h"

#include <stdlib.h>
#include <string.h>

#include "pn.h"
#include "walfmt.h"

#define PAGE PN_XLOG_BLCKSZ
#define XLP_BKP_REMOVABLE 0x0004u
#define DEFAULT_SEG (1u << 24)

static uint32_t header_size(size_t page) { return page == 0 ? PN_WAL_LONG_PHD : PN_WAL_SHORT_PHD; }

/* Every whole page's header, no record continuing onto it yet. */
static void page_headers(uint8_t *seg, size_t npages, uint64_t start, uint32_t seg_size)
{
	uint32_t tli = pn_get32(seg + 4) ? pn_get32(seg + 4) : 1;

	for (size_t i = 0; i < npages; i++) {
		uint8_t *p = seg + i * PAGE;
		uint16_t keep = pn_get16(p + 2) & XLP_BKP_REMOVABLE;
		pn_put16(p, PN_WAL_PAGE_MAGIC);
		pn_put16(p + 2, (uint16_t)(keep | (i == 0 ? PN_XLP_LONG_HEADER : 0u)));
		pn_put32(p + 4, tli);
		pn_put64(p + 8, start + i * PAGE);
		pn_put32(p + 16, 0);
	}
	pn_put32(seg + 32, seg_size);
	pn_put32(seg + 36, PAGE);
}

/* The file offset of each of the record's tot bytes starting at `at` (skipping page headers,
 * marking the pages it continues onto); false if it runs past the whole pages. */
static bool place(uint8_t *seg, size_t end, size_t at, uint32_t tot, size_t *offs)
{
	size_t pos = at;

	for (uint32_t i = 0; i < tot; i++, pos++) {
		if (pos % PAGE == 0) {
			if (pos >= end)
				return false;
			pn_put16(seg + pos + 2,
				 (uint16_t)(pn_get16(seg + pos + 2) | PN_XLP_FIRST_IS_CONTRECORD));
			pn_put32(seg + pos + 16, tot - i);
			pos += header_size(pos / PAGE);
		}
		if (pos >= end)
			return false;
		offs[i] = pos;
	}
	return true;
}

void pn_walfix(uint8_t *seg, size_t len)
{
	size_t npages = len / PAGE, end = npages * PAGE, at = PN_WAL_LONG_PHD;
	uint32_t seg_size = npages ? pn_get32(seg + 32) : 0;
	uint8_t *rec = malloc(end ? end : 1);
	size_t *offs = malloc((end ? end : 1) * sizeof *offs);
	uint64_t start;
	uint32_t rem;
	pn_lsn prev = 0;

	if (!npages || !rec || !offs)
		goto out;
	if (seg_size < (1u << 20) || seg_size > (1u << 30) || (seg_size & (seg_size - 1)))
		seg_size = DEFAULT_SEG;
	start = pn_get64(seg + 8) / seg_size * seg_size;
	rem = (pn_get16(seg + 2) & PN_XLP_FIRST_IS_CONTRECORD) ? pn_get32(seg + 16) : 0;
	page_headers(seg, npages, start, seg_size);
	if (rem && (rem > end || !place(seg, end, at, rem, offs))) {
		rem = 0; /* a continuation longer than the input: none */
		page_headers(seg, npages, start, seg_size);
	}
	if (rem) { /* the end of a record of the previous segment comes first */
		pn_put16(seg + 2, (uint16_t)(pn_get16(seg + 2) | PN_XLP_FIRST_IS_CONTRECORD));
		pn_put32(seg + 16, rem);
		at = PN_ALIGN8(offs[rem - 1] + 1);
	}
	for (;;) {
		uint32_t tot;
		if (at % PAGE == 0)
			at += header_size(at / PAGE);
		if (at + 4 > end)
			break;
		tot = pn_get32(seg + at);
		if (tot < PN_WAL_RECORD_HEADER || tot > end || !place(seg, end, at, tot, offs))
			break;
		for (uint32_t i = 0; i < tot; i++)
			rec[i] = seg[offs[i]];
		pn_put64(rec + 8, prev);
		pn_put32(rec + 20, pn_wal_record_crc(rec, tot));
		for (uint32_t i = 8; i < 24; i++)
			seg[offs[i]] = rec[i];
		prev = start + at;
		at = PN_ALIGN8(offs[tot - 1] + 1);
		if (rec[17] == 0 && (rec[16] & 0xF0u) == 0x40u) /* XLOG_SWITCH */
			break;
	}
out:
	free(rec);
	free(offs);
}
