#!/usr/bin/env python3
"""report_markup.py: the HTML-injection half of tests/report_hostile.sh.

  report_markup.py inject IN.json OUT.json    every string of IN (values at any depth, and the
                                              keys of "records", which the report draws)
                                              gets a payload of live markup appended, each
                                              its own number: <svg onload=alert(N)>"'&
  report_markup.py inject-yaml IN.yaml OUT.yaml   the same for a trace's name and description
  report_markup.py check PAGE.html N...       the page has no markup but the report's own
                                              (known elements and attributes, no on* handler,
                                              no javascript: URL), is well-formed UTF-8,
                                              and payload N appears,
                                              escaped, for every N given

Exits 0 when the check holds, 1 (printing what broke) otherwise.
"""
import html.parser
import json
import re
import sys

PAYLOAD = "<svg onload=alert({})>\"'&"

# What the report writes itself (cli/report_svg.c and the sections); anything else is markup
# that came from an input.
TAGS = {"html", "head", "meta", "title", "style", "body", "div", "h1", "h2", "h3", "p", "code",
        "small", "table", "tr", "th", "td", "section", "svg", "line", "rect", "text", "polyline",
        "circle", "span", "i", "b", "pre", "script", "ol", "ul", "li", "a"}
ATTRS = {"lang", "charset", "name", "content", "class", "style", "id", "data-src", "data-kind",
         "data-json", "data-j", "data-scale", "data-tip", "xmlns", "width", "height", "viewbox",
         "role", "aria-label", "x", "y", "x1", "y1", "x2", "y2", "text-anchor", "transform",
         "stroke", "stroke-width", "points", "cx", "cy", "r", "fill", "href"}


class Counter:
    def __init__(self):
        self.n = 0
        self.where = {}

    def next(self, where):
        self.n += 1
        self.where[self.n] = where
        return PAYLOAD.format(self.n)


def inject(v, c, where):
    if isinstance(v, str):
        return v + c.next(where)
    if isinstance(v, list):
        return [inject(x, c, f"{where}[{i}]") for i, x in enumerate(v)]
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            key = k + c.next(f"{where}.{k} (key)") if where.endswith(".records") else k
            out[key] = inject(x, c, f"{where}.{k}")
        return out
    return v


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.bad = []

    def handle_starttag(self, tag, attrs):
        if tag not in TAGS:
            self.bad.append(f"element <{tag}>")
        for name, value in attrs:
            if name not in ATTRS or name.startswith("on"):
                self.bad.append(f"attribute {name}= in <{tag}>")
            if value and re.search(r"^\s*javascript:", value, re.I):
                self.bad.append(f"a javascript: URL in <{tag} {name}>")
            if name == "href" and not re.fullmatch(r"#[a-z]+-\d+", value or ""):
                self.bad.append(f"a link out of the page in <{tag} href={value!r}>")

    handle_startendtag = handle_starttag


def check(page, wanted):
    try:
        text = open(page, encoding="utf-8").read()
    except UnicodeDecodeError as e:
        print(f"{page}: not UTF-8: {e}")
        return 1
    p = Page()
    p.feed(text)
    p.close()
    for b in p.bad:
        print(f"{page}: live markup from an input: {b}")
    missing = [n for n in wanted
               if f"&lt;svg onload=alert({n})&gt;" not in text]
    for n in missing:
        print(f"{page}: payload {n} is not on the page (escaped)")
    return 1 if p.bad or missing else 0


def main(argv):
    if len(argv) >= 4 and argv[1] == "inject":
        c = Counter()
        doc = json.load(open(argv[2], encoding="utf-8"))
        json.dump(inject(doc, c, ""), open(argv[3], "w", encoding="utf-8"), indent=1)
        for n, where in c.where.items():
            print(n, where)
        return 0
    if len(argv) >= 4 and argv[1] == "inject-yaml":
        out = []
        n = 0
        for line in open(argv[2], encoding="utf-8"):
            m = re.match(r'^(name|description): "(.*)"$', line)
            if m:
                n += 1
                value = json.loads(f'"{m[2]}"') + PAYLOAD.format(n)
                line = f"{m[1]}: {json.dumps(value)}\n"  # a JSON string is YAML too
                print(n, m[1])
            out.append(line)
        open(argv[3], "w", encoding="utf-8").write("".join(out))
        return 0
    if len(argv) >= 3 and argv[1] == "check":
        return check(argv[2], argv[3:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
