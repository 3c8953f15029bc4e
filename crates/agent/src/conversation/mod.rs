//! The conversation: its messages, its JSON-lines transcript, tool calls that small models write
//! as text, and what an observer (a live view, an event stream) is told as it grows.

pub mod message;
pub mod observer;
pub mod text_calls;
pub mod transcript;
