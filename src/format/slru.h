/*
 * slru.h: SLRU (commit status) pages (format layer, owned by slru.c). Bytes only.
 */
#ifndef PN_SLRU_H
#define PN_SLRU_H

#include "pn.h"

/* Commit-status bits of xid on an SLRU page (2 bits per xid). */
void pn_slru_set(uint8_t *page, uint32_t page_size, bool header, uint32_t xid);
/* The SLRU page (of slru_pages) holding xid's bits. */
uint32_t pn_slru_page_of(uint32_t xid, uint32_t page_size, bool header, uint32_t slru_pages);

#endif
