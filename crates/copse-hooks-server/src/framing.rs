//! Newline-delimited framing with a size limit: a line longer than the limit is
//! refused and skipped without ever being held in memory whole.

use std::io::{self, BufRead};

/// One frame read from the stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete line (without its newline; a trailing `\r` removed).
    Line(Vec<u8>),
    /// A line over the limit: its bytes were read and discarded.
    Oversize {
        /// How many bytes it had, counted while discarding.
        bytes: usize,
    },
    /// The stream ended.
    Eof,
}

/// Reads the next frame. A final line without a newline still counts as a line.
pub fn read_frame(reader: &mut impl BufRead, max: usize) -> io::Result<Frame> {
    let mut line = Vec::new();
    let mut oversize: Option<usize> = None;
    loop {
        let (consumed, done) = {
            let buf = match reader.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                return Ok(match oversize {
                    Some(bytes) => Frame::Oversize { bytes },
                    None if line.is_empty() => Frame::Eof,
                    None => Frame::Line(trim_cr(line)),
                });
            }
            let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], Some(i + 1)),
                None => (buf, None),
            };
            match &mut oversize {
                Some(bytes) => *bytes += chunk.len(),
                None if line.len() + chunk.len() > max => {
                    oversize = Some(line.len() + chunk.len());
                    line = Vec::new();
                }
                None => line.extend_from_slice(chunk),
            }
            (done.unwrap_or(buf.len()), done.is_some())
        };
        reader.consume(consumed);
        if done {
            return Ok(match oversize {
                Some(bytes) => Frame::Oversize { bytes },
                None => Frame::Line(trim_cr(line)),
            });
        }
    }
}

fn trim_cr(mut line: Vec<u8>) -> Vec<u8> {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_oversize_and_eof() {
        let data = b"{\"a\":1}\r\n0123456789ABCDEF\nok\nlast";
        let mut r = io::BufReader::with_capacity(4, &data[..]);
        assert_eq!(
            read_frame(&mut r, 10).unwrap(),
            Frame::Line(b"{\"a\":1}".to_vec())
        );
        assert_eq!(
            read_frame(&mut r, 10).unwrap(),
            Frame::Oversize { bytes: 16 }
        );
        assert_eq!(read_frame(&mut r, 10).unwrap(), Frame::Line(b"ok".to_vec()));
        assert_eq!(
            read_frame(&mut r, 10).unwrap(),
            Frame::Line(b"last".to_vec())
        );
        assert_eq!(read_frame(&mut r, 10).unwrap(), Frame::Eof);
    }
}
