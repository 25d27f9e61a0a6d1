/*
 * load.c: the YAML scenario loader (scenario layer; the only user of libyaml, with the
 * load_*.c files it is made of). Reads a file or a string, walks libyaml's event stream
 * against the schema tables, fills a struct pn_scenario, then checks the relations between
 * keys (a script's pages below storage.pages, sector_size <= page_size, ...). The format is
 * docs/scenarios.md; defaults are in src/base/scenario.c, the scalar parsers in parse.c.
 *
 * The parts, in reading order (their private header is loader.h):
 *   load.c           the entry points, the file, the passes, the relations between sections
 *   load_yaml.c      messages and positions, libyaml's events, the first pass (LD1, LD3)
 *   load_schema.c    the schema tables, scalar values, mappings, the document (LD2)
 *   load_workload.c  workload.script, and what the engine can run (LD6)
 *   load_sections.c  protocol, crash, expect values; protocol, schedules, replay relations
 *
 * Rules it keeps (LD1-LD3 and LD6 are stated in the files above):
 *   LD4 Everything allocated (script steps, crash points) belongs to the scenario; on
 *       failure pn_scenario_free() has released it before the loader returns. Input echoed
 *       in a message is cut to SHOW_MAX bytes with control characters replaced
 *       (load_show()).
 *   LD5 Only a regular file is read (opened O_NONBLOCK, so a FIFO cannot block); inputs
 *       above MAX_FILE_BYTES, UTF-16/32 and a byte-order mark past the start
 *       (load_check_encoding()) are refused before parsing.
 */
#include "files.h"
#include "load.h"
#include "load_schema.h"
#include "load_sections.h"
#include "load_walk.h"
#include "load_workload.h"
#include "load_yaml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool validate(struct loader *L)
{
	const struct pn_scenario *s = L->s;
	char a[32], b[32];

	if (!load_given(L, s->name, NULL))
		return load_fail(
			L, L->top,
			"missing required key 'name'; expected name: <scenario name> at the top level");
	if (s->storage.sector_size > s->storage.page_size)
		return load_fail(
			L, load_mark_of(L, &s->storage.sector_size, &s->storage.page_size),
			"storage.sector_size (%u) is larger than storage.page_size (%u); expected a power of two that divides page_size",
			s->storage.sector_size, s->storage.page_size);
	if (load_given(L, &s->crash.atomic_unit, NULL) &&
	    (s->crash.atomic_unit < s->storage.sector_size ||
	     s->crash.atomic_unit > s->storage.page_size))
		return load_fail(
			L, load_mark_of(L, &s->crash.atomic_unit, &s->storage.page_size),
			"crash.atomic_unit (%u) is not between storage.sector_size (%u) and storage.page_size (%u); expected a power of two from the sector to the page",
			s->crash.atomic_unit, s->storage.sector_size, s->storage.page_size);
	if (s->workload.pages_per_transaction > s->storage.pages)
		return load_fail(
			L, load_mark_of(L, &s->workload.pages_per_transaction, &s->storage.pages),
			"workload.pages_per_transaction (%u) is more than storage.pages (%u); expected at most storage.pages",
			s->workload.pages_per_transaction, s->storage.pages);
	if (s->checkpoint.max_wal_size != 0 &&
	    s->checkpoint.max_wal_size / 2 < s->storage.wal_segment_size) {
		load_format_size(a, sizeof a, s->checkpoint.max_wal_size);
		load_format_size(b, sizeof b, 2ull * s->storage.wal_segment_size);
		return load_fail(
			L,
			load_mark_of(L, &s->checkpoint.max_wal_size, &s->storage.wal_segment_size),
			"checkpoint.max_wal_size (%s) is less than two WAL segments; expected 0 (off) or at least %s",
			a, b);
	}
	if (s->replay.present && s->replay.schedule >= s->schedules.runs)
		return load_fail(
			L, load_mark_of(L, &s->replay.schedule, &s->schedules.runs),
			"replay.schedule (%u) is not below schedules.runs (%u); expected a schedule number from 0 to %u",
			s->replay.schedule, s->schedules.runs, s->schedules.runs - 1);
	return load_validate_protocol(L) && load_validate_schedules(L) && load_validate_replay(L) &&
	       load_validate_script(L) && load_validate_engine(L) && load_key_positions(L);
}

/* One walk over the input with a fresh parser. */
static bool run_pass(struct loader *L, bool (*pass)(struct loader *L))
{
	bool ok;

	if (!yaml_parser_initialize(&L->parser))
		return load_fail_at(L, 1, 1, "out of memory");
	yaml_parser_set_encoding(&L->parser, YAML_UTF8_ENCODING);
	yaml_parser_set_input_string(&L->parser, (const unsigned char *)L->text, L->len);
	ok = pass(L);
	PN_ASSERT(ok != L->failed); /* LD1: a pass fails only through a message */
	if (L->has_ev)
		yaml_event_delete(&L->ev);
	L->has_ev = false;
	yaml_parser_delete(&L->parser);
	return ok;
}

bool pn_scenario_load_string(const char *name, const char *text, size_t len,
			     struct pn_scenario *out, char *err, size_t err_len)
{
	struct loader L;
	bool ok;

	pn_scenario_defaults(out);
	if (err && err_len)
		err[0] = '\0';
	name = name ? name : "<string>";
	text = text ? text : "";
	snprintf(out->path, sizeof out->path, "%s", name);
	if (len > MAX_FILE_BYTES)
		return load_message(err, err_len, name, 1, 1,
				    "the file is %zu bytes; expected a scenario of at most 16 MiB",
				    len);
	memset(&L, 0, sizeof L);
	L.name = name;
	L.text = text;
	L.len = len;
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
		L.text += 3; /* a UTF-8 byte-order mark: libyaml skips it only when it guesses */
		L.len -= 3;
	}
	L.s = out;
	L.err = err;
	L.err_len = err_len;
	ok = load_check_encoding(&L) && run_pass(&L, load_check_syntax) &&
	     run_pass(&L, load_document) && validate(&L);
	PN_ASSERT(ok != L.failed);
	if (!ok)
		pn_scenario_free(out); /* LD4 */
	PN_ASSERT(ok || (out->workload.script == NULL && out->crash.list == NULL));
	return ok;
}

/*
 * Reads a whole regular file of at most MAX_FILE_BYTES, opened by pn_file_open_in (files.h
 * F1: anything but a regular file is refused before a byte is read; a FIFO, a terminal or
 * a device could block or never end). Returns 0, an errno, or -1 when too large; `why`
 * says what is wrong with a file that could not be opened (errno EINVAL).
 */
static int read_file(const char *path, char **out, size_t *out_len, char *why, size_t why_len)
{
	struct stat st;
	size_t cap, len = 0;
	char *buf = NULL;
	int e = 0, fd = pn_file_open_in(path, "a regular scenario file", why, why_len);

	if (fd < 0)
		return EINVAL;
	if (fstat(fd, &st) != 0) {
		e = errno;
		goto out;
	}
	if (st.st_size > (off_t)MAX_FILE_BYTES) {
		e = -1;
		goto out;
	}
	/* one byte more than the size: a file that grows past MAX_FILE_BYTES is seen to */
	cap = PN_MIN((size_t)st.st_size + 1, (size_t)MAX_FILE_BYTES + 1);
	for (;;) {
		ssize_t n;
		if (!buf || len == cap) {
			char *p;
			if (len > MAX_FILE_BYTES) {
				e = -1;
				goto out;
			}
			cap = buf ? PN_MIN(cap * 2, (size_t)MAX_FILE_BYTES + 1) : cap;
			p = realloc(buf, cap);
			if (!p) {
				e = ENOMEM;
				goto out;
			}
			buf = p;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > MAX_FILE_BYTES)
		e = -1;
out:
	close(fd);
	if (e) {
		free(buf);
		return e;
	}
	PN_ASSERT(len <= MAX_FILE_BYTES && (buf != NULL || len == 0)); /* LD5 */
	*out = buf;
	*out_len = len;
	return 0;
}

bool pn_scenario_load(const char *path, struct pn_scenario *out, char *err, size_t err_len)
{
	char *text = NULL, why[PN_ERROR_LEN / 2] = "";
	size_t len = 0;
	int e;
	bool ok;

	pn_scenario_defaults(out);
	if (err && err_len)
		err[0] = '\0';
	if (!path)
		return load_message(err, err_len, "<none>", 1, 1,
				    "cannot read: no file name given");
	e = read_file(path, &text, &len, why, sizeof why);
	if (why[0])
		return load_message(err, err_len, path, 1, 1, "cannot read: %s", why);
	if (e == -1)
		return load_message(
			err, err_len, path, 1, 1,
			"the file is larger than 16 MiB; expected a scenario of at most 16 MiB");
	if (e)
		return load_message(err, err_len, path, 1, 1, "cannot read: %s", strerror(e));
	ok = pn_scenario_load_string(path, text, len, out, err, err_len);
	free(text);
	return ok;
}
