//! A lexical index over the active tools, searched with BM25 (what `search_tools` of the agent
//! loop and of `cordon serve --tool-search` answers with): each tool is the words of its name
//! (weighted most), title, description and parameter names; words are lowercased, split at case
//! changes and punctuation, and reduced to a crude singular, so "invoices" finds `invoice_get`.
//! No embedding model, no network: the same query finds the same tools.

use std::collections::HashMap;

/// How many times a word of each field counts.
const NAME_WEIGHT: usize = 3;
const TITLE_WEIGHT: usize = 2;
const TEXT_WEIGHT: usize = 1;
/// BM25's usual constants: term-frequency saturation and length normalisation.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// What is indexed of one tool.
pub struct Entry<'a> {
    pub name: &'a str,
    pub title: &'a str,
    pub description: &'a str,
    pub parameters: Vec<&'a str>,
}

/// The index: per tool its word counts and length, and per word how many tools have it.
pub struct ToolIndex {
    names: Vec<String>,
    counts: Vec<HashMap<String, usize>>,
    lengths: Vec<usize>,
    document_frequency: HashMap<String, usize>,
    average_length: f64,
}

impl ToolIndex {
    pub fn new<'a>(entries: impl IntoIterator<Item = Entry<'a>>) -> Self {
        let mut names = Vec::new();
        let mut counts = Vec::new();
        let mut lengths = Vec::new();
        let mut document_frequency: HashMap<String, usize> = HashMap::new();
        for entry in entries {
            let mut bag: HashMap<String, usize> = HashMap::new();
            let mut add = |text: &str, weight: usize| {
                for word in words(text) {
                    *bag.entry(word).or_default() += weight;
                }
            };
            add(entry.name, NAME_WEIGHT);
            add(entry.title, TITLE_WEIGHT);
            add(entry.description, TEXT_WEIGHT);
            for parameter in &entry.parameters {
                add(parameter, TEXT_WEIGHT);
            }
            for word in bag.keys() {
                *document_frequency.entry(word.clone()).or_default() += 1;
            }
            lengths.push(bag.values().sum());
            counts.push(bag);
            names.push(entry.name.to_string());
        }
        let average_length = if lengths.is_empty() {
            1.0
        } else {
            lengths.iter().sum::<usize>() as f64 / lengths.len() as f64
        };
        Self {
            names,
            counts,
            lengths,
            document_frequency,
            average_length,
        }
    }

    /// The tools that match `query`, best first, at most `limit`; ties keep name order.
    pub fn search(&self, query: &str, limit: usize) -> Vec<&str> {
        let mut terms = words(query);
        terms.sort();
        terms.dedup();
        let tools = self.names.len() as f64;
        let mut scored: Vec<(f64, usize)> = self
            .counts
            .iter()
            .enumerate()
            .filter_map(|(index, counts)| {
                let length = self.lengths[index] as f64;
                let score: f64 = terms
                    .iter()
                    .filter_map(|term| {
                        let frequency = *counts.get(term)? as f64;
                        let having = self.document_frequency[term] as f64;
                        let idf = ((tools - having + 0.5) / (having + 0.5) + 1.0).ln();
                        let saturation = frequency * (K1 + 1.0)
                            / (frequency + K1 * (1.0 - B + B * length / self.average_length));
                        Some(idf * saturation)
                    })
                    .sum();
                (score > 0.0).then_some((score, index))
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored
            .into_iter()
            .take(limit)
            .map(|(_, index)| self.names[index].as_str())
            .collect()
    }
}

/// Words in the form the index keeps: lowercase, split at anything not a letter or digit and at
/// a lowercase-to-uppercase change, common English endings reduced, short stop words dropped.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && previous_lower && !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            previous_lower = c.is_lowercase();
            current.extend(c.to_lowercase());
        } else {
            previous_lower = false;
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out.into_iter()
        .filter(|word| !STOP_WORDS.contains(&word.as_str()))
        .map(|word| singular(&word))
        .collect()
}

const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "is", "it", "its", "by", "with",
    "be", "as", "at", "this", "that", "i", "me", "my", "all", "some", "from",
];

/// A crude singular: `invoices` → `invoice`, `entries` → `entry`, `addresses` → `address`.
fn singular(word: &str) -> String {
    if word.len() > 4
        && let Some(stem) = word.strip_suffix("ies")
    {
        return format!("{stem}y");
    }
    if word.len() > 4
        && let Some(stem) = word.strip_suffix("sses")
    {
        return format!("{stem}ss");
    }
    if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") && !word.ends_with("us") {
        return word[..word.len() - 1].to_string();
    }
    word.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry<'a>(name: &'a str, description: &'a str, parameters: Vec<&'a str>) -> Entry<'a> {
        Entry {
            name,
            title: "",
            description,
            parameters,
        }
    }

    #[test]
    fn the_best_match_comes_first_and_plurals_meet_singulars() {
        let index = ToolIndex::new([
            entry("read_file", "Reads a text file.", vec!["path"]),
            entry(
                "invoices_create_invoice",
                "Creates a new invoice.",
                vec!["amount_cents"],
            ),
            entry("crm_list_contacts", "Lists the contacts.", vec!["query"]),
            entry("weather_get_forecast", "Gets one forecast.", vec!["city"]),
        ]);
        assert_eq!(
            index.search("create an invoice", 3)[0],
            "invoices_create_invoice"
        );
        assert_eq!(
            index.search("contacts in the CRM", 3)[0],
            "crm_list_contacts"
        );
        assert_eq!(
            index.search("weather forecast for a city", 1),
            ["weather_get_forecast"]
        );
        assert!(index.search("quantum entanglement", 3).is_empty());
    }

    #[test]
    fn words_split_at_case_and_punctuation() {
        assert_eq!(words("listDirectory"), ["list", "directory"]);
        assert_eq!(words("get-file_info"), ["get", "file", "info"]);
        assert_eq!(words("The entries"), ["entry"]);
    }
}
