/*
 * slru.c: SLRU (commit status) pages (format layer, slru.h): 2 bits per xid (bit 0 of a
 * pair is TRANSACTION_STATUS_COMMITTED); with slru_headers the page also starts with the
 * 24 B page header (LSN, checksum; pd_lower = pd_upper = page_size: no hole), written the
 * first time a bit is set on a page without one.
 */
#include "slru.h"

#include "page.h"

uint32_t pn_slru_page_of(uint32_t xid, uint32_t page_size, bool header, uint32_t slru_pages)
{
	uint32_t per_page = (page_size - (header ? PN_PAGE_HEADER : 0)) * 4u;
	PN_ASSERT(page_size > PN_PAGE_HEADER && slru_pages > 0);
	return (xid / per_page) % slru_pages;
}

void pn_slru_set(uint8_t *page, uint32_t page_size, bool header, uint32_t xid)
{
	uint32_t base = header ? PN_PAGE_HEADER : 0;
	uint32_t per_page = (page_size - base) * 4u;
	uint32_t bit = (xid % per_page) * 2u;
	PN_ASSERT(page_size > PN_PAGE_HEADER && base + bit / 8 < page_size);
	if (header && pn_get16(page + 12) == 0)
		pn_page_header_init(page, page_size, (uint16_t)page_size, (uint16_t)page_size);
	page[base + bit / 8] |= (uint8_t)(1u << (bit % 8)); /* TRANSACTION_STATUS_COMMITTED */
}
