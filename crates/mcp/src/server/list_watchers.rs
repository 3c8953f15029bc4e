//! Who is told when the served tools, resources or prompts change: `subscriptions/listen` streams
//! that asked for that list's changes (the 2026-07-28 revision, over stdio and stateless HTTP
//! alike), and the stdio connection of an older client, which gets
//! `notifications/{tools,resources,prompts}/list_changed` directly.
//! A watcher that has gone away is dropped the next time it would be told.

use cordon_runtime::registry::offer_catalog::Catalog;
use rmcp::RoleServer;
use rmcp::service::{Peer, SubscriptionSendError, SubscriptionSink};
use std::sync::{Arc, Mutex};

#[derive(Clone)]
enum Watcher {
    Subscription(SubscriptionSink),
    Legacy(Peer<RoleServer>),
}

/// Every watcher of one server (shared by its clones).
#[derive(Clone, Default)]
pub struct ListWatchers(
    Arc<Mutex<Vec<(u64, Watcher)>>>,
    Arc<std::sync::atomic::AtomicU64>,
);

/// Removes a subscription from the watchers when its stream ends.
pub struct Registered {
    watchers: ListWatchers,
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.watchers.lock().retain(|(id, _)| *id != self.id);
    }
}

impl ListWatchers {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, Watcher)>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn add(&self, watcher: Watcher) -> u64 {
        let id = self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.lock().push((id, watcher));
        id
    }

    /// A `subscriptions/listen` stream, watched until the returned guard drops.
    pub fn subscribe(&self, sink: SubscriptionSink) -> Registered {
        let id = self.add(Watcher::Subscription(sink));
        Registered {
            watchers: self.clone(),
            id,
        }
    }

    /// An older client's stdio connection, watched for as long as it lasts.
    pub fn legacy(&self, peer: Peer<RoleServer>) {
        self.add(Watcher::Legacy(peer));
    }

    /// Tells every watcher the tool list changed; returns how many were told.
    pub async fn tools_changed(&self) -> usize {
        self.changed(ListKind::Tools).await
    }

    /// Tells the clients watching the resource list (skills included) or the prompt list when
    /// `after` lists other ones than `before`, or has them served by other plugins.
    pub async fn offers_changed(&self, before: &Catalog, after: &Catalog) {
        if !before.same_resources(after) || !before.same_skills(after) {
            let told = self.changed(ListKind::Resources).await;
            tracing::debug!(told, "told the clients watching the resource list");
        }
        if !before.same_prompts(after) {
            let told = self.changed(ListKind::Prompts).await;
            tracing::debug!(told, "told the clients watching the prompt list");
        }
    }

    /// Tells every watcher that asked for it that list `kind` changed; returns how many were
    /// told. A subscription that did not ask for this list stays, untold.
    pub async fn changed(&self, kind: ListKind) -> usize {
        let watchers: Vec<(u64, Watcher)> = self.lock().clone();
        let mut gone = Vec::new();
        let mut told = 0;
        for (id, watcher) in watchers {
            let sent = match &watcher {
                Watcher::Subscription(sink) => match kind {
                    ListKind::Tools => sink.notify_tool_list_changed().await,
                    ListKind::Resources => sink.notify_resource_list_changed().await,
                    ListKind::Prompts => sink.notify_prompt_list_changed().await,
                }
                .map_err(|err| matches!(err, SubscriptionSendError::NotificationNotAccepted(_))),
                Watcher::Legacy(peer) => match kind {
                    ListKind::Tools => peer.notify_tool_list_changed().await,
                    ListKind::Resources => peer.notify_resource_list_changed().await,
                    ListKind::Prompts => peer.notify_prompt_list_changed().await,
                }
                .map_err(|_| false),
            };
            match sent {
                Ok(()) => told += 1,
                // Not asked for by this subscription: it stays.
                Err(true) => {}
                Err(false) => gone.push(id),
            }
        }
        if !gone.is_empty() {
            self.lock().retain(|(id, _)| !gone.contains(id));
        }
        told
    }
}

/// A list clients can be told has changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    Tools,
    Resources,
    Prompts,
}
