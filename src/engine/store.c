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
 *   cur[p]        the generation write-outs of p go to now;
 *   base_done[p]  p's recovery baseline for the last completed checkpoint (the snapshot
 *                 that checkpoint took of cur[] at its redo pointer);
 *   base_inflight the same for the checkpoint whose control-file update is in flight.
 *   A shift moves p from cur[p] to a free generation at p's first change after the redo
 *   pointer (pn_store_shift_target). With no overlapping checkpoints three generations
 *   always leave one free; two do not (the checker shows what that costs).
 *
 * Policies l3 and l4 (umbra_policy.c) place slots and keep the selector their own way;
 * the prototype's baselines and R3 do not apply to them.
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
 *
 * Doublewrite file (PN_FILE_DW): dw_slots entries of sector_size + page_size bytes:
 *   a header sector {magic u32 'PNDW', page u32, lsn u64, crc32c of the page u32} and the
 *   page. An entry is reused only after the data file was fsynced since its in-place write.
 */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#define SELECTOR_MAGIC 0x4C534E50u /* "PNSL" */
#define SELECTOR_HEADER 32u

bool pn_store_is_slru(const struct pn_engine *e, uint32_t page)
{
	return page >= e->heap_pages;
}

uint64_t pn_store_offset(const struct pn_engine *e, uint32_t page, uint32_t slot)
{
	uint64_t idx;
	if (pn_store_is_slru(e, page))
		idx = (pn_umbra_policy(e) ? pn_umbra_heap_slots(e)
					  : (uint64_t)e->heap_pages * e->generations) +
		      (page - e->heap_pages);
	else if (pn_umbra_policy(e))
		idx = pn_umbra_slot_index(e, page, slot);
	else if (e->sc->protocol.layout == PN_LAYOUT_STRIPED)
		idx = (uint64_t)slot * e->heap_pages + page;
	else
		idx = (uint64_t)page * e->generations + slot;
	return idx * e->page_size;
}

/* Bit g of used_mask(e)[p]: slot g of page p was ever written (space amplification). */
static uint8_t *used_mask(const struct pn_engine *e)
{
	return e->cur + 3u * e->pages;
}

bool pn_store_init(struct pn_engine *e)
{
	/* cur, base_done, base_inflight, then the used-slot bit masks: one allocation. */
	e->cur = calloc(4, e->pages);
	if (!e->cur)
		return false;
	e->base_done = e->cur + e->pages;
	e->base_inflight = e->cur + 2u * e->pages;
	for (uint32_t p = 0; p < e->pages; p++)
		used_mask(e)[p] = 1;
	e->dw_slots = 32;
	return true;
}

void pn_store_free(struct pn_engine *e) { free(e->cur); }

uint32_t pn_store_shift_target(struct pn_engine *e, uint32_t page)
{
	/* Prototype policy: the lowest generation no possible recovery needs: not the current
	 * one, not the completed checkpoint's baseline, not the baseline of a checkpoint in
	 * progress or being recorded. If none is free, the policy trusts its generation count
	 * and rotates (cur + 1) mod G; rule R3 reports what that overwrites. */
	if (pn_umbra_policy(e)) /* l3, l4: strict rotation (MapPublishSlotShift asserts it) */
		return (e->cur[page] + 1u) % e->generations;
	uint32_t mask = 1u << e->cur[page] | 1u << e->base_done[page];
	if (e->inflight_valid)
		mask |= 1u << e->base_inflight[page];
	for (int r = 0; r < PN_MAX_CKPT_RUNS; r++)
		if (e->runs[r].state != PN_C_IDLE && e->runs[r].snapshot)
			mask |= 1u << e->runs[r].snapshot[page];
	uint32_t full = (1u << e->generations) - 1;
	PN_TESTCASE("a shift finds no free generation (the prototype rotates)", (mask & full) == full);
	for (uint32_t g = 0; g < e->generations; g++)
		if (!(mask & (1u << g)))
			return g;
	return (e->cur[page] + 1u) % e->generations;
}

void pn_store_note_written(struct pn_engine *e, uint32_t page, uint32_t slot)
{
	used_mask(e)[page] |= (uint8_t)(1u << slot);
}

void pn_store_check_write(struct pn_engine *e, uint32_t page, uint32_t slot)
{
	if (e->sc->protocol.mode != PN_MODE_UMBRA || pn_store_is_slru(e, page) || pn_umbra_policy(e))
		return; /* l3/l4 keep no baseline snapshot: C1-C3 judge them */
	PN_TESTCASE("write to the in-flight checkpoint's baseline",
		    e->inflight_valid && slot == e->base_inflight[page]);
	if (slot == e->base_done[page] || (e->inflight_valid && slot == e->base_inflight[page]))
		pn_engine_violation(e, PN_VIOL_PROTECTED_SLOT, page,
				    "write to slot %u of page %u, the recovery baseline of "
				    "checkpoint %llu (R3)",
				    slot, page, (unsigned long long)e->ckpt_seq_done);
}

uint64_t pn_store_slots_used(const struct pn_engine *e)
{
	uint64_t n = 0;
	const uint8_t *mask = used_mask(e);
	for (uint32_t p = 0; p < e->heap_pages; p++)
		n += (uint64_t)__builtin_popcount(mask[p]);
	if (e->sc->protocol.mode == PN_MODE_DOUBLEWRITE)
		n += e->dw_slots;
	return n;
}

uint64_t pn_store_read_runs(const struct pn_engine *e)
{
	uint64_t runs = 0, prev = UINT64_MAX;
	for (uint32_t p = 0; p < e->heap_pages; p++) {
		uint64_t off = pn_store_offset(e, p, e->cur[p]);
		if (prev == UINT64_MAX || off != prev + e->page_size)
			runs++;
		prev = off;
	}
	return runs;
}

uint32_t pn_store_selector_bytes(const struct pn_engine *e)
{
	uint32_t sec = e->sc->storage.sector_size;
	return (SELECTOR_HEADER + e->heap_pages + sec - 1) / sec * sec;
}

void pn_store_encode_selector(const struct pn_engine *e, const uint8_t *map, uint64_t seq,
			      pn_lsn redo, uint8_t *out)
{
	memset(out, 0, pn_store_selector_bytes(e));
	pn_put32(out, SELECTOR_MAGIC);
	pn_put32(out + 4, e->generations);
	pn_put64(out + 8, seq);
	pn_put64(out + 16, redo);
	pn_put32(out + 24, e->heap_pages);
	memcpy(out + SELECTOR_HEADER, map, e->heap_pages);
	uint32_t crc = pn_crc32c_update(pn_crc32c_init(), out + SELECTOR_HEADER, e->heap_pages);
	crc = pn_crc32c_final(pn_crc32c_update(crc, out, 28));
	pn_put32(out + 28, crc);
}

bool pn_store_decode_selector(const struct pn_engine *e, const uint8_t *in, uint64_t seq,
			      uint8_t *map_out)
{
	if (pn_get32(in) != SELECTOR_MAGIC || pn_get32(in + 4) != e->generations ||
	    pn_get64(in + 8) != seq || pn_get32(in + 24) != e->heap_pages)
		return false;
	uint32_t crc = pn_crc32c_update(pn_crc32c_init(), in + SELECTOR_HEADER, e->heap_pages);
	crc = pn_crc32c_final(pn_crc32c_update(crc, in, 28));
	if (crc != pn_get32(in + 28))
		return false;
	for (uint32_t p = 0; p < e->heap_pages; p++)
		if (in[SELECTOR_HEADER + p] >= e->generations)
			return false;
	memcpy(map_out, in + SELECTOR_HEADER, e->heap_pages);
	return true;
}
