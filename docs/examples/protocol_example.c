/*
 * protocol_example.c: an example protocol row, fpw-always (protocol layer; built into the
 * binary with -DPN_EXAMPLE_ROW=ON, CTest example_row). It is what adding a protocol takes
 * (docs/ARCHITECTURE.md, "Adding a protocol"): this one file and its line in
 * src/protocol/list.h,
 *   X(FPW_ALWAYS, "fpw-always", pn_protocol_fpw_always, pn_decl_fpw_always)
 * and nothing else: the table, the names, `run --mode` / `compare --modes`, the scenario
 * spelling `protocol: {mode: fpw, policy: always}`, the loader's refusals and the trace
 * writer come from that line and the declaration below.
 *
 * The variant: fpw with one rule changed. fpw images a heap block at its first change after
 * the redo pointer; fpw-always images it at every change (a full-page image in every record
 * that changes a heap page), so redo never reads a torn page and never needs the
 * checkpoint's redo pointer to decide. It costs an image per change (compare it with fpw:
 * docs/examples/protocol_example.yaml's description). The mutant fpw_off (fpw's own) drops
 * the images, and a torn page is replayed on: docs/examples/protocol_example_off.yaml.
 */
#include "protocols.h"
#include "rows.h"

/* Every change of a heap block carries its image; hints and SLRU pages as fpw. */
static unsigned always_decide(const struct pn_proto_ctx *pc, enum pn_block_use use,
			      bool before_redo)
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
	case PN_USE_CHANGE: return mut & PN_MUT_FPW_OFF ? 0 : PN_PROTECT_IMAGE;
	}
	return 0;
}

const struct pn_protocol_ops pn_protocol_fpw_always = {
	.name = "fpw-always",
	.fpw_byte = true,
	.write = {.decide = always_decide, .recheck = pn_protocol_recheck},
	.state = {.memory = pn_protocol_memory_none},
};

/* What it reads and can do: its policy key (the trace writes `policy: always`), truncation
 * as fpw, and fpw_off as its mutant. */
const struct pn_protocol_decl pn_decl_fpw_always = {
	.mode = PN_MODE_FPW,
	.policy = PN_POLICY_PROTOTYPE,
	.keys = PN_KEY_POLICY,
	.caps = PN_CAP_TRUNCATE,
	.mutants = PN_MUT_FPW_OFF,
};
