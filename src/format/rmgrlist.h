/*
 * rmgrlist.h: the record kinds, one row each (format layer; read by redo.h for enum pn_rec
 * and by redo.c for the table, in the style of PostgreSQL's rmgrlist.h and PG_RMGR). No
 * include guard: every reader defines PN_RECORD, includes this file, and undefines it.
 *
 *   PN_RECORD(symbol, name, rmid, info, apply, describe)
 *     symbol    enum pn_rec's PN_REC_<symbol>; the row order is the enum's (and the order
 *               of the per-kind breakdowns in the CLI's text and JSON)
 *     name      pg_waldump's "Rmgr/RECORD" (pn_rec_name)
 *     rmid      the resource manager (walfmt.h PN_RM_*), at most PN_RM_MAX
 *     info      xl_info's high four bits (the low four are flags; none here), unique per rmid;
 *               PostgreSQL 15's value of the record of that name (nbtxlog.h, heapam_xlog.h,
 *               xact.h, pg_control.h, storage_xlog.h), so real pg_waldump names it alike
 *               (CTest waldump_kinds reads every row back). Two rows are ours, on values
 *               PostgreSQL 15 leaves free: CLOG/SET (PostgreSQL logs no commit-status bits;
 *               its CLOG has ZEROPAGE 0x00 and TRUNCATE 0x10 only, so pg_waldump shows
 *               CLOG/UNKNOWN (20)) and XLOG2/HINT_DELTA (Umbra's manager 22, absent there)
 *     apply     what the record does to the page of one of its blocks (redo_heap.c,
 *               redo_btree.c, redo_xlog.c): the same function for normal operation and redo;
 *               NULL for records with no block (their effect is read by recovery, the
 *               checkpointer or the oracle) and for image-only ones (pn_redo_apply restores
 *               an image before it looks at the row)
 *     describe  a line of text for the record's main data and blocks (pn_redo_describe)
 * Adding a record kind: one row here, its apply function, and a scenario that writes it in
 * tests/waldump_kinds.sh (which fails on a row no scenario there writes).
 */
/* clang-format off */
PN_RECORD(HEAP_HOT_UPDATE, "Heap/HOT_UPDATE", PN_RM_HEAP, 0x40, pn_redo_heap_hot_update, pn_redo_heap_describe)
PN_RECORD(HEAP2_FREEZE_PAGE, "Heap2/FREEZE_PAGE", PN_RM_HEAP2, 0x30, pn_redo_heap2_freeze, pn_redo_heap_describe)
PN_RECORD(BTREE_DEDUP, "Btree/DEDUP", PN_RM_BTREE, 0x60, pn_redo_btree_dedup, pn_redo_btree_describe)
PN_RECORD(XACT_COMMIT, "Transaction/COMMIT", PN_RM_XACT, 0x00, NULL, pn_redo_xlog_describe)
PN_RECORD(XACT_ABORT, "Transaction/ABORT", PN_RM_XACT, 0x20, NULL, pn_redo_xlog_describe)
PN_RECORD(XLOG_CHECKPOINT_ONLINE, "XLOG/CHECKPOINT_ONLINE", PN_RM_XLOG, 0x10, NULL, pn_redo_xlog_describe)
PN_RECORD(XLOG_CHECKPOINT_SHUTDOWN, "XLOG/CHECKPOINT_SHUTDOWN", PN_RM_XLOG, 0x00, NULL, pn_redo_xlog_describe)
PN_RECORD(XLOG_FPI_FOR_HINT, "XLOG/FPI_FOR_HINT", PN_RM_XLOG, 0xA0, pn_redo_fpi_for_hint, pn_redo_xlog_describe)
PN_RECORD(CLOG_SET, "CLOG/SET", PN_RM_CLOG, 0x20, pn_redo_clog_set, pn_redo_xlog_describe)
/* Umbra l4: hint bits as final-byte fragments (pn_hint_delta_encode builds the block data) */
PN_RECORD(XLOG2_HINT_DELTA, "XLOG2/HINT_DELTA", PN_RM_XLOG2, 0x00, pn_redo_hint_delta, pn_redo_xlog_describe)
/* the records pgbench and tpcc produce (PostgreSQL 15's layouts) */
PN_RECORD(HEAP_INSERT, "Heap/INSERT", PN_RM_HEAP, 0x00, pn_redo_heap_insert, pn_redo_heap_describe)
PN_RECORD(HEAP_INSERT_INIT, "Heap/INSERT+INIT", PN_RM_HEAP, 0x80, pn_redo_heap_insert_init, pn_redo_heap_describe)
PN_RECORD(HEAP_UPDATE, "Heap/UPDATE", PN_RM_HEAP, 0x20, pn_redo_heap_update, pn_redo_heap_describe)
PN_RECORD(HEAP_UPDATE_INIT, "Heap/UPDATE+INIT", PN_RM_HEAP, 0xA0, pn_redo_heap_update_init, pn_redo_heap_describe)
PN_RECORD(HEAP_LOCK, "Heap/LOCK", PN_RM_HEAP, 0x60, pn_redo_heap_lock, pn_redo_heap_describe)
PN_RECORD(HEAP_DELETE, "Heap/DELETE", PN_RM_HEAP, 0x10, pn_redo_heap_delete, pn_redo_heap_describe)
PN_RECORD(BTREE_INSERT_LEAF, "Btree/INSERT_LEAF", PN_RM_BTREE, 0x00, pn_redo_btree_insert, pn_redo_btree_describe)
PN_RECORD(BTREE_SPLIT_L, "Btree/SPLIT_L", PN_RM_BTREE, 0x30, pn_redo_btree_split_l, pn_redo_btree_describe)
PN_RECORD(BTREE_SPLIT_R, "Btree/SPLIT_R", PN_RM_BTREE, 0x40, pn_redo_btree_split_r, pn_redo_btree_describe)
PN_RECORD(HEAP2_PRUNE, "Heap2/PRUNE", PN_RM_HEAP2, 0x10, pn_redo_heap2_prune, pn_redo_heap_describe)
/* the vacuum workload's */
PN_RECORD(HEAP2_VISIBLE, "Heap2/VISIBLE", PN_RM_HEAP2, 0x40, pn_redo_heap2_visible, pn_redo_heap_describe)
/* relation truncation (no block; recovery and the oracle read its main data: redo_xlog.c) */
PN_RECORD(SMGR_TRUNCATE, "Storage/TRUNCATE", PN_RM_SMGR, 0x20, NULL, pn_redo_xlog_describe)
/* clang-format on */
