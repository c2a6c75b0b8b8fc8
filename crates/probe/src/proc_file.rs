//! An open /proc file that is re-read from offset 0 with `pread`: the kernel
//! regenerates the content on every read, so keeping the descriptor saves the
//! path lookup and `open`/`close` on every sample, which is most of the cost of
//! sampling a thread at a 10 ms interval.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

pub struct ProcFile {
    file: File,
}

impl ProcFile {
    pub fn open(path: &Path) -> io::Result<ProcFile> {
        Ok(ProcFile { file: File::open(path)? })
    }

    /// Reads the whole file into `buf` (cleared first). An error, or an empty
    /// read, means the process or thread is gone.
    pub fn read_into(&self, buf: &mut Vec<u8>) -> io::Result<()> {
        buf.clear();
        if buf.capacity() < 1024 {
            buf.reserve(1024);
        }
        loop {
            let len = buf.len();
            let spare = buf.capacity() - len;
            buf.resize(len + spare, 0);
            let n = self.file.read_at(&mut buf[len..], len as u64);
            match n {
                Ok(0) => {
                    buf.truncate(len);
                    break;
                }
                Ok(n) => {
                    buf.truncate(len + n);
                    if buf.len() == buf.capacity() {
                        buf.reserve(buf.capacity());
                    }
                }
                Err(err) => {
                    buf.truncate(len);
                    return Err(err);
                }
            }
        }
        if buf.is_empty() {
            return Err(io::Error::new(io::ErrorKind::NotFound, "empty read: process gone"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rereads_a_changing_file_from_the_start() {
        let file = ProcFile::open(Path::new("/proc/thread-self/schedstat")).unwrap();
        let mut buf = Vec::new();
        file.read_into(&mut buf).unwrap();
        let first: u64 = std::str::from_utf8(&buf).unwrap().split_whitespace().next().unwrap().parse().unwrap();
        // The kernel updates a running thread's runtime at ticks and switches.
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < std::time::Duration::from_millis(60) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
        }
        std::thread::yield_now();
        file.read_into(&mut buf).unwrap();
        let second: u64 = std::str::from_utf8(&buf).unwrap().split_whitespace().next().unwrap().parse().unwrap();
        assert!(second > first, "runtime did not advance: {first} -> {second}");
    }

    #[test]
    fn reads_files_longer_than_the_first_buffer() {
        let file = ProcFile::open(Path::new("/proc/self/status")).unwrap();
        let mut buf = Vec::new();
        file.read_into(&mut buf).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(text.contains("nonvoluntary_ctxt_switches"), "{text}");
    }
}
