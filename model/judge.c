/*
 * judge.c: the judgement of a recovered crash state, C1-C3 (model layer; judge.h has rules
 * J1-J4). Each check returns the violation's kind (J1); the driver and the replay call the
 * same functions, so a trace replays with the verdict the check gave.
 */
#include "judge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "redo.h"
#include "walfmt.h"

enum exp_state {
	EXP_NONE,
	EXP_FILLED,
	EXP_PASSED,          /* passed from the buffer pool (not verified) */
	EXP_PASSED_VERIFIED, /* passed as read back from storage (checksum and header verified) */
};

void pn_judge_init(struct pn_judge *j, const struct pn_scenario *sc)
{
	*j = (struct pn_judge){.sc = sc};
	j->expected = malloc(sc->storage.page_size);
	j->found = malloc(sc->storage.page_size);
	PN_ASSERT(j->expected != NULL && j->found != NULL);
}

void pn_judge_free(struct pn_judge *j)
{
	free(j->expected);
	free(j->found);
	free(j->exp_pages);
	free(j->pass_pages);
	free(j->have);
	*j = (struct pn_judge){0};
}

void pn_judge_point(struct pn_judge *j) { j->exp_valid = false; }

struct pn_world *pn_judge_crashed(const struct pn_judge *j, const struct pn_device *dev,
				  const struct pn_write_fate *fates, uint32_t schedule, bool track)
{
	struct pn_world *r = calloc(1, sizeof(*r));
	struct pn_world_options o = {.track = track,
				     .check_each_event = true,
				     .blank = true,
				     .schedule = schedule};
	PN_ASSERT(r != NULL && fates != NULL);
	if (!pn_world_init(r, j->sc, &o, NULL))
		PN_ASSERT(!"a scenario that ran cannot be recovered from");
	pn_device_crash_image(dev, fates, &r->dev);
	return r;
}

struct pn_world *pn_judge_recover(const struct pn_judge *j, const struct pn_device *dev,
				  const struct pn_write_fate *fates, uint32_t schedule, bool track,
				  int *rc)
{
	struct pn_world *r = pn_judge_crashed(j, dev, fates, schedule, track);
	*rc = pn_world_recover(r);
	PN_ASSERT(*rc >= 0 && *rc <= 2);
	pn_assert_context(NULL, NULL);
	return r;
}

void pn_judge_world_free(struct pn_world *r)
{
	pn_world_free(r);
	free(r);
}

static void hex(char *buf, size_t len, const uint8_t *p, uint32_t n)
{
	size_t at = 0;
	for (uint32_t i = 0; i < n && at + 3 < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%02x", p[i]);
}

/* C2 for page p of a recovered engine whose bytes `found` were just read (resident: from its
 * buffer pool) against the oracle's page `expected` (J1: checksum, or exactness). */
static enum pn_violation_kind judge_page(struct pn_engine *e, const struct pn_oracle *o, uint32_t p,
					 pn_lsn end, const uint8_t *expected, const uint8_t *found,
					 bool resident, char *detail, size_t detail_len)
{
	const struct pn_scenario *sc = pn_engine_scenario(e);
	struct pn_geometry geo = pn_engine_geometry(e);
	bool headerless = pn_engine_is_slru(e, p) && !sc->protocol.slru_headers;
	bool sums = pn_engine_is_slru(e, p) ? sc->protocol.slru_headers : sc->protocol.checksums;
	PN_ASSERT(p < geo.pages);
	if (!resident && !headerless && !pn_page_verify(found, geo.page_size, p, sums)) {
		snprintf(detail, detail_len,
			 "after recovery page %u fails verification (%s): the next read of it is "
			 "an error",
			 p, sums ? "checksum or header" : "header");
		return PN_VIOL_CHECKSUM;
	}
	int off = pn_oracle_compare(o, p, expected, found);
	if (off < 0)
		return PN_VIOL_NONE;
	PN_ASSERT((uint32_t)off < geo.page_size);
	char exp[40], got[40];
	uint32_t n = PN_MIN(16u, geo.page_size - (uint32_t)off);
	hex(exp, sizeof(exp), expected + off, n);
	hex(got, sizeof(got), found + off, n);
	snprintf(detail, detail_len,
		 "page %u%s differs from the oracle at byte %d: expected %s, found %s; expected "
		 "page LSN %llX, found %llX (recovered WAL ends at %llX)",
		 p, pn_engine_is_slru(e, p) ? " (SLRU)" : "", off, exp, got,
		 (unsigned long long)pn_page_lsn(expected), (unsigned long long)pn_page_lsn(found),
		 (unsigned long long)end);
	return PN_VIOL_EXACTNESS;
}

/* I5 after recovery: the relation's size is the oracle's (a page that should not exist,
 * or one missing, is a C2 difference: PN_VIOL_EXACTNESS); pages at or past it are not
 * compared. */
static enum pn_violation_kind recovered_size(struct pn_engine *e, const struct pn_oracle *o,
					     pn_lsn end, uint32_t *nblocks, char *detail,
					     size_t detail_len, uint32_t *bad_page)
{
	uint32_t want = pn_oracle_rel_blocks(o, end), got = pn_engine_rel_blocks(e);
	*nblocks = want;
	if (want == got)
		return PN_VIOL_NONE;
	snprintf(detail, detail_len,
		 "after recovery the relation has %u blocks, the oracle expects %u (recovered WAL "
		 "ends at %llX)",
		 got, want, (unsigned long long)end);
	*bad_page = PN_MIN(want, got);
	return PN_VIOL_EXACTNESS;
}

enum pn_violation_kind pn_judge_pages(struct pn_engine *e, struct pn_oracle *o, pn_lsn end,
				      uint8_t *expected, uint8_t *found, char *detail,
				      size_t detail_len, uint32_t *bad_page)
{
	struct pn_geometry geo = pn_engine_geometry(e);
	uint32_t nblocks;
	enum pn_violation_kind kind = recovered_size(e, o, end, &nblocks, detail, detail_len,
						     bad_page);
	for (uint32_t p = 0; p < geo.pages && kind == PN_VIOL_NONE; p++) {
		if (p >= nblocks && p < geo.heap_pages)
			continue; /* truncated: no page to compare */
		/* the recovered engine's bytes, read through its own seam (the simulated device,
		 * or a real file); pushdown: what the page server reconstructs at the recovered
		 * end (C2 for pushdown). Its page server checked its images' CRCs; the page it
		 * rebuilds is not checksummed until the compute writes it, which it never does */
		bool resident;
		pn_oracle_page(o, p, end, expected);
		pn_engine_read_page(e, p, end, found, &resident);
		kind = judge_page(e, o, p, end, expected, found, resident, detail, detail_len);
		if (kind != PN_VIOL_NONE)
			*bad_page = p;
	}
	return kind;
}

bool pn_check_recovered_pages(struct pn_engine *e, struct pn_oracle *o, pn_lsn end,
			      uint8_t *expected, uint8_t *found, char *detail, size_t detail_len,
			      uint32_t *bad_page)
{
	return pn_judge_pages(e, o, end, expected, found, detail, detail_len, bad_page) ==
	       PN_VIOL_NONE;
}

/* The oracle's page p at end, from the point's table (filled on first use). Valid while
 * the oracle takes no record: within one crash point (J3). */
static const uint8_t *expected_page(struct pn_judge *j, uint32_t p, pn_lsn end)
{
	size_t size = j->sc->storage.page_size;
	if (!j->exp_valid || j->exp_end != end) {
		memset(j->have, 0, j->npages * sizeof(*j->have));
		j->exp_end = end;
		j->exp_valid = true;
	}
	PN_ASSERT(p < j->npages);
	if (j->have[p] == EXP_NONE) {
		pn_oracle_page(j->oracle, p, end, j->exp_pages + p * size);
		j->have[p] = EXP_FILLED;
	}
	return j->exp_pages + p * size;
}

/* The point's table holds pages pages (J3). */
static void table_room(struct pn_judge *j, uint32_t pages)
{
	if (j->npages >= pages)
		return;
	size_t size = j->sc->storage.page_size;
	free(j->exp_pages);
	free(j->pass_pages);
	free(j->have);
	j->exp_pages = malloc((size_t)pages * size);
	j->pass_pages = malloc((size_t)pages * size);
	j->have = calloc(pages, sizeof(*j->have));
	PN_ASSERT(j->exp_pages != NULL && j->pass_pages != NULL && j->have != NULL);
	j->npages = pages;
	j->exp_valid = false;
}

/*
 * C2, fast (J3): the oracle's pages from the point's table (the same bytes as
 * pn_oracle_page's, --cross-check compares), and a page whose recovered bytes equal, byte
 * for byte, bytes that already passed C2 for the same page at the same end within this crash
 * point passes without the checksum and the masked comparison. That cannot change a verdict:
 * judge_page is a function of the page's number, the end, the oracle's page there (fixed
 * within a point: the oracle takes no record while its states are judged, and the table is
 * cleared when the end changes), the scenario's checksum settings, whether the bytes came
 * from the buffer pool (resident pages are not verified) and the bytes; equal inputs give the
 * equal result. Bytes that passed only from the pool (EXP_PASSED, never verified) stand for a
 * resident page only; bytes that passed verification (EXP_PASSED_VERIFIED) stand for either.
 */
static enum pn_violation_kind compare_pages(struct pn_judge *j, struct pn_world *r, pn_lsn end,
					    uint32_t *bad_page)
{
	struct pn_geometry geo = pn_engine_geometry(r->e);
	size_t size = j->sc->storage.page_size;
	uint32_t nblocks;
	table_room(j, geo.pages);
	enum pn_violation_kind kind = recovered_size(r->e, j->oracle, end, &nblocks, j->detail,
						     sizeof(j->detail), bad_page);
	for (uint32_t p = 0; p < geo.pages && kind == PN_VIOL_NONE; p++) {
		if (p >= nblocks && p < geo.heap_pages)
			continue; /* truncated: no page to compare */
		const uint8_t *exp = expected_page(j, p, end);
		uint8_t *passed = j->pass_pages + p * size;
		const uint8_t *found = pn_engine_page_view(r->e, p); /* a buffer's, not copied */
		bool resident = found != NULL;
		if (!found) {
			pn_engine_read_page(r->e, p, end, j->found, &resident);
			found = j->found;
		}
		uint8_t st = j->have[p];
		if ((st == EXP_PASSED_VERIFIED || (st == EXP_PASSED && resident)) &&
		    memcmp(found, passed, size) == 0)
			continue;
		kind = judge_page(r->e, j->oracle, p, end, exp, found, resident, j->detail,
				  sizeof(j->detail));
		if (kind != PN_VIOL_NONE) {
			memcpy(j->expected, exp, size);
			if (found != j->found) /* the report's copy (replay.c) */
				memcpy(j->found, found, size);
			*bad_page = p;
		} else if (st != EXP_PASSED_VERIFIED) {
			memcpy(passed, found, size);
			j->have[p] = resident ? EXP_PASSED : EXP_PASSED_VERIFIED;
		}
	}
	return kind;
}

/* Whether the record header at rec (xl_info at 16, xl_rmid at 17) is a checkpoint record's. */
static bool is_checkpoint(const uint8_t *rec)
{
	enum pn_rec kind;
	return pn_rec_from_ids(rec[17], rec[16], &kind) &&
	       (kind == PN_REC_XLOG_CHECKPOINT_ONLINE || kind == PN_REC_XLOG_CHECKPOINT_SHUTDOWN);
}

/* Whether the WAL bytes a (r's) and b (the run's), n bytes read at upto, each begin with a
 * checkpoint record of the same length, inside one WAL page; *len is its MAXALIGNed
 * length. */
static bool checkpoint_pair(const uint8_t *a, const uint8_t *b, uint64_t n, pn_lsn upto,
			    uint64_t *len)
{
	if (n < 24)
		return false;
	uint32_t tot = pn_get32(a);
	if (!is_checkpoint(a) || !is_checkpoint(b) || pn_get32(b) != tot || tot < 24 ||
	    upto % PN_XLOG_BLCKSZ + tot > PN_XLOG_BLCKSZ)
		return false;
	*len = PN_ALIGN8(tot);
	return true;
}

/* J5: the end r is judged to, upto for a crash inside recovery unless r's recovery went past
 * it on the crashed run's own WAL bytes (end: r's recovered WAL end). The record at upto may
 * be the first recovery's end-of-recovery checkpoint record where the run's lost one was
 * (docs/protocol.md, the checkpoint record: the splice oldestActiveXid does not cover): a
 * checkpoint record changes no page, so the history replayed is the run's up to end. */
static pn_lsn judged_end(const struct pn_judge *j, const struct pn_world *r, pn_lsn upto,
			 pn_lsn end)
{
	if (end <= upto)
		return end;
	PN_ASSERT(j->history != NULL); /* a bound is set for a crash inside recovery only */
	uint64_t seg = pn_engine_wal_seg_size(r->e);
	uint8_t a[4096], b[4096];
	for (pn_lsn at = upto; at < end;) {
		uint64_t n = PN_MIN(PN_MIN(end - at, sizeof(a)), seg - at % seg);
		uint64_t off = pn_engine_wal_file_offset(r->e, at);
		if (!pn_device_peek(&r->dev, PN_FILE_WAL, off, (uint32_t)n, a) ||
		    !pn_device_peek(j->history, PN_FILE_WAL, off, (uint32_t)n, b))
			return upto; /* the run's recycled WAL: the bound holds */
		uint64_t same = 0, skip;
		if (at == upto && checkpoint_pair(a, b, n, upto, &skip) && skip < n)
			same = skip; /* the first recovery's checkpoint record for the run's */
		if (memcmp(a + same, b + same, n - same) != 0)
			return upto; /* the first recovery's own record: the bound holds */
		at += n;
	}
	return end;
}

void pn_judge_recovered(struct pn_judge *j, struct pn_world *r, int rc, pn_lsn upto,
			struct pn_verdict *v, bool fast)
{
	PN_ASSERT(j->oracle != NULL && rc >= 0 && rc <= 2);
	v->end = pn_engine_recovery_end(r->e);
	v->kind = PN_VIOL_NONE;
	if (rc == 1) {
		const struct pn_violation *viol = pn_engine_violation_of(r->e);
		v->kind = viol->kind;
		v->page = viol->page;
		snprintf(j->detail, sizeof(j->detail), "recovery failed: %s", viol->detail);
	} else if (rc == 2) {
		v->kind = PN_VIOL_RECOVERY;
		v->page = UINT32_MAX;
		snprintf(j->detail, sizeof(j->detail), "recovery did not finish: %s", r->error);
	} else if (fast) {
		v->kind = compare_pages(j, r, judged_end(j, r, upto, v->end), &v->page);
	} else {
		v->kind = pn_judge_pages(r->e, j->oracle, judged_end(j, r, upto, v->end),
					 j->expected, j->found, j->detail, sizeof(j->detail),
					 &v->page);
	}
	PN_ASSERT(v->kind < PN_VIOL_COUNT);
}

bool pn_check_acked(const uint32_t *xids, const pn_lsn *lsns, uint64_t n, pn_lsn end, char *detail,
		    size_t detail_len)
{
	for (uint64_t i = 0; i < n; i++) {
		if (lsns[i] <= end)
			continue;
		snprintf(detail, detail_len,
			 "commit of xid %u was acknowledged (its record ends at %llX) but the "
			 "recovered WAL ends at %llX",
			 xids[i], (unsigned long long)lsns[i], (unsigned long long)end);
		return false;
	}
	return true;
}

void pn_judge_acks(struct pn_judge *j, const struct pn_engine *run, struct pn_verdict *v)
{
	if (v->kind != PN_VIOL_NONE)
		return; /* J2: C1 only after C2/C3 passed */
	struct pn_acks_view acks;
	pn_engine_acks(run, &acks);
	if (!pn_check_acked(acks.xids, acks.lsns, acks.n, v->end, j->detail, sizeof(j->detail)))
		v->kind = PN_VIOL_DURABILITY;
}

struct pn_oracle *pn_check_oracle_new(const struct pn_engine *e)
{
	struct pn_geometry geo = pn_engine_geometry(e);
	uint8_t *initial = malloc((size_t)geo.pages * geo.page_size);
	PN_ASSERT(initial != NULL);
	for (uint32_t p = 0; p < geo.pages; p++)
		pn_engine_initial_page(e, p, initial + (size_t)p * geo.page_size);
	struct pn_oracle *o = pn_oracle_new(geo.heap_pages, geo.slru_pages, geo.page_size,
					    pn_engine_scenario(e)->protocol.slru_headers, initial);
	free(initial);
	PN_ASSERT(o != NULL);
	const struct pn_scenario *sc = pn_engine_scenario(e);
	pn_oracle_set_hints_logged(o, sc->protocol.checksums || sc->protocol.wal_log_hints);
	return o;
}
