//! Ctrl-C for the commands that run tools (`call`, `batch`, `run`, `chat`): the first interrupt
//! cancels the work in hand, so results and transcripts stay whole; a second one exits at once.
//! For `serve --http`, SIGTERM or Ctrl-C starts a graceful shutdown; a second one exits at once.

use tokio_util::sync::CancellationToken;

/// Cancels `cancel` on the first Ctrl-C and exits on the second. The handler is installed before
/// this returns, so no interrupt is missed once a batch has started.
pub fn interrupt_watcher(cancel: CancellationToken) -> tokio::task::JoinHandle<()> {
    #[cfg(unix)]
    let mut interrupts =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).ok();
    tokio::spawn(async move {
        #[cfg(unix)]
        let mut next = async || match interrupts.as_mut() {
            Some(interrupts) => interrupts.recv().await.is_some(),
            None => std::future::pending().await,
        };
        #[cfg(not(unix))]
        let next = async || tokio::signal::ctrl_c().await.is_ok();
        if next().await {
            crate::cli::stdio_output::stderr_line(
                "cancelling… (press Ctrl-C again to exit at once)",
            );
            cancel.cancel();
            if next().await {
                std::process::exit(130);
            }
        }
    })
}

/// `cordon serve --http`: completes on the first SIGTERM or Ctrl-C (SIGINT), when a graceful
/// shutdown begins; a second one exits at once. The handlers are installed before this returns.
pub fn termination_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{Signal, SignalKind, signal};
        async fn recv(signal: &mut Option<Signal>) -> Option<()> {
            match signal {
                Some(signal) => signal.recv().await,
                None => std::future::pending().await,
            }
        }
        let mut terminate = signal(SignalKind::terminate()).ok();
        let mut interrupt = signal(SignalKind::interrupt()).ok();
        async move {
            tokio::select! {
                Some(()) = recv(&mut terminate) => {}
                Some(()) = recv(&mut interrupt) => {}
                else => std::future::pending::<()>().await,
            }
            tokio::spawn(async move {
                tokio::select! {
                    Some(()) = recv(&mut terminate) => {}
                    Some(()) = recv(&mut interrupt) => {}
                    else => std::future::pending::<()>().await,
                }
                crate::cli::stdio_output::stderr_line("cordon: stopping at once");
                std::process::exit(130);
            });
        }
    }
    #[cfg(not(unix))]
    async {
        if tokio::signal::ctrl_c().await.is_ok() {
            tokio::spawn(async {
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(130);
                }
            });
        }
    }
}
