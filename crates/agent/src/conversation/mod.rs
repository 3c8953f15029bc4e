//! The conversation: its messages, their transcript, tool calls written as text, holding back
//! streamed text that may be such a call, and what observers are told.

pub mod call_signature;
pub mod message;
pub mod observer;
pub mod stream_gate;
pub mod text_calls;
pub mod transcript;
mod transcript_error;
mod transcript_file;
mod transcript_items;
mod transcript_shape;
pub mod user_text;
