//! The scrubber's own tests: every form of a secret masked, no part of one, streams, two hosts.

use super::*;

#[test]
fn registered_secrets_are_masked_in_every_form() {
    let secrets = Secrets::default();
    secrets.register("sk-test-scrubber-0123456789");
    secrets.register("abc"); // too short to register
    let echoed = "HTTP 401: Invalid key provided: Bearer sk-test-scrubber-0123456789 (abc)";
    assert_eq!(
        secrets.scrub(echoed),
        "HTTP 401: Invalid key provided: Bearer [REDACTED:secret] (abc)"
    );
    secrets.register("pa\"ss/word 1");
    assert_eq!(
        secrets.scrub(r#"{"v":"pa\"ss/word 1"}"#),
        r#"{"v":"[REDACTED:secret]"}"#
    );
    assert_eq!(
        secrets.scrub(r#"{"v":"pa\"ss\/word 1"}"#),
        r#"{"v":"[REDACTED:secret]"}"#
    );
    assert_eq!(
        secrets.scrub("?p=pa%22ss%2Fword%201"),
        "?p=[REDACTED:secret]"
    );
    assert_eq!(
        secrets.scrub("?p=pa%22ss%2fword%201"),
        "?p=[REDACTED:secret]"
    );
    secrets.register_basic("alice", "alice-pw-scrub");
    assert_eq!(
        secrets.scrub("Basic YWxpY2U6YWxpY2UtcHctc2NydWI="),
        "Basic [REDACTED:secret]"
    );
    assert!(matches!(secrets.scrub("nothing here"), Cow::Borrowed(_)));
    let mut value = serde_json::json!({"k": ["x sk-test-scrubber-0123456789"]});
    secrets.scrub_json(&mut value);
    assert_eq!(value, serde_json::json!({"k": ["x [REDACTED:secret]"]}));
}

#[test]
fn escaped_forms_servers_and_validators_write_are_masked() {
    let secrets = Secrets::default();
    let secret = "p&ss<w>rd+/=~Sec9-long";
    secrets.register(secret);
    for (form, written) in [
        (
            "Go's encoding/json",
            r"Bearer p\u0026ss\u003cw\u003erd+/=~Sec9-long",
        ),
        (
            "the same in capitals",
            r"Bearer p\u0026ss\u003Cw\u003Erd+/=~Sec9-long",
        ),
        (
            "every character escaped",
            r"Bearer \u0070\u0026\u0073\u0073\u003c\u0077\u003e\u0072\u0064\u002b\u002f\u003d\u007e\u0053\u0065\u0063\u0039\u002d\u006c\u006f\u006e\u0067",
        ),
        (
            "every byte percent-encoded",
            "Bearer %70%26%73%73%3C%77%3E%72%64%2B%2F%3D%7E%53%65%63%39%2D%6C%6F%6E%67",
        ),
        ("HTML text", "Bearer p&amp;ss&lt;w&gt;rd+/=~Sec9-long"),
        ("a JSON Pointer", "at /p&ss<w>rd+~1=~0Sec9-long: expected"),
    ] {
        let scrubbed = secrets.scrub(written);
        assert!(
            scrubbed.contains("[REDACTED:secret]") && !scrubbed.contains("Sec9"),
            "{form}: {scrubbed}"
        );
    }
}

#[test]
fn a_secret_in_another_case_or_base64_is_masked_but_no_part_of_it_is() {
    let secrets = Secrets::default();
    let secret = "ghp_R2mT5vLk9WpYc3NfHs7GdJ4uAeQZq8XbTy01";
    secrets.register(secret);
    assert_eq!(
        secrets.scrub(&secret.to_ascii_uppercase()),
        "[REDACTED:secret]",
        "any ASCII case"
    );
    use base64::Engine as _;
    for prefix in ["", "x", "xy"] {
        let encoded = base64::engine::general_purpose::STANDARD
            .encode(format!("{prefix}token={secret}&more"));
        let scrubbed = secrets.scrub(&encoded);
        assert!(
            scrubbed.contains(MASK),
            "{prefix:?}: {encoded} -> {scrubbed}"
        );
    }
    // A part is never masked: whoever chooses a text could otherwise test guesses of the
    // next character by whether it comes back masked.
    for guess in [
        &secret[..5],
        &secret[..20],
        &secret[..secret.len() - 1],
        &secret[10..],
    ] {
        let text = format!("Unknown tool \"{guess}\"");
        assert_eq!(secrets.scrub(&text), text);
    }
}

#[test]
fn a_bearer_headers_token_is_masked_alone_and_its_scheme_word_is_not() {
    let secrets = Secrets::default();
    secrets.register_header_value("Bearer hdr-token-5be1c0a9d2");
    assert_eq!(
        secrets.scrub("id req-hdr-token-5be1c0a9d2"),
        "id req-[REDACTED:secret]"
    );
    assert_eq!(secrets.scrub("a Bearer token"), "a Bearer token");
}

#[test]
fn a_secret_streamed_in_pieces_never_shows() {
    let secrets = Secrets::default();
    let secret = "sk-ant-stream-0123456789abcdef";
    secrets.register(secret);
    let text = format!("Your configured key is {secret} as requested.");
    for size in [1, 3, 7, 11, 64] {
        let mut stream = secrets.stream();
        let mut shown = Vec::new();
        for piece in text.as_bytes().chunks(size) {
            shown.push(stream.push(std::str::from_utf8(piece).unwrap()));
        }
        shown.push(stream.finish());
        let joined = shown.concat();
        assert_eq!(
            joined, "Your configured key is [REDACTED:secret] as requested.",
            "pieces of {size}: {shown:?}"
        );
        for piece in &shown {
            assert!(!piece.contains("0123456"), "{piece:?}");
        }
    }
    // Text with nothing like a secret is not held.
    let mut stream = secrets.stream();
    assert_eq!(stream.push("plain words "), "plain words ");
}

#[test]
fn two_hosts_in_one_process_keep_their_secrets_apart() {
    let first = Secrets::default();
    let second = Secrets::default();
    first.register("first-host-secret-77aa");
    assert_eq!(
        first.scrub("x first-host-secret-77aa"),
        "x [REDACTED:secret]"
    );
    assert_eq!(
        second.scrub("x first-host-secret-77aa"),
        "x first-host-secret-77aa",
        "another host's scrubber neither masks nor learns it"
    );
    let shared = first.clone();
    shared.register("registered-through-a-clone");
    assert_eq!(first.scrub("registered-through-a-clone"), MASK);
    assert!(
        !format!("{first:?}").contains("first-host"),
        "Debug shows no secret"
    );
}
