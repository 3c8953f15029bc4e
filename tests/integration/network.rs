//! Outbound HTTP by grant: local servers on 127.0.0.1, granted explicitly by IP and port. Refusals
//! happen before connecting (the servers count every request they see), secrets are added by the
//! host and never seen by the guest, responses are bounded in size and time, sockets stay off.

use crate::support::{Workspace, kind, text};
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::routing::get;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Default)]
struct Seen {
    requests: AtomicUsize,
    authorization: Mutex<Vec<String>>,
    in_flight: AtomicUsize,
    most_in_flight: AtomicUsize,
}

/// A local test server; `redirect_to` is where `/away` points.
async fn serve(redirect_to: Option<SocketAddr>) -> (SocketAddr, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let away = redirect_to
        .map(|to| format!("http://{to}/headers"))
        .unwrap_or_default();
    let app = axum::Router::new()
        .route("/text", get(|| async { ([("content-type", "text/plain")], "hello from the server") }))
        .route("/page", get(|| async { ([("content-type", "text/html")], "<html><head><style>p{}</style><script>x()</script></head><body><h1>Title</h1><p>First &amp; second</p></body></html>") }))
        .route("/headers", get(|State(seen): State<Arc<Seen>>, headers: HeaderMap| async move {
            let value = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or("<none>").to_string();
            seen.authorization.lock().unwrap().push(value);
            "recorded"
        }))
        .route("/reflect", get(|headers: HeaderMap| async move {
            let value = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or("<none>").to_string();
            format!("you sent: {value}")
        }))
        .route("/home", get(|| async { (axum::http::StatusCode::FOUND, [("location", "/text")]) }))
        .route("/away", get(move || { let away = away.clone(); async move { (axum::http::StatusCode::FOUND, [("location", away)]).into_response() } }))
        .route("/big", get(|| async { "x".repeat(200_000) }))
        .route("/slow", get(|| async { tokio::time::sleep(std::time::Duration::from_secs(10)).await; "late" }))
        .route("/held", get(|State(seen): State<Arc<Seen>>| async move {
            let now = seen.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            seen.most_in_flight.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            seen.in_flight.fetch_sub(1, Ordering::SeqCst);
            "held"
        }))
        .route("/binary", get(|| async { ([("content-type", "application/octet-stream")], vec![0u8, 1, 2, 3]) }))
        .route("/missing", get(|| async { (axum::http::StatusCode::NOT_FOUND, "no such page") }))
        .layer(axum::middleware::from_fn_with_state(seen.clone(), count))
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (address, seen)
}

async fn count(
    State(seen): State<Arc<Seen>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    seen.requests.fetch_add(1, Ordering::SeqCst);
    next.run(request).await
}

fn workspace(grants: &str) -> Workspace {
    Workspace::new()
        .plugin("http_fetch", "http_fetch")
        .plugin("fixture_probe", "probe")
        .config(grants)
}

/// Runs `cordon call` off the async runtime (the servers run on it).
async fn call(
    ws: &Arc<Workspace>,
    tool: &str,
    args: String,
    env: Vec<(&'static str, &'static str)>,
) -> serde_json::Value {
    let (ws, tool) = (ws.clone(), tool.to_string());
    tokio::task::spawn_blocking(move || {
        ws.cordon_with_env(&["call", &tool, &args, "--json"], &env)
            .json()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_granted_origin_works_and_html_becomes_text() {
    let (server, _) = serve(None).await;
    let ws = Arc::new(workspace(&format!(
        "[plugins.http_fetch]\nhttp = [{{ origin = \"http://{server}\" }}]\n"
    )));
    let page = call(
        &ws,
        "http_fetch",
        format!(r#"{{"url": "http://{server}/page"}}"#),
        vec![],
    )
    .await;
    assert_eq!(text(&page), "Title\nFirst & second", "{page}");
    assert_eq!(page["details"]["status"], 200);
    let followed = call(
        &ws,
        "http_fetch",
        format!(r#"{{"url": "http://{server}/home"}}"#),
        vec![],
    )
    .await;
    assert_eq!(
        text(&followed),
        "hello from the server",
        "a redirect inside the grant is followed: {followed}"
    );
    let missing = call(
        &ws,
        "http_fetch",
        format!(r#"{{"url": "http://{server}/missing"}}"#),
        vec![],
    )
    .await;
    assert_eq!(kind(&missing), "tool_error");
    assert!(text(&missing).contains("HTTP 404"), "{missing}");
    let binary = call(
        &ws,
        "http_fetch",
        format!(r#"{{"url": "http://{server}/binary"}}"#),
        vec![],
    )
    .await;
    assert!(text(&binary).contains("not text"), "{binary}");
    let cut = call(
        &ws,
        "http_fetch",
        format!(r#"{{"url": "http://{server}/big", "max_chars": 100}}"#),
        vec![],
    )
    .await;
    assert!(
        text(&cut).ends_with(
            "[truncated: showing 100 of 200000 characters; raise max_chars to see more]"
        ),
        "{cut}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_ports_hosts_schemes_and_methods_are_refused_before_connecting() {
    let (granted, _) = serve(None).await;
    let (other, other_seen) = serve(None).await;
    let ws = Arc::new(workspace(&format!(
        "[plugins.http_fetch]\nhttp = [{{ origin = \"http://{granted}\", path_prefix = \"/text\" }}]\n"
    )));
    let port = other.port();
    for url in [
        format!("http://{other}/text"),
        format!("http://localhost:{}/text", granted.port()),
        format!("https://{granted}/text"),
        format!("http://{granted}/page"),
        format!("http://127.0.0.2:{port}/text"),
    ] {
        let result = call(&ws, "http_fetch", format!(r#"{{"url": "{url}"}}"#), vec![]).await;
        assert_eq!(kind(&result), "capability_denied", "{url}: {result}");
        assert!(text(&result).contains("was refused"), "{result}");
    }
    assert_eq!(
        other_seen.requests.load(Ordering::SeqCst),
        0,
        "a refused request reached the other server"
    );

    let nothing_granted = Arc::new(workspace(""));
    let result = call(
        &nothing_granted,
        "http_fetch",
        format!(r#"{{"url": "http://{granted}/text"}}"#),
        vec![],
    )
    .await;
    assert_eq!(kind(&result), "capability_denied", "{result}");
    let log = tokio::task::spawn_blocking({
        let ws = nothing_granted.clone();
        move || {
            ws.cordon(&[
                "call",
                "http_fetch",
                &format!(r#"{{"url": "http://{granted}/text"}}"#),
            ])
            .stderr
        }
    })
    .await
    .unwrap();
    assert!(
        log.contains("refused an HTTP request") && log.contains("no HTTP grants"),
        "the refusal is logged: {log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_resolving_to_a_private_address_needs_an_explicit_grant() {
    let (server, seen) = serve(None).await;
    let by_name = format!(r#"{{"url": "http://localhost:{}/text"}}"#, server.port());
    let implicit = Arc::new(workspace(&format!(
        "[plugins.http_fetch]\nhttp = [{{ origin = \"http://localhost:{}\" }}]\n",
        server.port()
    )));
    let refused = call(&implicit, "http_fetch", by_name.clone(), vec![]).await;
    assert_eq!(kind(&refused), "capability_denied", "{refused}");
    assert!(
        text(&refused).contains("private or local address"),
        "{refused}"
    );
    assert_eq!(seen.requests.load(Ordering::SeqCst), 0);

    let explicit = Arc::new(workspace(&format!(
        "[plugins.http_fetch]\nhttp = [{{ origin = \"http://localhost:{}\", private = true }}]\n",
        server.port()
    )));
    let allowed = call(&explicit, "http_fetch", by_name, vec![]).await;
    assert_eq!(text(&allowed), "hello from the server", "{allowed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_an_ungranted_origin_is_refused() {
    let (outside, outside_seen) = serve(None).await;
    let (server, _) = serve(Some(outside)).await;
    let ws = Arc::new(workspace(&format!(
        "[plugins.http_fetch]\nhttp = [{{ origin = \"http://{server}\" }}]\n"
    )));
    let result = call(
        &ws,
        "http_fetch",
        format!(r#"{{"url": "http://{server}/away"}}"#),
        vec![],
    )
    .await;
    assert_eq!(kind(&result), "capability_denied", "{result}");
    assert!(text(&result).contains(&outside.to_string()), "{result}");
    assert_eq!(outside_seen.requests.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_are_injected_by_the_host_and_invisible_to_the_guest() {
    let (server, seen) = serve(None).await;
    let ws = Arc::new(workspace(&format!(
        "[plugins.probe]\nhttp = [{{ origin = \"http://{server}\", headers = {{ Authorization = \"Bearer ${{env:CORDON_TEST_API_TOKEN}}\" }} }}]\n"
    )));
    let env = vec![("CORDON_TEST_API_TOKEN", "s3cret-value")];
    let forged = call(&ws, "http_get", format!(r#"{{"url": "http://{server}/headers", "headers": {{"Authorization": "Bearer forged"}}}}"#), env.clone()).await;
    assert_eq!(text(&forged), "recorded", "{forged}");
    assert_eq!(
        *seen.authorization.lock().unwrap(),
        ["Bearer s3cret-value"],
        "the host's secret replaced the guest's header"
    );

    let probe_env = call(
        &ws,
        "env_get",
        r#"{"name": "CORDON_TEST_API_TOKEN"}"#.to_string(),
        env.clone(),
    )
    .await;
    assert_eq!(text(&probe_env), "<unset>");
    let logs = tokio::task::spawn_blocking({
        let ws = ws.clone();
        move || {
            ws.cordon_with_env(
                &[
                    "-vvv",
                    "call",
                    "http_get",
                    &format!(r#"{{"url": "http://{server}/headers"}}"#),
                    "--json",
                ],
                &[("CORDON_TEST_API_TOKEN", "s3cret-value")],
            )
        }
    })
    .await
    .unwrap();
    assert!(
        !logs.stderr.contains("s3cret-value") && !logs.stdout.contains("s3cret-value"),
        "the secret leaked into output or logs"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_a_granted_origin_reflects_is_masked_in_the_result() {
    // The origin echoes the header the host added: the guest reads it back, but the result the
    // model or client sees, and everything cordon prints, has it masked.
    let (server, _seen) = serve(None).await;
    let ws = Arc::new(workspace(&format!(
        "[plugins.http_fetch]\nhttp = [{{ origin = \"http://{server}\", headers = {{ Authorization = \"Bearer ${{env:CORDON_TEST_API_TOKEN}}\" }} }}]\n"
    )));
    let env = vec![("CORDON_TEST_API_TOKEN", "reflected-s3cret-value")];
    let result = call(
        &ws,
        "http_fetch",
        format!(r#"{{"url": "http://{server}/reflect"}}"#),
        env,
    )
    .await;
    let shown = result.to_string();
    assert!(
        shown.contains("you sent: [REDACTED:secret]") && !shown.contains("reflected-s3cret"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reflected_secret_cut_short_by_the_tool_or_the_host_shows_none_of_it() {
    // The tool cuts its text at the model's max_chars one byte before the secret's end (it cuts
    // between words, so the token goes whole), and the host cuts a result at its size budget
    // after masking it: neither cut leaves the secret's head to read.
    let (server, _seen) = serve(None).await;
    let secret = "reflected-s3cret-value-0123";
    let shown_len = "you sent: Bearer ".len() + secret.len() - 1;
    for (limits, max_chars) in [
        ("", Some(shown_len)),
        ("[agent]\nmax_result_bytes = \"40B\"\n", None),
    ] {
        let ws = Arc::new(workspace(&format!(
            "[plugins.http_fetch]\nhttp = [{{ origin = \"http://{server}\", headers = {{ Authorization = \"Bearer ${{env:CORDON_TEST_API_TOKEN}}\" }} }}]\n{limits}"
        )));
        let args = match max_chars {
            Some(max) => format!(r#"{{"url": "http://{server}/reflect", "max_chars": {max}}}"#),
            None => format!(r#"{{"url": "http://{server}/reflect"}}"#),
        };
        let result = call(
            &ws,
            "http_fetch",
            args,
            vec![("CORDON_TEST_API_TOKEN", secret)],
        )
        .await;
        let shown = result.to_string();
        assert!(
            !shown.contains("reflected-s3cret"),
            "{limits}{max_chars:?}: {result}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_is_not_sent_to_another_origin_after_a_redirect() {
    let (other, other_seen) = serve(None).await;
    let (server, seen) = serve(Some(other)).await;
    let ws = Arc::new(workspace(&format!(
        "[plugins.http_fetch]\nhttp = [\n  {{ origin = \"http://{server}\", headers = {{ Authorization = \"Bearer ${{env:CORDON_TEST_API_TOKEN}}\" }} }},\n  {{ origin = \"http://{other}\" }},\n]\n"
    )));
    let result = call(
        &ws,
        "http_fetch",
        format!(r#"{{"url": "http://{server}/away"}}"#),
        vec![("CORDON_TEST_API_TOKEN", "s3cret-value")],
    )
    .await;
    assert_eq!(text(&result), "recorded", "{result}");
    assert_eq!(seen.requests.load(Ordering::SeqCst), 1);
    assert_eq!(
        *other_seen.authorization.lock().unwrap(),
        ["<none>"],
        "the secret followed the redirect"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn big_responses_are_cut_and_slow_servers_time_out() {
    let (server, _) = serve(None).await;
    let ws = Arc::new(workspace(&format!(
        "[plugins.http_fetch]\nhttp = [{{ origin = \"http://{server}\" }}]\nlimits = {{ http_response = \"64KiB\", http_timeout = \"500ms\" }}\n"
    )));
    let big = call(
        &ws,
        "http_fetch",
        format!(r#"{{"url": "http://{server}/big"}}"#),
        vec![],
    )
    .await;
    assert_eq!(kind(&big), "tool_error", "{big}");
    assert!(
        text(&big).contains("limit") && text(&big).contains("65536 bytes"),
        "{big}"
    );
    let started = std::time::Instant::now();
    let slow = call(
        &ws,
        "http_fetch",
        format!(r#"{{"url": "http://{server}/slow"}}"#),
        vec![],
    )
    .await;
    assert!(text(&slow).contains("timed out"), "{slow}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
}

/// Regression: a response body left unread once held its request's slot, so a guest waiting for
/// its responses in another order than the host granted slots waited for ever (a timeout).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_waiting_for_responses_last_to_first_is_not_starved_by_the_bound() {
    let (server, seen) = serve(None).await;
    let ws = Arc::new(workspace(&format!(
        "[plugins.probe]\nhttp = [{{ origin = \"http://{server}\" }}]\nlimits = {{ http_requests = 2, timeout = \"15s\" }}\n"
    )));
    let result = call(
        &ws,
        "http_parallel",
        format!(r#"{{"url": "http://{server}/held", "count": 6, "reverse": true}}"#),
        vec![],
    )
    .await;
    assert_eq!(text(&result), "6 ok", "{result}");
    assert!(seen.most_in_flight.load(Ordering::SeqCst) <= 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_of_one_call_are_bounded() {
    for (limit, expected) in [(2, 2), (4, 4)] {
        let (server, seen) = serve(None).await;
        let ws = Arc::new(workspace(&format!(
            "[plugins.probe]\nhttp = [{{ origin = \"http://{server}\" }}]\nlimits = {{ http_requests = {limit} }}\n"
        )));
        let result = call(
            &ws,
            "http_parallel",
            format!(r#"{{"url": "http://{server}/held", "count": 6}}"#),
            vec![],
        )
        .await;
        assert_eq!(text(&result), "6 ok", "{result}");
        assert_eq!(
            seen.most_in_flight.load(Ordering::SeqCst),
            expected,
            "http_requests = {limit}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sockets_and_name_lookup_are_denied_to_every_plugin() {
    let (server, seen) = serve(None).await;
    let ws = Arc::new(workspace(&format!(
        "[plugins.probe]\nhttp = [{{ origin = \"http://{server}\" }}]\n"
    )));
    let tcp = call(
        &ws,
        "tcp_connect",
        format!(r#"{{"address": "{server}"}}"#),
        vec![],
    )
    .await;
    assert_eq!(tcp["isError"], true, "{tcp}");
    let dns = call(
        &ws,
        "dns_lookup",
        r#"{"address": "localhost:80"}"#.to_string(),
        vec![],
    )
    .await;
    assert_eq!(dns["isError"], true, "{dns}");
    assert_eq!(seen.requests.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_reading_an_unset_variable_refuses_its_plugin_only() {
    let (server, seen) = serve(None).await;
    let ws = Arc::new(workspace(&format!(
        "[plugins.probe]\nhttp = [{{ origin = \"http://{server}\", headers = {{ Authorization = \"Bearer ${{env:CORDON_TEST_UNSET_TOKEN}}\" }} }}]\nsecrets = {{ api = \"${{env:CORDON_TEST_UNSET_TOKEN}}\" }}\n\n[plugins.http_fetch]\nhttp = [{{ origin = \"http://{server}\" }}]\n"
    )));
    let listed = {
        let ws = ws.clone();
        tokio::task::spawn_blocking(move || ws.cordon(&["list"]))
            .await
            .unwrap()
    };
    // Refused, so `cordon list` exits 1, as for any refused plugin.
    assert_eq!(listed.code, 1, "{}{}", listed.stdout, listed.stderr);
    assert!(
        listed.stdout.contains("probe.wasm: its grant in cordon.toml reads the environment variable CORDON_TEST_UNSET_TOKEN, not set where cordon runs"),
        "{}",
        listed.stdout
    );
    assert!(listed.stdout.contains("http_fetch"), "{}", listed.stdout);
    // The other plugin works; the refused one's tool is not there, and nothing was sent for it.
    let page = call(
        &ws,
        "http_fetch",
        format!(r#"{{"url": "http://{server}/page"}}"#),
        vec![],
    )
    .await;
    assert_eq!(page["details"]["status"], 200, "{page}");
    let probe = call(
        &ws,
        "http_get",
        format!(r#"{{"url": "http://{server}/headers"}}"#),
        vec![],
    )
    .await;
    assert_eq!(probe["isError"], true, "{probe}");
    assert!(seen.authorization.lock().unwrap().is_empty());
    // Set, the same config loads the plugin.
    let set = call(
        &ws,
        "http_get",
        format!(r#"{{"url": "http://{server}/headers"}}"#),
        vec![("CORDON_TEST_UNSET_TOKEN", "now-it-is-set")],
    )
    .await;
    assert_eq!(text(&set), "recorded", "{set}");
}
