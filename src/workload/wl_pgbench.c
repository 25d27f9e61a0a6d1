/*
 * wl_pgbench.c: pgbench's built-in TPC-B-like transaction (workload layer), over the tables
 * pgbench -i creates at `workload.scale` (fillfactor 100, as pgbench's default):
 *
 *   table              rows            t_len  why
 *   pgbench_branches   1 x scale       32     bid, bbalance; filler NULL (null bitmap)
 *   pgbench_tellers    10 x scale      36     tid, bid, tbalance; filler NULL
 *   pgbench_accounts   100,000 x scale 121    aid, bid, abalance, filler char(84)
 *   pgbench_history    appended        48     tid, bid, aid, delta, mtime; filler NULL
 *   three primary keys on int4 (16 B index tuples); history has none.
 *
 * One transaction, `workload.transactions` of them over the clients:
 *   UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
 *   SELECT abalance FROM pgbench_accounts WHERE aid = :aid;     (a read: no WAL, not run)
 *   UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
 *   UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
 *   INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (...);
 *   END;
 * aid, tid and bid uniform. An accounts page loaded full has no room for a new version, so
 * its first update is non-HOT (Heap/LOCK, which carries the page's image after a
 * checkpoint, then Heap/UPDATE to a page at the table's end and a Btree/INSERT_LEAF into
 * pgbench_accounts_pkey); pruning then leaves room and later updates of that page are
 * HOT, which is what PostgreSQL 15 logged (docs/research pg15-waldump/pgbench_stats.txt:
 * non-HOT updates = distinct accounts pages touched). Tellers and branches pages have room:
 * HOT. The changed column is 4 bytes; the unchanged bytes around it are the update's
 * prefix and suffix, as heapam's log_heap_update compresses them.
 */
#include "layout.h"
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ACCOUNTS_PER_SCALE = 100000, TELLERS_PER_SCALE = 10 };
enum { STEP_ACCOUNTS, STEP_TELLERS, STEP_BRANCHES, STEP_HISTORY, STEP_COMMIT };

struct client {
	struct wl_txn t; /* t.q: the changes to hand out */
	int step;
	uint64_t aid, tid, bid;
};

struct pgbench {
	struct wl_layout_state s; /* first: what layout.c's hooks read of the state */
	uint32_t branches, tellers, accounts, history, accounts_pkey;
	struct client *clients;
};

static uint64_t key_identity(const void *ctx, uint64_t i)
{
	(void)ctx;
	return i + 1;
}

static const char *txn_name(int t) { return t == 0 ? "TPC-B" : NULL; }

/* The tables and indexes of scale and n transactions, on g->s.L (page_size set). */
static void lay_out(struct pgbench *g, uint64_t scale, uint64_t n)
{
	uint32_t accounts = (uint32_t)(scale * ACCOUNTS_PER_SCALE);
	g->branches = wl_table(&g->s.L, "pgbench_branches", (uint32_t)scale, 32, 100, 0);
	g->tellers = wl_table(&g->s.L, "pgbench_tellers", (uint32_t)scale * TELLERS_PER_SCALE, 36,
			      100, 0);
	/* room for one moved version per accounts page */
	uint32_t per_page = pn_heap_rows_per_page(g->s.L.page_size, 121, 100);
	uint32_t moved = (accounts + per_page - 1) / per_page;
	g->accounts = wl_table(&g->s.L, "pgbench_accounts", accounts, 121, 100, moved);
	g->history = wl_table(&g->s.L, "pgbench_history", 0, 48, 100, (uint32_t)n);
	wl_index(&g->s.L, "pgbench_branches_pkey", g->branches, 16, scale, key_identity, NULL, 0);
	wl_index(&g->s.L, "pgbench_tellers_pkey", g->tellers, 16, scale * TELLERS_PER_SCALE,
		 key_identity, NULL, 0);
	g->accounts_pkey = wl_index(&g->s.L, "pgbench_accounts_pkey", g->accounts, 16, accounts,
				    key_identity, NULL, moved);
}

uint32_t wl_pgbench_pages(const struct pn_scenario *sc)
{
	struct pgbench g = {.s.L = {.page_size = sc->storage.page_size, .size_only = true}};
	lay_out(&g, sc->workload.scale, sc->workload.transactions);
	return g.s.L.pages;
}

static bool init(struct pn_client_setup *setup, void **state)
{
	const struct pn_scenario *sc = setup->sc;
	uint64_t scale = sc->workload.scale, n = sc->workload.transactions;
	if (!wl_state_new(setup, state, sizeof(struct pgbench)))
		return false;
	struct pgbench *g = *state;
	if (!wl_base_init(&g->s.b, setup, false))
		return false;
	g->s.L.page_size = setup->page_size;
	g->s.L.clients = sc->workload.clients;
	if (scale * ACCOUNTS_PER_SCALE > UINT32_MAX || n > UINT32_MAX) {
		snprintf(setup->error, setup->error_size,
			 "%s: pgbench scale %llu or %llu transactions "
			 "is too large for this model",
			 sc->path, (unsigned long long)scale, (unsigned long long)n);
		return false;
	}
	lay_out(g, scale, n);
	g->clients = calloc(sc->workload.clients, sizeof(*g->clients));
	if (!g->clients)
		return false;
	char what[64];
	snprintf(what, sizeof(what), "pgbench at scale %llu", (unsigned long long)scale);
	return wl_check_storage(setup, &g->s.L, what);
}

static void free_state(void *state)
{
	struct pgbench *g = state;
	wl_layout_free(&g->s.L);
	free(g->clients);
	wl_base_free(&g->s.b);
	free(g);
}

/* Expands the client's next statement into changes; false at the transaction's end. */
static bool expand(struct pgbench *g, struct client *c)
{
	struct wl_layout *L = &g->s.L;
	switch (c->step++) {
	case STEP_ACCOUNTS: {
		uint32_t idx = g->accounts_pkey;
		uint64_t key = c->aid;
		/* aid 0..3, bid 4..7, abalance 8..11, filler 12..96 */
		wl_update_row(L, g->accounts, c->aid - 1, 8, 4, &idx, &key, 1, &c->t.q);
		return true;
	}
	case STEP_TELLERS: /* tid, bid, tbalance: the last 4 of 12 bytes */
		wl_update_row(L, g->tellers, c->tid - 1, 8, 4, NULL, NULL, 0, &c->t.q);
		return true;
	case STEP_BRANCHES: /* bid, bbalance */
		wl_update_row(L, g->branches, c->bid - 1, 4, 4, NULL, NULL, 0, &c->t.q);
		return true;
	case STEP_HISTORY: {
		struct pn_change ins = {.kind = PN_REC_HEAP_INSERT,
					.nblocks = 1,
					.t_len = L->rels[g->history].t_len};
		wl_append(L, g->history, &ins.pages[0], &ins.offnum);
		wl_push(&c->t.q, &ins);
		return true;
	}
	default: return false;
	}
}

static int begin(void *state, const struct pn_client *cl)
{
	struct pgbench *g = state;
	struct client *c = &g->clients[cl->id];
	uint64_t scale = g->s.b.sc->workload.scale;
	c->step = 0;
	c->aid = wl_random(cl, 1, scale * ACCOUNTS_PER_SCALE);
	c->tid = wl_random(cl, 1, scale * TELLERS_PER_SCALE);
	c->bid = wl_random(cl, 1, scale);
	return 0;
}

static bool expand_client(void *state, uint32_t client)
{
	struct pgbench *g = state;
	return expand(g, &g->clients[client]);
}

static enum pn_client_next next(void *state, const struct pn_client *c, struct pn_step *out)
{
	struct pgbench *g = state;
	return wl_next(&g->s, g, c, &g->clients[c->id].t, begin, expand_client, out);
}

const struct pn_client_ops pn_workload_pgbench = {
	.name = "pgbench",
	.init = init,
	.free = free_state,
	.next = next,
	.txn_name = txn_name,
	WL_LAYOUT_HOOKS,
};
