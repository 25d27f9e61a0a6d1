/*
 * fs.c: data directories as trees of files (pgcrash layer): copy, remove, hash, and one
 * operation of the log applied to a tree.
 *   FD1 A file or folder an operation creates is given the owner of the tree's root, so the
 *      server's user can write every file of a materialized state whoever materializes it.
 *   FD2 A state's hash covers the files the log names (every other file of a state is the
 *      base image's, the same in every state): each one's path and bytes, or that it is
 *      absent, in the order given.
 */
#define _GNU_SOURCE
#include "pgcrash.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

bool pn_pgc_copy_tree(const struct pn_pgc *pg, const char *from, const char *to, char *why,
		      size_t len)
{
	char out[1024];
	char *argv[] = {"/bin/cp", "-a", (char *)from, (char *)to, NULL};
	int rc = pn_pgc_exec(pg, argv, NULL, 300, out, sizeof(out));
	if (rc != 0)
		snprintf(why, len, "cannot copy %s to %s (cp: %d): %.300s", from, to, rc, out);
	return rc == 0;
}

static uint64_t tree_total;

static int add_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	if (flag == FTW_F)
		tree_total += (uint64_t)st->st_size;
	return 0;
}

uint64_t pn_pgc_tree_bytes(const char *dir)
{
	tree_total = 0;
	nftw(dir, add_one, 32, FTW_PHYS);
	return tree_total;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

bool pn_pgc_remove_tree(const char *dir)
{
	return nftw(dir, remove_one, 32, FTW_DEPTH | FTW_PHYS) == 0 || errno == ENOENT;
}

static void hash_file(XXH64_state_t *st, const char *path)
{
	uint8_t buf[1 << 16];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = 0;
	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		XXH64_update(st, buf, (size_t)n);
	/* a file that is not there, or not readable, hashes as its own marker */
	XXH64_update(st,
		     fd < 0  ? "\1absent"
		     : n < 0 ? "\1unreadable"
			     : "\1",
		     fd < 0  ? 8
		     : n < 0 ? 12
			     : 2);
	if (fd >= 0)
		close(fd);
}

uint64_t pn_pgc_hash_paths(const char *dir, char (*const paths)[256], uint32_t n)
{
	XXH64_state_t st;
	XXH64_reset(&st, 0);
	for (uint32_t i = 0; i < n; i++) {
		char full[1024];
		snprintf(full, sizeof(full), "%s/%s", dir, paths[i]);
		XXH64_update(&st, paths[i], strlen(paths[i]) + 1);
		hash_file(&st, full);
	}
	return XXH64_digest(&st);
}

/* FD1 */
static void own(const char *dir, const char *path)
{
	struct stat s;
	if (stat(dir, &s) == 0 && lchown(path, s.st_uid, s.st_gid) != 0)
		return; /* the server will say so when it cannot open the file */
}

static bool write_at(const char *dir, const char *path, const uint8_t *data, uint64_t off,
		     uint64_t len)
{
	bool created = access(path, F_OK) != 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return false;
	if (created)
		own(dir, path);
	bool ok = true;
	for (uint64_t done = 0; ok && done < len;) {
		ssize_t w = pwrite(fd, data + done, len - done, (off_t)(off + done));
		ok = w > 0;
		done += ok ? (uint64_t)w : 0;
	}
	return close(fd) == 0 && ok;
}

/* posix_fallocate's effect on the bytes: the file at least off + len long. */
static bool extend(const char *path, uint64_t end)
{
	struct stat s;
	if (stat(path, &s) != 0)
		return false;
	return (uint64_t)s.st_size >= end || truncate(path, (off_t)end) == 0;
}

bool pn_pgc_apply(const char *dir, const struct pn_fop *op, const uint8_t *data, uint64_t off,
		  uint64_t len, char *why, size_t why_len)
{
	char a[1024], b[1024];
	snprintf(a, sizeof(a), "%s/%s", dir, op->path);
	snprintf(b, sizeof(b), "%s/%s", dir, op->path2);
	bool ok = true;
	switch (op->kind) {
	case PN_FOP_WRITE: ok = write_at(dir, a, data, off, len); break;
	case PN_FOP_CREATE: ok = write_at(dir, a, NULL, 0, 0); break;
	case PN_FOP_TRUNCATE: ok = truncate(a, (off_t)op->off) == 0; break;
	case PN_FOP_FALLOCATE: ok = extend(a, op->off + op->len); break;
	case PN_FOP_RENAME:
		ok = op->path[0] && (op->path2[0] ? rename(a, b) == 0 : unlink(a) == 0);
		break;
	case PN_FOP_LINK: ok = op->path[0] && op->path2[0] && link(a, b) == 0; break;
	case PN_FOP_UNLINK: ok = unlink(a) == 0; break;
	case PN_FOP_MKDIR:
		ok = mkdir(a, 0700) == 0;
		if (ok)
			own(dir, a);
		break;
	case PN_FOP_RMDIR: ok = rmdir(a) == 0; break;
	default: /* FSYNC, SYNC_RANGE, ACK, MARK: no bytes change */ break;
	}
	if (!ok)
		snprintf(why, why_len, "%s %s%s%s: %s", pn_fop_name(op->kind), op->path,
			 op->path2[0] ? " -> " : "", op->path2,
			 op->path[0] ? strerror(errno) : "from outside the data directory");
	return ok;
}
