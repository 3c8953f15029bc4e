//! HTML reduced to readable text: scripts, styles and tags removed, block elements on lines of
//! their own, common entities decoded, runs of whitespace collapsed.

const BLOCKS: [&str; 16] = [
    "p", "div", "br", "li", "ul", "ol", "tr", "table", "h1", "h2", "h3", "h4", "h5", "h6",
    "section", "article",
];

pub fn to_text(html: &str) -> String {
    let mut text = String::new();
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        let tag_and_after = &rest[open + 1..];
        let Some(close) = tag_and_after.find('>') else {
            rest = "";
            break;
        };
        let tag = tag_and_after[..close].trim();
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        rest = &tag_and_after[close + 1..];
        if (name == "script" || name == "style") && !tag.starts_with('/') {
            let end = format!("</{name}");
            rest = match rest.to_ascii_lowercase().find(&end) {
                Some(at) => rest[at..].find('>').map_or("", |gt| &rest[at + gt + 1..]),
                None => "",
            };
            continue;
        }
        if BLOCKS.contains(&name.as_str()) {
            text.push('\n');
        }
    }
    text.push_str(rest);
    let decoded = decode_entities(&text);
    decoded
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn decode_entities(text: &str) -> String {
    text.replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}
