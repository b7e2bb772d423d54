"""Prints the fraction of cases that /app/parse.py gets right (the task's reward)."""
import sys

sys.path.insert(0, "/app")
CASES = [("a,b,c", ["a", "b", "c"]), ('x,"y,z"', ["x", "y,z"])]
passed = 0
for line, expected in CASES:
    try:
        from parse import parse

        passed += parse(line) == expected
    except Exception:
        pass
print(passed / len(CASES))
