/*
 * protocols.c: the protocol table (protocol layer): the rows, their declarations and names
 * from list.h, and the look-ups by a scenario's row, by a name and by a scenario's spelling.
 */
#include "protocols.h"

#include <stdio.h>
#include <string.h>

#define OPS_(id, name, ops, decl) [PN_PROTOCOL_##id] = &ops,
#define DECL_(id, name, ops, decl) [PN_PROTOCOL_##id] = &decl,
#define NAME_(id, name, ops, decl) [PN_PROTOCOL_##id] = name,
#define KEY_NAME_(k, name) [PN_KEY_BIT_##k] = name,
const struct pn_protocol_ops *const pn_protocols[PN_PROTOCOL_COUNT] = {PN_PROTOCOL_LIST(OPS_)};
const struct pn_protocol_decl *const pn_protocol_decls[PN_PROTOCOL_COUNT] = {
	PN_PROTOCOL_LIST(DECL_)};
const char *const pn_protocol_names[PN_PROTOCOL_COUNT + 1] = {PN_PROTOCOL_LIST(NAME_) NULL};
const char *const pn_protocol_key_names[PN_KEY_COUNT + 1] = {PN_PROTOCOL_KEY_LIST(KEY_NAME_) NULL};
_Static_assert(PN_PROTOCOL_FPW == 0, "the first row is the default (pn_scenario_defaults)");

const struct pn_protocol_decl *pn_protocol_decl_of(const struct pn_scenario *sc)
{
	PN_ASSERT(sc->protocol.row < PN_PROTOCOL_COUNT);
	const struct pn_protocol_decl *d = pn_protocol_decls[sc->protocol.row];
	/* the family fields follow the row (pn_protocol_set) */
	PN_ASSERT(d->mode == sc->protocol.mode);
	PN_ASSERT(!(d->keys & PN_KEY_POLICY) || d->policy == sc->protocol.policy);
	return d;
}

const struct pn_protocol_ops *pn_protocol_of(const struct pn_scenario *sc)
{
	PN_ASSERT(pn_protocol_decl_of(sc) != NULL);
	return pn_protocols[sc->protocol.row];
}

void pn_protocol_set(struct pn_scenario *sc, enum pn_protocol_id row)
{
	PN_ASSERT(row < PN_PROTOCOL_COUNT);
	sc->protocol.row = row;
	sc->protocol.mode = pn_protocol_decls[row]->mode;
	if (pn_protocol_decls[row]->keys & PN_KEY_POLICY)
		sc->protocol.policy = pn_protocol_decls[row]->policy;
}

size_t pn_protocol_mode_len(enum pn_protocol_id row)
{
	PN_ASSERT(row < PN_PROTOCOL_COUNT);
	return strcspn(pn_protocol_names[row], "-");
}

const char *pn_protocol_policy(enum pn_protocol_id row)
{
	const char *dash = strchr(pn_protocol_names[row], '-');
	return dash ? dash + 1 : NULL;
}

/* Whether row's MODE is `mode` (n bytes). */
static bool of_mode(unsigned row, const char *mode, size_t n)
{
	return pn_protocol_mode_len(row) == n && strncmp(pn_protocol_names[row], mode, n) == 0;
}

bool pn_protocol_spelled(const char *mode, const char *policy, enum pn_protocol_id *out)
{
	size_t n = strlen(mode);
	int plain = -1, first = -1;
	for (unsigned r = 0; r < PN_PROTOCOL_COUNT; r++) {
		const char *p = pn_protocol_policy(r);
		if (!of_mode(r, mode, n))
			continue;
		if (policy && p && strcmp(p, policy) == 0) {
			*out = (enum pn_protocol_id)r;
			return true;
		}
		plain = !p && plain < 0 ? (int)r : plain;
		first = first < 0 ? (int)r : first;
	}
	if (plain < 0 && policy)
		return false;
	if (plain < 0 && first < 0)
		return false;
	*out = (enum pn_protocol_id)(plain >= 0 ? plain : first);
	return true;
}

bool pn_protocol_pick(const struct pn_scenario *sc, const char *name, enum pn_protocol_id *out)
{
	for (unsigned r = 0; r < PN_PROTOCOL_COUNT; r++)
		if (strcmp(name, pn_protocol_names[r]) == 0) {
			*out = (enum pn_protocol_id)r;
			return true;
		}
	if (strchr(name, '-'))
		return false;
	if (of_mode(sc->protocol.row, name, strlen(name))) {
		*out = (enum pn_protocol_id)sc->protocol.row;
		return true;
	}
	return pn_protocol_spelled(name, NULL, out);
}

/* Appends s to buf (at *at), after ", " unless first. */
static void append(char *buf, size_t len, size_t *at, const char *sep, const char *s, int n)
{
	if (*at < len)
		*at += (size_t)snprintf(buf + *at, len - *at, "%s%.*s", *at ? sep : "", n, s);
}

void pn_protocol_list_names(char *buf, size_t len, enum pn_protocol_names which)
{
	size_t at = 0;
	buf[0] = '\0';
	for (unsigned r = 0; r < PN_PROTOCOL_COUNT; r++) {
		size_t n = which == PN_NAMES_ROWS ? strlen(pn_protocol_names[r])
						  : pn_protocol_mode_len(r);
		bool skip = which == PN_NAMES_MODES_ALONE && pn_protocol_names[r][n] == '\0';
		for (unsigned q = 0; which != PN_NAMES_ROWS && q <= r; q++)
			skip |= (q < r && of_mode(q, pn_protocol_names[r], n)) ||
				(which == PN_NAMES_MODES_ALONE &&
				 strlen(pn_protocol_names[q]) == n &&
				 strncmp(pn_protocol_names[q], pn_protocol_names[r], n) == 0);
		if (!skip)
			append(buf, len, &at, ", ", pn_protocol_names[r], (int)n);
	}
}

void pn_protocol_names_with(unsigned cap, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (unsigned r = 0; r < PN_PROTOCOL_COUNT; r++)
		if (pn_protocol_decls[r]->caps & cap)
			append(buf, len, &at, " or ", pn_protocol_names[r],
			       (int)strlen(pn_protocol_names[r]));
}

unsigned pn_protocol_key_refusal(const struct pn_scenario *sc, unsigned given, bool all_unread,
				 char *msg, size_t len)
{
	const struct pn_protocol_decl *d = pn_protocol_decl_of(sc);
	enum pn_protocol_id row = (enum pn_protocol_id)sc->protocol.row;
	const char *policy = pn_protocol_policy(row), *by = policy ? "policy" : "mode";
	policy = policy ? policy : pn_protocol_names[row];
	for (unsigned k = 0; k < PN_KEY_COUNT; k++) {
		unsigned bit = 1u << k;
		if (!(given & bit) || (d->keys & bit) || !(all_unread || (d->fixed & bit)))
			continue;
		if (d->fixed & bit)
			snprintf(msg, len, "protocol.%s is not read by %s %s (%s); remove it",
				 pn_protocol_key_names[k], by, policy, d->fixed_why);
		else
			snprintf(msg, len, "protocol.%s is not read by %s %s; remove it",
				 pn_protocol_key_names[k], by, policy);
		return bit;
	}
	if (d->generations_max && sc->protocol.generations > d->generations_max) {
		snprintf(msg, len, "protocol.generations is %u with %s %s; expected 2 to %u (%s)",
			 sc->protocol.generations, by, policy, d->generations_max, d->fixed_why);
		return PN_KEY_GENERATIONS;
	}
	if (d->interleaved_only && sc->protocol.layout != PN_LAYOUT_INTERLEAVED) {
		snprintf(msg, len,
			 "protocol.layout is striped with %s %s; expected interleaved (%s)", by,
			 policy, d->fixed_why);
		return PN_KEY_LAYOUT;
	}
	return 0;
}

/* The capability a script op needs (0: none). */
static unsigned cap_of(enum pn_op op)
{
	if (op == PN_OP_TRUNCATE)
		return PN_CAP_TRUNCATE;
	if (op == PN_OP_CHECKPOINT_EPOCH || op == PN_OP_UPDATE_HOLD || op == PN_OP_RELEASE)
		return PN_CAP_PUBLISH;
	return 0;
}

const struct pn_step *pn_protocol_refusal(const struct pn_scenario *sc, char *err, size_t len)
{
	const struct pn_protocol_decl *d = pn_protocol_decl_of(sc);
	for (uint32_t i = 0; sc->workload.kind == PN_WL_SCRIPT && i < sc->workload.script_len;
	     i++) {
		const struct pn_step *st = &sc->workload.script[i];
		unsigned need = cap_of(st->op);
		if (!need || (d->caps & need))
			continue;
		char rows[256];
		pn_protocol_names_with(need, rows, sizeof rows);
		snprintf(err, len,
			 "workload.script[%u] is op '%s', which needs protocol %s (%s does not "
			 "model it); expected such a protocol or another op",
			 i, pn_op_name(st->op), rows, pn_protocol_names[sc->protocol.row]);
		return st;
	}
	return NULL;
}
