/*
 * device.c: the simulated device (sim layer). Format and crash model in device.h.
 */
#include "device.h"

#include <stdlib.h>
#include <string.h>

#include "pn.h"

void pn_device_init(struct pn_device *d, bool track, uint32_t sector_size)
{
	memset(d, 0, sizeof(*d));
	d->track = track;
	d->sector_size = sector_size;
}

static void chunk_put(struct pn_chunk *c)
{
	if (c && --c->refs == 0)
		free(c);
}

static void image_free(struct pn_file_image *im)
{
	for (uint64_t i = 0; i < im->nchunks; i++)
		chunk_put(im->chunks[i]);
	free(im->chunks);
	im->chunks = NULL;
	im->nchunks = 0;
}

void pn_device_free(struct pn_device *d)
{
	for (int f = 0; f < PN_FILE_COUNT; f++) {
		image_free(&d->cur[f]);
		image_free(&d->dur[f]);
	}
	for (uint32_t i = 0; i < d->nunsynced; i++)
		free(d->unsynced[i].data);
	free(d->unsynced);
	memset(d, 0, sizeof(*d));
}

static void grow(struct pn_file_image *im, uint64_t idx)
{
	if (idx < im->nchunks)
		return;
	uint64_t n = PN_MAX(idx + 1, im->nchunks * 2);
	struct pn_chunk **c = realloc(im->chunks, n * sizeof(*c));
	PN_ASSERT(c != NULL);
	memset(c + im->nchunks, 0, (n - im->nchunks) * sizeof(*c));
	im->chunks = c;
	im->nchunks = n;
}

/* The chunk at idx, private to this image (copied first if shared). */
static uint8_t *chunk_for(struct pn_file_image *im, uint64_t idx)
{
	grow(im, idx);
	struct pn_chunk *c = im->chunks[idx];
	if (!c) {
		c = calloc(1, sizeof(*c));
		PN_ASSERT(c != NULL);
		c->refs = 1;
		im->chunks[idx] = c;
	} else if (c->refs > 1) {
		struct pn_chunk *copy = malloc(sizeof(*copy));
		PN_ASSERT(copy != NULL);
		memcpy(copy->data, c->data, PN_CHUNK_SIZE);
		copy->refs = 1;
		c->refs--;
		im->chunks[idx] = c = copy;
	}
	return c->data;
}

static void image_write(struct pn_file_image *im, uint64_t off, const uint8_t *buf, uint32_t len)
{
	while (len) {
		uint64_t idx = off / PN_CHUNK_SIZE;
		uint32_t in = (uint32_t)(off % PN_CHUNK_SIZE), n = PN_MIN(len, PN_CHUNK_SIZE - in);
		memcpy(chunk_for(im, idx) + in, buf, n);
		off += n;
		buf += n;
		len -= n;
	}
}

static void image_read(const struct pn_file_image *im, uint64_t off, uint32_t len, uint8_t *out)
{
	while (len) {
		uint64_t idx = off / PN_CHUNK_SIZE;
		uint32_t in = (uint32_t)(off % PN_CHUNK_SIZE), n = PN_MIN(len, PN_CHUNK_SIZE - in);
		if (idx < im->nchunks && im->chunks[idx])
			memcpy(out, im->chunks[idx]->data + in, n);
		else
			memset(out, 0, n);
		off += n;
		out += n;
		len -= n;
	}
}

void pn_device_read(const struct pn_device *d, enum pn_file f, uint64_t off, uint32_t len,
		    uint8_t *out)
{
	image_read(&d->cur[f], off, len, out);
}

void pn_device_read_dur(const struct pn_device *d, enum pn_file f, uint64_t off, uint32_t len,
			uint8_t *out)
{
	image_read(&d->dur[f], off, len, out);
}

void pn_device_format_write(struct pn_device *d, enum pn_file f, uint64_t off, const uint8_t *buf,
			    uint32_t len)
{
	image_write(&d->cur[f], off, buf, len);
	if (d->track)
		image_write(&d->dur[f], off, buf, len);
	d->version++;
	d->dur_version++;
}

void pn_device_write(struct pn_device *d, const struct pn_io *io, uint64_t event)
{
	image_write(&d->cur[io->file], io->offset, io->buf, io->len);
	d->bytes_written[io->file] += io->len;
	d->version++;
	if (!d->track)
		return;
	if (d->nunsynced == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 64;
		d->unsynced = realloc(d->unsynced, d->cap * sizeof(*d->unsynced));
		PN_ASSERT(d->unsynced != NULL);
	}
	struct pn_unsynced *u = &d->unsynced[d->nunsynced++];
	memset(u, 0, sizeof(*u));
	u->file = io->file;
	u->offset = io->offset;
	u->len = io->len;
	u->data = malloc(io->len);
	PN_ASSERT(u->data != NULL);
	memcpy(u->data, io->buf, io->len);
	u->seq = ++d->seq;
	u->event = event;
	u->io_index = io->index;
	u->why = io->why;
	u->page = io->page;
	u->slot = io->slot;
}

void pn_device_write_done(struct pn_device *d, uint32_t io_index)
{
	for (uint32_t i = d->nunsynced; i-- > 0;) {
		struct pn_unsynced *u = &d->unsynced[i];
		if (!u->completed && u->io_index == io_index) {
			u->completed = true;
			u->completed_seq = ++d->seq;
			return;
		}
	}
}

uint64_t pn_device_fsync_start(struct pn_device *d)
{
	return ++d->seq;
}

void pn_device_fsync_done(struct pn_device *d, enum pn_file f, uint64_t mark)
{
	uint32_t keep = 0;
	for (uint32_t i = 0; i < d->nunsynced; i++) {
		struct pn_unsynced *u = &d->unsynced[i];
		if (u->file == f && u->completed && u->completed_seq < mark) {
			d->version++;
			d->dur_version++;
			image_write(&d->dur[u->file], u->offset, u->data, u->len);
			free(u->data);
			continue;
		}
		d->unsynced[keep++] = *u;
	}
	d->nunsynced = keep;
}

/* dst becomes a copy of src, sharing its chunks. */
static void image_copy(const struct pn_file_image *src, struct pn_file_image *dst)
{
	image_free(dst);
	if (!src->nchunks)
		return;
	dst->chunks = malloc(src->nchunks * sizeof(*dst->chunks));
	PN_ASSERT(dst->chunks != NULL);
	dst->nchunks = src->nchunks;
	for (uint64_t i = 0; i < src->nchunks; i++) {
		dst->chunks[i] = src->chunks[i];
		if (dst->chunks[i])
			dst->chunks[i]->refs++;
	}
}

uint32_t pn_device_unit(const struct pn_device *d, uint32_t len, uint32_t *nunits)
{
	uint32_t sectors = (len + d->sector_size - 1) / d->sector_size;
	uint32_t per = (sectors + 63) / 64;
	uint32_t unit = per * d->sector_size;
	*nunits = (len + unit - 1) / unit;
	return unit;
}

void pn_device_crash_image(const struct pn_device *d, const struct pn_write_fate *fates,
			   struct pn_device *out)
{
	PN_ASSERT(d->track);
	for (int f = 0; f < PN_FILE_COUNT; f++)
		image_copy(&d->dur[f], &out->cur[f]);
	for (uint32_t i = 0; i < d->nunsynced; i++) {
		const struct pn_unsynced *u = &d->unsynced[i];
		if (fates[i].fate == PN_FATE_LOST)
			continue;
		if (fates[i].fate == PN_FATE_PERSISTED) {
			image_write(&out->cur[u->file], u->offset, u->data, u->len);
			continue;
		}
		uint32_t nunits, unit = pn_device_unit(d, u->len, &nunits);
		for (uint32_t s = 0; s < nunits; s++)
			if (fates[i].sectors & (1ull << s))
				image_write(&out->cur[u->file], u->offset + (uint64_t)s * unit,
					    u->data + (uint64_t)s * unit, PN_MIN(unit, u->len - s * unit));
	}
	if (out->track)
		for (int f = 0; f < PN_FILE_COUNT; f++)
			image_copy(&out->cur[f], &out->dur[f]);
}

void pn_device_copy(const struct pn_device *src, struct pn_device *dst)
{
	for (int f = 0; f < PN_FILE_COUNT; f++) {
		image_copy(&src->cur[f], &dst->cur[f]);
		if (dst->track)
			image_copy(&src->cur[f], &dst->dur[f]);
	}
}
