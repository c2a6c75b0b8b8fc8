//! The kernel's TCP drop and retransmission counters of the server's network
//! namespace, read beside each probe sample so `explain` can tell a request
//! slowed by a lost packet: accept-queue overflows and SYN drops
//! (`TcpExt: ListenOverflows, ListenDrops` in `/proc/<pid>/net/netstat`) and
//! retransmitted segments (`Tcp: RetransSegs` in `/proc/<pid>/net/snmp`).
//! Read through the server's pid, they are its namespace's counters: on a
//! machine without network namespaces, every process's on the host.
//!
//! Both files are kept open and re-read with one `pread` each
//! (`proc_file.rs`), once per `NET_DROPS_PERIOD` (100 ms) rather than at
//! every sample: the kernel generates 5.5 KB of text for them, about 55 us,
//! and opening them and parsing all of `snmp` with `procfs` at every 10 ms
//! sample was half of what the probe cost with a parked server
//! (`bench/probe_cost.sh`). And `netstat`, 41 us of the 55, is read only
//! when `Tcp: InSegs` in `snmp` moved since it was last read: the kernel
//! counts every TCP segment it receives there before a listener can drop
//! it, so without one no listen overflow or drop can have happened (a
//! server with no traffic costs 15 us a period). Both have the same layout, a
//! line of names and a line of values under one prefix (`Tcp:`, `TcpExt:`),
//! so one small parser reads the three counters.

use std::path::Path;

use stampede_schema::process::NetDrops;

use crate::proc_file::ProcFile;

/// Cumulative counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NetCounters {
    pub listen_overflows: u64,
    pub listen_drops: u64,
    pub retrans_segs: u64,
}

/// The server's namespace's `snmp` and `netstat`, open for re-reading.
pub struct NetReader {
    snmp: ProcFile,
    netstat: ProcFile,
    buf: Vec<u8>,
    /// `Tcp: InSegs` and the two listen counters when `netstat` was last read.
    listen: Option<(u64, u64, u64)>,
}

impl NetReader {
    /// Opens the files of `pid`'s namespace and reads them once (the
    /// counters to count from); `None` when they cannot be read.
    pub fn open(pid: i32) -> Option<(NetReader, NetCounters)> {
        let open = |name: &str| ProcFile::open(Path::new(&format!("/proc/{pid}/net/{name}"))).ok();
        let mut reader =
            NetReader { snmp: open("snmp")?, netstat: open("netstat")?, buf: Vec::with_capacity(8192), listen: None };
        reader.read().map(|now| (reader, now))
    }

    /// The counters now; `None` when the files cannot be read.
    pub fn read(&mut self) -> Option<NetCounters> {
        let snmp = self.snmp.read(&mut self.buf).ok()?;
        let retrans_segs = counter(snmp, "Tcp:", "RetransSegs")?;
        let in_segs = counter(snmp, "Tcp:", "InSegs")?;
        let (listen_overflows, listen_drops) = match self.listen {
            Some((segs, overflows, drops)) if segs == in_segs => (overflows, drops),
            _ => {
                let netstat = self.netstat.read(&mut self.buf).ok()?;
                let overflows = counter(netstat, "TcpExt:", "ListenOverflows")?;
                let drops = counter(netstat, "TcpExt:", "ListenDrops")?;
                self.listen = Some((in_segs, overflows, drops));
                (overflows, drops)
            }
        };
        Some(NetCounters { listen_overflows, listen_drops, retrans_segs })
    }
}

impl NetCounters {
    /// What happened since `base` (zero where a counter went backwards).
    pub fn since(&self, base: &NetCounters) -> NetDrops {
        NetDrops {
            listen_overflows: self.listen_overflows.saturating_sub(base.listen_overflows),
            listen_drops: self.listen_drops.saturating_sub(base.listen_drops),
            retrans_segs: self.retrans_segs.saturating_sub(base.retrans_segs),
        }
    }
}

/// The counter `name` in a `snmp`/`netstat` text: the first two lines that
/// start with `prefix` are its names and its values.
pub(crate) fn counter(text: &[u8], prefix: &str, name: &str) -> Option<u64> {
    let mut lines = text.split(|b| *b == b'\n').filter(|l| l.starts_with(prefix.as_bytes()));
    let names = lines.next()?.split(|b| *b == b' ').skip(1);
    let values = lines.next()?.split(|b| *b == b' ').skip(1);
    let (_, value) = names.zip(values).find(|(n, _)| *n == name.as_bytes())?;
    std::str::from_utf8(value).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_found_by_name_under_their_prefix() {
        let text = b"TcpExt: SyncookiesSent ListenOverflows ListenDrops TCPTimeouts\n\
                    TcpExt: 0 12 15 3\n\
                    IpExt: InNoRoutes\nIpExt: 0\n";
        assert_eq!(counter(text, "TcpExt:", "ListenOverflows"), Some(12));
        assert_eq!(counter(text, "TcpExt:", "ListenDrops"), Some(15));
        assert_eq!(counter(text, "TcpExt:", "Missing"), None);
        assert_eq!(counter(b"IpExt: InNoRoutes\nIpExt: 0\n", "TcpExt:", "ListenDrops"), None);
        let snmp = b"Tcp: RtoAlgorithm RtoMin RetransSegs InErrs\nTcp: 1 200 7 0\nUdp: InDatagrams\nUdp: 3\n";
        assert_eq!(counter(snmp, "Tcp:", "RetransSegs"), Some(7));
    }

    #[test]
    fn netstat_is_read_again_only_after_a_segment_arrived() {
        let dir = std::env::temp_dir().join(format!("stampede-net-drops-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: String| std::fs::write(dir.join(name), text).unwrap();
        let snmp = |in_segs: u64| format!("Tcp: InSegs RetransSegs\nTcp: {in_segs} 4\n");
        let netstat =
            |overflows: u64| format!("TcpExt: ListenOverflows ListenDrops\nTcpExt: {overflows} {overflows}\n");
        write("snmp", snmp(100));
        write("netstat", netstat(1));
        let open = |name: &str| ProcFile::open(&dir.join(name)).unwrap();
        let mut reader = NetReader { snmp: open("snmp"), netstat: open("netstat"), buf: Vec::new(), listen: None };
        assert_eq!(reader.read().map(|c| c.listen_overflows), Some(1));
        // No segment came in: what netstat says now is not read (it cannot
        // have changed on a real host).
        write("netstat", netstat(9));
        assert_eq!(reader.read().map(|c| (c.listen_overflows, c.listen_drops, c.retrans_segs)), Some((1, 1, 4)));
        write("snmp", snmp(101));
        assert_eq!(reader.read().map(|c| (c.listen_overflows, c.listen_drops)), Some((9, 9)));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn this_process_counters_are_read_again_and_deltas_do_not_underflow() {
        let (mut reader, first) = NetReader::open(std::process::id() as i32).expect("/proc/self/net is readable");
        let now = reader.read().expect("read again through the open files");
        assert!(now.retrans_segs >= first.retrans_segs, "counters only grow");
        let later = NetCounters { retrans_segs: now.retrans_segs + 2, ..now };
        assert_eq!(later.since(&now), NetDrops { retrans_segs: 2, ..NetDrops::default() });
        assert_eq!(now.since(&later).retrans_segs, 0);
    }
}
