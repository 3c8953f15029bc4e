//! Registry credentials: `CORDON_REGISTRY_USERNAME` and `CORDON_REGISTRY_PASSWORD` for the one
//! registry `CORDON_REGISTRY` names (`host[:port]`; other registries never see them), else the
//! entry for the registry's host in the docker config file
//! (`$DOCKER_CONFIG/config.json`, or `~/.docker/config.json`: `auths` with a base64
//! `user:password` in `auth`, or `username` and `password`), else anonymous. Credential helpers
//! (`credsStore`) are not run: cordon runs no programs on a registry's behalf. Credentials are
//! never logged, written to the lock, or put in an error, and each one found (and each token a
//! token service gives for them) is told to the [`SecretListener`] the caller passed, so the host
//! can keep it out of everything it prints whatever a registry echoes back.

use base64::Engine as _;
use oci_client::secrets::RegistryAuth;
use serde_json::Value;
use std::path::PathBuf;

/// What is told every secret found (a password, its Basic form, a token): the host registers it
/// with its scrubber.
pub type SecretListener<'a> = &'a (dyn Fn(&str) + Send + Sync);

/// Tells `listener` about a Basic credential: the password, and `user:password` in base64.
fn found_basic(auth: &RegistryAuth, listener: SecretListener<'_>) {
    if let RegistryAuth::Basic(user, password) = auth {
        listener(password);
        listener(&base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")));
    }
}

/// The credentials for `registry` (`host[:port]`).
pub fn for_registry(registry: &str, on_secret: SecretListener<'_>) -> RegistryAuth {
    let auth = find_for_registry(registry);
    found_basic(&auth, on_secret);
    auth
}

fn find_for_registry(registry: &str) -> RegistryAuth {
    if let (Ok(user), Ok(password)) = (
        std::env::var("CORDON_REGISTRY_USERNAME"),
        std::env::var("CORDON_REGISTRY_PASSWORD"),
    ) && !user.is_empty()
    {
        match std::env::var("CORDON_REGISTRY") {
            Ok(named) if host_of(named.trim()) == registry => {
                return RegistryAuth::Basic(user, password);
            }
            Ok(_) => {}
            Err(_) => tracing::warn!(
                "CORDON_REGISTRY_USERNAME is set but CORDON_REGISTRY does not name the registry it is for, so it is not sent to {registry}"
            ),
        }
    }
    docker_config(registry).unwrap_or(RegistryAuth::Anonymous)
}

fn docker_config(registry: &str) -> Option<RegistryAuth> {
    let dir = match std::env::var_os("DOCKER_CONFIG") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".docker"),
    };
    let text = std::fs::read_to_string(dir.join("config.json")).ok()?;
    let config: Value = serde_json::from_str(&text).ok()?;
    let auths = config.get("auths")?.as_object()?;
    let entry = auths
        .iter()
        .find(|(key, _)| host_of(key) == registry)
        .map(|(_, entry)| entry)?;
    if let Some(encoded) = entry.get("auth").and_then(Value::as_str) {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(encoded.trim())
            .ok()?;
        let (user, password) = String::from_utf8(decoded)
            .ok()?
            .split_once(':')
            .map(|(u, p)| (u.to_string(), p.to_string()))?;
        return Some(RegistryAuth::Basic(user, password));
    }
    let user = entry.get("username")?.as_str()?;
    let password = entry.get("password")?.as_str()?;
    Some(RegistryAuth::Basic(user.to_string(), password.to_string()))
}

/// `https://index.docker.io/v1/` → `index.docker.io`; `127.0.0.1:5000` stays.
fn host_of(key: &str) -> &str {
    let without_scheme = key.split_once("://").map_or(key, |(_, rest)| rest);
    without_scheme.split('/').next().unwrap_or(without_scheme)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_config_keys_match_by_host() {
        assert_eq!(host_of("https://index.docker.io/v1/"), "index.docker.io");
        assert_eq!(host_of("127.0.0.1:5000"), "127.0.0.1:5000");
    }
}
