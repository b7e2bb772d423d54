#!/bin/bash
# Writes the reward (1 when the check passes, else 0) to the file Harbor reads; the exit code is ignored.
if test "$(bash /app/reverse.sh abc)" = cba && test "$(bash /app/reverse.sh "a b")" = "b a"; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
