#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# does: writes 200 files of 512 KiB to /tmp (tmpfs: charged to memory) and sha256s them
# task: checksum every file in the upload folder with a python script
# tool: python3 checksum.py /tmp/up
import hashlib
import os

os.makedirs("/tmp/up", exist_ok=True)
for i in range(200):
    with open("/tmp/up/f%03d" % i, "wb") as f:
        f.write(os.urandom(4096) * 128)
digest = hashlib.sha256()
for name in sorted(os.listdir("/tmp/up")):
    with open("/tmp/up/" + name, "rb") as f:
        digest.update(hashlib.sha256(f.read()).digest())
print(digest.hexdigest()[:16])
