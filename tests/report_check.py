#!/usr/bin/env python3
"""report_check.py: the structural test of `penumbra report` (CTest report_cli, label cli).

Usage: report_check.py REPORT.html SOURCE.json...

SOURCE i is what the report's input i says: the run/compare or check JSON itself, or for a
trace the output of `penumbra replay TRACE --json` (its section has data-json="replay").
Every element with a data-j path is a number the page shows; each must equal the source's
value at that path (integers exactly, reals to the digits shown, "-" for null). Also: every
section has numbers and non-empty SVGs, each run's and scenario's key figures are among
those shown, and the page refers to nothing outside itself. Exit 0 ok, 1 with the reasons.
"""
import html.parser
import json
import math
import re
import sys


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.src = None           # data-src of the enclosing section
        self.kind = None
        self.sections = []        # (src, kind)
        self.nums = []            # [src, path, scale, text]
        self.open = None          # (tag, record) of the data-j element being read
        self.svgs = []            # [src, drawn elements]
        self.external = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("src", "href"):
            if k in a and not (k == "href" and re.fullmatch(r"#[a-z]+-\d+", a[k])):
                self.external.append(f"<{tag} {k}={a[k]!r}>")  # a link inside the page is not
        if tag == "link":
            self.external.append("<link>")
        if tag == "section":
            self.src, self.kind = int(a["data-src"]), a.get("data-kind")
            self.sections.append((self.src, self.kind))
        if tag == "svg":
            self.svgs.append([self.src, 0])
        elif self.svgs and tag in ("rect", "polyline", "circle", "line") and "frame" not in a.get("class", ""):
            if a.get("class") != "grid":
                self.svgs[-1][1] += 1
        if "data-j" in a:
            rec = [self.src, a["data-j"], float(a.get("data-scale", "1")), ""]
            self.nums.append(rec)
            self.open = (tag, rec)

    def handle_endtag(self, tag):
        if self.open and tag == self.open[0]:
            self.open = None

    def handle_data(self, data):
        if self.open:
            self.open[1][3] += data


def resolve(doc, path):
    for key, idx in re.findall(r'\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]', path):
        if doc is None:
            return None
        doc = doc.get(key) if key else (doc[int(idx)] if int(idx) < len(doc) else None)
    return doc


def matches(text, value, scale):
    text = text.strip()
    if text == "-":
        return value is None
    if value is None or isinstance(value, bool):
        return False
    t = text.replace(",", "")
    if re.fullmatch(r"\d+", t) and scale == 1 and isinstance(value, int):
        return int(t) == value
    shown = float(t)
    m = re.fullmatch(r"-?(\d*)\.?(\d*)(e[-+]?\d+)?", t)
    digits = len((m.group(1) + m.group(2)).lstrip("0")) or 1
    v = value / scale
    if v == 0:
        return shown == 0
    tol = 0.5 * 10 ** (math.floor(math.log10(abs(v))) - digits + 1)
    return abs(shown - v) <= tol * 1.0001


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    sources = []
    for p in sys.argv[2:]:
        with open(p, encoding="utf-8") as f:
            sources.append(json.load(f))
    page = Page()
    page.feed(text)
    bad = []
    if page.external or re.search(r"url\(|@import|https?://(?!www\.w3\.org/2000/svg)", text):
        bad.append(f"the page refers outside itself: {page.external[:3]}")
    if len(page.sections) != len(sources):
        bad.append(f"{len(page.sections)} sections for {len(sources)} sources")
    checked = {}
    for src, path, scale, shown in page.nums:
        value = resolve(sources[src], path)
        checked.setdefault(src, set()).add(path)
        if not matches(shown, value, scale):
            bad.append(f"input {src}: {path} shows {shown.strip()!r} (scale {scale:g}), the JSON has {value!r}")
    for src, kind in page.sections:
        doc = sources[src]
        want = []
        if kind == "costs":
            for i, r in enumerate(doc["results"]):
                if r.get("wal_bytes") is not None:
                    want += [f".results[{i}].{k}" for k in ("wal_bytes", "fpi_bytes", "fsyncs",
                             "data_bytes_written", "space_amplification", "read_runs")]
        elif kind == "check":
            want += [f".scenarios[{i}].crash_states" for i in range(len(doc["scenarios"]))]
            if "coverage" in doc:
                want += [f".coverage.markers[{i}].true" for i in range(len(doc["coverage"]["markers"]))]
        elif kind == "trace":
            want += [".crash_point", ".schedule"] + ([".page"] if doc.get("reproduced") else [])
        missing = [w for w in want if w not in checked.get(src, set())]
        if not want or missing:
            bad.append(f"input {src} ({kind}): not shown: {missing[:5] or 'nothing expected'}")
        svgs = [n for s, n in page.svgs if s == src]
        if not svgs or min(svgs) == 0:
            bad.append(f"input {src} ({kind}): an empty SVG (drawn elements per SVG: {svgs})")
    for b in bad:
        print("report_check:", b, file=sys.stderr)
    print(f"report_check: {len(page.nums)} numbers in {len(page.sections)} sections, "
          f"{len(page.svgs)} SVGs: {'ok' if not bad else 'FAILED'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
