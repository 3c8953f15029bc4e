//! One cordon.toml, read once and shared by every crate that owns a part of it: the runtime
//! reads its tables (plugins, hooks, grants, limits, host), the agent crate `[model]` and the
//! loop's keys of `[agent]`, the telemetry crate `[telemetry]`. Each reader says which table (or
//! which keys of a shared table) it reads; [`ConfigDocument::check_all_read`] then names, with its
//! file and line, every key no reader took, so a typo anywhere is an error and no crate has to
//! know the others' keys. Each read parses the text again (a few per load, microseconds for a
//! config file): the parsed tree borrows the text, and parsing from it is what keeps every
//! error's line.

use super::ConfigError;
use crate::report::secrets::Secrets;
use serde::de::DeserializeOwned;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use toml::Spanned;
use toml::de::{DeTable, DeValue, ValueDeserializer};

/// A config file's text with where it came from, and what its readers have taken of it.
#[derive(Debug)]
pub struct ConfigDocument {
    text: String,
    origin: PathBuf,
    base: PathBuf,
    read: Mutex<BTreeMap<String, TableRead>>,
    secrets: Secrets,
}

/// What the readers took of one top-level table.
#[derive(Debug)]
enum TableRead {
    /// One reader took the table whole (and checks its keys itself).
    Whole,
    /// Readers took these keys (the table is shared, like `[agent]`).
    Keys(BTreeSet<String>),
}

impl ConfigDocument {
    /// Reads the config file at `path`; relative host paths in it are taken from its directory.
    /// The secrets it holds are registered with `secrets`, the scrubber of the host reading it.
    pub fn load(path: &Path, secrets: &Secrets) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let base = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        Self::new(text, path, base, secrets)
    }

    /// Config text; `origin` names it in errors, `base` anchors relative host paths. Secrets
    /// written in it are registered with `secrets` before anything quotes a line of it (so an
    /// error about it is masked by that scrubber too), and text that is not TOML is refused here.
    pub fn new(
        text: impl Into<String>,
        origin: &Path,
        base: &Path,
        secrets: &Secrets,
    ) -> Result<Self, ConfigError> {
        let text = text.into();
        super::Config::register_literal_secrets(&text, secrets);
        let document = Self {
            text,
            origin: origin.to_path_buf(),
            base: base.to_path_buf(),
            read: Mutex::new(BTreeMap::new()),
            secrets: secrets.clone(),
        };
        document.root()?;
        Ok(document)
    }

    /// The scrubber the secrets of this document are registered with: every part that reads a
    /// secret from it (a model key, an exporter's headers) registers it here.
    pub fn secrets(&self) -> &Secrets {
        &self.secrets
    }

    /// The file (or name) the text came from.
    pub fn origin(&self) -> &Path {
        &self.origin
    }

    /// The directory relative host paths are taken from.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// The error for `key` (a dotted path such as `model.timeout`), naming this document.
    pub fn invalid(&self, key: impl Into<String>, message: impl Into<String>) -> ConfigError {
        ConfigError::Invalid {
            path: self.origin.clone(),
            key: key.into(),
            message: message.into(),
        }
    }

    /// Top-level table `name`, read whole by one reader (its type refuses keys it does not
    /// know); `T::default()` when the file has none.
    pub fn table<T: DeserializeOwned + Default>(&self, name: &str) -> Result<T, ConfigError> {
        self.claim(name, None);
        let mut root = self.root()?;
        match root.remove(name) {
            Some(value) => self.deserialize(value),
            None => Ok(T::default()),
        }
    }

    /// The keys `keys` of top-level table `name`, which several readers share; the others' keys
    /// are left to them, and a key nobody takes is named by [`Self::check_all_read`].
    pub fn keys_of<T: DeserializeOwned + Default>(
        &self,
        name: &str,
        keys: &[&str],
    ) -> Result<T, ConfigError> {
        self.claim(name, Some(keys));
        let mut root = self.root()?;
        let Some(value) = root.remove(name) else {
            return Ok(T::default());
        };
        let span = value.span();
        let DeValue::Table(table) = value.into_inner() else {
            return Err(self.invalid(name, "must be a table"));
        };
        let mine: DeTable<'_> = table
            .into_iter()
            .filter(|(key, _)| keys.contains(&key.get_ref().as_ref()))
            .collect();
        self.deserialize(Spanned::new(span, DeValue::Table(mine)))
    }

    /// Names the first key no reader took, with its line: a table nobody reads, or a key of a
    /// shared table none of its readers knows. Call it once every part has read its tables.
    pub fn check_all_read(&self) -> Result<(), ConfigError> {
        let read = self
            .read
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let root = self.root()?;
        for (key, value) in root.iter() {
            let name: &str = key.get_ref();
            match read.get(name) {
                None => {
                    let known: Vec<&str> = read.keys().map(String::as_str).collect();
                    return Err(self.unknown(name, key.span(), "tables", &known));
                }
                Some(TableRead::Whole) => {}
                Some(TableRead::Keys(taken)) => {
                    let DeValue::Table(table) = value.get_ref() else {
                        continue;
                    };
                    if let Some(stray) =
                        table.keys().find(|k| !taken.contains(k.get_ref().as_ref()))
                    {
                        let known: Vec<&str> = taken.iter().map(String::as_str).collect();
                        let dotted = format!("{name}.{}", stray.get_ref());
                        return Err(self.unknown(&dotted, stray.span(), "keys", &known));
                    }
                }
            }
        }
        Ok(())
    }

    fn unknown(
        &self,
        key: &str,
        span: std::ops::Range<usize>,
        what: &str,
        known: &[&str],
    ) -> ConfigError {
        let line = self.text[..span.start.min(self.text.len())]
            .matches('\n')
            .count()
            + 1;
        let known = known
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        ConfigError::UnknownKey {
            path: self.origin.clone(),
            line,
            key: key.to_string(),
            known: format!("the {what} cordon reads there are {known}"),
        }
    }

    fn claim(&self, name: &str, keys: Option<&[&str]>) {
        let mut read = self
            .read
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        match keys {
            None => {
                read.insert(name.to_string(), TableRead::Whole);
            }
            Some(keys) => {
                let entry = read
                    .entry(name.to_string())
                    .or_insert_with(|| TableRead::Keys(BTreeSet::new()));
                if let TableRead::Keys(taken) = entry {
                    taken.extend(keys.iter().map(|k| k.to_string()));
                }
            }
        }
    }

    fn root(&self) -> Result<DeTable<'_>, ConfigError> {
        DeTable::parse(&self.text)
            .map(Spanned::into_inner)
            .map_err(|err| self.syntax(err))
    }

    fn deserialize<T: DeserializeOwned>(
        &self,
        value: Spanned<DeValue<'_>>,
    ) -> Result<T, ConfigError> {
        T::deserialize(ValueDeserializer::from(value)).map_err(|err| self.syntax(err))
    }

    fn syntax(&self, mut err: toml::de::Error) -> ConfigError {
        err.set_input(Some(&self.text));
        ConfigError::Syntax {
            path: self.origin.clone(),
            message: err.to_string(),
        }
    }
}
