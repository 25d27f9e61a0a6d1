/*
 * rows.c: what several rows of the protocol table share (protocol layer, below the rows and
 * the table): the SLRU header image and no protection at all.
 */
#include "rows.h"

unsigned pn_protocol_slru_image(const struct pn_proto_ctx *pc, bool before_redo)
{
	uint32_t mut = pc->sc->protocol.mutations;
	return before_redo && !(mut & PN_MUT_SLRU_HEADER_UNPROTECTED) ? PN_PROTECT_IMAGE : 0;
}

unsigned pn_protocol_decide_none(const struct pn_proto_ctx *pc, enum pn_block_use use,
				 bool before_redo)
{
	PN_ASSERT(pc != NULL);
	PN_ASSERT(use <= PN_USE_SLRU);
	(void)before_redo;
	return 0;
}

void pn_protocol_memory_none(const struct pn_proto_ctx *pc, const struct pn_hasher *h)
{
	PN_ASSERT(pc != NULL);
	PN_ASSERT(h != NULL && h->feed != NULL);
}

bool pn_protocol_recheck(const struct pn_proto_ctx *pc)
{
	PN_ASSERT(pc != NULL);
	PN_ASSERT(pc->sc != NULL);
	return !(pc->sc->protocol.mutations & PN_MUT_SHIFT_SPLIT);
}
