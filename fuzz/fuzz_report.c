/*
 * fuzz_report.c: libFuzzer harness of `penumbra report`'s JSON inputs (cli/report_json.c and
 * the sections it hands a document to, cli/report_costs.c and cli/report_check.c, compiled in
 * here: cli/ is not built under PN_FUZZ).
 *
 * Any bytes go to pn_report_json() as the file "fuzz.json". It must return, never crash, leak,
 * hang or read out of bounds (ASan and UBSan), and:
 *   FR1. it returns 0 (a section drawn), 2 (refused) or PN_REP_NOT_JSON (left to the trace
 *        reader), and writes a refusal exactly when it returns 2: one line, "fuzz.json: KEY ..."
 *        or "fuzz.json:LINE:COL: ..." (LINE, COL >= 1);
 *   FR2. a section drawn holds no markup but the report's own: every element and attribute is
 *        one the report writes, no '<' or '>' inside a value or a text, every '&' starts a
 *        reference, and the whole is well-formed UTF-8 (report.h RP2, report_svg.h pn_rep_esc).
 * Build: cmake --preset fuzz; run: build-fuzz/fuzz/fuzz_report -dict=fuzz/report.dict
 * fuzz/corpus/report (fuzz/README.md).
 */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	pn_fuzz_init();
	return 0;
}

static const char *const elements[] = {"section",  "h2",     "h3",  "small", "p",    "b",
				       "code",     "table",  "tr",  "th",    "td",   "div",
				       "span",     "i",      "svg", "line",  "rect", "text",
				       "polyline", "circle", "a",   "ol",    "ul",   "li"};
static const char *const attributes[] =
	{"class",      "style",       "data-src",  "data-kind", "data-j",       "data-scale",
	 "data-tip",   "xmlns",       "width",     "height",    "viewBox",      "role",
	 "aria-label", "x",           "y",         "x1",        "y1",           "x2",
	 "y2",         "text-anchor", "transform", "stroke",    "stroke-width", "points",
	 "cx",         "cy",          "r",         "fill",      "id",           "href"};

static bool one_of(const char *s, size_t n, const char *const *names, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0)
			return true;
	return false;
}

static size_t name_len(const char *s)
{
	return strspn(s, "abcdefghijklmnopqrstuvwxyzBV0123456789-");
}

static void broken(const char *what, const char *page, const char *at)
{
	fprintf(stderr, "FR2: %s at byte %td of the page: %.80s\n", what, at - page, at);
	abort();
}

/* One tag at *p ('<'), moved past its '>'. */
static const char *tag(const char *page, const char *p)
{
	bool closing = p[1] == '/';
	const char *name = p + 1 + closing;
	size_t n = name_len(name);
	if (!one_of(name, n, elements, PN_ARRAY_LEN(elements)))
		broken("an element the report does not write", page, p);
	p = name + n;
	while (!closing && *p == ' ') {
		const char *attr = p + 1;
		size_t an = name_len(attr);
		if (!one_of(attr, an, attributes, PN_ARRAY_LEN(attributes)) ||
		    strncmp(attr + an, "=\"", 2) != 0)
			broken("an attribute the report does not write", page, attr);
		p = attr + an + 2;
		/* a link goes only to a section of the same page */
		if (an == 4 && strncmp(attr, "href", 4) == 0 && *p != '#')
			broken("a link out of the page", page, p);
		for (; *p != '"'; p++)
			if (*p == '<' || *p == '>' || *p == '\0')
				broken("'<' or '>' in an attribute value", page, p);
		p++;
	}
	if (*p == '/')
		p++;
	if (*p != '>')
		broken("a tag that does not end where the report ends its tags", page, p);
	return p + 1;
}

static void check_page(const char *page, size_t len)
{
	const char *p = page;
	if (strlen(page) != len)
		broken("a NUL byte", page, page + strlen(page));
	while (*p) {
		if (*p == '<')
			p = tag(page, p);
		else if (*p == '>')
			broken("'>' in text", page, p);
		else if (*p == '&' && strspn(p + 1, "abcdefghijklmnopqrstuvwxyz#0123456789") == 0)
			broken("'&' that starts no reference", page, p);
		else
			p++;
	}
	for (const unsigned char *u = (const unsigned char *)page; *u;) {
		int n = *u < 0x80                  ? 1
			: *u >= 0xc2 && *u <= 0xdf ? 2
			: *u >= 0xe0 && *u <= 0xef ? 3
			: *u >= 0xf0 && *u <= 0xf4 ? 4
						   : 0;
		for (int i = 1; i < n; i++)
			if ((u[i] & 0xc0) != 0x80)
				n = 0;
		if (n == 0)
			broken("a byte that is not UTF-8", page, (const char *)u);
		u += n;
	}
}

/* FR1: exactly one line, "fuzz.json: ..." or "fuzz.json:LINE:COL: ...". */
static void check_refusal(const char *err, size_t len)
{
	const char *rest = err + strlen("fuzz.json:");
	if (strncmp(err, "fuzz.json:", strlen("fuzz.json:")) == 0 && rest[0] == ' ' && len > 0 &&
	    strchr(err, '\n') == err + len - 1) {
		return;
	}
	if (strchr(err, '\n') == err + len - 1) {
		char *one = strndup(err, len - 1);
		pn_fuzz_check_message(one, "fuzz.json");
		free(one);
		return;
	}
	fprintf(stderr, "FR1: a refusal that is not one line: '%s'\n", err);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *page = NULL, *err = NULL;
	size_t page_len = 0, err_len = 0;
	FILE *pf = open_memstream(&page, &page_len), *ef = open_memstream(&err, &err_len);
	PN_ASSERT(pf != NULL && ef != NULL);
	struct pn_rep_in in = {.path = "fuzz.json", .src = 0, .err = ef};
	int rc = pn_report_json(pf, &in, (const char *)data, size);
	PN_ASSERT(fclose(pf) == 0 && fclose(ef) == 0);
	if (rc != 0 && rc != 2 && rc != PN_REP_NOT_JSON) {
		fprintf(stderr, "FR1: pn_report_json returned %d\n", rc);
		abort();
	}
	if (rc == 2)
		check_refusal(err, err_len);
	else if (err_len != 0) {
		fprintf(stderr, "FR1: returned %d with a message: '%s'\n", rc, err);
		abort();
	}
	if (rc == 0)
		check_page(page, page_len);
	free(page);
	free(err);
	return 0;
}
