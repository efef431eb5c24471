#!/usr/bin/env bash
# Runs a command from a root directory the way a container runtime does, with nothing but util-linux and
# coreutils: its own mount and PID namespaces, the root mounted as an overlay inside them (so the host cannot
# open the paths the command's /proc/PID/maps shows), /proc of its own, a directory bind-mounted read-only at
# /models, an empty environment, optionally another user. The tests start the Debian llama.cpp root this way
# (src/scripts/provision-distro-llama.sh); it is also a way to try infertop on a container by hand.
# Usage: container-run.sh [--user UID[:GID]] [--models DIR] [--env NAME=VALUE]... ROOT -- COMMAND [ARG...]
# The command runs as PID 1 of a new PID namespace; SIGTERM, SIGINT or SIGHUP to this script stops it (SIGTERM to
# the command, SIGKILL 5 s later).
set -euo pipefail

say() { printf 'container-run: %s\n' "$*" >&2; }
die() { printf 'container-run: %s\n' "$*" >&2; exit 2; }

user=""
models=""
envs=(PATH=/usr/local/bin:/usr/bin:/bin HOME=/)
while [ $# -gt 0 ]; do
  case "$1" in
    --user) user="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --env) envs+=("$2"); shift 2 ;;
    --) shift; break ;;
    -*) die "unknown option '$1' (use --user, --models, --env)" ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || die "usage: container-run.sh [--user UID[:GID]] [--models DIR] [--env N=V]... ROOT -- COMMAND [ARG...]"
root="$(readlink -f "$1")"
shift
[ "${1:-}" = "--" ] && shift
[ $# -ge 1 ] || die "no command to run in $root"
[ -d "$root/usr" ] || die "$root is not a root directory (no usr/)"
[ "$(id -u)" -eq 0 ] || die "run as root (it makes namespaces and mounts)"
[ -z "$models" ] || [ -d "$models" ] || die "--models $models: no such directory"

work="$(mktemp -d /tmp/infertop-container-XXXXXX)"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$work/upper" "$work/work" "$work/merged"

userspec=()
if [ -n "$user" ]; then
  case "$user" in
    *:*) userspec=(--userspec="$user") ;;
    *) userspec=(--userspec="$user:$user") ;;
  esac
fi

# Inside the new namespaces (PID 1 there): mount the overlay, /models and /proc, then chroot and exec.
# --kill-child: the command dies with unshare, which this script's SIGTERM, SIGINT or SIGHUP ends.
unshare --mount --pid --fork --kill-child --propagation private -- /bin/sh -c '
  set -e
  root="$1"; work="$2"; models="$3"; shift 3
  mount -t overlay overlay -o "lowerdir=$root,upperdir=$work/upper,workdir=$work/work" "$work/merged"
  if [ -n "$models" ]; then
    mkdir -p "$work/merged/models"
    mount --bind "$models" "$work/merged/models"
    mount -o remount,bind,ro "$work/merged/models"
  fi
  mkdir -p "$work/merged/proc"
  mount -t proc proc "$work/merged/proc"
  exec "$@"
' container-run "$root" "$work" "$models" /usr/bin/env -i "${envs[@]}" "$(command -v chroot)" "${userspec[@]}" "$work/merged" "$@" &
child=$!
# unshare ignores SIGTERM and SIGINT while it waits: the command (PID 1 in its namespace, which takes from outside
# only the signals it handles, and SIGKILL) is asked first, then unshare is killed, and --kill-child ends the rest.
stop() {
  pkill -TERM -P "$child" 2>/dev/null || true
  for _ in $(seq 50); do
    kill -0 "$child" 2>/dev/null || return 0
    sleep 0.1
  done
  # The command is PID 1 of its namespace: SIGKILL to it ends every process there. Killing unshare alone does not
  # reach a command run with --user: its change of credentials cleared the parent-death signal of --kill-child.
  pkill -KILL -P "$child" 2>/dev/null || true
  kill -KILL "$child" 2>/dev/null || true
}
trap stop TERM INT HUP
status=0
while true; do
  wait "$child" && status=0 || status=$?
  kill -0 "$child" 2>/dev/null || break # wait returned for a signal: the command may still be stopping
done
exit "$status"
