/*
 * derive.h: derived crash states, verdicts without recovery (model layer; docs/checker.md
 * "Derived crash states"; `check --derive on`).
 *
 * A fully recovered state of the current crash point (and, within a search's schedule, of
 * the points before it that DR6 carries) is kept as a base: its recovered world
 * (judged, otherwise untouched), its fates, the ranges its recovery read from the crash image
 * and wrote (R and W, sorted and merged), its summarized reads (sim/device.h DV8), the ranges
 * its judgement read (J), recovery's outcome and coverage hits, and when its judgement passed
 * its WAL end and the judgement's hits. A new state whose bytes equal a base's over R gets its
 * verdict from that base.
 *
 * Rules:
 *   DR1 Bases hold for one crash point (their fates index its unsynced writes): the driver
 *      calls pn_derive_point at each point, which drops them unless DR6 carries them.
 *   DR2 A base fits a state when the state's crash image holds the base's bytes over every
 *      range recovery read and gives every summarized read its value (pn_check_reads_same,
 *      DV6, DV8, DV9): recovery of the state would compute what the base's computed. The
 *      state's value of a summarized read is taken once per point for each combination of
 *      fates of the writes that meet its range (the point's device fixed, the bytes there
 *      are a function of those), and kept for the point's other states and bases.
 *   DR3 The derived verdict is the judgement (judge.h) of the base's recovered world patched
 *      with the state's bytes wherever they differ, recovery did not write and the judgement
 *      reads (J), the patches undone after; with no patch and a base that passed, the base's
 *      own verdict. Recovery's coverage hits (and the judgement's, for a verdict reused) are
 *      added as a recovery would add them; a check with derivation off sees the same.
 *   DR4 Pushdown: a base that needs a patch does not fit (a page server keeps what it
 *      reconstructed, where the judgement may not read the patch again).
 *   DR5 Bounded: at most DERIVE_BASES_MAX bases, replaced in turn; after DERIVE_REFUSED_MAX
 *      states of a point in a row that no base fitted, the point's other states are recovered
 *      without keeping bases. Both depend on the point's states alone: deterministic. A
 *      recovery whose C2 failed is not kept (J stops at the failing page).
 *   DR6 Carried bases: at a point of the same run of one world whose durable image has not
 *      changed (the device's dur_version; DR7 for writes made durable) and whose unsynced
 *      writes begin with the previous point's (the same dispatch seqs at the same indices),
 *      the bases stay, each write dispatched since given the fate lost: that is the base's crash image exactly,
 *      now expressed over this point's writes, so DR2 and DR3 hold as stated. A base's
 *      verdict reused without a patch stays right: the oracle's page at WAL end E is a
 *      function of the records ending at or before E (oracle.h), and a run only appends
 *      records. Only a search's runs carry (the driver passes its world's device): their
 *      parts run whole under --jobs and MPI, so which states are derived does not depend on
 *      the split; a seeded run's units start at arbitrary points and do not carry.
 *   DR7 Across an fsync: writes of the bases' point made durable since (each moves
 *      dur_version one step, and nothing else moved it) leave the list; a base that kept
 *      every one of them persisted is carried with the other writes' fates, as its image is
 *      the new durable image with those fates; a base that lost or tore one is dropped. Not
 *      when a write made durable is overlapped by an earlier write still unsynced (the
 *      durable image now lays it under that write, the base's image over it).
 *   DR8 Lent to a crash inside recovery: the crash inside the recovery of a state S starts
 *      from a world whose durable image is S's crash image and which has no unsynced write
 *      yet. The base B whose recovery S's stands for (S recovered in full and kept as B, or
 *      derived from B with no patch) is lent to that crash's object as its base with no
 *      write: its fates are all lost, its image taken as S's. That is exact where DR2 and
 *      DR3 look: S's image holds B's bytes over R and gives B's summaries (DR2 held), and
 *      where S's image differs from B's outside W the judgement does not read (no patch),
 *      so a state of the crash that holds S's image over R derives from B as from a base of
 *      S's own. Only a base that passed, judged to the end the crash judges to (S's WAL
 *      end, which is B's). It is carried by DR6 and DR7 as any base, and given back (never
 *      freed but by its lender) before the lender judges again.
 */
#ifndef PN_DERIVE_H
#define PN_DERIVE_H

#include "judge.h"

#define DERIVE_BASES_MAX 8u
#define DERIVE_REFUSED_MAX 64u

struct pn_derive;
struct pn_derive *pn_derive_new(const struct pn_scenario *sc);
void pn_derive_free(struct pn_derive *d);
/* DR1, DR6: a new crash point of the run whose device is dev (its unsynced writes index the
 * fates from here on), whose states are judged up to upto (judge.h pn_judge_recovered;
 * UINT64_MAX: each up to its own WAL end; a crash inside recovery: the first recovery's
 * end): the bases are carried when DR6 allows it and upto is the same, else dropped. dev
 * NULL: dropped, and the next point carries nothing (a new run, or one that does not
 * carry). */
void pn_derive_point(struct pn_derive *d, const struct pn_device *dev, pn_lsn upto);
/* DR8: d's bases dropped, and the base of `from` whose recovery the state `from` judged last
 * stands for (none when that state needed a patch, or was not kept) lent to d, for a crash
 * inside that state's recovery judged to upto; dev: the crashed world's device, before
 * recovery began (no unsynced write). pn_derive_point(d, NULL, ...) gives it back. */
void pn_derive_lend(struct pn_derive *d, const struct pn_derive *from, const struct pn_device *dev,
		    pn_lsn upto);
/* The verdict of the state of dev under fates from a base that fits (DR2, DR3): true, v's end,
 * kind and page set; false: no base fits. */
bool pn_derive_state(struct pn_derive *d, struct pn_judge *j, const struct pn_device *dev,
		     const struct pn_write_fate *fates, struct pn_verdict *v);
/* A full recovery of the state of dev under fates in schedule `schedule`, judged into v, and
 * kept as a base (DR5: unless the point refused too many). */
void pn_derive_recover(struct pn_derive *d, struct pn_judge *j, const struct pn_device *dev,
		       const struct pn_write_fate *fates, uint32_t schedule, struct pn_verdict *v);
/* DR2's test: whether the crash images of dev under fates a and under fates b hold the same
 * bytes over every range of reads (sorted or not). They can differ only inside unsynced
 * writes whose fates differ (sim/device.h DV6), so only the reads that meet one are compared. */
bool pn_check_reads_same(const struct pn_device *d, const struct pn_write_fate *a,
			 const struct pn_write_fate *b, const struct pn_range *reads, uint32_t n);

#endif
