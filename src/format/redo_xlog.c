/*
 * redo_xlog.c: the rows of the redo table for the small managers (format layer, redo_xlog.h;
 * rmgrlist.h): XLOG, Transaction and CLOG records, and XLOG2/HINT_DELTA, Umbra l4's hint
 * record with its codec.
 *
 *   CLOG/SET (3, 0x20): main {xid u32, slru_headers u8}: xid's commit bits on its SLRU page
 *     (slru.c).
 *   XLOG2/HINT_DELTA (22, 0x00): no image; block 0 data: u16 n, n x {u16 offset, u16
 *     length}, then the final bytes of each fragment in order (one fragment per run of
 *     changed bytes, in page order: pn_hint_delta_encode()); redo copies each fragment to
 *     its offset, and refuses data that does not add up or leaves the page.
 *   Imported/RECORD (any rmid, info bit PN_INFO_IMPORTED: a real WAL's record replayed by
 *     the import workload): block data filler, after {lower u16, upper u16} when info bit
 *     PN_INFO_LAYOUT is set (else lower = upper = 0, and the data is PostgreSQL's size). A will-init block
 *     first becomes an empty page (24 B header, pd_lower 24, pd_upper = pd_special =
 *     page_size); then pd_lower / pd_upper are set when given (24 <= lower <= upper <=
 *     page_size; 0 0: kept), the hole [pd_lower, pd_upper) is zeroed, and the filler is
 *     written from pd_upper on, as much as fits before page_size. So an image taken after
 *     the record leaves out the hole PostgreSQL's image left out.
 *   Storage/TRUNCATE (2, 0x20): no block; main = PostgreSQL 15's xl_smgr_truncate (20 B:
 *     blkno, RelFileNode 1663/5/16384, flags 7 = heap | fsm | vm): the relation shrinks to
 *     blkno blocks. Recovery (engine/recovery.c) and the oracle read it; the flag bit
 *     XLR_SPECIAL_REL_UPDATE (0x01) PostgreSQL sets in xl_info is left out (the table's
 *     info values have no flag bits), which pg_waldump decodes alike.
 *   Transaction/COMMIT, ABORT, XLOG/CHECKPOINT_*: no block (recovery, the checkpointer and
 *     the oracle read them); XLOG/FPI_FOR_HINT: an image (redo.c restores it), or under
 *     full_page_writes off a block without image or data, which changes nothing
 *     (PostgreSQL's xlog_redo skips it; the caller stamps the page's LSN, as after any
 *     record, which the oracle expects too).
 */
#include "redo_xlog.h"
#include "redo.h"

#include "page.h"
#include "slru.h"

#include <stdio.h>
#include <string.h>

bool pn_redo_fpi_for_hint(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			  const struct pn_wal_block *b)
{
	(void)page;
	(void)page_size;
	return r->nblocks == 1 && r->main_len == 0 && b->data_len == 0 && !b->has_image;
}

bool pn_redo_clog_set(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
		      const struct pn_wal_block *b)
{
	if (r->main_len != 5)
		return false;
	pn_slru_set(page, page_size, r->main_data[4] != 0, pn_get32(r->main_data));
	return true;
}

uint16_t pn_hint_delta_encode(const uint8_t *before, const uint8_t *after, uint32_t page_size,
			      uint8_t *out, uint16_t cap)
{
	/* One fragment per run of changed bytes, in page order. */
	uint16_t n = 0, len = 2, nbytes = 0;
	uint8_t bytes[64];
	for (uint32_t i = 0; i < page_size; i++) {
		if (before[i] == after[i])
			continue;
		uint32_t j = i;
		while (j < page_size && before[j] != after[j])
			j++;
		PN_ASSERT(len + 4u + nbytes + (j - i) <= cap && nbytes + (j - i) <= sizeof(bytes));
		pn_put16(out + 2 + 4u * n, (uint16_t)i);
		pn_put16(out + 4 + 4u * n, (uint16_t)(j - i));
		memcpy(bytes + nbytes, after + i, j - i);
		nbytes = (uint16_t)(nbytes + (j - i));
		n++;
		len = (uint16_t)(len + 4u);
		i = j;
	}
	pn_put16(out, n);
	memmove(out + len, bytes, nbytes);
	return (uint16_t)(len + nbytes);
}

bool pn_hint_delta_apply(uint8_t *page, uint32_t page_size, const struct pn_wal_block *b)
{
	if (b->data_len < 2)
		return false;
	uint32_t n = pn_get16(b->data), at = 2 + 4u * n;
	if (at > b->data_len)
		return false;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t off = pn_get16(b->data + 2 + 4u * k), len = pn_get16(b->data + 4 + 4u * k);
		if (off + len > page_size || at + len > b->data_len)
			return false;
		memcpy(page + off, b->data + at, len);
		at += len;
		PN_ASSERT(at <= b->data_len);
	}
	return at == b->data_len;
}

bool pn_redo_hint_delta(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
			const struct pn_wal_block *b)
{
	return pn_hint_delta_apply(page, page_size, b);
}

bool pn_redo_imported(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
		      const struct pn_wal_block *b)
{
	uint32_t layout = r->info & PN_INFO_LAYOUT ? 4u : 0u;
	if (b->data_len < layout)
		return false;
	uint16_t lower = layout ? pn_get16(b->data) : 0, upper = layout ? pn_get16(b->data + 2) : 0;
	if ((lower || upper) && (lower < PN_PAGE_HEADER || lower > upper || upper > page_size))
		return false;
	if (b->will_init) {
		memset(page + 8, 0, page_size - 8); /* the LSN is the caller's */
		pn_put16(page + 12, PN_PAGE_HEADER);
		pn_put16(page + 14, (uint16_t)page_size);
		pn_put16(page + 16, (uint16_t)page_size);
		pn_put16(page + 18, (uint16_t)(page_size | 4u));
	}
	if (lower || upper) {
		pn_put16(page + 12, lower);
		pn_put16(page + 14, upper);
	}
	lower = pn_get16(page + 12);
	upper = pn_get16(page + 14);
	if (lower < PN_PAGE_HEADER || lower > upper || upper > page_size)
		return false;
	memset(page + lower, 0, upper - lower);
	uint32_t n = PN_MIN((uint32_t)b->data_len - layout, page_size - upper);
	if (n)
		memcpy(page + upper, b->data + layout, n);
	return true;
}

#define SMGR_SPC 1663u
#define SMGR_DB 5u
#define SMGR_REL 16384u
#define SMGR_TRUNCATE_HEAP 0x1u
#define SMGR_TRUNCATE_ALL 0x7u

void pn_smgr_truncate_encode(uint32_t nblocks, uint8_t *out)
{
	pn_put32(out, nblocks);
	pn_put32(out + 4, SMGR_SPC);
	pn_put32(out + 8, SMGR_DB);
	pn_put32(out + 12, SMGR_REL);
	pn_put32(out + 16, SMGR_TRUNCATE_ALL);
}

bool pn_smgr_truncate_decode(const struct pn_wal_record *r, uint32_t *nblocks)
{
	if (r->rmid != PN_RM_SMGR || (r->info & 0xF0u) != 0x20u ||
	    r->main_len < PN_SMGR_TRUNCATE_BYTES || r->nblocks != 0)
		return false;
	const uint8_t *m = r->main_data;
	if (pn_get32(m + 4) != SMGR_SPC || pn_get32(m + 8) != SMGR_DB ||
	    pn_get32(m + 12) != SMGR_REL || !(pn_get32(m + 16) & SMGR_TRUNCATE_HEAP))
		return false;
	*nblocks = pn_get32(m);
	PN_ASSERT(r->main_len >= PN_SMGR_TRUNCATE_BYTES); /* the fields read above */
	return true;
}

int pn_redo_xlog_describe(const struct pn_wal_record *r, char *out, size_t len)
{
	uint32_t nblocks;
	if (pn_smgr_truncate_decode(r, &nblocks)) /* smgr_desc's text */
		return snprintf(out, len, " base/%u/%u to %u blocks flags %u", SMGR_DB, SMGR_REL,
				nblocks, pn_get32(r->main_data + 16));
	if (r->rmid == PN_RM_CLOG && r->main_len == 5)
		return snprintf(out, len, " xid %u", pn_get32(r->main_data));
	if (r->rmid == PN_RM_XLOG2 && r->nblocks == 1 && r->blocks[0].data_len >= 2)
		return snprintf(out, len, " fragments %u", pn_get16(r->blocks[0].data));
	if (r->nblocks == 0 && r->xid != 0)
		return snprintf(out, len, " xid %u", r->xid);
	return 0;
}
