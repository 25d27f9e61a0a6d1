/*
 * store.c: where a logical page lives on the device (engine layer).
 *
 * Data file (PN_FILE_DATA), slots of page_size bytes:
 *   fpw, nofpw, doublewrite: heap page p at slot index p (generation 0 only);
 *   umbra interleaved: p*G + g (a1 a2 a3 b1 b2 b3 ...); umbra striped: g*pages + p;
 *   SLRU pages follow the heap slots, one slot each, always written in place (PostgreSQL's
 *   SLRUs are not under the storage manager Umbra remaps).
 *
 * Umbra state (prototype policy, seed 000):
 *   slot_of[p]    the generation write-outs of p go to now (written only by
 *                 pn_store_set_slot: shifts, their redo, a selector read);
 *   base_done[p]  p's recovery baseline for the last completed checkpoint (the snapshot
 *                 that checkpoint took of slot_of[] at its redo pointer);
 *   base_inflight the same for the checkpoint whose control-file update is in flight.
 *   A shift moves p from cur[p] to a free generation at p's first change after the redo
 *   pointer (pn_store_shift_target). With no overlapping checkpoints three generations
 *   always leave one free; two do not (the checker shows what that costs).
 *
 * Policies l3 and l4 (protocol/umbra_map.c) place slots and keep the selector their own way
 * (the placement their row installs, pn_store_set_placement); neither the prototype's
 * baselines nor engine.h's R3 apply to them.
 *
 * Relation size (nblocks, heap pages; heap_pages until a truncation): a Storage/TRUNCATE
 * to n resets the slot entries of pages n .. nblocks-1 to 0 (the selector reset on
 * truncate: the public implementation's MapResetActiveSlots) and they stop existing; the
 * first change of a page >= nblocks extends the relation to it (a zero page, smgrextend;
 * its record carries an image).
 *
 * Rules: ST1 slot_of[p] < generations, and 0 for SLRU pages; ST2 base_done names
 * generations too; ST3 nblocks <= heap_pages, and slot_of[p] = 0 for heap pages p >=
 * nblocks.
 * The module takes struct pn_store and its services handle, never struct pn_engine.
 *
 * Selector file (PN_FILE_SELECTOR): three areas (PN_SELECTOR_AREAS), checkpoint seq
 *   writing area seq % 3, each
 *   0 magic u32 'PNSL' | 4 generations u32 | 8 seq u64 | 16 redo u64 | 24 npages u32 |
 *   28 crc32c u32 over bytes [32, 32 + npages) then over [0, 28) | 32 one byte per page:
 *   its baseline generation; padded to a sector multiple.
 *   Why this is crash-safe: a checkpoint writes its area and fsyncs it before it updates
 *   the control file (rule R5), and never writes the area the completed checkpoint names
 *   (with at most two checkpoints in progress, three areas keep it apart); recovery reads the area the control file names and checks seq and
 *   CRC, then learns later shifts from the WAL (each shift rides in its record's block
 *   header).
 */
#include "store.h"
#include "crc32c.h"

#include <stdlib.h>
#include <string.h>

#define SELECTOR_MAGIC 0x4C534E50u /* "PNSL" */
#define SELECTOR_HEADER 32u
#define CHECK_SLICE 4u

bool pn_store_init(struct pn_store *s, const struct pn_scenario *sc, struct pn_services *svc,
		   uint32_t heap_pages, uint32_t pages, uint32_t generations, unsigned flags)
{
	PN_ASSERT(flags <= PN_STORE_SLOTTED);
	PN_ASSERT(heap_pages <= pages);
	PN_ASSERT(generations >= 1 && generations <= 8); /* a bit each in used[] */
	memset(s, 0, sizeof(*s));
	s->svc = svc;
	s->page_size = sc->storage.page_size;
	s->heap_pages = heap_pages;
	s->pages = pages;
	s->generations = generations;
	s->layout = sc->protocol.layout;
	s->slotted = (flags & PN_STORE_SLOTTED) != 0;
	s->sector_size = sc->storage.sector_size;
	/* slot_of, base_done, base_inflight, then the used-slot bit masks: one allocation. */
	s->slot_of = calloc(4, pages);
	if (!s->slot_of)
		return false;
	s->base_done = s->slot_of + pages;
	s->base_inflight = s->slot_of + 2u * pages;
	s->used = s->slot_of + 3u * pages;
	for (uint32_t p = 0; p < pages; p++)
		s->used[p] = 1;
	s->nblocks = heap_pages;
	return true;
}

void pn_store_free(struct pn_store *s)
{
	free(s->slot_of);
	s->slot_of = s->base_done = s->base_inflight = s->used = NULL;
}

void pn_store_set_placement(struct pn_store *s, uint64_t heap_slots, pn_store_place_fn fn,
			    void *ctx)
{
	PN_ASSERT(fn && s->slotted);
	PN_ASSERT(heap_slots >= s->heap_pages); /* a home slot each; the row asserts the rest */
	s->place = fn;
	s->place_ctx = ctx;
	s->heap_slots = heap_slots;
}

void pn_store_set_slot(struct pn_store *s, uint32_t page, uint32_t slot)
{
	PN_ASSERT(page < s->heap_pages); /* ST1: SLRU pages never move */
	PN_ASSERT(slot < s->generations);
	s->slot_of[page] = (uint8_t)slot;
}

uint32_t pn_store_truncate(struct pn_store *s, uint32_t n)
{
	uint32_t old = s->nblocks;
	PN_ASSERT(old <= s->heap_pages);
	for (uint32_t p = n; p < old; p++)
		s->slot_of[p] = 0; /* ST3 */
	if (n < old)
		s->nblocks = n;
	return old;
}

void pn_store_extend(struct pn_store *s, uint32_t page)
{
	PN_ASSERT(page < s->heap_pages);
	if (page >= s->nblocks)
		s->nblocks = page + 1;
}

uint64_t pn_store_offset(const struct pn_store *s, uint32_t page, uint32_t slot)
{
	PN_ASSERT(page < s->pages);
	uint64_t idx;
	if (pn_store_is_slru(s, page))
		idx = (s->place ? s->heap_slots : (uint64_t)s->heap_pages * s->generations) +
		      (page - s->heap_pages);
	else if (s->place)
		idx = s->place(s->place_ctx, page, slot);
	else if (s->layout == PN_LAYOUT_STRIPED)
		idx = (uint64_t)slot * s->heap_pages + page;
	else
		idx = (uint64_t)page * s->generations + slot;
	return idx * s->page_size;
}

uint32_t pn_store_shift_target(const struct pn_store *s, uint32_t page, uint32_t busy)
{
	/* Prototype policy: the lowest generation no possible recovery needs: not the current
	 * one, not the completed checkpoint's baseline, not the baseline of a checkpoint in
	 * progress (busy) or being recorded. If none is free, the policy trusts its generation
	 * count and rotates (slot + 1) mod G; rule R3 reports what that overwrites. */
	PN_ASSERT(page < s->heap_pages);
	PN_ASSERT(s->generations > 1);
	uint32_t slot = s->slot_of[page];
	if (s->place) /* l3, l4: strict rotation (MapPublishSlotShift asserts it) */
		return (slot + 1u) % s->generations;
	uint32_t mask = 1u << slot | 1u << s->base_done[page] | busy;
	if (s->inflight_valid)
		mask |= 1u << s->base_inflight[page];
	uint32_t full = (1u << s->generations) - 1;
	PN_TESTCASE("a shift finds no free generation (the prototype rotates)",
		    (mask & full) == full);
	for (uint32_t g = 0; g < s->generations; g++)
		if (!(mask & (1u << g)))
			return g;
	return (slot + 1u) % s->generations;
}

void pn_store_note_written(struct pn_store *s, uint32_t page, uint32_t slot)
{
	PN_ASSERT(page < s->pages);
	PN_ASSERT(slot < s->generations);
	s->used[page] |= (uint8_t)(1u << slot);
}

void pn_store_check_write(struct pn_store *s, uint32_t page, uint32_t slot, pn_lsn lsn,
			  uint64_t ckpt_seq_done)
{
	PN_ASSERT(page < s->pages);
	if (!s->slotted || pn_store_is_slru(s, page) || s->place)
		return; /* l3/l4 keep no baseline snapshot: C1-C3 judge them */
	PN_ASSERT(slot < s->generations);
	PN_TESTCASE("write to the in-flight checkpoint's baseline",
		    s->inflight_valid && slot == s->base_inflight[page]);
	/* A page no record has stamped since a baseline's redo pointer differs from that
	 * baseline only by changes no redo from it needs to find there (hint bits) or that
	 * redo from it sets again (VISIBLE's PD_ALL_VISIBLE): the in-place write PostgreSQL
	 * makes of it, which a tear cannot spoil (docs/umbra-findings.md section 8). */
	bool done = slot == s->base_done[page];
	bool inflight = s->inflight_valid && slot == s->base_inflight[page];
	PN_TESTCASE("a page unstamped since its baseline is written in place onto it",
		    done && lsn <= s->redo_done);
	if ((done && lsn > s->redo_done) || (inflight && lsn > s->redo_inflight))
		pn_svc_violation(s->svc, PN_VIOL_PROTECTED_SLOT, page,
				 "write to slot %u of page %u, the recovery baseline of "
				 "checkpoint %llu (R3)",
				 slot, page, (unsigned long long)ckpt_seq_done);
}

uint64_t pn_store_slots_used(const struct pn_store *s)
{
	uint64_t n = 0;
	for (uint32_t p = 0; p < s->heap_pages; p++)
		n += (uint64_t)__builtin_popcount(s->used[p]);
	PN_ASSERT(n >= s->heap_pages); /* every page has its first slot */
	return n;
}

uint64_t pn_store_read_runs(const struct pn_store *s)
{
	uint64_t runs = 0, prev = UINT64_MAX;
	for (uint32_t p = 0; p < s->heap_pages; p++) {
		uint64_t off = pn_store_offset(s, p, s->slot_of[p]);
		if (prev == UINT64_MAX || off != prev + s->page_size)
			runs++;
		prev = off;
	}
	PN_ASSERT(runs <= s->heap_pages);
	return runs;
}

uint32_t pn_store_selector_bytes(const struct pn_store *s)
{
	uint32_t sec = s->sector_size;
	PN_ASSERT(sec > 0);
	return (SELECTOR_HEADER + s->heap_pages + sec - 1) / sec * sec;
}

static uint32_t selector_crc(const struct pn_store *s, const uint8_t *buf)
{
	uint32_t crc = pn_crc32c_update(pn_crc32c_init(), buf + SELECTOR_HEADER, s->heap_pages);
	return pn_crc32c_final(pn_crc32c_update(crc, buf, 28));
}

void pn_store_encode_selector(const struct pn_store *s, const uint8_t *map, uint64_t seq,
			      pn_lsn redo, uint8_t *out)
{
	PN_ASSERT(map && out);
	memset(out, 0, pn_store_selector_bytes(s));
	pn_put32(out, SELECTOR_MAGIC);
	pn_put32(out + 4, s->generations);
	pn_put64(out + 8, seq);
	pn_put64(out + 16, redo);
	pn_put32(out + 24, s->heap_pages);
	memcpy(out + SELECTOR_HEADER, map, s->heap_pages);
	pn_put32(out + 28, selector_crc(s, out));
}

bool pn_store_decode_selector(const struct pn_store *s, const uint8_t *in, uint64_t seq,
			      uint8_t *map_out)
{
	PN_ASSERT(in && map_out);
	if (pn_get32(in) != SELECTOR_MAGIC || pn_get32(in + 4) != s->generations ||
	    pn_get64(in + 8) != seq || pn_get32(in + 24) != s->heap_pages)
		return false;
	if (selector_crc(s, in) != pn_get32(in + 28))
		return false;
	for (uint32_t p = 0; p < s->heap_pages; p++)
		if (in[SELECTOR_HEADER + p] >= s->generations)
			return false;
	memcpy(map_out, in + SELECTOR_HEADER, s->heap_pages);
	return true;
}

void pn_store_check(struct pn_store *s)
{
	PN_ASSERT(s->heap_pages <= s->pages);
	PN_ASSERT(s->nblocks <= s->heap_pages); /* ST3 */
	PN_ASSERT(!s->place || s->slotted);
	for (uint32_t n = 0; n < PN_MIN(s->pages, CHECK_SLICE) && s->generations > 1; n++) {
		uint32_t p = s->check_next;
		PN_ASSERT(s->slot_of[p] < s->generations);   /* ST1 */
		PN_ASSERT(s->base_done[p] < s->generations); /* ST2 */
		PN_ASSERT(p < s->heap_pages || s->slot_of[p] == 0);
		PN_ASSERT(p >= s->heap_pages || p < s->nblocks || s->slot_of[p] == 0); /* ST3 */
		if (++s->check_next == s->pages) /* no division on the per-event path */
			s->check_next = 0;
	}
}

void pn_store_set_baselines_done(struct pn_store *s, const uint8_t *slots, pn_lsn redo)
{
	PN_ASSERT(s->slotted && s->base_done != NULL);
	PN_ASSERT(slots != NULL);
	if (slots != s->base_done)
		memcpy(s->base_done, slots, s->heap_pages);
	s->redo_done = redo;
}

void pn_store_set_baselines_inflight(struct pn_store *s, const uint8_t *slots, pn_lsn redo)
{
	PN_ASSERT(s->slotted && s->base_inflight != NULL);
	PN_ASSERT(slots != NULL);
	memcpy(s->base_inflight, slots, s->heap_pages);
	s->inflight_valid = true;
	s->redo_inflight = redo;
}

void pn_store_drop_baselines_inflight(struct pn_store *s)
{
	PN_ASSERT(!s->inflight_valid || s->base_inflight != NULL);
	PN_ASSERT(s->heap_pages <= s->pages);
	s->inflight_valid = false;
}
