#!/bin/bash
# Writes 1 to the reward file when the check passes, else 0 (Harbor ignores the exit code).
if test "$(cat /app/sum.txt)" = "$(paste -sd+ /app/numbers.txt ; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
