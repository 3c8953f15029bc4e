//! Opening the file a transcript path names, for `--resume` and `--transcript`: without ever
//! blocking and regular files only. Every open asks for `O_NONBLOCK` (opening a FIFO otherwise
//! waits for its other end, forever), then the opened descriptor's own type decides, so a FIFO,
//! device, socket or directory swapped in between cannot win a race; a transcript read back is
//! read up to [`MAX_TRANSCRIPT_BYTES`] (`/dev/zero` or a sparse file would otherwise fill memory),
//! a line at a time.

use crate::conversation::transcript_error::TranscriptError;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read as _};
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::Path;

/// The largest transcript read back to resume from.
pub const MAX_TRANSCRIPT_BYTES: u64 = 256 << 20;

/// The transcript at `path` to read back, a line at a time: at most [`MAX_TRANSCRIPT_BYTES`] and
/// one byte more (which [`check_size`] refuses: the file grew while it was read).
pub fn open_to_read(path: &Path) -> Result<impl BufRead, TranscriptError> {
    let file = open(path, OpenOptions::new().read(true))?;
    let size = file.metadata().map_err(|err| open_error(path, err))?.len();
    check_size(path, size)?;
    Ok(BufReader::new(file.take(MAX_TRANSCRIPT_BYTES + 1)))
}

/// Refuses `size` bytes of transcript when they are past the bound.
pub fn check_size(path: &Path, size: u64) -> Result<(), TranscriptError> {
    if size > MAX_TRANSCRIPT_BYTES {
        return Err(TranscriptError::TooLarge {
            path: path.to_path_buf(),
            size,
            limit: MAX_TRANSCRIPT_BYTES,
        });
    }
    Ok(())
}

/// The transcript at `path` opened for appending (created if missing).
pub fn append_to(path: &Path) -> Result<File, TranscriptError> {
    open(path, OpenOptions::new().append(true).create(true))
}

/// Opens without blocking; refuses whatever is not a regular file, naming what it is.
fn open(path: &Path, options: &mut OpenOptions) -> Result<File, TranscriptError> {
    let file = match options.custom_flags(libc::O_NONBLOCK).open(path) {
        Ok(file) => file,
        // A FIFO without a reader refuses a non-blocking writer (ENXIO), a socket every open:
        // say what the path is rather than the errno.
        Err(err) => {
            return Err(match std::fs::metadata(path) {
                Ok(meta) if !meta.is_file() => not_regular(path, meta.file_type()),
                _ => open_error(path, err),
            });
        }
    };
    let meta = file.metadata().map_err(|err| open_error(path, err))?;
    if !meta.is_file() {
        return Err(not_regular(path, meta.file_type()));
    }
    Ok(file)
}

fn not_regular(path: &Path, kind: std::fs::FileType) -> TranscriptError {
    let kind = if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    };
    TranscriptError::NotRegular {
        path: path.to_path_buf(),
        kind,
    }
}

/// The error for a transcript that could not be opened or read.
pub fn open_error(path: &Path, source: std::io::Error) -> TranscriptError {
    TranscriptError::Open {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_files_are_refused_by_what_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("t.jsonl");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        let read = |path: &Path| open_to_read(path).map(drop);
        for err in [read(&fifo).unwrap_err(), append_to(&fifo).unwrap_err()] {
            assert!(err.to_string().contains("a FIFO (named pipe)"), "{err}");
        }
        let zero = read(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(zero.contains("/dev/zero is a device"), "{zero}");
        let directory = append_to(dir.path()).unwrap_err().to_string();
        assert!(directory.contains("a directory"), "{directory}");
    }

    #[test]
    fn a_transcript_past_the_bound_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl");
        File::create(&path)
            .unwrap()
            .set_len(MAX_TRANSCRIPT_BYTES + 1)
            .unwrap();
        let err = open_to_read(&path).map(drop).unwrap_err().to_string();
        assert!(err.contains("over the 256 MiB"), "{err}");
    }
}
