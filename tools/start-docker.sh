#!/usr/bin/env bash
# Make a Docker engine answer on this machine, one whose container root is not the host's
# root; idempotent, bounded in time.
#
# * An engine already answering `docker info` that remaps users (SecurityOptions
#   name=userns) or runs rootless: print `docker version`, exit 0.
# * One that answers but maps container uid 0 to host uid 0: PluginBench's docker runs
#   refuse it (docs/user-guide.md, "Docker backend"). Under CI=true or
#   PLUGINBENCH_DOCKER_RESTART=1, when it is a dockerd this script can restart (its pid
#   file names a live dockerd, systemd does not manage it, no container is running), it is
#   stopped and started again as below; otherwise the script says how to fix it, and exits
#   1 under CI (every docker test would be refused), 0 elsewhere.
# * Otherwise (as root): install Debian's docker.io when dockerd is missing, start dockerd
#   in the background with `--userns-remap=default` (log: /tmp/dockerd.log), wait up to 60 s
#   for it to answer, print `docker version`.
#
# User namespace remapping: container uid 0 is the first uid of the `dockremap` user's
# subordinate range on the host, an unprivileged uid with its own per-user kernel counters.
# The user and its /etc/subuid and /etc/subgid ranges (65536 ids after every range already
# there, from 100000) are added when missing. The engine then keeps its images under
# <data root>/<uid>.<gid>/, apart from an unremapped engine's: build the base image again
# (tools/build-base-image.sh re-imports its cached root file system). PLUGINBENCH_DOCKER_USERNS=off
# starts dockerd without remapping (runs then need environment.allow_host_root: true).
#
# Storage driver: overlay2 first; when dockerd cannot start with it (no overlay support in
# the kernel or on the backing file system), vfs. The driver that worked is remembered in
# <data root>/.pluginbench-storage-driver so later starts find the same images.
# PLUGINBENCH_DOCKER_STORAGE_DRIVER forces one.
#
# The engine listens where DOCKER_HOST (unix://...) points, else /var/run/docker.sock.
# PLUGINBENCH_DOCKER_ROOT=/var/lib/<name> starts a second engine beside the machine's own
# (tests of this script, work that must not restart the shared engine): data root <name>,
# exec root and pid file under /var/run/<name>, log /tmp/<name>.log, a bridge link of its
# own (pb-<checksum of name>) and no iptables rules (sandboxes use no network); give it its own
# DOCKER_HOST socket. Never --bridge=none: dockerd then deletes the link named docker0 in
# the machine's network namespace, and the machine's own engine loses its default bridge.
# apt waits up to 4 min for a dpkg lock another installer holds. Every step has a timeout: CI runs this unattended and it must never hang.
set -euo pipefail

wait_seconds=60
userns="${PLUGINBENCH_DOCKER_USERNS:-default}"
case "$userns" in default|off) ;; *) echo "error: PLUGINBENCH_DOCKER_USERNS=$userns is not default or off" >&2; exit 1 ;; esac

root_args=()
if [ -n "${PLUGINBENCH_DOCKER_ROOT:-}" ]; then
    case "${DOCKER_HOST:-}" in
        unix://*) ;;
        *) echo "error: PLUGINBENCH_DOCKER_ROOT needs DOCKER_HOST=unix://<its own socket>" >&2; exit 1 ;;
    esac
    name=$(basename "$PLUGINBENCH_DOCKER_ROOT")
    data_root="$PLUGINBENCH_DOCKER_ROOT"
    exec_root="/var/run/$name"
    pidfile="$exec_root/dockerd.pid"
    log="/tmp/$name.log"
    bridge="pb-$(printf '%s' "$name" | cksum | cut -d' ' -f1)"  # a link name has at most 15 characters
    root_args=(--data-root "$data_root" --exec-root "$exec_root" --pidfile "$pidfile"
               --bridge="$bridge" --iptables=false --ip-masq=false)
else
    data_root=/var/lib/docker
    pidfile=/var/run/docker.pid
    log=/tmp/dockerd.log
fi
state_file="$data_root/.pluginbench-storage-driver"
in_ci() { case "${CI:-}" in 1|true|TRUE|True|yes) return 0 ;; *) return 1 ;; esac; }

answers() { timeout 10 docker info >/dev/null 2>&1; }
# Whether the answering engine's container root is not the host's root.
remapped() {
    timeout 10 docker info --format '{{range .SecurityOptions}}{{println .}}{{end}}' 2>/dev/null \
        | grep -Eq '^name=(userns|rootless)$'
}

restartable() {
    # Prints why the answering engine cannot be restarted by this script, if it cannot.
    local pid
    pid=$(cat "$pidfile" 2>/dev/null || true)
    if [ -z "$pid" ] || [ "$(cat "/proc/$pid/comm" 2>/dev/null || true)" != dockerd ]; then
        echo "its pid file $pidfile names no running dockerd"; return
    fi
    if command -v systemctl >/dev/null 2>&1 && timeout 10 systemctl is-active --quiet docker 2>/dev/null; then
        echo "systemd manages it (add \"userns-remap\": \"default\" to /etc/docker/daemon.json, then systemctl restart docker)"; return
    fi
    local running
    running=$(timeout 10 docker ps -q | wc -l)
    if [ "$running" != 0 ]; then
        echo "$running containers are running on it (restarting would kill them)"; return
    fi
}

stop_engine() {
    local pid waited=0
    pid=$(cat "$pidfile")
    echo "stopping dockerd (pid $pid) to start it again with user namespace remapping" >&2
    kill "$pid"
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 30 ]; do sleep 1; waited=$((waited + 1)); done
    if kill -0 "$pid" 2>/dev/null; then
        kill -9 "$pid" 2>/dev/null || true
        sleep 1
    fi
}

if command -v docker >/dev/null 2>&1 && answers; then
    if remapped || [ "$userns" = off ]; then
        docker version
        exit 0
    fi
    echo "warning: the Docker engine answering maps container uid 0 to host uid 0 (no user namespace" \
        "remapping); PluginBench's docker runs refuse it unless environment.allow_host_root is true" >&2
    why=$(restartable)
    if [ -z "$why" ] && [ "$(id -u)" = 0 ] && { in_ci || [ "${PLUGINBENCH_DOCKER_RESTART:-0}" = 1 ]; }; then
        stop_engine
    else
        [ -n "$why" ] && echo "  this script does not restart it: $why" >&2
        echo "  fix: restart dockerd with --userns-remap=default (PLUGINBENCH_DOCKER_RESTART=1 $0 does it" \
            "when it can), or use rootless Docker" >&2
        if in_ci; then exit 1; fi
        docker version
        exit 0
    fi
fi

if [ "$(id -u)" != 0 ]; then
    echo "error: no Docker engine answers and starting one needs root" >&2
    exit 1
fi

# One starter at a time: a second caller waits, then finds the engine answering.
exec 8>"/tmp/.pluginbench-start-docker-$(basename "$data_root").lock"
timeout 120 flock 8 || { echo "error: another tools/start-docker.sh holds its lock" >&2; exit 1; }
if command -v docker >/dev/null 2>&1 && answers && { remapped || [ "$userns" = off ]; }; then
    docker version
    exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    echo "installing docker.io ..." >&2
    timeout 300 apt-get -o DPkg::Lock::Timeout=240 update -q >&2
    # No recommends: needrestart/apparmor are useless here; git and xz-utils are
    # installed elsewhere when needed. uidmap's newuidmap is not needed: dockerd (root)
    # writes the maps itself.
    timeout 900 apt-get -o DPkg::Lock::Timeout=240 install -y -q --no-install-recommends \
        docker.io containerd runc tini iptables ca-certificates >&2
fi

ensure_remap_ids() {
    # The dockremap user and group, and 65536 subordinate uids and gids for them.
    getent group dockremap >/dev/null || timeout 60 groupadd --system dockremap
    getent passwd dockremap >/dev/null || timeout 60 useradd --system --gid dockremap \
        --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin dockremap
    local f start
    for f in /etc/subuid /etc/subgid; do
        [ -e "$f" ] || install -m 644 /dev/null "$f"
        grep -q '^dockremap:' "$f" && continue
        # After every range already there (never overlapping one), from 100000.
        start=$(awk -F: 'BEGIN { m = 100000 } NF >= 3 { e = $2 + $3; if (e > m) m = e } END { print m }' "$f")
        echo "dockremap:$start:65536" >>"$f"
        echo "added dockremap:$start:65536 to $f" >&2
    done
}

remap_args=()
if [ "$userns" = default ]; then
    ensure_remap_ids
    # A daemon.json that sets it already must not get the flag too (dockerd refuses both).
    grep -qs '"userns-remap"' /etc/docker/daemon.json || remap_args=(--userns-remap=default)
fi

if [ -n "${bridge:-}" ] && ! ip link show "$bridge" >/dev/null 2>&1; then
    timeout 30 ip link add name "$bridge" type bridge
fi

host_args=()
case "${DOCKER_HOST:-}" in
    "") ;;
    unix://*) host_args=(-H "$DOCKER_HOST") ;;
    *) echo "error: DOCKER_HOST=$DOCKER_HOST is not a unix:// socket" >&2; exit 1 ;;
esac

dockerd_pid=""

start_dockerd() {
    # Starts dockerd with storage driver $1 and waits; returns 0 once it answers.
    local driver="$1" extra=()
    echo "starting dockerd (storage driver $driver${remap_args:+, user namespace remapping}), log $log" >&2
    # A second dockerd refuses to start over a live pid file; a stale one from a killed
    # run (CI ends everything a session left running) is harmless and reused.
    # iptables may be unusable inside some VMs; dockerd then fails on its bridge setup,
    # so the fallback below retries without iptables management.
    if [ "${2:-}" = "no-iptables" ]; then extra=(--iptables=false --ip-masq=false); fi
    # dockerd outlives this script, so it gets a clean environment: a caller's TMPDIR,
    # HOME or XDG_* folders (a test harness's, removed when it ends) would otherwise be
    # where runc writes its exec files, and every later exec would fail with
    # "open $TMPDIR/runc-process...: no such file or directory".
    local keep=(PATH="$PATH")
    for var in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
        if [ -n "${!var:-}" ]; then keep+=("$var=${!var}"); fi
    done
    setsid env -i "${keep[@]}" dockerd --storage-driver="$driver" "${remap_args[@]}" "${root_args[@]}" "${host_args[@]}" "${extra[@]}" \
        >>"$log" 2>&1 </dev/null &
    dockerd_pid=$!
    local waited=0
    while [ "$waited" -lt "$wait_seconds" ]; do
        if answers; then
            return 0
        fi
        if ! kill -0 "$dockerd_pid" 2>/dev/null; then
            echo "dockerd exited (storage driver $driver); last log lines:" >&2
            tail -n 5 "$log" >&2 || true
            dockerd_pid=""
            return 1
        fi
        sleep 1
        waited=$((waited + 1))
    done
    echo "dockerd did not answer within ${wait_seconds}s; stopping it" >&2
    kill "$dockerd_pid" 2>/dev/null || true
    sleep 2
    kill -9 "$dockerd_pid" 2>/dev/null || true
    dockerd_pid=""
    return 1
}

drivers=()
if [ -n "${PLUGINBENCH_DOCKER_STORAGE_DRIVER:-}" ]; then
    drivers=("$PLUGINBENCH_DOCKER_STORAGE_DRIVER")
elif [ -s "$state_file" ]; then
    drivers=("$(cat "$state_file")")
    [ "${drivers[0]}" = overlay2 ] || drivers+=(overlay2)
    [ "${drivers[0]}" = vfs ] || drivers+=(vfs)
else
    drivers=(overlay2 vfs)
fi

started=""
for driver in "${drivers[@]}"; do
    if start_dockerd "$driver" || start_dockerd "$driver" no-iptables; then
        started="$driver"
        break
    fi
done

if [ -z "$started" ]; then
    echo "error: dockerd did not start with any of: ${drivers[*]}; see $log" >&2
    [ "$userns" = default ] && echo "  (with user namespace remapping: a kernel without user namespaces" \
        "cannot; PLUGINBENCH_DOCKER_USERNS=off starts it without, and runs then need environment.allow_host_root)" >&2
    exit 1
fi
mkdir -p "$(dirname "$state_file")"
echo "$started" >"$state_file"
if [ "$userns" = default ] && ! remapped; then
    echo "error: dockerd started but does not report user namespace remapping; see $log" >&2
    exit 1
fi
echo "dockerd running (pid $dockerd_pid, storage driver $started${remap_args:+, container root = host uid $(awk -F: '$1 == "dockremap" { print $2; exit }' /etc/subuid)})" >&2
docker version
