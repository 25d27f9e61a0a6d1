/*
 * crc32c.h: CRC-32C (Castagnoli), as PostgreSQL's pg_crc32c (base layer, owned by crc32c.c):
 * the checksum of every WAL record, the control file and the other small files. Pure.
 */
#ifndef PN_CRC32C_H
#define PN_CRC32C_H

#include "pn.h"

/* init ~0, final xor ~0 (INIT_CRC32C / COMP_CRC32C / FIN_CRC32C). */
uint32_t pn_crc32c_update(uint32_t crc, const void *data, size_t len);
/* The two implementations behind pn_crc32c_update (chosen at load time), for tests and
 * benchmarks: slicing-by-8 tables, and the SSE4.2 crc32 instruction (only when available). */
uint32_t pn_crc32c_update_sw(uint32_t crc, const void *data, size_t len);
uint32_t pn_crc32c_update_hw(uint32_t crc, const void *data, size_t len);
bool pn_crc32c_hw_available(void);
static inline uint32_t pn_crc32c_init(void) { return 0xFFFFFFFFu; }
static inline uint32_t pn_crc32c_final(uint32_t crc) { return crc ^ 0xFFFFFFFFu; }
static inline uint32_t pn_crc32c(const void *data, size_t len)
{
	return pn_crc32c_final(pn_crc32c_update(pn_crc32c_init(), data, len));
}

#endif
