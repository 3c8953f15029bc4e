//! A result that would lift to far more host memory than the guest spent on it (3,000,000 empty
//! strings: 24 MB in the guest) is refused while it is copied out, not after it was built whole:
//! `cordon serve`'s peak memory stays low for one such call and for four at once, the calls end
//! in a clear limit result, and the server goes on answering. Smaller results of the same
//! function still come back whole. Flags, which wasmtime charges a byte or two per name while
//! each costs the host a `String`, get a budget smaller by as much (a red team's `list<flags>`
//! took 821 MB for a call with a 32 MiB budget).

use crate::support::Workspace;
use crate::support::stdio_server::Server;
use serde_json::{Value, json};

fn many_strings_component() -> Vec<u8> {
    wat::parse_str(include_str!("../fixtures_wat/many_strings.wat"))
        .expect("tests/fixtures_wat/many_strings.wat assembles")
}

fn workspace() -> Workspace {
    workspace_with("")
}

fn workspace_with(config: &str) -> Workspace {
    let ws = Workspace::new()
        .config(config)
        .raw_plugin("strings", &many_strings_component());
    // Compiled into the cache first, so the servers' peaks are the calls'.
    let listed = ws.cordon(&["list"]);
    assert!(
        listed.stdout.contains("many_strings"),
        "{}{}",
        listed.stdout,
        listed.stderr
    );
    ws
}

fn assert_refused_as_too_large(answer: &Value) {
    let result = &answer["result"];
    assert_eq!(result["isError"], true, "{answer}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("more data at once") && text.contains("`limits.output`"),
        "{text}"
    );
    assert!(result.get("structuredContent").is_none(), "{answer}");
}

#[test]
fn three_million_strings_are_refused_while_lifted_one_call_and_four_at_once() {
    let ws = workspace();

    let mut one = Server::start(&ws);
    let before = one.peak_rss();
    one.call(1, "many_strings", json!({"count": 3_000_000}));
    let [answer] = <[Value; 1]>::try_from(one.answers(&[1])).unwrap();
    assert_refused_as_too_large(&answer);
    let peak_one = one.peak_rss();
    // The server goes on: a result of the same function that fits comes back whole.
    one.call(2, "many_strings", json!({"count": 1_000}));
    let [small] = <[Value; 1]>::try_from(one.answers(&[2])).unwrap();
    assert_eq!(small["result"]["isError"], false, "{small}");
    let listed: Value =
        serde_json::from_str(small["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(listed, json!(vec![""; 1_000]));
    drop(one);

    let mut four = Server::start(&ws);
    for id in 1..=4 {
        four.call(id, "many_strings", json!({"count": 3_000_000}));
    }
    for answer in four.answers(&[1, 2, 3, 4]) {
        assert_refused_as_too_large(&answer);
    }
    let peak_four = four.peak_rss();
    eprintln!(
        "peak RSS of cordon serve: {} MiB at start, {} MiB after one call, {} MiB after four at once",
        before >> 20,
        peak_one >> 20,
        peak_four >> 20
    );
    assert!(peak_one < 300 << 20, "one call: {} MiB", peak_one >> 20);
    assert!(peak_four < 600 << 20, "four calls: {} MiB", peak_four >> 20);
}

#[test]
fn a_large_result_within_the_budgets_still_comes_back_whole() {
    // 600,000 empty strings: 1.8 MB of JSON, within the output limit, and within the call's lift
    // budget. Bounding the host's copies refuses nothing that fits (the reply budget, 64 KiB by
    // default, is raised so all of it reaches the client).
    let ws = workspace_with("[agent]\nmax_result_bytes = \"4MiB\"\n");
    let mut server = Server::start(&ws);
    server.call(1, "many_strings", json!({"count": 600_000}));
    let [answer] = <[Value; 1]>::try_from(server.answers(&[1])).unwrap();
    let result = &answer["result"];
    assert_eq!(result["isError"], false, "{}", &answer.to_string()[..400]);
    let items = result["structuredContent"]["result"]
        .as_array()
        .expect("structured list");
    assert_eq!(items.len(), 600_000);
}

#[test]
fn a_list_of_flags_is_held_to_its_budget_by_what_flags_cost_the_host() {
    let flags = wat::parse_str(include_str!("../fixtures_wat/many_flags.wat"))
        .expect("tests/fixtures_wat/many_flags.wat assembles");
    let ws = Workspace::new().raw_plugin("flags", &flags);
    assert!(ws.cordon(&["list"]).stdout.contains("many_flags"));
    let mut server = Server::start(&ws);
    // 420,000 elements of 32 flags: 1.7 MB in the guest, 13 million names on the host.
    server.call(1, "many_flags", json!({"count": 420_000}));
    let [answer] = <[Value; 1]>::try_from(server.answers(&[1])).unwrap();
    assert_refused_as_too_large(&answer);
    let peak = server.peak_rss();
    eprintln!(
        "peak RSS of cordon serve after 420,000 x 32 flags: {} MiB",
        peak >> 20
    );
    assert!(peak < 200 << 20, "one call: {} MiB", peak >> 20);
    // A small result of the same type comes back whole, every flag named.
    server.call(2, "many_flags", json!({"count": 3}));
    let [small] = <[Value; 1]>::try_from(server.answers(&[2])).unwrap();
    assert_eq!(small["result"]["isError"], false, "{small}");
    let text = small["result"]["content"][0]["text"].as_str().unwrap();
    let items: Vec<Vec<String>> = serde_json::from_str(text).unwrap();
    assert_eq!(items.len(), 3);
    assert!(
        items.iter().all(|set| set.len() == 32 && set[31] == "ff"),
        "{text}"
    );
}
