#!/usr/bin/env bash
# Make a Docker engine answer on this machine; idempotent, bounded in time.
#
# * An engine already answering `docker info`: print `docker version`, exit 0.
# * Otherwise (as root): install Debian's docker.io when dockerd is missing, start dockerd
#   in the background (log: /tmp/dockerd.log), wait up to 60 s for it to answer, print
#   `docker version`.
#
# Storage driver: overlay2 first; when dockerd cannot start with it (no overlay support in
# the kernel or on the backing file system), vfs. The driver that worked is remembered in
# /var/lib/docker/.pluginbench-storage-driver so later starts find the same images.
# PLUGINBENCH_DOCKER_STORAGE_DRIVER forces one.
#
# The engine listens where DOCKER_HOST (unix://...) points, else /var/run/docker.sock.
# apt waits up to 4 min for a dpkg lock another installer holds. Every step has a timeout: CI runs this unattended and it must never hang.
set -euo pipefail

log=/tmp/dockerd.log
wait_seconds=60
state_file=/var/lib/docker/.pluginbench-storage-driver

answers() { timeout 10 docker info >/dev/null 2>&1; }

if command -v docker >/dev/null 2>&1 && answers; then
    docker version
    exit 0
fi

if [ "$(id -u)" != 0 ]; then
    echo "error: no Docker engine answers and starting one needs root" >&2
    exit 1
fi

if ! command -v dockerd >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    echo "installing docker.io ..." >&2
    timeout 300 apt-get -o DPkg::Lock::Timeout=240 update -q >&2
    # No recommends: needrestart/apparmor are useless here; git and xz-utils are
    # installed elsewhere when needed.
    timeout 900 apt-get -o DPkg::Lock::Timeout=240 install -y -q --no-install-recommends \
        docker.io containerd runc tini iptables ca-certificates >&2
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
    echo "starting dockerd (storage driver $driver), log $log" >&2
    # A second dockerd refuses to start over a live pid file; a stale one from a killed
    # run (CI ends everything a session left running) is harmless and reused.
    # iptables may be unusable inside some VMs; dockerd then fails on its bridge setup,
    # so the fallback below retries without iptables management.
    if [ "${2:-}" = "no-iptables" ]; then extra=(--iptables=false --ip-masq=false); fi
    setsid dockerd --storage-driver="$driver" "${host_args[@]}" "${extra[@]}" \
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
    exit 1
fi
mkdir -p "$(dirname "$state_file")"
echo "$started" >"$state_file"
echo "dockerd running (pid $dockerd_pid, storage driver $started)" >&2
docker version
