/*
 * store.h: where each logical page lives on the device (engine layer, owned by store.c):
 * page -> physical slot, in place or, for a row with PN_STORE_SLOTTED (the Umbra family's),
 * in generations with shifts and baselines (R3), the selector codec; and the callback
 * formatting writes the device through (pn_format_write_fn, used by engine.c's
 * pn_engine_format and the protocol rows). struct pn_store is e->store; its slot
 * map (slot_of) is written only through pn_store_set_slot().
 */
#ifndef PN_STORE_H
#define PN_STORE_H

#include "env.h"
#include "scenario.h"
#include "services.h"
#include "walfmt.h"

/* Formats the initial device (pages at slot 0, control file, selector): through read/write
 * callbacks the world provides, synchronously and durably, before time starts. */
typedef void (*pn_format_write_fn)(void *ctx, enum pn_file f, uint64_t off, const uint8_t *buf,
				   uint32_t len);

/* A row that places a heap page's slots itself (umbra_map.c, ...): slot index of (page, slot). */
typedef uint64_t (*pn_store_place_fn)(void *ctx, uint32_t page, uint32_t slot);

struct pn_store {
	/* constants, set at init */
	struct pn_services *svc; /* R3 violations */
	uint32_t page_size;
	uint32_t heap_pages, pages; /* pages = heap pages + SLRU pages */
	uint32_t generations;       /* slots per heap page (1 unless slotted) */
	enum pn_layout layout;
	bool slotted; /* heap pages move between slots (the row's PN_STORE_SLOTTED) */
	uint32_t sector_size;
	pn_store_place_fn place; /* NULL unless the row places slots (pn_store_set_placement) */
	void *place_ctx;
	uint64_t heap_slots; /* heap slots when placed by the policy */

	uint8_t *slot_of;       /* page -> active slot (generation); only pn_store_set_slot */
	uint8_t *base_done;     /* baselines of the last completed checkpoint */
	uint8_t *base_inflight; /* baselines of the checkpoint whose control write is in flight */
	bool inflight_valid;
	pn_lsn redo_done, redo_inflight; /* the redo pointers of those two checkpoints (R3) */

	uint8_t *used;       /* bit g of used[p]: slot g of page p was ever written */
	uint32_t check_next; /* pn_store_check()'s rotation */
	uint32_t nblocks;    /* the relation's size: heap pages >= nblocks do not exist (ST3) */
};

/* What the protocol keeps in the store (its row's store_flags): heap pages move between
 * generations (slots, baselines and R3 unless the row places the slots itself). */
#define PN_STORE_SLOTTED 1u
bool pn_store_init(struct pn_store *s, const struct pn_scenario *sc, struct pn_services *svc,
		   uint32_t heap_pages, uint32_t pages, uint32_t generations, unsigned flags);
void pn_store_free(struct pn_store *s);
/* The row's slot placement and its heap slot count. */
void pn_store_set_placement(struct pn_store *s, uint64_t heap_slots, pn_store_place_fn fn,
			    void *ctx);
/* Field relationships, asserted; O(1) a call (pages in rotation). */
void pn_store_check(struct pn_store *s);
/* A slotted store's baselines (R3; heap_pages bytes each, a slot per heap page): those of the last
 * completed checkpoint become `slots` (base_done itself: only its redo changes); those of
 * the checkpoint whose control-file write is in flight become `slots` (valid from then) and
 * are dropped when it has completed. redo: that checkpoint's redo pointer. */
void pn_store_set_baselines_done(struct pn_store *s, const uint8_t *slots, pn_lsn redo);
void pn_store_set_baselines_inflight(struct pn_store *s, const uint8_t *slots, pn_lsn redo);
void pn_store_drop_baselines_inflight(struct pn_store *s);

static inline bool pn_store_is_slru(const struct pn_store *s, uint32_t page)
{
	return page >= s->heap_pages;
}
/* The relation's size (a truncation shrinks it, the first change of a later block regrows
 * it); SLRU pages always exist. */
static inline bool pn_store_exists(const struct pn_store *s, uint32_t page)
{
	return page >= s->heap_pages || page < s->nblocks;
}
/* Storage/TRUNCATE to n blocks (no effect when the relation is no larger): heap pages n ..
 * nblocks-1 stop existing and their slot entries go back to slot 0 (the selector reset on
 * truncate, MapResetActiveSlots); returns the old size. */
uint32_t pn_store_truncate(struct pn_store *s, uint32_t n);
/* Page p comes into existence (smgrextend, a zero page; the blocks before it too). */
void pn_store_extend(struct pn_store *s, uint32_t page);
/* The slot page p's write-outs and reads go to now. */
static inline uint32_t pn_store_slot(const struct pn_store *s, uint32_t page)
{
	return s->slot_of[page];
}
/* The whole map (heap pages first), for a checkpoint's snapshot and the selector. */
static inline const uint8_t *pn_store_slots(const struct pn_store *s) { return s->slot_of; }
/* Page p lives in `slot` from now on (a shift, its redo, a selector read). */
void pn_store_set_slot(struct pn_store *s, uint32_t page, uint32_t slot);

uint64_t pn_store_offset(const struct pn_store *s, uint32_t page, uint32_t slot);
/* Slotted: the slot a shift of `page` moves to (the default rotation), from its current slot; busy: a mask
 * of the generations checkpoints in progress hold as p's baseline. */
uint32_t pn_store_shift_target(const struct pn_store *s, uint32_t page, uint32_t busy);
/* R3: called when a data write's slot is bound, lsn the page LSN of the bytes it writes
 * (ckpt_seq_done: for the report). */
void pn_store_check_write(struct pn_store *s, uint32_t page, uint32_t slot, pn_lsn lsn,
			  uint64_t ckpt_seq_done);
/* A slot count of pages ever written in distinct slots (space amplification). */
uint64_t pn_store_slots_used(const struct pn_store *s);
uint64_t pn_store_read_runs(const struct pn_store *s);
uint32_t pn_store_selector_bytes(const struct pn_store *s);
void pn_store_encode_selector(const struct pn_store *s, const uint8_t *map, uint64_t seq,
			      pn_lsn redo, uint8_t *out);
bool pn_store_decode_selector(const struct pn_store *s, const uint8_t *in, uint64_t seq,
			      uint8_t *map_out);
void pn_store_note_written(struct pn_store *s, uint32_t page, uint32_t slot);

#endif
