//! Which of a component's imports the host does not provide, all of them at once (wasmtime names
//! only the first it cannot link). The host links WASI 0.2 (every 0.2.x), WASI 0.3's cli, clocks
//! and random (every 0.3.x), `wasi:http` 0.2, `wasi:config/store` (its draft and release
//! candidate) and `cordon:plugin/host`; the integration tests check this list against a component
//! importing an interface nobody offers. WASI 0.3's filesystem, sockets and HTTP are not linked
//! until each has a gate as 0.2's do: a component importing one is refused, naming it.

/// The packages the linker provides (any 0.2 version), and cordon's own host interfaces.
const PROVIDED_WASI_PACKAGES: &[&str] = &[
    "wasi:cli/",
    "wasi:clocks/",
    "wasi:filesystem/",
    "wasi:io/",
    "wasi:random/",
    "wasi:sockets/",
    "wasi:http/",
];
/// The WASI 0.3 packages the linker provides (any 0.3 version).
const PROVIDED_WASI_0_3_PACKAGES: &[&str] = &["wasi:cli/", "wasi:clocks/", "wasi:random/"];
const PROVIDED_CORDON: &[&str] = &[
    "cordon:plugin/host@0.1.0",
    "cordon:plugin/types@0.1.0",
    "cordon:plugin/host@0.2.0",
    "cordon:plugin/types@0.2.0",
];

/// The component's imports no part of the host provides, in import order.
pub fn not_provided(
    engine: &wasmtime::Engine,
    component: &wasmtime::component::Component,
) -> Vec<String> {
    component
        .component_type()
        .imports(engine)
        .map(|(name, _)| name.to_string())
        .filter(|name| !is_provided(name))
        .collect()
}

fn is_provided(name: &str) -> bool {
    if PROVIDED_CORDON.contains(&name) {
        return true;
    }
    if let Some(version) = name.strip_prefix("wasi:config/store@") {
        return crate::sandbox::settings::VERSIONS.contains(&version);
    }
    let version_of = |package: &str| {
        name.strip_prefix(package)
            .and_then(|rest| rest.split_once('@'))
            .map(|(_, version)| version)
    };
    PROVIDED_WASI_PACKAGES
        .iter()
        .any(|package| version_of(package).is_some_and(|version| version.starts_with("0.2.")))
        || PROVIDED_WASI_0_3_PACKAGES
            .iter()
            .any(|package| version_of(package).is_some_and(|version| version.starts_with("0.3.")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wasi_0_2_and_cordon_host_are_provided() {
        for (name, provided) in [
            ("wasi:filesystem/types@0.2.6", true),
            ("wasi:http/outgoing-handler@0.2.0", true),
            ("cordon:plugin/host@0.2.0", true),
            ("cordon:plugin/types@0.1.0", true),
            ("wasi:config/store@0.2.0-draft", true),
            ("wasi:config/store@0.2.0-rc.1", true),
            ("wasi:config/store@0.3.0", false),
            ("wasi:filesystem/types@0.3.0", false),
            ("wasi:cli/stdout@0.3.2", true),
            ("wasi:clocks/monotonic-clock@0.3.0", true),
            ("wasi:random/random@0.3.0", true),
            ("wasi:sockets/types@0.3.0", false),
            ("wasi:http/handler@0.3.0", false),
            ("wasi:keyvalue/store@0.2.0-draft", false),
            ("test:foreign/gadget", false),
        ] {
            assert_eq!(is_provided(name), provided, "{name}");
        }
    }
}
