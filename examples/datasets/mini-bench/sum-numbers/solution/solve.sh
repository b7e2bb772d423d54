#!/bin/bash
set -euo pipefail
paste -sd+ /app/numbers.txt | bc > /app/sum.txt
