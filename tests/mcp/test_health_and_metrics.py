"""`cordon serve --http` beside the MCP endpoint: the health probes a load balancer or Kubernetes
asks (`/healthz`, `/readyz`: no token, any `Host`, a foreign browser `Origin` refused), and
`/metrics` in the Prometheus text format, read with the Prometheus Python client's own parser,
whose call counter and latency histogram move with real calls from the MCP Python SDK."""

import httpx2 as httpx
import pytest
from mcp import Client
from prometheus_client.parser import text_string_to_metric_families

from conftest import HttpServer

pytestmark = pytest.mark.anyio

TOKEN = {"CORDON_TEST_TOKEN": "s3cret"}
BEARER = {"Authorization": "Bearer s3cret"}


def base(server) -> str:
    return server.url.removesuffix("/mcp")


def scrape(server, headers=None) -> dict:
    """The families of one scrape, by name, as Prometheus's own parser reads them."""
    response = httpx.get(base(server) + "/metrics", headers=headers or {}, timeout=10)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4"), response.headers
    return {family.name: family for family in text_string_to_metric_families(response.text)}


def sample(families, family, name, **labels) -> float:
    """The value of the sample `name` with exactly these labels (0 when there is none)."""
    for found in families[family].samples if family in families else []:
        if found.name == name and found.labels == labels:
            return found.value
    return 0.0


def test_the_probes_answer_without_a_token_and_whatever_the_host(cordon_bin, workspace):
    server = HttpServer(cordon_bin, workspace, ["--token-env", "CORDON_TEST_TOKEN"], env=TOKEN)
    try:
        for path, body in [("/healthz", "ok"), ("/readyz", "ready")]:
            answer = httpx.get(base(server) + path, timeout=10)
            assert answer.status_code == 200 and answer.text.strip() == body, answer.text
            # A kubelet names the pod by its address; no allowlist can know it in advance.
            by_address = httpx.get(base(server) + path, headers={"Host": "10.0.3.7:8808"}, timeout=10)
            assert by_address.status_code == 200, by_address.text
            # A foreign browser page is still refused.
            page = httpx.get(base(server) + path, headers={"Origin": "https://evil.example"}, timeout=10)
            assert page.status_code == 403 and page.json()["error"] == "forbidden", page.text
        # The MCP endpoint still wants the token.
        assert httpx.post(server.url, json={}, timeout=10).status_code == 401
    finally:
        server.stop()


async def test_calls_move_the_counter_and_the_histogram(http_server):
    before = scrape(http_server)
    async with Client(http_server.url, mode="legacy", cache=None) as client:
        for _ in range(3):
            assert not (await client.call_tool("echo", {"text": "hi"})).is_error
        assert (await client.call_tool("panic", {"message": "boom"})).is_error
        assert (await client.call_tool("echo", {"times": 99})).is_error
        assert (await client.call_tool("no_such_tool", {})).is_error
    after = scrape(http_server)

    def moved(name, **labels):
        return sample(after, "cordon_tool_calls", name, **labels) - sample(before, "cordon_tool_calls", name, **labels)

    assert after["cordon_tool_calls"].type == "counter"
    assert moved("cordon_tool_calls_total", tool="echo", outcome="ok") == 3
    assert moved("cordon_tool_calls_total", tool="echo", outcome="invalid_arguments") == 1
    assert moved("cordon_tool_calls_total", tool="panic", outcome="trap") == 1
    # A name the server does not offer is not a label value of its own.
    assert moved("cordon_tool_calls_total", tool="(unknown)", outcome="not_found") == 1
    assert not any(s.labels.get("tool") == "no_such_tool" for s in after["cordon_tool_calls"].samples)

    histogram = after["cordon_tool_call_duration_seconds"]
    assert histogram.type == "histogram"
    family = "cordon_tool_call_duration_seconds"

    def latency(name, **labels):
        return sample(after, family, name, **labels) - sample(before, family, name, **labels)

    assert latency("cordon_tool_call_duration_seconds_count", tool="echo") == 4
    assert latency("cordon_tool_call_duration_seconds_bucket", tool="echo", le="+Inf") == 4
    assert 0 < latency("cordon_tool_call_duration_seconds_sum", tool="echo") < 30
    buckets = [s for s in histogram.samples if s.name.endswith("_bucket") and s.labels["tool"] == "echo"]
    bounds = [float(s.labels["le"]) for s in buckets]
    assert bounds == sorted(bounds) and bounds[-1] == float("inf")
    counts = [s.value for s in buckets]
    assert counts == sorted(counts), "buckets are cumulative"

    for gauge in ["cordon_sandboxes_in_use", "cordon_sandboxes_max", "cordon_mcp_requests_in_flight",
                  "cordon_ready", "process_start_time_seconds"]:
        assert gauge in after, sorted(after)
    assert sample(after, "cordon_sandboxes_max", "cordon_sandboxes_max") == 64
    assert sample(after, "cordon_ready", "cordon_ready") == 1
    assert sample(after, "process_start_time_seconds", "process_start_time_seconds") > 1.7e9


async def test_gauges_show_a_call_in_flight(http_server):
    import anyio

    async with Client(http_server.url, mode="legacy", cache=None) as client:
        async with anyio.create_task_group() as group:
            group.start_soon(client.call_tool, "sleep", {"millis": 1500})
            await anyio.sleep(0.7)
            during = scrape(http_server)
    assert sample(during, "cordon_sandboxes_in_use", "cordon_sandboxes_in_use") >= 1
    assert sample(during, "cordon_mcp_requests_in_flight", "cordon_mcp_requests_in_flight") >= 1
    after = scrape(http_server)
    assert sample(after, "cordon_sandboxes_in_use", "cordon_sandboxes_in_use") == 0


def test_metrics_take_the_token_unless_made_public(cordon_bin, workspace):
    server = HttpServer(cordon_bin, workspace, ["--token-env", "CORDON_TEST_TOKEN"], env=TOKEN)
    try:
        refused = httpx.get(base(server) + "/metrics", timeout=10)
        assert refused.status_code == 401 and refused.json()["error"] == "invalid_request", refused.text
        assert "cordon_tool_calls" in scrape(server, BEARER)
        # Like /mcp, /metrics checks the Host (add the name Prometheus uses with --allow-host).
        foreign = httpx.get(base(server) + "/metrics", headers={**BEARER, "Host": "evil.example.com"}, timeout=10)
        assert foreign.status_code == 403 and "--allow-host" in foreign.json()["error_description"], foreign.text
    finally:
        server.stop()
    public = HttpServer(cordon_bin, workspace, ["--token-env", "CORDON_TEST_TOKEN", "--metrics-public",
                                                "--allow-host", "10.0.3.7"], env=TOKEN)
    try:
        assert "cordon_tool_calls" in scrape(public)
        assert httpx.get(base(public) + "/metrics", headers={"Host": "10.0.3.7:8808"}, timeout=10).status_code == 200
        assert httpx.get(base(public) + "/metrics", headers={"Host": "evil.example.com"}, timeout=10).status_code == 403
        assert httpx.post(public.url, json={}, timeout=10).status_code == 401, "only the metrics are public"
    finally:
        public.stop()
