"""The eval sidecar's Weights & Biases logger (started by sidecar/wandb-reporter.ts, trusted side only).

Usage: python wandb_logger.py RUN_JSON

RUN_JSON holds the run's settings (project, entity, name, group, tags, notes, run_id, mode, task) and where its
files are: `events` (JSON lines the sidecar appends), `state` (this logger's place in that file, the run id and
the next step) and `dir` (W&B's own files; an offline run's dir is what `wandb sync` uploads). Each event is one
of:
  {"type": "log", "row": {...}}                                      a row of the run's history, at the next step
  {"type": "artifact", "name", "artifact_type", "files": [{"name", "path"}]}    files as one artifact
  {"type": "finish", "summary": {...}, "exit_code": 0|1}              the summary, then the run ends
The logger follows the file until the finish event, or until its parent (the sidecar) is gone or it is told to
stop (SIGTERM): the run is then flushed and ended, and a restarted sidecar's logger resumes it (same id) from the
first event not yet logged.
"""

import hashlib
import json
import os
import signal
import sys
import time
import uuid


def read_json(path, default):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return default


def write_json(path, value):
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(value, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def display_name(name, run_id):
    """The file's name with a short digest of the run id: two sessions of one configured name stay apart."""
    if not name:
        return None
    return f"{name}--{hashlib.sha256(run_id.encode()).hexdigest()[:6]}"


def open_run(wandb, spec, state):
    os.makedirs(spec["dir"], exist_ok=True)
    config = {"vero/task": spec.get("task")}
    if spec.get("name"):
        config["vero/run_label"] = spec["name"]
    options = {
        "project": spec["project"],
        "id": state["run_id"],
        "resume": "allow",
        "dir": spec["dir"],
        "mode": spec.get("mode", "online"),
        "config": config,
        "entity": spec.get("entity"),
        "name": display_name(spec.get("name"), state["run_id"]),
        "group": spec.get("group"),
        "tags": spec.get("tags") or None,
        "notes": spec.get("notes"),
    }
    return wandb.init(**{k: v for k, v in options.items() if v is not None})


def apply(wandb, run, event, state):
    kind = event.get("type")
    if kind == "log":
        run.log(event["row"], step=state["next_step"])
        state["next_step"] += 1
    elif kind == "artifact":
        artifact = wandb.Artifact(name=event["name"], type=event["artifact_type"])
        for f in event["files"]:
            artifact.add_file(f["path"], name=f["name"])
        run.log_artifact(artifact)
    elif kind == "finish":
        run.summary.update(event.get("summary") or {})
        run.finish(exit_code=int(event.get("exit_code", 0)))
        state["finished"] = True
    else:
        print(f"unknown event type {kind!r}; skipped", file=sys.stderr)


class Stop(Exception):
    pass


def follow(spec, state, wandb, run):
    """Logs each complete line after state['offset'], until the finish event or a stop."""
    parent = os.getppid()
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    with open(spec["events"], "a+b") as f:
        f.seek(state["offset"])
        pending = b""
        while not state.get("finished"):
            chunk = f.readline()
            if chunk:
                pending += chunk
                if not pending.endswith(b"\n"):
                    continue
                line, pending = pending, b""
                if line.strip():
                    apply(wandb, run, json.loads(line), state)
                state["offset"] = f.tell()
                write_json(spec["state"], state)
                continue
            if stopping or os.getppid() != parent:
                raise Stop()
            time.sleep(0.2)


def main():
    spec = read_json(sys.argv[1], None)
    state = read_json(spec["state"], {"offset": 0, "next_step": 0})
    if state.get("finished"):
        return 0
    state.setdefault("run_id", spec.get("run_id") or f"vero-{uuid.uuid4().hex[:16]}")
    write_json(spec["state"], state)
    try:
        import wandb
    except ImportError as e:
        print(f"the wandb package is not installed for {sys.executable} ({e})", file=sys.stderr)
        return 2
    try:
        run = open_run(wandb, spec, state)
    except Exception as e:  # observability never takes the sidecar down: recorded, and the logger ends
        write_json(os.path.join(spec["dir"], "init-error.json"), {"project": spec["project"], "error_type": type(e).__name__, "error": str(e)})
        print(f"the run could not be opened ({type(e).__name__}: {e})", file=sys.stderr)
        return 3
    try:
        follow(spec, state, wandb, run)
    except Stop:
        run.finish(exit_code=0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
