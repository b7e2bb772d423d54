#!/bin/bash
set -euo pipefail
cat > /app/parse.py <<'PY'
import csv


def parse(line):
    return next(csv.reader([line]))
PY
