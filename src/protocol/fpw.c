/*
 * fpw.c: the in-place rows of the protocol table (protocol layer): fpw, PostgreSQL's
 * full_page_writes = on (a block's first change after the redo pointer carries its image,
 * and so do SLRU pages with headers and logged hints), and nofpw (no images at all: a torn
 * page is lost, which the checker shows). Every other hook is the engine's in-place
 * default. Mutants owned here: fpw_off, hint_no_fpi, dedup_no_image, slru_header_unprotected.
 */
#include "rows.h"

static unsigned fpw_decide(const struct pn_proto_ctx *pc, enum pn_block_use use, bool before_redo)
{
	uint32_t mut = pc->sc->protocol.mutations;
	PN_ASSERT(use <= PN_USE_SLRU);
	switch (use) {
	case PN_USE_SLRU: return pn_protocol_slru_image(pc, before_redo);
	case PN_USE_HINT:
	case PN_USE_HINT_BLOCK:
		return before_redo && !(mut & PN_MUT_HINT_NO_FPI) ? PN_PROTECT_IMAGE : 0;
	case PN_USE_WILL_INIT: return 0; /* REGBUF_WILL_INIT: redo rebuilds it */
	case PN_USE_DEDUP:
		if (mut & PN_MUT_DEDUP_NO_IMAGE)
			return 0; /* the bug: REGBUF_NO_IMAGE */
				  /* fall through */
	case PN_USE_CHANGE: return before_redo && !(mut & PN_MUT_FPW_OFF) ? PN_PROTECT_IMAGE : 0;
	}
	return 0;
}

const struct pn_protocol_ops pn_protocol_fpw = {
	.name = "fpw",
	.fpw_byte = true,
	.write = {.decide = fpw_decide, .recheck = pn_protocol_recheck},
	.state = {.memory = pn_protocol_memory_none},
};

const struct pn_protocol_ops pn_protocol_nofpw = {
	.name = "nofpw",
	.write = {.decide = pn_protocol_decide_none, .recheck = pn_protocol_recheck},
	.state = {.memory = pn_protocol_memory_none},
};

/* ---- the declaration: what the row reads and can do, as data (protocols.h); its line in
 * protocol/list.h names it ---- */
#include "protocols.h"

const struct pn_protocol_decl pn_decl_fpw = {
	.mode = PN_MODE_FPW,
	.policy = PN_POLICY_PROTOTYPE,
	.keys = 0,
	.caps = PN_CAP_TRUNCATE,
	.mutants = PN_MUT_FPW_OFF | PN_MUT_HINT_NO_FPI | PN_MUT_DEDUP_NO_IMAGE,
};

const struct pn_protocol_decl pn_decl_nofpw = {
	.mode = PN_MODE_NOFPW,
	.policy = PN_POLICY_PROTOTYPE,
	.keys = 0,
	.caps = PN_CAP_TRUNCATE,
	.mutants = 0,
};
