/*
 * wl_record.h: what a workload's change uses of the engine (engine layer, owned by
 * wl_record.c; docs/redesign.md makes it the client interface): struct pn_change, a change
 * of the realistic workloads (backend.c builds its record, redo.c applies it), and the
 * services the workload generators call to register a block (image or shift, decided now),
 * pin their extra pages, insert a record and stamp its pages.
 */
#ifndef PN_WL_RECORD_H
#define PN_WL_RECORD_H

#include "redo.h"
#include "walfmt.h"

struct pn_engine;
struct pn_proc;

/* ---- a change of the realistic workloads (backend.c builds its record, redo.c applies it) */
#define PN_CHANGE_MAX_BLOCKS 2
struct pn_change {
	enum pn_rec kind;          /* HEAP_INSERT, HEAP_UPDATE, HEAP_HOT_UPDATE, HEAP_LOCK,
				    * HEAP_DELETE, HEAP2_PRUNE, BTREE_INSERT_LEAF, BTREE_SPLIT_R (L or R
				    * is chosen when it runs); +INIT variants are chosen when the
				    * page turns out new */
	uint8_t nblocks;
	uint32_t pages[PN_CHANGE_MAX_BLOCKS]; /* block 0, block 1 (UPDATE: old; split: right) */
	uint16_t offnum;           /* heap: the tuple on block 0 (insert: where it goes) */
	uint16_t old_offnum;       /* UPDATE: the old tuple on block 1 */
	uint16_t t_len;            /* heap insert / update: the new tuple's length */
	uint16_t prefix, suffix;   /* HOT_UPDATE: unchanged bytes before / after the change */
	uint16_t change_len;       /* HOT_UPDATE: changed bytes (written at prefix) */
	uint64_t key;              /* btree: the new index tuple's key */
	uint64_t split_key;        /* split: items with key >= split_key go right */
	uint16_t itup_len;         /* btree: index tuple bytes */
	uint32_t heap_blk;         /* btree: the heap TID the index tuple points at */
	uint16_t heap_off;
	uint16_t nredirected, ndead, nunused; /* PRUNE: line pointers it names */
	uint8_t index;             /* workload's index id (split completion callback) */
	uint32_t leaf;             /* workload's leaf id (split completion callback) */
};

/* wl_record.c: register a block (image or shift, decided now), insert and stamp. */
enum pn_wl_reg {
	PN_REG_STANDARD,  /* REGBUF_STANDARD: an image leaves out the hole */
	PN_REG_PLAIN,     /* not standard (the VM page): an image is the whole page */
	PN_REG_HINT,      /* XLogSaveBufferForHint's image */
	PN_REG_WILL_INIT, /* a page the record rebuilds: no image (Umbra: a birth shift) */
};
/* Marks block b of page pg (bytes `page`) with its image (the hole left out unless whole)
 * and/or its slot shift (the next target), as decided; the decision is the caller's. */
void pn_wl_mark(struct pn_engine *e, struct pn_wal_block *b, uint32_t pg, uint8_t *page,
		bool image, bool whole, bool shift);
void pn_wl_protect(struct pn_engine *e, struct pn_wal_block *b, uint32_t pg, uint8_t *page,
		   enum pn_wl_reg reg);
/* The pages op p->op changes besides its own (pinned first); returns how many (<= 2). */
uint32_t pn_wl_extra_pages(struct pn_engine *e, struct pn_proc *p, uint32_t *pages);
/* Pins them into p->extra_frames; false if the process must wait (it is woken). */
bool pn_wl_pin_extra(struct pn_engine *e, struct pn_proc *p);
void pn_wl_unpin_extra(struct pn_engine *e, struct pn_proc *p);
pn_lsn pn_wl_insert(struct pn_engine *e, struct pn_wal_record *r, enum pn_rec kind,
		    const uint32_t *frames);
/* A change no WAL covers (hint bits): dirty, and only hint-dirty if it was clean. */
void pn_wl_hint_dirty(struct pn_engine *e, uint32_t frame);

#endif
