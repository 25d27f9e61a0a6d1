/*
 * device_lib.h: what the device's and the chunk store's suites share (tests/test_device.c,
 * tests/test_chunks.c): WAL bytes written and read through the device's plain operations.
 */
#ifndef PN_DEVICE_LIB_H
#define PN_DEVICE_LIB_H

#include "device.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define SEG (64u << 10)

static inline void write_at(struct pn_device *d, uint64_t off, uint8_t byte, uint32_t len)
{
	uint8_t *buf = malloc(len);
	ck_assert_ptr_nonnull(buf);
	memset(buf, byte, len);
	pn_device_format_write(d, PN_FILE_WAL, off, buf, len);
	free(buf);
}

static inline uint8_t byte_at(const struct pn_device *d, uint64_t off)
{
	uint8_t b;
	pn_device_read(d, PN_FILE_WAL, off, 1, &b);
	return b;
}

#endif
