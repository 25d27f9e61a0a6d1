/*
 * files.h: the one way a file is opened, for every input and every output of every command
 * (base layer, so that the scenario loader, the WAL reader, the import workload, the
 * checker's traces and cli/ all share it). files.c keeps these rules:
 *
 *   F1 An input is a regular file. It is opened O_RDONLY | O_NONBLOCK | O_NOCTTY (a FIFO
 *      without a writer cannot block the open) and the opened descriptor's fstat decides:
 *      a FIFO, a device, a socket or a directory is refused before a byte is read, with
 *      what it is and what was expected ("it is a FIFO (named pipe); expected a WAL segment
 *      file"). Nothing reads a file that this did not open.
 *   F2 No output is one of the inputs. Every input opened (F1) or named (pn_file_note_in)
 *      is remembered by device and inode; an output whose path, or the file a symbolic link
 *      there leads to, is one of them is refused when it is opened and again just before it
 *      replaces its path, naming both files.
 *   F3 An output is written to a temporary file beside it (PATH.tmp<pid>_<n>, same
 *      directory, so the rename stays on one file system) and renamed onto PATH only when
 *      every write, the flush, fsync and close succeeded. On any failure (ENOSPC, EFBIG,
 *      EIO...) or when the command gives up (pn_file_abort_out), the temporary is removed:
 *      the file at PATH is then what it was before (absent, or its previous content). The
 *      first errno of a failed write is kept and reported, whichever call saw it.
 *   F4 An output path that exists and is not a regular file (a device such as /dev/null, a
 *      FIFO or a pipe such as /dev/fd/N, a path under /dev or /proc) is written in place:
 *      there is nothing to rename and nothing to remove. A directory is refused. "-" is
 *      stdout, flushed and checked. A symbolic link to a regular file is kept: its target
 *      is the file replaced.
 *   F5 Signals: a file size limit (RLIMIT_FSIZE) must surface as EFBIG on a write, so the
 *      program ignores SIGXFSZ before it writes (pn_file_catch_signals, from pn_cli_main):
 *      then F3 applies. SIGINT, SIGTERM and SIGHUP remove the temporaries before the
 *      process ends (they wait while a temporary is created and entered in the table of
 *      outputs, so none slips between the two); only SIGKILL (or a crash) can leave a
 *      PATH.tmp<pid>_<n> behind.
 * One thread opens and closes files (the table of open outputs is not locked).
 */
#ifndef PN_FILES_H
#define PN_FILES_H

#include <stdio.h>

#include "pn.h"

/* F1: opens path for reading; a descriptor (blocking again, close-on-exec), or -1 with `why`
 * saying what is wrong without the path ("it is a directory; expected EXPECTED", or the
 * errno's text). The file is remembered as an input (F2). */
int pn_file_open_in(const char *path, const char *expected, char *why, size_t why_len);
/* The same as a stdio stream ("r"), or NULL with `why`. */
FILE *pn_file_fopen_in(const char *path, const char *expected, char *why, size_t why_len);
/* F2: remembers path as an input without reading it (a command names its inputs before it
 * opens its outputs); nothing when it does not exist. */
void pn_file_note_in(const char *path);
/* What a non-regular file is, from its st_mode: "a FIFO (named pipe)", "a directory"... */
const char *pn_file_kind(unsigned mode);

/* F2-F4: opens an output, a temporary beside path ("-": stdout); NULL with `why` (without
 * the path) when it cannot be created or is an input ("it is the input 'X' of this command
 * (the same file); an output never replaces an input"). */
FILE *pn_file_open_out(const char *path, char *why, size_t why_len);
/* F3: flushes, syncs and closes f (from pn_file_open_out) and renames it onto its path,
 * when `written` (the caller's own writes and encodings all succeeded). false with `why`
 * (the first failed write's errno text, or F2's refusal) when any step failed or not
 * written: then the temporary is gone and the path untouched. stdout is flushed and left
 * open. */
bool pn_file_close_out(FILE *f, bool written, char *why, size_t why_len);
/* Closes f (from pn_file_open_out) and removes its temporary: nothing reaches its path. */
void pn_file_abort_out(FILE *f);
/* F5: ignores SIGXFSZ, and makes SIGINT, SIGTERM and SIGHUP (where they have their default
 * action, so not in a background job that ignores SIGINT) remove this process's open
 * temporaries before they end it. A command that catches them itself (check, K5) closes
 * its outputs on its way out instead. */
void pn_file_catch_signals(void);
/* Aborts every output still open and forgets every input: the start and the end of one
 * command (pn_cli_main), so that in-process tests start clean. */
void pn_file_reset(void);

#endif
