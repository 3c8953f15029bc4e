//! The stdio transport of `cordon serve`. When stdin and stdout are pipes or sockets (as when an
//! MCP client spawns the server), they are read and written with non-blocking I/O driven by the
//! runtime, so a request costs no thread hand-offs; tokio's own stdin and stdout hand every read and
//! write to a blocking thread. A terminal or a file stays on tokio's stdin and stdout.

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use tokio::io::{AsyncRead, AsyncWrite};

pub type Reader = Box<dyn AsyncRead + Send + Unpin>;
pub type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// How a standard stream is connected.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pipe,
    Socket,
    Other,
}

/// Non-blocking readers and writers over stdin and stdout when both are pipes or sockets.
pub fn non_blocking_stdio() -> Option<(Reader, Writer)> {
    let stdin = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let stdout = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    // Both are checked before either is switched to non-blocking mode, so a fallback to tokio's
    // stdin and stdout never sees a non-blocking stream.
    let (input, output) = (kind(&stdin)?, kind(&stdout)?);
    if input == Kind::Other || output == Kind::Other {
        return None;
    }
    let reader: Reader = match input {
        Kind::Pipe => Box::new(tokio::net::unix::pipe::Receiver::from_owned_fd(stdin).ok()?),
        _ => Box::new(socket(stdin)?),
    };
    let writer: Writer = match output {
        Kind::Pipe => Box::new(tokio::net::unix::pipe::Sender::from_owned_fd(stdout).ok()?),
        _ => Box::new(socket(stdout)?),
    };
    Some((reader, writer))
}

fn kind(fd: &OwnedFd) -> Option<Kind> {
    let file = File::from(fd.try_clone().ok()?);
    let file_type = file.metadata().ok()?.file_type();
    Some(if file_type.is_fifo() {
        Kind::Pipe
    } else if file_type.is_socket() {
        Kind::Socket
    } else {
        Kind::Other
    })
}

fn socket(fd: OwnedFd) -> Option<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_nonblocking(true).ok()?;
    tokio::net::UnixStream::from_std(stream).ok()
}
