"""POSIX ``sh`` programs the docker backend runs inside containers (as argv, never files).

They are passed with ``sh -c PROGRAM NAME ARGS...``: no script file lives in the
container for an agent to edit, and values travel as positional arguments, never spliced
into the program text. They need only ``sh``, ``mkdir``, ``rmdir``, ``rm``, ``mv``,
``chmod``, ``cat``, ``tr``, ``grep``, ``kill``, ``sleep`` (Debian, Ubuntu and
Alpine/busybox images have them) and ``git`` for the base commit. They run inside the
container only, so an agent that replaces one of those binaries can break its own
container's steps (a kill that finds nothing is then reported as an exec that still runs)
but reach nothing outside; ``docker stop`` of the whole container is the backstop.
"""

from __future__ import annotations

# The container's only own process, under docker-init (PID 1, reaps zombies, forwards
# docker stop's SIGTERM). Every command is an exec beside it; GNU sleep takes "infinity",
# busybox's may not, hence the loop.
KEEP_ALIVE = ["/bin/sh", "-c", "sleep infinity 2>/dev/null || while :; do sleep 3600; done"]

# One exec prepares a fresh container after the engine has extracted the staged copies
# under $1 (the stage): $2 workdir, $3 home, $4 tmp, $5 tests path, $6 solution path.
# A staged "app" replaces the workdir, staged "tests"/"solution" replace those folders,
# and tests/solution that were not staged are removed (an image's own copies too).
# Then the logs folders, and the base commit: $7 exclude text, $8 message, $9 name,
# $10 email, $11 date, $12 agent name, $13 agent email. The git part mirrors
# pluginbench.environments._gitbase.init_base_repo exactly (same commands, identity, dates,
# message and info/exclude) so equal content gives the same base commit on both backends.
# An existing repo is kept: its HEAD is the base. Prints the base commit last.
PREPARE = r"""
set -e
stage="$1"; app="$2"
place() {
  if [ -e "$stage/$1" ]; then
    rm -rf "$2"; mkdir -p "$2"; rmdir "$2"; mv "$stage/$1" "$2"
  elif [ "$1" != app ]; then
    rm -rf "$2"
  fi
}
place app "$app"; place tests "$5"; place solution "$6"
rm -rf "$stage"
mkdir -p "$app" "$3" "$4" /logs/agent /logs/verifier /logs/artifacts
chmod 1777 "$4" 2>/dev/null || true
cd "$app"
if [ ! -e .git ]; then
  git -c init.defaultBranch=main init -q --template=
  mkdir -p .git/info
  printf '%s' "$7" > .git/info/exclude
  git add -A
  GIT_AUTHOR_NAME="$9" GIT_AUTHOR_EMAIL="${10}" GIT_AUTHOR_DATE="${11}" \
  GIT_COMMITTER_NAME="$9" GIT_COMMITTER_EMAIL="${10}" GIT_COMMITTER_DATE="${11}" \
    git -c maintenance.auto=false -c gc.auto=0 -c commit.gpgsign=false commit -q --allow-empty --no-verify -m "$8"
fi
git config user.name "${12}"
git config user.email "${13}"
git rev-parse HEAD
"""

# $1 the marker line NAME=VALUE that every process of one exec carries in its
# environment. Each round SIGKILLs (a) every process with the marker and (b) every
# process in the session of a marked process (docker exec makes each exec's first
# process a session leader, so children that clear their environment are still found).
# Exits 0 once a round finds nothing, 1 when processes survive 100 rounds.
KILL_TREE = r"""
m="$1"; self=$$
round=0
while [ "$round" -lt 100 ]; do
  sids=""; victims=""
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ "$p" = "$self" ] && continue
    if tr '\0' '\n' < "$d/environ" 2>/dev/null | grep -qxF "$m"; then
      st=$(cat "$d/stat" 2>/dev/null) || continue
      set -- ${st##*) }
      # 0 and 1 are never an exec's session: skip them rather than kill PID 1.
      case "$4" in 0|1) ;; *) sids="$sids $4" ;; esac
      victims="$victims $p"
    fi
  done
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ "$p" = "$self" ] || [ "$p" = 1 ] && continue
    st=$(cat "$d/stat" 2>/dev/null) || continue
    set -- ${st##*) }
    for s in $sids; do [ "$4" = "$s" ] && victims="$victims $p"; done
  done
  [ -z "$victims" ] && exit 0
  kill -9 $victims 2>/dev/null || true
  round=$((round + 1))
  sleep 0.05 2>/dev/null || sleep 1
done
exit 1
"""

# stdin for an exec: $1 is a file put in the container; it is opened, removed, and the
# command ($2...) runs with it as standard input.
WITH_STDIN = r"""
exec 0<"$1"
rm -f "$1"
shift
exec "$@"
"""

# Start the egress forwarder for the container's life, in one exec: $@ is the forwarder's
# argv after "python3" (its flags, script, port and socket). Exit 127 when the image has no
# python3. Otherwise the forwarder opens its listening socket, forks the relay (stdio on
# /dev/null, reparented to docker-init when this exec ends) and becomes `true`: the exec
# ends exactly when 127.0.0.1:PORT listens, with no polling; a bind failure exits non-zero
# with python's reason on stderr.
START_FORWARDER = r"""
command -v python3 >/dev/null 2>&1 || { echo "no python3 in the image" >&2; exit 127; }
exec python3 "$@" -- true
"""
