#!/usr/bin/env python3
"""Draws office.png and office.pgm (the same 20 m x 14 m office at 0.05 m a pixel: black walls on
white, as map_server's maps). Standard library only; run it to regenerate the shipped files."""
import struct
import zlib
from pathlib import Path

RES = 0.05
W, H = 400, 280  # pixels: 20 m x 14 m

img = [[255] * W for _ in range(H)]


def wall(x0, y0, x1, y1):
    """Fills the rectangle [x0, x1) x [y0, y1) in metres, y up from the bottom edge."""
    c0, c1 = round(x0 / RES), round(x1 / RES)
    r0, r1 = H - round(y1 / RES), H - round(y0 / RES)
    for r in range(max(r0, 0), min(r1, H)):
        for c in range(max(c0, 0), min(c1, W)):
            img[r][c] = 0


t = 0.2  # wall thickness
# Outer walls.
wall(0, 0, 20, t); wall(0, 14 - t, 20, 14); wall(0, 0, t, 14); wall(20 - t, 0, 20, 14)
# West offices: three rooms along x = 6 with 1 m doors.
wall(6, 0, 6 + t, 1.5); wall(6, 2.5, 6 + t, 6); wall(6, 7, 6 + t, 10.5); wall(6, 11.5, 6 + t, 14)
wall(0, 4.6, 6, 4.6 + t); wall(0, 9.4, 6, 9.4 + t)
# East meeting room with a 1.2 m door.
wall(14, 8, 14 + t, 14); wall(14, 8, 16.4, 8 + t); wall(17.6, 8, 20, 8 + t)
# Pillars in the hall.
for (x, y) in [(9, 4), (11, 4), (9, 10), (11, 10)]:
    wall(x, y, x + 0.4, y + 0.4)
# A slanted partition (a staircase of pixels) in the south-east.
for k in range(60):
    x = 15 + k * RES
    y = 1 + k * RES * 0.6
    wall(x, y, x + 0.15, y + 0.15)

here = Path(__file__).resolve().parent


def png(path, rows):
    raw = b"".join(b"\x00" + bytes(r) for r in rows)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    head = struct.pack(">IIBBBBB", W, H, 8, 0, 0, 0, 0)  # 8-bit greyscale
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


png(here / "office.png", img)
(here / "office.pgm").write_bytes(b"P5\n%d %d\n255\n" % (W, H) + b"".join(bytes(r) for r in img))
