# SPDX-License-Identifier: Apache-2.0
# Turn 2, in the same sandbox: a bar chart of that data, and a small web
# page that shows it (turn 3 checks the page in a browser).
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

df = pd.read_excel("sales.xlsx")
by_region = df.groupby("region", sort=False)["sales"].sum()
ax = by_region.plot.bar(color="#4c72b0", title="Sales by region")
ax.set_ylabel("sales")
plt.tight_layout()
plt.savefig("sales_by_region.png", dpi=80)
total = df["sales"].sum()
with open("report.html", "w") as f:
    f.write("<html><head><title>Sales report</title></head><body>"
            f"<h1>Total sales: {total:.2f}</h1>"
            '<img id="chart" src="sales_by_region.png"></body></html>')
print(f"wrote sales_by_region.png ({os.path.getsize('sales_by_region.png')} bytes) and report.html")
