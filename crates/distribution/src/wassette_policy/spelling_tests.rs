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
        ("512", "512MiB"),
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
    // A size cordon cannot read would leave the plugin cordon's default: the policy is refused.
    for written in ["\"512 megs\"", "\"1Ti\"", "\"512m\"", "[512]", "\"0.5Gi\""] {
        let dir = tempfile::tempdir().unwrap();
        let refused = propose(
            &format!("permissions:\n  resources:\n    memory: {written}\n"),
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
    ] {
        let proposed = env_proposal(deny);
        assert_eq!(proposed.env, ["GREETING"], "{deny}: {proposed:?}");
    }
    // One cordon cannot read (a NUL in it) covers every key.
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
