/*
 * cover.h: the coverage hits of every PN_TESTCASE site, as data (model layer).
 *
 * The checker undoes the hits of work that must not count (a cross-check, a relearned state:
 * checker.h H4), keeps those of a recovery to add them again when a state is derived from it
 * (derive.h DR3), and hands a unit's hits over as an array (unit.h U4). An array `hits` holds
 * per site (pn_testcase_all's order) its true and false hits.
 */
#ifndef PN_COVER_H
#define PN_COVER_H

#include <stddef.h>
#include <stdint.h>

/* A new array of the sites' hits now (*n sites; free it). */
uint64_t (*pn_cover_save(size_t *n))[2];
/* The sites' hits set back to those of hits (n sites, as saved). */
void pn_cover_restore(const uint64_t (*hits)[2], size_t n);
void pn_cover_zero(void);
/* Adds n sites' hits to the sites. */
void pn_cover_add(const uint64_t (*hits)[2], size_t n);
/* A new array of the hits since `before` (n0 sites, as saved), per site (*n of them). */
uint64_t (*pn_cover_since(const uint64_t (*before)[2], size_t n0, size_t *n))[2];

#endif
