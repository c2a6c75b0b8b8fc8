//! Splitting one load over several hosts: each gets its share of the
//! connections, the rate and the request count, the remainder going to the
//! first hosts, so the shares always add up to what the user asked for.

/// One host's part of the load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Share {
    pub connections: u64,
    pub max_connections: Option<u64>,
    pub rate: Option<f64>,
    pub requests: Option<u64>,
}

/// What the user asked for in total.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Total {
    pub connections: u64,
    pub max_connections: Option<u64>,
    pub rate: Option<f64>,
    pub requests: Option<u64>,
}

impl Total {
    /// The parts of `spec` that are split among the hosts.
    pub fn of(spec: &stampede_schema::LoadSpec) -> Total {
        Total {
            connections: spec.connections,
            max_connections: spec.max_connections,
            rate: spec.rate,
            requests: spec.requests,
        }
    }
}

fn part(total: u64, hosts: usize, index: usize) -> u64 {
    let h = hosts as u64;
    total / h + u64::from((index as u64) < total % h)
}

/// The shares of `hosts` hosts, or an error naming the flag that is too small
/// to give every host at least one.
pub fn split(total: &Total, hosts: usize) -> Result<Vec<Share>, String> {
    if hosts == 0 {
        return Err("--hosts names no host".into());
    }
    if total.connections < hosts as u64 {
        return Err(format!(
            "--connections {} is fewer than the {hosts} hosts of --hosts; each host needs at least one connection",
            total.connections
        ));
    }
    if let Some(n) = total.requests.filter(|&n| n < hosts as u64) {
        return Err(format!(
            "--requests {n} is fewer than the {hosts} hosts of --hosts; each host needs at least one request"
        ));
    }
    Ok((0..hosts)
        .map(|i| Share {
            connections: part(total.connections, hosts, i),
            max_connections: total.max_connections.map(|m| part(m.max(total.connections), hosts, i)),
            rate: total.rate.map(|r| r / hosts as f64),
            requests: total.requests.map(|n| part(n, hosts, i)),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_and_remainder_goes_first() {
        let t = Total { connections: 10, max_connections: Some(40), rate: Some(900.0), requests: Some(1001) };
        let s = split(&t, 3).unwrap();
        assert_eq!(s.iter().map(|s| s.connections).collect::<Vec<_>>(), [4, 3, 3]);
        assert_eq!(s.iter().map(|s| s.requests.unwrap()).sum::<u64>(), 1001);
        assert_eq!(s[0].requests, Some(334));
        assert_eq!(s.iter().map(|s| s.max_connections.unwrap()).sum::<u64>(), 40);
        assert!((s.iter().map(|s| s.rate.unwrap()).sum::<f64>() - 900.0).abs() < 1e-9);
    }

    #[test]
    fn a_host_without_a_connection_names_the_flag() {
        let t = Total { connections: 1, max_connections: None, rate: None, requests: None };
        let err = split(&t, 2).unwrap_err();
        assert!(err.contains("--connections 1"), "{err}");
        let t = Total { connections: 4, max_connections: None, rate: None, requests: Some(1) };
        assert!(split(&t, 2).unwrap_err().contains("--requests 1"));
    }
}
