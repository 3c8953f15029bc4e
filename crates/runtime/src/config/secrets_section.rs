//! `[plugins.ID] secrets = { KEY = "${env:NAME}" }`: checked and expanded into the plugin's
//! [`ConfigSecret`]s, each value registered with the host's secret scrubber.

use super::http_section::expand_env;
use crate::capabilities::config_secrets::ConfigSecret;
use crate::report::secrets::{MAX_SECRET_BYTES, MIN_SECRET_BYTES, Secrets};
use std::collections::BTreeMap;

/// The longest key a secret may have.
const MAX_KEY_BYTES: usize = 128;

/// Checks `raw` (key to template) and expands each template, registering what it expanded to
/// with `secrets`. `settings` are the plugin's settings: a key may be a setting or a secret, not
/// both. Errors name the key (`secrets.KEY`) and what to do. A variable that is not set is added
/// to `unset` and its secret left empty (the plugin is then refused at load, saying so).
pub(crate) fn expand(
    raw: &BTreeMap<String, String>,
    settings: &toml::Table,
    secrets: &Secrets,
    unset: &mut Vec<String>,
) -> Result<Vec<ConfigSecret>, (String, String)> {
    let mut granted = Vec::new();
    for (key, template) in raw {
        let field = format!("secrets.{key}");
        if key.is_empty()
            || key.len() > MAX_KEY_BYTES
            || !key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        {
            return Err((
                field,
                format!("a secret's key is 1 to {MAX_KEY_BYTES} letters, digits, `_`, `-` and `.`"),
            ));
        }
        if !template.contains("${env:") {
            // A literal would sit in cordon.toml, and the lock's digest of it could be checked
            // against guesses.
            return Err((
                field,
                "a secret is read from the host's environment: write it as \"${env:NAME}\", not its value".into(),
            ));
        }
        if settings.contains_key(key) {
            return Err((
                field,
                format!(
                    "{key:?} is also a setting; a config key is either a setting or a secret, so remove one of them"
                ),
            ));
        }
        let unset_before = unset.len();
        let (value, parts) = expand_env(template, Some(unset)).map_err(|message| {
            (
                field.clone(),
                format!("{message}; a secret is read from the host's environment, as `\"${{env:NAME}}\"`"),
            )
        })?;
        if unset.len() > unset_before {
            granted.push(ConfigSecret::new(
                key.clone(),
                template.clone(),
                String::new(),
            ));
            continue;
        }
        // Only what the scrubber can mask may be handed out as a secret.
        if !(MIN_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&value.trim().len()) {
            return Err((
                field,
                format!(
                    "its value is {} bytes; a secret is {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes, or it could not be masked in what the plugin returns (give a shorter value as a setting if it is not secret)",
                    value.trim().len()
                ),
            ));
        }
        for part in parts.iter().chain([&value]) {
            secrets.register(part);
        }
        granted.push(ConfigSecret::new(key.clone(), template.clone(), value));
    }
    Ok(granted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_expands_from_the_environment_and_its_value_is_masked_and_never_debugged() {
        // PATH is set wherever tests run (no test may change the environment).
        let path = std::env::var("PATH").expect("PATH is set");
        let secrets = Secrets::default();
        let raw = [("search".to_string(), "${env:PATH}".to_string())].into();
        let granted = expand(&raw, &toml::Table::new(), &secrets, &mut Vec::new()).unwrap();
        assert_eq!(granted[0].value(), path);
        assert_eq!(granted[0].template, "${env:PATH}");
        assert!(!format!("{granted:?}").contains(&path));
        assert_eq!(
            secrets.scrub(&format!("key: {path}")),
            "key: [REDACTED:secret]"
        );
    }

    #[test]
    fn a_key_both_setting_and_secret_or_an_unset_variable_is_refused_by_name() {
        let secrets = Secrets::default();
        let mut settings = toml::Table::new();
        settings.insert("region".into(), "north".into());
        let both = [("region".to_string(), "${env:PATH}".to_string())].into();
        let (field, message) = expand(&both, &settings, &secrets, &mut Vec::new()).unwrap_err();
        assert_eq!(field, "secrets.region");
        assert!(
            message.contains("either a setting or a secret"),
            "{message}"
        );
        for (key, template, says) in [
            ("a b", "${env:PATH}", "letters, digits"),
            ("k\u{202e}", "${env:PATH}", "letters, digits"),
            ("literal", "hunter2-literal-value", "not its value"),
        ] {
            let raw = [(key.to_string(), template.to_string())].into();
            let (_, message) =
                expand(&raw, &toml::Table::new(), &secrets, &mut Vec::new()).unwrap_err();
            assert!(message.contains(says), "{key:?}: {message}");
        }
        let unset = [(
            "k".to_string(),
            "${env:CORDON_TEST_CONFIG_SECRET_UNSET}".to_string(),
        )]
        .into();
        let mut missing = Vec::new();
        let granted = expand(&unset, &toml::Table::new(), &secrets, &mut missing).unwrap();
        assert_eq!(missing, ["CORDON_TEST_CONFIG_SECRET_UNSET"]);
        assert_eq!(granted.len(), 1, "the key is kept, its value empty");
    }
}
