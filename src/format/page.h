/*
 * page.h: the data page format (format layer, owned by page.c): the 24 B PostgreSQL page
 * header and its heap body (the script's fixed-length tuples and the realistic workloads'
 * variable-length ones), the visibility map's bits. Bytes only: nothing here takes the
 * engine. The btree leaves are btree.h's, SLRU pages slru.h's, what records do to pages
 * redo.h's.
 */
#ifndef PN_PAGE_H
#define PN_PAGE_H

#include "pn.h"

#define PN_PAGE_HEADER 24u
#define PN_PD_ALL_VISIBLE 0x0004u
#define PN_TUPLE_HEADER 24u
#define PN_TUPLE_LEN 104u /* tuple header + 80 B payload */
#define PN_HINT_XMIN_COMMITTED 0x0100u
#define PN_HINT_FROZEN 0x0300u
#define PN_HEAP_XMAX_INVALID 0x0800u
/* The visibility map (VM_FORKNUM): 2 bits per heap block from byte 24 of a PageInit'ed page. */
#define PN_VM_ALL_VISIBLE 0x01u
#define PN_VM_ALL_FROZEN 0x02u
static inline uint32_t pn_vm_heap_blocks(uint32_t page_size)
{
	return (page_size - PN_PAGE_HEADER) * 4u;
}

void pn_page_init(uint8_t *page, uint32_t page_size, uint32_t blkno, bool slru);
pn_lsn pn_page_lsn(const uint8_t *page);
void pn_page_set_lsn(uint8_t *page, pn_lsn lsn);
uint32_t pn_page_nitems(const uint8_t *page);
/* The hole [pd_lower, pd_upper) if the header is sane, else {0,0}. */
void pn_page_hole(const uint8_t *page, uint32_t page_size, uint16_t *off, uint16_t *len);
void pn_page_set_checksum(uint8_t *page, uint32_t page_size, uint32_t blkno);
/* True when the page verifies: all zero, or sane header (and checksum when asked). */
bool pn_page_verify(const uint8_t *page, uint32_t page_size, uint32_t blkno, bool checksums);
/* True when the page is new (all-zero header: never initialized). */
bool pn_page_is_new(const uint8_t *page);
/* Free bytes between pd_lower and pd_upper. */
uint32_t pn_page_free(const uint8_t *page);
/* Sets a hint bit on item `item` (no record). */
void pn_page_set_hint(uint8_t *page, uint32_t item);
/* Sets pd_lower, pd_upper, pd_special = page_size and pd_pagesize_version. */
void pn_page_header_init(uint8_t *page, uint32_t page_size, uint16_t lower, uint16_t upper);
/* Item `item`'s (0-based) tuple if it has at least `need` bytes inside the page, else NULL. */
uint8_t *pn_page_tuple(uint8_t *page, uint32_t page_size, uint32_t item, uint32_t need);

/*
 * Heap pages of the realistic workloads: variable-length tuples. pn_heap_page_fill()
 * formats a heap page holding `rows` tuples of t_len bytes (payload derived from blkno).
 */
void pn_heap_page_fill(uint8_t *page, uint32_t page_size, uint32_t blkno, uint32_t rows,
		       uint32_t t_len);
uint32_t pn_heap_rows_per_page(uint32_t page_size, uint32_t t_len, uint32_t fillfactor);
/* An empty heap page (PageInit), pd_lsn kept: the caller stamps it. */
void pn_heap_page_init(uint8_t *page, uint32_t page_size);
/* Stores a tuple of t_len bytes at line pointer `offnum` (1-based): returns it, or NULL
 * when it does not fit or the line pointer is in use. Unused line pointers are added up to
 * offnum. */
uint8_t *pn_heap_place(uint8_t *page, uint32_t page_size, uint32_t offnum, uint32_t t_len);

#endif
