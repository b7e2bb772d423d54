#!/bin/bash
set -euo pipefail
sed -i 's/line.split(",")/next(csv.reader([line]))/' /app/parse.py
