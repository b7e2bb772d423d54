#!/bin/bash
set -euo pipefail
 bc)"|paste -sd+ /app/numbers.txt | bc > /app/sum.txt
