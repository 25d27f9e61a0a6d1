/*
 * store.h: where each logical page lives on the device (engine layer, owned by store.c):
 * page -> physical slot, in place (fpw, nofpw) or in Umbra's generations with shifts and
 * baselines (R3), the selector codec, the doublewrite area's offsets; and the callback
 * formatting writes the device through (pn_format_write_fn, used by engine.c's
 * pn_engine_format, umbra_policy.c and pushdown.c).
 */
#ifndef PN_STORE_H
#define PN_STORE_H

#include "env.h"
#include "walfmt.h"

struct pn_engine;

/* Formats the initial device (pages at slot 0, control file, selector): through read/write
 * callbacks the world provides, synchronously and durably, before time starts. */
typedef void (*pn_format_write_fn)(void *ctx, enum pn_file f, uint64_t off, const uint8_t *buf,
				   uint32_t len);

bool pn_store_init(struct pn_engine *e);
void pn_store_free(struct pn_engine *e);
bool pn_store_is_slru(const struct pn_engine *e, uint32_t page);
uint64_t pn_store_offset(const struct pn_engine *e, uint32_t page, uint32_t slot);
/* Umbra: the slot a shift of `page` moves to (policy), from its current slot. */
uint32_t pn_store_shift_target(struct pn_engine *e, uint32_t page);
/* R3: called when a data write's slot is bound. */
void pn_store_check_write(struct pn_engine *e, uint32_t page, uint32_t slot);
/* A slot count of pages ever written in distinct slots (space amplification). */
uint64_t pn_store_slots_used(const struct pn_engine *e);
uint64_t pn_store_read_runs(const struct pn_engine *e);
uint32_t pn_store_selector_bytes(const struct pn_engine *e);
void pn_store_encode_selector(const struct pn_engine *e, const uint8_t *map, uint64_t seq,
			      pn_lsn redo, uint8_t *out);
bool pn_store_decode_selector(const struct pn_engine *e, const uint8_t *in, uint64_t seq,
			      uint8_t *map_out);
void pn_store_note_written(struct pn_engine *e, uint32_t page, uint32_t slot);

#endif
