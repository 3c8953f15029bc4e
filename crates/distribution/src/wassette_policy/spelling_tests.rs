//! Tests that a policy written in a form cordon does not read is refused or read the widest
//! way, never read as granting more: unknown or miscased keys, YAML merge keys, a network rule
//! with both a host and a range, memory sizes in every unit, environment references in every
//! shell's syntax, storage denies through dangling links and in other spellings, and policies
//! too large to check.

use super::*;

fn env_proposal(deny: &str) -> ProposedGrants {
    let dir = tempfile::tempdir().unwrap();
    propose(
        &format!(
            "permissions:\n  environment:\n    allow:\n      - key: \"API_KEY\"\n      - key: \"GREETING\"\n    deny:\n      - key: {deny}\n"
        ),
        dir.path(),
    )
    .unwrap()
}

#[test]
fn a_key_cordon_does_not_read_inside_permissions_refuses_the_policy() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    for policy in [
        // A miscased `deny` would have been ignored, and with it the deny.
        "permissions:\n  storage:\n    allow:\n      - uri: \"fs://data\"\n        access: [\"read\"]\n    Deny:\n      - uri: \"fs://data\"\n",
        "permissions:\n  storage:\n    allow:\n      - uri: \"fs://data\"\n        access: [\"read\"]\n    <<: { deny: [ { uri: \"fs://data\" } ] }\n",
        "permissions:\n  network:\n    allow:\n      - host: \"api.example.com\"\n    deny:\n      - hosts: \"api.example.com\"\n",
        "permissions:\n  enviroment:\n    deny:\n      - key: API_KEY\n",
        "permissions:\n  environment:\n    allow:\n      - key: API_KEY\n        value: x\n",
        "permissions:\n  resources:\n    limits:\n      memroy: 64Mi\n",
        "base: &base { permissions: { network: { deny: [ { host: \"*\" } ] } } }\n<<: *base\npermissions:\n  network:\n    allow:\n      - host: \"api.example.com\"\n",
    ] {
        let refused = propose(policy, dir.path()).unwrap_err();
        assert!(
            refused.contains("refused") || refused.contains("merge key"),
            "{policy}: {refused}"
        );
    }
    // Wassette's own top-level keys are read; others are listed as left out.
    let proposed = propose(
        "version: \"1.0\"\ndescription: x\nx-extension: { a: 1 }\npermissions: {}\n",
        dir.path(),
    )
    .unwrap();
    assert_eq!(proposed.left_out.len(), 1, "{proposed:?}");
    assert!(proposed.left_out[0].contains("x-extension"), "{proposed:?}");
}

#[test]
fn a_network_deny_with_a_host_and_a_range_is_read_as_both() {
    let dir = tempfile::tempdir().unwrap();
    let proposed = propose(
        "permissions:\n  network:\n    allow:\n      - host: \"10.1.2.3\"\n      - host: \"api.example.com\"\n    deny:\n      - host: \"api.example.com\"\n        cidr: \"10.0.0.0/8\"\n      - {}\n",
        dir.path(),
    )
    .unwrap();
    assert!(proposed.origins.is_empty(), "{proposed:?}");
    // An allow with both is an address range, which cordon does not grant.
    let proposed = propose(
        "permissions:\n  network:\n    allow:\n      - host: \"api.example.com\"\n        cidr: \"10.0.0.0/8\"\n",
        dir.path(),
    )
    .unwrap();
    assert!(proposed.origins.is_empty(), "{proposed:?}");
}

#[test]
fn memory_in_any_unit_is_read_down_never_left_to_the_default() {
    for (written, limit) in [
        ("\"512Mi\"", "512MiB"),
        ("\"512MiB\"", "512MiB"),
        ("\"1Gi\"", "1GiB"),
        ("\"64MB\"", "62500KiB"),
        ("\"512M\"", "500000KiB"),
        ("\"1GB\"", "976562KiB"),
        ("\"2048KiB\"", "2MiB"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let proposed = propose(
            &format!("permissions:\n  resources:\n    limits:\n      memory: {written}\n"),
            dir.path(),
        )
        .unwrap();
        assert_eq!(proposed.memory.as_deref(), Some(limit), "{written}");
    }
    // A number with no unit: megabytes (decimal) in Wassette's own field, bytes (the smaller reading)
    // in the Kubernetes-style limits.
    let dir = tempfile::tempdir().unwrap();
    let proposed = propose("permissions:\n  resources:\n    memory: 512\n", dir.path()).unwrap();
    assert_eq!(proposed.memory.as_deref(), Some("500000KiB"));
    let proposed = propose(
        "permissions:\n  resources:\n    limits:\n      memory: \"1048576\"\n",
        dir.path(),
    )
    .unwrap();
    assert_eq!(proposed.memory.as_deref(), Some("1MiB"));
    // A size cordon cannot read, or one no component runs in, would leave the plugin cordon's
    // default: the policy is refused.
    for written in [
        "\"512 megs\"",
        "\"1Ti\"",
        "\"512m\"",
        "[512]",
        "\"0.5Gi\"",
        "\"1K\"",
        "0",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let refused = propose(
            &format!("permissions:\n  resources:\n    memory: {written}\n"),
            dir.path(),
        )
        .unwrap_err();
        assert!(refused.contains("resources memory"), "{written}: {refused}");
    }
    for written in ["1000", "\"1000\"", "\"64000\""] {
        let dir = tempfile::tempdir().unwrap();
        let refused = propose(
            &format!("permissions:\n  resources:\n    limits:\n      memory: {written}\n"),
            dir.path(),
        )
        .unwrap_err();
        assert!(refused.contains("resources memory"), "{written}: {refused}");
    }
}

#[test]
fn an_env_deny_written_as_any_shells_reference_or_case_covers_the_key() {
    for deny in [
        "\"$env:API_KEY\"",
        "\"$(API_KEY)\"",
        "\"$$API_KEY\"",
        "\"%API_KEY%\"",
        "\"api_key\"",
        "\"Api_*\"",
        // Red team, round 8: cmd's delayed expansion, a quoted reference, an assignment.
        "\"!API_KEY!\"",
        "'\"$API_KEY\"'",
        "\"API_KEY=\"",
    ] {
        let proposed = env_proposal(deny);
        assert_eq!(proposed.env, ["GREETING"], "{deny}: {proposed:?}");
    }
    // One with glob syntax cordon does not read (braces), or a NUL, covers every key.
    assert!(env_proposal("\"${API_KEY:-x}\"").env.is_empty());
    assert!(env_proposal("\"API_KEY\\0\"").env.is_empty());
    assert_eq!(env_proposal("\"OTHER\"").env, ["API_KEY", "GREETING"]);
}

#[test]
fn a_deny_through_a_dangling_symlink_reaches_where_it_points() {
    // Red team, round 7: `dl -> data/sub`, where sub does not exist yet, and a deny of
    // dl/secret granted data read-write; the plugin made sub/secret and read it.
    for deny in [
        "fs://dl/secret",
        "fs://dl*/secret",
        "fs://dl",
        "fs://dl/../data",
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("data")).unwrap();
        std::os::unix::fs::symlink("data/sub", dir.path().join("dl")).unwrap();
        let proposed = propose(
            &format!(
                "permissions:\n  storage:\n    allow:\n      - uri: \"fs://data\"\n        access: [\"read\", \"write\"]\n    deny:\n      - uri: \"{deny}\"\n"
            ),
            dir.path(),
        )
        .unwrap();
        assert!(proposed.dirs.is_empty(), "{deny}: {proposed:?}");
    }
}

#[test]
fn a_storage_deny_in_a_windows_or_host_spelling_leaves_its_directory_out() {
    for deny in [
        "fs://d\\\\ata/secret",
        "fs://data\\\\secret",
        "fs://localhost/BASE/data/secret",
        "fs://data/secret\\0",
        // Red team, round 8: readings composed (an escape inside a host spelling), any case of
        // localhost, a bare localhost, shell expansions and extended globs.
        "fs://%6Cocalhost/BASE/data/secret",
        "fs://data%5Csecret",
        "fs://localhost\\\\BASE\\\\data\\\\secret",
        "fs://LOCALHOST/BASE/data",
        "fs://localhost",
        "fs://localhost./BASE/data",
        "fs://@localhost/BASE/data",
        "fs://$HOME/../BASE/data",
        "fs://@(data)/secret",
        "fs://dat[a]/secret",
        "fs://DATA/secret",
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("data/secret")).unwrap();
        let deny = deny.replace("BASE", dir.path().to_str().unwrap().trim_start_matches('/'));
        let proposed = propose(
            &format!(
                "permissions:\n  storage:\n    allow:\n      - uri: \"fs://data\"\n        access: [\"read\"]\n    deny:\n      - uri: \"{deny}\"\n"
            ),
            dir.path(),
        )
        .unwrap();
        assert!(proposed.dirs.is_empty(), "{deny}: {proposed:?}");
    }
}

#[test]
fn a_policy_too_large_to_check_is_refused_or_left_out_not_checked_for_minutes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    let allows: String = (0..300)
        .map(|n| format!("      - uri: \"fs://data/a{n}\"\n        access: [\"read\"]\n"))
        .collect();
    let refused = propose(
        &format!("permissions:\n  storage:\n    allow:\n{allows}"),
        dir.path(),
    )
    .unwrap_err();
    assert!(refused.contains("storage.allow has 300 rules"), "{refused}");
    // Many globs over a large tree share one budget of entries looked at: once it is spent,
    // the rest are held to reach everywhere, and the allow is left out.
    for n in 0..1_200 {
        std::fs::create_dir_all(dir.path().join(format!("tree/d{}/e{n}", n % 40))).unwrap();
    }
    let denies: String = (0..200)
        .map(|n| format!("      - uri: \"fs://tree/**/x{n}\"\n"))
        .collect();
    let proposed = propose(
        &format!(
            "permissions:\n  storage:\n    allow:\n      - uri: \"fs://data\"\n        access: [\"read\"]\n    deny:\n{denies}"
        ),
        dir.path(),
    )
    .unwrap();
    assert!(proposed.dirs.is_empty(), "{proposed:?}");
    assert!(
        proposed.left_out[0].contains("too many paths"),
        "{proposed:?}"
    );
}

#[test]
fn a_deny_with_dots_after_a_part_that_may_become_a_link_reaches_everywhere() {
    // Red team, round 8: `a/x` did not exist, so `a/x/../../b/secret` was read lexically as
    // `b/secret` and `a` granted read-write; a link `a/x -> y/z` made later points the deny at
    // `a/b/secret`, inside the grant.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("a/y/z")).unwrap();
    let proposed = propose(
        "permissions:\n  storage:\n    allow:\n      - uri: \"fs://a\"\n        access: [\"read\", \"write\"]\n    deny:\n      - uri: \"fs://a/x/../../b/secret\"\n",
        dir.path(),
    )
    .unwrap();
    assert!(proposed.dirs.is_empty(), "{proposed:?}");
    assert!(
        proposed.left_out.join("\n").contains("`..`"),
        "{proposed:?}"
    );
}

#[test]
fn an_allow_is_granted_only_as_the_directory_it_plainly_names() {
    // Red team, round 8: `link/../pub` was granted as `./pub` while the kernel reads it as
    // `deep/pub`; a trailing ideographic space was trimmed into another directory's name.
    let dir = tempfile::tempdir().unwrap();
    for made in ["pub", "deep/pub", "data", "deep/x"] {
        std::fs::create_dir_all(dir.path().join(made)).unwrap();
    }
    std::os::unix::fs::symlink("deep/x", dir.path().join("link")).unwrap();
    let base = dir.path().to_str().unwrap();
    for allow in [
        format!("fs://{base}/link/../pub"),
        "fs://link/../pub".to_string(),
        "fs://data\u{3000}".to_string(),
        "fs://data%20".to_string(),
        "fs://LOCALHOST/data".to_string(),
    ] {
        let proposed = propose(
            &format!(
                "permissions:\n  storage:\n    allow:\n      - uri: \"{allow}\"\n        access: [\"read\"]\n"
            ),
            dir.path(),
        )
        .unwrap();
        assert!(proposed.dirs.is_empty(), "{allow}: {proposed:?}");
        assert_eq!(proposed.left_out.len(), 1, "{allow}: {proposed:?}");
    }
    // A plain name, Unicode letters included, is granted as written.
    std::fs::create_dir_all(dir.path().join("données")).unwrap();
    let proposed = propose(
        "permissions:\n  storage:\n    allow:\n      - uri: \"fs://données\"\n        access: [\"read\"]\n",
        dir.path(),
    )
    .unwrap();
    assert_eq!(proposed.dirs.len(), 1, "{proposed:?}");
}

#[test]
fn a_deny_through_thousands_of_self_links_is_checked_without_overflowing_the_stack() {
    // Red team, round 8: `l -> .` and a deny of `l/l/l/…(8000)/x` overflowed the stack. At
    // 200 parts the deny is followed to `data`; at 8000 it is too long to read, so it reaches
    // everywhere.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    std::os::unix::fs::symlink(".", dir.path().join("l")).unwrap();
    for parts in [200, 8000] {
        let deny = format!("fs://{}data", "l/".repeat(parts));
        let proposed = propose(
            &format!(
                "permissions:\n  storage:\n    allow:\n      - uri: \"fs://data\"\n        access: [\"read\"]\n    deny:\n      - uri: \"{deny}\"\n"
            ),
            dir.path(),
        )
        .unwrap();
        assert!(proposed.dirs.is_empty(), "{parts}: {proposed:?}");
    }
    let proposed = propose(
        "permissions:\n  storage:\n    allow:\n      - uri: \"fs://data\"\n        access: [\"read\"]\n    deny:\n      - uri: \"fs://l/**/x\"\n",
        dir.path(),
    )
    .unwrap();
    assert!(proposed.dirs.is_empty(), "{proposed:?}");
}

/// The storage proposal for an allow of `data` (read-write) and the deny `deny`, in a directory
/// `prepare` fills first.
fn data_with_deny(deny: &str, prepare: impl FnOnce(&Path)) -> ProposedGrants {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data/secret")).unwrap();
    std::fs::create_dir_all(dir.path().join("other")).unwrap();
    prepare(dir.path());
    let deny = deny.replace("BASE", dir.path().to_str().unwrap().trim_start_matches('/'));
    propose(
        &format!(
            "permissions:\n  storage:\n    allow:\n      - uri: \"fs://data\"\n        access: [\"read\", \"write\"]\n    deny:\n      - uri: \"{deny}\"\n"
        ),
        dir.path(),
    )
    .unwrap()
}

#[test]
fn a_glob_part_that_may_match_dot_or_dot_dot_is_followed_there() {
    // Red team, round 9: a directory lists neither `.` nor `..`, so `other/.?/data/secret`
    // matched nothing on disk and `data` was granted; the plugin read data/secret.
    for deny in [
        "fs:///BASE/other/.?/data/secret/**",
        "fs:///BASE/other/*/data/secret",
        "fs:///BASE/other/??/data/secret",
        "fs:///BASE/other/.*/data",
        "fs:///BASE/other/*./data",
        "fs:///BASE/other/{..,x}/data",
        "fs:///BASE/data/secret/./*",
    ] {
        let proposed = data_with_deny(deny, |_| {});
        assert!(proposed.dirs.is_empty(), "{deny}: {proposed:?}");
    }
    // Under a directory that does not exist yet, `..` could go anywhere a link made there leads.
    let proposed = data_with_deny("fs:///BASE/none/x/.?/y", |_| {});
    assert!(proposed.dirs.is_empty(), "{proposed:?}");
}

#[test]
fn a_deny_naming_this_machine_as_its_host_is_read_from_the_root() {
    // Red team, round 9: `fs://<hostname>/…`, `fs://127.0.0.1/…` and
    // `fs://localhost.localdomain/…` were read as relative paths.
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    for host in [
        hostname.trim(),
        "127.0.0.1",
        "localhost.localdomain",
        "LocalHost",
    ] {
        let deny = format!("fs://{host}/BASE/data/secret");
        let proposed = data_with_deny(&deny, |_| {});
        assert!(proposed.dirs.is_empty(), "{deny}: {proposed:?}");
    }
    // Another host's name is a relative directory, as Wassette reads it.
    let proposed = data_with_deny("fs://other/secret", |_| {});
    assert_eq!(proposed.dirs.len(), 1, "{proposed:?}");
}

#[test]
fn a_dangling_link_whose_target_has_dots_reaches_everywhere() {
    // Red team, round 9: `b -> data/l/../../c` with `data/l` missing and a deny of `b/secret`
    // granted data; a link data/l -> y/z made later pointed the deny at data/c/secret.
    let proposed = data_with_deny("fs://b/secret", |dir| {
        std::os::unix::fs::symlink("data/l/../../c", dir.join("b")).unwrap();
    });
    assert!(proposed.dirs.is_empty(), "{proposed:?}");
    assert!(
        proposed
            .left_out
            .join("\n")
            .contains("a link cordon cannot follow"),
        "{proposed:?}"
    );
}

#[test]
fn a_directory_under_another_path_is_found_by_what_it_is_on_disk() {
    // A bind mount shows `data` under a second path that no symlink explains: the deny's start
    // and the allowed directory are compared by device and inode too.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data/secret")).unwrap();
    std::os::unix::fs::symlink("data", dir.path().join("m")).unwrap();
    let start = storage_paths::PathStart {
        literal: dir.path().join("m/secret").to_string_lossy().into_owned(),
        glob: false,
    };
    let reached = file_identity::AllowedIdentity::of(&dir.path().join("data"))
        .reached_by(&file_identity::StartIdentity::of(&start));
    assert!(reached);
    let elsewhere = file_identity::AllowedIdentity::of(&dir.path().join("data/secret/.."))
        .reached_by(&file_identity::StartIdentity::of(
            &storage_paths::PathStart {
                literal: "/nonexistent/place".into(),
                glob: false,
            },
        ));
    assert!(!elsewhere);
}

#[test]
fn an_allow_of_a_directorys_entries_is_not_a_grant_of_all_of_it() {
    // Red team, round 9: `fs://data/*` (its entries, one level) was granted as all of data.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    let proposed = propose(
        "permissions:\n  storage:\n    allow:\n      - uri: \"fs://data/*\"\n        access: [\"read\"]\n",
        dir.path(),
    )
    .unwrap();
    assert!(proposed.dirs.is_empty(), "{proposed:?}");
}

#[test]
fn both_memory_fields_give_the_smaller_limit() {
    // Red team, round 9: `resources.memory: 100` beside `limits.memory: "4Gi"` proposed 4GiB.
    let dir = tempfile::tempdir().unwrap();
    let proposed = propose(
        "permissions:\n  resources:\n    memory: 100\n    limits:\n      memory: \"4Gi\"\n",
        dir.path(),
    )
    .unwrap();
    assert_eq!(proposed.memory.as_deref(), Some("97656KiB"));
}

#[test]
fn one_access_may_be_written_alone() {
    // Red team, round 11 (usability): `access: "read"` refused the whole policy.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    let proposed = propose(
        "permissions:\n  storage:\n    allow:\n      - uri: \"fs://data\"\n        access: read\n",
        dir.path(),
    )
    .unwrap();
    assert_eq!(proposed.dirs.len(), 1, "{proposed:?}");
    assert!(!proposed.dirs[0].read_write);
    // A write-only deny written alone still makes the grant read-only.
    let proposed = propose(
        "permissions:\n  storage:\n    allow:\n      - uri: \"fs://data\"\n        access: [read, write]\n    deny:\n      - uri: \"fs://data\"\n        access: write\n",
        dir.path(),
    )
    .unwrap();
    assert!(
        proposed.dirs.iter().all(|dir| !dir.read_write),
        "{proposed:?}"
    );
}
