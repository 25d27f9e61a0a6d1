/*
 * rows.c: what several rows of the protocol table share (protocol layer, below the rows and
 * the table): the SLRU header image, no protection at all, and the refusal of the script
 * steps only a row with a publish step runs.
 */
#include "rows.h"

#include <stdio.h>

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

bool pn_protocol_refuse_publish_steps(struct pn_proto_ctx *pc)
{
	const struct pn_scenario *sc = pc->sc;
	if (sc->workload.kind != PN_WL_SCRIPT)
		return false;
	for (uint32_t i = 0; i < sc->workload.script_len; i++) {
		const struct pn_step *st = &sc->workload.script[i];
		if (st->op == PN_OP_CHECKPOINT_EPOCH || st->op == PN_OP_UPDATE_HOLD ||
		    st->op == PN_OP_RELEASE) {
			snprintf(pc->svc->error, sizeof(pc->svc->error), "%s:%d:%d: %s", sc->path,
				 st->line, st->column,
				 "this step needs protocol.mode umbra with policy l3 or l4 (only "
				 "they select buffers after the checkpoint begins and publish a "
				 "shift after its WAL)");
			return true;
		}
	}
	return false;
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
