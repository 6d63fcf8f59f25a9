//! zstd-compressed layers (`application/vnd.oci.image.layer.v1.tar+zstd`, what podman writes
//! with `--compression-format zstd` and `zstd:chunked`): every frame of the stream decoded in
//! turn, and skippable frames (zstd:chunked keeps its table of contents in one) skipped, as
//! the format says. The decoder is `ruzstd` (pure Rust); it decodes one frame, so the frames
//! are walked here.

use ruzstd::decoding::{FrameDecoder, StreamingDecoder};
use std::io::{self, Read};

/// Magic numbers of skippable frames: 0x184D2A50 to 0x184D2A5F, little-endian.
fn skippable(magic: [u8; 4]) -> bool {
    magic[1..] == [0x2A, 0x4D, 0x18] && magic[0] & 0xF0 == 0x50
}

/// A reader that can take back the bytes just read (a frame's magic number, peeked).
struct Peek<R> {
    back: Vec<u8>,
    inner: R,
}

impl<R: Read> Read for Peek<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.back.is_empty() {
            return self.inner.read(buf);
        }
        let n = buf.len().min(self.back.len());
        buf[..n].copy_from_slice(&self.back[..n]);
        self.back.drain(..n);
        Ok(n)
    }
}

enum State<R: Read> {
    /// Between frames.
    Between(Peek<R>),
    /// Inside one.
    Frame(Box<StreamingDecoder<Peek<R>, FrameDecoder>>),
    /// At the end (or after an error).
    Done,
}

/// The decompressed bytes of a zstd stream of one or more frames.
pub struct Frames<R: Read> {
    state: State<R>,
}

impl<R: Read> Frames<R> {
    /// Decodes `inner`.
    pub fn new(inner: R) -> Frames<R> {
        Frames {
            state: State::Between(Peek {
                back: Vec::new(),
                inner,
            }),
        }
    }
}

fn damaged(what: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("zstd: {what}"))
}

impl<R: Read> Read for Frames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            match std::mem::replace(&mut self.state, State::Done) {
                State::Done => return Ok(0),
                State::Frame(mut d) => {
                    let n = d.read(buf)?;
                    if n > 0 {
                        self.state = State::Frame(d);
                        return Ok(n);
                    }
                    self.state = State::Between(d.into_inner());
                }
                State::Between(mut src) => {
                    let mut magic = [0u8; 4];
                    let mut got = 0;
                    while got < 4 {
                        match src.read(&mut magic[got..])? {
                            0 if got == 0 => return Ok(0),
                            0 => return Err(damaged("the stream ends inside a frame's header")),
                            n => got += n,
                        }
                    }
                    if skippable(magic) {
                        let mut len = [0u8; 4];
                        src.read_exact(&mut len)
                            .map_err(|_| damaged("a skippable frame without its length"))?;
                        let len = u64::from(u32::from_le_bytes(len));
                        let skipped = io::copy(&mut (&mut src).take(len), &mut io::sink())?;
                        if skipped != len {
                            return Err(damaged("the stream ends inside a skippable frame"));
                        }
                        self.state = State::Between(src);
                        continue;
                    }
                    src.back = magic.to_vec();
                    let d = StreamingDecoder::new(src).map_err(damaged)?;
                    self.state = State::Frame(Box::new(d));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ruzstd::encoding::{compress_to_vec, CompressionLevel};

    #[test]
    fn every_frame_is_decoded_and_skippable_frames_are_skipped() {
        let a: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let b = b"and a second frame".to_vec();
        let mut stream = compress_to_vec(&a[..], CompressionLevel::Fastest);
        // A skippable frame (magic 0x184D2A5E, 5 bytes), as zstd:chunked ends with one.
        stream.extend_from_slice(&[0x5E, 0x2A, 0x4D, 0x18, 5, 0, 0, 0, 1, 2, 3, 4, 5]);
        stream.extend(compress_to_vec(&b[..], CompressionLevel::Uncompressed));
        let mut out = Vec::new();
        Frames::new(&stream[..]).read_to_end(&mut out).unwrap();
        assert_eq!(out, [a, b].concat());
        // Damage is an error, never a panic or a silent truncation.
        for cut in [3, 10, stream.len() - 1] {
            let mut out = Vec::new();
            assert!(
                Frames::new(&stream[..cut]).read_to_end(&mut out).is_err(),
                "cut at {cut}"
            );
        }
        let mut out = Vec::new();
        assert!(Frames::new(&b"not zstd at all"[..])
            .read_to_end(&mut out)
            .is_err());
        Frames::new(&[][..]).read_to_end(&mut out).unwrap();
        assert!(out.is_empty());
    }
}
