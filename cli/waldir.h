/*
 * waldir.h: a simulated run's WAL as PostgreSQL segment files (cli layer, waldir.c).
 */
#ifndef PN_WALDIR_H
#define PN_WALDIR_H

#include "world.h"

struct pn_waldir {
	struct pn_sim_wal_observer obs; /* first: the run calls it back */
	char dir[PN_ERROR_LEN];
	uint8_t *seg;      /* the segment being filled */
	uint64_t segno;    /* its number; UINT64_MAX before the first page */
	uint64_t segments; /* files written */
	bool failed;
	char error[PN_ERROR_LEN + 64];
};

/* PostgreSQL 15's smallest segment (IsValidWalSegSize): smaller ones are written all the same,
 * a model's small segments being on purpose, but with a warning that no PostgreSQL reads them. */
#define PN_WALDIR_PG_MIN_SEG (1u << 20)

/* Creates DIR and its missing parents (mkdir -p); false with err when it cannot. Warns on
 * stderr when seg_size is below PN_WALDIR_PG_MIN_SEG. */
bool pn_waldir_open(struct pn_waldir *d, const char *dir, uint32_t seg_size, char *err, size_t len);
/* For a run not made by the simulator (bench): the engine's sysid, segment size and the
 * page its format wrote, as pn_sim_run_observed hands them; then call d->obs.record for
 * every record. */
void pn_waldir_begin(struct pn_waldir *d, const struct pn_engine *e);
/* Writes the last segment; false (d->error) if any file could not be written. */
bool pn_waldir_close(struct pn_waldir *d);

#endif
