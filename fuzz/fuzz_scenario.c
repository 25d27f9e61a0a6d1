/*
 * fuzz_scenario.c: libFuzzer harness of the scenario loader (src/scenario/load.c).
 *
 * Any bytes go to pn_scenario_load_string(). It must return, never crash, leak or read out
 * of bounds (the harness is built with ASan and UBSan), and:
 *   FS1. a refusal is one line "fuzz.yaml:LINE:COL: ..." (LINE, COL >= 1);
 *   FS2. a scenario it accepts survives the trace writer: pn_scenario_write()'s text loads
 *        again and is written out the same (a counterexample trace must replay what it says).
 * Build: cmake --preset fuzz (clang, -DPN_FUZZ=ON); run: build-fuzz/fuzz/fuzz_scenario
 * fuzz/corpus/scenario (fuzz/README.md).
 */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"
#include "shrink.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	pn_fuzz_init();
	return 0;
}

/* The trace writer's text of s (malloc'ed). */
static char *written(const struct pn_scenario *s, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	PN_ASSERT(f != NULL);
	pn_scenario_write(f, s);
	PN_ASSERT(fclose(f) == 0);
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char err[PN_ERROR_LEN];
	struct pn_scenario s, again;
	char *first, *second;
	size_t first_len, second_len;

	if (!pn_scenario_load_string("fuzz.yaml", (const char *)data, size, &s, err, sizeof err)) {
		pn_fuzz_check_message(err, "fuzz.yaml");
		return 0;
	}
	first = written(&s, &first_len);
	if (!pn_scenario_load_string("fuzz.yaml", first, first_len, &again, err, sizeof err)) {
		fprintf(stderr, "FS2: the written scenario does not load: %s\n%s", err, first);
		abort();
	}
	second = written(&again, &second_len);
	if (first_len != second_len || memcmp(first, second, first_len) != 0) {
		fprintf(stderr, "FS2: written twice, the scenario differs:\n%s---\n%s", first,
			second);
		abort();
	}
	free(first);
	free(second);
	pn_scenario_free(&again);
	pn_scenario_free(&s);
	return 0;
}
