/*
 * oplog.h: the operation log of a recorded PostgreSQL run (pgcrash layer; docs/pgcrash.md).
 *
 * record.c (an LD_PRELOAD library in every server process) appends one record per file
 * operation on a file under the data directory, and the driver (pgcrash.c) appends the
 * client's acknowledgements, all to one file under one fcntl() write lock held from before
 * the operation until its record is written: the order of the records is an order in which
 * the operations happened (O1).
 *
 * A record, in the byte order of the machine that wrote it:
 *   u32 magic PN_FOP_MAGIC | u16 kind | u16 flags | u32 pid | u32 path_len | u32 path2_len |
 *   u32 reserved (0) | u64 off | u64 len | path (path_len bytes, no NUL) | path2 | data
 * where data is len bytes for PN_FOP_WRITE and absent otherwise. Paths are relative to the
 * data directory ("base/5/16384", "." for the directory itself).
 *   O2 A WRITE with PN_FOPF_SYNC went through a descriptor opened with O_SYNC or O_DSYNC:
 *      it is durable when it returns.
 *   O3 ACK records carry the commit number (off) the client saw acknowledged; MARK records
 *      (off: a PN_MARK_* value) split the log into its phases.
 */
#ifndef PN_OPLOG_H
#define PN_OPLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PN_FOP_MAGIC 0x504f4e50u /* "PNOP" */

#define PN_FOP_LIST(X)                   \
	X(WRITE, "write")                \
	X(FSYNC, "fsync")                \
	X(SYNC_RANGE, "sync_file_range") \
	X(CREATE, "create")              \
	X(TRUNCATE, "truncate")          \
	X(FALLOCATE, "fallocate")        \
	X(RENAME, "rename")              \
	X(UNLINK, "unlink")              \
	X(MKDIR, "mkdir")                \
	X(RMDIR, "rmdir")                \
	X(LINK, "link")                  \
	X(ACK, "ack")                    \
	X(MARK, "mark")
#define PN_FOP_ENUM_(k, s) PN_FOP_##k,
enum pn_fop_kind { PN_FOP_LIST(PN_FOP_ENUM_) PN_FOP_KINDS };

#define PN_FOPF_SYNC 1u     /* O2 */
#define PN_FOPF_DATASYNC 2u /* FSYNC: fdatasync */

enum pn_mark { PN_MARK_WORKLOAD = 1, PN_MARK_END = 2 };

struct pn_fop_head {
	uint32_t magic;
	uint16_t kind, flags;
	uint32_t pid, path_len, path2_len, reserved;
	uint64_t off, len;
};

/* One record as read: pointers into the loaded log. */
struct pn_fop {
	enum pn_fop_kind kind;
	uint32_t flags, pid;
	uint64_t off, len;
	char path[256], path2[256];
	const uint8_t *data; /* WRITE: len bytes */
};

struct pn_oplog {
	uint8_t *buf;
	size_t size;
	struct pn_fop *ops;
	uint32_t n;
};

/* "write"; "?" out of range. */
const char *pn_fop_name(enum pn_fop_kind k);
/* Loads path; false with the reason (naming the file and the byte offset) in why. */
bool pn_oplog_load(struct pn_oplog *log, const char *path, char *why, size_t len);
void pn_oplog_free(struct pn_oplog *log);

#endif
