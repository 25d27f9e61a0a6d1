/*
 * checker.h: the crash-point model checker (model layer; docs/checker.md).
 *
 * For one scenario and each schedule run: run the world one event at a time with the crash
 * model on; at every selected crash point whose device state (or set of acknowledged
 * commits) changed, enumerate the crash states (crashstate.h), recover each in a fresh
 * world running the engine's own recovery, and judge it against the oracle (oracle.h):
 *   C1 every commit acknowledged before the crash is in the recovered WAL;
 *   C2 every page equals the oracle's page for the recovered WAL prefix (masked);
 *   C3 recovery completes (no checksum failure, missing baseline, replay error);
 *   C4/R1-R5 the runtime invariants held in the run and in recovery.
 * Identical crash states (same durable image and same surviving writes) are recovered
 * once. The first violation stops the scenario and is reported with a replayable trace.
 */
#ifndef PN_CHECKER_H
#define PN_CHECKER_H

#include <signal.h>

#include "world.h"

struct pn_check_result;
/* Called while a scenario is checked (every PN_CHECK_PROGRESS_EVENTS events and after each
 * crash point's states) with the counts so far. It must not keep res; it reads no world. */
typedef void (*pn_check_progress_fn)(void *arg, const struct pn_check_result *res);
#define PN_CHECK_PROGRESS_EVENTS 256

struct pn_check_options {
	pn_check_progress_fn progress; /* NULL: none */
	void *progress_arg;
	/* When *stop becomes non-zero (a signal handler sets it) the check stops at the next
	 * event or crash state: res->interrupted, return 3. NULL: never. */
	const volatile sig_atomic_t *stop;
	const char *trace_dir; /* where counterexample traces go; NULL: none written */
	uint32_t nested_every; /* crash inside recovery for every Nth new state (0: never) */
	/* Replay: only this schedule, this crash point, this state. */
	bool replay;
	uint32_t replay_schedule;
	uint64_t replay_point;
	const char *replay_state;
	uint64_t replay_recovery_point; /* 0: no crash inside recovery */
	const char *replay_recovery_state;
	const char *replay_choices; /* the schedule's preemptions (explore.h); NULL or "": none */
	/* Not a replay: check only the schedule with these preemptions (explore.h) around seeded
	 * schedule replay_schedule, every crash point of it ("" the seeded schedule itself);
	 * NULL: the search the schedules: section asks for. */
	const char *choices;
	FILE *timeline; /* replay: print the events up to the crash here */
	/* Replay observers (penumbra report; NULL: none): at the crash point, the run's world
	 * (its last events, its device's unsynced writes) and the fates replayed; after its
	 * recovery, when a page fails C2, that page as the oracle has it and as recovered. */
	void (*replay_crash)(void *arg, const struct pn_world *run,
			     const struct pn_write_fate *fates);
	void (*replay_page)(void *arg, uint32_t page, const uint8_t *expected, const uint8_t *found,
			    uint32_t page_size);
	void *replay_arg;
	/* The determinism self-check (--twice): each schedule is run twice, its history and its
	 * verdicts compared event by event (sim/world.h, struct pn_world_twin). */
	bool twice;
	uint64_t twice_perturb_at; /* test hook: the second run diverges after this event */
	/* --cross-check N: every Nth state judged, and every state of a violation, judged again
	 * the full way (a new recovery, the oracle's pages afresh); a difference aborts, exit 3
	 * (check.c, cross_check). 0: never. */
	uint64_t cross_check_every;
	uint64_t cross_check_fault; /* test hook: the fast verdict of this judged state is wrong */
	/* --derive on: a new state whose bytes equal a recovered base's over every range that
	 * base's recovery and judgement read is judged without recovery (check.c, derive_state;
	 * docs/checker.md "Derived crash states"). */
	bool derive;
};

struct pn_check_result {
	char name[128];
	bool violation, expected_violation, ok;
	bool error; /* could not run (bad input, stall): message in detail */
	/* replay: the key of the replay: section the error is about (enum pn_replay_key; its
	 * position is the scenario's replay.at), PN_REPLAY_NO_KEY if none */
	uint32_t error_key;
	bool interrupted; /* stopped by opt->stop before the check finished */
	uint64_t crash_points, crash_states, recoveries, events;
	uint64_t derived; /* of the recoveries, states judged from a base without recovery */
	/* crash points whose states crash.torn_writes: 2 cut at PN_CRASH_MIXED_MAX (crashstate.h) */
	uint64_t capped_points;
	/* schedules run (the seeded ones, or a search's: docs/checker.md section 13), those a
	 * state met before cut short, and the distinct state fingerprints met */
	uint64_t schedules_explored, schedules_pruned, distinct_states;
	uint64_t points_met; /* a search's crash points skipped: met by an earlier schedule */
	enum pn_strategy strategy;
	uint32_t preemption_bound;
	char choices[PN_CHOICES_TEXT_MAX]; /* the violation's schedule: its preemptions */
	double seconds, seconds_to_violation;
	/* the violation */
	enum pn_violation_kind kind;
	uint32_t page;
	uint32_t schedule;
	uint64_t crash_point;
	bool in_recovery;        /* found by a crash inside recovery */
	uint64_t recovery_point; /* that crash: event of the recovery, and its state */
	char recovery_state[256];
	char state[256];       /* compact crash state (replay.state) */
	char state_text[1024]; /* readable crash state */
	char detail[2048];     /* what broke */
	char timeline[4096];   /* the last events before the crash */
	char trace_path[1024];
	char shrunk[256];      /* what shrinking the trace changed */
	bool diverged;         /* --twice: the two runs of a schedule differ (not ok) */
	char divergence[1024]; /* where: "nondeterminism: schedule S: ..." */
};

/*
 * The judgement of one recovered engine, shared by the checker and the real-disk crash test
 * (cli/cmd_crashtest.c), for every mode alike:
 *   pn_check_oracle_new: the oracle of a freshly formatted engine, its base the pages as
 *      formatting writes them (pn_engine_initial_page), whichever file the mode keeps them
 *      in (pushdown: the page server's, never the data file);
 *   C2 pn_check_recovered_pages: every page (its buffer if resident, else its current slot
 *      read through the engine's seam; pushdown: what the page server rebuilds from its own
 *      storage) verifies and equals the oracle's page for the records ending at or before
 *      `end`; expected and found are page-size scratch buffers (the crash test also runs it
 *      on its freshly formatted files, before the child starts);
 *   C1 pn_check_acked: every acknowledged commit (xid, end LSN of its record) ends at or
 *      before `end`, the end of the recovered WAL.
 * Each returns false with what broke in detail.
 */
struct pn_oracle;
struct pn_oracle *pn_check_oracle_new(const struct pn_engine *e);
bool pn_check_recovered_pages(struct pn_engine *e, struct pn_oracle *o, pn_lsn end,
			      uint8_t *expected, uint8_t *found, char *detail, size_t detail_len,
			      uint32_t *bad_page);
bool pn_check_acked(const uint32_t *xids, const pn_lsn *lsns, uint64_t n, pn_lsn end, char *detail,
		    size_t detail_len);

/* Checks one scenario. Returns 0 when the verdict is as expected, 1 when not, 2 when the
 * scenario could not be run, 3 when opt->stop stopped it (res->interrupted; the counts are
 * those reached, the verdict is not one). */
int pn_check_scenario(const struct pn_scenario *sc, const struct pn_check_options *opt,
		      struct pn_check_result *res);
/* The options that replay a trace as its replay: section says (schedule, crash point and
 * state, the crash inside recovery); the caller adds a timeline or observers. */
struct pn_check_options pn_check_replay_options(const struct pn_scenario *sc);

/* Derivation's test (docs/checker.md "Derived crash states"): whether the crash images of d
 * under fates a and under fates b hold the same bytes over every range of reads (sorted or
 * not). They can differ only inside unsynced writes whose fates differ (sim/device.h DV6), so
 * only the reads that meet one are compared. */
bool pn_check_reads_same(const struct pn_device *d, const struct pn_write_fate *a,
			 const struct pn_write_fate *b, const struct pn_range *reads, uint32_t n);

#endif
