"""The deployment files (deploy/): the Kubernetes manifests validated against the Kubernetes JSON
schemas (`kubernetes-validate`, strict: an unknown field fails) and checked against each other and
against the real `cordon` (its flags, its reading of the ConfigMap's cordon.toml); the Containerfile
linted with hadolint and checked against the Makefile and Cargo.toml. The image itself is not built
here (no image registry to pull the base images from): docs/deploy.md.

`make test` runs these with CORDON_BIN (the built binary) and CORDON_GUEST_DIR (the built plugins)."""

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
KUBERNETES = REPO / "deploy" / "kubernetes"
CONTAINERFILE = REPO / "deploy" / "Containerfile"


def required_env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run these tests with `make test`", pytrace=False)
    return value


def manifests() -> dict:
    """Every resource of deploy/kubernetes/ (but the kustomization), by kind."""
    found = {}
    for path in sorted(KUBERNETES.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        for document in yaml.safe_load_all(path.read_text()):
            if document:
                found[document["kind"]] = document
    return found


def deployment():
    return manifests()["Deployment"]


def server_container():
    return next(c for c in deployment()["spec"]["template"]["spec"]["containers"] if c["name"] == "cordon")


def flag_value(args, flag):
    return args[args.index(flag) + 1]


@pytest.mark.parametrize("path", sorted(p.name for p in KUBERNETES.glob("*.yaml") if p.name != "kustomization.yaml"))
def test_each_manifest_is_valid_kubernetes(path):
    for document in yaml.safe_load_all((KUBERNETES / path).read_text()):
        kubernetes_validate.validate(document, kubernetes_validate.latest_version(), strict=True)


def test_the_kustomization_lists_every_manifest_but_the_secret_example():
    kustomization = yaml.safe_load((KUBERNETES / "kustomization.yaml").read_text())
    listed = set(kustomization["resources"])
    on_disk = {p.name for p in KUBERNETES.glob("*.yaml")} - {"kustomization.yaml", "secret.example.yaml"}
    assert listed == on_disk


def test_the_manifests_fit_together():
    found = manifests()
    pod = deployment()["spec"]["template"]
    spec = pod["spec"]
    server = server_container()
    assert deployment()["spec"]["replicas"] == 2
    # The Service reaches the pods, on the container's named port.
    service = found["Service"]
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    port_names = {port["name"]: port["containerPort"] for port in server["ports"]}
    assert service["spec"]["ports"][0]["targetPort"] in port_names
    assert found["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    # The probes ask the health endpoints on that port.
    assert server["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert server["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    # The config and lock come from the ConfigMap; the token from the Secret.
    volumes = {volume["name"]: volume for volume in spec["volumes"]}
    mounts = {mount["mountPath"]: mount for mount in server["volumeMounts"]}
    config = volumes[mounts["/config"]["name"]]["configMap"]["name"]
    assert config == found["ConfigMap"]["metadata"]["name"]
    assert {"cordon.toml", "cordon.lock"} <= set(found["ConfigMap"]["data"])
    args = server["args"]
    assert flag_value(args, "--config") == "/config/cordon.toml"
    assert flag_value(args, "--lock-file") == "/config/cordon.lock"
    env = {variable["name"]: variable for variable in server["env"]}
    token = env[flag_value(args, "--token-env")]["valueFrom"]["secretKeyRef"]
    secret = found["Secret"]
    assert token["name"] == secret["metadata"]["name"] and token["key"] in secret["stringData"]
    assert env["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    assert "$(POD_IP)" in args, "a scrape naming the pod by its IP passes the Host check"
    # The plugins the init container installs are the ones the server loads.
    sync = next(c for c in spec["initContainers"] if c["name"] == "sync-plugins")
    assert sync["args"][0] == "sync"
    assert flag_value(sync["args"], "--plugins") == flag_value(args, "--plugins") == "/plugins"
    assert flag_value(sync["args"], "--lock-file") == flag_value(args, "--lock-file")
    # Non-root, read-only root file system, nothing more.
    assert spec["securityContext"]["runAsNonRoot"] is True
    for container in [server, sync]:
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert container["securityContext"]["allowPrivilegeEscalation"] is False
        assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
        assert "memory" in container["resources"]["limits"]
    # Kubernetes waits long enough for the preStop pause and the drain.
    grace = int(flag_value(args, "--shutdown-grace").removesuffix("s"))
    pause = server["lifecycle"]["preStop"]["sleep"]["seconds"]
    assert spec["terminationGracePeriodSeconds"] >= pause + grace + 5


def help_text(*command) -> str:
    run = subprocess.run([required_env("CORDON_BIN"), *command, "--help"], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_the_server_takes_every_flag_the_deployment_gives_it():
    args = server_container()["args"]
    assert args[args.index("serve") + 1:args.index("serve") + 3] == ["--http", "0.0.0.0:8808"]
    known = help_text("serve")
    for flag in [arg for arg in args if arg.startswith("--")]:
        assert re.search(rf"\s{re.escape(flag)}\b", known), f"cordon serve has no {flag}"


def test_the_init_container_takes_its_flags():
    sync = next(c for c in deployment()["spec"]["template"]["spec"]["initContainers"] if c["name"] == "sync-plugins")
    run = subprocess.run([required_env("CORDON_BIN"), "sync", "--help"], capture_output=True, text=True, timeout=30)
    if run.returncode != 0:
        pytest.skip("this cordon has no `sync` command yet")
    for flag in [arg for arg in sync["args"] if arg.startswith("--")]:
        assert re.search(rf"\s{re.escape(flag)}\b", run.stdout), f"cordon sync has no {flag}"


def test_the_config_map_config_loads_in_cordon(tmp_path):
    """The ConfigMap's cordon.toml with the bundled plugins, its /data pointed at a directory here
    (and not locked: the example lock is a placeholder)."""
    guest = Path(required_env("CORDON_GUEST_DIR"))
    config = manifests()["ConfigMap"]["data"]["cordon.toml"]
    tomllib.loads(config)
    data = tmp_path / "data"
    data.mkdir()
    (data / "hello.txt").write_text("hello from the volume\n")
    local = config.replace('"/data"', f'"{data}"', 1).replace("locked = true", "locked = false")
    (tmp_path / "cordon.toml").write_text(local)
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    for name in ["fs", "guard", "redact"]:
        shutil.copy(guest / f"{name}.wasm", plugins / f"{name}.wasm")
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": os.environ.get("PATH", "")}
    run = subprocess.run([required_env("CORDON_BIN"), "--config", "cordon.toml", "--plugins", "plugins",
                          "call", "read_file", '{"path": "/data/hello.txt"}', "--json"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "hello from the volume" in run.stdout


def test_the_containerfile_passes_hadolint():
    hadolint = Path(sys.executable).parent / "hadolint"
    run = subprocess.run([str(hadolint), "--failure-threshold", "info", str(CONTAINERFILE)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_containerfile_builds_what_the_makefile_bundles_with_the_workspace_toolchain():
    text = CONTAINERFILE.read_text()
    bundled = re.search(r"^BUNDLED := (.+)$", (REPO / "Makefile").read_text(), re.M).group(1).split()
    build = re.search(r"--profile guest((?: -p \w+)+)", text).group(1).split()[1::2]
    assert build == bundled
    for name in bundled:
        assert f"target/wasm32-wasip2/guest/{name}.wasm" in text
    rust_version = tomllib.loads((REPO / "Cargo.toml").read_text())["workspace"]["package"]["rust-version"]
    assert f"rust:{rust_version}-" in text
    assert re.search(r"^USER [1-9]\d*:[1-9]\d*$", text, re.M), "a numeric non-root user (runAsNonRoot checks it)"
    assert '"serve", "--http", "0.0.0.0:8808"' in text
    ignore = (REPO / "deploy" / "Containerfile.dockerignore").read_text().split()
    assert "target" in ignore and ".git" in ignore
