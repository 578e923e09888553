#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: renders a 640x400 Mandelbrot set to a PGM file in /tmp (~1 s)
# task: draw the Mandelbrot set as an image with a python script
# tool: python3 mandel.py > /tmp/m.pgm
w, h, it = 640, 400, 80
rows = []
for y in range(h):
    row = bytearray(w)
    for x in range(w):
        c = complex(-2.2 + 3.2 * x / w, -1.2 + 2.4 * y / h)
        z, n = 0j, 0
        while abs(z) < 2 and n < it:
            z, n = z * z + c, n + 1
        row[x] = 255 * n // it
    rows.append(bytes(row))
with open("/tmp/m.pgm", "wb") as f:
    f.write(b"P5 %d %d 255\n" % (w, h) + b"".join(rows))
print("inside", sum(r.count(255) for r in rows))
