/*
 * check_json.h: a checked scenario (check_work.h's item) in words and as JSON, for
 * `penumbra check`'s readable lines, --json and --junit (cli layer).
 */
#ifndef PN_CHECK_JSON_H
#define PN_CHECK_JSON_H

#include <jansson.h>

#include "check_work.h"

/* "error", "violation" or "pass". */
const char *pn_check_item_verdict(const struct check_item *it);
/* The scenario's expect.verdict, or NULL when it did not load. */
const char *pn_check_item_expected(const struct check_item *it);
/* The scenario's object of the JSON's "scenarios" array (docs/cli.md). */
json_t *pn_check_item_json(const struct check_item *it);

#endif
