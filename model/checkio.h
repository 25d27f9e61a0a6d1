/*
 * checkio.h: what a check of one scenario is asked and what it answers (model layer;
 * docs/checker.md): struct pn_check_options, struct pn_check_result and the progress hook.
 * The driver (checker.h) fills a result; the run of a crash point (run.h), the replay
 * (replay.h), a unit's range (span.h) and a unit's bytes (unitdata.h) read and write it.
 */
#ifndef PN_CHECKIO_H
#define PN_CHECKIO_H

#include <signal.h>
#include <stdio.h>

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
	bool nested_alone;     /* test hook: checker.h H8 off (each crash inside recovery alone) */
	bool check_prefix;     /* test hook: explore.h RD4 off (every event's invariants checked) */
	/* test hook: a search's verdict cache bound (cache.h V5; 0: PN_SEARCH_CACHE_LIMIT) */
	uint64_t cache_limit;
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
	/* And after every event of the run up to its crash point (its trace's newest entry),
	 * and each recovery the replay judged, once it ended (its last events: what it read):
	 * `nested` false for the recovery of the crash, true for the recovery of the crash
	 * inside recovery. A crash inside recovery calls replay_crash a second time (the
	 * recovery's world up to its crash) and replay_page for its recovery. */
	void (*replay_event)(void *arg, const struct pn_world *run);
	void (*replay_recovery)(void *arg, const struct pn_world *recovered, bool nested);
	void *replay_arg;
	/* The determinism self-check (--twice): each schedule is run twice, its history and its
	 * verdicts compared event by event (sim/world.h, struct pn_world_twin). */
	bool twice;
	uint64_t twice_perturb_at; /* test hook: the second run diverges after this event */
	/* --cross-check N: every Nth state judged, and every state of a violation, judged again
	 * the full way (a new recovery, the oracle's pages afresh); a difference aborts, exit 3
	 * (run.c, cross_check). 0: never. */
	uint64_t cross_check_every;
	uint64_t cross_check_fault; /* test hook: the fast verdict of this judged state is wrong */
	/* --derive on: a new state whose bytes equal a recovered base's over every range that
	 * base's recovery and judgement read is judged without recovery (derive.h;
	 * docs/checker.md "Derived crash states"). */
	bool derive;
	/* The default exploration (explore_split.h D1) after the seeded schedules of a scenario
	 * that names no strategy: `check` sets it unless --seeded-only; false (every other
	 * caller, and the zeroed options), its seeded schedules alone. */
	bool explore_default;
	/* --list-states: the key of every crash state recovered (new to the verdict cache), one
	 * per line in 16 hex digits, in the order recovered (run.c). NULL: none written. */
	FILE *list_states;
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
	/* crash points past a preemption that drew crash.search_samples random states where
	 * crash.samples differs (crashstate.h SP2) */
	uint64_t search_sampled;
	/* schedules run (the seeded ones, or a search's: docs/checker.md section 13), those a
	 * state met before cut short, and the distinct state fingerprints met */
	uint64_t schedules_explored, schedules_pruned, distinct_states;
	uint64_t points_met; /* a search's crash points skipped: met by an earlier schedule */
	enum pn_strategy strategy;
	uint32_t preemption_bound;
	/* the default exploration (explore_split.h D1-D4): its schedules, bounded and pct (0:
	 * none ran), its budget, and whether the budget ended it before every schedule of at most
	 * one preemption ran (the bound not reached) */
	uint64_t schedules_default;
	uint32_t budget;
	bool budget_cut;
	/* of schedules_default, the pct runs (D4), their depth, and the actors and events of the
	 * seeded run they were drawn over (the probability bound's k and n) */
	uint64_t pct_runs;
	uint32_t pct_depth, pct_actors;
	uint64_t pct_events;
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

#endif
