//! The files an arena mounts into its containers, made where a framework run
//! from its folder finds them: HttpArena's `/data/dataset.json` (50 items of
//! its public shape: id, name, category, price, quantity, active, tags,
//! rating{score,count}, generated from a fixed seed so every run serves the
//! same bytes; its validation computes `total` from the items the server
//! returns, not from a known file) and `/certs/server.{crt,key}` (a
//! self-signed certificate for localhost and 127.0.0.1, made with rcgen once
//! and kept). Both go under the build folder, named by the environment
//! variables most of its frameworks read before the fixed path.

use std::path::Path;

/// The environment naming the supplied files, and one note per file.
pub struct Supplied {
    pub env: Vec<(String, String)>,
    pub notes: Vec<String>,
}

/// HttpArena's dataset and certificate under `root`'s `data/` and `certs/`.
pub fn httparena(root: &Path) -> Result<Supplied, String> {
    let data = root.join("data");
    let certs = root.join("certs");
    for dir in [&data, &certs] {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    }
    let dataset = data.join("dataset.json");
    write(&dataset, dataset_json().as_bytes())?;
    let (crt, key) = (certs.join("server.crt"), certs.join("server.key"));
    if !crt.is_file() || !key.is_file() {
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])
            .map_err(|e| format!("cannot make a self-signed certificate: {e}"))?;
        write(&crt, cert.cert.pem().as_bytes())?;
        write(&key, cert.key_pair.serialize_pem().as_bytes())?;
    }
    let path = |p: &Path| p.display().to_string();
    Ok(Supplied {
        env: vec![
            ("DATASET_PATH".into(), path(&dataset)),
            ("TLS_CERT".into(), path(&crt)),
            ("TLS_KEY".into(), path(&key)),
        ],
        notes: vec![
            format!("{} (50 generated items of the arena's shape; DATASET_PATH)", path(&dataset)),
            format!("{} and server.key (self-signed for localhost; TLS_CERT, TLS_KEY)", path(&crt)),
        ],
    })
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// 50 items in the shape of HttpArena's data/dataset.json, from a fixed seed.
pub fn dataset_json() -> String {
    const NAMES: [&str; 6] = ["Alpha", "Pro", "Core", "Ultra", "Nano", "Max"];
    const THINGS: [&str; 5] = ["Widget", "Valve", "Relay", "Gear", "Sensor"];
    const CATEGORIES: [&str; 4] = ["electronics", "tools", "home", "garden"];
    const TAGS: [&str; 6] = ["sale", "new", "popular", "fast", "heavy-duty", "wireless"];
    // A 64-bit LCG (Knuth's MMIX constants): enough for reproducible values.
    let mut state: u64 = 0x5eed;
    let mut next = |n: u64| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let items: Vec<serde_json::Value> = (1..=50)
        .map(|id| {
            let tags: Vec<&str> = (0..1 + next(3)).map(|_| TAGS[next(6) as usize]).collect();
            serde_json::json!({
                "id": id,
                "name": format!("{} {}", NAMES[next(6) as usize], THINGS[next(5) as usize]),
                "category": CATEGORIES[next(4) as usize],
                "price": 1 + next(500),
                "quantity": next(100),
                "active": next(4) != 0,
                "tags": tags,
                "rating": {"score": next(51), "count": next(1000)},
            })
        })
        .collect();
    serde_json::to_string_pretty(&items).unwrap_or_default()
}
