//! Why cordon.lock refuses what it sees: a plugin that is new, changed, declares other things or
//! has other grants than were approved, or a deployment whose settings changed or whose approved
//! plugins did not load. Each refusal's message says what to do (restore it, or review and run
//! `cordon lock`).

/// Why cordon.lock does not approve a plugin as it is now; each says what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LockRefusal {
    /// The plugin has no entry in cordon.lock.
    #[error(
        "it is not in cordon.lock (a new plugin); review it, then run `cordon lock` to approve it"
    )]
    NotLocked,
    /// The plugin's entry has no `declares` list (written before cordon pinned declarations).
    #[error(
        "cordon.lock does not record what it declares (the lockfile predates that); review it, then run `cordon lock`"
    )]
    DeclarationsNotRecorded,
    /// The same file declares other tools or hooks (lines of `declarations::lines`).
    #[error(
        "what it declares changed since it was locked (same file); {}; review it, then run `cordon lock`",
        declaration_changes(added, removed)
    )]
    DeclarationsChanged {
        /// Declaration lines there now that were not approved.
        added: Vec<String>,
        /// Approved declaration lines no longer there.
        removed: Vec<String>,
    },
    /// The file is not the one approved: its sha256 differs.
    #[error(
        "it changed since it was locked: cordon.lock has sha256 {locked} but the file is {actual}; review it, then run `cordon lock`"
    )]
    FileChanged {
        /// The sha256 cordon.lock records, in hex.
        locked: String,
        /// The file's sha256 now, in hex.
        actual: String,
    },
    /// The hook grant differs from the approved one; removed or narrowed counts as a change too.
    #[error(
        "its hook grant changed since it was locked: approved {}, now {}; restore it, or review the change and run `cordon lock`",
        hook_grant(approved),
        hook_grant(now)
    )]
    HookGrantChanged {
        /// The approved `hook` grant lines; empty means no hook.
        approved: Vec<String>,
        /// The `hook` grant lines now; empty means no hook.
        now: Vec<String>,
    },
    /// The plugin has grants that were not approved.
    #[error(
        "its grants changed or widened since it was locked; added: {}; review them, then run `cordon lock`",
        added.join("; ")
    )]
    GrantsWidened {
        /// The grant lines (`lock::capabilities`) not in cordon.lock.
        added: Vec<String>,
    },
}

fn declaration_changes(added: &[String], removed: &[String]) -> String {
    let mut changes = Vec::new();
    if !added.is_empty() {
        changes.push(format!("declared now: {}", added.join("; ")));
    }
    if !removed.is_empty() {
        changes.push(format!("approved: {}", removed.join("; ")));
    }
    changes.join("; ")
}

fn hook_grant(lines: &[String]) -> String {
    match lines.is_empty() {
        true => "no hook".to_string(),
        false => lines.join(", "),
    }
}

/// What keeps a locked deployment from starting as it is now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}; restore them, or review the change and run `cordon lock`", self.problems())]
pub struct DeploymentRefusal {
    /// The deployment's settings (audit log, hook order), if they are not the approved ones.
    pub setting: Option<DeploymentChange>,
    /// Approved plugins that did not load.
    pub missing: Vec<MissingPlugin>,
}

/// How the deployment's settings differ from the approved ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeploymentChange {
    /// The lockfile predates recording the deployment.
    NotRecorded,
    /// The deployment's settings are not the ones recorded.
    Changed {
        /// The deployment lines cordon.lock records.
        approved: Vec<String>,
        /// The deployment lines of the config now.
        now: Vec<String>,
    },
}

/// An approved plugin that did not load: refused (and why), or absent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingPlugin {
    /// The plugin's id.
    pub id: String,
    /// Why it was refused; `None` when the plugins directory has no such file.
    pub refused: Option<String>,
}

impl DeploymentRefusal {
    fn problems(&self) -> String {
        let mut problems = Vec::new();
        match &self.setting {
            Some(DeploymentChange::NotRecorded) => problems.push(
                "cordon.lock does not record the deployment (the lockfile predates that)"
                    .to_string(),
            ),
            Some(DeploymentChange::Changed { approved, now }) => problems.push(format!(
                "the deployment changed: approved `{}`, now `{}`",
                approved.join("; "),
                now.join("; ")
            )),
            None => {}
        }
        if !self.missing.is_empty() {
            let missing: Vec<String> = self
                .missing
                .iter()
                .map(|plugin| match &plugin.refused {
                    Some(reason) => format!("{} (refused: {reason})", plugin.id),
                    None => format!(
                        "{} (no {}.wasm in the plugins directory)",
                        plugin.id, plugin.id
                    ),
                })
                .collect();
            problems.push(format!(
                "approved plugins did not load: {}",
                missing.join(", ")
            ));
        }
        problems.join("; ")
    }
}
