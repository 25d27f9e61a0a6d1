/*
 * wal.h: WAL insertion and flushing (engine layer, owned by wal.c; its rules W1-W5 are in
 * wal.c's header, the record bytes in walfmt.h): insert (LSN = byte position), group flush,
 * the segment ring. The WAL state is e->wal in struct pn_engine.
 */
#ifndef PN_WAL_H
#define PN_WAL_H

#include "redo.h"
#include "walfmt.h"

struct pn_engine;

bool pn_wal_init(struct pn_engine *e);
void pn_wal_free(struct pn_engine *e);
/* Room for a record of `len` bytes without overrunning unwritten WAL or a needed segment. */
bool pn_wal_has_room(struct pn_engine *e, uint32_t len);
/* Encodes r, assigns its place, copies it into the WAL pages; returns the end LSN. */
pn_lsn pn_wal_insert(struct pn_engine *e, struct pn_wal_record *r, enum pn_rec kind, pn_lsn *start);
pn_lsn pn_wal_insert_lsn(const struct pn_engine *e);
/* Asks for a flush up to lsn; true if already flushed, else proc is woken when it is. */
bool pn_wal_flush_request(struct pn_engine *e, pn_lsn lsn, uint32_t proc);
void pn_wal_start_flush(struct pn_engine *e, pn_lsn upto);
void pn_wal_set_end(struct pn_engine *e, pn_lsn end, pn_lsn prev_start); /* after recovery */
uint64_t pn_wal_file_offset(const struct pn_engine *e, pn_lsn page_addr);
void pn_wal_checkpoint_done(struct pn_engine *e, pn_lsn redo);

#endif
