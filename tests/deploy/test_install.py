"""`make install`: cordon installed into a PREFIX (with `cargo install`, as the README says) runs by
its installed path: `--version`, and `cordon test` of a bundled plugin. The development build is
installed (CARGO_INSTALL_ARGS=--debug), so this reuses what `make test` already compiled; the
release profile is the same command without it.

`make test` runs this with CORDON_GUEST_DIR (the built plugins)."""

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_make_install_puts_a_working_cordon_in_prefix_bin(tmp_path):
    guest = os.environ.get("CORDON_GUEST_DIR")
    if not guest:
        pytest.fail("CORDON_GUEST_DIR is not set: run these tests with `make test`", pytrace=False)
    prefix = tmp_path / "prefix"
    installed = subprocess.run(
        ["make", "--no-print-directory", "install", f"PREFIX={prefix}", "CARGO_INSTALL_ARGS=--debug"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    cordon = prefix / "bin" / "cordon"
    assert cordon.is_file(), f"make install wrote no {cordon}"
    # prefix/bin is not on PATH here, so the Makefile says how to add it.
    assert f"{prefix}/bin is not on PATH" in installed.stdout, installed.stdout

    version = subprocess.run([cordon, "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("cordon "), version

    tested = subprocess.run(
        [cordon, "test", str(Path(guest) / "json_query.wasm")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "passed: 0 failed" in tested.stdout, tested.stdout
