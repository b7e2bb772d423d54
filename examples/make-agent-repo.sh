#!/usr/bin/env bash
# Creates the example agent repo: a git repo with two candidate commits, tagged `baseline` and `improved`.
# Commit dates and authors are fixed, so the commit shas are the same on every machine.
#
# agent.py is a real Harbor agent (`-a agent:SkillAgent`, a BaseAgent subclass for Harbor 0.25) that needs no
# model: for each task it runs, inside the task's environment, the first script of skills/ whose `# when:`
# pattern matches the instruction. The candidates differ only in their skills, so they solve different tasks
# for real. harbor-standin-agent.json says the same thing to the Harbor stand-in, which cannot run Python
# agents (harbor-standin/README.md); the conformance tests keep the two in step.
set -euo pipefail
dest="${1:?usage: make-agent-repo.sh DEST_DIR}"
if [ -d "$dest/.git" ]; then echo "$dest"; exit 0; fi
mkdir -p "$dest/skills"
cd "$dest"
export GIT_AUTHOR_NAME="Example Optimizer" GIT_AUTHOR_EMAIL="optimizer@example.invalid"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
git init -q -b main .
git config commit.gpgsign false

cat > agent.py <<'PY'
"""A model-free Harbor agent: runs the first skill (skills/*.sh) whose `# when:` regex matches the instruction."""
import re
from pathlib import Path

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

SKILLS = Path(__file__).resolve().parent / "skills"


class SkillAgent(BaseAgent):
    @staticmethod
    def name() -> str:
        return "skill-agent"

    def version(self) -> str:
        return "1.0.0"

    async def setup(self, environment: BaseEnvironment) -> None:
        return

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        log = self.logs_dir / "skill-agent.txt"
        for skill in sorted(SKILLS.glob("*.sh")):
            when = re.search(r"^# when: (.+)$", skill.read_text(), re.MULTILINE)
            if when and re.search(when.group(1), instruction):
                await environment.upload_file(skill, "/tmp/skill.sh")
                result = await environment.exec("bash /tmp/skill.sh")
                log.write_text(f"skill {skill.name}: exit {result.return_code}\n{result.stdout or ''}{result.stderr or ''}")
                return
        log.write_text("no skill matches this instruction\n")
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
cat > skills/hello.sh <<'SH'
# when: hello\.txt
echo 'Hello, world!' > /app/hello.txt
SH
cat > skills/count-words.sh <<'SH'
# when: number of words
wc -w < /app/input.txt > /app/wc.txt
SH
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

sed -i 's/OPS = {"+": lambda a, b: a + b}/OPS = {"+": lambda a, b: a + b, "*": lambda a, b: a * b}/' infer.py
cat > skills/reverse.sh <<'SH'
# when: reversed
cat > /app/reverse.sh <<'EOS'
#!/bin/bash
s="$1" r=''
for ((i = ${#s} - 1; i >= 0; i--)); do r+="${s:i:1}"; done
echo "$r"
EOS
SH
cat > skills/sum.sh <<'SH'
# when: sum of the numbers
paste -sd+ /app/numbers.txt | bc > /app/sum.txt
SH
cat > skills/csv.sh <<'SH'
# when: CSV line
# Splits on every comma: right for plain fields, wrong for quoted ones (half the cases).
printf 'def parse(line):\n    return line.split(",")\n' > /app/parse.py
SH
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
