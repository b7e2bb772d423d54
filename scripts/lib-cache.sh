# Shared by the ensure-* scripts: where built tools are cached (outside the clone, versioned) and how steps
# report themselves. Sourced, not run.
VERO_CACHE="${VERO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vero-harbor}"
mkdir -p "$VERO_CACHE"
say() { echo "$(basename "$0"): $*" >&2; }
# step "what" "how long it usually takes" cmd...: prints what it does, runs it, prints how long it took.
step() {
  local what="$1" usual="$2"; shift 2
  local t0=$SECONDS
  say "$what (usually $usual)…"
  "$@"
  say "$what: done in $((SECONDS - t0)) s"
}
