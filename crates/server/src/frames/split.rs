//! Splitting the inbound byte stream into lines, holding at most the frame limit of a partial
//! line, and only the first [`HEAD_BYTES`] of a line over it (enough to find its `"id"`).

/// How much of an oversized line is kept to look for its id: a request's `id` comes early in
/// every client we know of, and this bounds what a discarded line may cost.
pub(super) const HEAD_BYTES: usize = 4 * 1024;

/// One piece of the inbound byte stream.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Piece {
    /// A complete line, without its newline.
    Line(Vec<u8>),
    /// A line over the limit, discarded: its length in bytes, and its first bytes (at most
    /// [`HEAD_BYTES`]).
    Oversized { len: usize, head: Vec<u8> },
}

/// Splits a byte stream into lines, holding at most `max` bytes of a partial line.
pub(super) struct Splitter {
    buf: Vec<u8>,
    /// While an oversized line is being skipped: its bytes seen so far, and its head.
    skipping: Option<(usize, Vec<u8>)>,
    max: usize,
}

/// Top `head` up from `data` to at most [`HEAD_BYTES`].
fn fill(head: &mut Vec<u8>, data: &[u8]) {
    let room = HEAD_BYTES.saturating_sub(head.len());
    head.extend_from_slice(&data[..room.min(data.len())]);
}

impl Splitter {
    pub(super) fn new(max: usize) -> Splitter {
        Splitter {
            buf: Vec::new(),
            skipping: None,
            max,
        }
    }

    /// The partial line so far, cut to its head, as an oversized line starts.
    fn take_head(&mut self) -> Vec<u8> {
        let mut head = std::mem::take(&mut self.buf);
        head.truncate(HEAD_BYTES);
        head
    }

    pub(super) fn feed(&mut self, mut data: &[u8], out: &mut Vec<Piece>) {
        while !data.is_empty() {
            if let Some(i) = data.iter().position(|b| *b == b'\n') {
                let line = &data[..i];
                if let Some((seen, mut head)) = self.skipping.take() {
                    fill(&mut head, line);
                    out.push(Piece::Oversized {
                        len: seen + i,
                        head,
                    });
                } else if self.buf.len() + i > self.max {
                    let len = self.buf.len() + i;
                    let mut head = self.take_head();
                    fill(&mut head, line);
                    out.push(Piece::Oversized { len, head });
                } else {
                    self.buf.extend_from_slice(line);
                    out.push(Piece::Line(std::mem::take(&mut self.buf)));
                }
                data = &data[i + 1..];
            } else {
                if let Some((seen, head)) = &mut self.skipping {
                    *seen += data.len();
                    fill(head, data);
                } else if self.buf.len() + data.len() > self.max {
                    let seen = self.buf.len() + data.len();
                    let mut head = self.take_head();
                    fill(&mut head, data);
                    self.skipping = Some((seen, head));
                } else {
                    self.buf.extend_from_slice(data);
                }
                data = &[];
            }
        }
    }

    /// The stream ended: a last line without a newline still counts.
    pub(super) fn finish(&mut self, out: &mut Vec<Piece>) {
        if let Some((len, head)) = self.skipping.take() {
            out.push(Piece::Oversized { len, head });
        } else if !self.buf.is_empty() {
            out.push(Piece::Line(std::mem::take(&mut self.buf)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(max: usize, chunks: &[&[u8]]) -> Vec<Piece> {
        let mut s = Splitter::new(max);
        let mut out = Vec::new();
        for c in chunks {
            s.feed(c, &mut out);
        }
        s.finish(&mut out);
        out
    }

    fn oversized(len: usize, head: &[u8]) -> Piece {
        Piece::Oversized {
            len,
            head: head.to_vec(),
        }
    }

    #[test]
    fn lines_split_across_chunks_come_out_whole() {
        assert_eq!(
            split(100, &[b"ab", b"c\nde", b"f\n", b"g"]),
            vec![
                Piece::Line(b"abc".to_vec()),
                Piece::Line(b"def".to_vec()),
                Piece::Line(b"g".to_vec()),
            ]
        );
    }

    #[test]
    fn an_oversized_line_is_measured_and_skipped_and_the_next_survives() {
        let big = [b'x'; 25];
        assert_eq!(
            split(10, &[&big[..12], &big[12..], b"\nok\n"]),
            vec![oversized(25, &big), Piece::Line(b"ok".to_vec())]
        );
        // Exactly at the limit is fine.
        assert_eq!(split(3, &[b"abc\n"]), vec![Piece::Line(b"abc".to_vec())]);
        assert_eq!(split(3, &[b"abcd\n"]), vec![oversized(4, b"abcd")]);
    }

    #[test]
    fn only_the_head_of_an_oversized_line_is_kept() {
        let max = 2 * HEAD_BYTES;
        let mut line = br#"{"id":7,"pad":""#.to_vec();
        line.resize(max + 100, b'x');
        let pieces = split(
            max,
            &[&line[..HEAD_BYTES - 3], &line[HEAD_BYTES - 3..], b"\n"],
        );
        assert_eq!(pieces, vec![oversized(max + 100, &line[..HEAD_BYTES])]);
    }
}
