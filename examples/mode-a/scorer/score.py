"""The trusted Mode A scorer, baked into the eval sidecar only.

Reads JSON lines {"id", "output", "labels"} on stdin; writes {"id", "score", "metrics"} lines.
"""
import json
import sys

for line in sys.stdin:
    row = json.loads(line)
    correct = str(row.get("output", "")).strip() == str(row["labels"]["answer"]).strip()
    print(json.dumps({"id": row["id"], "score": 1.0 if correct else 0.0, "metrics": {"exact_match": float(correct)}}))
