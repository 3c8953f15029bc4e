//! Resources and prompts a plugin serves (contract 0.4), through `cordon list`, `cordon read` and
//! `cordon prompt`: listed with their plugin, read in the plugin's sandbox with its grants (a file
//! in a granted directory, a read outside the grants refused as `capability_denied`), bytes and
//! text, configured secrets masked, prompts filled in with their arguments checked, every read
//! in the audit log.

use crate::support::Workspace;

const TOKEN: &str = "tok-offers-0123456789abcdef";

fn workspace() -> Workspace {
    Workspace::new()
        .plugin("fixture_offers", "offers")
        .file("notes/todo.md", "- write the report\n")
        .file("notes/done.md", "- nothing yet\n")
        .config(
            "[audit]\npath = \"audit.jsonl\"\n\n[plugins.offers]\ndirs = [{ host = \"notes\", guest = \"/notes\", mode = \"ro\" }]\nenv = [\"OFFERS_API_TOKEN\"]\n",
        )
}

fn read(ws: &Workspace, uri: &str) -> crate::support::Run {
    ws.cordon_with_env(&["read", uri, "--json"], &[("OFFERS_API_TOKEN", TOKEN)])
}

#[test]
fn cordon_list_shows_resources_templates_and_prompts_with_their_plugin() {
    let ws = workspace();
    let listed = ws.cordon(&["list", "--json"]).json();
    let resources = listed["resources"].as_array().unwrap();
    assert_eq!(resources.len(), 2, "{listed}");
    assert_eq!(resources[0]["uri"], "docs://guide");
    assert_eq!(resources[0]["mimeType"], "text/markdown");
    assert_eq!(resources[0]["title"], "House guide");
    assert_eq!(resources[0]["plugin"], "offers");
    let templates: Vec<&str> = listed["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap())
        .collect();
    assert_eq!(
        templates,
        [
            "notes:///{+path}",
            "file:///{+path}",
            "env://{name}",
            "fail://{name}"
        ]
    );
    let prompt = &listed["prompts"][0];
    assert_eq!(prompt["name"], "review");
    assert_eq!(prompt["arguments"][0]["name"], "file");
    assert_eq!(prompt["arguments"][0]["required"], true);
    assert_eq!(
        prompt["arguments"][0]["description"],
        "The note to review, a path under /notes."
    );
    assert_eq!(prompt["arguments"][1]["name"], "focus");
    assert_eq!(prompt["arguments"][1]["required"], false);
    let plugin = &listed["plugins"][0];
    assert_eq!(plugin["contract"], "0.4.0");

    let text = ws.cordon(&["list"]).stdout;
    assert!(text.contains("Resources (2):"), "{text}");
    assert!(text.contains("notes:///{+path}  [offers] note"), "{text}");
    assert!(text.contains("review(file, focus?)  [offers]"), "{text}");
}

#[test]
fn resources_are_read_in_the_plugins_sandbox_with_its_grants() {
    let ws = workspace();
    let guide = read(&ws, "docs://guide").json();
    assert_eq!(guide["plugin"], "offers");
    assert_eq!(guide["contents"][0]["uri"], "docs://guide");
    assert_eq!(guide["contents"][0]["mimeType"], "text/markdown");
    assert!(
        guide["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("-- checked")
    );

    let logo = read(&ws, "docs://logo").json();
    assert_eq!(logo["contents"][0]["blob"], "AAEC/w==", "{logo}");

    // A file in the granted directory, through the template.
    let note = read(&ws, "notes:///todo.md").json();
    assert_eq!(note["contents"][0]["text"], "- write the report\n");
    assert_eq!(note["contents"][0]["mimeType"], "text/plain");
    let raw = ws.cordon(&["read", "notes:///done.md", "--raw"]);
    assert_eq!(raw.stdout, "- nothing yet\n", "{}", raw.stderr);

    // Outside the grants: refused by the host, named as such, nothing of the file read.
    std::fs::write(ws.path().join("outside.txt"), "never read").unwrap();
    let outside_path = ws.path().join("outside.txt");
    let outside = read(&ws, &format!("file://{}", outside_path.display()));
    assert_ne!(outside.code, 0);
    assert!(
        outside
            .stderr
            .contains("outside the directories granted to it")
            && outside.stderr.contains("/notes (read-only)"),
        "{}",
        outside.stderr
    );
    assert!(!outside.stdout.contains("never read") && !outside.stderr.contains("never read"));

    // A URI no plugin serves.
    let unknown = read(&ws, "docs://nothing");
    assert_ne!(unknown.code, 0);
    assert!(
        unknown
            .stderr
            .contains("no plugin serves resource \"docs://nothing\""),
        "{}",
        unknown.stderr
    );
}

#[test]
fn a_configured_secret_in_a_resource_comes_back_masked() {
    let ws = workspace();
    let env = read(&ws, "env://OFFERS_API_TOKEN");
    assert_eq!(env.code, 0, "{}", env.stderr);
    assert!(!env.stdout.contains(TOKEN), "{}", env.stdout);
    assert!(env.stdout.contains("[REDACTED"), "{}", env.stdout);
}

#[test]
fn prompts_are_filled_in_with_their_arguments_checked() {
    let ws = workspace();
    let filled = ws.cordon(&["prompt", "review", "file=todo.md", "focus=brevity"]);
    assert_eq!(filled.code, 0, "{}", filled.stderr);
    assert_eq!(
        filled.stdout,
        "user: Review notes:///todo.md for brevity.\nassistant: I will read it first.\n"
    );
    let json = ws
        .cordon(&["prompt", "review", "file=todo.md", "--json"])
        .json();
    assert_eq!(json["description"], "Review of todo.md");
    assert_eq!(
        json["messages"][0]["content"]["text"],
        "Review notes:///todo.md for clarity."
    );

    let missing = ws.cordon(&["prompt", "review"]);
    assert_ne!(missing.code, 0);
    assert!(
        missing.stderr.contains(
            "prompt \"review\" needs argument \"file\"; it takes: file (required), focus"
        ),
        "{}",
        missing.stderr
    );
    let unknown = ws.cordon(&["prompt", "review", "file=a", "tone=dry"]);
    assert!(
        unknown.stderr.contains("takes no argument \"tone\""),
        "{}",
        unknown.stderr
    );
}

#[test]
fn every_read_and_prompt_is_in_the_audit_log() {
    let ws = workspace();
    assert_eq!(read(&ws, "notes:///todo.md").code, 0);
    assert_eq!(ws.cordon(&["prompt", "review", "file=todo.md"]).code, 0);
    let log = std::fs::read_to_string(ws.path().join("audit.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let read = records
        .iter()
        .find(|r| r["event"] == "resource_read")
        .unwrap_or_else(|| panic!("{log}"));
    assert_eq!(read["uri"], "notes:///todo.md");
    assert_eq!(read["plugin"], "offers");
    assert_eq!(read["outcome"], "ok");
    assert_eq!(read["bytes"], 19);
    assert!(
        records
            .iter()
            .any(|r| r["event"] == "prompt_get" && r["prompt"] == "review")
    );
}
