/*
 * protocols.h: the protocol table (protocol layer, owned by protocols.c): pn_protocol_of(sc)
 * picks a scenario's row for pn_engine_init. Each row is defined in its own file (fpw.c,
 * doublewrite.c, umbra.c, umbra_map.c, umbra_pool.c, umbra_gen2.c,
 * pushdown.c) and declared here.
 */
#ifndef PN_PROTOCOLS_H
#define PN_PROTOCOLS_H

#include "engine.h"
#include "protocol.h"

/* The rows, each defined in its own file. */
extern const struct pn_protocol_ops pn_protocol_fpw, pn_protocol_nofpw, pn_protocol_doublewrite,
	pn_protocol_umbra, pn_protocol_umbra_l3, pn_protocol_umbra_l4, pn_protocol_umbra_pool,
	pn_protocol_umbra_gen2, pn_protocol_pushdown;

/* Every row, indexed by protocol.mode (umbra: by protocol.policy in pn_protocol_of). */
extern const struct pn_protocol_ops *const pn_protocols[PN_MODE_COUNT];
/* The row of sc's protocol.mode and protocol.policy (what the assembly passes to
 * pn_engine_init). */
const struct pn_protocol_ops *pn_protocol_of(const struct pn_scenario *sc);

#endif
