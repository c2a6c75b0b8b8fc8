//! The kernel's TCP drop and retransmission counters of the server's network
//! namespace, read beside each probe sample so `explain` can tell a request
//! slowed by a lost packet: accept-queue overflows and SYN drops
//! (`TcpExt: ListenOverflows, ListenDrops` in `/proc/<pid>/net/netstat`) and
//! retransmitted segments (`Tcp: RetransSegs` in `/proc/<pid>/net/snmp`).
//! Read through the server's pid, they are its namespace's counters: on a
//! machine without network namespaces, every process's on the host.
//!
//! `procfs` parses `snmp` (its `Snmp` type) but not `netstat`, so the two
//! TcpExt counters come from a small parser here: a header line of names
//! followed by a line of values, both prefixed `TcpExt:`.

use stampede_schema::process::NetDrops;

/// Cumulative counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NetCounters {
    pub listen_overflows: u64,
    pub listen_drops: u64,
    pub retrans_segs: u64,
}

impl NetCounters {
    /// The server's namespace's counters now; `None` when the files cannot be read.
    pub fn read(pid: i32) -> Option<NetCounters> {
        let process = procfs::process::Process::new(pid).ok()?;
        let retrans_segs = process.snmp().ok()?.tcp_retrans_segs;
        let netstat = std::fs::read_to_string(format!("/proc/{pid}/net/netstat")).ok()?;
        let (listen_overflows, listen_drops) = tcp_ext(&netstat)?;
        Some(NetCounters { listen_overflows, listen_drops, retrans_segs })
    }

    /// What happened since `base` (zero where a counter went backwards).
    pub fn since(&self, base: &NetCounters) -> NetDrops {
        NetDrops {
            listen_overflows: self.listen_overflows.saturating_sub(base.listen_overflows),
            listen_drops: self.listen_drops.saturating_sub(base.listen_drops),
            retrans_segs: self.retrans_segs.saturating_sub(base.retrans_segs),
        }
    }
}

/// `ListenOverflows` and `ListenDrops` from the text of a `netstat` file.
fn tcp_ext(text: &str) -> Option<(u64, u64)> {
    let mut lines = text.lines().filter(|l| l.starts_with("TcpExt:"));
    let names = lines.next()?.split_whitespace().skip(1);
    let values = lines.next()?.split_whitespace().skip(1);
    let (mut overflows, mut drops) = (None, None);
    for (name, value) in names.zip(values) {
        match name {
            "ListenOverflows" => overflows = value.parse().ok(),
            "ListenDrops" => drops = value.parse().ok(),
            _ => {}
        }
    }
    Some((overflows?, drops?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tcp_ext_counters_are_found_by_name() {
        let text = "TcpExt: SyncookiesSent ListenOverflows ListenDrops TCPTimeouts\n\
                    TcpExt: 0 12 15 3\n\
                    IpExt: InNoRoutes\nIpExt: 0\n";
        assert_eq!(tcp_ext(text), Some((12, 15)));
        assert_eq!(tcp_ext("IpExt: InNoRoutes\nIpExt: 0\n"), None);
    }

    #[test]
    fn this_process_counters_read_and_deltas_do_not_underflow() {
        let now = NetCounters::read(std::process::id() as i32).expect("/proc/self/net is readable");
        let later = NetCounters { retrans_segs: now.retrans_segs + 2, ..now };
        assert_eq!(later.since(&now), NetDrops { retrans_segs: 2, ..NetDrops::default() });
        assert_eq!(now.since(&later).retrans_segs, 0);
    }
}
