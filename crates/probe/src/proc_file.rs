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

    /// Reads a one-record file (`stat`, `status`, `schedstat`, `syscall`,
    /// `/proc/stat`) whole and returns its text, kept in `buf`. An error, or
    /// an empty read, means the process or thread is gone.
    ///
    /// Two things keep this at one system call and no memory traffic beyond
    /// the text. A read shorter than the buffer is the whole file: the kernel
    /// generates such a file's text in one `show` call (growing its own
    /// buffer until it fits) and hands over all of it that fits, so only a
    /// read that fills the buffer needs another; reading on to the empty
    /// read at the end doubled the `pread`s of a sample (measured 79 against
    /// 40 for a 31-thread process). And `buf` is only ever grown, never
    /// truncated, so it is zeroed once and not before every read.
    pub fn read<'b>(&self, buf: &'b mut Vec<u8>) -> io::Result<&'b [u8]> {
        let len = self.fill(buf, true)?;
        if len == 0 {
            return Err(io::Error::new(io::ErrorKind::NotFound, "empty read: process gone"));
        }
        Ok(&buf[..len])
    }

    /// Reads a file of many records (`children`, one per child), which may
    /// be empty. The kernel stops a read at the end of its own page-sized
    /// buffer, so a short read is not the end here: it reads on to an empty one.
    pub fn read_records<'b>(&self, buf: &'b mut Vec<u8>) -> io::Result<&'b [u8]> {
        let len = self.fill(buf, false)?;
        Ok(&buf[..len])
    }

    fn fill(&self, buf: &mut Vec<u8>, short_is_whole: bool) -> io::Result<usize> {
        if buf.len() < 1024 {
            buf.resize(1024, 0);
        }
        let mut len = 0;
        loop {
            let n = self.file.read_at(&mut buf[len..], len as u64)?;
            len += n;
            if n == 0 || (short_is_whole && len < buf.len()) {
                return Ok(len);
            }
            if len == buf.len() {
                buf.resize(buf.len() * 2, 0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rereads_a_changing_file_from_the_start() {
        let file = ProcFile::open(Path::new("/proc/thread-self/schedstat")).unwrap();
        let mut buf = Vec::new();
        let mut runtime_ns = || -> u64 {
            let text = std::str::from_utf8(file.read(&mut buf).unwrap()).unwrap();
            text.split_whitespace().next().unwrap().parse().unwrap()
        };
        let first = runtime_ns();
        // The kernel updates a running thread's runtime at ticks and switches.
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < std::time::Duration::from_millis(60) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
        }
        std::thread::yield_now();
        let second = runtime_ns();
        assert!(second > first, "runtime did not advance: {first} -> {second}");
    }

    #[test]
    fn reads_files_longer_than_the_first_buffer() {
        let file = ProcFile::open(Path::new("/proc/self/status")).unwrap();
        let mut buf = Vec::new();
        let text = String::from_utf8(file.read(&mut buf).unwrap().to_vec()).unwrap();
        assert!(text.contains("nonvoluntary_ctxt_switches"), "{text}");
    }
}
