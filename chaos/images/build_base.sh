#!/usr/bin/env bash
# Build the local docker images the chaos tests use, without any registry:
#
#   hookproof/base:latest       Debian minbase + python3 + python3-venv, made with
#                               debootstrap from this machine's own Debian mirror and
#                               loaded with `docker import`.
#   hookproof/receivers:latest  FROM hookproof/base, the project installed into a venv
#                               with the extras verifiers, postgres and examples.
#   hookproof/hookproof:latest  FROM hookproof/base, the top-level Dockerfile: the
#                               `hookproof` command as the entry point (load, postgres).
#
# Those are the default tags; on a docker daemon others share, give your own so theirs
# are not overwritten (the two images are built FROM the base tag given):
#   HOOKPROOF_BASE_IMAGE=me/base:dev HOOKPROOF_RECEIVERS_IMAGE=me/receivers:dev \
#   HOOKPROOF_IMAGE=me/hookproof:dev chaos/images/build_base.sh
# The tests that use the images read the same three variables.
#
# The debootstrapped rootfs is cached as a tarball under the cache dir, so a rerun
# only re-imports it (if the base image is gone) and rebuilds the receivers image
# (docker's layer cache keeps that fast when only the source changed).
#
# Usage: chaos/images/build_base.sh [--force-base] [--base-only]
# Env:   HOOKPROOF_BASE_IMAGE     the base image's tag (default: hookproof/base:latest)
#        HOOKPROOF_RECEIVERS_IMAGE the receivers image's tag (default: hookproof/receivers:latest)
#        HOOKPROOF_IMAGE          the hookproof image's tag (default: hookproof/hookproof:latest)
#        HOOKPROOF_CACHE_DIR      cache dir (default: ${XDG_CACHE_HOME:-~/.cache}/hookproof)
#        HOOKPROOF_DEBIAN_MIRROR  Debian mirror URL (default: read from apt's sources)
#        HOOKPROOF_BASE_SUITE     Debian suite for the base image (default: bookworm)
set -euo pipefail

BASE_IMAGE="${HOOKPROOF_BASE_IMAGE:-hookproof/base:latest}"
RECEIVERS_IMAGE="${HOOKPROOF_RECEIVERS_IMAGE:-hookproof/receivers:latest}"
TOOL_IMAGE="${HOOKPROOF_IMAGE:-hookproof/hookproof:latest}"
SUITE="${HOOKPROOF_BASE_SUITE:-bookworm}"
PACKAGES="python3 python3-venv"
CACHE_DIR="${HOOKPROOF_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hookproof}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"

force_base=0
base_only=0
for arg in "$@"; do
    case "$arg" in
        --force-base) force_base=1 ;;
        --base-only) base_only=1 ;;
        -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
        *) echo "build_base.sh: unknown argument: $arg" >&2; exit 2 ;;
    esac
done

log() { echo "[build_base] $*" >&2; }
die() { log "error: $*"; exit 1; }
now() { date +%s; }

# The first http(s)/ftp/file URI of an enabled "deb" source that carries a release
# suite (one without a dash, i.e. not -updates/-security/-backports), in apt's own
# reading order: sources.list, then sources.list.d/*.list and *.sources.
detect_mirror() {
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        case "$f" in
            *.sources)
                awk '
                    function flush() {
                        if (types ~ /(^| )deb( |$)/ && enabled != "no" && suites ~ /(^| )[a-z]+( |$)/ && uri != "")
                            { print uri; found = 1; exit }
                        types = ""; suites = ""; uri = ""; enabled = ""
                    }
                    /^[ \t]*#/ { next }
                    /^[ \t]*$/ { flush(); next }
                    tolower($1) == "types:"   { $1 = ""; types = $0 }
                    tolower($1) == "suites:"  { $1 = ""; suites = $0 }
                    tolower($1) == "uris:"    { uri = $2 }
                    tolower($1) == "enabled:" { enabled = tolower($2) }
                    END { if (!found) flush() }
                ' "$f"
                ;;
            *)
                awk '
                    /^[ \t]*deb[ \t]/ {
                        i = 2
                        if ($i ~ /^\[/) { while ($i !~ /\]$/ && i < NF) i++; i++ }
                        if ($(i + 1) ~ /^[a-z]+$/) { print $i; exit }
                    }
                ' "$f"
                ;;
        esac
    done | grep -E '^(https?|ftp|file)://' | head -n 1
}

build_rootfs() {
    local tarball="$1" mirror rootfs started
    command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
    mirror="${HOOKPROOF_DEBIAN_MIRROR:-$(detect_mirror || true)}"
    [ -n "$mirror" ] || die "no Debian mirror found in apt's sources; set HOOKPROOF_DEBIAN_MIRROR"
    rootfs="$(mktemp -d "$CACHE_DIR/rootfs.XXXXXX")"
    # shellcheck disable=SC2064
    trap "umount '$rootfs/proc' 2>/dev/null || true; rm -rf --one-file-system '$rootfs'" EXIT

    started=$(now)
    log "debootstrap --variant=minbase $SUITE from $mirror"
    debootstrap --variant=minbase "$SUITE" "$rootfs" "$mirror" >"$rootfs.log" 2>&1 \
        || { tail -n 30 "$rootfs.log" >&2; die "debootstrap failed (log: $rootfs.log)"; }
    rm -f "$rootfs.log"
    log "debootstrap took $(( $(now) - started ))s"

    started=$(now)
    log "chroot: apt-get install $PACKAGES"
    cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
    mount -t proc proc "$rootfs/proc"
    chroot "$rootfs" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
        sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends $PACKAGES && apt-get clean" \
        >&2
    umount "$rootfs/proc"
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/tmp/*
    : >"$rootfs/etc/resolv.conf"
    log "chroot apt-get install took $(( $(now) - started ))s"

    started=$(now)
    tar --numeric-owner -C "$rootfs" -cf "$tarball.partial" .
    mv "$tarball.partial" "$tarball"
    rm -rf --one-file-system "$rootfs"
    trap - EXIT
    log "rootfs tarball $(du -h "$tarball" | cut -f1) written in $(( $(now) - started ))s: $tarball"
}

image_label() {
    docker image inspect --format '{{ index .Config.Labels "org.hookproof.rootfs" }}' "$1" 2>/dev/null || true
}

build_base() {
    local key tarball started
    key="$(printf '%s|%s' "$SUITE" "$PACKAGES" | sha256sum | cut -c1-12)"
    tarball="$CACHE_DIR/rootfs-$SUITE-minbase-$key.tar"
    if [ "$force_base" = 1 ]; then rm -f "$tarball"; fi
    if [ -s "$tarball" ]; then
        log "using cached rootfs $tarball"
    else
        build_rootfs "$tarball"
    fi
    if [ "$force_base" = 0 ] && [ "$(image_label "$BASE_IMAGE")" = "$key" ]; then
        log "$BASE_IMAGE is up to date"
        return
    fi
    started=$(now)
    docker import \
        --change "LABEL org.hookproof.rootfs=$key" \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' \
        --change 'CMD ["/bin/bash"]' \
        "$tarball" "$BASE_IMAGE" >/dev/null
    log "docker import $BASE_IMAGE took $(( $(now) - started ))s"
}

# The build context: the repo's files as git sees them (tracked and untracked, minus
# ignored ones), plus the host's CA bundle so pip works behind a TLS-inspecting proxy.
make_context() {
    local ctx="$1" ca
    if git -C "$REPO" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        (cd "$REPO" && git ls-files -z --cached --others --exclude-standard \
            | xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' _ \
            | tar --null -T - -cf -) | tar -C "$ctx" -xf -
    else
        tar -C "$REPO" --exclude=.git --exclude='*.egg-info' --exclude=__pycache__ -cf - . | tar -C "$ctx" -xf -
    fi
    mkdir -p "$ctx/.build"
    ca="${PIP_CERT:-${SSL_CERT_FILE:-${REQUESTS_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}}}"
    if [ -f "$ca" ]; then cp "$ca" "$ctx/.build/ca.crt"; else : >"$ctx/.build/ca.crt"; fi
}

# build_image IMAGE DOCKERFILE: docker build FROM $BASE_IMAGE with the repo as context, on
# the host network.
build_image() {
    local image="$1" dockerfile="$2" ctx started args=(--build-arg "BASE_IMAGE=$BASE_IMAGE")
    ctx="$(mktemp -d)"
    # shellcheck disable=SC2064
    trap "rm -rf '$ctx'" EXIT
    make_context "$ctx"
    for var in PIP_INDEX_URL HTTP_PROXY HTTPS_PROXY NO_PROXY http_proxy https_proxy no_proxy; do
        if [ -n "${!var:-}" ]; then args+=(--build-arg "$var"); fi
    done
    started=$(now)
    log "docker build $image"
    docker build --network host ${args[@]+"${args[@]}"} -f "$dockerfile" -t "$image" "$ctx" >&2
    rm -rf "$ctx"
    trap - EXIT
    log "docker build $image took $(( $(now) - started ))s"
}

[ "$(id -u)" = 0 ] || die "run as root (debootstrap, chroot and mount need it)"
docker info >/dev/null 2>&1 || die "the docker daemon is not reachable"
mkdir -p "$CACHE_DIR"
exec 9>"$CACHE_DIR/build.lock"
flock -w 1800 9 || die "another build holds $CACHE_DIR/build.lock"

build_base
if [ "$base_only" = 0 ]; then
    build_image "$RECEIVERS_IMAGE" chaos/images/receivers.Dockerfile
    build_image "$TOOL_IMAGE" Dockerfile
fi
