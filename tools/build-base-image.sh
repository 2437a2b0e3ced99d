#!/usr/bin/env bash
# Build the local base image pluginbench/base:bookworm without any image registry.
#
# A Debian bookworm root file system is made with `debootstrap --variant=minbase` from
# the Debian mirror apt already uses, with python3, git, ca-certificates, bash, coreutils
# and nodejs (Debian's 18.x; the agent CLIs need node >= 18), then imported with
# `docker import`. Test tasks and workspace-only tasks use `FROM pluginbench/base:bookworm`.
#
# Cache, keyed by the sha256 of this script (its package list and import settings):
#   * the image is also tagged pluginbench/base:bookworm-<hash> and labelled
#     pluginbench.base.hash=<hash>; when that tag exists nothing is built;
#   * the root file system tarball is kept under
#     ${XDG_CACHE_HOME:-~/.cache}/pluginbench/base-image/bookworm-<hash>.tar, so a new
#     engine (or a wiped /var/lib/docker) on the same machine only re-imports it.
# PLUGINBENCH_DEBIAN_MIRROR overrides the mirror; PLUGINBENCH_BASE_REBUILD=1 ignores both
# caches. Runs unattended as root (debootstrap needs it); prints timings.
set -euo pipefail

name=pluginbench/base
tag=bookworm
packages=python3,git,ca-certificates,bash,coreutils,nodejs

start=$(date +%s.%N)
elapsed() { awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }'; }

script_path="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
hash=$(sha256sum "$script_path" | cut -c1-12)
image="$name:$tag"
hashed="$name:$tag-$hash"
cache_dir="${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/pluginbench/base-image"
tarball="$cache_dir/$tag-$hash.tar"

if ! timeout 10 docker info >/dev/null 2>&1; then
    echo "error: no Docker engine answers; run tools/start-docker.sh first" >&2
    exit 1
fi

mkdir -p "$cache_dir"
# One builder at a time per cache: a second caller waits, then finds the cache filled.
exec 9>"$cache_dir/.lock"
timeout 1800 flock 9 || { echo "error: timed out waiting for $cache_dir/.lock" >&2; exit 1; }

rebuild="${PLUGINBENCH_BASE_REBUILD:-0}"

if [ "$rebuild" != 1 ] && docker image inspect "$hashed" >/dev/null 2>&1; then
    docker tag "$hashed" "$image"
    echo "cached image $hashed ($(docker image inspect -f '{{.Id}}' "$image")) in $(elapsed)s"
    exit 0
fi

mirror_from_apt() {
    # First Debian (non-security) URI in apt's configured sources, deb822 or one-line.
    local files=() f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] && files+=("$f")
    done
    [ "${#files[@]}" -gt 0 ] || return 0
    { grep -h -E '^[[:space:]]*URIs:' "${files[@]}" | sed -E 's/^[[:space:]]*URIs:[[:space:]]*//' | tr ' ' '\n'
      grep -h -E '^[[:space:]]*deb[[:space:]]' "${files[@]}" | sed -E 's/\[[^]]*\]//' | awk '{print $2}'
    } 2>/dev/null | grep -E '/debian/?$' | grep -v -- '-security' | head -n 1 || true
}

if [ "$rebuild" = 1 ] || [ ! -s "$tarball" ]; then
    if ! command -v debootstrap >/dev/null 2>&1; then
        echo "installing debootstrap ..." >&2
        export DEBIAN_FRONTEND=noninteractive
        timeout 300 apt-get -o DPkg::Lock::Timeout=240 update -q >&2
        timeout 600 apt-get -o DPkg::Lock::Timeout=240 install -y -q --no-install-recommends \
            debootstrap debian-archive-keyring >&2
    fi
    mirror="${PLUGINBENCH_DEBIAN_MIRROR:-$(mirror_from_apt)}"
    mirror="${mirror:-http://deb.debian.org/debian}"
    security="${mirror%/debian}/debian-security"
    work=$(mktemp -d /tmp/pluginbench-base.XXXXXX)
    # debootstrap mounts /proc and /sys inside the target; unmount before deleting.
    cleanup() {
        for m in proc sys dev/pts dev; do umount -l "$work/rootfs/$m" 2>/dev/null || true; done
        rm -rf "$work"
    }
    trap cleanup EXIT
    echo "debootstrap bookworm from $mirror ..." >&2
    timeout 1200 debootstrap --variant=minbase --include="$packages" \
        bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
        echo "error: debootstrap failed; last lines of its log:" >&2
        tail -n 20 "$work/debootstrap.log" >&2
        [ -f "$work/rootfs/debootstrap/debootstrap.log" ] && tail -n 20 "$work/rootfs/debootstrap/debootstrap.log" >&2
        exit 1
    }
    echo "debootstrap done at $(elapsed)s" >&2
    root="$work/rootfs"
    printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s bookworm-security main\n' \
        "$mirror" "$mirror" "$security" >"$root/etc/apt/sources.list"
    # Smaller image, no host-specific state: package caches, apt lists, logs.
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* \
        "$root"/var/log/* "$root"/tmp/* "$root"/var/tmp/*
    for m in proc sys dev/pts; do umount -l "$root/$m" 2>/dev/null || true; done
    mkdir -p "$root/app" "$root/home/agent"
    chmod 1777 "$root/tmp"
    rm -f "$tarball".*.partial
    tar -C "$root" --numeric-owner --one-file-system -cf "$tarball.$$.partial" .
    mv "$tarball.$$.partial" "$tarball"
    # Older tarballs belong to other versions of this script.
    find "$cache_dir" -maxdepth 1 -name "$tag-*.tar" ! -name "$tag-$hash.tar" -delete
    echo "root file system tarball $tarball ($(du -h "$tarball" | cut -f1)) at $(elapsed)s" >&2
fi

id=$(docker import \
    --change "LABEL pluginbench.base.hash=$hash" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'WORKDIR /app' \
    --change 'CMD ["/bin/bash"]' \
    - "$hashed" <"$tarball")
docker tag "$hashed" "$image"
echo "node $(docker run --rm --network none "$image" node --version)," \
    "python $(docker run --rm --network none "$image" python3 -c 'import sys; print(sys.version.split()[0])')," \
    "$(docker run --rm --network none "$image" git --version)" >&2
echo "built $image = $hashed ($id) in $(elapsed)s"
