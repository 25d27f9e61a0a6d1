/*
 * redo.c: the redo table (format layer, redo.h): one row per record kind, read from
 * rmgrlist.h, and the two lookups the table serves.
 *
 * Lookup by kind is the row itself (rows[kind]); lookup by (rmid, info), which the redo of
 * every block does, is a [rmid][info >> 4] index built at compile time from the same rows:
 * entry 0 is "no such kind", else the kind + 1. A row's info has its low four bits zero
 * (checked at compile time), two rows with one (rmid, info) would initialize one entry
 * twice (-Woverride-init, an error here), and an info with low bits set is no kind, as
 * before.
 *
 * One kind is no row of rmgrlist.h: PN_REC_IMPORTED (redo.h), every rmid's record with info
 * bit PN_INFO_IMPORTED, looked up before the index.
 *
 * pn_redo_apply(): a block image to restore wins (the page becomes the image); otherwise
 * the row's apply, none meaning the record changes no page.
 */
#include "redo.h"

#include "redo_btree.h"
#include "redo_heap.h"
#include "redo_xlog.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	uint8_t rmid, info;
	pn_redo_apply_fn apply;
	pn_redo_describe_fn describe;
} rows[PN_REC_COUNT] = {
#define PN_RECORD(symbol, name_, rmid_, info_, apply_, describe_) \
	[PN_REC_##symbol] = {name_, rmid_, info_, apply_, describe_},
#include "rmgrlist.h"
#undef PN_RECORD
	[PN_REC_IMPORTED] = {"Imported/RECORD", PN_RM_XLOG, PN_INFO_IMPORTED, pn_redo_imported,
			     pn_redo_xlog_describe},
};

#define INFO_SLOTS 16u
static const uint8_t kind_of[PN_RM_MAX + 1][INFO_SLOTS] = {
#define PN_RECORD(symbol, name_, rmid_, info_, apply_, describe_) \
	[rmid_][(info_) >> 4] = PN_REC_##symbol + 1,
#include "rmgrlist.h"
#undef PN_RECORD
};

#define PN_RECORD(symbol, name_, rmid_, info_, apply_, describe_)   \
	_Static_assert(((info_)&0x0F) == 0 && (rmid_) <= PN_RM_MAX, \
		       "rmgrlist.h: " #symbol                       \
		       "'s info uses the flag bits or its rmid is too large");
#include "rmgrlist.h"
#undef PN_RECORD
_Static_assert(PN_REC_COUNT < 255, "kind_of holds kind + 1 in a byte");

const char *pn_rec_name(enum pn_rec r)
{
	PN_ASSERT((unsigned)r < PN_REC_COUNT);
	return rows[r].name;
}

void pn_rec_ids(enum pn_rec r, uint8_t *rmid, uint8_t *info)
{
	PN_ASSERT((unsigned)r < PN_REC_COUNT);
	*rmid = rows[r].rmid;
	*info = rows[r].info;
}

bool pn_rec_from_ids(uint8_t rmid, uint8_t info, enum pn_rec *out)
{
	if (info & PN_INFO_IMPORTED) { /* any manager's: the import workload's records */
		*out = PN_REC_IMPORTED;
		return true;
	}
	if (rmid > PN_RM_MAX || (info & 0x0Fu) != 0)
		return false;
	uint8_t k = kind_of[rmid][info >> 4];
	if (k == 0)
		return false;
	*out = (enum pn_rec)(k - 1);
	PN_ASSERT(*out < PN_REC_COUNT && rows[*out].rmid == rmid && rows[*out].info == info);
	return true;
}

bool pn_redo_apply(uint8_t *page, uint32_t page_size, const struct pn_wal_record *r,
		   const struct pn_wal_block *b)
{
	enum pn_rec kind;
	PN_ASSERT(page != NULL && b != NULL && page_size != 0);
	if (b->has_image && b->image_apply) {
		PN_ASSERT(b->image != NULL);
		memcpy(page, b->image, page_size);
		return true;
	}
	if (!pn_rec_from_ids(r->rmid, r->info, &kind) || !rows[kind].apply)
		return false;
	return rows[kind].apply(page, page_size, r, b);
}

bool pn_redo_sets_lsn(const struct pn_wal_record *r, const struct pn_wal_block *b,
		      bool hints_logged)
{
	enum pn_rec kind;
	PN_ASSERT(b >= r->blocks && b < r->blocks + r->nblocks);
	if (hints_logged || (b->has_image && b->image_apply) ||
	    !pn_rec_from_ids(r->rmid, r->info, &kind))
		return true;
	return !(kind == PN_REC_HEAP2_VISIBLE && b == &r->blocks[1]);
}

/* Where text goes after n characters of out (len bytes): its end, or len once cut. */
static size_t at_of(int n, size_t len) { return n > 0 && (size_t)n < len ? (size_t)n : len; }

int pn_redo_describe(const struct pn_wal_record *r, char *out, size_t len)
{
	enum pn_rec kind;
	if (!pn_rec_from_ids(r->rmid, r->info, &kind))
		return snprintf(out, len, "rmid %u info 0x%02X (unknown)", r->rmid, r->info);
	int n = snprintf(out, len, "%s", rows[kind].name);
	int k = rows[kind].describe(r, out + at_of(n, len), len - at_of(n, len));
	n += k > 0 ? k : 0;
	for (uint32_t i = 0; i < r->nblocks; i++) {
		const struct pn_wal_block *b = &r->blocks[i];
		k = snprintf(out + at_of(n, len), len - at_of(n, len), "%s blk %u%s", i ? "," : ";",
			     b->blkno, b->has_image ? " FPW" : "");
		n += k > 0 ? k : 0;
	}
	return n;
}
