//! Who is told when the served tools change: `subscriptions/listen` streams that asked for
//! `tools/list_changed` (the 2026-07-28 revision, over stdio and stateless HTTP alike), and the
//! stdio connection of an older client, which gets `notifications/tools/list_changed` directly.
//! A watcher that has gone away is dropped the next time it would be told.

use rmcp::RoleServer;
use rmcp::service::{Peer, SubscriptionSink};
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
        let watchers: Vec<(u64, Watcher)> = self.lock().clone();
        let mut gone = Vec::new();
        let mut told = 0;
        for (id, watcher) in watchers {
            let sent = match &watcher {
                Watcher::Subscription(sink) => sink.notify_tool_list_changed().await.is_ok(),
                Watcher::Legacy(peer) => peer.notify_tool_list_changed().await.is_ok(),
            };
            if sent {
                told += 1;
            } else {
                gone.push(id);
            }
        }
        if !gone.is_empty() {
            self.lock().retain(|(id, _)| !gone.contains(id));
        }
        told
    }
}
