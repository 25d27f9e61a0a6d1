/*
 * device.h: the simulated device and its crash model (sim layer; docs/protocol.md sec. 3).
 *
 * Each file is sparse: a directory of leaves, each leaf PN_LEAF_CHUNKS pointers to 16 KiB
 * chunks (PN_CHUNK_SIZE); unwritten bytes read as zero and cost nothing. With crash
 * tracking on, the device keeps two images: `cur`, what reads see, and `dur`, what survives
 * a crash for sure, plus the list of unsynced writes (with their bytes) between them:
 *   - a write is applied to cur when dispatched and listed as unsynced;
 *   - an fsync covers the writes to its file that had completed when it was dispatched;
 *     when it completes, those are applied to dur and dropped from the list;
 *   - at a crash each unsynced write is lost, persisted, or torn (some of its units new,
 *     the rest as before); pn_device_crash_image() builds that state.
 * Without tracking (cost runs) only cur exists.
 *
 * Removed regions (WAL segments the engine recycled, env.h `wal_segment`):
 *   D1 pn_device_remove() frees the chunks of a range in both images; from then on they
 *      are REMOVED, and a read or write that touches a removed chunk is a broken invariant
 *      (PN_ASSERT): the engine removes only WAL that no recovery can need.
 *   D2 pn_device_create() turns the removed chunks of a range back into unwritten ones
 *      (zeros), in both images at once (a new segment file is created durably); chunks that
 *      still hold bytes keep them, as a recycled PostgreSQL segment keeps its stale bytes.
 *   D3 Neither changes `version` or `dur_version`: no reader can see the difference.
 * So the memory a file holds is what was written and not removed, whatever the file's
 * nominal size (pn_device_held()).
 *
 * D4 With tracking, a chunk of dur that holds the same bytes as cur's chunk at the same place
 *    is that chunk (shared copy-on-write, refs 2), checked by content after each format
 *    write and each write made durable: synced bytes are held once, not once per image.
 *    Sharing changes no byte any image reads.
 *
 * Tearing (pn_device_unit):
 *   D5 The device writes each aligned block of `atomic_unit` bytes atomically: a torn write
 *      is cut only at multiples of atomic_unit in the file (the scenario's
 *      storage.sector_size, or crash.atomic_unit when larger). A write's units are the
 *      aligned blocks it touches, grouped in runs of consecutive blocks so that it has at
 *      most 64; a write that lies within one block is one unit and never tears.
 *
 * Read tracking (the checker's derivation, docs/checker.md "Derived crash states"):
 *   D6 With `reads` set, every range read from cur (pn_device_read: the engine's synchronous
 *      reads and the I/O path's dispatched reads alike, sim/world.c) is appended to it, in
 *      order, unmerged. It is the only way reads leave the device: what recovery computes is
 *      a function of these bytes (and the seeds). With `writes` set, every range written
 *      to cur (pn_device_write, pn_device_format_write) is appended to it alike, and of a
 *      read only the parts that no range written before it covers are appended (D11).
 *      Tracking changes no byte read or written.
 *
 * Comparing crash images (the checker's derivation):
 *   D7 Every crash image of one device is its durable image with the kept units of its
 *      unsynced writes laid over it, in list order (pn_device_crash_image). Two fates of a
 *      write that keep the same units (LOST and TORN with no unit new; PERSISTED and TORN
 *      with every unit new) lay the same bytes (pn_device_fate_same). So two crash images
 *      can differ only inside writes whose fates differ, and pn_device_crash_same compares
 *      only there, with neither image built.
 *
 * Lazy extents (pn_device_set_lazy; `penumbra run`'s device, docs/performance.md):
 *   D8 A file may be lazy below an end offset: a chunk of it that was never written reads
 *      as the bytes the builder gives (what the format would have put there: the engine's
 *      pn_engine_lazy_read, the workload's page_init_fixed), not as zeros, and the first
 *      write to such a chunk starts it from those bytes. So a fresh data file costs no
 *      memory until written, and every read, write and pn_device_hash sees the bytes an
 *      eagerly formatted device holds (a chunk the builder says holds no formatted byte
 *      is unwritten, as the format left it). Only untracked devices take lazy extents
 *      (PN_ASSERT): the crash model and the checker's worlds see real chunks alone;
 *      pn_device_copy builds the lazy chunks into the copy (real chunks there).
 *      pn_device_held counts real chunks only.
 *      A write that creates a chunk of a lazy file builds only the parts of it (16 of
 *      PN_CHUNK_SIZE / 16 bytes each) that it covers in part; the parts it does not touch
 *      stay unbuilt (the chunk's `unbuilt` mask: their bytes are garbage, never read); a
 *      chunk whose writes all lie in one half holds bytes for that half alone (`half`:
 *      its data is a whole slot of which the other half belongs to another chunk), until
 *      a write reaches the other half; and
 *      each reader of chunk bytes (a read, pn_device_hash, pn_device_copy) takes the
 *      builder's bytes there, as for an unwritten chunk; a later write builds or covers
 *      the parts it touches. So the other page of a chunk is built only if something
 *      reads it. A chunk with unbuilt parts is never shared (refs 1: pn_device_copy gives
 *      the copy built chunks), and tracked devices have none.
 *
 * Write-only files (pn_device_set_sink; `penumbra run`'s WAL, docs/performance.md):
 *   D9 An untracked device may keep none of a file's bytes: a write to it is counted
 *      (bytes_written, D6's write log) and dropped, and reading it, copying the device or
 *      hashing it is a broken invariant (PN_ASSERT). For a run that never reads the file
 *      back: `run` without --twice, nothing crashes, and no page server reads the WAL.
 *      With no observer of the records either, the engine builds no WAL bytes at all (env.h
 *      wal_unread, wal.c W7): a write to the sink then has no buffer.
 *
 * Summarized reads (env.h `read_summary`; the checker's derivation):
 *   D10 pn_device_read_summary reads a range of cur into the device's own buffer and hands
 *      the caller only a summary of it (struct pn_summary: a pure function of the bytes and
 *      its arguments, held by value), never the bytes. With `reads`, `writes` and
 *      `summaries` all set and no write logged so far meeting the range, it is appended to
 *      `summaries` as (range, summary, value) instead of to `reads`; otherwise (recovery
 *      wrote there first, or summaries are not tracked) it is logged as a D6 byte range.
 *      So every summarized read's bytes are those of the crash image recovery started
 *      from, and what recovery computes is a function of its D6 bytes and these values:
 *      pn_device_crash_summary_same takes a summarized read as the same under other fates
 *      when the bytes are (D7) or the summary of the other crash image equals the value.
 *      A caller that needs some of the bytes reads them with an ordinary read (D6).
 *
 * A tracked run's own bytes (the checker's derivation):
 *   D11 With `reads` and `writes` both set, a read (pn_device_read, and a summarized read
 *      logged as ranges) appends to `reads` only its parts that no range already in
 *      `writes` covers, split around the writes (none when they cover all of it). Each
 *      byte a read returns is the byte of the last write logged there before it or, with
 *      none, the image's the run started from (writes change cur at dispatch, when they
 *      are logged; D1/D2 only ever give zeros). So `reads` holds exactly the bytes of the
 *      starting image the run read, and what it wrote is a function of earlier reads: a
 *      run whose `reads` ranges hold the same bytes in another image reads the same bytes
 *      everywhere (umbra's redo reads back the pages it evicted to their shift targets).
 *
 * Lent writes (pn_device_lend; `penumbra run`'s data writes, env.h write_buf):
 *   D12 An untracked device may lend the engine, for a data write of one HALF (8 KiB) at an
 *      offset aligned to it, below the file's lazy end (D8), whose chunk is absent or a half
 *      chunk of the same half (refs 1), half a slot of its pool: the half of the write's
 *      parity (a half chunk's bytes are at data + (half - 1) * HALF). The engine puts the
 *      write's bytes there at issue and no longer reads them. At dispatch,
 *      pn_device_write_lent makes that memory the chunk's bytes, as a new half chunk (its
 *      other half unbuilt, as a copied write leaves it) or in place of a half chunk's own
 *      half (which goes back to the pool); where it cannot any more (the chunk became
 *      whole or holds the other half, the offset bound at dispatch has the other parity, a
 *      sink file, a REMOVED chunk) it copies the bytes as pn_device_write does and gives the
 *      half back, and a write that never reaches dispatch gives it back too (the world,
 *      when freed). Either way the chunk holds the same bytes at the same offsets and the
 *      same unbuilt parts as after a copied write, so no read, hash, copy or count
 *      (`version`, bytes_written, D6's log) can tell; the pool holds the same memory once
 *      the write is dispatched. Tracked devices never lend: their writes keep their copies
 *      and unsynced lists.
 */
#ifndef PN_DEVICE_H
#define PN_DEVICE_H

#include "env.h"

#define PN_CHUNK_SIZE 16384u
#define PN_LEAF_CHUNKS 128u /* 2 MiB of file per leaf */

/* A chunk may be shared by several images (copy-on-write): crash states and recovering
 * worlds share every chunk they do not write, so a crash image costs a table copy. The
 * bytes are their own allocation of exactly PN_CHUNK_SIZE (no allocator size-class slack),
 * or of its one half (D8, `half`). */
struct pn_chunk {
	uint32_t refs;
	uint16_t unbuilt; /* D8: bit i set = part i (PN_CHUNK_SIZE / 16 bytes) not yet built */
	uint16_t half;    /* D8: 1 or 2 = data holds only the low or high half's bytes */
	uint8_t *data;
};

struct pn_leaf {
	uint32_t real;    /* entries that point at a chunk */
	uint32_t removed; /* entries that are REMOVED */
	struct pn_chunk *chunk[PN_LEAF_CHUNKS];
};

struct pn_file_image {
	struct pn_leaf **leaves; /* NULL = unwritten, or the REMOVED leaf */
	uint64_t nleaves;
	uint64_t chunks, chunks_peak; /* chunks this image points at, now and at most */
};

struct pn_unsynced {
	enum pn_file file;
	uint64_t offset;
	uint32_t len;
	uint8_t *data;
	uint64_t seq;      /* dispatch order */
	uint64_t event;    /* world event number of its dispatch */
	uint32_t io_index; /* the engine I/O, while in flight */
	bool completed;
	uint64_t completed_seq; /* device sequence number of its completion */
	uint32_t why;           /* enum pn_io_why, for traces */
	uint32_t page, slot;
};

/* D6: ranges read from or written to cur. */
struct pn_range {
	uint32_t file; /* enum pn_file */
	uint32_t len;
	uint64_t off;
};
/* Whether range r meets [off, off + len) of file f. */
static inline bool pn_range_meets(const struct pn_range *r, uint32_t f, uint64_t off, uint64_t len)
{
	return r->file == f && r->off < off + len && off < r->off + r->len;
}
struct pn_range_log {
	struct pn_range *r;
	uint32_t n, cap;
};

/* D10: a summarized read and its value, as logged. */
struct pn_summary_read {
	uint32_t file; /* enum pn_file */
	uint32_t len;
	uint64_t off;
	struct pn_summary s;
	struct pn_summary_value v;
};
struct pn_summary_log {
	struct pn_summary_read *r;
	uint32_t n, cap;
};

/* D8: the bytes [off, off + len) of file f as formatted (zeros where nothing was); false
 * when the format wrote no byte there. */
typedef bool (*pn_device_lazy_fn)(void *ctx, enum pn_file f, uint64_t off, uint32_t len,
				  uint8_t *out);

struct pn_device {
	bool track;
	pn_device_lazy_fn lazy; /* D8: NULL = no lazy extents */
	void *lazy_ctx;
	uint64_t lazy_end[PN_FILE_COUNT];    /* D8: file f is lazy below lazy_end[f] */
	bool sink[PN_FILE_COUNT];            /* D9: file f's writes are dropped */
	struct pn_range_log *reads, *writes; /* D6: NULL = not tracked */
	struct pn_summary_log *summaries;    /* D10: NULL = logged as D6 byte ranges */
	uint8_t *summary_buf;                /* D10: the bytes a summary is taken of */
	uint32_t summary_cap;
	uint32_t atomic_unit; /* D5: bytes written atomically, at aligned offsets */
	struct pn_file_image cur[PN_FILE_COUNT];
	struct pn_file_image dur[PN_FILE_COUNT];
	struct pn_unsynced *unsynced;
	uint32_t nunsynced, cap;
	uint64_t seq;
	uint64_t version;     /* changes whenever a crash could leave a different state */
	uint64_t dur_version; /* changes whenever the durable image changes */
	uint64_t bytes_written[PN_FILE_COUNT];
	uint64_t lent_taken, lent_copied; /* D12: lent writes installed, and copied */
};

void pn_device_init(struct pn_device *d, bool track, uint32_t atomic_unit);
/* D8: file f's unwritten chunks below end read as fn's bytes (d untracked). */
void pn_device_set_lazy(struct pn_device *d, enum pn_file f, uint64_t end, pn_device_lazy_fn fn,
			void *ctx);
/* D9: file f keeps none of its writes (d untracked; nothing may read f from here on). */
void pn_device_set_sink(struct pn_device *d, enum pn_file f);
void pn_device_free(struct pn_device *d);
/* Every byte the device holds (cur, dur, unsynced writes) and where, mixed into seed. */
uint64_t pn_device_hash(const struct pn_device *d, uint64_t seed);
void pn_device_read(const struct pn_device *d, enum pn_file f, uint64_t off, uint32_t len,
		    uint8_t *out);
/* D10: the summary s of [off, off + len) of file f (cur), logged as a summary or a range. */
struct pn_summary_value pn_device_read_summary(struct pn_device *d, enum pn_file f, uint64_t off,
					       uint32_t len, const struct pn_summary *s);
/* Reads the durable image (crash tracking on). */
void pn_device_read_dur(const struct pn_device *d, enum pn_file f, uint64_t off, uint32_t len,
			uint8_t *out);
/* Applies a write at dispatch (cur; listed as unsynced when tracking). */
void pn_device_write(struct pn_device *d, const struct pn_io *io, uint64_t event);
void pn_device_write_done(struct pn_device *d, uint32_t io_index);
/* D12: half a slot for the bytes of a write of len at off of file f, lent to the caller
 * (the bytes at the pointer; *half as in pn_chunk), or NULL when the chunk could not take it
 * in place. pn_device_write_lent writes it at dispatch (io->buf that pointer, io->lent), and
 * a write never dispatched gives it back (pn_device_lend_back). */
uint8_t *pn_device_lend(struct pn_device *d, enum pn_file f, uint64_t off, uint32_t len,
			uint32_t *half);
void pn_device_write_lent(struct pn_device *d, const struct pn_io *io, uint32_t half,
			  uint64_t event);
void pn_device_lend_back(uint8_t *buf, uint32_t half);
/* An fsync was dispatched: returns its mark. When it completes, every write to its file
 * that completed before the mark becomes durable (whichever fsync completes first). */
uint64_t pn_device_fsync_start(struct pn_device *d);
void pn_device_fsync_done(struct pn_device *d, enum pn_file f, uint64_t mark);
/* A direct durable write (formatting a fresh device). */
void pn_device_format_write(struct pn_device *d, enum pn_file f, uint64_t off, const uint8_t *buf,
			    uint32_t len);

/* D5: the tearing units of a write of len bytes at off: sets *nunits (1 to 64) and returns
 * the size of a unit (atomic_unit, or a multiple of it when the write touches more than 64
 * aligned blocks); the first and last unit may be shorter (pn_device_unit_span). */
uint32_t pn_device_unit(const struct pn_device *d, uint64_t off, uint32_t len, uint32_t *nunits);
/* The bytes of unit i of that write, as an offset into the write (*at) and a length. */
uint32_t pn_device_unit_span(const struct pn_device *d, uint64_t off, uint32_t len, uint32_t i,
			     uint32_t *at);

/* What happens to one unsynced write at a crash. */
enum pn_fate { PN_FATE_LOST, PN_FATE_PERSISTED, PN_FATE_TORN };
struct pn_write_fate {
	enum pn_fate fate;
	uint64_t sectors; /* PN_FATE_TORN: bit i set = unit i of the write is new */
};
/* Builds into `out` (a fresh, untracked-or-tracked device) the durable state plus the fates
 * of the unsynced writes (fates[i] for d->unsynced[i]). */
void pn_device_crash_image(const struct pn_device *d, const struct pn_write_fate *fates,
			   struct pn_device *out);
/* The bytes [off, off + len) of file f in the image pn_device_crash_image would build under
 * fates, without building it (d tracks crashes). */
void pn_device_crash_read(const struct pn_device *d, const struct pn_write_fate *fates,
			  enum pn_file f, uint64_t off, uint32_t len, uint8_t *out);
/* D7: whether fates a and b of unsynced write i of d keep the same units of it. */
bool pn_device_fate_same(const struct pn_device *d, uint32_t i, const struct pn_write_fate *a,
			 const struct pn_write_fate *b);
/* D7: whether [off, off + len) of file f holds the same bytes in the crash images of d
 * under fates a and under fates b; compares the bytes only inside the writes whose fates
 * differ (d tracks crashes). */
bool pn_device_crash_same(const struct pn_device *d, const struct pn_write_fate *a,
			  const struct pn_write_fate *b, enum pn_file f, uint64_t off,
			  uint64_t len);
/* D10: whether the crash image of d under fates a gives summarized read r the value it gave
 * in the crash image under fates b (where r was logged): the same bytes there (D7), or the
 * same summary of a's bytes, taken in buf (r->len bytes). */
bool pn_device_crash_summary_same(const struct pn_device *d, const struct pn_write_fate *a,
				  const struct pn_write_fate *b, const struct pn_summary_read *r,
				  uint8_t *buf);
/* Copies every byte of src's cur image into dst (which becomes fully durable). */
void pn_device_copy(const struct pn_device *src, struct pn_device *dst);

/* D1, D2: off and len are multiples of PN_CHUNK_SIZE. No unsynced write may lie inside a
 * removed range. */
void pn_device_remove(struct pn_device *d, enum pn_file f, uint64_t off, uint64_t len);
void pn_device_create(struct pn_device *d, enum pn_file f, uint64_t off, uint64_t len);
/* Bytes of chunks the cur image of f holds: now, or the most it held (peak). */
uint64_t pn_device_held(const struct pn_device *d, enum pn_file f, bool peak);
/* Bytes of distinct chunks alive in this process (every device and image; D4 shares count
 * once). */
uint64_t pn_device_pool_bytes(void);

#endif
