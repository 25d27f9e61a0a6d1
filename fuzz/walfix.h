/*
 * walfix.h: makes a mutated PostgreSQL WAL segment self-consistent again (fuzz/), so that a
 * harness reaches what lies past the page headers and the CRC: the record decoder's
 * cross-checks and everything that reads its records (import --out and the replay).
 */
#ifndef PN_WALFIX_H
#define PN_WALFIX_H

#include <stddef.h>
#include <stdint.h>

/*
 * Rewrites seg (len bytes: the start of a segment; a last partial page is left alone) from
 * its own record lengths: every whole page gets a valid header (magic, info, timeline,
 * page address, the long header's segment and block sizes; XLP_FIRST_IS_CONTRECORD and
 * xlp_rem_len where a record continues onto it; the first page's continuation of a record
 * of the previous segment is kept), and each record after the first page's header and that
 * continuation, while its xl_tot_len is at least 24 and it fits in the whole pages, gets the
 * previous record's LSN as xl_prev and its right CRC-32C. The walk stops at the first
 * record that does not fit, or after an XLOG_SWITCH; what follows is left as mutated.
 */
void pn_walfix(uint8_t *seg, size_t len);

#endif
