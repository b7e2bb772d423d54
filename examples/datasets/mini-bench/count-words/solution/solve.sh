#!/bin/bash
set -euo pipefail
wc -w < /app/input.txt > /app/wc.txt
