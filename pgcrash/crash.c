/*
 * crash.c: crash points, crash states and their data directories (pgcrash layer; rules CS1-CS4
 * in crash.h).
 */
#define _GNU_SOURCE
#include "crash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY /* XXH64_state_t on the stack; the library's functions (inlined, GCC -O2 saw a false array-bounds error) */
#include <xxhash.h>

#define NONE UINT32_MAX
#define TABLE 16384u /* paths alive at once, at most */

struct paths {
	char (*path)[256];
	uint32_t *id;
};

static uint32_t slot_of(const struct paths *t, const char *p, bool *found)
{
	uint32_t h = (uint32_t)XXH64(p, strlen(p), 0) & (TABLE - 1);
	for (uint32_t i = 0; i < TABLE; i++, h = (h + 1) & (TABLE - 1)) {
		if (t->id[h] == NONE || strcmp(t->path[h], p) == 0) {
			*found = t->id[h] != NONE;
			return h;
		}
	}
	*found = false;
	return NONE;
}

/* CS1: the identity now at p (a new one when none). */
static uint32_t ident(struct paths *t, const char *p, uint32_t *nids)
{
	bool found;
	uint32_t s = slot_of(t, p, &found);
	if (s == NONE)
		return NONE;
	if (!found) {
		snprintf(t->path[s], 256, "%s", p);
		t->id[s] = (*nids)++;
	}
	return t->id[s];
}

static void bind(struct paths *t, const char *p, uint32_t id)
{
	bool found;
	uint32_t s = slot_of(t, p, &found);
	if (s != NONE) {
		snprintf(t->path[s], 256, "%s", p);
		t->id[s] = id;
	}
}

/* Removing from open addressing: rebuild the cluster after the slot. */
static void unbind(struct paths *t, const char *p)
{
	bool found;
	uint32_t s = slot_of(t, p, &found);
	if (s == NONE || !found)
		return;
	t->id[s] = NONE;
	for (uint32_t i = (s + 1) & (TABLE - 1); t->id[i] != NONE; i = (i + 1) & (TABLE - 1)) {
		uint32_t id = t->id[i];
		char keep[256];
		memcpy(keep, t->path[i], 256);
		t->id[i] = NONE;
		bind(t, keep, id);
	}
}

static bool identities(struct pn_pgc_log *l, char *why, size_t len)
{
	struct paths t = {malloc(TABLE * 256), malloc(TABLE * sizeof(uint32_t))};
	bool ok = t.path && t.id;
	for (uint32_t i = 0; ok && i < TABLE; i++)
		t.id[i] = NONE;
	for (uint32_t i = 0; ok && i < l->log.n; i++) {
		const struct pn_fop *op = &l->log.ops[i];
		l->id[i] = l->id2[i] = NONE;
		if (op->kind == PN_FOP_ACK || op->kind == PN_FOP_MARK || !op->path[0])
			continue;
		l->id[i] = ident(&t, op->path, &l->nids);
		ok = l->id[i] != NONE;
		if (op->kind == PN_FOP_RENAME || op->kind == PN_FOP_LINK) {
			bool found;
			uint32_t s = slot_of(&t, op->path2, &found);
			l->id2[i] = found ? t.id[s] : NONE;
			if (op->kind == PN_FOP_RENAME)
				unbind(&t, op->path);
			bind(&t, op->path2, l->id[i]);
		} else if (op->kind == PN_FOP_UNLINK) {
			unbind(&t, op->path);
		}
	}
	if (!ok)
		snprintf(why, len, "more than %u files alive at once in the log", TABLE);
	free(t.path);
	free(t.id);
	return ok;
}

bool pn_pgc_log_load(struct pn_pgc_log *l, const char *path, char *why, size_t len)
{
	memset(l, 0, sizeof(*l));
	if (!pn_oplog_load(&l->log, path, why, len))
		return false;
	l->id = malloc((l->log.n + 1) * sizeof(uint32_t));
	l->id2 = malloc((l->log.n + 1) * sizeof(uint32_t));
	if (!l->id || !l->id2 || !identities(l, why, len)) {
		pn_pgc_log_free(l);
		return false;
	}
	for (uint32_t i = 0; i < l->log.n; i++) {
		const struct pn_fop *op = &l->log.ops[i];
		if (op->kind == PN_FOP_WRITE && op->off + op->len > PN_PGC_STRIDE) {
			snprintf(why, len, "%s: op %u writes %s past 1 GiB", path, i, op->path);
			pn_pgc_log_free(l);
			return false;
		}
	}
	return true;
}

void pn_pgc_log_free(struct pn_pgc_log *l)
{
	pn_oplog_free(&l->log);
	free(l->id);
	free(l->id2);
	memset(l, 0, sizeof(*l));
}

/* CS2 over ops [0, p): w[i] for every op, the pending writes in order in pend (n), the
 * commits acknowledged. head/next: per identity, its pending writes (a chain). */
static uint32_t walk(const struct pn_pgc_log *l, uint32_t p, uint8_t *w, uint32_t *head,
		     uint32_t *next, uint32_t *acked)
{
	uint32_t pending = 0;
	for (uint32_t i = 0; i < l->nids; i++)
		head[i] = NONE;
	*acked = 0;
	for (uint32_t i = 0; i < p; i++) {
		const struct pn_fop *op = &l->log.ops[i];
		uint32_t id = l->id[i];
		int to = -1;
		w[i] = PN_W_APPLY;
		if (op->kind == PN_FOP_ACK)
			*acked = (uint32_t)op->off;
		if (op->kind == PN_FOP_WRITE && !(op->flags & PN_FOPF_SYNC)) {
			w[i] = PN_W_PENDING;
			next[i] = head[id];
			head[id] = i;
			pending++;
			continue;
		}
		if (op->kind == PN_FOP_FSYNC || op->kind == PN_FOP_TRUNCATE)
			to = PN_W_APPLY;
		else if (op->kind == PN_FOP_UNLINK)
			to = PN_W_DEAD;
		else if (op->kind == PN_FOP_RENAME && l->id2[i] != NONE && l->id2[i] != id) {
			id = l->id2[i];
			to = PN_W_DEAD;
		}
		if (to < 0 || id == NONE)
			continue;
		for (uint32_t j = head[id]; j != NONE; j = next[j], pending--)
			w[j] = (uint8_t)to;
		head[id] = NONE;
	}
	return pending;
}

uint32_t pn_pgc_points(const struct pn_pgc_log *l, bool all, uint32_t **out)
{
	uint32_t n = l->log.n, k = 0, *pts = malloc((n + 1) * sizeof(uint32_t));
	uint32_t *pending = calloc(l->nids + 1, sizeof(uint32_t));
	for (uint32_t i = 0; pts && pending && i < n; i++) {
		const struct pn_fop *op = &l->log.ops[i];
		uint32_t id = l->id[i];
		if (all || (op->kind == PN_FOP_FSYNC && pending[id] > 0))
			pts[k++] = i;
		if (op->kind == PN_FOP_WRITE && !(op->flags & PN_FOPF_SYNC))
			pending[id]++;
		else if (op->kind == PN_FOP_FSYNC || op->kind == PN_FOP_TRUNCATE ||
			 op->kind == PN_FOP_UNLINK)
			pending[id] = 0;
		else if (op->kind == PN_FOP_RENAME && l->id2[i] != NONE)
			pending[l->id2[i]] = 0;
	}
	if (pts)
		pts[k++] = n;
	free(pending);
	*out = pts;
	return pts ? k : 0;
}

/* CS4: applies op i as the state says: whole, not at all, or the units fate keeps. */
static bool apply_write(const struct pn_pgc_point *pt, const struct pn_fop *op, uint32_t id,
			const struct pn_write_fate *f, const char *dir, char *why, size_t len)
{
	if (!f || f->fate == PN_FATE_PERSISTED)
		return pn_pgc_apply(dir, op, op->data, op->off, op->len, why, len);
	if (f->fate == PN_FATE_LOST)
		return true;
	uint64_t at_dev = (uint64_t)id * PN_PGC_STRIDE + op->off;
	uint32_t nunits, at;
	pn_device_unit(&pt->dev, at_dev, (uint32_t)op->len, &nunits);
	for (uint32_t s = 0; s < nunits; s++) {
		if (!(f->sectors >> s & 1))
			continue;
		uint32_t n = pn_device_unit_span(&pt->dev, at_dev, (uint32_t)op->len, s, &at);
		if (!pn_pgc_apply(dir, op, op->data + at, op->off + at, n, why, len))
			return false;
	}
	return true;
}

bool pn_pgc_materialize(const struct pn_pgc *pg, const struct pn_pgc_log *l,
			const struct pn_pgc_point *pt, const struct pn_write_fate *fates,
			const char *dir, char *why, size_t len)
{
	char base[600];
	static const struct pn_write_fate lost = {PN_FATE_LOST, 0};
	snprintf(base, sizeof(base), "%s/base", pg->work);
	if (!pn_pgc_copy_tree(pg, base, dir, why, len))
		return false;
	uint32_t k = 0;
	for (uint32_t i = 0; i < pt->point; i++) {
		const struct pn_fop *op = &l->log.ops[i];
		bool ok = true;
		if (pt->w[i] == PN_W_DEAD)
			continue;
		if (op->kind != PN_FOP_WRITE)
			ok = pn_pgc_apply(dir, op, NULL, 0, 0, why, len);
		else if (pt->w[i] == PN_W_APPLY)
			ok = apply_write(pt, op, l->id[i], NULL, dir, why, len);
		else
			ok = apply_write(pt, op, l->id[i], fates ? &fates[k++] : &lost, dir, why,
					 len);
		if (!ok)
			return false;
	}
	return true;
}

/* The durable bytes under each unsynced write (read from dur, zeros past its end) laid into
 * the device, then the writes themselves (CS3). path_of: each identity's path at the point. */
static bool fill_device(const struct pn_pgc_log *l, struct pn_pgc_point *pt, const char *dur,
			char (*path_of)[256], char *why, size_t len)
{
	for (uint32_t k = 0; k < pt->nunsynced; k++) {
		const struct pn_fop *op = &l->log.ops[pt->unsynced[k]];
		uint32_t id = l->id[pt->unsynced[k]];
		uint8_t *b = calloc(1, op->len ? op->len : 1);
		char file[1024];
		snprintf(file, sizeof(file), "%s/%s", dur, path_of[id]);
		int fd = open(file, O_RDONLY | O_CLOEXEC);
		if (!b || (fd >= 0 && pread(fd, b, op->len, (off_t)op->off) < 0)) {
			snprintf(why, len, "%s: %s", file, strerror(errno));
			free(b);
			if (fd >= 0)
				close(fd);
			return false;
		}
		if (fd >= 0)
			close(fd);
		pn_device_format_write(&pt->dev, PN_FILE_DATA, id * PN_PGC_STRIDE + op->off, b,
				       (uint32_t)op->len);
		free(b);
	}
	for (uint32_t k = 0; k < pt->nunsynced; k++) {
		const struct pn_fop *op = &l->log.ops[pt->unsynced[k]];
		struct pn_io io = {.op = PN_IO_WRITE,
				   .file = PN_FILE_DATA,
				   .offset = l->id[pt->unsynced[k]] * PN_PGC_STRIDE + op->off,
				   .len = (uint32_t)op->len,
				   .buf = (uint8_t *)op->data,
				   .index = k,
				   .page = UINT32_MAX,
				   .frame = UINT32_MAX};
		pn_device_write(&pt->dev, &io, pt->unsynced[k]);
	}
	return true;
}

/* Each identity's path at point p (CS1), for reading its durable bytes. */
static void paths_at(const struct pn_pgc_log *l, uint32_t p, char (*path_of)[256])
{
	for (uint32_t i = 0; i < p; i++) {
		const struct pn_fop *op = &l->log.ops[i];
		if (l->id[i] == NONE)
			continue;
		if (op->kind == PN_FOP_RENAME || op->kind == PN_FOP_LINK)
			snprintf(path_of[l->id[i]], 256, "%s", op->path2);
		else
			snprintf(path_of[l->id[i]], 256, "%s", op->path);
	}
}

/* CS5's conditions at pt: no link before it, no durable write over an unsynced one's bytes
 * after it. */
static bool overlay_holds(const struct pn_pgc_log *l, const struct pn_pgc_point *pt)
{
	for (uint32_t i = 0; i < pt->point; i++)
		if (l->log.ops[i].kind == PN_FOP_LINK)
			return false;
	for (uint32_t k = 0; k < pt->nunsynced; k++) {
		const struct pn_fop *a = &l->log.ops[pt->unsynced[k]];
		for (uint32_t i = pt->unsynced[k] + 1; i < pt->point; i++) {
			const struct pn_fop *b = &l->log.ops[i];
			if (b->kind == PN_FOP_WRITE && pt->w[i] == PN_W_APPLY &&
			    l->id[i] == l->id[pt->unsynced[k]] && b->off < a->off + a->len &&
			    a->off < b->off + b->len)
				return false;
		}
	}
	return true;
}

bool pn_pgc_point_begin(const struct pn_pgc *pg, const struct pn_pgc_log *l,
			const struct pn_scenario *sc, uint32_t p, struct pn_pgc_point *pt,
			const char *dur, char *why, size_t len)
{
	memset(pt, 0, sizeof(*pt));
	pt->point = p;
	pt->w = malloc(l->log.n + 1);
	pt->unsynced = malloc((l->log.n + 1) * sizeof(uint32_t));
	uint32_t *head = malloc((l->nids + 1) * sizeof(uint32_t));
	uint32_t *next = malloc((l->log.n + 1) * sizeof(uint32_t));
	char(*path_of)[256] = calloc(l->nids + 1, 256);
	bool ok = pt->w && pt->unsynced && head && next && path_of;
	if (ok) {
		walk(l, p, pt->w, head, next, &pt->acked);
		for (uint32_t i = 0; i < p; i++)
			if (pt->w[i] == PN_W_PENDING)
				pt->unsynced[pt->nunsynced++] = i;
		paths_at(l, p, path_of);
		pn_device_init(&pt->dev, true, pn_scenario_atomic_unit(sc));
		pn_crash_enum_init(&pt->ce);
		ok = pn_pgc_materialize(pg, l, pt, NULL, dur, why, len) &&
		     fill_device(l, pt, dur, path_of, why, len);
		if (ok)
			pn_crash_enum_begin(&pt->ce, &pt->dev, sc, p);
	} else {
		snprintf(why, len, "out of memory");
	}
	free(head);
	free(next);
	pt->path_of = path_of;
	pt->overlay = ok && overlay_holds(l, pt);
	return ok;
}

void pn_pgc_point_end(struct pn_pgc_point *pt)
{
	pn_crash_enum_free(&pt->ce);
	pn_device_free(&pt->dev);
	free(pt->w);
	free(pt->unsynced);
	free(pt->path_of);
	memset(pt, 0, sizeof(*pt));
}

/* The whole of file fd (size bytes at least cap) into *out; false when a read fails (a
 * folder, say). */
static bool read_all(int fd, uint64_t cap, uint8_t **out, uint64_t *size)
{
	struct stat st;
	*out = NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	*size = (uint64_t)st.st_size;
	*out = calloc(1, (cap > *size ? cap : *size) + 1);
	for (uint64_t done = 0; *out && done < *size;) {
		ssize_t n = pread(fd, *out + done, *size - done, (off_t)done);
		if (n <= 0)
			return false;
		done += (uint64_t)n;
	}
	return *out != NULL;
}

/* CS5's bytes of one file, as fs.c's hash_file would read them: dur's, then each unsynced
 * write at path by its fate. false when this cannot be answered without the directory. */
static bool overlaid(const struct pn_pgc_log *l, const struct pn_pgc_point *pt,
		     const struct pn_write_fate *fates, const char *dur, const char *path,
		     XXH64_state_t *st)
{
	char full[1024];
	uint64_t size = 0, cap = 0;
	bool any = false;
	for (uint32_t k = 0; k < pt->nunsynced; k++) {
		const struct pn_fop *op = &l->log.ops[pt->unsynced[k]];
		if (strcmp(pt->path_of[l->id[pt->unsynced[k]]], path) == 0) {
			any = true;
			cap = op->off + op->len > cap ? op->off + op->len : cap;
		}
	}
	snprintf(full, sizeof(full), "%s/%s", dur, path);
	int fd = open(full, O_RDONLY | O_CLOEXEC);
	if (fd < 0) /* a file an unsynced write is on is in dur (its create is durable) */
		return !any && (XXH64_update(st, "\1absent", 8), true);
	uint8_t *b;
	bool ok = read_all(fd, cap, &b, &size);
	close(fd);
	for (uint32_t k = 0; ok && k < pt->nunsynced; k++) {
		uint32_t i = pt->unsynced[k], nunits, at;
		const struct pn_fop *op = &l->log.ops[i];
		uint64_t at_dev = (uint64_t)l->id[i] * PN_PGC_STRIDE + op->off;
		if (fates[k].fate == PN_FATE_LOST || strcmp(pt->path_of[l->id[i]], path) != 0)
			continue;
		pn_device_unit(&pt->dev, at_dev, (uint32_t)op->len, &nunits);
		for (uint32_t u = 0; u < nunits; u++) {
			if (fates[k].fate == PN_FATE_TORN && !(fates[k].sectors >> u & 1))
				continue;
			uint32_t n = pn_device_unit_span(&pt->dev, at_dev, (uint32_t)op->len, u,
							 &at);
			memcpy(b + op->off + at, op->data + at, n);
			size = op->off + at + n > size ? op->off + at + n : size;
		}
	}
	if (ok) {
		XXH64_update(st, b, size);
		XXH64_update(st, "\1", 2);
	} else if (!any) { /* not a regular file (a folder): what hash_file says of it */
		XXH64_update(st, "\1unreadable", 12);
		ok = true;
	}
	free(b);
	return ok;
}

bool pn_pgc_state_hash(const struct pn_pgc_log *l, const struct pn_pgc_point *pt,
		       const struct pn_write_fate *fates, const char *dur, char (*const paths)[256],
		       uint32_t npaths, uint64_t *hash)
{
	XXH64_state_t st;
	XXH64_reset(&st, 0);
	bool ok = pt->overlay;
	for (uint32_t i = 0; ok && i < npaths; i++) {
		XXH64_update(&st, paths[i], strlen(paths[i]) + 1);
		ok = overlaid(l, pt, fates, dur, paths[i], &st);
	}
	*hash = XXH64_digest(&st);
	return ok;
}
