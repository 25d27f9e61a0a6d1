/*
 * crash.h: the model's crash states of a recorded log (pgcrash layer; docs/pgcrash.md
 * section 2). The adapter between the operation log and model/crashstate.h:
 *   CS1 Files have identities: a rename moves one to its new path (the old one at that path
 *      dies), a link gives it a second path, an unlink kills it.
 *   CS2 At crash point P (the operations before P happened), a write is durable when its
 *      descriptor was O_SYNC/O_DSYNC, or an fsync/fdatasync of its file came after it, or a
 *      truncate of its file came after it (the file systems' flush on truncate; fewer states,
 *      docs/pgcrash.md says so); a write of a file that died is gone; every other write is
 *      unsynced. Metadata (create, rename, unlink, truncate, mkdir) is durable in order.
 *   CS3 The unsynced writes become a pn_device's unsynced writes on one device file, file
 *      identity i at byte i * PN_PGC_STRIDE, over the durable bytes under them, so the
 *      model's own enumerator (pn_crash_enum_*) decides the states and their units
 *      (crash.atomic_unit: the sector size).
 *   CS4 A state's data directory: the base image, then every operation before P in order,
 *      each write durable, or by its fate (lost: skipped; persisted; torn: its new units).
 *   CS5 A state's files are the point's durable folder (the state where every unsynced write
 *      is lost) with the unsynced writes laid over it in log order by their fates, at their
 *      identity's path at P: so its hash (fs.c FD2) needs no directory. It holds unless a
 *      link came before P (a file with two paths) or a durable write came after an unsynced
 *      one over the same bytes (an O_SYNC write); the point then says so (overlay false)
 *      and a state is hashed by materializing it. A judged state's directory is hashed again
 *      and must agree (run.c).
 */
#ifndef PN_PGC_CRASH_H
#define PN_PGC_CRASH_H

#include "crashstate.h"
#include "pgcrash.h"

#define PN_PGC_STRIDE (1ull << 30) /* a file of the cluster is at most 1 GiB */

enum pn_pgc_wstate { PN_W_APPLY, PN_W_PENDING, PN_W_DEAD };

struct pn_pgc_log {
	struct pn_oplog log;
	uint32_t *id, *id2; /* per op: identity of path and of path2 (UINT32_MAX: none) */
	uint32_t nids;
};

struct pn_pgc_point {
	uint32_t point; /* ops [0, point) happened */
	uint32_t acked;
	uint8_t *w;         /* per op: enum pn_pgc_wstate */
	uint32_t *unsynced; /* dev.unsynced[i] is op unsynced[i] */
	uint32_t nunsynced;
	struct pn_device dev;
	struct pn_crash_enum ce;
	char (*path_of)[256]; /* each identity's path at the point (CS1) */
	bool overlay;         /* CS5 holds at this point: pn_pgc_state_hash can answer */
};

bool pn_pgc_log_load(struct pn_pgc_log *l, const char *path, char *why, size_t len);
void pn_pgc_log_free(struct pn_pgc_log *l);
/* The crash points: before every fsync of a file with unsynced writes, and the end (all:
 * before every operation and the end). Returns how many, in *out (malloc'd). */
uint32_t pn_pgc_points(const struct pn_pgc_log *l, bool all, uint32_t **out);
/* Prepares point p: the unsynced writes, the device over the durable bytes of base+log in
 * the folder dur (materialized here), the enumerator begun. false with why. */
bool pn_pgc_point_begin(const struct pn_pgc *pg, const struct pn_pgc_log *l,
			const struct pn_scenario *sc, uint32_t p, struct pn_pgc_point *pt,
			const char *dur, char *why, size_t len);
void pn_pgc_point_end(struct pn_pgc_point *pt);
/* CS5: the hash pn_pgc_hash_paths(paths) of the directory pn_pgc_materialize(fates) would
 * make, from the point's durable folder dur (kept until the point ends), into *hash; false
 * when the point is not one CS5 covers or dur cannot be read. */
bool pn_pgc_state_hash(const struct pn_pgc_log *l, const struct pn_pgc_point *pt,
		       const struct pn_write_fate *fates, const char *dur, char (*const paths)[256],
		       uint32_t npaths, uint64_t *hash);
/* CS4: the state of fates (NULL: every unsynced write lost) into dir (must not exist). */
bool pn_pgc_materialize(const struct pn_pgc *pg, const struct pn_pgc_log *l,
			const struct pn_pgc_point *pt, const struct pn_write_fate *fates,
			const char *dir, char *why, size_t len);

#endif
