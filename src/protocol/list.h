/*
 * list.h: the list of protocols (protocol layer). One line a row, X(ID, NAME, OPS, DECL):
 *   ID    the row's identifier: enum pn_protocol_id's PN_PROTOCOL_<ID> (protocols.h)
 *   NAME  its name as users type it (compare --modes, run --mode); MODE or MODE-POLICY, which
 *         a scenario spells `protocol: {mode: MODE, policy: POLICY}` (docs/scenarios.md)
 *   OPS   its table of hooks (struct pn_protocol_ops, engine/protocol.h), in its own file
 *   DECL  what it reads and can do, as data (struct pn_protocol_decl, protocols.h), appended
 *         to the same file
 * Everything else comes from this list: the identity a scenario carries (protocol.row), the
 * names, the table, the CLI's mode names and limits, the help texts' mode lists; the doc
 * tables are held to it by CTest protocol_list. Adding a protocol is its file and one line
 * here (docs/ARCHITECTURE.md, "Adding a protocol"). The first row is the default (fpw).
 */
#ifndef PN_PROTOCOL_LIST_H
#define PN_PROTOCOL_LIST_H

/* clang-format off */
#define PN_PROTOCOL_LIST(X)                                                                \
	X(FPW, "fpw", pn_protocol_fpw, pn_decl_fpw)                                        \
	X(NOFPW, "nofpw", pn_protocol_nofpw, pn_decl_nofpw)                                \
	X(UMBRA, "umbra-prototype", pn_protocol_umbra, pn_decl_umbra)                      \
	X(UMBRA_L3, "umbra-l3", pn_protocol_umbra_l3, pn_decl_umbra_l3)                    \
	X(UMBRA_L4, "umbra-l4", pn_protocol_umbra_l4, pn_decl_umbra_l4)                    \
	X(UMBRA_POOL, "umbra-pool", pn_protocol_umbra_pool, pn_decl_umbra_pool)            \
	X(UMBRA_GEN2, "umbra-gen2", pn_protocol_umbra_gen2, pn_decl_umbra_gen2)            \
	X(DOUBLEWRITE, "doublewrite", pn_protocol_doublewrite, pn_decl_doublewrite)        \
	X(PUSHDOWN, "pushdown", pn_protocol_pushdown, pn_decl_pushdown)                    \
	X(UMBRA_REMAP, "umbra-remap", pn_protocol_umbra_remap, pn_decl_umbra_remap)        \
	PN_PROTOCOL_LIST_EXAMPLE(X)

/* The example row of docs/examples/protocol_example.c, in a build with -DPN_EXAMPLE_ROW=ON
 * (CTest example_row): what adding a protocol adds here, one line. */
#ifdef PN_EXAMPLE_ROW
#define PN_PROTOCOL_LIST_EXAMPLE(X)                                                        \
	X(FPW_ALWAYS, "fpw-always", pn_protocol_fpw_always, pn_decl_fpw_always)
#else
#define PN_PROTOCOL_LIST_EXAMPLE(X)
#endif
/* clang-format on */

#endif
