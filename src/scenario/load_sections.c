/*
 * load_sections.c: the values of the protocol, crash and expect sections that are not one
 * scalar (protocol.mutations, spare_slots, mode and policy; crash.points; expect.verdict),
 * and the relations of the protocol, schedules and replay sections, checked once the whole
 * document is read (scenario layer; part of the loader, load.c). The protocol's keys are
 * judged by the declaration of the row they spell (protocols.h).
 */
#include "load_sections.h"
#include "load_walk.h"
#include "load_yaml.h"
#include "parse.h"
#include "protocols.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const verdict_names[] = {"pass", "violation", NULL};

static const struct field every_fields[] = {
	NUM("every", V_U64, crash.every, 1, UINT64_MAX),
};
static const struct table every_table = TABLE(every_fields);

bool load_read_mutations(struct loader *L, const struct field *f, void *base, const char *path)
{
	const char *const *names = pn_mutation_names, *text;
	char where[PATH_LEN], hint[80], list[WANT_LEN];
	uint32_t *bits = &L->s->protocol.mutations;

	load_join_names(list, sizeof list, names, PN_MUT_COUNT);
	if (load_is_null(L))
		return true;
	if (L->ev.type != YAML_SEQUENCE_START_EVENT)
		return load_fail(L, L->ev.start_mark,
				 "%s is %s; expected a list of mutation names like [fpw_off]", path,
				 load_found(L));
	for (size_t i = 0;; i++) {
		int k = 0;
		if (!load_next(L))
			return false;
		if (L->ev.type == YAML_SEQUENCE_END_EVENT)
			return true;
		snprintf(where, sizeof where, "%s[%zu]", path, i);
		if (!load_scalar(L, where, "a mutation name", &text))
			return false;
		while (k < PN_MUT_COUNT && strcmp(text, names[k]) != 0)
			k++;
		if (k == PN_MUT_COUNT) {
			load_suggest(hint, sizeof hint, text, names, PN_MUT_COUNT);
			return load_fail(L, L->ev.start_mark,
					 "unknown mutation '%s' in %s%s; expected one of %s",
					 load_show(L, text), path, hint, list);
		}
		PN_ASSERT(k >= 0 && k < PN_MUT_COUNT && PN_MUT_COUNT <= 32);
		if (*bits & 1u << k)
			return load_fail(L, L->ev.start_mark,
					 "mutation '%s' is listed twice in %s; expected each once",
					 names[k], path);
		*bits |= 1u << k;
	}
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* crash.points as a list: event numbers, kept sorted and without repeats. */
static bool read_point_list(struct loader *L, const char *path)
{
	static const struct field point = {.key = "point", .type = V_U64, .max = UINT64_MAX};
	struct pn_scenario *s = L->s;
	yaml_mark_t m = L->ev.start_mark;
	char where[PATH_LEN];
	uint32_t n = 0;

	for (;;) {
		uint64_t v = 0;
		if (!load_next(L))
			return false;
		if (L->ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		if (s->crash.list_len >= MAX_POINTS)
			return load_fail(L, L->ev.start_mark,
					 "%s lists more than %u event numbers; expected at most %u",
					 path, MAX_POINTS, MAX_POINTS);
		snprintf(where, sizeof where, "%s[%u]", path, s->crash.list_len);
		if (!load_read_number(L, &point, &v, where))
			return false;
		if (!load_grow(L, (void **)&s->crash.list, &L->list_cap, s->crash.list_len,
			       sizeof v))
			return false;
		s->crash.list[s->crash.list_len++] = v;
	}
	if (s->crash.list_len == 0)
		return load_fail(
			L, m,
			"%s is an empty list; expected all, {every: N} or a list of event numbers",
			path);
	qsort(s->crash.list, s->crash.list_len, sizeof *s->crash.list, compare_u64);
	for (uint32_t i = 0; i < s->crash.list_len; i++) {
		if (n == 0 || s->crash.list[i] != s->crash.list[n - 1])
			s->crash.list[n++] = s->crash.list[i];
	}
	PN_ASSERT(n >= 1 && n <= s->crash.list_len);
	for (uint32_t i = 1; i < n; i++)
		PN_ASSERT(s->crash.list[i - 1] < s->crash.list[i]); /* sorted, no repeats */
	s->crash.list_len = n;
	s->crash.points = PN_POINTS_LIST;
	return true;
}

bool load_read_points(struct loader *L, const struct field *f, void *base, const char *path)
{
	struct seen seen;
	yaml_mark_t m = L->ev.start_mark;

	if (L->ev.type == YAML_SCALAR_EVENT && load_plain(L) &&
	    strcmp((const char *)L->ev.data.scalar.value, "all") == 0) {
		L->s->crash.points = PN_POINTS_ALL;
		return true;
	}
	if (L->ev.type == YAML_SEQUENCE_START_EVENT)
		return read_point_list(L, path);
	if (L->ev.type != YAML_MAPPING_START_EVENT)
		return load_fail(L, m,
				 "%s is %s; expected all, {every: N} or a list of event numbers",
				 path, load_found(L));
	if (!load_read_mapping(L, &every_table, L->s, path, &seen))
		return false;
	if (!seen.mask)
		return load_fail(L, m, "%s has no 'every'; expected {every: N}", path);
	L->s->crash.points = PN_POINTS_EVERY;
	return true;
}

bool load_read_verdict(struct loader *L, const struct field *f, void *base, const char *path)
{
	static const struct field verdict = {.key = "verdict",
					     .type = V_ENUM,
					     .names = verdict_names};
	unsigned v = 0;

	if (!load_read_enum(L, &verdict, &v, path))
		return false;
	L->s->expect.violation = v == 1;
	return true;
}

/* protocol.spare_slots: a count of slots, or P% of storage.pages (0 to 200: two a page). */
bool load_read_spare_slots(struct loader *L, const struct field *f, void *base, const char *path)
{
	static const char want[] = "a count of slots or a percentage of the pages such as 10%";
	const char *text = NULL;
	uint64_t v = 0;
	char digits[32];
	(void)f;
	(void)base;
	if (!load_scalar(L, path, want, &text))
		return false;
	size_t n = strlen(text);
	bool pct = n > 0 && text[n - 1] == '%';
	if (pct)
		n--;
	if (n == 0 || n >= sizeof digits)
		return load_fail(L, L->ev.start_mark, "%s is '%s'; expected %s", path,
				 load_show(L, text), want);
	memcpy(digits, text, n);
	digits[n] = 0;
	if (pn_parse_uint(digits, &v) != PN_PARSE_OK || v > (pct ? 200u : UINT32_MAX))
		return load_fail(L, L->ev.start_mark,
				 "%s is '%s', not a count or a percentage up to 200%%; expected %s",
				 path, load_show(L, text), want);
	L->s->protocol.spare_slots = (uint32_t)v;
	L->s->protocol.spare_percent = pct;
	return true;
}

/* protocol.mode and protocol.policy: the names the list of protocols spells (a row's name
 * is MODE or MODE-POLICY, src/protocol/list.h); resolve_row picks the row. */
bool load_read_spelling(struct loader *L, const struct field *f, void *base, const char *path)
{
	bool mode = f->off == OFF(protocol.mode);
	char text[PN_PROTOCOL_COUNT][sizeof L->mode];
	const char *names[PN_PROTOCOL_COUNT + 1];
	unsigned n = 0, v = 0;
	(void)base;
	for (unsigned r = 0; r < PN_PROTOCOL_COUNT; r++) {
		const char *p = pn_protocol_policy(r);
		if (!mode && !p)
			continue;
		snprintf(text[n], sizeof text[n], "%.*s",
			 mode ? (int)pn_protocol_mode_len(r) : (int)strlen(p),
			 mode ? pn_protocol_names[r] : p);
		bool known = false;
		for (unsigned i = 0; i < n; i++)
			known |= strcmp(names[i], text[n]) == 0;
		if (!known) {
			names[n] = text[n];
			n++;
		}
	}
	PN_ASSERT(n >= 1 && n <= PN_PROTOCOL_COUNT);
	names[n] = NULL;
	struct field e = {.key = f->key, .type = V_ENUM, .names = names};
	if (!load_read_enum(L, &e, &v, path))
		return false;
	PN_ASSERT(v < n);
	snprintf(mode ? L->mode : L->policy, sizeof L->mode, "%s", names[v]);
	return true;
}

/* The positions the refusal of a row --mode picks names (cli.c, protocols.h
 * pn_protocol_key_refusal: the keys a row decides itself), and replay's (a trace that does not fit its run: model/replay.c). */
bool load_key_positions(struct loader *L)
{
	struct pn_scenario *s = L->s;
	const struct {
		const void *field;
		uint32_t *at;
	} keys[] = {
		{&s->protocol.generations, s->protocol.generations_at},
		{&s->protocol.layout, s->protocol.layout_at},
		{&s->replay.crash_point, s->replay.at[PN_REPLAY_CRASH_POINT]},
		{s->replay.state, s->replay.at[PN_REPLAY_STATE]},
		{&s->replay.recovery_crash_point, s->replay.at[PN_REPLAY_RECOVERY_POINT]},
		{s->replay.recovery_state, s->replay.at[PN_REPLAY_RECOVERY_STATE]},
		{s->replay.choices, s->replay.at[PN_REPLAY_CHOICES]},
	};
	for (size_t i = 0; i < PN_ARRAY_LEN(keys); i++) {
		yaml_mark_t m;
		if (!load_given(L, keys[i].field, &m))
			continue;
		struct pos p = load_position(L, m);
		PN_ASSERT(p.line <= UINT32_MAX && p.col <= UINT32_MAX);
		keys[i].at[0] = (uint32_t)p.line;
		keys[i].at[1] = (uint32_t)p.col;
	}
	return true;
}

/* Relations between keys, checked once everything is read (any order of sections). */
/* schedules: a preemption bound alone asks for the bounded search; with another strategy
 * named it is an error. */
bool load_validate_schedules(struct loader *L)
{
	struct pn_scenario *s = L->s;
	bool named = load_given(L, &s->schedules.strategy, NULL);
	s->schedules.named = named || s->schedules.preemption_bound;
	if (s->schedules.preemption_bound && !named)
		s->schedules.strategy = PN_STRATEGY_BOUNDED;
	if (s->schedules.preemption_bound && s->schedules.strategy != PN_STRATEGY_BOUNDED)
		return load_fail(
			L, load_mark_of(L, &s->schedules.preemption_bound, NULL),
			"schedules.preemption_bound is %u with strategy %s; expected strategy: bounded (or no strategy), or no preemption_bound",
			s->schedules.preemption_bound, pn_strategy_name(s->schedules.strategy));
	if (s->schedules.strategy == PN_STRATEGY_PCT && s->schedules.runs < 2)
		return load_fail(
			L, load_mark_of(L, &s->schedules.runs, &s->schedules.strategy),
			"schedules.runs is %u with strategy pct; expected 2 or more (the seeded run, then the pct runs)",
			s->schedules.runs);
	size_t n = strlen(s->replay.choices);
	if (n && s->replay.choices[n - 1] == ',')
		return load_fail(
			L, load_mark_of(L, &s->replay.choices, NULL),
			"replay.choices \"%s\" ends in a comma; expected EVENT:CANDIDATE pairs with a comma between two, none after the last",
			s->replay.choices);
	return true;
}

/* replay: (a counterexample trace, docs/checker.md section 9): the keys penumbra check writes,
 * each with a value it could have written; the crash inside recovery both of its keys or
 * neither; a scenario without crash: crashes nothing. */
bool load_validate_replay(struct loader *L)
{
	struct pn_scenario *s = L->s;
	const struct {
		const void *field;
		const char *key, *want;
	} required[] = {
		{&s->replay.schedule, "schedule", "the schedule's number, from 0"},
		{&s->replay.crash_point, "crash_point", "the event the run crashed after, from 1"},
		{s->replay.state, "state", "the crash state, \"none\" or elements pN and tN:MASK"},
	};
	const struct {
		const char *value, *key, *want;
	} strings[] = {
		{s->replay.state, "state", "\"none\" or the crash state's elements pN and tN:MASK"},
		{s->replay.recovery_state, "recovery_state",
		 "\"none\" or the crash state's elements pN and tN:MASK"},
		{s->replay.choices, "choices",
		 "EVENT:CANDIDATE pairs (no choices key for the seeded order)"},
		{s->replay.scenario_hash, "scenario_hash",
		 "16 lowercase hex digits (no scenario_hash key for a trace without one)"},
	};
	yaml_mark_t at, m;
	if (!s->replay.present)
		return true;
	at = load_mark_of(L, &s->replay.present, NULL);
	for (size_t i = 0; i < PN_ARRAY_LEN(required); i++)
		if (!load_given(L, required[i].field, NULL))
			return load_fail(
				L, at,
				"replay has no %s; expected %s: <%s>, as penumbra check writes it (keys schedule, crash_point and state)",
				required[i].key, required[i].key, required[i].want);
	for (size_t i = 0; i < PN_ARRAY_LEN(strings); i++)
		if (load_given(L, strings[i].value, &m) && !strings[i].value[0])
			return load_fail(L, m, "replay.%s is empty; expected %s", strings[i].key,
					 strings[i].want);
	bool point = load_given(L, &s->replay.recovery_crash_point, &m);
	if (point != load_given(L, s->replay.recovery_state, point ? NULL : &m))
		return load_fail(
			L, m,
			"replay.%s is given without replay.%s; expected both (the event of the recovery crashed after and the state crashed in) or neither",
			point ? "recovery_crash_point" : "recovery_state",
			point ? "recovery_state" : "recovery_crash_point");
	if (load_given(L, s->replay.scenario_hash, &m) &&
	    (strlen(s->replay.scenario_hash) != 16 ||
	     strspn(s->replay.scenario_hash, "0123456789abcdef") != 16))
		return load_fail(
			L, m,
			"replay.scenario_hash is \"%s\"; expected 16 lowercase hex digits, as penumbra check writes it",
			load_show(L, s->replay.scenario_hash));
	if (s->crash.present)
		return true;
	if (point)
		return load_fail(
			L, load_mark_of(L, &s->replay.recovery_crash_point, NULL),
			"replay.recovery_crash_point names a crash state, but the scenario has no crash: section, so nothing is crashed; expected no recovery_crash_point (a trace of it can only replay a runtime invariant)");
	if (strcmp(s->replay.state, "none") != 0)
		return load_fail(
			L, load_mark_of(L, s->replay.state, NULL),
			"replay.state names a crash state, but the scenario has no crash: section, so nothing is crashed; expected state: \"none\" (a trace of it can only replay a runtime invariant)");
	return true;
}

/* The field of protocol key bit k (enum pn_protocol_key). */
static const void *key_field(const struct pn_scenario *s, unsigned k)
{
	switch (k) {
	case PN_KEY_GENERATIONS: return &s->protocol.generations;
	case PN_KEY_LAYOUT: return &s->protocol.layout;
	case PN_KEY_POLICY: return &s->protocol.policy;
	case PN_KEY_IMAGE_THRESHOLD: return &s->protocol.image_threshold;
	case PN_KEY_SPARE_SLOTS: return &s->protocol.spare_slots;
	}
	PN_ASSERT(!"a protocol key without a field");
	return NULL;
}

/* The row protocol.mode and protocol.policy spell (src/protocol/list.h), made the
 * scenario's; then what its declaration refuses (protocols.h pn_protocol_key_refusal,
 * pn_protocol_refusal): every protocol key it does not read (those it decides itself say
 * why), values past its bounds, script steps it cannot run, each at its position. */
bool load_validate_protocol(struct loader *L)
{
	struct pn_scenario *s = L->s;
	enum pn_protocol_id row;
	char rows[256];
	if (!pn_protocol_spelled(L->mode[0] ? L->mode : pn_protocol_names[s->protocol.row],
				 L->policy[0] ? L->policy : NULL, &row)) {
		pn_protocol_list_names(rows, sizeof rows, PN_NAMES_ROWS);
		return load_fail(
			L, load_mark_of(L, &s->protocol.policy, NULL),
			"protocol.mode %s has no policy %s; expected one of the protocols %s",
			L->mode, L->policy, rows);
	}
	PN_ASSERT((unsigned)row < PN_PROTOCOL_COUNT);
	pn_protocol_set(s, row);
	unsigned given_keys = 0;
	for (unsigned k = 0; k < PN_KEY_COUNT; k++)
		given_keys |= load_given(L, key_field(s, 1u << k), NULL) ? 1u << k : 0;
	unsigned refused = pn_protocol_key_refusal(s, given_keys, true, rows, sizeof rows);
	if (refused)
		return load_fail(L, load_mark_of(L, key_field(s, refused), &s->protocol.policy),
				 "%s", rows);
	const struct pn_step *st = pn_protocol_refusal(s, rows, sizeof rows);
	return !st || load_fail_at(L, (size_t)st->line, (size_t)st->column, "%s", rows);
}
