//! Tests that what cordon cannot read, list or tell apart covers everything it might mean: a
//! directory it cannot list, any spelling of this machine's name or address, escapes inside
//! escapes, an address followed by more, YAML tags, and a policy file that is a link.

use super::*;

fn storage(allow: &str, deny: &str, base: &Path) -> ProposedGrants {
    propose(
        &format!(
            "permissions:\n  storage:\n    allow:\n      - uri: \"{allow}\"\n        access: [\"read\"]\n    deny:\n      - uri: \"{deny}\"\n"
        ),
        base,
    )
    .unwrap()
}

fn env_with_deny(deny: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    propose(
        &format!(
            "permissions:\n  environment:\n    allow:\n      - key: API_KEY\n    deny:\n      - key: \"{deny}\"\n"
        ),
        dir.path(),
    )
    .unwrap()
    .env
}

fn network_with_deny(allow: &str, deny: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    propose(
        &format!(
            "permissions:\n  network:\n    allow:\n      - host: \"{allow}\"\n    deny:\n      - host: \"{deny}\"\n"
        ),
        dir.path(),
    )
    .unwrap()
    .origins
}

#[test]
fn a_glob_over_a_directory_cordon_cannot_list_reaches_everywhere() {
    // Red team, round 10: `locked` (mode 711) holds `l -> data`; a deny of `locked/*/secret`
    // matched nothing cordon could list, and `data` was granted to a user who can enter
    // `locked` and read locked/l/secret. Root lists every directory, so the listing errors are
    // checked as the walk reads them: only "nothing there" is nothing.
    use std::io::{Error, ErrorKind};
    assert!(!disk_walk::listing_error_reaches_everywhere(&Error::from(
        ErrorKind::NotFound
    )));
    assert!(!disk_walk::listing_error_reaches_everywhere(
        &Error::from_raw_os_error(libc::ENOTDIR)
    ));
    for unlistable in [
        Error::from(ErrorKind::PermissionDenied),
        Error::from_raw_os_error(libc::EIO),
        Error::from_raw_os_error(libc::ELOOP),
    ] {
        assert!(
            disk_walk::listing_error_reaches_everywhere(&unlistable),
            "{unlistable}"
        );
    }
    // End to end where a directory can be made unlistable (not as root).
    use std::os::unix::fs::MetadataExt as _;
    if std::fs::metadata("/proc/self").unwrap().uid() != 0 {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("data/secret")).unwrap();
        std::fs::create_dir_all(dir.path().join("locked")).unwrap();
        std::os::unix::fs::symlink("../data", dir.path().join("locked/l")).unwrap();
        std::fs::set_permissions(
            dir.path().join("locked"),
            std::fs::Permissions::from_mode(0o711),
        )
        .unwrap();
        let proposed = storage("fs://data", "fs://locked/*/secret", dir.path());
        std::fs::set_permissions(
            dir.path().join("locked"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        assert!(proposed.dirs.is_empty(), "{proposed:?}");
    }
}

#[test]
fn a_deny_naming_this_machine_in_any_address_spelling_is_read_from_the_root() {
    // Red team, round 10: `0x7f000001`, `0x7f.0.0.1`, `0x7F.1` and `foo.localhost` were read
    // as relative directories.
    for host in ["0x7f000001", "0x7f.0.0.1", "0x7F.1", "foo.localhost"] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("data/secret")).unwrap();
        let base = dir.path().to_str().unwrap().trim_start_matches('/');
        let deny = format!("fs://{host}/{base}/data/secret");
        let proposed = storage("fs://data", &deny, dir.path());
        assert!(proposed.dirs.is_empty(), "{deny}: {proposed:?}");
    }
}

#[test]
fn an_env_deny_is_decoded_unescaped_and_compared_in_any_case_in_every_order() {
    // Red team, round 10: `%41PI_KEY` decoded to a capital after the deny was lower-cased, and
    // `API%5C_KEY` decoded to `API\_KEY`, which was never unescaped.
    for deny in [
        "%41PI_KEY",
        "API_%4BEY",
        "API%5C_KEY",
        "%2541PI_KEY",
        "API%00",
    ] {
        assert!(env_with_deny(deny).is_empty(), "{deny}");
    }
    assert_eq!(env_with_deny("OTHER"), ["API_KEY"]);
}

#[test]
fn an_address_deny_with_more_after_it_covers_every_address() {
    // Red team, round 10: ranges the range parser does not read were taken as one address.
    for (allow, deny) in [
        ("10.1.2.3", "https://10.0.0.0/8"),
        ("10.1.2.3", "10.0.0.0/8/"),
        ("10.1.2.3", "10.0.0.0/8:443"),
        ("[fd00::5]", "[fd00::]/8"),
    ] {
        assert!(network_with_deny(allow, deny).is_empty(), "{deny}");
    }
    assert_eq!(
        network_with_deny("10.1.2.3", "10.9.9.9"),
        ["https://10.1.2.3"]
    );
}

#[test]
fn two_names_of_this_machine_are_one_host() {
    // Red team, round 10: a deny of `localhost` left `localhost.localdomain`, `foo.localhost`
    // and this machine's host name granted.
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    for allow in [hostname.trim(), "localhost.localdomain", "foo.localhost"] {
        assert!(network_with_deny(allow, "localhost").is_empty(), "{allow}");
        assert!(network_with_deny("localhost", allow).is_empty(), "{allow}");
    }
    assert_eq!(
        network_with_deny("api.example.com", "localhost"),
        ["https://api.example.com"]
    );
}

#[test]
fn a_tagged_value_refuses_the_policy() {
    // Red team, round 10: `key: !!binary QVBJX0tFWQ==` is API_KEY to a reader that honours the
    // tag, and was compared as its base64 text.
    let dir = tempfile::tempdir().unwrap();
    for policy in [
        "permissions:\n  environment:\n    allow:\n      - key: API_KEY\n    deny:\n      - key: !!binary QVBJX0tFWQ==\n",
        "permissions:\n  network:\n    allow:\n      - host: api.example.com\n    deny:\n      - host: !custom api\n",
    ] {
        let refused = propose(policy, dir.path()).unwrap_err();
        assert!(refused.contains("tags a value"), "{refused}");
    }
}

#[test]
fn a_policy_file_that_is_a_link_is_refused() {
    // Red team, round 10: relative rules were read from the link target's directory only.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("elsewhere")).unwrap();
    std::fs::write(
        dir.path().join("elsewhere/policy.yaml"),
        "permissions:\n  environment:\n    allow:\n      - key: API_KEY\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("elsewhere/policy.yaml", dir.path().join("policy.yaml")).unwrap();
    let refused = read_policy(&dir.path().join("policy.yaml")).unwrap_err();
    assert!(matches!(refused, PolicyError::Link { .. }), "{refused}");
    assert!(read_policy(&dir.path().join("elsewhere/policy.yaml")).is_ok());
}

#[test]
fn a_question_mark_in_a_deny_host_is_a_glob_and_a_query() {
    // Red team, round 11: `ap?.example.com` was cut at `?` as if a query began there.
    for deny in [
        "ap?.example.com",
        "api.exampl?.com",
        "*.exampl?.com",
        "api.example.???",
        "api.example.com?x=1",
    ] {
        assert!(
            network_with_deny("api.example.com", deny).is_empty(),
            "{deny}"
        );
    }
    assert_eq!(
        network_with_deny("api.example.com", "ap?.other.com"),
        ["https://api.example.com"]
    );
}

#[test]
fn a_deny_with_a_leading_dot_covers_every_name_under_it() {
    // Red team, round 11: `.example.com` (curl's and cookies' reading) left api.example.com.
    assert!(network_with_deny("api.example.com", ".example.com").is_empty());
    assert!(network_with_deny("example.com", ".example.com").is_empty());
    assert_eq!(
        network_with_deny("api.example.org", ".example.com"),
        ["https://api.example.org"]
    );
}

#[test]
fn escapes_nested_past_what_cordon_reads_cover_every_key() {
    // Red team, round 11: 63 layers of `%25` decoded to API_KEY past the reading cap, which
    // failed open.
    let deep = format!("API%{}5FKEY", "25".repeat(63));
    assert!(env_with_deny(&deep).is_empty());
}

#[test]
fn a_deny_through_the_process_own_paths_or_with_spaces_reaches_everywhere() {
    // Red team, round 11: /proc/self/cwd was resolved in `cordon add`'s process, and
    // `fs:// /abs/data/secret` was read only as a directory named " ".
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data/secret")).unwrap();
    let base = dir.path().to_str().unwrap();
    for deny in [
        "fs:///proc/self/cwd/data/secret".to_string(),
        "fs:///proc/thread-self/cwd/x".to_string(),
        "fs:///dev/fd/3/secret".to_string(),
        format!("fs:// {base}/data/secret"),
        format!("fs://{base}/data /secret"),
    ] {
        let proposed = storage("fs://data", &deny, dir.path());
        assert!(proposed.dirs.is_empty(), "{deny}: {proposed:?}");
    }
}

#[test]
fn a_glob_on_disk_matches_without_regard_to_case_and_an_allow_never_names_a_host() {
    // Red team, round 11: `AL*` missed `alias -> data`; `fs://127.0.0.1/srv` was granted as a
    // relative directory named 127.0.0.1.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data/secret")).unwrap();
    std::os::unix::fs::symlink("data", dir.path().join("alias")).unwrap();
    let base = dir.path().to_str().unwrap();
    let proposed = storage("fs://data", &format!("fs://{base}/AL*/secret"), dir.path());
    assert!(proposed.dirs.is_empty(), "{proposed:?}");
    std::fs::create_dir_all(dir.path().join("127.0.0.1/srv")).unwrap();
    let proposed = propose(
        "permissions:\n  storage:\n    allow:\n      - uri: \"fs://127.0.0.1/srv\"\n        access: [\"read\"]\n",
        dir.path(),
    )
    .unwrap();
    assert!(proposed.dirs.is_empty(), "{proposed:?}");
}

#[test]
fn a_deny_through_a_link_into_proc_or_in_another_case_reaches_its_target() {
    // Red team, round 12: `me -> /proc/self` and a deny of `me/cwd/secret` was resolved in
    // `cordon add`'s own process; `LNK/secret` missed `lnk -> data` (a case-insensitive volume
    // reaches it).
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data/secret")).unwrap();
    std::os::unix::fs::symlink("/proc/self", dir.path().join("me")).unwrap();
    std::os::unix::fs::symlink("/dev/fd", dir.path().join("fdl")).unwrap();
    std::os::unix::fs::symlink("data", dir.path().join("lnk")).unwrap();
    for deny in ["fs://me/cwd/secret", "fs://fdl/3/secret", "fs://LNK/secret"] {
        let proposed = storage("fs://data", deny, dir.path());
        assert!(proposed.dirs.is_empty(), "{deny}: {proposed:?}");
    }
}

#[test]
fn an_env_deny_in_letters_whose_other_case_is_ascii_covers_the_key() {
    // Red team, round 12: `APı_KEY` (dotless i) and `ſECRET` (long s) are API_KEY and SECRET
    // to a comparison without regard to case.
    assert!(env_with_deny("APı_KEY").is_empty());
    assert!(env_with_deny("api_\u{212a}ey").is_empty());
}

#[test]
fn names_cordon_cannot_compare_character_for_character_may_match_any_glob() {
    // Red team, round 13: a link named `İ` (its lower case is two characters) and one whose
    // name is not UTF-8 slipped past `?` globs; the env deny `APİ_KEY` left API_KEY.
    use std::os::unix::ffi::OsStrExt as _;
    for name in [
        std::ffi::OsStr::new("İ"),
        std::ffi::OsStr::from_bytes(b"a\xe2\x82"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("data/secret")).unwrap();
        std::fs::create_dir_all(dir.path().join("other")).unwrap();
        std::os::unix::fs::symlink("../data", dir.path().join("other").join(name)).unwrap();
        let proposed = storage("fs://data", "fs://other/?/secret", dir.path());
        assert!(proposed.dirs.is_empty(), "{name:?}: {proposed:?}");
    }
    assert!(env_with_deny("APİ_KEY").is_empty());
}

#[test]
fn a_host_deny_with_an_empty_label_covers_every_host_and_ipv6_forms_carry_ipv4() {
    // Red team, round 13: `api.example.com..` and `api..example.com` are no host names; Teredo
    // and ISATAP addresses carry IPv4 ones.
    for deny in ["api.example.com..", "api..example.com"] {
        assert!(
            network_with_deny("api.example.com", deny).is_empty(),
            "{deny}"
        );
    }
    // Teredo: client 10.1.2.3 inverted (f5fe:fdfc) in the last 32 bits.
    for allowed in [
        "[2001:0:4136:e378:8000:63bf:f5fe:fdfc]",
        "[fe80::5efe:a01:203]",
    ] {
        assert!(
            network_with_deny(allowed, "10.1.2.3").is_empty(),
            "{allowed}"
        );
    }
}

#[test]
fn a_memory_number_with_a_leading_zero_refuses_the_policy() {
    // Red team, round 13: `01000` is octal 512 to YAML 1.1 readers and was proposed as 1000 MB.
    let dir = tempfile::tempdir().unwrap();
    for written in ["01000", "\"01000\"", "0o1750"] {
        let refused = propose(
            &format!("permissions:\n  resources:\n    memory: {written}\n"),
            dir.path(),
        )
        .unwrap_err();
        assert!(refused.contains("starts with 0"), "{written}: {refused}");
    }
}
