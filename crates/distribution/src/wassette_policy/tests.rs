//! Tests of the Wassette policy import: a category with any deny grants none of its allows, an
//! allow of a category without denies is proposed as narrowly as cordon grants or left out with
//! the reason, and a policy cordon cannot read is refused.

use super::*;

/// A policy directory holding `data/secret/`, `other/`, `file.txt` and `link -> data`.
fn policy_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data/secret")).unwrap();
    std::fs::create_dir_all(dir.path().join("other")).unwrap();
    std::fs::write(dir.path().join("file.txt"), "x").unwrap();
    std::os::unix::fs::symlink(dir.path().join("data"), dir.path().join("link")).unwrap();
    dir
}

#[test]
fn a_category_with_any_deny_grants_none_of_its_allows() {
    let dir = policy_dir();
    let policy = "permissions:\n  storage:\n    allow:\n      - { uri: \"fs://data/**\", access: [read, write] }\n      - { uri: \"fs://other\", access: read }\n    deny: STORAGE\n  network:\n    allow:\n      - host: api.example.com\n      - cidr: 10.0.0.0/8\n    deny: NETWORK\n  environment:\n    allow: [{ key: API_KEY }, { key: GREETING }]\n    deny: ENVIRONMENT\n";
    // Whatever a deny names, however it is written, even when it names nothing that is allowed.
    for (category, deny) in [
        ("STORAGE", "[{ uri: \"fs:///elsewhere/**\" }]"),
        (
            "STORAGE",
            "[{ uri: \"fs://data/secret\", access: [write] }]",
        ),
        ("STORAGE", "[{}]"),
        ("NETWORK", "[{ host: \"unrelated.example.org\" }]"),
        ("NETWORK", "[{ cidr: \"192.168.0.0/16\" }]"),
        ("ENVIRONMENT", "[{ key: UNRELATED }]"),
        ("ENVIRONMENT", "[{ key: \"$API_KEY\" }]"),
    ] {
        let text = ["STORAGE", "NETWORK", "ENVIRONMENT"]
            .iter()
            .fold(policy.to_string(), |text, name| {
                text.replace(name, if *name == category { deny } else { "[]" })
            });
        let proposed = propose(&text, dir.path()).unwrap();
        // Dirs, origins and env granted: all of them but the denied category's (checked whole
        // in the next test).
        let granted = [
            proposed.dirs.len(),
            proposed.origins.len(),
            proposed.env.len(),
        ];
        let expected = match category {
            "STORAGE" => [0, 1, 2],
            "NETWORK" => [2, 0, 2],
            _ => [2, 1, 0],
        };
        assert_eq!(granted, expected, "{deny}: {proposed:?}");
        let refusals: Vec<&String> = proposed
            .left_out
            .iter()
            .filter(|line| line.contains("deny rules, which cordon does not interpret"))
            .collect();
        assert_eq!(refusals.len(), 2, "{deny}: {proposed:?}");
        let named = category.to_lowercase();
        assert!(
            refusals
                .iter()
                .all(|line| line.contains(&format!("no {named} allow is proposed")))
        );
    }
}

#[test]
fn what_the_policy_allows_without_denies_and_no_more() {
    let dir = policy_dir();
    let policy = format!(
        "version: \"1.0\"\ndescription: x\nx-extension: 1\npermissions:\n  storage:\n    allow:\n      - uri: \"fs://data/**\"\n        access: [\"read\", \"write\"]\n      - uri: \"fs://{}/other\"\n        access: read\n      - uri: \"fs://file.txt\"\n        access: [\"read\"]\n      - uri: \"fs://data/*.log\"\n        access: [\"read\"]\n    deny: []\n  network:\n    allow:\n      - host: \"api.openai.com\"\n      - host: \"https://rss.example.com/feed\"\n      - host: \"*.internal.company.com\"\n      - cidr: \"10.0.0.0/8\"\n      - host: \"http://plain.example.com\"\n  environment:\n    allow:\n      - key: \" API_KEY \"\n      - key: \"AWS_*\"\n  resources:\n    memory: 512\n    cpu: 50.0\n  ipc: {{}}\n",
        dir.path().display()
    );
    let proposed = propose(&policy, dir.path()).unwrap();
    let granted: Vec<_> = proposed
        .dirs
        .iter()
        .map(|dir| (&dir.host, dir.guest.as_str(), dir.read_write))
        .collect();
    let (data, other) = (dir.path().join("data"), dir.path().join("other"));
    let expected = [
        (&data, "/data", true),
        (&other, other.to_str().unwrap(), false),
    ];
    assert_eq!(granted, expected);
    assert_eq!(
        proposed.origins,
        ["https://api.openai.com", "https://rss.example.com"]
    );
    assert_eq!(proposed.env, ["API_KEY"]);
    assert_eq!(proposed.memory.as_deref(), Some("500000KiB"));
    let left_out = proposed.left_out.join("\n");
    for expected in [
        "x-extension",
        "file.txt is not a directory",
        "*.log\": cordon grants whole directories",
        "wildcard",
        "\"10.0.0.0/8\": cordon grants origins",
        "plain http is not proposed",
        "\"AWS_*\": a pattern",
        "cpu",
        "ipc",
    ] {
        assert!(left_out.contains(expected), "{expected} in:\n{left_out}");
    }
    assert_eq!(proposed.left_out.len(), 9, "{left_out}");
}

#[test]
fn storage_allows_cordon_cannot_grant_as_narrowly_are_left_out() {
    let dir = policy_dir();
    for (uri, access, why) in [
        ("fs://data", "[write]", "write-only"),
        ("fs://data", "[]", "no access"),
        ("fs://data", "[read, execute]", "unknown access"),
        ("fs://data/*", "[read]", "glob or file pattern"),
        ("fs://missing", "[read]", "not a directory here"),
        ("fs://data/secret/../../other", "[read]", "`..`"),
        ("fs://localhost/data", "[read]", "names a host"),
        ("fs://127.0.0.1/data", "[read]", "names a host"),
        ("fs:///proc/self/cwd", "[read]", "/proc and /dev"),
        ("fs://da%74a", "[read]", "not a plain path"),
        ("fs://$HOME", "[read]", "not a plain path"),
        ("fs://~/data", "[read]", "not a plain path"),
        ("fs://data /secret", "[read]", "not a plain path"),
        ("fs://link", "[read]", "symbolic link"),
        ("https://example.com/data", "[read]", "not an fs:// URI"),
        ("fs://", "[read]", "not an fs:// URI"),
    ] {
        let policy = format!(
            "permissions:\n  storage:\n    allow:\n      - {{ uri: \"{uri}\", access: {access} }}\n"
        );
        let proposed = propose(&policy, dir.path()).unwrap();
        assert!(proposed.dirs.is_empty(), "{uri}: {proposed:?}");
        assert!(proposed.left_out[0].contains(why), "{uri}: {proposed:?}");
    }
    // A plain directory in any spelling of its parts is proposed as itself.
    let proposed = propose(
        "permissions:\n  storage:\n    allow:\n      - { uri: \"fs://./data//secret/\", access: read }\n",
        dir.path(),
    )
    .unwrap();
    assert_eq!(proposed.dirs[0].host, dir.path().join("data/secret"));
    assert_eq!(proposed.dirs[0].guest, "/data/secret");
}

#[test]
fn hosts_become_https_origins_or_are_left_out() {
    use network_origins::https_origin;
    for (host, origin) in [
        ("API.Example.com.", "https://api.example.com"),
        ("https://x.com:443/feed?a=1", "https://x.com"),
        ("x.com:8443", "https://x.com:8443"),
        ("[::1]:8443", "https://[::1]:8443"),
        ("10.1.2.3", "https://10.1.2.3"),
    ] {
        assert_eq!(https_origin(host).as_deref(), Ok(origin), "{host}");
    }
    let refused = "http://x.com ftp://x user@host *.x.com x.com:99999 x.com:0 ::1 127.1 0x7f.0.0.1";
    for refused in refused
        .split(' ')
        .chain(["0177.0.0.1", "a..b", "bücher.de", ""])
    {
        assert!(https_origin(refused).is_err(), "{refused}");
    }
}

#[test]
fn memory_is_read_down_never_left_to_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let memory = |resources: &str| {
        propose(
            &format!("permissions:\n  resources:\n{resources}"),
            dir.path(),
        )
    };
    for (written, limit) in [
        ("\"512Mi\"", "512MiB"),
        ("\"1Gi\"", "1GiB"),
        ("\"64MB\"", "62500KiB"),
        ("\"2048KiB\"", "2MiB"),
        ("\"1048576\"", "1MiB"),
    ] {
        let proposed = memory(&format!("    limits:\n      memory: {written}\n")).unwrap();
        assert_eq!(proposed.memory.as_deref(), Some(limit), "{written}");
    }
    // Both fields: the smaller limit.
    let both = memory("    memory: 100\n    limits:\n      memory: 4Gi\n").unwrap();
    assert_eq!(both.memory.as_deref(), Some("97656KiB"));
    // Over 4 GiB: left out (cordon's default is less).
    let large = memory("    limits:\n      memory: \"18446744073709551615Gi\"\n").unwrap();
    assert!(
        large.memory.is_none() && large.left_out[0].contains("32-bit"),
        "{large:?}"
    );
    // One cordon cannot read, or no component runs in, refuses the policy.
    for written in r#""512 megs","512m",[512],"0.5Gi",0,01000,"0o1750""#.split(',') {
        let refused = memory(&format!("    memory: {written}\n")).unwrap_err();
        assert!(refused.contains("resources memory"), "{written}: {refused}");
    }
    let refused = memory("    limits:\n      memory: \"1000\"\n").unwrap_err();
    assert!(
        refused.contains("less than one WebAssembly page"),
        "{refused}"
    );
}

#[test]
fn a_policy_cordon_cannot_read_is_refused_with_the_reason() {
    let dir = policy_dir();
    for policy in [
        // A miscased or misspelt key would have been ignored, and with it a deny.
        "permissions:\n  storage:\n    Deny: []\n",
        "permissions:\n  enviroment:\n    deny: [{ key: API_KEY }]\n",
        "permissions:\n  network:\n    allow: [{ hosts: x.com }]\n",
        "permissions:\n  storage:\n    <<: { deny: [ { uri: \"fs://data\" } ] }\n",
        "base: &b { network: { deny: [ { host: x } ] } }\n<<: *b\n",
        "permissions:\n  environment:\n    allow: [{ key: !!binary QVBJX0tFWQ== }]\n",
        "permissions:\n  environment:\n    allow: [{ key: !custom API_KEY }]\n",
        "a: b: c\n",
    ] {
        let refused = propose(policy, dir.path()).unwrap_err();
        let named = [
            "could hold a deny",
            "merge key",
            "tags a value",
            "mapping values",
        ];
        assert!(
            named.iter().any(|why| refused.contains(why)),
            "{policy}: {refused}"
        );
    }
    let deep = format!(
        "permissions:\n  ipc: {}{}\n",
        "[".repeat(60_000),
        "]".repeat(60_000)
    );
    assert!(
        propose(&deep, dir.path())
            .unwrap_err()
            .contains("more than 64 levels")
    );
}

#[test]
fn a_policy_file_that_is_no_regular_file_a_link_or_too_large_is_refused() {
    let dir = policy_dir();
    let fifo = dir.path().join("policy.fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    for path in [fifo.as_path(), Path::new("/dev/zero"), dir.path()] {
        let refused = read_policy(path);
        assert!(
            matches!(refused, Err(PolicyError::NotAFile { .. })),
            "{path:?}: {refused:?}"
        );
    }
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "permissions:\n  environment:\n    allow: [{ key: API_KEY }]\n",
    )
    .unwrap();
    assert_eq!(read_policy(&policy).unwrap().env, ["API_KEY"]);
    std::os::unix::fs::symlink(&policy, dir.path().join("linked.yaml")).unwrap();
    let refused = read_policy(&dir.path().join("linked.yaml"));
    assert!(
        matches!(refused, Err(PolicyError::Link { .. })),
        "{refused:?}"
    );
    std::fs::write(&policy, format!("# {}\n", "x".repeat(1 << 20))).unwrap();
    assert!(matches!(
        read_policy(&policy),
        Err(PolicyError::TooLarge { .. })
    ));
    std::fs::write(&policy, "permissions: [1, 2").unwrap();
    let refused = read_policy(&policy).unwrap_err().to_string();
    assert!(
        refused.contains("policy.yaml is not a Wassette policy"),
        "{refused}"
    );
}
