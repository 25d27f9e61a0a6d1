/*
 * wl_tpcc.c: the TPC-C mix (workload layer) over `workload.warehouses` warehouses, as its
 * tables and indexes lie on pages (layout.h), every table at PostgreSQL's default fillfactor
 * (100). Row lengths (t_len, the 24 B tuple header included) are those of the usual
 * PostgreSQL schemas (BenchmarkSQL, HammerDB) with typical varchar fills:
 *
 *   table        rows per warehouse        t_len  indexes (index tuple bytes)
 *   warehouse    1                         130    pkey (16)
 *   district     10                        144    pkey (16)
 *   customer     30,000                    650    pkey (24), (w, d, c_last, c_id) (24)
 *   history      30,000, appended          80     none
 *   new_order    9,000, appended, deleted  36     pkey (24)
 *   orders       30,000, appended          56     pkey (24), (w, d, c, o) (24)
 *   order_line   300,000 (10 per order),   94     pkey (24)
 *                appended
 *   stock        100,000                   344    pkey (16)
 *   item         100,000 (not per w.)      100    pkey (16)
 *
 * The transactions (clause 2 of the TPC-C specification; NewOrder 45 %, Payment 43 %,
 * OrderStatus 4 %, Delivery 4 %, StockLevel 4 %), each on a uniformly chosen warehouse:
 *   NewOrder   d uniform 1..10, c = NURand(1023, 1, 3000), 5..15 lines, items
 *              NURand(8191, 1, 100000), supplied by the home warehouse (or another one, 1 %,
 *              with several): UPDATE district (d_next_o_id, the district row is the hot
 *              one), INSERT orders + its two index entries, INSERT new_order + its pkey
 *              entry, then per line UPDATE stock (s_quantity, s_ytd, s_order_cnt,
 *              s_remote_cnt: 20 bytes) and INSERT order_line + its pkey entry; COMMIT.
 *   Payment    UPDATE warehouse (w_ytd), district (d_ytd), the customer (60 % by last name
 *              NURand(255, 0, 999) through the name index, the middle one of that name;
 *              40 % by id NURand(1023, 1, 3000)): balance, ytd, count, and for the 10 % of
 *              customers with bad credit c_data too (to the row's end); INSERT history.
 *   Delivery   for each district, its oldest undelivered order: DELETE new_order, UPDATE
 *              orders (o_carrier_id), its lines (ol_delivery_d), the customer (balance,
 *              delivery count).
 *   OrderStatus, StockLevel: reads only (no WAL; reads are not simulated).
 * Updates follow wl_update_row(): HOT in place when the page has room, else (a page loaded
 * full, the first time) LOCK + UPDATE to the table's end + index inserts.
 *
 * Simplifications (docs/results.md): loaded orders have 10 lines each (the spec draws 5..15);
 * Delivery works through the loaded backlog (orders 2101..3000 of each district) and skips a
 * district once that is used up; NewOrder never rolls back (the spec's 1 %); the C constants
 * of NURand are fixed (C_LAST 223, C_ID 259, OL_I_ID 7911); the warehouse of each
 * transaction is drawn uniformly rather than bound to a terminal.
 */
#include "layout.h"
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	DISTRICTS = 10,
	CUSTOMERS = 3000,
	ITEMS = 100000,
	ORDERS = 3000,
	LOADED_LINES = 10,
	FIRST_UNDELIVERED = 2101,
	MAX_LINES = 15
};
enum { T_NEW_ORDER, T_PAYMENT, T_ORDER_STATUS, T_DELIVERY, T_STOCK_LEVEL };
enum { C_LAST = 223, C_ID = 259, C_ITEM = 7911 };

static const char *const txn_names[PN_TXN_TYPES] = {"NewOrder", "Payment", "OrderStatus",
						    "Delivery", "StockLevel"};

static const char *txn_name(int t) { return t >= 0 && t < PN_TXN_TYPES ? txn_names[t] : NULL; }

/* Byte offsets in the payload (after the 24 B header) of the columns updates change. */
enum {
	WAREHOUSE_LEN = 130,
	DISTRICT_LEN = 144,
	CUSTOMER_LEN = 650,
	HISTORY_LEN = 80,
	NEW_ORDER_LEN = 36,
	ORDERS_LEN = 56,
	ORDER_LINE_LEN = 94,
	STOCK_LEN = 344,
	ITEM_LEN = 100,
	W_YTD_AT = 4,
	D_YTD_AT = 8,
	D_NEXT_O_ID_AT = 16,
	C_BALANCE_AT = 140,
	C_PAYMENT_LEN = 20,
	C_DELIVERY_LEN = 12,
	O_CARRIER_AT = 16,
	OL_DELIVERY_AT = 20,
	S_QUANTITY_AT = 8,
	S_CHANGE_LEN = 20,
};

struct client {
	struct wl_txn t; /* t.q: the changes to hand out */
	int type, step, line;
	uint32_t w, d, c, ol_cnt, o, carrier;
	bool bad_credit;
	uint32_t items[MAX_LINES], supply[MAX_LINES];
	uint32_t o_page;
	uint16_t o_off;
};

struct tpcc {
	struct wl_layout_state s; /* first: what layout.c's hooks read of the state */
	uint32_t W;
	uint32_t warehouse, district, customer, history, new_order, orders, order_line, item, stock;
	uint32_t customer_pkey, customer_name, new_order_pkey, orders_pkey, orders_carrier,
		order_line_pkey, stock_pkey;
	uint64_t *name_keys;     /* customer (w, d, c_last, c) keys, sorted */
	uint32_t *next_o_id;     /* per district */
	uint32_t *next_delivery; /* per district: oldest undelivered order */
	struct client *clients;
};

static uint32_t dist(uint32_t w, uint32_t d) { return (w - 1) * DISTRICTS + (d - 1); }
static uint64_t wd(uint32_t w, uint32_t d) { return (uint64_t)w * 16u + d; }

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ull;
	x ^= x >> 27;
	x *= 0x81dadef4bc2dd44dull;
	return x ^ (x >> 33);
}

/* Load-time choices (clause 4.3.3.1), from a hash so that format needs no PRNG. */
static uint32_t loaded_last(uint32_t w, uint32_t d, uint32_t c)
{
	if (c <= 1000)
		return c - 1;
	uint64_t h = mix(((uint64_t)w << 40) ^ ((uint64_t)d << 20) ^ c);
	uint32_t a = (uint32_t)(h % 256), b = (uint32_t)((h >> 20) % 1000);
	return ((a | b) + C_LAST) % 1000;
}

static bool bad_credit(uint32_t w, uint32_t d, uint32_t c)
{
	return mix(((uint64_t)c << 32) ^ (w * 16u + d) ^ 0xBCull) % 10 == 0;
}

/* o_c_id of loaded order o: a permutation of 1..3000 (1409 is prime to 3000). */
static uint32_t loaded_customer(uint32_t o) { return (uint32_t)((o - 1) * 1409u % CUSTOMERS) + 1; }

/* ---- index keys, ascending in load order ---- */
struct keyctx {
	uint32_t W;
	const uint64_t *sorted;
};

static uint64_t key_seq(const void *ctx, uint64_t i)
{
	(void)ctx;
	return i + 1;
}

static uint64_t key_w(const void *ctx, uint64_t i)
{
	(void)ctx;
	return i + 1;
}

static uint64_t key_district(const void *ctx, uint64_t i)
{
	(void)ctx;
	return wd((uint32_t)(i / DISTRICTS) + 1, (uint32_t)(i % DISTRICTS) + 1);
}

static uint64_t customer_key(uint32_t w, uint32_t d, uint32_t c) { return wd(w, d) << 32 | c; }

static uint64_t key_customer(const void *ctx, uint64_t i)
{
	(void)ctx;
	uint64_t di = i / CUSTOMERS;
	return customer_key((uint32_t)(di / DISTRICTS) + 1, (uint32_t)(di % DISTRICTS) + 1,
			    (uint32_t)(i % CUSTOMERS) + 1);
}

static uint64_t name_key(uint32_t w, uint32_t d, uint32_t last, uint32_t c)
{
	return wd(w, d) << 44 | (uint64_t)last << 32 | c;
}

static uint64_t key_sorted(const void *ctx, uint64_t i)
{
	return ((const struct keyctx *)ctx)->sorted[i];
}

static uint64_t order_key(uint32_t w, uint32_t d, uint32_t o) { return wd(w, d) << 32 | o; }

static uint64_t key_new_order(const void *ctx, uint64_t i)
{
	(void)ctx;
	uint64_t di = i / (ORDERS - FIRST_UNDELIVERED + 1);
	return order_key((uint32_t)(di / DISTRICTS) + 1, (uint32_t)(di % DISTRICTS) + 1,
			 (uint32_t)(i % (ORDERS - FIRST_UNDELIVERED + 1)) + FIRST_UNDELIVERED);
}

static uint64_t key_orders(const void *ctx, uint64_t i)
{
	(void)ctx;
	uint64_t di = i / ORDERS;
	return order_key((uint32_t)(di / DISTRICTS) + 1, (uint32_t)(di % DISTRICTS) + 1,
			 (uint32_t)(i % ORDERS) + 1);
}

/* BenchmarkSQL's bmsql_oorder_idx1 (o_w_id, o_d_id, o_carrier_id, o_id); a NULL carrier
 * (undelivered) sorts last, as 15. */
enum { CARRIER_NULL = 15 };
static uint64_t carrier_key(uint32_t w, uint32_t d, uint32_t carrier, uint32_t o)
{
	return wd(w, d) << 40 | (uint64_t)carrier << 32 | o;
}

static uint32_t loaded_carrier(uint32_t o)
{
	return o < FIRST_UNDELIVERED ? 1 + o % 10 : CARRIER_NULL;
}

static uint64_t line_key(uint32_t w, uint32_t d, uint32_t o, uint32_t n)
{
	return wd(w, d) << 40 | (uint64_t)o << 4 | n;
}

static uint64_t key_line(const void *ctx, uint64_t i)
{
	(void)ctx;
	uint64_t di = i / (ORDERS * LOADED_LINES), k = i % (ORDERS * LOADED_LINES);
	return line_key((uint32_t)(di / DISTRICTS) + 1, (uint32_t)(di % DISTRICTS) + 1,
			(uint32_t)(k / LOADED_LINES) + 1, (uint32_t)(k % LOADED_LINES) + 1);
}

static uint64_t stock_key(uint32_t w, uint32_t i) { return (uint64_t)w << 20 | i; }

static uint64_t key_stock(const void *ctx, uint64_t i)
{
	(void)ctx;
	return stock_key((uint32_t)(i / ITEMS) + 1, (uint32_t)(i % ITEMS) + 1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* customer (w, d, c_last, c) keys of every loaded customer, sorted. */
static uint64_t *customer_names(uint32_t W)
{
	uint64_t n = (uint64_t)W * DISTRICTS * CUSTOMERS, k = 0;
	uint64_t *keys = malloc(sizeof(uint64_t) * n);
	if (!keys)
		return NULL;
	for (uint32_t w = 1; w <= W; w++)
		for (uint32_t d = 1; d <= DISTRICTS; d++)
			for (uint32_t c = 1; c <= CUSTOMERS; c++)
				keys[k++] = name_key(w, d, loaded_last(w, d, c), c);
	qsort(keys, n, sizeof(uint64_t), cmp_u64);
	return keys;
}

static bool layout(const struct pn_scenario *sc, struct tpcc *g)
{
	struct wl_layout *L = &g->s.L;
	uint32_t W = g->W;
	uint64_t n = sc->workload.transactions;
	uint32_t dists = W * DISTRICTS;
	g->name_keys = L->size_only ? NULL : customer_names(W);
	if (!g->name_keys && !L->size_only)
		return false;
	struct keyctx names = {.W = W, .sorted = g->name_keys};
	uint32_t cust_rows = dists * CUSTOMERS, orders = dists * ORDERS;
	uint32_t lines = orders * LOADED_LINES, stock_rows = W * ITEMS;
	uint32_t moved_c = cust_rows / pn_heap_rows_per_page(L->page_size, CUSTOMER_LEN, 100) + 1;
	uint32_t moved_s = stock_rows / pn_heap_rows_per_page(L->page_size, STOCK_LEN, 100) + 1;
	uint32_t moved_o = orders / pn_heap_rows_per_page(L->page_size, ORDERS_LEN, 100) + 1;
	uint32_t moved_ol = lines / pn_heap_rows_per_page(L->page_size, ORDER_LINE_LEN, 100) + 1;
	g->warehouse = wl_table(L, "warehouse", W, WAREHOUSE_LEN, 100, 0);
	g->district = wl_table(L, "district", dists, DISTRICT_LEN, 100, 0);
	g->customer = wl_table(L, "customer", cust_rows, CUSTOMER_LEN, 100, moved_c);
	g->history = wl_table(L, "history", cust_rows, HISTORY_LEN, 100, (uint32_t)n);
	g->new_order = wl_table(L, "new_order", dists * (ORDERS - FIRST_UNDELIVERED + 1),
				NEW_ORDER_LEN, 100, (uint32_t)n);
	g->orders = wl_table(L, "orders", orders, ORDERS_LEN, 100, (uint32_t)n + moved_o);
	g->order_line = wl_table(L, "order_line", lines, ORDER_LINE_LEN, 100,
				 (uint32_t)(n * MAX_LINES) + moved_ol);
	g->item = wl_table(L, "item", ITEMS, ITEM_LEN, 100, 0);
	g->stock = wl_table(L, "stock", stock_rows, STOCK_LEN, 100, moved_s);
	wl_index(L, "warehouse_pkey", g->warehouse, 16, W, key_w, NULL, 0);
	wl_index(L, "district_pkey", g->district, 16, dists, key_district, NULL, 0);
	g->customer_pkey = wl_index(L, "customer_pkey", g->customer, 24, cust_rows, key_customer,
				    NULL, moved_c);
	g->customer_name = wl_index(L, "customer_idx_name", g->customer, 24, cust_rows, key_sorted,
				    &names, moved_c);
	g->new_order_pkey = wl_index(L, "new_order_pkey", g->new_order, 24,
				     dists * (ORDERS - FIRST_UNDELIVERED + 1), key_new_order, NULL,
				     n);
	g->orders_pkey = wl_index(L, "orders_pkey", g->orders, 24, orders, key_orders, NULL,
				  n + moved_o);
	/* (w, d, c, o) of the loaded orders, sorted */
	uint64_t *co = L->size_only ? NULL : malloc(sizeof(uint64_t) * orders);
	if (!co && !L->size_only)
		return false;
	for (uint32_t i = 0; co && i < orders; i++) {
		uint32_t di = i / ORDERS, o = i % ORDERS + 1;
		co[i] = carrier_key(di / DISTRICTS + 1, di % DISTRICTS + 1, loaded_carrier(o), o);
	}
	if (co)
		qsort(co, orders, sizeof(uint64_t), cmp_u64);
	struct keyctx cust_orders = {.W = W, .sorted = co};
	g->orders_carrier = wl_index(L, "orders_idx1", g->orders, 24, orders, key_sorted,
				     &cust_orders, n + moved_o);
	free(co);
	g->order_line_pkey = wl_index(L, "order_line_pkey", g->order_line, 24, lines, key_line,
				      NULL, n * MAX_LINES + moved_ol);
	wl_index(L, "item_pkey", g->item, 16, ITEMS, key_seq, NULL, 0);
	g->stock_pkey = wl_index(L, "stock_pkey", g->stock, 16, stock_rows, key_stock, NULL,
				 moved_s);
	return true;
}

uint32_t wl_tpcc_pages(const struct pn_scenario *sc)
{
	struct tpcc g = {.W = sc->workload.warehouses,
			 .s.L = {.page_size = sc->storage.page_size, .size_only = true}};
	layout(sc, &g);
	return g.s.L.pages;
}

static bool init(struct pn_client_setup *setup, void **state)
{
	const struct pn_scenario *sc = setup->sc;
	if (!wl_state_new(setup, state, sizeof(struct tpcc)))
		return false;
	struct tpcc *g = *state;
	if (!wl_base_init(&g->s.b, setup, false))
		return false;
	g->W = sc->workload.warehouses;
	g->s.L.page_size = setup->page_size;
	g->s.L.clients = sc->workload.clients;
	if (g->W > 1000 || sc->workload.transactions > 50000000) {
		snprintf(setup->error, setup->error_size,
			 "%s: tpcc models at most 1000 warehouses and "
			 "50,000,000 transactions",
			 sc->path);
		return false;
	}
	uint32_t dists = g->W * DISTRICTS;
	g->next_o_id = malloc(sizeof(uint32_t) * dists);
	g->next_delivery = malloc(sizeof(uint32_t) * dists);
	g->clients = calloc(sc->workload.clients, sizeof(*g->clients));
	if (!g->next_o_id || !g->next_delivery || !g->clients || !layout(sc, g))
		return false;
	for (uint32_t i = 0; i < dists; i++) {
		g->next_o_id[i] = ORDERS + 1;
		g->next_delivery[i] = FIRST_UNDELIVERED;
	}
	char what[64];
	snprintf(what, sizeof(what), "tpcc with %u warehouses", g->W);
	return wl_check_storage(setup, &g->s.L, what);
}

static void free_state(void *state)
{
	struct tpcc *g = state;
	wl_layout_free(&g->s.L);
	free(g->name_keys);
	free(g->next_o_id);
	free(g->next_delivery);
	free(g->clients);
	wl_base_free(&g->s.b);
	free(g);
}

/* ---- transactions ---- */

static void push_insert(struct tpcc *g, struct client *c, uint32_t rel, uint32_t *page,
			uint16_t *off)
{
	struct pn_change ins = {.kind = PN_REC_HEAP_INSERT,
				.nblocks = 1,
				.t_len = g->s.L.rels[rel].t_len};
	wl_append(&g->s.L, rel, &ins.pages[0], &ins.offnum);
	wl_push(&c->t.q, &ins);
	*page = ins.pages[0];
	*off = ins.offnum;
}

static uint64_t customer_row(uint32_t w, uint32_t d, uint32_t c)
{
	return (uint64_t)dist(w, d) * CUSTOMERS + (c - 1);
}

static void update_customer(struct tpcc *g, struct client *q, uint32_t w, uint32_t d, uint32_t c,
			    uint32_t at, uint32_t len)
{
	uint32_t idx[2] = {g->customer_pkey, g->customer_name};
	uint64_t keys[2] = {customer_key(w, d, c), name_key(w, d, loaded_last(w, d, c), c)};
	wl_update_row(&g->s.L, g->customer, customer_row(w, d, c), at, len, idx, keys, 2, &q->t.q);
}

/* The customer Payment picks by last name: the middle one of that name in the district. */
static uint32_t customer_by_name(struct tpcc *g, uint32_t w, uint32_t d, uint32_t last)
{
	uint64_t lo = name_key(w, d, last, 0), hi = name_key(w, d, last + 1, 0);
	uint64_t n = (uint64_t)g->W * DISTRICTS * CUSTOMERS, a = 0, b = n;
	while (a < b) { /* first key >= lo */
		uint64_t m = a + (b - a) / 2;
		if (g->name_keys[m] < lo)
			a = m + 1;
		else
			b = m;
	}
	uint64_t first = a;
	while (a < n && g->name_keys[a] < hi)
		a++;
	if (a == first)
		return 0;
	return (uint32_t)(g->name_keys[first + (a - first - 1) / 2] & 0xFFFFFFFFu);
}

static bool new_order_step(struct tpcc *g, struct client *c)
{
	struct wl_layout *L = &g->s.L;
	uint32_t w = c->w, d = c->d;
	if (c->step == 0) {
		wl_lock_row(L, g->district, dist(w, d), &c->t.q); /* SELECT ... FOR UPDATE */
		wl_update_row(L, g->district, dist(w, d), D_NEXT_O_ID_AT, 4, NULL, NULL, 0,
			      &c->t.q);
		c->o = g->next_o_id[dist(w, d)]++;
	} else if (c->step == 1) {
		push_insert(g, c, g->orders, &c->o_page, &c->o_off);
		wl_push_index(&c->t.q, g->orders_pkey, order_key(w, d, c->o), c->o_page, c->o_off);
		wl_push_index(&c->t.q, g->orders_carrier, carrier_key(w, d, CARRIER_NULL, c->o),
			      c->o_page, c->o_off);
	} else if (c->step == 2) {
		uint32_t pg;
		uint16_t off;
		push_insert(g, c, g->new_order, &pg, &off);
		wl_push_index(&c->t.q, g->new_order_pkey, order_key(w, d, c->o), pg, off);
	} else if (c->line < (int)c->ol_cnt) {
		uint32_t i = c->items[c->line], sw = c->supply[c->line];
		uint32_t idx = g->stock_pkey;
		uint64_t key = stock_key(sw, i);
		if (c->step % 2 == 1) {
			wl_lock_row(L, g->stock, (uint64_t)(sw - 1) * ITEMS + (i - 1), &c->t.q);
			wl_update_row(L, g->stock, (uint64_t)(sw - 1) * ITEMS + (i - 1),
				      S_QUANTITY_AT, S_CHANGE_LEN, &idx, &key, 1, &c->t.q);
		} else {
			uint32_t pg;
			uint16_t off;
			push_insert(g, c, g->order_line, &pg, &off);
			wl_push_index(&c->t.q, g->order_line_pkey,
				      line_key(w, d, c->o, c->line + 1), pg, off);
			c->line++;
		}
	} else {
		return false;
	}
	c->step++;
	return true;
}

static bool payment_step(struct tpcc *g, struct client *c)
{
	struct wl_layout *L = &g->s.L;
	uint32_t data = CUSTOMER_LEN - PN_TUPLE_HEADER;
	switch (c->step++) {
	case 0:
		wl_update_row(L, g->warehouse, c->w - 1, W_YTD_AT, 8, NULL, NULL, 0, &c->t.q);
		break;
	case 1:
		wl_update_row(L, g->district, dist(c->w, c->d), D_YTD_AT, 8, NULL, NULL, 0,
			      &c->t.q);
		break;
	case 2:
		wl_lock_row(L, g->customer, customer_row(c->w, c->d, c->c), &c->t.q);
		update_customer(g, c, c->w, c->d, c->c, C_BALANCE_AT,
				c->bad_credit ? data - C_BALANCE_AT : C_PAYMENT_LEN);
		break;
	case 3: {
		uint32_t pg;
		uint16_t off;
		push_insert(g, c, g->history, &pg, &off);
		break;
	}
	default: return false;
	}
	return true;
}

/* Delivery: one step per district (its oldest undelivered order, if any is left). */
static bool delivery_step(struct tpcc *g, struct client *c)
{
	struct wl_layout *L = &g->s.L;
	while (c->step < DISTRICTS) {
		uint32_t d = (uint32_t)++c->step, di = dist(c->w, d);
		uint32_t o = g->next_delivery[di];
		if (o > ORDERS)
			continue; /* the loaded backlog of this district is delivered */
		g->next_delivery[di]++;
		uint32_t pg;
		uint16_t off;
		wl_row_at(&L->rels[g->new_order],
			  (uint64_t)di * (ORDERS - FIRST_UNDELIVERED + 1) + (o - FIRST_UNDELIVERED),
			  &pg, &off);
		struct pn_change del = {.kind = PN_REC_HEAP_DELETE,
					.nblocks = 1,
					.pages = {pg},
					.offnum = off};
		wl_push(&c->t.q, &del);
		/* o_carrier_id is in bmsql_oorder_idx1: never HOT */
		uint32_t oidx[2] = {g->orders_pkey, g->orders_carrier};
		uint32_t cust = loaded_customer(o);
		uint64_t okeys[2] = {order_key(c->w, d, o), carrier_key(c->w, d, c->carrier, o)};
		wl_update_row_indexed(L, g->orders, (uint64_t)di * ORDERS + (o - 1), oidx, okeys, 2,
				      &c->t.q);
		for (uint32_t n = 1; n <= LOADED_LINES; n++) {
			uint32_t lidx = g->order_line_pkey;
			uint64_t lkey = line_key(c->w, d, o, n);
			wl_update_row(L, g->order_line,
				      ((uint64_t)di * ORDERS + (o - 1)) * LOADED_LINES + (n - 1),
				      OL_DELIVERY_AT, 8, &lidx, &lkey, 1, &c->t.q);
		}
		update_customer(g, c, c->w, d, cust, C_BALANCE_AT, C_DELIVERY_LEN);
		return true;
	}
	return false;
}

static bool expand(struct tpcc *g, struct client *c)
{
	switch (c->type) {
	case T_NEW_ORDER: return new_order_step(g, c);
	case T_PAYMENT: return payment_step(g, c);
	case T_DELIVERY: return delivery_step(g, c);
	default: return false; /* OrderStatus, StockLevel: reads only */
	}
}

static void begin(const struct pn_client *cl, struct tpcc *g, struct client *c)
{
	uint32_t r = (uint32_t)wl_random(cl, 1, 100);
	c->type = r <= 45   ? T_NEW_ORDER
		  : r <= 88 ? T_PAYMENT
		  : r <= 92 ? T_ORDER_STATUS
		  : r <= 96 ? T_DELIVERY
			    : T_STOCK_LEVEL;
	c->step = c->line = 0;
	c->w = (uint32_t)wl_random(cl, 1, g->W);
	c->d = (uint32_t)wl_random(cl, 1, DISTRICTS);
	if (c->type == T_NEW_ORDER) {
		c->c = (uint32_t)wl_nurand(cl, 1023, C_ID, 1, CUSTOMERS);
		c->ol_cnt = (uint32_t)wl_random(cl, 5, MAX_LINES);
		for (uint32_t i = 0; i < c->ol_cnt; i++) {
			c->items[i] = (uint32_t)wl_nurand(cl, 8191, C_ITEM, 1, ITEMS);
			c->supply[i] = c->w;
			if (g->W > 1 && wl_random(cl, 1, 100) == 1)
				c->supply[i] = (uint32_t)wl_random(cl, 1, g->W);
		}
	} else if (c->type == T_DELIVERY) {
		c->carrier = (uint32_t)wl_random(cl, 1, 10);
	} else if (c->type == T_PAYMENT) {
		c->c = 0;
		if (wl_random(cl, 1, 100) <= 60)
			c->c = customer_by_name(g, c->w, c->d,
						(uint32_t)wl_nurand(cl, 255, C_LAST, 0, 999));
		if (c->c == 0)
			c->c = (uint32_t)wl_nurand(cl, 1023, C_ID, 1, CUSTOMERS);
		c->bad_credit = bad_credit(c->w, c->d, c->c);
	}
}

static int begin_client(void *state, const struct pn_client *cl)
{
	struct tpcc *g = state;
	begin(cl, g, &g->clients[cl->id]);
	return g->clients[cl->id].type;
}

static bool expand_client(void *state, uint32_t client)
{
	struct tpcc *g = state;
	return expand(g, &g->clients[client]);
}

static enum pn_client_next next(void *state, const struct pn_client *c, struct pn_step *out)
{
	struct tpcc *g = state;
	return wl_next(&g->s, g, c, &g->clients[c->id].t, begin_client, expand_client, out);
}

const struct pn_client_ops pn_workload_tpcc = {
	.name = "tpcc",
	.init = init,
	.free = free_state,
	.next = next,
	.txn_name = txn_name,
	WL_LAYOUT_HOOKS,
};
