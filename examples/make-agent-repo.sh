#!/usr/bin/env bash
# Creates the example agent repo: a git repo with two candidate commits, tagged `baseline` and `improved`.
# Commit dates and authors are fixed, so the commit shas are the same on every machine.
# harbor-standin-agent.json tells the Harbor stand-in which tasks this version of the agent solves
# (test/harbor-standin/README.md); with real Harbor, agent.py would do the work.
set -euo pipefail
dest="${1:?usage: make-agent-repo.sh DEST_DIR}"
if [ -d "$dest/.git" ]; then echo "$dest"; exit 0; fi
mkdir -p "$dest"
cd "$dest"
export GIT_AUTHOR_NAME="Example Optimizer" GIT_AUTHOR_EMAIL="optimizer@example.invalid"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
git init -q -b main .
git config commit.gpgsign false

cat > agent.py <<'PY'
"""A minimal Harbor agent (harbor.agents.base.BaseAgent import path: agent:MiniAgent)."""


class MiniAgent:
    SYSTEM_PROMPT = "Solve the task in /app. Be brief."

    @staticmethod
    def name() -> str:
        return "mini-agent"
PY
cat > infer.py <<'PY'
"""Mode A inference: reads {"id", "inputs"} rows as JSON lines on stdin, writes {"id", "output"} rows."""
import json
import sys

OPS = {"+": lambda a, b: a + b}


def answer(question: str) -> str:
    for op, fn in OPS.items():
        if op in question:
            a, b = (int(x) for x in question.split(op))
            return str(fn(a, b))
    return ""


for line in sys.stdin:
    row = json.loads(line)
    print(json.dumps({"id": row["id"], "output": answer(row["inputs"]["question"])}))
PY
cat > harbor-standin-agent.json <<'JSON'
{
  "solves": ["hello-world", "count-words"],
  "partial": {},
  "duration_ms": 20
}
JSON
git add -A
GIT_AUTHOR_DATE="2026-11-01T10:00:00Z" GIT_COMMITTER_DATE="2026-11-01T10:00:00Z" git commit -q -m "baseline agent"
git tag baseline

sed -i 's/Be brief./Read the tests first, then be brief./' agent.py
sed -i 's/OPS = {"+": lambda a, b: a + b}/OPS = {"+": lambda a, b: a + b, "*": lambda a, b: a * b}/' infer.py
cat > harbor-standin-agent.json <<'JSON'
{
  "solves": ["hello-world", "count-words", "reverse-string", "sum-numbers"],
  "partial": { "fix-csv-parser": 0.5 },
  "duration_ms": 20
}
JSON
git add -A
GIT_AUTHOR_DATE="2026-11-02T10:00:00Z" GIT_COMMITTER_DATE="2026-11-02T10:00:00Z" git commit -q -m "read the tests before acting"
git tag improved
echo "$dest"
