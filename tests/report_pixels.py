#!/usr/bin/env python3
"""report_pixels.py: a few pixels of a report as Chromium drew it (CTest report_items).

Usage: report_pixels.py SHOT.png TARGETS.json KIND...

TARGETS.json is what report_items.sh's pixel probe found on the page, laid out at the
screenshot's size: {"targets": [{"kind", "what", "x", "y", "color"}...]}, each a point in
CSS pixels (the device pixel ratio is 1) where the page's markup says a colour is drawn: the
middle of a legend swatch (its style's background), of a bar (its fill) that nothing covers,
of a line's segment (its stroke) away from its points. Each must be that colour in the
screenshot: within 40 of each channel at the point or a pixel next to it (a line is
anti-aliased). Each KIND named ("costs", "check", "trace") must have at least two targets,
one of them in an SVG. Prints one line per target; exit 0 when all hold, 1 otherwise.
"""
import json
import struct
import sys
import zlib


def png_rgb(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB or RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, prev, rows = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
    for y in range(h):
        ftype, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


def rgb(color):
    c = color.strip().lstrip("#")
    if len(c) == 3:
        c = "".join(ch * 2 for ch in c)
    return tuple(int(c[i:i + 2], 16) for i in (0, 2, 4))


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    w, h, rows = png_rgb(sys.argv[1])
    with open(sys.argv[2], encoding="utf-8") as f:
        targets = json.load(f)["targets"]
    bad, seen = 0, {}
    for t in targets:
        want, x, y = rgb(t["color"]), round(t["x"] - 0.5), round(t["y"] - 0.5)
        near = [rows[j][i] for j in range(y - 1, y + 2) for i in range(x - 1, x + 2)
                if 0 <= i < w and 0 <= j < h]
        best = min(near, key=lambda p: max(abs(p[k] - want[k]) for k in range(3))) if near else None
        ok = best is not None and max(abs(best[k] - want[k]) for k in range(3)) <= 40
        got = "#%02x%02x%02x" % best if best else "off the screenshot"
        print(f"{'ok  ' if ok else 'FAIL'} {t['kind']}: {t['what']} at ({x},{y}): "
              f"{t['color']} expected, {got} drawn")
        bad += not ok
        if ok:
            s = seen.setdefault(t["kind"], [0, 0])
            s[0] += 1
            s[1] += t["what"].split()[0] in ("bar", "line")
    for kind in sys.argv[3:]:
        n, svg = seen.get(kind, [0, 0])
        print(f"kind {kind}: {n} pixels as the markup says, {svg} of them in SVGs")
        if n < 2 or svg < 1:
            print(f"FAIL {kind}: {n} pixels as expected, {svg} of them in an SVG; expected "
                  "at least 2, 1")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
