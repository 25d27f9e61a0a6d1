/*
 * oplog.c: reading the operation log record.c writes (pgcrash layer; format in oplog.h).
 */
#include "oplog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OP_NAME_(k, s) s,

const char *pn_fop_name(enum pn_fop_kind k)
{
	static const char *const names[PN_FOP_KINDS] = {PN_FOP_LIST(OP_NAME_)};
	return (unsigned)k < PN_FOP_KINDS ? names[k] : "?";
}

static bool read_all(const char *path, uint8_t **buf, size_t *size, char *why, size_t len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(why, len, "%s: %s", path, strerror(errno));
		return false;
	}
	size_t cap = 1 << 20, n = 0;
	uint8_t *b = malloc(cap);
	for (size_t r; b && (r = fread(b + n, 1, cap - n, f)) > 0;) {
		n += r;
		if (n == cap) {
			uint8_t *nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
			cap *= 2;
		}
	}
	bool err = ferror(f) || !b;
	fclose(f);
	if (err) {
		free(b);
		snprintf(why, len, "%s: cannot read it whole", path);
		return false;
	}
	*buf = b;
	*size = n;
	return true;
}

/* The record at *at; false (why: file and offset) when it is not one. */
static bool parse(const struct pn_oplog *log, size_t *at, struct pn_fop *op, const char *path,
		  char *why, size_t len)
{
	struct pn_fop_head h;
	size_t start = *at;
	if (log->size - start < sizeof(h)) {
		snprintf(why, len, "%s: byte %zu: a record cut short", path, start);
		return false;
	}
	memcpy(&h, log->buf + start, sizeof(h));
	uint64_t body = (uint64_t)h.path_len + h.path2_len + (h.kind == PN_FOP_WRITE ? h.len : 0);
	if (h.magic != PN_FOP_MAGIC || h.kind >= PN_FOP_KINDS || h.path_len >= sizeof(op->path) ||
	    h.path2_len >= sizeof(op->path2) || body > log->size - start - sizeof(h)) {
		snprintf(why, len, "%s: byte %zu: not an operation record (or cut short)", path,
			 start);
		return false;
	}
	const uint8_t *p = log->buf + start + sizeof(h);
	*op = (struct pn_fop){.kind = h.kind,
			      .flags = h.flags,
			      .pid = h.pid,
			      .off = h.off,
			      .len = h.len};
	memcpy(op->path, p, h.path_len);
	memcpy(op->path2, p + h.path_len, h.path2_len);
	if (h.kind == PN_FOP_WRITE)
		op->data = p + h.path_len + h.path2_len;
	*at = start + sizeof(h) + (size_t)body;
	return true;
}

bool pn_oplog_load(struct pn_oplog *log, const char *path, char *why, size_t len)
{
	memset(log, 0, sizeof(*log));
	if (!read_all(path, &log->buf, &log->size, why, len))
		return false;
	uint32_t cap = 0;
	for (size_t at = 0; at < log->size;) {
		if (log->n == cap) {
			cap = cap ? cap * 2 : 1024;
			struct pn_fop *ops = realloc(log->ops, cap * sizeof(*ops));
			if (!ops) {
				snprintf(why, len, "%s: out of memory", path);
				pn_oplog_free(log);
				return false;
			}
			log->ops = ops;
		}
		if (!parse(log, &at, &log->ops[log->n], path, why, len)) {
			pn_oplog_free(log);
			return false;
		}
		log->n++;
	}
	return true;
}

void pn_oplog_free(struct pn_oplog *log)
{
	free(log->buf);
	free(log->ops);
	memset(log, 0, sizeof(*log));
}
