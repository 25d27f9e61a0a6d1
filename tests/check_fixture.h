/*
 * check_fixture.h: what the Check suites' fixtures share: an assertion for hot loops and a
 * deterministic xorshift stream for test data.
 */
#ifndef PN_CHECK_FIXTURE_H
#define PN_CHECK_FIXTURE_H

#include <check.h>
#include <stdint.h>

/* For hot loops: ck_assert_* reports a mark point to the runner (a pipe write) per call. */
#define EXPECT(cond)                                                                   \
	do {                                                                           \
		if (!(cond))                                                           \
			ck_abort_msg("%s:%d: expected %s", __FILE__, __LINE__, #cond); \
	} while (0)

/* xorshift32: the next value of the stream *s (a nonzero seed) */
static inline uint32_t next_rand(uint32_t *s)
{
	uint32_t x = *s;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

#endif
