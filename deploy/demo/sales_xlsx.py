#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the demo's input, sales.xlsx, to stdout: the spreadsheet a user
hands the agent in the first turn (region, month, sales). Standard
library only, so the host needs no spreadsheet package: an .xlsx is a zip
of a few XML parts. The sales add up to 48230.50."""
import io
import sys
import zipfile

ROWS = [
    ("North", "Jan", 4120.00), ("North", "Feb", 3985.50), ("North", "Mar", 4410.25),
    ("South", "Jan", 3650.75), ("South", "Feb", 3720.00), ("South", "Mar", 3899.50),
    ("East", "Jan", 4305.00), ("East", "Feb", 4188.25), ("East", "Mar", 4502.75),
    ("West", "Jan", 3815.00), ("West", "Feb", 3702.25), ("West", "Mar", 3931.25),
]


def cell(ref, v):
    if isinstance(v, str):
        return f'<c r="{ref}" t="inlineStr"><is><t>{v}</t></is></c>'
    return f'<c r="{ref}"><v>{v}</v></c>'


def sheet():
    rows = [("region", "month", "sales")] + ROWS
    xml = []
    for i, row in enumerate(rows, 1):
        cells = "".join(cell(f"{col}{i}", v) for col, v in zip("ABC", row))
        xml.append(f'<row r="{i}">{cells}</row>')
    return ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
            f'<sheetData>{"".join(xml)}</sheetData></worksheet>')


PARTS = {
    "[Content_Types].xml":
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
        '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
        '</Types>',
    "_rels/.rels":
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>'
        '</Relationships>',
    "xl/workbook.xml":
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
        'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
        '<sheets><sheet name="sales" sheetId="1" r:id="rId1"/></sheets></workbook>',
    "xl/_rels/workbook.xml.rels":
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>'
        '</Relationships>',
}

buf = io.BytesIO()
with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
    for name, text in PARTS.items():
        z.writestr(zipfile.ZipInfo(name, (2026, 1, 1, 0, 0, 0)), text)
    z.writestr(zipfile.ZipInfo("xl/worksheets/sheet1.xml", (2026, 1, 1, 0, 0, 0)), sheet())
sys.stdout.buffer.write(buf.getvalue())
