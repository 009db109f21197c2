#!/usr/bin/env bash
# Prepare the sandboxes nexusd's checks run in: Docker Engine + an offline-built
# Python image, and bubblewrap. Idempotent: every step is skipped when its
# result is already there, so a rerun takes about a second.
#
# Usage: sudo bash "$(nexusd doctor --setup-script)"   (as root, or with sudo available)
#        scripts/setup-sandbox.sh in a checkout of nexusd
# Environment:
#   NEXUSD_IMAGE        image to build            (default nexusd-python:bookworm)
#   NEXUSD_IMAGE_PKGS   packages in the image     (default python3,python3-pytest)
#   NEXUSD_CACHE_DIR    rootfs tarball cache      (default /var/cache/nexusd)
#   NEXUSD_DOCKERD_LOG  dockerd's log file        (default /var/log/nexusd-dockerd.log)
#   NEXUSD_DEBIAN_MIRROR  mirror for debootstrap  (default: apt's source for the suite)
#   NEXUSD_SKIP_DOCKER=1  only set up bubblewrap
# `--print-mirror` prints the mirror debootstrap would use, and exits.
set -euo pipefail

IMAGE="${NEXUSD_IMAGE:-nexusd-python:bookworm}"
PKGS="${NEXUSD_IMAGE_PKGS:-python3,python3-pytest}"
CACHE_DIR="${NEXUSD_CACHE_DIR:-/var/cache/nexusd}"
DOCKERD_LOG="${NEXUSD_DOCKERD_LOG:-/var/log/nexusd-dockerd.log}"
SUITE="bookworm"
START=$(date +%s)

say() { printf '[setup-sandbox] %s\n' "$*"; }
die() { printf '[setup-sandbox] ERROR: %s\n' "$*" >&2; exit 1; }

# debootstrap needs a Debian mirror: the one apt is configured with for $SUITE (or
# NEXUSD_DEBIAN_MIRROR). Reads what apt reads: sources.list and sources.list.d/*.list
# (one-line `deb [options] URI suite …`) and sources.list.d/*.sources (deb822 stanzas).
APT_DIR="${NEXUSD_APT_DIR:-/etc/apt}"
debian_mirror() {
    if [ -n "${NEXUSD_DEBIAN_MIRROR:-}" ]; then echo "$NEXUSD_DEBIAN_MIRROR"; return 0; fi
    local files=() f
    for f in "$APT_DIR/sources.list" "$APT_DIR"/sources.list.d/*.list "$APT_DIR"/sources.list.d/*.sources; do
        [ -f "$f" ] && files+=("$f")
    done
    [ "${#files[@]}" -gt 0 ] || return 1
    awk -v suite="$SUITE" '
        function flush() {
            if (deb && enabled) for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++)
                if (suites[j] == suite && uris[i] ~ /^(https?|file):/) { print uris[i]; found = 1; exit }
            deb = 0; enabled = 1; nu = 0; ns = 0
        }
        FNR == 1 { flush() }
        /^[ \t]*#/ { next }  # a comment line (not a blank one) leaves the stanza open
        FILENAME ~ /\.sources$/ {
            sub(/#.*/, "")
            if ($0 ~ /^[ \t]*$/) { flush(); next }
            key = tolower($1)
            if (key == "types:") { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
            else if (key == "uris:") { for (i = 2; i <= NF; i++) uris[++nu] = $i }
            else if (key == "suites:") { for (i = 2; i <= NF; i++) suites[++ns] = $i }
            else if (key == "enabled:") { enabled = (tolower($2) != "no") }
            next
        }
        {
            sub(/#.*/, "")
            if ($1 != "deb") next
            line = $0
            sub(/^[ \t]*deb[ \t]+/, "", line)
            if (line ~ /^\[/) sub(/^\[[^]]*\][ \t]*/, "", line)
            split(line, w, /[ \t]+/)
            if (w[2] == suite && w[1] ~ /^(https?|file):/) { print w[1]; found = 1; exit }
        }
        END { if (!found) flush(); exit !found }
    ' "${files[@]}"
}

if [ "${1:-}" = "--print-mirror" ]; then
    debian_mirror || die "no apt source in $APT_DIR serves the suite $SUITE; set NEXUSD_DEBIAN_MIRROR"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
else
    die "needs root (or sudo) to install packages and start dockerd"
fi

APT_UPDATED=0
apt_install() {
    # apt-get update only once per run, and only when something is missing.
    if [ "$APT_UPDATED" -eq 0 ]; then
        say "apt-get update"
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
        APT_UPDATED=1
    fi
    say "apt-get install $*"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# --- packages ---------------------------------------------------------------
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
if [ "${NEXUSD_SKIP_DOCKER:-0}" != "1" ]; then
    command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
    command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
fi
if [ "${#missing[@]}" -gt 0 ]; then
    apt_install "${missing[@]}"
else
    say "packages present: bwrap$([ "${NEXUSD_SKIP_DOCKER:-0}" = 1 ] || echo ', dockerd, debootstrap')"
fi

# --- bubblewrap -------------------------------------------------------------
if bwrap --ro-bind / / --unshare-all --die-with-parent true 2>/dev/null; then
    say "bwrap usable ($(bwrap --version))"
else
    say "WARNING: bwrap installed but cannot create namespaces here:"
    bwrap --ro-bind / / --unshare-all true || true
fi

if [ "${NEXUSD_SKIP_DOCKER:-0}" = "1" ]; then
    say "done in $(( $(date +%s) - START ))s (docker skipped)"
    exit 0
fi

# --- dockerd ----------------------------------------------------------------
docker_ok() { docker info >/dev/null 2>&1; }

# dockerd's own pidfile: no dependency on procps being installed.
dockerd_pid() {
    local pid
    pid=$(cat /var/run/docker.pid 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "$pid"; fi
}

start_dockerd() {
    # $@: extra dockerd flags. Waits up to 30 s for the engine to answer.
    say "starting dockerd $* (log: $DOCKERD_LOG)"
    $SUDO mkdir -p "$(dirname "$DOCKERD_LOG")"
    # setsid + nohup: the engine must outlive this script and its session.
    $SUDO setsid nohup dockerd "$@" >>"$DOCKERD_LOG" 2>&1 < /dev/null &
    local launcher=$!
    for _ in $(seq 1 60); do
        if docker_ok; then return 0; fi
        if ! kill -0 "$launcher" 2>/dev/null && [ -z "$(dockerd_pid)" ]; then return 1; fi
        sleep 0.5
    done
    return 1
}

stop_dockerd() {
    local pid
    pid=$(dockerd_pid)
    if [ -n "$pid" ]; then $SUDO kill "$pid" 2>/dev/null || true; fi
    for _ in $(seq 1 20); do
        if [ -z "$(dockerd_pid)" ]; then return 0; fi
        sleep 0.5
    done
}

if docker_ok; then
    say "docker engine reachable ($(docker version --format '{{.Server.Version}}' 2>/dev/null))"
else
    if [ -n "$(dockerd_pid)" ]; then
        say "dockerd running but not answering; restarting it"
        stop_dockerd
    fi
    # Containers (CI runners, VMs without netfilter) often refuse the default
    # bridge/iptables setup; checks never use the network, so drop it in turn.
    if start_dockerd || { stop_dockerd; start_dockerd --iptables=false --ip6tables=false --bridge=none; } \
        || { stop_dockerd; start_dockerd --iptables=false --ip6tables=false --bridge=none --storage-driver=vfs; }; then
        say "docker engine up ($(docker version --format '{{.Server.Version}}' 2>/dev/null), storage $(docker info --format '{{.Driver}}' 2>/dev/null))"
    else
        tail -n 30 "$DOCKERD_LOG" >&2 || true
        die "dockerd did not start; see $DOCKERD_LOG"
    fi
fi

# --- image ------------------------------------------------------------------
if docker image inspect "$IMAGE" >/dev/null 2>&1; then
    say "image $IMAGE present"
else
    safe_name=$(printf '%s' "$IMAGE-$PKGS" | tr -c 'A-Za-z0-9._-' '_')
    tarball="$CACHE_DIR/rootfs-$safe_name.tar"
    if [ ! -s "$tarball" ]; then
        mirror=$(debian_mirror) || die "no apt source serves the suite $SUITE, so debootstrap has no mirror: set NEXUSD_DEBIAN_MIRROR to a Debian mirror's URL (the one your other Debian machines use)"
        rootfs=$(mktemp -d /var/tmp/nexusd-rootfs.XXXXXX)
        trap '$SUDO rm -rf "$rootfs"' EXIT
        say "debootstrap --variant=minbase --include=$PKGS $SUITE (mirror $mirror)"
        $SUDO debootstrap --variant=minbase --include="$PKGS" "$SUITE" "$rootfs" "$mirror" >/dev/null
        # Apt caches and lists are dead weight inside a check image.
        $SUDO rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
        $SUDO mkdir -p "$CACHE_DIR"
        $SUDO tar -C "$rootfs" -cf "$tarball.tmp" .
        $SUDO mv "$tarball.tmp" "$tarball"
        say "rootfs cached at $tarball ($(du -h "$tarball" | cut -f1))"
    else
        say "using cached rootfs $tarball"
    fi
    say "docker import $tarball $IMAGE"
    docker import --change 'CMD ["/bin/sh"]' "$tarball" "$IMAGE" >/dev/null
fi

docker run --rm --network none --user 65534:65534 "$IMAGE" python3 -c 'import sys; print("image python", sys.version.split()[0])' \
    | sed 's/^/[setup-sandbox] /'
say "done in $(( $(date +%s) - START ))s"
