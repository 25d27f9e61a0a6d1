/*
 * xxh.h: xxHash (Debian's libxxhash-dev) for the checker's per-state and per-event hashes
 * (base layer). XXH_INLINE_ALL compiles the library's functions into the file that includes
 * this one, so a hash of a few words costs no call through the shared library and no
 * dispatch; the values are the library's own (the same algorithm, version and seeds).
 * Files that hash rarely include the library's own header and call the shared library.
 */
#ifndef PN_XXH_H
#define PN_XXH_H

#define XXH_INLINE_ALL
#include <xxhash.h>

#endif
