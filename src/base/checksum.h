/*
 * checksum.h: the data-page checksum (base layer, owned by checksum.c), bit-compatible with
 * PostgreSQL's pg_checksum_page(). Pure.
 */
#ifndef PN_CHECKSUM_H
#define PN_CHECKSUM_H

#include "pn.h"

/* Over page_size bytes (pd_checksum taken as 0), xor blkno, (sum % 65535) + 1. page_size
 * must be a multiple of 128. */
uint16_t pn_page_checksum(const uint8_t *page, uint32_t page_size, uint32_t blkno);

#endif
