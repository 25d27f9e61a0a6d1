/*
 * fuzz.h: what the libFuzzer harnesses share (fuzz/, built with -DPN_FUZZ=ON and clang).
 */
#ifndef PN_FUZZ_H
#define PN_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "scenario.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Pins what the loader may depend on besides the input: its memory limit. */
void pn_fuzz_init(void);
/* Aborts unless msg is one line "NAME:LINE:COL: ..." with LINE and COL at least 1. */
void pn_fuzz_check_message(const char *msg, const char *name);

/* Writes a WAL segment's bytes as a segment file of timeline 1 in dir, named after the
 * segment its long page header says it is (xlp_pageaddr / xlp_seg_size: the reader refuses
 * a file whose first page is not where its name says; segment 1 when the header gives no
 * power-of-two size); removes the previous call's file. Returns the file's path. */
const char *pn_fuzz_write_segment(const char *dir, const uint8_t *data, size_t len);

#endif
