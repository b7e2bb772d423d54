#!/bin/bash
# Writes the reward (1 when the check passes, else 0) to the file Harbor reads; the exit code is ignored.
if test "$(cat /app/wc.txt)" = "$(wc -w < /app/input.txt)"; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
