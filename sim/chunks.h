/*
 * chunks.h: the chunk store beneath the simulated device (sim layer): where the bytes of a
 * file image live, and the tricks that make them cheap. None of it is the crash model
 * (device.h): every rule below changes memory and time, never a byte any image reads.
 *
 * An image of a file is sparse: a directory of leaves, each leaf PN_LEAF_CHUNKS pointers to
 * 16 KiB chunks (PN_CHUNK_SIZE); unwritten bytes read as zero and cost nothing. An entry is
 * NULL (unwritten), PN_CHUNK_REMOVED (device.h DV1) or a chunk.
 *
 *   CK1 Chunk bytes come from a pool of huge-page slabs that only grows, to the most chunks
 *       alive at once, and goes back to a free list, not to malloc (pn_chunks_pool_bytes
 *       counts what is handed out). One pool per process: the simulator is
 *       single-threaded (check --jobs forks).
 *   CK2 Copy on write: a chunk may be shared by several images (refs > 1): crash states and
 *       recovering worlds share every chunk they do not write, so a crash image costs a
 *       table copy (pn_image_copy), and a durable image that holds the bytes of the read
 *       image's chunk at the same place holds that chunk (pn_image_share, checked by
 *       content). A write to a shared chunk copies it first, filling only the bytes the
 *       write does not cover.
 *   CK3 Lazy extents (struct pn_lazy; `penumbra run`'s device, docs/performance.md): a file
 *       may be lazy below an end offset: a chunk of it that was never written reads as the
 *       bytes the builder gives (what the format would have put there), not as zeros, and
 *       the first write to such a chunk starts it from those bytes. A fresh data file costs
 *       no memory until written, and every read, write, hash and copy sees the bytes an
 *       eagerly formatted image holds (a chunk the builder says holds no formatted byte is
 *       unwritten). A write that creates a chunk of a lazy file builds only the parts of it
 *       (16 of PN_CHUNK_SIZE / 16 bytes each) that it covers in part; the parts it does not
 *       touch stay unbuilt (`unbuilt`: their bytes are garbage, never read); a chunk whose
 *       writes all lie in one half holds bytes for that half alone (`half`: its data is
 *       half a slot of which the other half belongs to another chunk), until a write
 *       reaches the other half; each reader (pn_lazy_read, pn_lazy_chunk) takes the
 *       builder's bytes where a part is unbuilt. A chunk with unbuilt parts is never shared
 *       (refs 1). pn_image_held counts real chunks only.
 *   CK4 Lent halves (pn_chunks_lend; `penumbra run`'s data writes, env.h pn_env_fast
 *       write_buf): for a write of one HALF (8 KiB) at an offset aligned to it, below a lazy
 *       end, whose chunk is absent or a half chunk of the same half (refs 1), the store may
 *       lend half a slot of its pool, the half of the write's parity. pn_chunks_take_lent
 *       makes that memory the chunk's bytes, as a new half chunk (its other half unbuilt,
 *       as a copied write leaves it) or in place of a half chunk's own half (which goes
 *       back to the pool); where it cannot any more (the chunk became whole or holds the
 *       other half, the offset has the other parity, a removed chunk) it says so and the
 *       caller copies the bytes and gives the half back (pn_chunks_lend_back). Either way
 *       the chunk holds the same bytes at the same offsets and the same unbuilt parts as
 *       after a copied write.
 *   CK5 Serials: a chunk's `serial` is a number no chunk of the process had before, given
 *       whenever its bytes may change (made, copied for a write, written, built, lent), so
 *       two reads of chunks of one serial see the same bytes. pn_chunk_hash keeps the hash
 *       of a whole chunk's bytes with the serial it was taken at: a durable chunk's bytes
 *       are hashed once for all the crash images and digests that share it (device.h
 *       DV10), and what is keyed by serials (device.h DV11) needs no bytes compared.
 */
#ifndef PN_CHUNKS_H
#define PN_CHUNKS_H

#include "env.h"

#define PN_CHUNK_SIZE 16384u
#define PN_LEAF_CHUNKS 128u /* 2 MiB of file per leaf */

/* A chunk's bytes are their own allocation of exactly PN_CHUNK_SIZE (no allocator size-class
 * slack), or of its one half (CK3, `half`). */
struct pn_chunk {
	uint32_t refs;    /* CK2: images pointing at it */
	uint16_t unbuilt; /* CK3: bit i set = part i (PN_CHUNK_SIZE / 16 bytes) not yet built */
	uint16_t half;    /* CK3: 1 or 2 = data holds only the low or high half's bytes */
	uint8_t *data;
	uint64_t serial;      /* CK5: names the bytes data holds now */
	uint64_t hash_serial; /* CK5: the serial whose bytes `hash` is of (0: none) */
	uint64_t hash;
};

struct pn_leaf {
	uint32_t real;    /* entries that point at a chunk */
	uint32_t removed; /* entries that are PN_CHUNK_REMOVED */
	struct pn_chunk *chunk[PN_LEAF_CHUNKS];
};

struct pn_file_image {
	struct pn_leaf **leaves; /* NULL = unwritten, or the removed leaf */
	uint64_t nleaves;
	uint64_t chunks, chunks_peak; /* chunks this image points at, now and at most */
};

/* The mark of a removed entry (device.h DV1), compared by identity only. */
extern struct pn_chunk pn_chunk_removed_mark;
#define PN_CHUNK_REMOVED (&pn_chunk_removed_mark)

/* CK3: the bytes [off, off + len) of file f as formatted (zeros where nothing was); false
 * when the format wrote no byte there. */
typedef bool (*pn_lazy_fn)(void *ctx, enum pn_file f, uint64_t off, uint32_t len, uint8_t *out);
/* CK3: one lazy file: its builder, and the end below which it is lazy (0: not lazy). */
struct pn_lazy {
	pn_lazy_fn fn;
	void *ctx;
	enum pn_file f;
	uint64_t end;
};

void pn_image_free(struct pn_file_image *im);
/* CK5: XXH3 of the bytes of chunk c (whole: no unbuilt part, not a half chunk), taken once
 * per serial. */
uint64_t pn_chunk_hash(const struct pn_chunk *c);
/* The entry at chunk index idx: NULL (unwritten), PN_CHUNK_REMOVED, or a chunk. */
const struct pn_chunk *pn_image_chunk(const struct pn_file_image *im, uint64_t idx);
/* Reads as zeros where unwritten; a read of a removed chunk is a broken invariant. */
void pn_image_read(const struct pn_file_image *im, uint64_t off, uint32_t len, uint8_t *out);
/* CK2: writes a private copy of each chunk it touches; a removed chunk is a broken invariant. */
void pn_image_write(struct pn_file_image *im, uint64_t off, const uint8_t *buf, uint32_t len);
/* CK2: dst becomes a copy of src, sharing its chunks (each leaf is copied: a table copy). */
void pn_image_copy(const struct pn_file_image *src, struct pn_file_image *dst);
/* CK2: the chunks of [off, off + len) in dur holding the bytes of cur's become cur's. */
void pn_image_share(const struct pn_file_image *cur, struct pn_file_image *dur, uint64_t off,
		    uint64_t len);
/* Chunk idx becomes removed (its bytes freed) or, from removed, unwritten. */
void pn_image_mark(struct pn_file_image *im, uint64_t idx, bool remove);
/* Bytes of chunks the image holds: now, or the most it held (peak). */
uint64_t pn_image_held(const struct pn_file_image *im, bool peak);

/* CK3: reads of lazy file lz->f's image im: unwritten chunks below lz->end and unbuilt
 * parts as the builder's bytes. */
void pn_lazy_read(const struct pn_lazy *lz, const struct pn_file_image *im, uint64_t off,
		  uint32_t len, uint8_t *out);
/* CK3: before a write of [off, off + len) to im: the chunks it touches become real, their
 * parts it covers in part built. */
void pn_lazy_fill(const struct pn_lazy *lz, struct pn_file_image *im, uint64_t off, uint32_t len);
/* CK3: chunk idx as built into out, when it reads otherwise than its own bytes (unwritten
 * below the end with formatted bytes, or with unbuilt parts); false when it does not. */
bool pn_lazy_chunk(const struct pn_lazy *lz, const struct pn_file_image *im, uint64_t idx,
		   uint8_t out[PN_CHUNK_SIZE]);

/* CK4: half a slot for a write of len at off to lazy file lz->f's image (*half: 1 or 2, as
 * in pn_chunk), or NULL when the chunk could not take it in place. */
uint8_t *pn_chunks_lend(const struct pn_lazy *lz, const struct pn_file_image *im, uint64_t off,
			uint32_t len, uint32_t *half);
/* CK4: installs lent buf as the bytes of [off, off + len); false (nothing done) when the
 * chunk cannot take it any more: the caller copies and gives it back. */
bool pn_chunks_take_lent(const struct pn_lazy *lz, struct pn_file_image *im, uint64_t off,
			 uint32_t len, uint8_t *buf, uint32_t half);
void pn_chunks_lend_back(uint8_t *buf, uint32_t half);

/* CK1: bytes of distinct chunks alive in this process (every device and image; CK2 shares
 * count once). */
uint64_t pn_chunks_pool_bytes(void);

#endif
