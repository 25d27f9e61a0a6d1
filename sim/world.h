/*
 * world.h: the simulated world (sim layer): a discrete-event loop in virtual time that
 * fills the engine's seam (struct pn_env) with a simulated device, an AIO queue (queue
 * depth, dispatch and completion as separate events, completions out of order when
 * `aio.reorder`), per-component PRNG streams and scheduling jitter.
 *
 * One scenario, one seed, one schedule index (and, under a search, one list of preemptions:
 * choice points below) = one exact history: events are ordered by (virtual time, sequence
 * number), never by address, and every random choice comes from a stream seeded from the
 * scenario's seed.
 */
#ifndef PN_WORLD_H
#define PN_WORLD_H

#include <stdio.h>

#include "device.h"
#include "engine.h"
#include "prng.h"
#include "series.h"

enum pn_event_kind { PN_EV_STEP, PN_EV_DISPATCH, PN_EV_COMPLETE };

struct pn_event {
	uint64_t time;
	uint64_t seq;
	uint32_t kind;
	uint32_t arg;   /* process or I/O index */
	uint64_t token; /* step: the wake token */
};

/* The last events, for counterexample timelines. */
struct pn_world;
#define PN_TRACE_LEN 48
struct pn_trace_entry {
	uint64_t event, time;
	uint32_t kind, arg;
	/* a step: the process's state and operation; an I/O: what it was */
	uint8_t op, file, why, state;
	uint32_t page, slot, value;
	uint64_t offset;
};
/* One entry as text (the world formats lazily, when it prints). */
void pn_world_trace_text(const struct pn_world *w, const struct pn_trace_entry *t, char *buf,
			 size_t len);

/*
 * The determinism self-check (`check --twice`, `run --twice`; docs/checker.md). With
 * opt.twin set the world keeps a running hash of its history: after every event, the event's
 * number, virtual time, kind and argument and what it did (the process's next state,
 * operation, page, xid and wake token; the I/O's operation, file, offset, length and state;
 * the WAL insert position and the acknowledged commits), the bytes of every write it
 * dispatches and of every WAL record inserted, and whatever the caller mixes in
 * (pn_world_hash_mix: the checker's verdicts at a crash point). The first run logs the hash
 * as of each event; the second compares and keeps the first event where they differ.
 */
struct pn_world_twin {
	bool second;   /* false: this run logs; true: it compares with the log */
	uint64_t *log; /* the first run's hash as of each event (log[i]: event i + 1) */
	uint64_t len, cap;
	uint64_t events[2];   /* each run's event count at its end */
	uint64_t device[2];   /* each run's device hash at its end */
	uint64_t diverged_at; /* the second run's first event that differs (0: none) */
	char what[192];       /* that event in the second run, as text */
	/* Test hook (0: off): after this event the second run draws one extra number from its
	 * scheduling stream, a deliberate divergence for the tests of this detector. */
	uint64_t perturb_at;
};

/*
 * Choice points (docs/checker.md section 13). Before every event the world orders the
 * events it could run next: the first schedules.choice_width (PN_CHOICE_WIDTH by default, at
 * most PN_CHOICE_WIDTH_MAX) pending events by (time, seq), stale
 * wakes dropped, one per actor (a process, or an I/O), and with aio.reorder off no
 * completion behind another. Candidate 0 is the seeded order's next event; running
 * candidate i > 0 instead is a preemption. A chooser (opt.choose), when set, picks the
 * index; the chosen event runs at max(now, its time), the rest stay pending. Without a
 * chooser the world never looks past candidate 0 (the seeded schedule, as before), nor at an
 * event where the chooser says it needs no candidates (opt.choice_needed).
 */
#define PN_CHOICE_WIDTH 3
#define PN_CHOICE_WIDTH_MAX 16
struct pn_choice {
	uint64_t event; /* the event number it applies to (1: the first event) */
	uint32_t pick;  /* the candidate run there (1 .. schedules.choice_width - 1) */
};
/* Returns the candidate to run, below n (n >= 1; w->events + 1 is the event it will be). */
typedef uint32_t (*pn_world_choose_fn)(void *arg, struct pn_world *w, const struct pn_event *cand,
				       uint32_t n);
/* Whether the chooser needs the candidates of event number `event` (w->events + 1). False
 * promises that the chooser would take candidate 0 and do nothing else (read nothing of the
 * world, change nothing of its own): the world then runs the seeded order's next event without
 * gathering the candidates or calling the chooser (the same event: candidate 0 is it). */
typedef bool (*pn_world_needed_fn)(void *arg, const struct pn_world *w, uint64_t event);

struct pn_world_options {
	struct pn_world_twin *twin; /* the determinism self-check; NULL: off */
	bool track;                 /* keep the crash model's durable image and unsynced writes */
	bool check_each_event;      /* pn_engine_check() after every event */
	/* With check_each_event: the events numbered below it only move the check's rotation
	 * (pn_engine_check_skip) and verify no read (pn_engine_event_seen), as an earlier run
	 * checked those very states (0 or 1: none) */
	uint64_t check_from;
	uint32_t schedule;      /* schedule variation index (schedules.runs) */
	uint64_t stop_at_event; /* stop after this many events (a crash point); 0 = run out */
	bool blank;             /* leave the device empty: the caller fills it (a crash image) */
	bool eager;             /* format every page up front even when untracked (CK3 off) */
	bool wal_sink;   /* untracked: keep none of the WAL's bytes (DV7; nothing reads it) */
	bool wal_unread; /* with wal_sink and no twin: nor build them (wal.c W7); no on_wal */
	bool plain;      /* fill no env extension (env.h pn_env_fast): the engine's fallbacks */
	pn_world_choose_fn choose; /* NULL: the seeded order, no choice points */
	void *choose_arg;
	pn_world_needed_fn choice_needed; /* NULL: every event asks the chooser (arg: choose_arg) */
	/* a search's pages as built, shared by its worlds (NULL: the world's own; world.c
	 * lazy_read) */
	struct pn_world_lazy *lazy;
};

/* CK3 under a search: the data file's blocks as built (world.c lazy_read), the blocks built
 * and those that hold a page, one bit each. A page as formatting writes it depends on its
 * place alone, so the worlds of one search share one (opt.lazy); memo NULL: none yet. */
struct pn_world_lazy {
	uint8_t *memo, *built, *page;
	uint64_t end;
};
void pn_world_lazy_free(struct pn_world_lazy *l);

struct pn_world {
	const struct pn_scenario *sc;
	struct pn_world_options opt;
	struct pn_engine *e;     /* opaque here: the engine's accessors (engine.h) */
	struct pn_env_fast fast; /* the seam's extension the engine points at (opt.plain: none) */
	struct pn_device dev;
	struct pn_prng rng_workload, rng_sched, rng_io;
	uint64_t now;
	uint64_t events; /* events processed */
	uint64_t seq;
	struct pn_event *heap;
	uint32_t heap_len, heap_cap; /* heap_cap from init: one event per I/O and process; past it
				      * only superseded wakes, and never past max_events (asserted) */
	bool top_open; /* heap[0] is the running event's, taken by the event's first push */
	/* I/O indexes waiting for a queue slot (FIFO ring): aio_cap, the engine's I/O count, at
	 * init; each waiting I/O is another one, so it never grows (asserted) */
	uint32_t *aio_pending;
	uint32_t aio_head, aio_len, aio_cap;
	uint32_t aio_inflight;
	uint64_t last_completion; /* FIFO completion when reorder is off */
	uint64_t *fsync_of_io;    /* the device's name for each in-flight fsync */
	uint8_t *lent; /* CK4: each I/O's lent half (pn_chunk.half), 0: none; NULL: no lending */
	uint64_t max_events;
	struct pn_trace_entry trace[PN_TRACE_LEN];
	/* Observer of every WAL record inserted (the checker's oracle). */
	void (*on_wal)(void *arg, const uint8_t *rec, uint32_t len, pn_lsn start, pn_lsn end);
	void *on_wal_arg;
	uint64_t hash;                  /* the running hash of the history (opt.twin set) */
	uint64_t wal_hash;              /* the WAL records inserted, in order (fingerprints) */
	uint64_t fp_version, fp_device; /* the device hash as of dev.version (fingerprints) */
	const struct pn_event *held;    /* the candidates popped while the chooser runs */
	uint32_t nheld;
	struct pn_event *fp_order; /* fingerprint scratch: the pending events, fp_cap of them */
	uint32_t fp_cap;
	uint8_t *fp_page; /* fingerprint scratch: one page */
	/* CK3 under a search: the pages as built, opt.lazy or its own (NULL: built at each
	 * read) */
	struct pn_world_lazy own_lazy, *lazy;
	/* The durable image by content as of dev.dur_version (pn_world_dur_digest). */
	uint64_t dur_content, dur_content_version;
	bool dur_content_known;
	uint64_t hash_logged;     /* events whose hash the twin has taken */
	struct pn_series *series; /* sampled after every event (series.h); NULL: none */
	char error[PN_ERROR_LEN];
};

/* Creates a world on a fresh formatted device, or on a copy of `from` (recovery after a
 * crash: pass the crash image). Returns false with w->error set (bad input: exit 2). */
bool pn_world_init(struct pn_world *w, const struct pn_scenario *sc,
		   const struct pn_world_options *opt, const struct pn_device *from);
void pn_world_free(struct pn_world *w);
enum { PN_STEP_EVENT, PN_STEP_FINISHED, PN_STEP_VIOLATION, PN_STEP_STALL };
/* Processes one event; PN_STEP_EVENT while there is more to do. */
int pn_world_step(struct pn_world *w);
/* Runs until the engine is finished, a violation, or opt.stop_at_event. Returns 0 when it
 * finished or stopped, 1 on a violation (pn_engine_violation_of), 2 when it could make no progress. */
int pn_world_run(struct pn_world *w);
/* Starts recovery (on a world created from a crash image) and runs it to completion. */
int pn_world_recover(struct pn_world *w);
/* A fingerprint of the state between events, blind to virtual time: the device's bytes, the
 * WAL inserted, each process's step, operation and transaction, the acknowledged commits, the
 * checkpoint's phase and counts, every page's header as the engine would read it (a resident
 * page's whole bytes: the engine's memory, below) and its slots, the pending events in the order they would run by kind and
 * actor, and the workload's PRNG stream. Not in it: the times of the pending events (two
 * states whose events run in the same order but with other gaps between them are one), the
 * scheduling and I/O streams (they draw only delays: times to come). And the engine's memory
 * inside a phase (engine.h pn_engine_memory): each checkpoint run's state, sub-state, number,
 * redo pointer and progress, the buffer pool's whole state (every frame's fields and a resident
 * page's bytes, the clock hand, each process's victim), and
 * the protocol row's (l3/l4: the selector pages' bits and LSNs, pending publications, epoch
 * tags), without which a checkpoint selecting before a shift's publication and after it
 * were one state. Equal fingerprints are a strong hint that two states have the
 * same futures, not a proof (docs/checker.md section 13). */
uint64_t pn_world_fingerprint(struct pn_world *w);

/*
 * What a pending event touches, as the world knows it before the event runs (the
 * independence rule of docs/checker.md section 13). A process step reads and writes the
 * engine's memory, and the device too when it is recovery's (a startup or page-server step,
 * or any step of pushdown: they read files synchronously). An I/O's dispatch touches its
 * file's bytes [offset, offset + len) (a write places them, a read copies them), or the whole
 * file (an fsync takes the writes to sync), and the engine's memory only when it reads a
 * buffer the engine goes on writing (a WAL page, a checkpoint's control or selector image, a
 * page server's metadata) or binds its offset at dispatch. A completion calls into the engine
 * (its done callback) and touches the write's bytes, or for an fsync the whole file.
 *
 * One step is known to be a poll: the WAL writer's while the WAL is flushed as far as it is
 * inserted. It reads what pn_world_poll_reads hashes (the WAL's insert and flush positions,
 * the backends done) and writes nothing but its own next wake; it commutes with an event
 * after which that hash is the same (explore.c observes it) and with a dispatch that does not
 * touch the engine's memory.
 */
struct pn_touch {
	uint64_t seq;   /* the pending event (its sequence number) */
	uint32_t actor; /* a process, or the process count + the I/O's index */
	bool engine;    /* the engine's memory */
	bool device;    /* every file */
	bool whole;     /* all of `file` */
	int32_t file;   /* -1: no file */
	bool poll;      /* the WAL writer with nothing to flush */
	uint64_t off, len;
	uint64_t reads; /* a poll: pn_world_poll_reads as of then */
};
void pn_world_touch(struct pn_world *w, const struct pn_event *ev, struct pn_touch *out);
/* What a poll reads, hashed. */
uint64_t pn_world_poll_reads(const struct pn_world *w);
/* Two events commute: other actors, not both the engine's memory, no byte of a file in
 * common. Up to timing: either order draws the same delays, for other events. */
bool pn_touch_independent(const struct pn_touch *a, const struct pn_touch *b);
/* The durable image by content (pn_device_dur_digest; crash tracking on), recomputed only
 * when dev.dur_version moved since the last call: equal for two worlds whose durable images
 * hold the same bytes, whatever their schedules. */
uint64_t pn_world_dur_digest(struct pn_world *w);
/* Prints the last events, oldest first. */
void pn_world_print_trace(const struct pn_world *w, FILE *out);

/* Mixes two values into the running hash of the current event (opt.twin set; else nothing). */
void pn_world_hash_mix(struct pn_world *w, uint64_t a, uint64_t b);
/* A hash of every byte a device holds (its read image; with tracking also the durable image
 * and the unsynced writes). */
uint64_t pn_world_device_hash(const struct pn_device *d);
/* Ends one run of a twin (w: that run's world, as it stopped). After the first run it
 * returns true; after the second, false with the first difference in msg ("the two runs
 * diverge at event N: ..."). */
bool pn_world_twin_end(struct pn_world_twin *t, struct pn_world *w, char *msg, size_t len);
/* Readies a twin for another pair of runs (keeps its log's memory). */
void pn_world_twin_reset(struct pn_world_twin *t);
void pn_world_twin_free(struct pn_world_twin *t);

/* One whole simulated run of a scenario (run, compare). */
struct pn_sim_result {
	int status; /* 0 ok, 1 violation, 2 bad input */
	struct pn_metrics m;
	struct pn_violation viol;
	uint64_t events;
	uint32_t pages, generations;
	char error[PN_ERROR_LEN];
	struct pn_series series; /* what `penumbra report` plots (series.h) */
};
int pn_sim_run(const struct pn_scenario *sc, struct pn_sim_result *out);
/* The same, with the engine's WAL handed to obs (run / compare --wal-dir): the run sets
 * sysid and seg_size, its engine's, gives it the WAL page the format's checkpoint record
 * is on (PN_XLOG_BLCKSZ bytes), then every record as it is inserted. */
struct pn_sim_wal_observer {
	void (*page)(struct pn_sim_wal_observer *o, pn_lsn addr, const uint8_t *bytes);
	void (*record)(struct pn_sim_wal_observer *o, const uint8_t *rec, uint32_t len,
		       pn_lsn start, pn_lsn end);
	uint64_t sysid;
	uint32_t seg_size;
};
int pn_sim_run_observed(const struct pn_scenario *sc, struct pn_sim_result *out,
			struct pn_sim_wal_observer *obs);
/* `run --twice`: the whole run of pn_sim_run twice, compared event by event (perturb_at: the
 * twin's test hook). Returns 0 when both runs agree (msg says how many events), 1 when they
 * diverge (msg says where), 2 when the scenario cannot run (msg says why). */
int pn_sim_twice(const struct pn_scenario *sc, uint64_t perturb_at, char *msg, size_t len);

#endif
