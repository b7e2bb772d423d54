#!/bin/bash
# Writes the reward (1 when the check passes, else 0) to the file Harbor reads; the exit code is ignored.
# Partial credit: the fraction of the cases in test_parse.py that pass.
python3 /tests/test_parse.py > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt
