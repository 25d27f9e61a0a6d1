/*
 * prng.h: the simulator's PRNG (sim layer): xoshiro256** seeded through splitmix64. One
 * root seed is split into named streams (workload, schedule, I/O latencies), so changing
 * how one component draws numbers does not shift another's.
 */
#ifndef PN_PRNG_H
#define PN_PRNG_H

#include <stdint.h>

struct pn_prng {
	uint64_t s[4];
};

enum pn_stream {
	PN_STREAM_WORKLOAD = 1,
	PN_STREAM_SCHEDULE = 2,
	PN_STREAM_IO = 3,
	PN_STREAM_CRASH = 4
};

static inline uint64_t pn_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline void pn_prng_seed(struct pn_prng *r, uint64_t seed, uint64_t stream, uint64_t run)
{
	uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ull) ^ (run * 0x8cb92ba72f3d8dd7ull);
	for (int i = 0; i < 4; i++)
		r->s[i] = pn_splitmix64(&x);
}

static inline uint64_t pn_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t pn_prng_next(struct pn_prng *r)
{
	uint64_t *s = r->s;
	uint64_t result = pn_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = pn_rotl(s[3], 45);
	return result;
}

/* Uniform in [lo, hi]. */
static inline uint64_t pn_prng_range(struct pn_prng *r, uint64_t lo, uint64_t hi)
{
	return lo + pn_prng_next(r) % (hi - lo + 1);
}

#endif
