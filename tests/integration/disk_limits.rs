//! Disk use through read-write grants is bounded per call (`limits.disk_write`, default 256 MiB;
//! `limits.files_created`, default 10,000): every way a guest can write or create (std writes,
//! `descriptor.write`, append streams, `set-size` to a sparse terabyte, files, directories,
//! symlinks) is charged before it reaches the disk, a call past a bound ends as `out_of_disk`
//! naming the limit, and the host carries on. And a guest in `sync` (fsync) cannot hold its call
//! past the deadline by more than the host's grace.

use crate::support::{Workspace, kind, text};

fn hog(limits: &str) -> Workspace {
    Workspace::new()
        .plugin("fixture_disk_hog", "hog")
        .file("out/.keep", "")
        .config(&format!(
            "[plugins.hog]\ndirs = [{{ host = \"out\", guest = \"/out\", mode = \"rw\" }}]\nlimits = {{ timeout = \"20s\"{limits} }}\n"
        ))
}

fn size_of(ws: &Workspace, name: &str) -> u64 {
    std::fs::metadata(ws.path().join("out").join(name)).map_or(0, |m| m.len())
}

#[test]
fn every_way_of_writing_stops_at_the_per_call_limit() {
    let ws = hog(", disk_write = \"4MiB\"");
    for via in ["std", "descriptor", "append"] {
        let name = format!("big-{via}");
        let result = ws.call(
            "write_bytes",
            &format!(r#"{{"file": "{name}", "bytes": 16777216, "via": "{via}"}}"#),
        );
        assert_eq!(kind(&result), "out_of_disk", "{via}: {result}");
        assert!(
            text(&result).contains("more than 4 MiB")
                && text(&result).contains("limits.disk_write"),
            "{result}"
        );
        assert_eq!(result["details"]["limitBytes"], 4 << 20);
        let on_disk = size_of(&ws, &name).max(size_of(&ws, &format!("{name}.std")));
        assert!(on_disk <= 4 << 20, "{via} wrote {on_disk} bytes");
    }
    let within = ws.call(
        "write_bytes",
        r#"{"file": "small", "bytes": 3145728, "via": "descriptor"}"#,
    );
    assert_eq!(
        text(&within),
        "wrote 3145728",
        "each call has the whole budget: {within}"
    );
}

#[test]
fn growing_a_file_to_a_sparse_terabyte_counts_and_the_default_limit_applies() {
    let ws = hog("");
    let result = ws.call("grow", r#"{"file": "sparse", "size": 1099511627776}"#);
    assert_eq!(kind(&result), "out_of_disk", "{result}");
    assert!(text(&result).contains("more than 256 MiB"), "{result}");
    assert_eq!(size_of(&ws, "sparse"), 0, "the resize never happened");
    let shrink_then_grow = ws.call("grow", r#"{"file": "sparse", "size": 1048576}"#);
    assert_eq!(
        text(&shrink_then_grow),
        "grew to 1048576",
        "{shrink_then_grow}"
    );
    // One byte written a terabyte past the end makes the same sparse file.
    for via in ["descriptor", "stream"] {
        let poked = ws.call(
            "poke",
            &format!(r#"{{"file": "poked-{via}", "offset": 1099511627776, "via": "{via}"}}"#),
        );
        assert_eq!(kind(&poked), "out_of_disk", "{via}: {poked}");
        assert_eq!(size_of(&ws, &format!("poked-{via}")), 0);
    }
}

#[test]
fn files_directories_and_links_created_stop_at_the_per_call_limit() {
    let ws = hog(", files_created = 40");
    for what in ["files", "dirs", "symlinks"] {
        let result = ws.call(
            "create_many",
            &format!(r#"{{"kind": "{what}", "count": 1000, "prefix": "{what}"}}"#),
        );
        assert_eq!(kind(&result), "out_of_disk", "{what}: {result}");
        assert!(
            text(&result).contains("more than 40 files, directories and links")
                && text(&result).contains("limits.files_created"),
            "{result}"
        );
        let made = std::fs::read_dir(ws.path().join("out"))
            .unwrap()
            .filter(|entry| {
                entry
                    .as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with(what)
            })
            .count();
        assert!(made <= 40, "{what}: {made} made");
    }
    let fine = ws.call(
        "create_many",
        r#"{"kind": "dirs", "count": 30, "prefix": "again"}"#,
    );
    assert_eq!(text(&fine), "created 30", "the host carries on: {fine}");
}

#[test]
fn every_entry_created_counts_its_block_against_the_bytes_written() {
    // An empty directory or file takes a block of disk (4 KiB on ext4): 100 of them are 400 KiB,
    // past a 64 KiB budget, although not one byte was written to a file.
    let ws = hog(", disk_write = \"64KiB\"");
    for what in ["dirs", "files"] {
        let result = ws.call(
            "create_many",
            &format!(r#"{{"kind": "{what}", "count": 100, "prefix": "{what}"}}"#),
        );
        assert_eq!(kind(&result), "out_of_disk", "{what}: {result}");
        assert!(text(&result).contains("limits.disk_write"), "{result}");
        let made = std::fs::read_dir(ws.path().join("out"))
            .unwrap()
            .filter(|entry| {
                entry
                    .as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with(what)
            })
            .count();
        assert!(
            made <= 16,
            "{what}: {made} entries made under a 64 KiB budget"
        );
    }
}

#[test]
fn a_guest_in_fsync_cannot_hold_its_call_past_the_deadline() {
    // Each round writes 128 MiB in 64 KiB pieces and fsyncs it, for a call limited to 1 s: on the
    // calling thread the fsync under way at the deadline held the call until the kernel answered
    // (up to 300 ms late here, seconds on a busy disk). Off the async workers, the call ends at its
    // deadline: the host allows 100 ms at most, and a few ms is what it takes.
    let ws = hog("").config(
        "[plugins.hog]\ndirs = [{ host = \"out\", guest = \"/out\", mode = \"rw\" }]\nlimits = { timeout = \"1s\", disk_write = \"8GiB\" }\n[audit]\npath = \"audit.jsonl\"\n",
    );
    for round in 0..3 {
        let result = ws.call("sync_loop", r#"{"file": "synced", "bytes": 134217728}"#);
        assert_eq!(kind(&result), "timeout", "{result}");
        let audit = std::fs::read_to_string(ws.path().join("audit.jsonl")).unwrap();
        let line: serde_json::Value =
            serde_json::from_str(audit.lines().nth(round).unwrap()).unwrap();
        let took = line["durationMs"].as_u64().unwrap();
        assert!(
            took < 1000 + 60,
            "the call took {took} ms for its 1 s limit: a blocking host call held it"
        );
    }
}
