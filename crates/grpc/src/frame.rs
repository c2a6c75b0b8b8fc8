//! gRPC's length-prefixed messages: a 1-byte compressed flag and a 4-byte
//! big-endian length before each message, on top of HTTP/2 DATA frames that
//! may cut a message anywhere. [`Deframer`] reads them incrementally so a
//! load counts a stream's messages as its DATA arrives, without buffering a
//! body it does not need, and a size bound stops a broken or hostile server
//! from making it allocate gigabytes.

/// The bytes before every message: compressed flag and length.
pub const PREFIX_LEN: usize = 5;

/// A message as it goes on the wire: prefix then `message` (uncompressed).
pub fn frame(message: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(PREFIX_LEN + message.len());
    out.push(0);
    out.extend_from_slice(&(message.len() as u32).to_be_bytes());
    out.extend_from_slice(message);
    out
}

/// Why a response body is not a sequence of gRPC messages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error(
        "the server sent a {len}-byte message, above the {max}-byte limit (raise --max-message-size if it is meant)"
    )]
    TooLarge { len: usize, max: usize },
    #[error("the server sent a message with compressed flag {0}, which is neither 0 nor 1")]
    BadFlag(u8),
}

/// Reads length-prefixed messages from a byte stream fed in any pieces.
#[derive(Debug, Clone)]
pub struct Deframer {
    max_bytes: usize,
    keep: bool,
    prefix: [u8; PREFIX_LEN],
    prefix_len: usize,
    /// Bytes of the current message still to come (its prefix complete).
    remaining: usize,
    in_message: bool,
    compressed: bool,
    current: Vec<u8>,
    done: Vec<(bool, Vec<u8>)>,
}

impl Deframer {
    /// A reader refusing messages over `max_bytes`; `keep` keeps their
    /// payloads for [`Deframer::take`] (a load only counts them).
    pub fn new(max_bytes: usize, keep: bool) -> Deframer {
        Deframer {
            max_bytes,
            keep,
            prefix: [0; PREFIX_LEN],
            prefix_len: 0,
            remaining: 0,
            in_message: false,
            compressed: false,
            current: Vec::new(),
            done: Vec::new(),
        }
    }

    /// Reads `input`, returning how many messages it completed.
    pub fn feed(&mut self, mut input: &[u8]) -> Result<u32, FrameError> {
        let mut completed = 0;
        loop {
            if !self.in_message {
                let take = (PREFIX_LEN - self.prefix_len).min(input.len());
                self.prefix[self.prefix_len..self.prefix_len + take].copy_from_slice(&input[..take]);
                self.prefix_len += take;
                input = &input[take..];
                if self.prefix_len < PREFIX_LEN {
                    return Ok(completed);
                }
                self.start_message()?;
            }
            let take = self.remaining.min(input.len());
            if self.keep {
                self.current.extend_from_slice(&input[..take]);
            }
            self.remaining -= take;
            input = &input[take..];
            if self.remaining > 0 {
                return Ok(completed);
            }
            self.finish_message();
            completed = completed.saturating_add(1);
            if input.is_empty() {
                return Ok(completed);
            }
        }
    }

    fn start_message(&mut self) -> Result<(), FrameError> {
        let flag = self.prefix[0];
        if flag > 1 {
            return Err(FrameError::BadFlag(flag));
        }
        let len = u32::from_be_bytes([self.prefix[1], self.prefix[2], self.prefix[3], self.prefix[4]]) as usize;
        if len > self.max_bytes {
            return Err(FrameError::TooLarge { len, max: self.max_bytes });
        }
        self.compressed = flag == 1;
        self.remaining = len;
        self.in_message = true;
        if self.keep {
            self.current = Vec::with_capacity(len);
        }
        Ok(())
    }

    fn finish_message(&mut self) {
        if self.keep {
            self.done.push((self.compressed, std::mem::take(&mut self.current)));
        }
        self.in_message = false;
        self.prefix_len = 0;
    }

    /// Whether the bytes so far end inside a message: at the end of the
    /// stream, a truncated answer.
    pub fn is_mid_message(&self) -> bool {
        self.in_message || self.prefix_len > 0
    }

    /// The kept messages completed so far, `(compressed, payload)`, in order.
    pub fn take(&mut self) -> Vec<(bool, Vec<u8>)> {
        std::mem::take(&mut self.done)
    }

    /// Ready for the next response (a new stream), keeping the settings.
    pub fn reset(&mut self) {
        *self = Deframer::new(self.max_bytes, self.keep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_cut_anywhere_are_read_whole_and_counted_once() {
        let mut wire = frame(b"hello");
        wire.extend(frame(b""));
        wire.extend(frame(&[7u8; 300]));
        for cut in 1..wire.len() {
            let mut d = Deframer::new(1024, true);
            let n = d.feed(&wire[..cut]).unwrap() + d.feed(&wire[cut..]).unwrap();
            assert_eq!(n, 3, "cut at {cut}");
            let got = d.take();
            assert_eq!(got[0], (false, b"hello".to_vec()));
            assert_eq!(got[1], (false, Vec::new()));
            assert_eq!(got[2].1.len(), 300);
            assert!(!d.is_mid_message());
        }
        let mut bytewise = Deframer::new(1024, false);
        let n: u32 = wire.iter().map(|b| bytewise.feed(std::slice::from_ref(b)).unwrap()).sum();
        assert_eq!(n, 3);
        assert!(bytewise.take().is_empty(), "a counting reader keeps nothing");
    }

    #[test]
    fn a_truncated_answer_is_seen_at_the_end_of_the_stream() {
        let wire = frame(b"hello");
        let mut d = Deframer::new(1024, false);
        assert_eq!(d.feed(&wire[..3]).unwrap(), 0);
        assert!(d.is_mid_message(), "inside the prefix");
        assert_eq!(d.feed(&wire[3..7]).unwrap(), 0);
        assert!(d.is_mid_message(), "inside the payload");
        d.reset();
        assert!(!d.is_mid_message());
    }

    #[test]
    fn a_message_over_the_limit_or_a_bad_flag_is_refused_before_buffering() {
        let mut d = Deframer::new(10, true);
        let err = d.feed(&[0, 0, 0, 0, 11]).unwrap_err();
        assert_eq!(err, FrameError::TooLarge { len: 11, max: 10 });
        assert!(err.to_string().contains("11-byte message"));
        assert_eq!(Deframer::new(10, true).feed(&[0, 0, 0, 0, 10]).unwrap(), 0, "the limit itself is allowed");
        assert_eq!(Deframer::new(10, true).feed(&[2, 0, 0, 0, 1, 9]), Err(FrameError::BadFlag(2)));
        let mut compressed = Deframer::new(10, true);
        assert_eq!(compressed.feed(&[1, 0, 0, 0, 1, 9]).unwrap(), 1);
        assert_eq!(compressed.take(), vec![(true, vec![9])]);
    }
}
