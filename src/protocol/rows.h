/*
 * rows.h: what the rows of the protocol table share (protocol layer, owned by rows.c). Each
 * row is defined in its own file, which includes this; protocols.h declares the rows and
 * protocols.c puts them in the table.
 */
#ifndef PN_ROWS_H
#define PN_ROWS_H

#include "engine.h"
#include "protocol.h"

/* Shared by rows: an SLRU page's image when it has headers (before_redo says both) and the
 * slru_header_unprotected mutant is off; and no protection at all. */
unsigned pn_protocol_slru_image(const struct pn_proto_ctx *pc, bool before_redo);
unsigned pn_protocol_decide_none(const struct pn_proto_ctx *pc, enum pn_block_use use,
				 bool before_redo);
/* The memory hook of a row with no state of its own (fpw, nofpw; the prototype keeps its
 * baselines in the store, which the fingerprint has through the page slots). */
void pn_protocol_memory_none(const struct pn_proto_ctx *pc, const struct pn_hasher *h);
/* Every row's recheck hook: the insert decides again unless the shift_split mutant (named
 * for Umbra's split shift; under the in-place rows it skips the image recheck alike). */
bool pn_protocol_recheck(const struct pn_proto_ctx *pc);

#endif
