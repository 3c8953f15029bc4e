//! Secrets recognised by their own shape, wherever they stand: private key blocks, cloud, chat,
//! payment, package-registry, code-hosting, monitoring and SaaS tokens, signed-URL signatures,
//! JWTs, bearer and Basic credentials after `Authorization`, passwords inside URLs, and passwords
//! by their place (`.pgpass` and `.netrc` lines, `curl -u`, `mysql -p`, `sshpass -p`, `redis-cli
//! -a`) and random
//! cookie values. Each pattern keeps what identifies the secret's kind (a `Bearer` scheme, a
//! URL's user name) and replaces the secret itself with `[REDACTED:kind]`. The patterns are
//! compiled once per instance; a `RegexSet` finds which can match, so a text without secrets costs
//! one pass (the `regex` crate is linear in the text for every pattern).

use regex::{Captures, Regex, RegexSet};
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// Masks a whole match itself: the text, and how many secrets it masked.
type CustomMask = fn(&Captures) -> (String, usize);

struct Format {
    kind: &'static str,
    regex: &'static str,
    /// Capture group holding the secret; the rest of the match is kept (0 = the whole match).
    secret: usize,
    /// A check the secret must pass (the forms that name a password rather than show its shape).
    check: Option<fn(&str) -> bool>,
    /// Masks a match itself, returning the text and how many secrets it masked (Cookie headers).
    custom: Option<CustomMask>,
}

const fn format(kind: &'static str, regex: &'static str) -> Format {
    Format {
        kind,
        regex,
        secret: 0,
        check: None,
        custom: None,
    }
}

/// A format whose secret is capture group 1.
const fn group(kind: &'static str, regex: &'static str) -> Format {
    Format {
        secret: 1,
        ..format(kind, regex)
    }
}

/// A password found by its place (a command line, `.pgpass`, `.netrc`): group 1, if it is a
/// literal (not `$PASSWORD`, `changeme` or `password`).
const fn password(regex: &'static str) -> Format {
    Format {
        check: Some(is_password),
        ..group("password", regex)
    }
}

/// A Bearer credential, not an auth parameter of a challenge (`Bearer resource_metadata="…"`,
/// `realm="…"`) or a word in prose: it has a digit or a capital.
fn is_token(value: &str) -> bool {
    value
        .trim_end_matches('=')
        .bytes()
        .any(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
}

fn is_password(value: &str) -> bool {
    crate::literal::is_secret(value, crate::literal::Strength::Password, true)
}

/// In the order they are applied: whole key blocks before their parts, specific token shapes
/// before the generic ones that could also match them.
const FORMATS: &[Format] = &[
    // A whole key: between the markers only what a key body holds (base64, blanks, PEM headers),
    // also inside a string literal (`\n`, `\` line ends, quotes), so two marker constants in code
    // do not make a block with the code between them.
    format(
        "private_key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?:[A-Za-z0-9+/=\s\\\x22']|(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset):[^\n]*)*?-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----",
    ),
    // What is left of a key after whole blocks were masked: a BEGIN and the body lines after it,
    // or the body lines before an END (a marker alone is not a key).
    format(
        "private_key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?:\r?\n[A-Za-z0-9+/=]{4,})+",
    ),
    format(
        "private_key",
        r"(?m)(?:^[A-Za-z0-9+/=]{4,}\r?\n)+-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----",
    ),
    // A kubeconfig's base64 private key.
    group(
        "private_key",
        r"(?i)\bclient-key-data[\x22']?[ \t]*:[ \t]*[\x22']?([A-Za-z0-9+/]{16,}={0,2})",
    ),
    // An AWS key pair on one line (the credentials CSV, `id,secret`): the secret, then the id.
    group(
        "aws_secret_key",
        r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}[ \t]*[,;|\t:][ \t]*[\x22']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)",
    ),
    format(
        "aws_access_key",
        r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)[A-Z0-9]{16}\b",
    ),
    group(
        "azure_key",
        r"(?i)\b(?:AccountKey|SharedAccessKey|AccessKey)=([A-Za-z0-9+/]{20,}={0,2})",
    ),
    format(
        "azure_client_secret",
        r"[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}",
    ),
    // Signed URLs: Azure SAS `sig=`, S3 and GCS presigned signatures, an STS session token.
    group(
        "url_signature",
        r"(?i)[?&](?:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token)=([A-Za-z0-9%+/=._~\-]{16,})",
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
    format(
        "slack_token",
        r"\b(?:xox[abposre](?:\.xox[bp])?|xapp)-[A-Za-z0-9\-]{10,}",
    ),
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
    format("google_oauth_secret", r"\bGOCSPX-[A-Za-z0-9_\-]{28}"),
    format("google_access_token", r"\bya29\.[0-9A-Za-z_\-]{30,}"),
    format("google_refresh_token", r"\b1//0[0-9A-Za-z_\-]{40,}"),
    format("facebook_token", r"\bEAA[A-Z][A-Za-z0-9]{80,}"),
    format(
        "discord_token",
        r"\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}\b",
    ),
    group(
        "telegram_token",
        r"\b(?:bot)?([0-9]{8,10}:AA[0-9A-Za-z_\-]{33})\b",
    ),
    format("postman_key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"),
    format(
        "doppler_token",
        r"\bdp\.(?:st|ct|sa|scim|audit|pt)\.(?:[a-z0-9_\-]{2,35}\.)?[A-Za-z0-9]{40,44}\b",
    ),
    format("linear_key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b"),
    format(
        "notion_token",
        r"\bntn_[A-Za-z0-9]{40,50}\b|\bsecret_[A-Za-z0-9]{43}\b",
    ),
    format("atlassian_token", r"\bATATT3[A-Za-z0-9_\-=]{100,}"),
    format("sentry_token", r"\bsntry[su]_[A-Za-z0-9+/=_\-]{30,}"),
    // A Sentry DSN's key: `https://<key>@o1.ingest.sentry.io/2`.
    group(
        "sentry_dsn",
        r"\bhttps?://([0-9a-f]{32})(?::[0-9a-f]{32})?@[A-Za-z0-9.\-]*sentry[A-Za-z0-9.\-]*",
    ),
    format(
        "grafana_token",
        r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|\bglc_[A-Za-z0-9+/]{32,400}={0,2}|\beyJrIjoi[A-Za-z0-9+/]{50,}={0,2}",
    ),
    format(
        "newrelic_key",
        r"\bNRAK-[A-Z0-9]{27}\b|\bNRII-[A-Za-z0-9_\-]{32}\b|\bNRJS-[a-f0-9]{19}\b",
    ),
    format(
        "supabase_token",
        r"\bsbp_[a-f0-9]{40}\b|\bsb_secret_[A-Za-z0-9_\-]{20,}",
    ),
    format(
        "terraform_token",
        r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,70}",
    ),
    format(
        "square_token",
        r"\bsq0(?:atp|csp)-[0-9A-Za-z_\-]{22,43}|\bEAAA[A-Za-z0-9_\-]{60}\b",
    ),
    format(
        "braintree_token",
        r"\baccess_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}",
    ),
    group("okta_token", r"\bSSWS[ \t]+([A-Za-z0-9_\-]{20,})"),
    format("mailgun_key", r"\bkey-[0-9a-f]{32}\b"),
    format("mailchimp_key", r"\b[0-9a-f]{32}-us[0-9]{1,2}\b"),
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
        check: Some(is_token),
        ..group(
            "bearer_token",
            r"(?i)(?:\b(?:authorization|proxy-authorization)[\x22']?\s*[:=]\s*[\x22']?(?:bearer|token|apikey)\s+|\bbearer\s+)([A-Za-z0-9\-._~+/]{16,}=*)",
        )
    },
    group(
        "basic_auth",
        r"(?i)\b(?:authorization|proxy-authorization)[\x22']?\s*[:=]\s*[\x22']?basic\s+([A-Za-z0-9+/]{8,}=*)",
    ),
    format(
        "jwt",
        r"\bey[A-Za-z0-9_\-]{15,}\.ey[A-Za-z0-9_\-]{15,}\.[A-Za-z0-9_\-]*",
    ),
    Format {
        check: Some(is_password),
        ..group(
            "url_password",
            r"\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/@\x22'<>]{0,256}:([^\s/@\x22'<>]{1,256})@",
        )
    },
    // Passwords by their place: `.pgpass` lines (`host:port:db:user:password`, maybe after a
    // grep's `path:line: `), `.netrc` (`machine h login u password p`), `curl -u user:pass`,
    // `mysql -pPASS`, `sshpass -p PASS`, `redis-cli -a PASS`.
    password(
        r"(?mR)^(?:\S+:[0-9]+: )?(?:[A-Za-z0-9._\-]+|\*):(?:[0-9]{1,5}|\*):[^:\s]+:[^:\s]+:((?:[^\s:\\]|\\.)+)[ \t]*$",
    ),
    password(
        r"\b(?:machine[ \t\r\n]+\S+|default)[ \t\r\n]+login[ \t\r\n]+\S+[ \t\r\n]+password[ \t\r\n]+([^\s\x22']+)",
    ),
    password(r"\bcurl\b[^\n]*?[ \t](?:-u|--user)[ \t=]*[\x22']?[^\s:\x22']+:([^\s\x22'@]+)"),
    password(
        r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)\b[^\n]*?[ \t](?:-p|--password=)[\x22']?([^\s\x22']+)",
    ),
    password(r"\bsshpass\b[^\n]*?[ \t]-p[ \t]*[\x22']?([^\s\x22']+)"),
    password(r"\bredis-cli\b[^\n]*?[ \t](?:-a|--pass)[ \t]+[\x22']?([^\s\x22']+)"),
    // Cookie headers (and a `cookie` key): each cookie's value that is random.
    Format {
        custom: Some(mask_cookies),
        ..format(
            "cookie",
            r"(?i)\b(?:set-)?cookie[\x22']?[ \t]*[:=][ \t]*[\x22']?[^\r\n\x22']+",
        )
    },
];

/// Masks the value of each cookie in a Cookie or Set-Cookie header that is random enough to be a
/// session or a token; attributes (`Path`, `Expires`, ...) and words (`theme=dark`) stay.
fn mask_cookies(found: &Captures) -> (String, usize) {
    let text = found.get(0).expect("the match").as_str();
    let Some(colon) = text.find([':', '=']) else {
        return (text.to_string(), 0);
    };
    let (head, pairs) = text.split_at(colon + 1);
    let mut masked = 0;
    let parts: Vec<String> = pairs
        .split(';')
        .map(|part| {
            let Some((name, value)) = part.split_once('=') else {
                return part.to_string();
            };
            let value_bare = value.trim();
            if name.trim().is_empty()
                || !crate::literal::is_secret(value_bare, crate::literal::Strength::Generated, true)
            {
                return part.to_string();
            }
            masked += 1;
            let start = value.find(value_bare).unwrap_or(0);
            format!(
                "{name}={}[REDACTED:cookie]{}",
                &value[..start],
                &value[start + value_bare.len()..]
            )
        })
        .collect();
    (format!("{head}{}", parts.join(";")), masked)
}

struct Compiled {
    any: RegexSet,
    each: Vec<Regex>,
}

/// A pattern with ASCII word boundaries: the secrets are ASCII, and a Unicode `\b` keeps the
/// regex engine off its DFA on text that is not ASCII (and made the RegexSet pass slow).
fn ascii_boundaries(regex: &str) -> String {
    regex.replace(r"\b", r"(?-u:\b)")
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| Compiled {
    any: RegexSet::new(FORMATS.iter().map(|f| ascii_boundaries(f.regex)))
        .expect("built-in patterns compile"),
    each: FORMATS
        .iter()
        .map(|f| Regex::new(&ascii_boundaries(f.regex)).expect("built-in pattern compiles"))
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
            let whole = captures.get(0).expect("the match");
            if let Some(custom) = format.custom {
                let (masked, count) = custom(captures);
                found += count;
                return masked;
            }
            let Some(secret) = captures.get(format.secret) else {
                return whole.as_str().to_string();
            };
            if format.check.is_some_and(|check| !check(secret.as_str())) {
                return whole.as_str().to_string();
            }
            found += 1;
            let at = |offset: usize| offset - whole.start();
            format!(
                "{}[REDACTED:{}]{}",
                &whole.as_str()[..at(secret.start())],
                format.kind,
                &whole.as_str()[at(secret.end())..]
            )
        });
        if found > 0 {
            text = masked.into_owned();
            *counts.entry(format.kind).or_default() += found;
        }
    }
    text
}
