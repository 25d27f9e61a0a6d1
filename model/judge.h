/*
 * judge.h: the judgement of a recovered crash state (model layer; docs/checker.md).
 *
 * A crash state is recovered in a fresh world (pn_judge_recover: the crash image of the run's
 * device under the state's fates, the engine's own recovery) and judged against the oracle
 * (oracle.h), by the conditions checker.h names:
 *   checker.h C1: every commit acknowledged before the crash is in the recovered WAL;
 *   checker.h C2: every page equals the oracle's page for the recovered WAL prefix (masked);
 *   checker.h C3: recovery completes (no checksum failure, missing baseline, replay error).
 *
 * Rules:
 *   J1 The judgement returns the violation's kind as data (struct pn_verdict's kind): C3 the
 *      engine's own kind (recovery stopped at a broken invariant) or PN_VIOL_RECOVERY (it did
 *      not finish); C2 PN_VIOL_CHECKSUM for a page read back from storage that fails
 *      verification, PN_VIOL_EXACTNESS for a page (or a relation size) that differs from the
 *      oracle's; C1 PN_VIOL_DURABILITY. The detail says what broke, for people; no caller reads
 *      a kind back from it.
 *   J2 Order: C3, then C2 (pages in number order, the first difference stops), then C1, and C1
 *      only on a state that passed C2/C3 (pn_judge_acks): a verdict is complete only after it.
 *   J3 The fast path (pn_judge_recovered with fast) gives the full path's verdict: the
 *      oracle's pages come from a table filled at one recovered end within one crash point
 *      (the oracle takes no record while a point's states are judged; pn_judge_point clears
 *      it), and a page whose bytes equal bytes that already passed C2 at the same end passes
 *      (judge.c, compare_pages). --cross-check holds the two to each other.
 *   J4 Judging reads the recovered world and changes none of its bytes.
 *   J5 A crash inside recovery is judged to the first recovery's WAL end (upto), past which
 *      the first recovery wrote records of its own, unless its own recovery replayed further
 *      on the crashed run's WAL: when the WAL bytes it recovered between upto and its end are
 *      the bytes the run (history, its device at the crash) wrote there, it replayed the
 *      run's own records, and it is judged to its end (a torn write of the first recovery's
 *      record at upto, whose first sector matches the run's record there, lets the second
 *      recovery read the run's record again, and the run's records after it: the run's
 *      history to a later point, docs/checker.md section 7). The record at upto may differ
 *      when both are checkpoint records of one length (the first recovery's in the run's
 *      place, the rest the run's): a checkpoint record changes no page.
 */
#ifndef PN_JUDGE_H
#define PN_JUDGE_H

#include "cache.h"
#include "world.h"

struct pn_oracle;

struct pn_judge {
	const struct pn_scenario *sc;
	struct pn_oracle *oracle;  /* the run's; the driver sets it at each run */
	uint8_t *expected, *found; /* page-size scratch: the failing page's two versions */
	/* the oracle's pages at one recovered end, for the states of one crash point (J3):
	 * have[p] is an enum exp_state (judge.c); from EXP_FILLED on, page p of exp_pages is
	 * filled, from EXP_PASSED on page p of pass_pages holds recovered bytes that passed C2
	 * against it */
	uint8_t *exp_pages, *pass_pages;
	uint8_t *have;
	uint32_t npages;
	pn_lsn exp_end;
	bool exp_valid;
	const struct pn_device *history; /* J5: the crashed run's device (the driver sets it) */
	char detail[2048];               /* what broke, for the last verdict that failed */
};

void pn_judge_init(struct pn_judge *j, const struct pn_scenario *sc);
void pn_judge_free(struct pn_judge *j);
/* A new crash point: the oracle may have taken records since the last one (J3). */
void pn_judge_point(struct pn_judge *j);

/* A new world of schedule `schedule` whose device is the crash image of dev under fates,
 * recovery not begun; pn_judge_recover also recovers it (*rc: pn_world_recover's). */
struct pn_world *pn_judge_crashed(const struct pn_judge *j, const struct pn_device *dev,
				  const struct pn_write_fate *fates, uint32_t schedule, bool track);
struct pn_world *pn_judge_recover(const struct pn_judge *j, const struct pn_device *dev,
				  const struct pn_write_fate *fates, uint32_t schedule, bool track,
				  int *rc);
void pn_judge_world_free(struct pn_world *r);

/* C3 and C2 (J1, J2) for the recovered world r (rc from its recovery) into v's end, kind and
 * page; upto bounds the oracle (a crash inside recovery is judged against the first
 * recovery's end); fast: J3. What broke is in j->detail. */
void pn_judge_recovered(struct pn_judge *j, struct pn_world *r, int rc, pn_lsn upto,
			struct pn_verdict *v, bool fast);
/* C1 after C2/C3 (J2): a verdict that passed them fails when a commit the run (its engine at
 * the crash) acknowledged is lost. */
void pn_judge_acks(struct pn_judge *j, const struct pn_engine *run, struct pn_verdict *v);

/*
 * The judgement of one recovered engine, shared by the checker and the real-disk crash test
 * (cli/cmd_crashtest.c), for every mode alike:
 *   pn_check_oracle_new: the oracle of a freshly formatted engine, its base the pages as
 *      formatting writes them (pn_engine_initial_page), whichever file the mode keeps them
 *      in (pushdown: the page server's, never the data file);
 *   pn_judge_pages (C2): every page (its buffer if resident, else its current slot read
 *      through the engine's seam; pushdown: what the page server rebuilds from its own
 *      storage) verifies and equals the oracle's page for the records ending at or before
 *      `end`: PN_VIOL_NONE, or the kind (J1) with the page in *bad_page; expected and found
 *      are page-size scratch buffers (the crash test also runs it on its freshly formatted
 *      files, before the child starts); pn_check_recovered_pages is it as a bool;
 *   pn_check_acked (C1): every acknowledged commit (xid, end LSN of its record) ends at or
 *      before `end`, the end of the recovered WAL.
 * Each says what broke in detail.
 */
struct pn_oracle *pn_check_oracle_new(const struct pn_engine *e);
enum pn_violation_kind pn_judge_pages(struct pn_engine *e, struct pn_oracle *o, pn_lsn end,
				      uint8_t *expected, uint8_t *found, char *detail,
				      size_t detail_len, uint32_t *bad_page);
bool pn_check_recovered_pages(struct pn_engine *e, struct pn_oracle *o, pn_lsn end,
			      uint8_t *expected, uint8_t *found, char *detail, size_t detail_len,
			      uint32_t *bad_page);
bool pn_check_acked(const uint32_t *xids, const pn_lsn *lsns, uint64_t n, pn_lsn end, char *detail,
		    size_t detail_len);

#endif
