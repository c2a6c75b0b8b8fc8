//! The receive buffers of the io_uring engine: a ring of provided buffers
//! that the kernel picks from when a multishot receive has data.
//!
//! With provided buffers a connection owns no receive buffer: one armed
//! receive per connection costs nothing until bytes arrive, and the kernel
//! hands back the id of the buffer it filled. The worker parses those bytes
//! at once and gives the buffer back, so the ring only has to cover the
//! completions of one batch. The `io-uring` crate registers the ring but
//! leaves its memory and the tail bookkeeping to the caller; that is all
//! this file does.

use io_uring::types::BufRingEntry;
use io_uring::IoUring;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::io;
use std::sync::atomic::{AtomicU16, Ordering};

/// The buffer group id every receive of a ring names.
pub const GROUP: u16 = 0;

pub struct BufRing {
    entries: *mut BufRingEntry,
    entries_layout: Layout,
    data: Box<[u8]>,
    count: u16,
    size: usize,
    tail: u16,
}

impl BufRing {
    /// Registers `count` (a power of two) buffers of `size` bytes with `ring`.
    pub fn new(ring: &IoUring, count: u16, size: usize) -> io::Result<BufRing> {
        assert!(count.is_power_of_two());
        let entries_layout = Layout::from_size_align(count as usize * std::mem::size_of::<BufRingEntry>(), 4096)
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: a non-zero size with a valid alignment.
        let entries = unsafe { alloc_zeroed(entries_layout) } as *mut BufRingEntry;
        if entries.is_null() {
            return Err(io::Error::from(io::ErrorKind::OutOfMemory));
        }
        let mut bufs = BufRing {
            entries,
            entries_layout,
            data: vec![0u8; count as usize * size].into_boxed_slice(),
            count,
            size,
            tail: 0,
        };
        // SAFETY: the entries stay allocated until `Drop`, which unregisters first.
        unsafe { ring.submitter().register_buf_ring_with_flags(entries as u64, count, GROUP, 0)? };
        for id in 0..count {
            bufs.give_back(id);
        }
        bufs.publish();
        Ok(bufs)
    }

    /// The bytes the kernel wrote into buffer `id`.
    #[inline]
    pub fn get(&self, id: u16, len: usize) -> &[u8] {
        let from = id as usize * self.size;
        &self.data[from..from + len.min(self.size)]
    }

    /// Returns buffer `id` to the ring; the kernel sees it after `publish`.
    #[inline]
    pub fn give_back(&mut self, id: u16) {
        // SAFETY: the slot index is masked into the allocation, and the kernel
        // only reads slots between its head and the published tail.
        unsafe {
            let e = &mut *self.entries.add((self.tail & (self.count - 1)) as usize);
            e.set_addr(self.data.as_ptr().add(id as usize * self.size) as u64);
            e.set_len(self.size as u32);
            e.set_bid(id);
        }
        self.tail = self.tail.wrapping_add(1);
    }

    /// Makes every buffer given back so far available to the kernel: one
    /// release store per batch of completions, not one per buffer.
    #[inline]
    pub fn publish(&self) {
        // SAFETY: the tail field lives in the first entry, as the kernel expects.
        let tail = unsafe { BufRingEntry::tail(self.entries) } as *const AtomicU16;
        unsafe { (*tail).store(self.tail, Ordering::Release) };
    }

    /// Unregisters the ring; the caller must have stopped every receive.
    pub fn unregister(&self, ring: &IoUring) {
        let _ = ring.submitter().unregister_buf_ring(GROUP);
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.entries as *mut u8, self.entries_layout) };
    }
}

/// Whether this kernel gives the engine what it needs: a ring with deferred
/// task work (6.1), provided buffer rings (5.19) and multishot receive (6.0).
/// Containers often forbid io_uring altogether; then the epoll engine runs.
pub fn available() -> Result<(), String> {
    let ring = new_ring(8).map_err(|e| format!("io_uring_setup: {e}"))?;
    let probe = {
        let mut p = io_uring::Probe::new();
        ring.submitter().register_probe(&mut p).map_err(|e| format!("io_uring probe: {e}"))?;
        p
    };
    for (op, name) in [
        (io_uring::opcode::RecvMulti::CODE, "recv"),
        (io_uring::opcode::Send::CODE, "send"),
        (io_uring::opcode::PollAdd::CODE, "poll"),
    ] {
        if !probe.is_supported(op) {
            return Err(format!("io_uring has no {name} operation on this kernel"));
        }
    }
    BufRing::new(&ring, 8, 64).map(|b| b.unregister(&ring)).map_err(|e| format!("io_uring buffer ring: {e}"))
}

/// A ring for one worker thread: only that thread submits (SINGLE_ISSUER),
/// and completion work runs when it asks for completions (DEFER_TASKRUN), so
/// the kernel never interrupts the loop to post them. No SQPOLL: a polling
/// kernel thread would burn a core the server needs.
pub fn new_ring(entries: u32) -> io::Result<IoUring> {
    IoUring::builder().setup_single_issuer().setup_defer_taskrun().setup_cqsize(entries * 4).build(entries)
}
