/*
 * page.c: the data page format (format layer, page.h).
 *
 * A heap page, page_size bytes, little-endian (PostgreSQL's PageHeaderData):
 *   0  pd_lsn      8  {xlogid u32 = lsn >> 32, xrecoff u32}: end LSN of the last change
 *   8  pd_checksum 2  pg_checksum_page() over the page with this field as 0, 0 if off
 *  10  pd_flags    2  0x4 PD_ALL_VISIBLE
 *  12  pd_lower    2  end of the line pointers
 *  14  pd_upper    2  start of tuple data; [pd_lower, pd_upper) is the hole FPIs leave out
 *  16  pd_special  2  = page_size (heap pages have no special space)
 *  18  pd_pagesize_version 2  page_size | 4
 *  20  pd_prune_xid 4
 *  24  line pointers, 4 B each {lp_off u16, lp_len u16}
 *  ... hole ...
 *  pd_upper  tuples, PN_TUPLE_LEN each: 24 B header {t_xmin u32, t_xmax u32, t_cid u32,
 *            t_ctid 6, t_infomask2 u16, t_infomask u16 (hint bits 0x0100.., frozen 0x0300),
 *            t_hoff u8, pad u8} then the payload, whose first 4 bytes updates change.
 *
 */
#include "page.h"

#include "checksum.h"

#include <string.h>

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

pn_lsn pn_page_lsn(const uint8_t *page)
{
	return ((uint64_t)pn_get32(page) << 32) | pn_get32(page + 4);
}

void pn_page_set_lsn(uint8_t *page, pn_lsn lsn)
{
	pn_put32(page, (uint32_t)(lsn >> 32));
	pn_put32(page + 4, (uint32_t)lsn);
}

uint32_t pn_page_nitems(const uint8_t *page)
{
	uint16_t lower = pn_get16(page + 12);
	return lower > PN_PAGE_HEADER ? (lower - PN_PAGE_HEADER) / 4u : 0;
}

void pn_page_header_init(uint8_t *page, uint32_t page_size, uint16_t lower, uint16_t upper)
{
	/* pd_pagesize_version holds the size in 16 bits; a header and no item past the page */
	PN_ASSERT(page_size <= 32768 && PN_PAGE_HEADER <= lower && lower <= upper &&
		  upper <= page_size);
	pn_put16(page + 12, lower);
	pn_put16(page + 14, upper);
	pn_put16(page + 16, (uint16_t)page_size);
	pn_put16(page + 18, (uint16_t)(page_size | 4u));
}

void pn_page_init(uint8_t *page, uint32_t page_size, uint32_t blkno, bool slru)
{
	memset(page, 0, page_size);
	if (slru)
		return; /* headerless SLRU: zeros; the caller adds a header when asked */
	uint32_t n = (page_size - PN_PAGE_HEADER) * 9u / 10u / (PN_TUPLE_LEN + 4u);
	PN_ASSERT(n > 0); /* every data page starts with tuples to change */
	uint16_t upper = (uint16_t)(page_size - n * PN_TUPLE_LEN);
	pn_page_header_init(page, page_size, (uint16_t)(PN_PAGE_HEADER + 4u * n), upper);
	for (uint32_t i = 0; i < n; i++) {
		uint16_t off = (uint16_t)(upper + i * PN_TUPLE_LEN);
		pn_put16(page + PN_PAGE_HEADER + 4 * i, off);
		pn_put16(page + PN_PAGE_HEADER + 4 * i + 2, PN_TUPLE_LEN);
		uint8_t *t = page + off;
		pn_put32(t, 2);          /* t_xmin: frozen-ish bootstrap xid */
		pn_put16(t + 18, 1);     /* t_infomask2: one attribute */
		t[22] = PN_TUPLE_HEADER; /* t_hoff */
		for (uint32_t j = PN_TUPLE_HEADER; j < PN_TUPLE_LEN; j += 8) {
			uint64_t v = mix64(((uint64_t)blkno << 32) ^ (i << 8) ^ j);
			memcpy(t + j, &v, PN_MIN(8u, PN_TUPLE_LEN - j));
		}
	}
}

void pn_page_hole(const uint8_t *page, uint32_t page_size, uint16_t *off, uint16_t *len)
{
	uint16_t lower = pn_get16(page + 12), upper = pn_get16(page + 14);
	*off = 0;
	*len = 0;
	if (lower >= PN_PAGE_HEADER && upper > lower && upper <= page_size) {
		*off = lower;
		*len = (uint16_t)(upper - lower);
	}
}

void pn_page_set_checksum(uint8_t *page, uint32_t page_size, uint32_t blkno)
{
	pn_put16(page + 8, pn_page_checksum(page, page_size, blkno));
}

static bool all_zero(const uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

bool pn_page_verify(const uint8_t *page, uint32_t page_size, uint32_t blkno, bool checksums)
{
	uint16_t lower = pn_get16(page + 12), upper = pn_get16(page + 14);
	uint16_t special = pn_get16(page + 16);
	if (lower == 0 && upper == 0 && all_zero(page, page_size))
		return true; /* PageIsNew: an all-zero page is accepted */
	if (lower < PN_PAGE_HEADER || lower > upper || upper > special || special > page_size)
		return false;
	if (checksums && pn_get16(page + 8) != pn_page_checksum(page, page_size, blkno))
		return false;
	return true;
}

uint8_t *pn_page_tuple(uint8_t *page, uint32_t page_size, uint32_t item, uint32_t need)
{
	if (item >= pn_page_nitems(page))
		return NULL;
	uint16_t off = pn_get16(page + PN_PAGE_HEADER + 4 * item);
	uint16_t len = pn_get16(page + PN_PAGE_HEADER + 4 * item + 2);
	if (off < PN_PAGE_HEADER || len < need || (uint32_t)off + len > page_size)
		return NULL;
	return page + off;
}

void pn_page_set_hint(uint8_t *page, uint32_t item)
{
	uint32_t page_size = pn_get16(page + 16);
	uint8_t *t = pn_page_tuple(page, page_size, item, PN_TUPLE_HEADER);
	if (t)
		pn_put16(t + 20, pn_get16(t + 20) | PN_HINT_XMIN_COMMITTED);
}

uint32_t pn_page_free(const uint8_t *page)
{
	uint16_t lower = pn_get16(page + 12), upper = pn_get16(page + 14);
	return upper > lower ? (uint32_t)(upper - lower) : 0;
}

bool pn_page_is_new(const uint8_t *page)
{
	return pn_get16(page + 12) == 0 && pn_get16(page + 14) == 0;
}

void pn_heap_page_init(uint8_t *page, uint32_t page_size)
{
	memset(page + 8, 0, page_size - 8); /* keep pd_lsn: the caller stamps it */
	pn_page_header_init(page, page_size, PN_PAGE_HEADER, (uint16_t)page_size);
}

uint8_t *pn_heap_place(uint8_t *page, uint32_t page_size, uint32_t offnum, uint32_t t_len)
{
	uint32_t n = pn_page_nitems(page), lower = pn_get16(page + 12), upper = pn_get16(page + 14);
	uint32_t room = (uint32_t)PN_ALIGN8(t_len);
	if (offnum == 0 || t_len < PN_TUPLE_HEADER || lower < PN_PAGE_HEADER || upper > page_size)
		return NULL;
	uint32_t new_lower = PN_PAGE_HEADER + 4u * PN_MAX(n, offnum);
	if (offnum <= n && pn_get16(page + PN_PAGE_HEADER + 4 * (offnum - 1) + 2) != 0)
		return NULL;
	if (upper < room || upper - room < new_lower)
		return NULL;
	for (uint32_t i = n; i < offnum; i++)
		pn_put32(page + PN_PAGE_HEADER + 4 * i, 0);
	upper -= room;
	memset(page + upper, 0, room);
	pn_put16(page + PN_PAGE_HEADER + 4 * (offnum - 1), (uint16_t)upper);
	pn_put16(page + PN_PAGE_HEADER + 4 * (offnum - 1) + 2, (uint16_t)t_len);
	pn_put16(page + 12, (uint16_t)new_lower);
	pn_put16(page + 14, (uint16_t)upper);
	PN_ASSERT(new_lower <= upper && upper + room <= page_size); /* the tuple within the page */
	return page + upper;
}

uint32_t pn_heap_rows_per_page(uint32_t page_size, uint32_t t_len, uint32_t fillfactor)
{
	PN_ASSERT(page_size > PN_PAGE_HEADER && t_len > 0);
	uint32_t usable = (page_size - PN_PAGE_HEADER) * fillfactor / 100u;
	return usable / ((uint32_t)PN_ALIGN8(t_len) + 4u);
}

#if defined(__x86_64__) && defined(__has_attribute) && !defined(__clang__)
#if __has_attribute(target_clones)
__attribute__((target_clones("arch=x86-64-v4", "default")))
#endif
#endif
void pn_heap_page_fill(uint8_t *page, uint32_t page_size, uint32_t blkno, uint32_t rows,
		       uint32_t t_len)
{
	/* what pn_heap_page_init and pn_heap_place of offnums 1..rows make, in one pass (a
	 * lazily formatted device builds a page at each read of it: docs/performance.md) */
	uint32_t room = (uint32_t)PN_ALIGN8(t_len), upper = page_size;
	PN_ASSERT(t_len >= PN_TUPLE_HEADER);
	PN_ASSERT((uint64_t)rows * (room + 4u) <= page_size - PN_PAGE_HEADER);
	_Static_assert(PN_TUPLE_HEADER % 8 == 0, "a tuple's 8-byte stores end by its room");
	/* every byte stored once: the header, the line pointers, the hole zeroed, and each
	 * tuple whole (a memset of the page first was a second pass over it) */
	memset(page, 0, PN_PAGE_HEADER);
	uint32_t lower = PN_PAGE_HEADER + 4u * rows;
	memset(page + lower, 0, page_size - (uint64_t)rows * room - lower);
	for (uint32_t i = 0; i < rows; i++) {
		upper -= room;
		uint8_t *t = page + upper;
		pn_put16(page + PN_PAGE_HEADER + 4 * i, (uint16_t)upper);
		pn_put16(page + PN_PAGE_HEADER + 4 * i + 2, (uint16_t)t_len);
		pn_put32(t, 2);     /* t_xmin: frozen-ish bootstrap xid */
		pn_put32(t + 4, 0); /* t_xmax */
		pn_put32(t + 8, 0); /* t_cid */
		pn_put16(t + 12, (uint16_t)(blkno >> 16));
		pn_put16(t + 14, (uint16_t)blkno);
		pn_put16(t + 16, (uint16_t)(i + 1));
		pn_put16(t + 18, 4); /* t_infomask2: natts */
		pn_put16(t + 20, PN_HEAP_XMAX_INVALID);
		t[22] = PN_TUPLE_HEADER;
		t[23] = 0;
		/* whole 8-byte stores (a short last one was a byte loop: most of the fill's
		 * time), the last one's bytes past t_len zeroed again: they are the padding up
		 * to room, inside this tuple's own space */
		for (uint32_t j = PN_TUPLE_HEADER; j < t_len; j += 8) {
			uint64_t v = mix64(((uint64_t)blkno << 32) ^ (i << 12) ^ j);
			memcpy(t + j, &v, 8);
		}
		memset(t + t_len, 0, room - t_len);
	}
	pn_page_header_init(page, page_size, (uint16_t)lower, (uint16_t)upper);
}
