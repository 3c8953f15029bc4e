//! Secrets recognised by their own shape, wherever they stand: private key blocks, cloud, chat,
//! payment, package-registry and code-hosting tokens, JWTs, bearer and Basic credentials after `Authorization`, and
//! passwords inside URLs. Each pattern keeps what identifies the secret's kind (a `Bearer` scheme,
//! a URL's user name) and replaces the secret itself with `[REDACTED:kind]`. The patterns are
//! compiled once per instance; a `RegexSet` finds which can match, so a text without secrets costs
//! one pass (the `regex` crate is linear in the text for every pattern).

use regex::{Captures, Regex, RegexSet};
use std::collections::BTreeMap;
use std::sync::LazyLock;

struct Format {
    kind: &'static str,
    regex: &'static str,
    /// Capture group holding the text kept before the secret (0 = none).
    keep_prefix: usize,
    /// Capture group holding the text kept after the secret (0 = none).
    keep_suffix: usize,
}

const fn format(kind: &'static str, regex: &'static str) -> Format {
    Format {
        kind,
        regex,
        keep_prefix: 0,
        keep_suffix: 0,
    }
}

/// In the order they are applied: whole key blocks before their parts, specific token shapes
/// before the generic ones that could also match them.
const FORMATS: &[Format] = &[
    format(
        "private_key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----",
    ),
    // What is left of a key after whole blocks were masked: a BEGIN and the body lines after it,
    // or the body lines before an END.
    format(
        "private_key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?:\r?\n[A-Za-z0-9+/=]{4,})*",
    ),
    format(
        "private_key",
        r"(?m)(?:^[A-Za-z0-9+/=]{4,}\r?\n)*-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----",
    ),
    format(
        "aws_access_key",
        r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)[A-Z0-9]{16}\b",
    ),
    format(
        "github_token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
    ),
    format(
        "gitlab_token",
        r"\bgl(?:pat|dt|rt|ptt|cbt|soat|ft|imt|agent)-[A-Za-z0-9_\-]{20,}",
    ),
    format(
        "slack_webhook",
        r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+\-]{20,}",
    ),
    format("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    format(
        "anthropic_key",
        r"\bsk-ant-(?:api|admin|sid)[0-9]{2}-[A-Za-z0-9_\-]{20,}",
    ),
    format(
        "openai_key",
        r"\bsk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|[A-Za-z0-9]{32,})",
    ),
    format(
        "stripe_key",
        r"\b(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,99}\b|\bwhsec_[A-Za-z0-9]{24,}\b",
    ),
    format("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    format("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    format("pypi_token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"),
    format("huggingface_token", r"\bhf_[A-Za-z]{34}\b"),
    format(
        "sendgrid_key",
        r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}\b",
    ),
    format("digitalocean_token", r"\bdo[por]_v1_[a-f0-9]{64}\b"),
    format("shopify_token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    format("vault_token", r"\bhv[sb]\.[A-Za-z0-9_\-]{24,}"),
    format("databricks_token", r"\bdapi[a-f0-9]{32}(?:-[0-9])?\b"),
    format("twilio_key", r"\bSK[0-9a-fA-F]{32}\b"),
    format(
        "age_secret_key",
        r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b",
    ),
    Format {
        kind: "bearer_token",
        regex: r"(?i)(\b(?:authorization|proxy-authorization)\s*[:=]\s*[\x22']?bearer\s+|\bbearer\s+)[A-Za-z0-9\-._~+/]{16,}=*",
        keep_prefix: 1,
        keep_suffix: 0,
    },
    Format {
        kind: "basic_auth",
        regex: r"(?i)(\b(?:authorization|proxy-authorization)\s*[:=]\s*[\x22']?basic\s+)[A-Za-z0-9+/]{8,}=*",
        keep_prefix: 1,
        keep_suffix: 0,
    },
    format(
        "jwt",
        r"\bey[A-Za-z0-9_\-]{15,}\.ey[A-Za-z0-9_\-]{15,}\.[A-Za-z0-9_\-]*",
    ),
    Format {
        kind: "url_password",
        regex: r"(\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/@\x22'<>]{0,256}:)[^\s/@\x22'<>]{1,256}(@)",
        keep_prefix: 1,
        keep_suffix: 2,
    },
];

struct Compiled {
    any: RegexSet,
    each: Vec<Regex>,
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| Compiled {
    any: RegexSet::new(FORMATS.iter().map(|f| f.regex)).expect("built-in patterns compile"),
    each: FORMATS
        .iter()
        .map(|f| Regex::new(f.regex).expect("built-in pattern compiles"))
        .collect(),
});

/// `text` with every secret of a known shape masked; `counts` gains one per secret, by kind.
pub fn mask(text: &str, counts: &mut BTreeMap<&'static str, usize>) -> String {
    let compiled = &*COMPILED;
    let mut text = text.to_string();
    let candidates: Vec<usize> = compiled.any.matches(&text).into_iter().collect();
    for index in candidates {
        let format = &FORMATS[index];
        let mut found = 0;
        let masked = compiled.each[index].replace_all(&text, |captures: &Captures| {
            found += 1;
            let kept = |group: usize| {
                captures
                    .get(group)
                    .filter(|_| group > 0)
                    .map_or("", |m| m.as_str())
            };
            format!(
                "{}[REDACTED:{}]{}",
                kept(format.keep_prefix),
                format.kind,
                kept(format.keep_suffix)
            )
        });
        if found > 0 {
            text = masked.into_owned();
            *counts.entry(format.kind).or_default() += found;
        }
    }
    text
}
