/*
 * pushdown_store.c: the pushdown page server's storage (protocol layer): the metadata's
 * snapshots and log records, the image slots' offsets, formatting, and recovery's reading of
 * them. pushdown_store.h documents the format byte by byte and keeps PS1-PS2.
 */
#include "pushdown_store.h"

#include <string.h>

uint32_t pn_ps_meta_len(const struct pn_proto_ctx *pc)
{
	uint32_t sec = pc->sc->storage.sector_size;
	return (PS_HEADER + PS_ENTRY * pc->store->pages + sec - 1) / sec * sec;
}

uint32_t pn_ps_log_len(const struct pn_proto_ctx *pc)
{
	uint32_t sec = pc->sc->storage.sector_size;
	return (PS_HEADER + PS_LOG_ENTRY * PS_BATCH + sec - 1) / sec * sec;
}

uint32_t pn_ps_log_slots(const struct pn_proto_ctx *pc)
{
	return PN_MAX(4u, PN_MIN(PS_LOG_SLOTS_MAX, pn_ps_meta_len(pc) / pn_ps_log_len(pc)));
}

uint64_t pn_ps_log_offset(const struct pn_proto_ctx *pc, uint64_t seq)
{
	return 2ull * pn_ps_meta_len(pc) + (seq % pn_ps_log_slots(pc)) * pn_ps_log_len(pc);
}

uint64_t pn_ps_image_offset(const struct pn_proto_ctx *pc, uint32_t page, uint32_t slot)
{
	PN_ASSERT(slot < 2 && page < pc->store->pages);
	return 2ull * pn_ps_meta_len(pc) + (uint64_t)pn_ps_log_slots(pc) * pn_ps_log_len(pc) +
	       ((uint64_t)page * 2u + slot) * pc->store->page_size;
}

void pn_ps_encode_meta(const struct pn_proto_ctx *pc, uint64_t seq, pn_lsn horizon, bool with_new)
{
	struct pn_pageserver *ps = pn_ps_of(pc);
	uint8_t *m = ps->meta;
	memset(m, 0, ps->meta_len);
	pn_put32(m, PS_MAGIC);
	pn_put32(m + 4, 1);
	pn_put64(m + 8, seq);
	pn_put64(m + 16, horizon);
	pn_put32(m + 24, pc->store->pages);
	for (uint32_t p = 0; p < pc->store->pages; p++) {
		const struct ps_page *pg = &ps->pages[p];
		uint8_t *ent = m + PS_HEADER + (size_t)PS_ENTRY * p;
		bool fresh = with_new && pg->in_round;
		pn_put64(ent, fresh ? pg->new_lsn : pg->dur_lsn);
		pn_put32(ent + 8, fresh ? pg->new_crc : pg->dur_crc);
		ent[12] = fresh ? (uint8_t)(1u - pg->dur_slot) : pg->dur_slot;
	}
	uint32_t crc = pn_crc32c_update(pn_crc32c_init(), m + PS_HEADER,
					(size_t)PS_ENTRY * pc->store->pages);
	pn_put32(m + 28, pn_crc32c_final(pn_crc32c_update(crc, m, 28)));
}

/* The log record of round `seq`: its images (the batch), as if durable. */
void pn_ps_encode_log(const struct pn_proto_ctx *pc, uint64_t seq, pn_lsn horizon)
{
	struct pn_pageserver *ps = pn_ps_of(pc);
	uint8_t *m = ps->meta;
	memset(m, 0, ps->log_len);
	pn_put32(m, PS_LOG_MAGIC);
	pn_put32(m + 4, ps->batch_len);
	pn_put64(m + 8, seq);
	pn_put64(m + 16, horizon);
	for (uint32_t i = 0; i < ps->batch_len; i++) {
		const struct ps_page *pg = &ps->pages[ps->batch[i]];
		uint8_t *ent = m + PS_HEADER + (size_t)PS_LOG_ENTRY * i;
		pn_put32(ent, ps->batch[i]);
		pn_put32(ent + 4, pg->new_crc);
		pn_put64(ent + 8, pg->new_lsn);
		ent[16] = (uint8_t)(1u - pg->dur_slot);
	}
	uint32_t crc = pn_crc32c_update(pn_crc32c_init(), m + PS_HEADER,
					(size_t)PS_LOG_ENTRY * ps->batch_len);
	pn_put32(m + 28, pn_crc32c_final(pn_crc32c_update(crc, m, 28)));
}

/* A log record that continues the metadata at version `seq`. */
static bool decode_log(const struct pn_proto_ctx *pc, const uint8_t *m, uint64_t seq)
{
	uint32_t n = pn_get32(m + 4);
	if (pn_get32(m) != PS_LOG_MAGIC || n > PS_BATCH || pn_get64(m + 8) != seq)
		return false;
	uint32_t crc = pn_crc32c_update(pn_crc32c_init(), m + PS_HEADER, (size_t)PS_LOG_ENTRY * n);
	if (pn_crc32c_final(pn_crc32c_update(crc, m, 28)) != pn_get32(m + 28))
		return false;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *ent = m + PS_HEADER + (size_t)PS_LOG_ENTRY * i;
		if (pn_get32(ent) >= pc->store->pages || ent[16] > 1)
			return false;
	}
	return true;
}

static bool decode_meta(const struct pn_proto_ctx *pc, const uint8_t *m, uint64_t *seq)
{
	if (pn_get32(m) != PS_MAGIC || pn_get32(m + 4) != 1 || pn_get32(m + 24) != pc->store->pages)
		return false;
	uint32_t crc = pn_crc32c_update(pn_crc32c_init(), m + PS_HEADER,
					(size_t)PS_ENTRY * pc->store->pages);
	if (pn_crc32c_final(pn_crc32c_update(crc, m, 28)) != pn_get32(m + 28))
		return false;
	for (uint32_t p = 0; p < pc->store->pages; p++)
		if (m[PS_HEADER + (size_t)PS_ENTRY * p + 12] > 1)
			return false;
	*seq = pn_get64(m + 8);
	return true;
}

void pn_ps_format(struct pn_proto_ctx *pc, pn_format_write_fn write, void *ctx)
{
	struct pn_pageserver *ps = pn_ps_of(pc);
	uint8_t *page = ps->images;
	for (uint32_t p = 0; p < pc->store->pages; p++) {
		pn_client_initial_page(pn_proto_client(pc), p, page);
		write(ctx, PN_FILE_PAGESERVER, pn_ps_image_offset(pc, p, 0), page,
		      pc->store->page_size);
		ps->pages[p].img_crc = ps->pages[p].dur_crc = pn_crc32c(page, pc->store->page_size);
	}
	pn_ps_encode_meta(pc, 0, ps->horizon, false);
	write(ctx, PN_FILE_PAGESERVER, 0, ps->meta, ps->meta_len);
}

/* ---- recovery: the durable metadata (PS2) ---- */

bool pn_ps_load_meta(struct pn_proto_ctx *pc)
{
	struct pn_pageserver *ps = pn_ps_of(pc);
	uint64_t best = 0, seq;
	int area = -1;
	for (int a = 0; a < 2; a++) {
		pc->svc->env.read_sync(pc->svc->env.ctx, PN_FILE_PAGESERVER,
				       (uint64_t)a * ps->meta_len, ps->meta_len, ps->meta);
		if (decode_meta(pc, ps->meta, &seq) && (area < 0 || seq > best)) {
			best = seq;
			area = a;
		}
	}
	if (area < 0) {
		pn_svc_violation(pc->svc, PN_VIOL_RECOVERY, UINT32_MAX,
				 "the page server has no valid metadata area");
		return false;
	}
	pc->svc->env.read_sync(pc->svc->env.ctx, PN_FILE_PAGESERVER, (uint64_t)area * ps->meta_len,
			       ps->meta_len, ps->meta);
	ps->seq = best;
	ps->horizon = pn_get64(ps->meta + 16);
	for (uint32_t p = 0; p < pc->store->pages; p++) {
		struct ps_page *pg = &ps->pages[p];
		const uint8_t *ent = ps->meta + PS_HEADER + (size_t)PS_ENTRY * p;
		pg->dur_lsn = pn_get64(ent);
		pg->dur_crc = pn_get32(ent + 8);
		pg->dur_slot = ent[12];
	}
	return true;
}

/* The log records after the snapshot, in seq order, while each is valid. */
void pn_ps_replay_log(struct pn_proto_ctx *pc)
{
	struct pn_pageserver *ps = pn_ps_of(pc);
	for (uint64_t seq = ps->seq + 1; seq % pn_ps_log_slots(pc) != 0; seq++) {
		pc->svc->env.read_sync(pc->svc->env.ctx, PN_FILE_PAGESERVER,
				       pn_ps_log_offset(pc, seq), ps->log_len, ps->meta);
		bool valid = decode_log(pc, ps->meta, seq);
		PN_TESTCASE("page server recovery applies a log record", valid);
		if (!valid)
			return;
		for (uint32_t i = 0; i < pn_get32(ps->meta + 4); i++) {
			const uint8_t *ent = ps->meta + PS_HEADER + (size_t)PS_LOG_ENTRY * i;
			struct ps_page *pg = &ps->pages[pn_get32(ent)];
			pg->dur_crc = pn_get32(ent + 4);
			pg->dur_lsn = pn_get64(ent + 8);
			pg->dur_slot = ent[16];
		}
		ps->seq = seq;
		ps->horizon = pn_get64(ps->meta + 16);
	}
}
