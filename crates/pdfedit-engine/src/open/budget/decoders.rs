//! Streaming decoders the bytes pass needs beyond flate: RunLength and LZW.

use std::io::Read;

/// RunLengthDecode (§7.4.5) as a reader.
pub(super) struct RunLengthReader<R> {
    inner: R,
    /// Pending output: a byte repeated `count` times, or `count` literal bytes to copy.
    repeat: Option<u8>,
    count: usize,
    done: bool,
}

impl<R: Read> RunLengthReader<R> {
    pub(super) fn new(inner: R) -> Self {
        RunLengthReader {
            inner,
            repeat: None,
            count: 0,
            done: false,
        }
    }

    fn byte(&mut self) -> Option<u8> {
        let mut b = [0u8];
        match self.inner.read(&mut b) {
            Ok(1) => Some(b[0]),
            _ => None,
        }
    }
}

impl<R: Read> Read for RunLengthReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut n = 0;
        while n < buf.len() && !self.done {
            if self.count == 0 {
                match self.byte() {
                    None | Some(128) => self.done = true,
                    Some(len @ 0..=127) => {
                        self.repeat = None;
                        self.count = len as usize + 1;
                    }
                    Some(len) => {
                        self.repeat = self.byte();
                        self.done = self.repeat.is_none();
                        self.count = 257 - len as usize;
                    }
                }
                continue;
            }
            let b = match self.repeat {
                Some(b) => b,
                None => match self.byte() {
                    Some(b) => b,
                    None => {
                        self.done = true;
                        break;
                    }
                },
            };
            buf[n] = b;
            n += 1;
            self.count -= 1;
        }
        Ok(n)
    }
}

/// LZWDecode (§7.4.4, early change on) as a reader; a code it cannot read ends the data.
pub(super) struct LzwReader<R> {
    inner: R,
    bits: u64,
    nbits: u32,
    width: u32,
    /// Each entry: (prefix code, last byte, length).
    table: Vec<(u16, u8, u32)>,
    prev: Option<u16>,
    out: Vec<u8>,
    out_pos: usize,
    done: bool,
}

impl<R: Read> LzwReader<R> {
    pub(super) fn new(inner: R) -> Self {
        let mut r = LzwReader {
            inner,
            bits: 0,
            nbits: 0,
            width: 9,
            table: Vec::with_capacity(4096),
            prev: None,
            out: Vec::new(),
            out_pos: 0,
            done: false,
        };
        r.reset();
        r
    }

    fn reset(&mut self) {
        self.table.clear();
        for b in 0..=255u8 {
            self.table.push((u16::MAX, b, 1));
        }
        // 256 clear, 257 end of data.
        self.table.push((u16::MAX, 0, 0));
        self.table.push((u16::MAX, 0, 0));
        self.width = 9;
        self.prev = None;
    }

    fn code(&mut self) -> Option<u16> {
        while self.nbits < self.width {
            let mut b = [0u8];
            match self.inner.read(&mut b) {
                Ok(1) => {
                    self.bits = (self.bits << 8) | u64::from(b[0]);
                    self.nbits += 8;
                }
                _ => return None,
            }
        }
        self.nbits -= self.width;
        let code = (self.bits >> self.nbits) & ((1 << self.width) - 1);
        self.bits &= (1u64 << self.nbits) - 1;
        u16::try_from(code).ok()
    }

    /// The bytes of `code`, into `self.out`.
    fn emit(&mut self, code: u16) {
        let start = self.out.len();
        let mut c = code;
        while let Some(&(prefix, last, _)) = self.table.get(c as usize) {
            self.out.push(last);
            if prefix == u16::MAX {
                break;
            }
            c = prefix;
        }
        self.out[start..].reverse();
    }

    fn first_byte(&self, code: u16) -> u8 {
        let mut c = code;
        loop {
            let (prefix, last, _) = self.table[c as usize];
            if prefix == u16::MAX {
                return last;
            }
            c = prefix;
        }
    }

    fn step(&mut self) {
        let Some(code) = self.code() else {
            self.done = true;
            return;
        };
        match code {
            256 => self.reset(),
            257 => self.done = true,
            _ => {
                let known = (code as usize) < self.table.len();
                match (self.prev, known) {
                    (None, true) => self.emit(code),
                    (Some(prev), true) => {
                        self.emit(code);
                        let first = self.first_byte(code);
                        self.add(prev, first);
                    }
                    (Some(prev), false) if code as usize == self.table.len() => {
                        let first = self.first_byte(prev);
                        self.add(prev, first);
                        self.emit(code);
                    }
                    _ => {
                        self.done = true;
                        return;
                    }
                }
                self.prev = Some(code);
            }
        }
    }

    fn add(&mut self, prefix: u16, last: u8) {
        if self.table.len() < 4096 {
            let len = self.table[prefix as usize].2 + 1;
            self.table.push((prefix, last, len));
        }
        self.width = match self.table.len() + 1 {
            n if n >= 2048 => 12,
            n if n >= 1024 => 11,
            n if n >= 512 => 10,
            _ => 9,
        };
    }
}

impl<R: Read> Read for LzwReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.out_pos >= self.out.len() && !self.done {
            self.out.clear();
            self.out_pos = 0;
            self.step();
        }
        let n = (self.out.len() - self.out_pos).min(buf.len());
        buf[..n].copy_from_slice(&self.out[self.out_pos..self.out_pos + n]);
        self.out_pos += n;
        Ok(n)
    }
}
