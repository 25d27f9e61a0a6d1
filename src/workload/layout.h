/*
 * layout.h: what the realistic workload generators (wl_pgbench.c, wl_tpcc.c) share (workload
 * layer, owned by layout.c): tables and indexes laid out on ranges of the engine's logical
 * pages, row placement, btree routing and splits, and per-client queues of changes.
 *
 * Layout. A generator declares its relations in order; each takes a contiguous range of
 * pages starting where the previous one ended:
 *   table  `home_pages` loaded with `rows` tuples of t_len bytes (rows_per_page from the
 *          fillfactor), then `append_pages` left new (all zero) for inserts and for the new
 *          versions of non-HOT updates; appends fill one page at a time (100 %, as
 *          PostgreSQL fills a page it extends the relation with);
 *   index  btree leaves only (no inner pages: routing is the generator's sorted table of
 *          leaf low keys): `nkeys` keys at load, 90 % of a leaf's capacity each (the btree
 *          default fillfactor), then free pages for the right halves of splits.
 * The sum is the pages the workload needs; the row's init (wl_check_storage) refuses a smaller
 * storage.pages with that number, and pages past it are formatted as script/random pages
 * and never touched.
 *
 * Order. A client's changes run in its order, but clients interleave, so a change's page
 * bytes are computed when it runs (btree offsets from the page), while what needs the
 * generator's view (which page, which line pointer, where to split) is decided when the
 * change is handed out, one change at a time. An index leaf splits when its routed item
 * count reaches capacity - (clients + 2): at most one change per client is handed out and
 * not yet run, so the page never overflows even when runs reorder. A client whose insert
 * routes to a leaf whose split has not run yet (or to a leaf that must split again while
 * its last split is still running) waits (PN_CLIENT_WAIT); the split's completion wakes it.
 *
 * Growth. The layout is sized for workload.transactions (bench and crashtest size it for
 * the acknowledged-commit log and then run without end), and a run that goes on past it
 * keeps going, as a PostgreSQL database whose append-only tables are trimmed:
 *   table  an append area that fills up is reused from its first page, as the space that
 *          deleting the oldest appended rows and VACUUM would hand back (PostgreSQL's free
 *          space map gives it to new inserts); nothing the generators do reads an appended
 *          row again. The first record on a reused page re-initializes it (Heap/INSERT+INIT,
 *          Heap/UPDATE+INIT, as PostgreSQL logs the first tuple on an empty page):
 *          `stale` marks the page from its reuse until that record is applied
 *          (wl_page_stale, wl_page_inited);
 *   index  a split that finds every page of its index's range in use takes the leaf with
 *          the fewest routed keys (not pending, no pending neighbour, not the one splitting)
 *          as its new right page: the leaf's keys leave the generator's routing (as index
 *          vacuum would remove the entries of the rows trimmed away) and its key range
 *          joins its left neighbour's; the split rebuilds the page (its right block is
 *          REGBUF_WILL_INIT), so the old bytes never matter. An insert handed out to it
 *          before lands on the rebuilt page or is overwritten; at most one per client,
 *          which the split margin (clients + 2) holds.
 * A run that never fills its room takes exactly the pages and records it took before.
 *
 * Updates (wl_update_row). Each loaded page has `room` (free bytes for new versions) and
 * `versions` (old versions a prune would remove). A HOT update takes room for a version (the
 * tuple itself is rewritten in place); when room is short and versions exist, a Heap2/PRUNE
 * comes first and gives their room back; with neither, the update is non-HOT (LOCK, UPDATE
 * to the append pages, index inserts) and the moved-off version becomes prunable once the
 * transaction ends (wl_txn_end).
 */
#ifndef PN_LAYOUT_H
#define PN_LAYOUT_H

#include "engine.h"
#include "txn.h"

#define WL_MAX_RELS 24
#define WL_QUEUE 64

struct wl_leaf {
	uint64_t *keys; /* routed keys, sorted */
	uint32_t n, cap;
	uint32_t page;
	uint64_t low; /* smallest key routed here */
	bool pending; /* a split made it; it takes items once that split has run */
	/* CK3 (sim/chunks.h): an initial leaf's keys as the format laid them out, kept when it
	 * first changes (NULL: unchanged, keys[0..n) are still those) */
	uint64_t *init;
	uint32_t init_n;
};

struct wl_rel {
	const char *name;
	bool index;
	uint32_t first, npages; /* the range */
	/* table */
	uint32_t rows, rows_per_page, home_pages;
	uint16_t t_len;
	uint32_t append_first, append_pages, append_at; /* append page in use (index in area) */
	uint32_t append_bytes;                          /* bytes taken on it */
	uint16_t append_off;                            /* line pointers handed out on it */
	uint32_t append_cycles; /* times the append area filled up and was reused (Growth) */
	uint8_t *stale;         /* per append page: reused, not yet re-initialized by a record */
	uint16_t *room;         /* per home page: free bytes for new versions */
	uint16_t *versions;     /* per home page: versions a prune would remove */
	/* index */
	uint16_t itup_len;
	uint32_t leaf_cap, leaf_limit;
	uint32_t nleaves, leaves_cap, used;
	uint32_t init_leaves;   /* leaves the format laid out (ids 0..init_leaves-1) */
	uint64_t recycled;      /* splits that took a recycled leaf (Growth) */
	struct wl_leaf *leaves; /* by id (stable) */
	uint32_t *order;        /* leaf ids by low key */
	uint32_t table;         /* the table it indexes (rel id) */
};

/* A client's changes still to hand out, and the pages its transaction made non-HOT
 * updates on: their dead old versions can be pruned (room for HOT) only once it ends. */
#define WL_PENDING 64
struct wl_queue {
	struct pn_change q[WL_QUEUE];
	uint32_t head, len;
	uint32_t pend_rel[WL_PENDING], pend_page[WL_PENDING];
	uint32_t npend;
};

struct wl_layout {
	struct wl_rel rels[WL_MAX_RELS];
	uint32_t nrels, pages;
	uint32_t clients;
	uint32_t page_size;
	bool size_only; /* count the pages only: no rows, leaves or keys (pn_scenario_layout_pages) */
};

/* What the state of a row over a layout begins with (pgbench's, tpcc's): layout.c's hooks
 * and wl_next read it. */
struct wl_layout_state {
	struct wl_base b;
	struct wl_layout L;
};

typedef uint64_t (*wl_key_fn)(const void *ctx, uint64_t i);

/* Declaring relations (in page order); return the rel id. */
uint32_t wl_table(struct wl_layout *L, const char *name, uint32_t rows, uint32_t t_len,
		  uint32_t fillfactor, uint32_t append_rows);
uint32_t wl_index(struct wl_layout *L, const char *name, uint32_t table, uint32_t itup_len,
		  uint64_t nkeys, wl_key_fn key, const void *ctx, uint64_t inserts);
void wl_layout_free(struct wl_layout *L);

/* Refuses (setup->svc.error, false) a storage.pages below the layout's pages or too few buffers;
 * `what` names the workload and its size in the message ("tpcc with 1 warehouses"). */
bool wl_check_storage(struct pn_client_setup *setup, const struct wl_layout *L, const char *what);

/* Format: the initial bytes of page blkno; false when no relation holds it. */
bool wl_page_init(const struct wl_layout *L, uint8_t *page, uint32_t blkno);
/* The same bytes as wl_page_init gave at format time, whatever has changed since (index
 * leaves keep their format-time keys when they first change): a lazily formatted device
 * builds a never-written page with it (sim/chunks.h CK3). */
bool wl_page_init_fixed(const struct wl_layout *L, uint8_t *page, uint32_t blkno);

/* Where row `row` of a table lives at load. */
void wl_row_at(const struct wl_rel *t, uint64_t row, uint32_t *page, uint16_t *offnum);
/* Takes room for a t_len tuple on the table's append page: its page and line pointer. */
void wl_append(struct wl_layout *L, uint32_t rel, uint32_t *page, uint16_t *offnum);

/* The change of an index insert of key -> (heap_blk, heap_off): an INSERT_LEAF, or a split
 * that carries the new item. False (nothing changed): the leaf's split has not run yet,
 * wait for it. */
bool wl_index_route(struct wl_layout *L, uint32_t rel, uint64_t key, uint32_t heap_blk,
		    uint16_t heap_off, struct pn_change *out);
/* An index insert to route when it is reached (wl_pop). */
void wl_push_index(struct wl_queue *q, uint32_t rel, uint64_t key, uint32_t heap_blk,
		   uint16_t heap_off);
void wl_split_done(struct wl_layout *L, const struct pn_change *c);

/*
 * An update of a loaded row that changes `change_len` bytes at payload offset `at`:
 * HOT in place when the page has room for a new version (or has had one moved off it by
 * a transaction that has ended: a transaction cannot prune its own dead versions), else
 * LOCK + UPDATE to the append page + an insert into each of the table's indexes
 * (`keys[i]` for index idx[i]). Appends the changes to q.
 */
void wl_update_row(struct wl_layout *L, uint32_t rel, uint64_t row, uint32_t at,
		   uint32_t change_len, const uint32_t *idx, const uint64_t *keys, uint32_t nidx,
		   struct wl_queue *q);
/* The same when the update changes an indexed column: never HOT. */
void wl_update_row_indexed(struct wl_layout *L, uint32_t rel, uint64_t row, const uint32_t *idx,
			   const uint64_t *keys, uint32_t nidx, struct wl_queue *q);
/* SELECT ... FOR UPDATE of a loaded row: a Heap/LOCK on it. */
void wl_lock_row(struct wl_layout *L, uint32_t rel, uint64_t row, struct wl_queue *q);
void wl_push(struct wl_queue *q, const struct pn_change *c);
/* The client's transaction ended: the pages it moved versions off now have room. */
void wl_txn_end(struct wl_layout *L, struct wl_queue *q);
/* The next change; an index insert is routed now. False: the queue is empty, or its head
 * waits for a split (*wait set). */
bool wl_pop(struct wl_layout *L, struct wl_queue *q, struct pn_change *out, bool *wait);

/*
 * The client loop both generators share: hand out the queued changes; when the queue is
 * empty, expand the transaction's next statement (expand() false: the transaction is
 * over, a commit is handed out); between transactions, begin one (begin() draws its
 * parameters and returns its type) until workload.transactions have begun. g is the
 * generator's state (it begins with ls).
 */
struct wl_txn {
	struct wl_queue q;
	bool in_txn;
};
typedef int (*wl_begin_fn)(void *g, const struct pn_client *c);
typedef bool (*wl_expand_fn)(void *g, uint32_t client);
enum pn_client_next wl_next(struct wl_layout_state *ls, void *g, const struct pn_client *c,
			    struct wl_txn *t, wl_begin_fn begin, wl_expand_fn expand,
			    struct pn_step *out);

/* A uniform draw from the engine's PRNG; TPC-C's NURand(A, x, y) with the run constant k. */
uint64_t wl_random(const struct pn_client *c, uint64_t lo, uint64_t hi);
uint64_t wl_nurand(const struct pn_client *c, uint64_t a, uint64_t k, uint64_t lo, uint64_t hi);

/* page_init of a layout (wl_page_init, else pn_page_init's empty heap page), and its
 * page_init_fixed (wl_page_init_fixed). */
void wl_layout_page_init(const void *state, uint32_t p, uint8_t *page);
void wl_layout_page_init_fixed(const void *state, uint32_t p, uint8_t *page);
/* The layout rows' page_stale, page_inited and change_done (a split's end wakes every
 * client: one waiting for it may go on). */
bool wl_page_stale(const void *state, uint32_t blkno);
void wl_page_inited(void *state, uint32_t blkno);
void wl_change_done(void *state, const struct pn_client *c, const struct pn_change *chg);
/* The hooks of a row over a layout (pgbench's, tpcc's designated initializers). */
#define WL_LAYOUT_HOOKS                                                                 \
	.page_init = wl_layout_page_init, .page_init_fixed = wl_layout_page_init_fixed, \
	.page_stale = wl_page_stale, .page_inited = wl_page_inited, .change_done = wl_change_done

#endif
