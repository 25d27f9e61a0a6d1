/*
 * cli_contract.h: what the tests of the commands (test_cli.c: run, compare; test_disk.c:
 * bench, crashtest) hold every JSON document to, written out from the product description
 * on its own (not from cli.c's tables, so that a key dropped there fails here).
 */
#ifndef PN_TEST_CLI_CONTRACT_H
#define PN_TEST_CLI_CONTRACT_H

#include <check.h>
#include <jansson.h>

/* product.md's keys of a run / compare / bench result, in its order. */
static const char *const contract_keys[] = {
	"scenario",           "mode",        "transactions", "commits",
	"wal_bytes",          "wal_records", "fpi_count",    "fpi_bytes",
	"data_bytes_written", "fsyncs",      "checkpoints",  "space_amplification",
	"elapsed_seconds",
};

/* Every result of `results` (a non-empty array) begins with contract_keys, in order. */
static inline void assert_contract(json_t *results)
{
	size_t i;
	json_t *r;

	ck_assert(json_array_size(results) > 0);
	json_array_foreach(results, i, r)
	{
		void *it = json_object_iter(r);
		for (size_t k = 0; k < sizeof contract_keys / sizeof contract_keys[0]; k++) {
			ck_assert_msg(it != NULL, "result %zu ends before '%s'", i,
				      contract_keys[k]);
			ck_assert_str_eq(json_object_iter_key(it), contract_keys[k]);
			it = json_object_iter_next(r, it);
		}
	}
}

/* `--json -`: the captured stdout is one JSON document and nothing else (cli.h CL4). */
static inline json_t *pure_json(const char *text)
{
	json_error_t error;
	json_t *root = json_loads(text, 0, &error);

	ck_assert_msg(root != NULL, "stdout is not pure JSON (%d:%d: %s):\n%s", error.line,
		      error.column, error.text, text);
	return root;
}

#endif
