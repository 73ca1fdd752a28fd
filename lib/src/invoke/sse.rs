//! Server-Sent Events (`responseEncoding: "sse"`): a response read event by event as it
//! arrives, until the stream ends or a terminal event (`impl.sseTerminal`: an event whose
//! name, or whose whole data, is that text — `[DONE]`, `message_stop`).
//!
//! The parsing is the WHATWG algorithm ("Interpreting an event stream"): lines end with LF,
//! CRLF or a lone CR (also when CR and LF arrive in different reads), `:` starts a comment, `data` lines of one event are joined with LF, a blank line
//! dispatches the event (one without data is dropped), an unfinished event at the end of the
//! stream is dropped. It is done here, over a blocking reader, because the SSE crates in the
//! dependency tree parse async byte streams only. The body is counted against
//! `maxResponseBytes` as it arrives, and the call's clock bounds it (a server that never ends
//! its stream is a `TIMEOUT`).

use crate::base::http::CappedRead;
use serde_json::{Value, json};
use std::io::{self, BufRead, BufReader, Read};

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
    let mut after_cr = false;
    loop {
        line.clear();
        let read = read_line(&mut reader, &mut line, &mut after_cr).map_err(CappedRead::Failed)?;
        total += read as u64;
        if total > cap {
            return Err(CappedRead::TooLarge);
        }
        if read == 0 {
            // The end of the stream: an event without its blank line is not dispatched.
            return Ok(());
        }
        let text = String::from_utf8_lossy(&line);
        let text = &*text;
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

/// Read one line into `line`, without its end: a line ends with CRLF, LF or a lone CR.
/// `after_cr` carries "the last line ended with CR" across calls, so the LF of a CRLF that
/// arrives in the next read is not taken for a blank line. Returns the bytes consumed; 0 at the
/// end of the stream (a last line without an end is returned as a line).
fn read_line(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    after_cr: &mut bool,
) -> io::Result<usize> {
    let mut consumed = 0;
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(consumed);
        }
        if std::mem::take(after_cr) && buf[0] == b'\n' {
            reader.consume(1);
            consumed += 1;
            continue;
        }
        match buf.iter().position(|&b| b == b'\n' || b == b'\r') {
            Some(at) => {
                *after_cr = buf[at] == b'\r';
                line.extend_from_slice(&buf[..at]);
                reader.consume(at + 1);
                return Ok(consumed + at + 1);
            }
            None => {
                let n = buf.len();
                line.extend_from_slice(buf);
                reader.consume(n);
                consumed += n;
            }
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

    /// A reader that hands out one byte per read, so every line end is split across reads.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let Some((first, rest)) = self.0.split_first() else {
                return Ok(0);
            };
            buf[0] = *first;
            self.0 = rest;
            Ok(1)
        }
    }

    #[test]
    fn lone_cr_and_crlf_split_across_reads_end_lines() {
        let text = "data: a\rdata: b\r\revent: e\r\ndata: c\r\n\r\ndata: d\n\n";
        let expected = vec![
            Event {
                name: "message".into(),
                data: "a\nb".into(),
                id: None,
            },
            Event {
                name: "e".into(),
                data: "c".into(),
                id: None,
            },
            Event {
                name: "message".into(),
                data: "d".into(),
                id: None,
            },
        ];
        assert_eq!(events(text, None), expected);
        let mut trickled = Vec::new();
        read(Trickle(text.as_bytes()), 1 << 20, None, &mut |e| {
            trickled.push(e.clone())
        })
        .unwrap();
        assert_eq!(trickled, expected);
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
