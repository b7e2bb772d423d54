"""A model-free optimizer for a compiled vero task (`vero build`), for Harbor 0.25.

It acts in the task's `main` container the way a real optimizer does, with the tools the instruction names:
it edits the agent repo (applies improvement.patch, the example's improvement), commits, spends eval budget on
the viewable split and reads the per-case results, evaluates on the selection split, and stops. The verifier
then rewards the candidate the sidecar chooses.

    PYTHONPATH=examples/optimizer harbor run -p <compiled task> \
        --agent-import-path optimizer_agent:ExampleOptimizer -e docker

With `--ak crash_after_selection=true` it raises after its evaluations (a trial that dies before its verifier:
what the sidecar recorded must survive as the trial's `vero-session` artifact). With `--ak look_only=true` it
only looks (its budget, one model call) and stops: a relaunch (`vero run --resume-from`) whose sidecar already
has the candidates of the trial before it.

With `--ak reevaluate_seed=true` it also evaluates the seed (the commit before its own) on the viewable split after
its candidate: with the build's `eval_early_stop`, an evaluation that stops early against that candidate.

With `--ak probe_trust_boundary=true` it also records, as the unprivileged `agent` user, what it can reach of
the trusted side (admin token, hidden splits, scorer, secrets, finalize): each probe's command and exit code go
to /logs/agent/trust-probes.json, so a test can check that every one was refused.
"""
import json
import shlex
from pathlib import Path

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

PATCH = Path(__file__).resolve().parent / "improvement.patch"
REPO = "/workspace/agent"

# What the optimizer must NOT be able to do from `main`. Each command exits 0 only if the boundary leaked.
TRUST_PROBES = {
    "read_admin_token": "cat /state/token/admin.token",
    "list_admin_state": "ls /state/admin",
    "hidden_split_dataset_in_main": "ls /opt/dataset /opt/inner-task /opt/scorer /opt/serve.json",
    "finalize_without_token": "vero finalize --token-file /dev/null --output /tmp/reward.json",
    "finalize_with_forged_token": "echo forged > /tmp/t && vero finalize --token-file /tmp/t --output /tmp/reward.json",
    "evaluate_hidden_split": "vero eval --split test",
    # A declared secret or a model key with a value (the gateway's producer token is the one key main may hold).
    "secret_in_environment": "env | grep -E '^(VERO_PROBE_SECRET|ANTHROPIC_API_KEY|OPENAI_API_KEY|MODAL_TOKEN_ID|VERO_TEST_UPSTREAM_KEY)=.' | grep -v '=vero-producer-'",
    "reach_a_docker_engine": "ls -l /var/run/docker.sock || docker info",
}


# Exits 0 without output when there is no gateway; otherwise prints {"status", "body"} of one chat completion.
MODEL_CALL = """node -e '
const base = process.env.OPENAI_BASE_URL;
if (!base) process.exit(0);
fetch(base + "/chat/completions", {
  method: "POST",
  headers: { authorization: "Bearer " + process.env.OPENAI_API_KEY, "content-type": "application/json" },
  body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: "How should I improve this agent?" }] }),
}).then(async (r) => console.log(JSON.stringify({ status: r.status, body: await r.text() })), (e) => { console.error(String(e)); process.exit(1); });
'"""


class ExampleOptimizer(BaseAgent):
    def __init__(
        self,
        *args,
        probe_trust_boundary: bool | str = False,
        crash_after_selection: bool | str = False,
        look_only: bool | str = False,
        reevaluate_seed: bool | str = False,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.probe = str(probe_trust_boundary).lower() in ("1", "true", "yes")
        self.crash_after_selection = str(crash_after_selection).lower() in ("1", "true", "yes")
        self.look_only = str(look_only).lower() in ("1", "true", "yes")
        self.reevaluate_seed = str(reevaluate_seed).lower() in ("1", "true", "yes")

    @staticmethod
    def name() -> str:
        return "example-optimizer"

    def version(self) -> str:
        return "1.0.0"

    async def setup(self, environment: BaseEnvironment) -> None:
        return

    async def _eval(self, environment: BaseEnvironment, args: str, log: list) -> tuple[int, str]:
        """`vero eval`, then `vero eval wait ID` while it answers that the evaluation is still running (its bound)."""
        code, out = await self._sh(environment, f"vero eval {args} --json", log)
        while code == 0 and json.loads(out).get("status") == "running":
            code, out = await self._sh(environment, f"vero eval wait {json.loads(out)['evalId']} --json", log)
        return code, out

    async def _sh(self, environment: BaseEnvironment, command: str, log: list) -> tuple[int, str]:
        result = await environment.exec(command, cwd=REPO)
        out = (result.stdout or "") + (result.stderr or "")
        log.append({"command": command, "exit": result.return_code, "output": out[-4000:]})
        return result.return_code, result.stdout or ""

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        log: list = []
        try:
            if self.probe:
                probes = {}
                for name, command in TRUST_PROBES.items():
                    code, _ = await self._sh(environment, command, log)
                    probes[name] = {"command": command, "exit": code, "leaked": code == 0}
                (self.logs_dir / "trust-probes.json").write_text(json.dumps(probes, indent=2))
                whoami = await environment.exec("id -un")
                (self.logs_dir / "whoami.txt").write_text((whoami.stdout or "").strip())

            # 1. Look at the task: splits, access and budget.
            await self._sh(environment, "vero budget", log)
            # With an inference gateway (`vero run` gave this agent OPENAI_BASE_URL and a producer token), the
            # optimizer's own model calls go through it: one call, its answer kept in the logs.
            code, out = await self._sh(environment, MODEL_CALL, log)
            if code == 0 and out.strip():
                (self.logs_dir / "model-call.json").write_text(out)
            if self.look_only:
                return
            # 2. Edit the agent and commit: one candidate.
            await environment.upload_file(PATCH, "/tmp/improvement.patch")
            code, _ = await self._sh(
                environment,
                "git apply /tmp/improvement.patch && git add -A && "
                "git -c user.name=optimizer -c user.email=optimizer@example.invalid commit -q -m 'apply the improvement'",
                log,
            )
            if code != 0:
                raise RuntimeError("the improvement did not apply")
            # 3. Spend budget on the viewable split and read its per-case results.
            code, out = await self._eval(environment, "--split train", log)
            if code == 0:
                result_path = json.loads(out).get("resultPath")  # vero eval --json: camelCase (schemas/eval.schema.json)
                if result_path:
                    await self._sh(environment, f"ls {shlex.quote(result_path)} && cat {shlex.quote(result_path)}/*", log)
            if self.reevaluate_seed:
                await self._eval(environment, "--split train --commit $(git rev-parse HEAD~1)", log)
            # 4. The selection split: the sidecar chooses among candidates by it.
            await self._eval(environment, "--split validation", log)
            if self.crash_after_selection:
                raise RuntimeError("crash_after_selection: the optimizer died before its verifier")
            await self._sh(environment, "vero budget", log)
        finally:
            (self.logs_dir / "optimizer.json").write_text(json.dumps(log, indent=2))
