#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: five-body orbit simulation, 100k steps of floating point (~1.5 s)
# task: simulate the outer planets' orbits for 100 years in python
# tool: python3 orbits.py --steps 100000
import math

b = [[0, 0, 0, 0, 0, 0, 39.47], [4.84, -1.16, -0.10, 0.60, 2.81, -0.02, 0.037],
     [8.34, 4.12, -0.40, -1.01, 1.82, 0.008, 0.011], [12.89, -15.11, -0.22, 1.08, 0.86, -0.01, 0.0017],
     [15.37, -25.91, 0.17, 0.97, 0.59, -0.03, 0.002]]
dt = 0.01
for _ in range(100000 // 10):
    for _ in range(10):
        for i in range(5):
            for j in range(i + 1, 5):
                dx, dy, dz = (b[i][k] - b[j][k] for k in range(3))
                d2 = dx * dx + dy * dy + dz * dz
                mag = dt / (d2 * math.sqrt(d2))
                for k, dk in enumerate((dx, dy, dz)):
                    b[i][3 + k] -= dk * b[j][6] * mag
                    b[j][3 + k] += dk * b[i][6] * mag
        for p in b:
            p[0] += dt * p[3]; p[1] += dt * p[4]; p[2] += dt * p[5]
print("x0 %.6f" % b[1][0])
