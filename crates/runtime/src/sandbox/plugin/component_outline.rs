//! A component's outline, read from its bytes before it is compiled: what it exports and how
//! many imports it has. Compiling is the costly step (seconds to minutes for a large component,
//! gigabytes for one with a hundred thousand imports), so a component that exports nothing cordon
//! could run, or imports more than any real one, is refused before it, at the cost of one pass
//! over its sections (code bodies are skipped, not decoded).

use wasmparser::{Encoding, Parser, Payload};

/// The most imports (component and core, at every nesting level) a component may have: ten
/// times the largest real one built here (a componentize-py component, about 2,500).
pub const MAX_IMPORTS: usize = 30_000;

/// What a component must be to load, said when it is not (here, and for plain components whose
/// exports JSON cannot carry).
pub const WHAT_A_PLUGIN_IS: &str = "a plugin is a component built against wit/plugin-0.4.0 or an earlier version (world `cordon-plugin`), one exporting functions of its own WIT world, or a wasi:cli command";

/// Why a component is refused before it is compiled.
#[derive(Debug, thiserror::Error)]
pub enum OutlineRefusal {
    #[error("it exports no functions (it exports: nothing); {}", WHAT_A_PLUGIN_IS)]
    NoExports,
    #[error(
        "it has {count} imports, more than the {limit} cordon compiles (real components have at most a few thousand)"
    )]
    TooManyImports { count: usize, limit: usize },
}

/// Checks the outline of the component `bytes`, returning how many imports it has. Bytes
/// wasmparser cannot read pass: compiling reports what is wrong with them in its own words.
pub fn check(bytes: &[u8]) -> Result<usize, OutlineRefusal> {
    let mut depth = 0usize;
    let mut top_exports = 0usize;
    let mut imports = 0usize;
    for payload in Parser::new(0).parse_all(bytes) {
        let Ok(payload) = payload else {
            return Ok(imports);
        };
        match payload {
            Payload::Version { encoding, .. } if depth == 0 && encoding != Encoding::Component => {
                return Ok(imports);
            }
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentExportSection(section) if depth == 0 => {
                top_exports += section.count() as usize;
            }
            Payload::ComponentImportSection(section) => imports += section.count() as usize,
            Payload::ImportSection(section) => imports += section.count() as usize,
            _ => {}
        }
        if imports > MAX_IMPORTS {
            return Err(OutlineRefusal::TooManyImports {
                count: imports,
                limit: MAX_IMPORTS,
            });
        }
    }
    if top_exports == 0 {
        return Err(OutlineRefusal::NoExports);
    }
    Ok(imports)
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMPONENT: &[u8] = b"\0asm\x0d\x00\x01\x00";

    fn leb(mut value: usize, out: &mut Vec<u8>) {
        loop {
            let byte = (value & 0x7f) as u8;
            value >>= 7;
            if value == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }

    fn section(id: u8, body: &[u8], out: &mut Vec<u8>) {
        out.push(id);
        leb(body.len(), out);
        out.extend_from_slice(body);
    }

    /// A component holding one core module of `imports` function imports.
    fn component_importing(imports: usize) -> Vec<u8> {
        let mut module = b"\0asm\x01\x00\x00\x00".to_vec();
        section(1, &[1, 0x60, 0, 0], &mut module);
        let mut body = Vec::new();
        leb(imports, &mut body);
        for _ in 0..imports {
            body.extend_from_slice(&[1, b'm', 1, b'f', 0x00, 0]);
        }
        section(2, &body, &mut module);
        let mut component = COMPONENT.to_vec();
        section(1, &module, &mut component);
        component
    }

    #[test]
    fn a_component_that_exports_nothing_or_imports_too_much_is_refused_uncompiled() {
        assert!(matches!(check(COMPONENT), Err(OutlineRefusal::NoExports)));
        assert!(matches!(
            check(&component_importing(MAX_IMPORTS + 1)),
            Err(OutlineRefusal::TooManyImports { .. })
        ));
        // Under the bound, only the missing exports refuse it.
        assert!(matches!(
            check(&component_importing(100)),
            Err(OutlineRefusal::NoExports)
        ));
        // Bytes wasmparser cannot read are left to the compiler's own message.
        assert!(check(b"\0asm\x0d\x00\x01\x00\xff\xff").is_ok());
    }

    #[test]
    fn every_guest_built_here_passes_its_outline() {
        let dir = cordon_test_guests::dir();
        let mut checked = 0;
        let mut most = 0;
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|ext| ext == "wasm") {
                let bytes = std::fs::read(&path).unwrap();
                if bytes.get(4..8) == Some(&COMPONENT[4..8]) {
                    let imports =
                        check(&bytes).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
                    most = most.max(imports);
                    checked += 1;
                }
            }
        }
        assert!(checked > 10, "only {checked} guest components found");
        // The bound leaves real components (Python's runtime included) far inside it.
        assert!(most * 10 <= MAX_IMPORTS, "a guest has {most} imports");
        eprintln!("{checked} guests, at most {most} imports");
    }
}
