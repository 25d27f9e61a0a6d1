/*
 * crc32c.c: CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of every WAL
 * record (walfmt.c). Base layer (crc32c.h); no dependency beyond pn.h. Owns:
 *   - the running-state update pn_crc32c_update(): the caller starts from pn_crc32c_init()
 *     (~0) and finishes with pn_crc32c_final() (xor ~0), exactly as PostgreSQL's
 *     INIT_CRC32C / COMP_CRC32C / FIN_CRC32C, so a record's CRC can be built in two pieces
 *     (payload first, then the header's first 20 bytes);
 *   - two implementations that must agree bit for bit:
 *       software: slicing-by-8, eight 256-entry tables built once at load time;
 *       hardware: the SSE4.2 `crc32` instruction, 8 bytes per step, three streams at
 *         once over long inputs (three_way());
 *     the hardware path is chosen at load time when the CPU has SSE4.2.
 *
 * Invariant 1: for every (crc, data, len), update_sw == update_hw (tests/test_walfmt.c).
 * Invariant 2: update(update(c, a, n), a + n, m) == update(c, a, n + m) (a pure fold).
 */
#include "crc32c.h"

#include <string.h>

#define CRC32C_POLY_REFLECTED 0x82F63B78u

static uint32_t table[8][256];
static bool tables_ready;

static void build_tables(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int bit = 0; bit < 8; bit++)
			c = (c & 1) ? (c >> 1) ^ CRC32C_POLY_REFLECTED : c >> 1;
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int k = 1; k < 8; k++)
			table[k][i] = (table[k - 1][i] >> 8) ^ table[0][table[k - 1][i] & 0xFF];
	tables_ready = true;
}

static inline uint32_t load_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

uint32_t pn_crc32c_update_sw(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;

	if (__builtin_expect(!tables_ready, 0))
		build_tables();
	/* Byte steps until p is 8-aligned, so the 8-byte loop reads aligned words. */
	while (len > 0 && ((uintptr_t)p & 7) != 0) {
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xFF];
		len--;
	}
	while (len >= 8) {
		uint32_t lo = load_le32(p) ^ crc;
		uint32_t hi = load_le32(p + 4);
		crc = table[7][lo & 0xFF] ^ table[6][(lo >> 8) & 0xFF] ^
		      table[5][(lo >> 16) & 0xFF] ^ table[4][lo >> 24] ^ table[3][hi & 0xFF] ^
		      table[2][(hi >> 8) & 0xFF] ^ table[1][(hi >> 16) & 0xFF] ^ table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len > 0) {
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xFF];
		len--;
	}
	return crc;
}

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>

/*
 * Three streams at once: the crc32 instruction takes 3 cycles and starts one a cycle, so one
 * dependent chain runs at a third of its rate. A stretch of 3 * L bytes is three blocks A, B,
 * C, folded at once from crc, 0 and 0; the update is linear over GF(2) (no inversion inside:
 * init and final are the caller's), so update(c, A B C) = shift(shift(a) ^ b) ^ c with a, b,
 * c the three results and shift(x) = update(x, L zero bytes), a linear map of 32 bits kept as
 * four tables of 256 (one per byte of x), built at load time for each L of stride[].
 */
#if defined(__x86_64__)
static const uint32_t stride[2] = {2720, 336}; /* 3 * 2720 = 8160: a page less 32 bytes */
static uint32_t shift_table[2][4][256];

static void build_shift_tables(void)
{
	static const uint8_t zeros[2720];
	for (int s = 0; s < 2; s++) {
		uint32_t basis[32];
		for (int bit = 0; bit < 32; bit++)
			basis[bit] = pn_crc32c_update_sw(1u << bit, zeros, stride[s]);
		for (int k = 0; k < 4; k++)
			for (uint32_t v = 0; v < 256; v++) {
				uint32_t x = 0;
				for (int bit = 0; bit < 8; bit++)
					if (v & (1u << bit))
						x ^= basis[8 * k + bit];
				shift_table[s][k][v] = x;
			}
	}
}

static inline uint32_t shift(int s, uint32_t x)
{
	return shift_table[s][0][x & 0xFF] ^ shift_table[s][1][(x >> 8) & 0xFF] ^
	       shift_table[s][2][(x >> 16) & 0xFF] ^ shift_table[s][3][x >> 24];
}

__attribute__((target("sse4.2"))) static uint64_t three_way(int s, uint64_t crc, const uint8_t **pp,
							    size_t *len)
{
	const uint8_t *p = *pp;
	size_t l = stride[s];
	while (*len >= 3 * l) {
		uint64_t a = crc, b = 0, c = 0;
		for (size_t i = 0; i < l; i += 8) {
			uint64_t x, y, z;
			memcpy(&x, p + i, 8);
			memcpy(&y, p + l + i, 8);
			memcpy(&z, p + 2 * l + i, 8);
			a = _mm_crc32_u64(a, x);
			b = _mm_crc32_u64(b, y);
			c = _mm_crc32_u64(c, z);
		}
		crc = shift(s, shift(s, (uint32_t)a) ^ (uint32_t)b) ^ (uint32_t)c;
		p += 3 * l;
		*len -= 3 * l;
	}
	*pp = p;
	return crc;
}
#endif

__attribute__((target("sse4.2"))) static uint32_t update_sse42(uint32_t crc, const void *data,
							       size_t len)
{
	const uint8_t *p = data;

	while (len > 0 && ((uintptr_t)p & 7) != 0) {
		crc = _mm_crc32_u8(crc, *p++);
		len--;
	}
#if defined(__x86_64__)
	uint64_t crc64 = crc;
	crc64 = three_way(0, crc64, &p, &len);
	crc64 = three_way(1, crc64, &p, &len);
	while (len >= 8) {
		uint64_t word;
		memcpy(&word, p, 8);
		crc64 = _mm_crc32_u64(crc64, word);
		p += 8;
		len -= 8;
	}
	crc = (uint32_t)crc64;
#endif
	while (len >= 4) {
		uint32_t word;
		memcpy(&word, p, 4);
		crc = _mm_crc32_u32(crc, word);
		p += 4;
		len -= 4;
	}
	while (len > 0) {
		crc = _mm_crc32_u8(crc, *p++);
		len--;
	}
	return crc;
}

static bool cpu_has_sse42(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.2");
}
#else
static uint32_t update_sse42(uint32_t crc, const void *data, size_t len)
{
	return pn_crc32c_update_sw(crc, data, len);
}

static bool cpu_has_sse42(void) { return false; }
#endif

static uint32_t (*update_impl)(uint32_t, const void *, size_t) = pn_crc32c_update_sw;
static bool hw_available;

/* Runs before main (no threads yet): builds the tables and picks the implementation. */
__attribute__((constructor)) static void crc32c_setup(void)
{
	build_tables();
	hw_available = cpu_has_sse42();
	if (hw_available) {
#if defined(__x86_64__)
		build_shift_tables();
#endif
		update_impl = update_sse42;
	}
}

bool pn_crc32c_hw_available(void) { return hw_available; }

uint32_t pn_crc32c_update_hw(uint32_t crc, const void *data, size_t len)
{
	PN_ASSERT(hw_available);
	return update_sse42(crc, data, len);
}

uint32_t pn_crc32c_update(uint32_t crc, const void *data, size_t len)
{
	return update_impl(crc, data, len);
}
