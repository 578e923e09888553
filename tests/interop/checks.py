# SPDX-License-Identifier: Apache-2.0
"""What the interop tests share: named checks that print ok or FAIL and
are counted, and the summary line and exit status at the end."""

_count = 0
_failures = 0


def check(name, cond, detail=""):
    global _count, _failures
    _count += 1
    if not cond:
        _failures += 1
        print(f"FAIL {name} {detail}")
    else:
        print(f"ok   {name}")


def summary():
    """Prints the counts; the exit status (1 if any check failed)."""
    print(f"{_count - _failures} passed, {_failures} failed")
    return 1 if _failures else 0
