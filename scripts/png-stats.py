#!/usr/bin/env python3
"""png-stats.py FILE: what a PNG screenshot shows, as JSON on stdout.

Decodes an 8-bit RGB or RGBA PNG (what Chromium's --screenshot writes)
with zlib alone and prints its width, height, the number of distinct
colours and the share of pixels that differ from the most common one (the
background): enough to tell a drawn page from a blank one; and the shares
of clearly red and clearly blue pixels (a differential flame graph's
growth and shrinkage).
"""
import json
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("png-stats: %s is not a PNG" % path)
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                sys.exit("png-stats: only 8-bit RGB/RGBA without interlace")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def main():
    width, height, bpp, rows = decode(sys.argv[1])
    counts = {}
    for line in rows:
        for x in range(0, len(line), bpp):
            px = line[x:x + 3]
            counts[px] = counts.get(px, 0) + 1
    background = max(counts.values())
    red = sum(c for px, c in counts.items() if px[0] > px[1] + 40 and px[0] > px[2] + 40)
    blue = sum(c for px, c in counts.items() if px[2] > px[0] + 40 and px[2] > px[1] + 20)
    area = width * height
    print(json.dumps({"width": width, "height": height, "colours": len(counts),
                      "drawn_share": 1 - background / area,
                      "red_share": red / area, "blue_share": blue / area}))


main()
