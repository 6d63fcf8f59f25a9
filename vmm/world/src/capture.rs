//! Per-link captures of a world (`--pcap-dir`): every frame the switch delivered between
//! two ports (nodes or the peer), both ways, at the virtual time it arrived, in
//! `DIR/link.A.B.pcap` (A before B in scenario order; names hold no '.'). A link's file
//! is made when its first frame arrives. Node captures (`DIR/NAME.pcap`) are the
//! machines' own.

use std::collections::BTreeMap;
use std::path::PathBuf;
use wio_machines::error::{Result, WioError};
use wio_virtio_devices::net::pcap::Pcap;

/// The open link captures.
pub struct LinkCaptures {
    dir: PathBuf,
    names: Vec<String>,
    files: BTreeMap<(usize, usize), Pcap>,
}

impl LinkCaptures {
    /// Captures into `dir` between ports named `names`.
    pub fn new(dir: PathBuf, names: Vec<String>) -> LinkCaptures {
        LinkCaptures {
            dir,
            names,
            files: BTreeMap::new(),
        }
    }

    fn path(&self, a: usize, b: usize) -> PathBuf {
        self.dir
            .join(format!("link.{}.{}.pcap", self.names[a], self.names[b]))
    }

    /// Records a frame from `src` that arrived at `dst` at `at_ns`.
    pub fn record(&mut self, src: usize, dst: usize, at_ns: u64, frame: &[u8]) -> Result<()> {
        let key = (src.min(dst), src.max(dst));
        let path = self.path(key.0, key.1);
        let out = |source| WioError::Output {
            what: "link capture",
            path: path.clone(),
            source,
        };
        let pcap = match self.files.entry(key) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                let f = std::fs::File::create(&path).map_err(out)?;
                e.insert(Pcap::new(Box::new(std::io::BufWriter::new(f))).map_err(out)?)
            }
        };
        pcap.record(at_ns, frame).map_err(out)
    }

    /// Flushes every capture.
    pub fn finish(&mut self) -> Result<()> {
        for (&(a, b), p) in self.files.iter_mut() {
            let path = self
                .dir
                .join(format!("link.{}.{}.pcap", self.names[a], self.names[b]));
            p.flush().map_err(|source| WioError::Output {
                what: "link capture",
                path,
                source,
            })?;
        }
        Ok(())
    }
}
