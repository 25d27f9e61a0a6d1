/*
 * fuzz_trace.c: libFuzzer harness of the trace reader: what `penumbra replay` reads before
 * it runs anything. A trace is a scenario with a replay: section (src/scenario/load.c) whose
 * crash states are strings like "p3,t7:5" (model/crashstate.c, pn_crash_fates_decode).
 *
 * Any bytes are loaded as a trace. It must return, never crash, leak or read out of bounds,
 * and:
 *   T1. a refusal is one line "fuzz.trace.yaml:LINE:COL: ..." (LINE, COL >= 1);
 *   T2. each crash state of an accepted trace is decoded against a device of up to 64
 *       unsynced writes (seq 1..64, the most crash.max_unsynced allows) without a crash, and
 *       a state it accepts encodes and decodes back to the same fates.
 */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crashstate.h"
#include "load.h"

#define UNSYNCED_MAX 64

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	pn_fuzz_init();
	return 0;
}

static void check_state(const struct pn_device *dev, const char *state)
{
	static struct pn_write_fate fates[UNSYNCED_MAX], back[UNSYNCED_MAX];
	static char text[UNSYNCED_MAX * 32], why[256];

	if (!pn_crash_fates_decode(dev, state, fates, why, sizeof why))
		return;
	pn_crash_fates_encode(dev, fates, text, sizeof text);
	if (!pn_crash_fates_decode(dev, text[0] ? text : "none", back, why, sizeof why) ||
	    memcmp(fates, back, sizeof(fates[0]) * dev->nunsynced) != 0) {
		fprintf(stderr, "T2: state '%s' encodes as '%s', which decodes otherwise\n", state,
			text);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char err[PN_ERROR_LEN];
	static struct pn_unsynced unsynced[UNSYNCED_MAX];
	struct pn_device dev;
	struct pn_scenario s;

	if (!pn_scenario_load_string("fuzz.trace.yaml", (const char *)data, size, &s, err,
				     sizeof err)) {
		pn_fuzz_check_message(err, "fuzz.trace.yaml");
		return 0;
	}
	if (s.replay.present) {
		memset(&dev, 0, sizeof dev);
		dev.atomic_unit = pn_scenario_atomic_unit(
			&s); /* torn masks are checked in its units */
		for (uint32_t i = 0; i < UNSYNCED_MAX; i++)
			unsynced[i] = (struct pn_unsynced){.seq = i + 1, .len = 8192};
		dev.unsynced = unsynced;
		/* as many unsynced writes as the crash model allows, at least one */
		dev.nunsynced = PN_MAX(1u, PN_MIN((uint32_t)UNSYNCED_MAX, s.crash.max_unsynced));
		check_state(&dev, s.replay.state);
		check_state(&dev, s.replay.recovery_state);
	}
	pn_scenario_free(&s);
	return 0;
}
