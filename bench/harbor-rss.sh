#!/usr/bin/env bash
# Peak memory of one harbor process (with its docker compose children) on a real trial: what a worker slot
# costs (model/worker-identity.ts sizes the default --max-concurrent-tasks by it). Real Harbor 0.25 on Docker
# (scripts/ensure-harbor, scripts/ensure-docker), the oracle agent on one mini-bench task, `-n 1`; beside it
# the dry run (no trial) as the floor. GNU time's "Maximum resident set size" covers the waited-for children.
#   bench/harbor-rss.sh [task] [rounds]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
task="${1:-hello-world}"
rounds="${2:-3}"
harbor="$("$root/scripts/ensure-harbor")"
[ -x /usr/bin/time ] || { echo "needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
measure() { # label, extra args…
  local label="$1"; shift
  for i in $(seq 1 "$rounds"); do
    /usr/bin/time -f '%M %e' -o "$work/time" "$harbor" run -p "$root/examples/datasets/mini-bench" -i "$task" -a oracle \
      -o "$work/jobs-$label-$i" -y -q -n 1 "$@" >/dev/null 2>&1
    read -r kb secs <"$work/time"
    printf '%-10s round %d: max RSS %4d MB, %5.1f s\n' "$label" "$i" "$((kb / 1024))" "$secs"
  done
}
measure dry-run --dry-run
measure trial
