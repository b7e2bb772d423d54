"""
The harbor fork server (harbor/forkserver.ts starts it with harbor's own Python): imports Harbor once
(its CLI and LiteLLM cost about 4 CPU-seconds per start) and forks a child per `harbor run`, so each task pays
a fork instead of the imports.

    python forkserver.py SOCKET

Each connection to SOCKET asks for one run with one JSON line: {"argv": [...], "cwd": "...", "env": {...},
"stdout": "FILE", "stderr": "FILE"}. The child leads a session and process group of its own (as a detached
spawn would), runs in `cwd` with exactly `env` (PYTHONPATH's entries put on sys.path as Python would at
start) and stdout/stderr appended to the files, and runs Harbor's CLI with `argv`. The server answers
{"pid": N} at once and {"exit": CODE} or {"signal": N} when the child ends; a client that goes away loses only
that answer (the child keeps running, for a later owner to adopt). A run whose PYTHONPATH provides a module the
server has imported (a candidate that vendors pydantic, say) is not forked, since its child would keep the server's
copy: the answer is {"spawn": REASON} and the client spawns harbor instead. {"status": true} asks for the server's own
record instead: {"status": {"pid": ..., "forks": N, "imported": true}} (`imported`: Harbor's CLI was imported before
any fork). The server ends when its stdin closes (its
worker is gone); its children outlive it. It ignores SIGINT: a Ctrl-C meant for its worker does not end it
before the worker's shutdown grace is over.
"""

import json
import os
import selectors
import signal
import socket
import sys
import traceback


def preimport():
    """What a `harbor run` imports; a failure here only means the child imports it (and fails) itself."""
    import harbor.cli.main  # noqa: F401

    try:
        import harbor.llms.utils  # noqa: F401  (LiteLLM: most of the start-up time)
    except Exception:
        pass


def shadowed_module(pythonpath, cwd):
    """The first module already imported here that an entry of `pythonpath` (relative ones: to `cwd`) provides, as
    (module, entry), or None.

    What a spawned Python would import from that entry instead: `name.py`, a `name/` package, an extension
    `name*.so`; a `name/` dir without `__init__.py` only when the imported module is itself a namespace package
    (a regular one anywhere on the path wins over a namespace dir).
    """
    loaded = {name.partition(".")[0] for name in list(sys.modules)} - set(sys.builtin_module_names)
    for entry in (p for p in pythonpath.split(os.pathsep) if p):
        try:
            names = os.listdir(os.path.join(cwd, entry))
        except OSError:
            continue
        for name in names:
            full = os.path.join(cwd, entry, name)
            top = name.partition(".")[0]
            if top not in loaded:
                continue
            if os.path.isdir(full):
                module = sys.modules.get(top)
                namespace = getattr(module, "__file__", None) is None and hasattr(module, "__path__")
                if name == top and (os.path.exists(os.path.join(full, "__init__.py")) or namespace):
                    return top, entry
            elif name in (top + ".py", top + ".pyc") or name.endswith(".so"):
                return top, entry
    return None


def run_child(req, inherited):
    """In the forked child: become the run harbor would be if it had been spawned, then run its CLI."""
    os.setsid()
    signal.set_wakeup_fd(-1)
    for fd in inherited:
        os.close(fd)
    for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    devnull = os.open(os.devnull, os.O_RDONLY)
    out = os.open(req["stdout"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    err = out if req["stderr"] == req["stdout"] else os.open(req["stderr"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(devnull, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    entries = [p for p in req["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
    # As Python starts a console script: its own dir first, then PYTHONPATH, then the rest.
    sys.path[0] = os.path.dirname(req["argv0"])
    sys.path[1:1] = [p for p in entries if p not in sys.path]
    sys.argv = [req["argv0"], *req["argv"]]
    code = 0
    try:
        from harbor.cli.main import app

        result = app()
        code = result if isinstance(result, int) else 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, (int, type(None))):
            print(e.code, file=sys.stderr)
    except KeyboardInterrupt:
        code = 130
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def send(conn, message):
    try:
        conn.sendall((json.dumps(message) + "\n").encode())
    except OSError:
        pass  # the client went away: the child runs on


def main():
    path = sys.argv[1]
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    preimport()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    sel = selectors.DefaultSelector()
    sel.register(server, selectors.EVENT_READ, "accept")
    sel.register(sys.stdin, selectors.EVENT_READ, "stdin")
    # SIGCHLD wakes the loop through a pipe; waitpid then collects every child that ended.
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    sel.register(wake_r, selectors.EVENT_READ, "child")
    children = {}  # pid -> the connection waiting for its end
    forks = 0
    imported = "harbor.cli.main" in sys.modules
    print("ready", flush=True)
    while True:
        for key, _ in sel.select():
            if key.data == "stdin":
                if not os.read(sys.stdin.fileno(), 4096):
                    return  # the worker is gone; the children run on
            elif key.data == "accept":
                conn, _ = server.accept()
                conn.settimeout(10)
                try:
                    line = conn.makefile("rb").readline()
                    req = json.loads(line)
                except (OSError, ValueError) as e:
                    send(conn, {"error": f"bad request: {e}"})
                    conn.close()
                    continue
                if req.get("status"):
                    send(conn, {"status": {"pid": os.getpid(), "forks": forks, "imported": imported}})
                    conn.close()
                    continue
                shadowed = shadowed_module(req.get("env", {}).get("PYTHONPATH", ""), req.get("cwd", "/"))
                if shadowed:
                    module, entry = shadowed
                    send(conn, {"spawn": f"PYTHONPATH entry {entry} provides {module}, which the fork server imported"})
                    conn.close()
                    continue
                forks += 1
                pid = os.fork()
                if pid == 0:
                    server.close()
                    conn.close()
                    for c in children.values():
                        c.close()
                    run_child(req, [wake_r, wake_w, sel.fileno()])
                children[pid] = conn
                send(conn, {"pid": pid})
            else:
                os.read(wake_r, 4096)
                while True:
                    try:
                        pid, status = os.waitpid(-1, os.WNOHANG)
                    except ChildProcessError:
                        break
                    if pid == 0:
                        break
                    conn = children.pop(pid, None)
                    if conn is None:
                        continue
                    if os.WIFSIGNALED(status):
                        send(conn, {"signal": os.WTERMSIG(status)})
                    else:
                        send(conn, {"exit": os.WEXITSTATUS(status)})
                    conn.close()


if __name__ == "__main__":
    try:
        main()
    finally:
        # The socket and the private dir it is in (made for this server alone by its worker).
        for remove in (os.unlink, os.rmdir):
            try:
                remove(sys.argv[1] if remove is os.unlink else os.path.dirname(sys.argv[1]))
            except OSError:
                pass
