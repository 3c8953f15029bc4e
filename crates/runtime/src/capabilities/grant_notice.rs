//! What a model is told about where a component that cannot describe itself (a plain component or
//! a `wasi:cli` command) may look: the sentence its tools' descriptions end with, and the list a
//! failed call's message adds, both read from the plugin's grants. A cordon plugin says this
//! itself (the bundled fs plugin's errors list its directories).

use super::grant::{Access, PluginGrant};

impl PluginGrant {
    /// The guest directory a command starts in: `working_dir` when set, else the first granted
    /// directory; `None` with no directories.
    pub fn working_dir(&self) -> Option<&str> {
        self.working_dir
            .as_deref()
            .or_else(|| self.dirs.first().map(|dir| dir.guest.as_str()))
    }
}

/// The granted directories with their modes (`/data (read-only), /out (read-write)`), or `None`.
fn directories(grant: &PluginGrant) -> Option<String> {
    if grant.dirs.is_empty() {
        return None;
    }
    let listed: Vec<String> = grant
        .dirs
        .iter()
        .map(|dir| {
            let mode = match dir.access {
                Access::ReadOnly => "read-only",
                Access::ReadWrite => "read-write",
            };
            format!("{} ({mode})", dir.guest)
        })
        .collect();
    Some(listed.join(", "))
}

/// The origins the plugin may reach, or `None`.
fn origins(grant: &PluginGrant) -> Option<String> {
    if grant.http.is_empty() {
        return None;
    }
    let listed: Vec<String> = grant.http.iter().map(|http| http.origin()).collect();
    Some(listed.join(", "))
}

/// The sentence a derived description ends with: the directories it sees (and, for a command,
/// where relative paths start) and the origins it may reach; nothing else exists for it.
pub fn description_sentence(grant: &PluginGrant, working_dir: Option<&str>) -> String {
    let mut sentence = match directories(grant) {
        None => "It sees no files".to_string(),
        Some(dirs) => format!("It sees only the directories {dirs}"),
    };
    if let Some(dir) = working_dir {
        sentence.push_str(&format!("; relative paths start in {dir}"));
    }
    match origins(grant) {
        None => sentence.push_str(", and has no network."),
        Some(origins) => sentence.push_str(&format!(", and may reach only {origins} over HTTP.")),
    }
    sentence
}

/// What a failed call's message adds when it may have looked where it was not granted.
pub fn failure_note(grant: &PluginGrant) -> String {
    match directories(grant) {
        None => "It is granted no directories: no path exists for it.".to_string(),
        Some(dirs) => {
            format!("It is granted only {dirs}; a path elsewhere does not exist for it.")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::grant::DirGrant;
    use crate::capabilities::net::HttpGrant;

    fn dir(guest: &str, access: Access) -> DirGrant {
        DirGrant {
            host: "/srv".into(),
            guest: guest.into(),
            access,
        }
    }

    #[test]
    fn the_sentence_names_every_grant_and_where_relative_paths_start() {
        let (scheme, host, port) = HttpGrant::parse_origin("https://api.example.com").unwrap();
        let grant = PluginGrant {
            dirs: vec![
                dir("/data", Access::ReadOnly),
                dir("/out", Access::ReadWrite),
            ],
            http: vec![HttpGrant {
                scheme,
                host,
                port,
                methods: None,
                path_prefix: None,
                headers: Vec::new(),
                private: false,
            }]
            .into(),
            ..PluginGrant::default()
        };
        assert_eq!(grant.working_dir(), Some("/data"));
        assert_eq!(
            description_sentence(&grant, grant.working_dir()),
            "It sees only the directories /data (read-only), /out (read-write); relative paths start in /data, and may reach only https://api.example.com:443 over HTTP."
        );
        assert_eq!(
            failure_note(&grant),
            "It is granted only /data (read-only), /out (read-write); a path elsewhere does not exist for it."
        );
    }

    #[test]
    fn nothing_granted_says_so() {
        let grant = PluginGrant::default();
        assert_eq!(grant.working_dir(), None);
        assert_eq!(
            description_sentence(&grant, None),
            "It sees no files, and has no network."
        );
    }

    #[test]
    fn a_set_working_dir_wins() {
        let grant = PluginGrant {
            dirs: vec![
                dir("/data", Access::ReadOnly),
                dir("/out", Access::ReadWrite),
            ],
            working_dir: Some("/out".into()),
            ..PluginGrant::default()
        };
        assert_eq!(grant.working_dir(), Some("/out"));
    }
}
