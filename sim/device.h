/*
 * device.h: the simulated device's crash model (sim layer; docs/protocol.md sec. 3). The bytes
 * of its images live in the chunk store beneath it (chunks.h: sparse chunks, copy-on-write
 * sharing, lazy extents, lent halves, CK1-CK4), which changes no byte any image reads.
 *
 * With crash tracking on, the device keeps two images: `cur`, what reads see, and `dur`, what
 * survives a crash for sure, plus the list of unsynced writes (with their bytes) between them:
 *   - a write is applied to cur when dispatched and listed as unsynced;
 *   - an fsync covers the writes to its file that had completed when it was dispatched;
 *     when it completes, those are applied to dur and dropped from the list;
 *   - at a crash each unsynced write is lost, persisted, or torn (some of its units new,
 *     the rest as before); pn_device_crash_image() builds that state.
 * Without tracking (cost runs) only cur exists.
 *
 * Removed regions (WAL segments the engine recycled, env.h pn_env_fast `wal_segment`):
 *   DV1 pn_device_remove() frees the chunks of a range in both images; from then on they
 *       are REMOVED, and a read or write that touches a removed chunk is a broken invariant
 *       (PN_ASSERT): the engine removes only WAL that no recovery can need.
 *   DV2 pn_device_create() turns the removed chunks of a range back into unwritten ones
 *       (zeros), in both images at once (a new segment file is created durably); chunks
 *       that still hold bytes keep them, as a recycled PostgreSQL segment keeps its stale
 *       bytes.
 *   DV3 Neither changes `version` or `dur_version`: no reader can see the difference.
 * So the memory a file holds is what was written and not removed, whatever the file's
 * nominal size (pn_device_held()).
 *
 * Tearing (pn_device_unit):
 *   DV4 The device writes each aligned block of `atomic_unit` bytes atomically: a torn write
 *       is cut only at multiples of atomic_unit in the file (the scenario's
 *       storage.sector_size, or crash.atomic_unit when larger). A write's units are the
 *       aligned blocks it touches, grouped in runs of consecutive blocks so that it has at
 *       most 64; a write that lies within one block is one unit and never tears.
 *
 * Read tracking (the checker's derivation, docs/checker.md "Derived crash states"):
 *   DV5 With `reads` set, every range read from cur (pn_device_read: the engine's
 *       synchronous reads and the I/O path's dispatched reads alike, sim/world.c) is
 *       appended to it, in order, unmerged. It is the only way reads leave the device: what
 *       recovery computes is a function of these bytes (and the seeds). With `writes` set,
 *       every range written to cur (pn_device_write, pn_device_format_write) is appended to
 *       it alike, and of a read only the parts that no range written before it covers are
 *       appended (DV9). Tracking changes no byte read or written.
 *
 * Comparing crash images (the checker's derivation):
 *   DV6 Every crash image of one device is its durable image with the kept units of its
 *       unsynced writes laid over it, in list order (pn_device_crash_image). Two fates of a
 *       write that keep the same units (LOST and TORN with no unit new; PERSISTED and TORN
 *       with every unit new) lay the same bytes (pn_device_fate_same). So two crash images
 *       can differ only inside writes whose fates differ, and pn_device_crash_same compares
 *       only there, with neither image built.
 *
 * Write-only files (pn_device_set_sink; `penumbra run`'s WAL, docs/performance.md):
 *   DV7 An untracked device may keep none of a file's bytes: a write to it is counted
 *       (bytes_written, DV5's write log) and dropped, and reading it, copying the device or
 *       hashing it is a broken invariant (PN_ASSERT). For a run that never reads the file
 *       back: `run` without --twice, nothing crashes, and no page server reads the WAL.
 *       With no observer of the records either, the engine builds no WAL bytes at all
 *       (env.h pn_env_fast wal_unread, wal.c W7): a write to the sink then has no buffer.
 *
 * Summarized reads (env.h pn_env_fast `read_summary`; the checker's derivation):
 *   DV8 pn_device_read_summary reads a range of cur into the device's own buffer and hands
 *       the caller only a summary of it (struct pn_summary: a pure function of the bytes and
 *       its arguments, held by value), never the bytes. With `reads`, `writes` and
 *       `summaries` all set and no write logged so far meeting the range, it is appended to
 *       `summaries` as (range, summary, value) instead of to `reads`; otherwise (recovery
 *       wrote there first, or summaries are not tracked) it is logged as a DV5 byte range.
 *       So every summarized read's bytes are those of the crash image recovery started
 *       from, and what recovery computes is a function of its DV5 bytes and these values:
 *       pn_device_crash_summary_same takes a summarized read as the same under other fates
 *       when the bytes are (DV6) or the summary of the other crash image equals the value.
 *       A caller that needs some of the bytes reads them with an ordinary read (DV5).
 *
 * A tracked run's own bytes (the checker's derivation):
 *   DV9 With `reads` and `writes` both set, a read (pn_device_read, and a summarized read
 *       logged as ranges) appends to `reads` only its parts that no range already in
 *       `writes` covers, split around the writes (none when they cover all of it). Each
 *       byte a read returns is the byte of the last write logged there before it or, with
 *       none, the image's the run started from (writes change cur at dispatch, when they
 *       are logged; DV1/DV2 only ever give zeros). So `reads` holds exactly the bytes of
 *       the starting image the run read, and what it wrote is a function of earlier reads:
 *       a run whose `reads` ranges hold the same bytes in another image reads the same
 *       bytes everywhere (umbra's redo reads back the pages it evicted to their shift
 *       targets).
 *
 * Digests by content (the checker's crash-state keys):
 *   DV10 pn_device_dur_digest is a sum over the written chunks of dur of a mark of the chunk's
 *       place and a term per 512-byte cell of a hash of (file, cell index, bytes), 0 for a
 *       cell of zeros; so a crash image's digest is the durable one with the terms of the
 *       cells its kept units touch replaced, and the marks of the chunks only they create
 *       added (pn_device_crash_digest): the cost is in the cells the kept units touch, not
 *       in the device's size. Equal images, equal digests. A durable chunk's terms are taken
 *       once for its place and serial (chunks.h CK5).
 *
 *   DV12 Each unsynced write keeps its cells' change to the digest over dur (its term minus
 *       dur's; a cell it lays in part: dur's bytes with its own over them) until dur_version
 *       moves, so a state's digest is a sum over its kept units (a cell lies in one unit of a
 *       write, DV4) of kept changes; a cell is taken from its latest keeper in list order,
 *       and one that two kept writes share in part is built. A write that shares no cell
 *       with another unsynced write adds, for each run of kept units, the difference of two
 *       running sums of its changes (and the marks of the chunks the run creates, unless
 *       every chunk it touches is one of dur's).
 *   DV13 Each unsynced write keeps which of its units differ from dur's bytes
 *       (pn_device_units_differ) until dur_version moves: a crash point's relevant writes
 *       (model/crashstate.c) are taken without reading dur again.
 *   DV14 Once taken, the durable digest is kept (dur_sum) as dur moves: a write made
 *       durable replaces the terms of the cells it lays (by its DV12 changes when they were
 *       taken over dur as the fsync found it and no earlier unsynced write shares a cell with
 *       it, else by hashing the cells' new bytes) and adds the marks of the chunks
 *       it creates, and the new chunk's terms are kept for its serial; a removed chunk takes
 *       its terms out. A format write (recovery's patches, model/derive.c) drops it: the
 *       next digest is taken whole. Debug builds take every 16th digest whole too and
 *       assert the two agree; tests/test_digest.c holds it over random writes, fsyncs and
 *       removals.
 *   DV15 Each unsynced write knows the span of list indices within which the writes
 *       before it, and those after it, that meet the cells it touches (CELL-aligned) lie:
 *       set as each write joins the list (against the writes of its file); after an fsync
 *       of one file, the other files' spans move to the new indices (only writes of one file
 *       meet, and none of theirs left) and that file's writes are spanned again among
 *       themselves. The crash digest asks it for every kept write of every state and looks
 *       for a cell's other keepers within it, where it scanned the whole list (test_device
 *       checks the spans against the scan). sim/spans.h keeps them.
 *
 * Summaries taken once (the checker's recoveries read the same WAL again and again):
 *   DV11 pn_device_read_summary keeps, per process, the value of each summary it took,
 *       keyed by the summary (function and arguments), where the range starts in its first
 *       chunk, its length and the serials of the chunks it lies in (CK5; 0 for an
 *       unwritten one); a later summary with the same key takes the value kept, without a
 *       byte read. Serials name bytes, so the value is the one the bytes give: only the
 *       work changes, never a value, a log entry (DV8) or a read the log shows. Lazy and
 *       write-only files, removed chunks and ranges over more than four chunks are not
 *       kept.
 *
 * What the chunk store adds through the device: a tracked device's synced chunks are shared
 * by cur and dur (CK2); an untracked device (`penumbra run`'s) may take lazy extents
 * (pn_device_set_lazy, CK3) and lend a data write's bytes (pn_device_lend, CK4); a tracked
 * one refuses both (PN_ASSERT / no lending), so the crash model and the checker's worlds see
 * real chunks alone, and pn_device_copy builds the lazy chunks into the copy.
 */
#ifndef PN_DEVICE_H
#define PN_DEVICE_H

#include "chunks.h"

/* DV10's cells: 512 bytes, the smallest atomic unit, so no unit of any device splits one. */
#define PN_DEVICE_CELL 512u

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
	uint64_t hash; /* its place and bytes (pn_device_unsynced_hash), once hashed */
	bool hashed;
	uint64_t *delta;     /* DV12: its cells' change to the digest over dur, then their sums */
	uint64_t delta_dur;  /* dur_version + 1 at which it was taken (0: not taken) */
	bool chunks_dur;     /* as of delta_dur: every chunk it touches is one of dur's */
	uint64_t differ;     /* DV13: its units whose bytes differ from dur's, when */
	uint64_t differ_dur; /* dur_version + 1 at which it was taken (0: not taken) */
	uint32_t earlier[2]; /* DV15: the list indices [from, to) of the writes before it that
			      * meet its cells lie within (none: from == to) */
	uint32_t later[2];   /* DV15: the same of the writes after it */
};

/* DV5: ranges read from or written to cur. */
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

/* DV8: a summarized read and its value, as logged. */
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

struct pn_device {
	bool track;
	struct pn_lazy lazy[PN_FILE_COUNT];  /* CK3: file f is lazy below lazy[f].end (0: not) */
	bool sink[PN_FILE_COUNT];            /* DV7: file f's writes are dropped */
	struct pn_range_log *reads, *writes; /* DV5: NULL = not tracked */
	struct pn_summary_log *summaries;    /* DV8: NULL = logged as DV5 byte ranges */
	uint8_t *summary_buf;                /* DV8: the bytes a summary is taken of */
	uint32_t summary_cap;
	uint32_t atomic_unit; /* DV4: bytes written atomically, at aligned offsets */
	struct pn_file_image cur[PN_FILE_COUNT];
	struct pn_file_image dur[PN_FILE_COUNT];
	struct pn_unsynced *unsynced;
	uint32_t nunsynced, cap;
	uint64_t seq;
	uint64_t version;     /* changes whenever a crash could leave a different state */
	uint64_t dur_version; /* changes whenever the durable image changes */
	uint64_t dur_sum;     /* DV14: pn_device_dur_digest, while dur_sum_ok */
	bool dur_sum_ok;
	uint64_t bytes_written[PN_FILE_COUNT];
	uint64_t lent_taken, lent_copied; /* CK4: lent writes installed, and copied */
};

void pn_device_init(struct pn_device *d, bool track, uint32_t atomic_unit);
/* CK3: file f's unwritten chunks below end read as fn's bytes (d untracked). */
void pn_device_set_lazy(struct pn_device *d, enum pn_file f, uint64_t end, pn_lazy_fn fn,
			void *ctx);
/* DV7: file f keeps none of its writes (d untracked; nothing may read f from here on). */
void pn_device_set_sink(struct pn_device *d, enum pn_file f);
void pn_device_free(struct pn_device *d);
/* Every byte the device holds (cur, dur, unsynced writes) and where, mixed into seed. */
uint64_t pn_device_hash(const struct pn_device *d, uint64_t seed);
/* The durable image's bytes and where, as one hash: equal for equal durable images whatever
 * writes and fsyncs led there (d tracks crashes; removed chunks count as unwritten). Taken
 * whole once, then kept (DV14). */
uint64_t pn_device_dur_digest(struct pn_device *d);
void pn_device_read(const struct pn_device *d, enum pn_file f, uint64_t off, uint32_t len,
		    uint8_t *out);
/* DV8: the summary s of [off, off + len) of file f (cur), logged as a summary or a range. */
struct pn_summary_value pn_device_read_summary(struct pn_device *d, enum pn_file f, uint64_t off,
					       uint32_t len, const struct pn_summary *s);
/* Unsynced write i by place and bytes, as one hash (a search's crash-point keys), taken the
 * first time it is asked for. */
uint64_t pn_device_unsynced_hash(struct pn_device *d, uint32_t i);
/* Reads cur as pn_device_read does, logged nowhere (DV5 logs recovery's reads; this is for
 * the checker's own comparisons, model/judge.h J5); false, nothing read, when the range
 * touches a removed (recycled) chunk (DV1) or a write-only file (DV7). */
bool pn_device_peek(const struct pn_device *d, enum pn_file f, uint64_t off, uint32_t len,
		    uint8_t *out);
/* Reads the durable image (crash tracking on). */
void pn_device_read_dur(const struct pn_device *d, enum pn_file f, uint64_t off, uint32_t len,
			uint8_t *out);
/* Applies a write at dispatch (cur; listed as unsynced when tracking). */
void pn_device_write(struct pn_device *d, const struct pn_io *io, uint64_t event);
void pn_device_write_done(struct pn_device *d, uint32_t io_index);
/* CK4: half a slot for the bytes of a write of len at off of file f, lent to the caller
 * (the bytes at the pointer; *half as in pn_chunk; d untracked, f lazy), or NULL when the chunk could not take it
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

/* DV4: the tearing units of a write of len bytes at off: sets *nunits (1 to 64) and returns
 * the size of a unit (atomic_unit, or a multiple of it when the write touches more than 64
 * aligned blocks); the first and last unit may be shorter (pn_device_unit_span). */
uint32_t pn_device_unit(const struct pn_device *d, uint64_t off, uint32_t len, uint32_t *nunits);
/* The bytes of unit i of that write, as an offset into the write (*at) and a length. */
uint32_t pn_device_unit_span(const struct pn_device *d, uint64_t off, uint32_t len, uint32_t i,
			     uint32_t *at);
/* DV13: the units of unsynced write i whose bytes differ from the durable image's (bit s:
 * unit s), taken once while dur_version stays (tracking on). */
uint64_t pn_device_units_differ(const struct pn_device *d, uint32_t i);

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
/* DV10: the digest of the crash image pn_device_crash_image would build under fates, by
 * content (pn_device_dur_digest of that image, equal for equal images), without building it;
 * dur_digest: pn_device_dur_digest(d). */
uint64_t pn_device_crash_digest(const struct pn_device *d, const struct pn_write_fate *fates,
				uint64_t dur_digest);
/* The bytes [off, off + len) of file f in the image pn_device_crash_image would build under
 * fates, without building it (d tracks crashes). */
void pn_device_crash_read(const struct pn_device *d, const struct pn_write_fate *fates,
			  enum pn_file f, uint64_t off, uint32_t len, uint8_t *out);
/* DV6: whether fates a and b of unsynced write i of d keep the same units of it. */
bool pn_device_fate_same(const struct pn_device *d, uint32_t i, const struct pn_write_fate *a,
			 const struct pn_write_fate *b);
/* DV6: whether [off, off + len) of file f holds the same bytes in the crash images of d
 * under fates a and under fates b; compares the bytes only inside the writes whose fates
 * differ (d tracks crashes). */
bool pn_device_crash_same(const struct pn_device *d, const struct pn_write_fate *a,
			  const struct pn_write_fate *b, enum pn_file f, uint64_t off,
			  uint64_t len);
/* DV6: whether a write of d whose fates differ under a and b meets [off, off + len) of file f
 * (else the two crash images hold the same bytes there). */
bool pn_device_fates_differ_in(const struct pn_device *d, const struct pn_write_fate *a,
			       const struct pn_write_fate *b, enum pn_file f, uint64_t off,
			       uint64_t len);
/* DV8: whether the crash image of d under fates a gives summarized read r the value it gave
 * in the crash image under fates b (where r was logged): the same bytes there (DV6), or the
 * same summary of a's bytes, taken in buf (r->len bytes). */
bool pn_device_crash_summary_same(const struct pn_device *d, const struct pn_write_fate *a,
				  const struct pn_write_fate *b, const struct pn_summary_read *r,
				  uint8_t *buf);
/* Copies every byte of src's cur image into dst (which becomes fully durable). */
void pn_device_copy(const struct pn_device *src, struct pn_device *dst);

/* DV1, DV2: off and len are multiples of PN_CHUNK_SIZE. No unsynced write may lie inside a
 * removed range. */
void pn_device_remove(struct pn_device *d, enum pn_file f, uint64_t off, uint64_t len);
void pn_device_create(struct pn_device *d, enum pn_file f, uint64_t off, uint64_t len);
/* Bytes of chunks the cur image of f holds: now, or the most it held (peak). */
uint64_t pn_device_held(const struct pn_device *d, enum pn_file f, bool peak);

#endif
