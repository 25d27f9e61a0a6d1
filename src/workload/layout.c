/*
 * layout.c: tables and indexes on ranges of the engine's logical pages, what the realistic
 * generators (wl_pgbench.c, wl_tpcc.c) share (workload layer; its rules are layout.h's):
 * relations, row placement, appends and growth, btree routing and splits, per-client
 * queues of changes, HOT and non-HOT updates, and the client loop over them (wl_next).
 */
#include "layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the layout workloads' hooks (pgbench, tpcc) ---- */

void wl_layout_page_init(const void *state, uint32_t p, uint8_t *page)
{
	const struct wl_layout_state *ls = state;
	if (!wl_page_init(&ls->L, page, p))
		pn_page_init(page, ls->b.page_size, p, false);
}

void wl_layout_page_init_fixed(const void *state, uint32_t p, uint8_t *page)
{
	const struct wl_layout_state *ls = state;
	if (!wl_page_init_fixed(&ls->L, page, p))
		pn_page_init(page, ls->b.page_size, p, false);
}

/* The append page of a layout relation that holds blkno, or NULL. */
static uint8_t *stale_of(const struct wl_layout *L, uint32_t blkno)
{
	for (uint32_t r = 0; r < L->nrels; r++) {
		const struct wl_rel *x = &L->rels[r];
		if (!x->index && blkno >= x->append_first &&
		    blkno < x->append_first + x->append_pages)
			return &x->stale[blkno - x->append_first];
	}
	return NULL;
}

bool wl_page_stale(const void *state, uint32_t blkno)
{
	const uint8_t *s = stale_of(&((const struct wl_layout_state *)state)->L, blkno);
	return s != NULL && *s;
}

void wl_page_inited(void *state, uint32_t blkno)
{
	uint8_t *s = stale_of(&((struct wl_layout_state *)state)->L, blkno);
	if (s)
		*s = 0;
}

void wl_change_done(void *state, const struct pn_client *c, const struct pn_change *chg)
{
	struct wl_layout_state *ls = state;
	if (chg->kind != PN_REC_BTREE_SPLIT_R)
		return;
	wl_split_done(&ls->L, chg);
	for (uint32_t i = 0; i < ls->b.sc->workload.clients; i++)
		pn_client_wake(c, i, 0); /* a client waiting for this split may go on */
}

/* ---- relations on page ranges -------------------------------------------------------- */

static uint32_t ceil_div(uint64_t a, uint64_t b) { return (uint32_t)((a + b - 1) / b); }

static struct wl_rel *new_rel(struct wl_layout *L, const char *name, bool index)
{
	PN_ASSERT(L->nrels < WL_MAX_RELS);
	struct wl_rel *r = &L->rels[L->nrels++];
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->index = index;
	r->first = L->pages;
	return r;
}

uint32_t wl_table(struct wl_layout *L, const char *name, uint32_t rows, uint32_t t_len,
		  uint32_t fillfactor, uint32_t append_rows)
{
	struct wl_rel *t = new_rel(L, name, false);
	uint32_t room = (uint32_t)PN_ALIGN8(t_len) + 4u;
	t->t_len = (uint16_t)t_len;
	t->rows = rows;
	t->rows_per_page = pn_heap_rows_per_page(L->page_size, t_len, fillfactor);
	PN_ASSERT(t->rows_per_page > 0);
	t->home_pages = rows ? ceil_div(rows, t->rows_per_page) : 0;
	t->append_first = t->first + t->home_pages;
	t->append_pages = ceil_div(append_rows, pn_heap_rows_per_page(L->page_size, t_len, 100)) +
			  1;
	t->npages = t->home_pages + t->append_pages;
	L->pages += t->npages;
	if (L->size_only)
		return L->nrels - 1;
	t->room = calloc(t->home_pages + 1, sizeof(uint16_t));
	t->versions = calloc(t->home_pages + 1, sizeof(uint16_t));
	t->stale = calloc(t->append_pages, 1);
	PN_ASSERT(t->room != NULL && t->versions != NULL && t->stale != NULL);
	for (uint32_t p = 0; p < t->home_pages; p++) {
		uint32_t n = PN_MIN(t->rows_per_page, rows - p * t->rows_per_page);
		t->room[p] = (uint16_t)(L->page_size - PN_PAGE_HEADER - n * room);
	}
	return L->nrels - 1;
}

static struct wl_leaf *leaf_new(struct wl_rel *ix, uint32_t page)
{
	PN_ASSERT(ix->nleaves < ix->leaves_cap);
	struct wl_leaf *l = &ix->leaves[ix->nleaves++];
	l->cap = ix->leaf_cap;
	l->keys = malloc(sizeof(uint64_t) * l->cap);
	PN_ASSERT(l->keys != NULL);
	l->page = page;
	return l;
}

uint32_t wl_index(struct wl_layout *L, const char *name, uint32_t table, uint32_t itup_len,
		  uint64_t nkeys, wl_key_fn key, const void *ctx, uint64_t inserts)
{
	struct wl_rel *ix = new_rel(L, name, true);
	ix->table = table;
	ix->itup_len = (uint16_t)itup_len;
	ix->leaf_cap = pn_btree_items_per_page(L->page_size, itup_len);
	PN_ASSERT(ix->leaf_cap > L->clients + 12);
	ix->leaf_limit = ix->leaf_cap - (L->clients + 2);
	uint32_t per_leaf = PN_MIN(ix->leaf_cap * 9u / 10u, ix->leaf_limit - 1);
	uint32_t initial = nkeys ? ceil_div(nkeys, per_leaf) : 1;
	/* a split leaves room for at least a tenth of a leaf on each side */
	uint32_t spare = ceil_div(inserts, PN_MAX(1u, ix->leaf_limit / 10u)) * 2 + 4;
	ix->leaves_cap = initial + spare;
	ix->npages = ix->leaves_cap;
	L->pages += ix->npages;
	if (L->size_only)
		return L->nrels - 1;
	ix->leaves = calloc(ix->leaves_cap, sizeof(*ix->leaves));
	ix->order = calloc(ix->leaves_cap, sizeof(uint32_t));
	PN_ASSERT(ix->leaves && ix->order);
	uint64_t k = 0;
	for (uint32_t i = 0; i < initial; i++) {
		struct wl_leaf *l = leaf_new(ix, ix->first + i);
		l->low = i == 0 ? 0 : key(ctx, k);
		for (; k < nkeys && l->n < per_leaf; k++)
			l->keys[l->n++] = key(ctx, k);
		ix->order[i] = i;
	}
	ix->used = ix->init_leaves = initial;
	return L->nrels - 1;
}

void wl_layout_free(struct wl_layout *L)
{
	for (uint32_t r = 0; r < L->nrels; r++) {
		struct wl_rel *x = &L->rels[r];
		free(x->room);
		free(x->versions);
		free(x->stale);
		for (uint32_t i = 0; i < x->nleaves; i++) {
			free(x->leaves[i].keys);
			free(x->leaves[i].init);
		}
		free(x->leaves);
		free(x->order);
	}
	L->nrels = 0;
}

bool wl_check_storage(struct pn_client_setup *setup, const struct wl_layout *L, const char *what)
{
	const struct pn_scenario *sc = setup->sc;
	if (setup->heap_pages < L->pages) {
		snprintf(setup->error, setup->error_size,
			 "%s: storage.pages is %u; %s and %llu transactions needs %u pages (its "
			 "tables, indexes and room to grow): set storage.pages to %u or more",
			 sc->path, setup->heap_pages, what,
			 (unsigned long long)sc->workload.transactions, L->pages, L->pages);
		return false;
	}
	if (sc->storage.buffers < 2 * sc->workload.clients + 2) {
		snprintf(setup->error, setup->error_size,
			 "%s: %s needs storage.buffers of at least "
			 "2 x workload.clients + 2 (%u)",
			 sc->path, what, 2 * sc->workload.clients + 2);
		return false;
	}
	return true;
}

/* The initial bytes of page blkno with leaf k's keys as keys(k) gives them. */
static bool page_init_with(const struct wl_layout *L, uint8_t *page, uint32_t blkno, bool fixed)
{
	for (uint32_t r = 0; r < L->nrels; r++) {
		const struct wl_rel *x = &L->rels[r];
		if (blkno < x->first || blkno >= x->first + x->npages)
			continue;
		uint32_t k = blkno - x->first;
		/* each fill writes every byte of the page: no memset before it */
		if (!x->index && k < x->home_pages)
			pn_heap_page_fill(page, L->page_size, blkno,
					  PN_MIN(x->rows_per_page, x->rows - k * x->rows_per_page),
					  x->t_len);
		else if (x->index && k < (fixed ? x->init_leaves : x->nleaves) &&
			 x->leaves[k].page == blkno) {
			const struct wl_leaf *l = &x->leaves[k];
			bool kept = fixed && l->init;
			pn_btree_leaf_fill(page, L->page_size, kept ? l->init : l->keys,
					   kept ? l->init_n : l->n, x->itup_len);
		} else {
			memset(page, 0, L->page_size); /* a new page: all zero until initialized */
		}
		return true;
	}
	return false;
}

bool wl_page_init(const struct wl_layout *L, uint8_t *page, uint32_t blkno)
{
	return page_init_with(L, page, blkno, false);
}

bool wl_page_init_fixed(const struct wl_layout *L, uint8_t *page, uint32_t blkno)
{
	return page_init_with(L, page, blkno, true);
}

void wl_row_at(const struct wl_rel *t, uint64_t row, uint32_t *page, uint16_t *offnum)
{
	PN_ASSERT(row < t->rows);
	*page = t->first + (uint32_t)(row / t->rows_per_page);
	*offnum = (uint16_t)(row % t->rows_per_page + 1);
}

void wl_append(struct wl_layout *L, uint32_t rel, uint32_t *page, uint16_t *offnum)
{
	struct wl_rel *t = &L->rels[rel];
	uint32_t room = (uint32_t)PN_ALIGN8(t->t_len) + 4u;
	if (t->append_bytes + room > L->page_size - PN_PAGE_HEADER) {
		t->append_at++;
		t->append_bytes = 0;
		t->append_off = 0;
		bool full = t->append_at == t->append_pages;
		PN_TESTCASE("an append area fills up and is reused (wl.h Growth)", full);
		if (full) {
			t->append_at = 0;
			t->append_cycles++;
		}
		if (t->append_cycles > 0)
			t->stale[t->append_at] = 1; /* its first record re-initializes it */
	}
	PN_ASSERT(t->append_at < t->append_pages && t->append_off < UINT16_MAX);
	t->append_bytes += room;
	*page = t->append_first + t->append_at;
	*offnum = ++t->append_off;
}

/* ---- btree routing and splits --------------------------------------------------------- */

/* Position in ix->order of the leaf whose range holds key. */
static uint32_t route(const struct wl_rel *ix, uint64_t key)
{
	uint32_t lo = 0, hi = ix->used;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (ix->leaves[ix->order[mid]].low <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : 0;
}

static uint32_t key_pos(const struct wl_leaf *l, uint64_t key)
{
	uint32_t lo = 0, hi = l->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (l->keys[mid] <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* CK3: an initial leaf about to change keeps its format-time keys first. */
static void leaf_keep(const struct wl_rel *ix, struct wl_leaf *l)
{
	if (l->init || (uint32_t)(l - ix->leaves) >= ix->init_leaves)
		return;
	l->init = malloc(sizeof(uint64_t) * PN_MAX(l->n, 1u));
	PN_ASSERT(l->init != NULL);
	memcpy(l->init, l->keys, sizeof(uint64_t) * l->n);
	l->init_n = l->n;
}

static void leaf_add(struct wl_leaf *l, uint64_t key)
{
	PN_ASSERT(l->n < l->cap);
	uint32_t at = key_pos(l, key);
	memmove(l->keys + at + 1, l->keys + at, sizeof(uint64_t) * (l->n - at));
	l->keys[at] = key;
	l->n++;
}

/* Where a full leaf splits: 90/10 when the key goes past its last key (ascending
 * inserts, as PostgreSQL's rightmost split), else in the middle; on a key boundary. */
static uint32_t split_point(const struct wl_leaf *l, uint64_t key)
{
	uint32_t at = key > l->keys[l->n - 1] ? l->n * 9u / 10u : l->n / 2u;
	while (at > 0 && l->keys[at - 1] == l->keys[at])
		at--;
	if (at == 0)
		while (at < l->n && l->keys[at] == l->keys[0])
			at++;
	return at;
}

static bool pending_at(const struct wl_rel *ix, uint32_t q)
{
	return q < ix->used && ix->leaves[ix->order[q]].pending;
}

/* Growth (layout.h): the position in ix->order of the leaf a split may recycle, the one with
 * the fewest keys (the lowest position of those), or false when none may go. */
static bool recycle_victim(const struct wl_rel *ix, uint32_t splitting, uint32_t *victim)
{
	uint32_t best = UINT32_MAX, best_n = UINT32_MAX;
	for (uint32_t q = 0; q < ix->used; q++) {
		const struct wl_leaf *v = &ix->leaves[ix->order[q]];
		if (q == splitting || v->pending || (q > 0 && pending_at(ix, q - 1)) ||
		    pending_at(ix, q + 1) || v->n >= best_n)
			continue;
		best = q;
		best_n = v->n;
	}
	*victim = best;
	return best != UINT32_MAX;
}

/* The leaf id a split of the leaf at *pos puts its right half in: a page of the index's
 * range not used yet, else a recycled leaf, taken out of ix->order (*pos follows it). */
static bool new_right_leaf(struct wl_rel *ix, uint32_t *pos, uint32_t *rid)
{
	bool full = ix->used == ix->leaves_cap;
	PN_TESTCASE("an index split recycles a leaf (wl.h Growth)", full);
	if (!full) {
		leaf_new(ix, ix->first + ix->used);
		*rid = ix->nleaves - 1;
		return true;
	}
	uint32_t q;
	if (!recycle_victim(ix, *pos, &q))
		return false;
	*rid = ix->order[q];
	memmove(ix->order + q, ix->order + q + 1, sizeof(uint32_t) * (ix->used - q - 1));
	ix->used--;
	if (q < *pos)
		(*pos)--;
	ix->recycled++;
	PN_ASSERT(*pos < ix->used && !ix->leaves[*rid].pending);
	return true;
}

bool wl_index_route(struct wl_layout *L, uint32_t rel, uint64_t key, uint32_t heap_blk,
		    uint16_t heap_off, struct pn_change *out)
{
	struct wl_rel *ix = &L->rels[rel];
	uint32_t pos = route(ix, key);
	uint32_t id = ix->order[pos];
	struct wl_leaf *l = &ix->leaves[id];
	*out = (struct pn_change){
		.kind = PN_REC_BTREE_INSERT_LEAF,
		.nblocks = 1,
		.pages = {l->page},
		.key = key,
		.itup_len = ix->itup_len,
		.heap_blk = heap_blk,
		.heap_off = heap_off,
		.index = (uint8_t)rel,
	};
	if (l->pending)
		return false; /* its split has not run yet */
	leaf_keep(ix, l);
	if (l->n < ix->leaf_limit) {
		leaf_add(l, key);
		return true;
	}
	uint32_t at = split_point(l, key);
	PN_ASSERT(at < l->n || key > l->keys[l->n - 1]);
	if (pos + 1 < ix->used && ix->leaves[ix->order[pos + 1]].pending)
		return false; /* the previous split of this leaf is still running */
	uint32_t rid;
	if (!new_right_leaf(ix, &pos, &rid))
		return false; /* every leaf is pending or next to one: a split's end frees one */
	uint64_t split_key = at < l->n ? l->keys[at] : key;
	struct wl_leaf *r = &ix->leaves[rid];
	leaf_keep(ix, r);
	r->low = split_key;
	r->pending = true;
	memcpy(r->keys, l->keys + at, sizeof(uint64_t) * (l->n - at));
	r->n = l->n - at;
	l->n = at;
	leaf_add(key >= split_key ? r : l, key);
	memmove(ix->order + pos + 2, ix->order + pos + 1, sizeof(uint32_t) * (ix->used - pos - 1));
	ix->order[pos + 1] = rid;
	ix->used++;
	out->kind = PN_REC_BTREE_SPLIT_R; /* SPLIT_L or _R is chosen when it runs */
	out->nblocks = 2;
	out->pages[1] = r->page;
	out->split_key = split_key;
	out->leaf = rid;
	return true;
}

void wl_split_done(struct wl_layout *L, const struct pn_change *c)
{
	struct wl_rel *ix = &L->rels[c->index];
	PN_ASSERT(c->leaf < ix->nleaves && ix->leaves[c->leaf].pending);
	ix->leaves[c->leaf].pending = false;
}

void wl_push(struct wl_queue *q, const struct pn_change *c)
{
	PN_ASSERT(q->len < WL_QUEUE);
	q->q[(q->head + q->len++) % WL_QUEUE] = *c;
}

void wl_push_index(struct wl_queue *q, uint32_t rel, uint64_t key, uint32_t heap_blk,
		   uint16_t heap_off)
{
	struct pn_change c = {.kind = PN_REC_BTREE_INSERT_LEAF,
			      .nblocks = 0,
			      .key = key,
			      .heap_blk = heap_blk,
			      .heap_off = heap_off,
			      .index = (uint8_t)rel};
	wl_push(q, &c);
}

bool wl_pop(struct wl_layout *L, struct wl_queue *q, struct pn_change *out, bool *wait)
{
	*wait = false;
	if (q->len == 0)
		return false;
	struct pn_change *c = &q->q[q->head];
	if (c->kind == PN_REC_BTREE_INSERT_LEAF && c->nblocks == 0) {
		if (!wl_index_route(L, c->index, c->key, c->heap_blk, c->heap_off, out)) {
			*wait = true;
			return false;
		}
	} else {
		*out = *c;
	}
	q->head = (q->head + 1) % WL_QUEUE;
	q->len--;
	return true;
}

static void non_hot(struct wl_layout *L, uint32_t rel, uint32_t page, uint16_t off,
		    const uint32_t *idx, const uint64_t *keys, uint32_t nidx, struct wl_queue *q);

void wl_update_row(struct wl_layout *L, uint32_t rel, uint64_t row, uint32_t at,
		   uint32_t change_len, const uint32_t *idx, const uint64_t *keys, uint32_t nidx,
		   struct wl_queue *q)
{
	struct wl_rel *t = &L->rels[rel];
	uint32_t page;
	uint16_t off;
	wl_row_at(t, row, &page, &off);
	uint32_t data = t->t_len - PN_TUPLE_HEADER;
	PN_ASSERT(at + change_len <= data);
	uint32_t hp = page - t->first;
	uint32_t need = (uint32_t)PN_ALIGN8(t->t_len) + 4u;
	if (t->room[hp] < need && t->versions[hp] > 0) {
		/* heap_page_prune_opt on a page short of room: the versions left behind by
		 * earlier updates go (one HOT chain per row: a redirect, the rest unused) */
		uint32_t v = t->versions[hp], chains = PN_MIN(v, t->rows_per_page);
		struct pn_change pr = {.kind = PN_REC_HEAP2_PRUNE,
				       .nblocks = 1,
				       .pages = {page},
				       .nredirected = (uint16_t)chains,
				       .nunused = (uint16_t)(v - chains)};
		if (t->room[hp] < need / 2) { /* a version moved off by a non-HOT update: dead */
			pr.nredirected = 0;
			pr.ndead = (uint16_t)v;
			pr.nunused = 0;
		}
		wl_push(q, &pr);
		t->room[hp] = (uint16_t)PN_MIN(t->room[hp] + v * need, L->page_size);
		t->versions[hp] = 0;
	}
	if (t->room[hp] >= need) {
		t->room[hp] = (uint16_t)(t->room[hp] - need);
		t->versions[hp]++;
		struct pn_change c = {
			.kind = PN_REC_HEAP_HOT_UPDATE,
			.nblocks = 1,
			.pages = {page},
			.offnum = off,
			.prefix = (uint16_t)at,
			.suffix = (uint16_t)(data - at - change_len),
			.change_len = (uint16_t)change_len,
		};
		wl_push(q, &c);
		return;
	}
	non_hot(L, rel, page, off, idx, keys, nidx, q);
}

void wl_update_row_indexed(struct wl_layout *L, uint32_t rel, uint64_t row, const uint32_t *idx,
			   const uint64_t *keys, uint32_t nidx, struct wl_queue *q)
{
	uint32_t page;
	uint16_t off;
	wl_row_at(&L->rels[rel], row, &page, &off);
	non_hot(L, rel, page, off, idx, keys, nidx, q);
}

void wl_lock_row(struct wl_layout *L, uint32_t rel, uint64_t row, struct wl_queue *q)
{
	struct pn_change lock = {.kind = PN_REC_HEAP_LOCK, .nblocks = 1};
	wl_row_at(&L->rels[rel], row, &lock.pages[0], &lock.offnum);
	wl_push(q, &lock);
}

static void non_hot(struct wl_layout *L, uint32_t rel, uint32_t page, uint16_t off,
		    const uint32_t *idx, const uint64_t *keys, uint32_t nidx, struct wl_queue *q)
{
	struct wl_rel *t = &L->rels[rel];
	uint32_t hp = page - t->first;
	/* No room for the new version: heap_update locks the old tuple (the record that
	 * carries the page's image), puts the new version elsewhere and indexes it. Once the
	 * transaction has ended the old version is dead: the next update of the page prunes
	 * it (Heap2/PRUNE, ndead 1), which gives room for the HOT updates that follow. */
	struct pn_change lock = {.kind = PN_REC_HEAP_LOCK,
				 .nblocks = 1,
				 .pages = {page},
				 .offnum = off};
	wl_push(q, &lock);
	uint32_t np;
	uint16_t noff;
	wl_append(L, rel, &np, &noff);
	struct pn_change up = {
		.kind = PN_REC_HEAP_UPDATE,
		.nblocks = 2,
		.pages = {np, page},
		.offnum = noff,
		.old_offnum = off,
		.t_len = t->t_len,
	};
	wl_push(q, &up);
	for (uint32_t i = 0; i < nidx; i++)
		wl_push_index(q, idx[i], keys[i], np, noff);
	if (q->npend < WL_PENDING) { /* (past that, the page stays without room) */
		q->pend_rel[q->npend] = rel;
		q->pend_page[q->npend++] = hp;
	}
}

void wl_txn_end(struct wl_layout *L, struct wl_queue *q)
{
	for (uint32_t i = 0; i < q->npend; i++) /* the old version is dead: prunable */
		L->rels[q->pend_rel[i]].versions[q->pend_page[i]]++;
	q->npend = 0;
}

enum pn_client_next wl_next(struct wl_layout_state *ls, void *g, const struct pn_client *c,
			    struct wl_txn *t, wl_begin_fn begin, wl_expand_fn expand,
			    struct pn_step *out)
{
	struct pn_change *chg = pn_client_change_slot(c);
	*out = (struct pn_step){.op = PN_OP_CHANGE, .client = c->id};
	for (;;) {
		bool wait;
		if (wl_pop(&ls->L, &t->q, chg, &wait))
			return PN_CLIENT_OP;
		if (wait)
			return PN_CLIENT_WAIT;
		if (!t->in_txn) {
			if (!pn_workload_txn_start(&ls->b))
				return PN_CLIENT_DONE;
			t->in_txn = true;
			pn_client_begin_txn(c, begin(g, c));
		}
		if (!expand(g, c->id)) {
			t->in_txn = false;
			wl_txn_end(&ls->L, &t->q);
			out->op = PN_OP_COMMIT;
			return PN_CLIENT_OP;
		}
	}
}

uint64_t wl_random(const struct pn_client *c, uint64_t lo, uint64_t hi)
{
	return pn_client_random(c, lo, hi);
}

uint64_t wl_nurand(const struct pn_client *c, uint64_t a, uint64_t k, uint64_t lo, uint64_t hi)
{
	return ((wl_random(c, 0, a) | wl_random(c, lo, hi)) + k) % (hi - lo + 1) + lo;
}
