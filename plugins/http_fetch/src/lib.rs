//! The bundled `http_fetch` plugin: fetch a URL from an origin the operator granted and return its
//! text, with HTML reduced to readable text and long pages truncated with a marker. Redirects are
//! followed hop by hop, and the host checks every hop against the grants.

mod html;

use cordon_sdk::http;
use cordon_sdk::prelude::*;

const DEFAULT_MAX_CHARS: usize = 20_000;
/// How far back a cut may move to fall between words.
const WORD_CUT_BYTES: usize = 1024;
const MAX_REDIRECTS: usize = 5;

#[derive(Deserialize, JsonSchema)]
#[schemars(example = serde_json::json!({"url": "https://example.com/", "max_chars": 2000}))]
struct Args {
    /// Absolute http(s) URL to fetch.
    url: String,
    /// Most characters of text to return (default 20000).
    #[schemars(range(min = 1))]
    max_chars: Option<usize>,
}

struct Fetch;

impl Tool for Fetch {
    type Args = Args;
    const NAME: &'static str = "http_fetch";
    const TITLE: &'static str = "Fetch URL";
    const ANNOTATIONS: Annotations = Annotations::new().read_only().open_world();
    const DESCRIPTION: &'static str = "Fetch a web page or text document with GET and return its \
        text; HTML is reduced to readable text. Only origins the operator granted can be reached. \
        Follows up to 5 redirects. Returns at most `max_chars` characters (default 20000) and says \
        when it cut the text. Fails on non-2xx statuses and non-text content.";

    fn run(&self, args: Args, cx: &Context) -> ToolResult {
        let mut url = args.url.clone();
        let mut response = http::get(&url)?;
        for _ in 0..MAX_REDIRECTS {
            if !(300..400).contains(&response.status) {
                break;
            }
            let Some(location) = response.header("location") else {
                break;
            };
            url = resolve(&url, location);
            cx.log(LogLevel::Debug, format!("redirected to {url}"));
            response = http::get(&url)?;
        }
        if !(200..300).contains(&response.status) {
            let snippet: String = String::from_utf8_lossy(&response.body)
                .chars()
                .take(300)
                .collect();
            return Err(ToolError::new(format!(
                "{url} answered HTTP {}: {snippet}",
                response.status
            ))
            .with_details(json!({ "status": response.status, "url": url })));
        }
        let content_type = response
            .header("content-type")
            .unwrap_or("text/plain")
            .to_ascii_lowercase();
        let is_text = content_type.starts_with("text/")
            || ["json", "xml", "javascript"]
                .iter()
                .any(|t| content_type.contains(t));
        if !is_text {
            return Err(ToolError::new(format!(
                "{url} is {content_type} ({} bytes), not text; http_fetch only returns text",
                response.body.len()
            )));
        }
        let raw = String::from_utf8_lossy(&response.body);
        let text = if content_type.contains("html") {
            html::to_text(&raw)
        } else {
            raw.into_owned()
        };
        let max = args.max_chars.unwrap_or(DEFAULT_MAX_CHARS);
        let total = text.chars().count();
        let mut out: String = text.chars().take(max).collect();
        if total > max {
            // Cut at a word's end, not inside one: a token cut short (a credential the origin
            // echoed, say) is shown whole or not at all, where the host can recognise it.
            if let Some(space) = out.rfind(char::is_whitespace)
                && out.len() - space <= WORD_CUT_BYTES
            {
                out.truncate(space);
            }
            out.push_str(&format!(
                "\n\n[truncated: showing {max} of {total} characters; raise max_chars to see more]"
            ));
        }
        Ok(Output::text(out).with_details(json!({
            "url": url,
            "status": response.status,
            "contentType": content_type,
            "bytes": response.body.len(),
            "truncated": total > max,
        })))
    }
}

/// `location` relative to `base` (absolute URLs and absolute paths).
fn resolve(base: &str, location: &str) -> String {
    if location.contains("://") {
        return location.to_string();
    }
    let origin_end = base
        .find("://")
        .map(|s| s + 3)
        .and_then(|start| base[start..].find('/').map(|p| p + start))
        .unwrap_or(base.len());
    if location.starts_with('/') {
        format!("{}{location}", &base[..origin_end])
    } else {
        let dir_end = base
            .rfind('/')
            .filter(|&i| i >= origin_end)
            .map(|i| i + 1)
            .unwrap_or(base.len());
        format!(
            "{}{}{location}",
            &base[..dir_end],
            if dir_end == base.len() && !base.ends_with('/') {
                "/"
            } else {
                ""
            }
        )
    }
}

cordon_sdk::export_plugin!(tools: [Fetch]);
