#!/bin/bash
# Writes 1 to the reward file when the check passes, else 0 (Harbor ignores the exit code).
if test "$(bash /app/reverse.sh abc)" = cba; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
