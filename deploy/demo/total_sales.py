# SPDX-License-Identifier: Apache-2.0
# Turn 1, in the sandbox: read the Excel file and total the sales.
import pandas as pd

df = pd.read_excel("sales.xlsx")
print(df.groupby("region", sort=False)["sales"].sum().to_string())
print(f"total sales: {df['sales'].sum():.2f}")
