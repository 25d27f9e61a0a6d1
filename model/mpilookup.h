/*
 * mpilookup.h: the lookups between the ranks of an MPI job (model layer, compiled only with
 * PN_MPI; the rule is mpirank.h MR4, the messages are in its table): this rank's share of
 * the key table (model/unit.h U6), the questions it holds and asks, and the channel between
 * a rank and its unit's child. mpirank.c calls it; it calls nothing of mpirank.c.
 */
#ifndef PN_MPILOOKUP_H
#define PN_MPILOOKUP_H

#include "exec.h"

/* The message tags (mpirank.h's table). */
enum {
	PN_MPI_TAG_UNIT = 1,
	PN_MPI_TAG_CANCEL,
	PN_MPI_TAG_STOP,
	PN_MPI_TAG_HELLO,
	PN_MPI_TAG_BEAT,
	PN_MPI_TAG_RESULT,
	PN_MPI_TAG_FAILED,
	PN_MPI_TAG_KEYS, /* MR4 from here on */
	PN_MPI_TAG_ASK,
	PN_MPI_TAG_ANSWER,
	PN_MPI_TAG_LOST,
	PN_MPI_TAG_TALLY
};

/* What a job did: rank 0's messages and bytes, and the lookups of every rank (MR4). */
struct pn_mpi_tally {
	uint64_t messages, bytes;       /* through rank 0, the lookups' aside */
	uint64_t asked, answered;       /* keys asked for, of them answered */
	uint64_t relearned, reruns;     /* states relearned, units run again */
	uint64_t lk_messages, lk_bytes; /* the lookups' messages between ranks */
};

/* The monotonic wall clock in seconds (timeouts and heartbeats, never the simulation). */
double pn_mpi_clock_s(void);

/* After MPI_Init: this rank and the job's size; the table, the test hooks. */
void pn_mpi_lk_start(int rank, int size);
void pn_mpi_lk_free(void);
bool pn_mpi_lk_on(void);       /* 2 ranks or more */
int pn_mpi_lk_frames_fd(void); /* the channel's frames from the unit's child, or -1 */
/* Every lookup message waiting handled; sends finished; waits that are over ended. */
void pn_mpi_lk_pump(void);
/* A lookup message (KEYS, ASK, ANSWER, LOST): true when `tag` is one (handled). */
bool pn_mpi_lk_route(int from, int tag, const uint8_t *m, size_t n);
/* Rank k is lost: what it owed is unknown, what it asked is dropped, nothing goes to it. */
void pn_mpi_lk_lost(int k);
/* A message sent without waiting; buf (malloc'd) is the send's from now. */
void pn_mpi_lk_send(int rank, int tag, uint8_t *buf, size_t len);
/* The sends MPI is done with, freed; true when none is left. */
bool pn_mpi_lk_sends_done(void);
/* Reads what the child's channel holds, its frames handled; block: until end of file. */
void pn_mpi_lk_chan_poll(bool block);
/* This rank's lookup counts so far. */
const struct pn_mpi_tally *pn_mpi_lk_tally(void);

/* ---- a unit's child and its channel (MR4) ---- */
#define PN_MPI_ASK_WAIT_S 20 /* default; the environment's PN_MPI_ASK_WAIT_S overrides it */
/* Rank 0, before it forks its own unit's child: the channel's pipes. */
void pn_mpi_chan_open(void);
/* In the child: lk filled for item's unit, true when lookups are on (2 ranks or more, an
 * owner not lost). Test hook: PN_TEST_MPI_VERIFY=1 (lk->verify, model/unit.h U6). */
bool pn_mpi_chan_child(struct pn_unit_lookup *lk, uint32_t item);
/* In rank 0 after the fork, and once its child is reaped. */
void pn_mpi_chan_parent(void);
void pn_mpi_chan_close(void);

#endif
