//! Server-Sent Events (`responseEncoding: "sse"`): a response read event by event as it
//! arrives, until the stream ends or a terminal event (`impl.sseTerminal`: an event whose
//! name, or whose whole data, is that text — `[DONE]`, `message_stop`).
//!
//! The parsing is the WHATWG algorithm ("Interpreting an event stream"): lines end with LF or
//! CRLF, `:` starts a comment, `data` lines of one event are joined with LF, a blank line
//! dispatches the event (one without data is dropped), an unfinished event at the end of the
//! stream is dropped. It is done here, over a blocking reader, because the SSE crates in the
//! dependency tree parse async byte streams only. The body is counted against
//! `maxResponseBytes` as it arrives, and the call's clock bounds it (a server that never ends
//! its stream is a `TIMEOUT`).

use crate::base::http::CappedRead;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read};

/// One event of a stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    /// The `event:` field; `message` when the server sent none.
    pub name: String,
    pub data: String,
    pub id: Option<String>,
}

impl Event {
    /// `{"event": …, "data": …, "id"?: …}`, as `invoke --stream --json` prints it.
    pub fn to_json(&self) -> Value {
        let mut out = json!({ "event": self.name, "data": self.data });
        if let Some(id) = &self.id {
            out["id"] = Value::String(id.clone());
        }
        out
    }
}

/// Read `body` event by event, telling `on_event` each one (the terminal event not included),
/// until the stream ends or an event matches `terminal`; fails as soon as more than `cap`
/// bytes have arrived.
pub fn read(
    body: impl Read,
    cap: u64,
    terminal: Option<&str>,
    on_event: &mut dyn FnMut(&Event),
) -> Result<(), CappedRead> {
    let mut reader = BufReader::new(body.take(cap.saturating_add(1)));
    let mut total: u64 = 0;
    let mut line = Vec::new();
    let mut event = Event::default();
    let mut data: Option<String> = None;
    loop {
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .map_err(CappedRead::Failed)?;
        total += read as u64;
        if total > cap {
            return Err(CappedRead::TooLarge);
        }
        if read == 0 {
            // The end of the stream: an event without its blank line is not dispatched.
            return Ok(());
        }
        let text = String::from_utf8_lossy(&line);
        let text = text
            .strip_suffix('\n')
            .map_or(&*text, |t| t.strip_suffix('\r').unwrap_or(t));
        if text.is_empty() {
            let finished = std::mem::take(&mut event);
            let Some(data) = data.take() else { continue };
            let finished = Event {
                name: if finished.name.is_empty() {
                    "message".to_owned()
                } else {
                    finished.name
                },
                data,
                id: finished.id,
            };
            if terminal.is_some_and(|t| t == finished.name || t == finished.data) {
                return Ok(());
            }
            on_event(&finished);
            continue;
        }
        if text.starts_with(':') {
            continue;
        }
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (text, ""),
        };
        match field {
            "data" => match &mut data {
                Some(joined) => {
                    joined.push('\n');
                    joined.push_str(value);
                }
                None => data = Some(value.to_owned()),
            },
            "event" => event.name = value.to_owned(),
            "id" if !value.contains('\0') => event.id = Some(value.to_owned()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str, terminal: Option<&str>) -> Vec<Event> {
        let mut out = Vec::new();
        read(text.as_bytes(), 1 << 20, terminal, &mut |e| {
            out.push(e.clone())
        })
        .unwrap();
        out
    }

    #[test]
    fn events_are_read_as_the_whatwg_algorithm_says() {
        let got = events(
            ": comment\r\ndata: a\r\ndata:b\r\n\r\nevent: delta\nid: 7\ndata: {\"t\":1}\n\nevent: empty\n\ndata: unfinished",
            None,
        );
        assert_eq!(
            got,
            vec![
                Event {
                    name: "message".into(),
                    data: "a\nb".into(),
                    id: None
                },
                Event {
                    name: "delta".into(),
                    data: "{\"t\":1}".into(),
                    id: Some("7".into())
                },
            ]
        );
    }

    #[test]
    fn a_terminal_event_ends_the_stream_by_name_or_by_data() {
        let text = "data: a\n\ndata: [DONE]\n\ndata: b\n\n";
        assert_eq!(events(text, Some("[DONE]")).len(), 1);
        let text = "data: a\n\nevent: stop\ndata: x\n\ndata: b\n\n";
        assert_eq!(events(text, Some("stop")).len(), 1);
        assert_eq!(events(text, None).len(), 3);
    }

    #[test]
    fn a_stream_past_its_cap_fails() {
        let text = "data: aaaaaaaa\n\n".repeat(10);
        let result = read(text.as_bytes(), 50, None, &mut |_| {});
        assert!(matches!(result, Err(CappedRead::TooLarge)));
    }
}
