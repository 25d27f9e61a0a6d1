/*
 * btree.h: btree leaf pages of the realistic workloads and btree_dedup (format layer, owned
 * by btree.c): leaves formatted, index tuples made, items found and copied, btree_dedup's
 * posting tuples read. Bytes only.
 */
#ifndef PN_BTREE_H
#define PN_BTREE_H

#include "page.h"

#define PN_ITUP_HEADER 8u        /* IndexTupleData: t_tid 6 B + t_info 2 B */
#define PN_BTREE_SPECIAL 16u     /* BTPageOpaqueData */
#define PN_BTREE_PLAIN 16u       /* a plain index tuple of an int4 or int8 key */
#define PN_BTREE_POSTING_HDR 16u /* a posting tuple's header; its heap TIDs follow */
#define PN_BTREE_TID 6u
#define PN_BTREE_ALT_TID 0x2000u   /* INDEX_ALT_TID_MASK / BT_IS_POSTING */
#define PN_BTREE_POSTING_MAX 2704u /* BTMaxItemSize of an 8 KiB page; buffers are this big */

/* An empty leaf (btpo_prev, btpo_next), pd_lsn kept. */
void pn_btree_page_init(uint8_t *page, uint32_t page_size, uint32_t prev, uint32_t next);
/* pn_btree_leaf_fill() formats a btree leaf holding index tuples of `itup_len` bytes with
 * the given keys, each pointing at heap TID (key >> 6, key % 64 + 1). */
void pn_btree_leaf_fill(uint8_t *page, uint32_t page_size, const uint64_t *keys, uint32_t n,
			uint32_t itup_len);
uint32_t pn_btree_items_per_page(uint32_t page_size, uint32_t itup_len);
/* Writes an index tuple (key, heap TID) of itup_len bytes into out. */
void pn_itup_make(uint8_t *out, uint32_t itup_len, uint64_t key, uint32_t heap_blk,
		  uint16_t heap_off);
/* An index tuple's length (t_info & 0x1FFF). */
uint32_t pn_itup_len(const uint8_t *itup);
/* Item i's (0-based) index tuple, unchecked. */
const uint8_t *pn_btree_item(const uint8_t *page, uint32_t i);
/* Adds an index tuple of len bytes at offnum (1-based), moving the line pointers from there
 * up; false when it does not fit. */
bool pn_btree_add(uint8_t *page, uint32_t page_size, const uint8_t *itup, uint32_t len,
		  uint32_t offnum);
/* Adds the concatenated index tuples of `data` at the end of a leaf. */
bool pn_btree_add_all(uint8_t *page, uint32_t page_size, const uint8_t *data, uint32_t len);
/* The offset number (1-based) a new index tuple with `key` takes on a leaf: after every
 * item whose key is <= key (so it also works on leaves holding out-of-range keys). */
uint16_t pn_btree_insert_offnum(const uint8_t *page, uint64_t key);
/* How many of the leaf's items have a key < `key`, i.e. firstrightoff - 1 of a split there. */
uint16_t pn_btree_count_below(const uint8_t *page, uint64_t key);
/* Concatenated index tuples of items [from, nitems) of a leaf into out; returns bytes. */
uint32_t pn_btree_items_copy(const uint8_t *page, uint16_t from, uint8_t *out, uint32_t cap);
/* btree_dedup's leaves (wl_btree.c's layout): posting tuples of at most posting_max bytes. */
uint32_t pn_btree_posting_max(uint32_t page_size);
/* Item i's (0-based) tuple if its line pointer is sane (*len its length), else NULL. */
const uint8_t *pn_btree_leaf_item(const uint8_t *page, uint32_t page_size, uint32_t i,
				  uint32_t *len);
/* Heap TIDs a tuple holds (1 for a plain one, 0 when a posting list overruns len), and
 * where they start. */
uint32_t pn_btree_ntids(const uint8_t *t, uint32_t len);
const uint8_t *pn_btree_tids(const uint8_t *t);
/* True when the page is a sane btree leaf (special space, BTP_LEAF). */
bool pn_btree_is_leaf(const uint8_t *page, uint32_t page_size);

#endif
