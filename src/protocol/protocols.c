/*
 * protocols.c: the protocol table (protocol layer): one row per protocol.mode, the umbra
 * mode's row chosen by its policy.
 */
#include "protocols.h"

const struct pn_protocol_ops *const pn_protocols[PN_MODE_COUNT] = {
	[PN_MODE_FPW] = &pn_protocol_fpw,
	[PN_MODE_NOFPW] = &pn_protocol_nofpw,
	[PN_MODE_UMBRA] = &pn_protocol_umbra,
	[PN_MODE_DOUBLEWRITE] = &pn_protocol_doublewrite,
	[PN_MODE_PUSHDOWN] = &pn_protocol_pushdown,
};

const struct pn_protocol_ops *pn_protocol_of(const struct pn_scenario *sc)
{
	PN_ASSERT(sc->protocol.mode < PN_MODE_COUNT);
	PN_ASSERT(sc->protocol.policy < PN_POLICY_COUNT);
	if (sc->protocol.mode == PN_MODE_UMBRA && sc->protocol.policy == PN_POLICY_L3)
		return &pn_protocol_umbra_l3;
	if (sc->protocol.mode == PN_MODE_UMBRA && sc->protocol.policy == PN_POLICY_L4)
		return &pn_protocol_umbra_l4;
	if (sc->protocol.mode == PN_MODE_UMBRA && sc->protocol.policy == PN_POLICY_POOL)
		return &pn_protocol_umbra_pool;
	if (sc->protocol.mode == PN_MODE_UMBRA && sc->protocol.policy == PN_POLICY_GEN2)
		return &pn_protocol_umbra_gen2;
	return pn_protocols[sc->protocol.mode];
}
