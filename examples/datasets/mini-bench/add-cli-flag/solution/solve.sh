#!/bin/bash
set -euo pipefail
sed -i 's/# FLAGS/parser.add_argument("--verbose", action="store_true")/' /app/cli.py
