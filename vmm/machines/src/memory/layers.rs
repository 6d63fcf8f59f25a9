//! Guest memory as layers: a guided exploration's moments kept copy-on-write.
//!
//! A restored branch's memory is a private view of its snapshot's pages: what it writes
//! goes to pages of its own, and the host knows which (`/proc/self/pagemap` says, per
//! page, whether the mapping still shows the file's page or a private copy). So a moment
//! need not copy the branch's whole memory: it keeps the pages the branch wrote since its
//! restore as one more sparse memfd over the layers its branch started from, and its
//! children map all of them, one over the other. A moment's cost grows with the pages
//! written since its parent, not with guest RAM.
//!
//! - Correct whatever the host reports beyond "not written": a page counts as written
//!   unless the mapping shows a file's page there or nothing at all (present and not a
//!   file's page, or swapped out); a page that reads as zeros where no layer holds data is
//!   left out (the anonymous zero page a read maps).
//! - Bounded: at most [`MAX_LAYERS`] layers and [`MAX_EXTENTS`] mapped ranges in all (each
//!   is one mapping of every branch restored from the moment; a process may hold about
//!   65,000). Past either, or when the branch's memory is not the view it was restored
//!   with (a power cut gave it new memory), the moment copies its memory whole into one
//!   layer, as a snapshot does.
//! - Counted once: [`Layers::own_bytes`] leaves out the root snapshot's layer (held for the
//!   whole exploration anyway) and counts every other layer a moment needs, its parents'
//!   too, so a search's sum over its live moments is never less than what they hold.
//!
//! A flat exploration's branches of one snapshot write mostly the same pages (kernel
//! stacks, timers, page tables). Each first write to a page of a private view is a
//! copy-on-write fault, and where the page was read first the host must also flush the
//! old read-only mapping from every core running the process: with two worker threads,
//! an inter-processor interrupt per page, which halved an idle-heavy exploration's
//! branches per minute on two threads. So an exploration may ask its snapshot's layers to
//! learn which pages its first branches wrote ([`Layers::learn_written`]) and give every
//! later view its own copies of them at once ([`Layers::map`], one `MADV_POPULATE_WRITE`
//! per run of pages, no fault and no flush). The copies hold the same bytes as the pages
//! they replace, so nothing the guest or a trace sees changes; only the host's work
//! does. Guided explorations do not ask: a moment's layer is the pages its branch's view
//! holds privately, and those must not depend on which branch happened to finish first.
//!
//! Layers asked to also keep the views they map and reuse one once every branch that held
//! it has ended ([`Views`]), instead of mapping a new one: a new view costs a page fault
//! for every page its branch reads and the unmapping of everything at its end, which,
//! with the populating above, took a seventh of an idle-heavy exploration's time. A reused
//! view is set back to the layers' bytes first: the host's page map shows every page that
//! is no longer the file's (written by an earlier branch, or the zero page a read of a
//! hole maps), and each such page whose bytes differ from a pristine view's (one view
//! per set of layers that nothing writes) is copied back. Every other page shows the
//! layers' own page or nothing, so a reused view reads exactly as a new one; its
//! written pages stay its own, so later branches write them without a fault.

#[cfg(test)]
use super::pagemap::scan_written;
use super::pagemap::{page_flags, written, written_privately, written_runs};
use super::{data_extents, map_region, snapshot_memfd, GuestMem, PAGE};
use crate::error::{MemoryError, Result};
use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use vm_memory::{GuestMemoryRegion, GuestRegionMmap};

/// Most layers one moment's memory has before it is copied whole.
pub const MAX_LAYERS: usize = 24;
/// Most mapped ranges over all of one moment's layers before it is copied whole.
pub const MAX_EXTENTS: usize = 4096;

/// Branches whose written pages [`Layers::learn_written`] adds up: by then the pages a
/// branch of the snapshot writes are mostly known (an idle-heavy branch of the small guest
/// writes about 200, the same ones in nearly every branch), and reading the host's page
/// map costs a few hundred microseconds per GiB of guest memory each time.
pub const LEARN_BRANCHES: u32 = 8;

/// Longest hole between two data extents of the bottom layer that [`Layers::map`] maps
/// across (a run of guest pages that were zero at the snapshot).
const BRIDGED_GAP: u64 = 16 * PAGE;

/// `extents` (sorted, disjoint byte ranges) with every gap of at most `max_gap` bytes
/// closed.
fn bridged(extents: &[(u64, u64)], max_gap: u64) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(extents.len());
    for &(a, b) in extents {
        match out.last_mut() {
            Some(last) if a >= last.1 && a - last.1 <= max_gap => last.1 = b,
            _ => out.push((a, b)),
        }
    }
    out
}

/// One layer: a sparse memfd of the guest's size and the byte ranges it holds data in.
#[derive(Debug)]
struct Layer {
    file: File,
    extents: Vec<(u64, u64)>,
    /// Bytes of data it holds.
    bytes: u64,
    /// A snapshot file's pages (the root of an exploration), not a moment's.
    root: bool,
}

impl Layer {
    /// A memfd of `size` bytes holding `runs` (first page, bytes), and its data extents.
    fn of_runs(size: u64, runs: &[(u64, Vec<u8>)], root: bool) -> Result<Layer> {
        let file = snapshot_memfd(size, runs)?;
        let extents = data_extents(&file, size)?;
        let bytes = extents.iter().map(|(a, b)| b - a).sum();
        Ok(Layer {
            file,
            extents,
            bytes,
            root,
        })
    }
}

/// A guest memory image as layers, oldest first (cheap to clone: the layers are shared).
#[derive(Debug, Clone)]
pub struct Layers {
    size: u64,
    layers: Vec<Arc<Layer>>,
    /// Pages branches of these layers wrote, shared by every clone (see the module doc).
    written: Arc<Written>,
    /// Views of these layers kept for reuse, shared by every clone.
    views: Arc<Views>,
}

/// Most views of one set of layers [`Layers::map`] keeps for reuse (an exploration holds
/// about as many at once as it runs branches).
const MAX_KEPT_VIEWS: usize = 16;

/// Views of the layers kept for reuse by flat explorations (see the module doc): mapping a
/// view and unmapping it at its branch's end cost an idle-heavy branch more than its
/// restore (page faults for every page it reads, the mapping's teardown, and a flush of
/// every other core's TLB for each page it writes).
#[derive(Debug, Default)]
struct Views {
    /// Every view kept, in use or not: one whose only reference is this list's is free
    /// (every branch that held it has ended), and nothing but this list hands out new ones.
    kept: Mutex<Vec<Arc<GuestRegionMmap>>>,
    /// A view nothing writes, mapped at the first reuse: the bytes a reused view is set
    /// back to (None when it could not be mapped: no reuse then).
    pristine: OnceLock<Option<GuestRegionMmap>>,
}

/// What [`Layers::learn_written`] learned, for [`Layers::map`].
#[derive(Debug, Default)]
struct Written {
    /// Whether to learn and populate at all ([`Layers::populate_written`]).
    on: AtomicBool,
    learned: Mutex<Learned>,
}

/// Pages written by the first branches, as a bitmap and as byte ranges.
#[derive(Debug, Default)]
struct Learned {
    /// One bit per guest page.
    bits: Vec<u64>,
    /// The set pages as sorted, disjoint byte ranges (what `map` populates).
    ranges: Arc<Vec<(u64, u64)>>,
    /// Branches learned from (at most [`LEARN_BRANCHES`]).
    branches: u32,
}

impl Learned {
    /// Adds the pages `flags` (pagemap entries, one per page) say were written into a
    /// private copy (the ranges are rebuilt only when some page is new).
    fn add(&mut self, flags: &[u64]) {
        if self.bits.len() < flags.len().div_ceil(64) {
            self.bits.resize(flags.len().div_ceil(64), 0);
        }
        let mut new = false;
        for (i, f) in flags.iter().enumerate() {
            if written_privately(*f) && self.bits[i / 64] & (1 << (i % 64)) == 0 {
                self.bits[i / 64] |= 1 << (i % 64);
                new = true;
            }
        }
        self.branches += 1;
        if new {
            let mut ranges: Vec<(u64, u64)> = Vec::new();
            for i in 0..flags.len() {
                if self.bits[i / 64] & (1 << (i % 64)) == 0 {
                    continue;
                }
                let at = i as u64 * PAGE;
                match ranges.last_mut() {
                    Some(last) if last.1 == at => last.1 = at + PAGE,
                    _ => ranges.push((at, at + PAGE)),
                }
            }
            self.ranges = Arc::new(ranges);
        }
    }
}

impl Layers {
    /// One layer holding `runs` (first page, bytes) of a memory of `size` bytes; `root`:
    /// a snapshot file's pages.
    pub fn from_runs(size: u64, runs: &[(u64, Vec<u8>)], root: bool) -> Result<Layers> {
        Ok(Layers {
            size,
            layers: vec![Arc::new(Layer::of_runs(size, runs, root)?)],
            written: Arc::default(),
            views: Arc::default(),
        })
    }

    /// Maps the layers privately as guest memory at `base`, the pages earlier branches
    /// wrote already copied into it when [`Layers::populate_written`] asked for that.
    ///
    /// The bottom layer is mapped across its short holes ([`BRIDGED_GAP`]): below it there
    /// is only zero memory, and a hole of its memfd reads as zeros too, so the guest sees
    /// the same bytes through far fewer mappings (a small guest's snapshot holds about 180
    /// runs of data, most a page apart: one mmap each was a tenth of an idle branch's wall
    /// time, with the munmap of as many ranges at its end). A bridged hole the guest
    /// touches gets a zero page in the shared memfd, at most the bridged bytes once per
    /// snapshot. Upper layers are mapped exactly: their holes show the layers below.
    pub fn map(&self, base: u64) -> Result<GuestMem> {
        let asked = self.written.on.load(Ordering::Relaxed);
        let reuse = asked && pagemap_works();
        if reuse {
            if let Some(region) = self.reused(base) {
                return as_memory(region);
            }
        }
        let region = Arc::new(self.map_region(base)?);
        if reuse {
            if let Ok(mut kept) = self.views.kept.lock() {
                if kept.len() < MAX_KEPT_VIEWS {
                    kept.push(Arc::clone(&region));
                }
            }
        }
        let mem = as_memory(region)?;
        if asked {
            let ranges = match self.written.learned.lock() {
                Ok(l) => l.ranges.clone(),
                Err(_) => return Ok(mem),
            };
            populate_write(&mem, base, &ranges);
        }
        Ok(mem)
    }

    /// A new private view of the layers at `base` (see [`Layers::map`]).
    fn map_region(&self, base: u64) -> Result<GuestRegionMmap> {
        let bottom = self
            .layers
            .first()
            .map(|l| bridged(&l.extents, BRIDGED_GAP))
            .unwrap_or_default();
        let views: Vec<(&File, &[(u64, u64)])> = self
            .layers
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let extents = if i == 0 { &bottom } else { &l.extents };
                (&l.file, extents.as_slice())
            })
            .collect();
        map_region(base, self.size, &views)
    }

    /// A kept view at `base` no branch holds any more, its bytes set back to the layers'
    /// (see [`Views`]): every page the host's page map shows as not the file's (written by
    /// an earlier branch, or the zero page a read of a hole maps) and holding other bytes
    /// than the pristine view's is copied back from it; every other page shows the layers'
    /// own page or nothing, which reads as the layers do. None when no view is free or
    /// the page map cannot be read (that view is then dropped, not half set back).
    fn reused(&self, base: u64) -> Option<Arc<GuestRegionMmap>> {
        let region = {
            let mut kept = self.views.kept.lock().ok()?;
            let free = kept.iter_mut().position(|r| {
                r.start_addr() == vm_memory::GuestAddress(base) && Arc::get_mut(r).is_some()
            })?;
            Arc::clone(&kept[free])
        };
        let pristine = self
            .views
            .pristine
            .get_or_init(|| self.map_region(base).ok())
            .as_ref()?;
        let view = host_bytes(&region, self.size)?;
        let original = host_bytes(pristine, self.size)?;
        // SAFETY: both regions map `size` bytes at these addresses for as long as they
        // live (they outlive this function). Nothing else reads or writes `view` now: the
        // kept list held its only reference (checked under the lock that alone hands out
        // references) and its new one is ours until returned. `original` is never written.
        let (view, original) = unsafe {
            (
                std::slice::from_raw_parts_mut(view, self.size as usize),
                std::slice::from_raw_parts(original, self.size as usize),
            )
        };
        if set_back(view, original).is_err() {
            if let Ok(mut kept) = self.views.kept.lock() {
                kept.retain(|r| !Arc::ptr_eq(r, &region));
            }
            return None;
        }
        Some(region)
    }

    /// From now on, learn which pages branches of these layers write
    /// ([`Layers::learn_written`]) and give every new view its own copies of them at once
    /// (see the module doc). For flat explorations only: a moment taken from such a view
    /// would hold those pages too.
    pub fn populate_written(&self) {
        self.written.on.store(true, Ordering::Relaxed);
    }

    /// Adds the pages `ram` (a view of these layers, [`Layers::map`], at the end of its
    /// branch) holds privately to those new views populate, for the first
    /// [`LEARN_BRANCHES`] branches after [`Layers::populate_written`]. Host memory only:
    /// changes nothing any view reads.
    pub fn learn_written(&self, ram: &[u8]) {
        if !self.written.on.load(Ordering::Relaxed) || ram.len() as u64 != self.size {
            return;
        }
        match self.written.learned.lock() {
            Ok(l) if l.branches < LEARN_BRANCHES => {}
            _ => return,
        }
        if !pagemap_works() {
            return;
        }
        // Read outside the lock: other branches' threads keep mapping meanwhile.
        let Ok(flags) = page_flags(ram) else { return };
        if let Ok(mut l) = self.written.learned.lock() {
            if l.branches < LEARN_BRANCHES {
                l.add(&flags);
            }
        }
    }

    /// Bytes of guest memory these layers take beyond a root snapshot's (see the module
    /// doc: shared layers are counted by every moment that needs them).
    pub fn own_bytes(&self) -> u64 {
        self.layers
            .iter()
            .filter(|l| !l.root)
            .map(|l| l.bytes)
            .sum()
    }

    /// How many layers there are.
    #[cfg(test)]
    fn depth(&self) -> usize {
        self.layers.len()
    }

    /// The layers of `ram` (a private view of these layers, [`Layers::map`], that a run
    /// has written since): these and the pages written, as one more layer. None when it
    /// would pass [`MAX_LAYERS`] or [`MAX_EXTENTS`] (copy `ram` whole instead).
    pub fn with_written(&self, ram: &[u8]) -> Result<Option<Layers>> {
        if ram.len() as u64 != self.size || self.layers.len() >= MAX_LAYERS || !pagemap_works() {
            return Ok(None);
        }
        let pages = self.size / PAGE;
        // Pages some layer holds data for (their content may differ from zero).
        let mut held = vec![false; pages as usize];
        for l in &self.layers {
            for &(a, b) in &l.extents {
                held[(a / PAGE) as usize..(b / PAGE) as usize].fill(true);
            }
        }
        static ZERO: [u8; PAGE as usize] = [0; PAGE as usize];
        let mut runs: Vec<(u64, Vec<u8>)> = Vec::new();
        for i in written_runs(ram)?
            .into_iter()
            .flat_map(|(first, end)| first..end)
        {
            let page = &ram[i * PAGE as usize..(i + 1) * PAGE as usize];
            if !held[i] && page == &ZERO[..] {
                continue;
            }
            match runs.last_mut() {
                Some((first, bytes)) if *first + (bytes.len() as u64 / PAGE) == i as u64 => {
                    bytes.extend_from_slice(page)
                }
                _ => runs.push((i as u64, page.to_vec())),
            }
        }
        let extents: usize = self.layers.iter().map(|l| l.extents.len()).sum();
        if extents + runs.len() > MAX_EXTENTS {
            return Ok(None);
        }
        let mut layers = self.layers.clone();
        layers.push(Arc::new(Layer::of_runs(self.size, &runs, false)?));
        Ok(Some(Layers {
            size: self.size,
            layers,
            written: Arc::default(),
            views: Arc::default(),
        }))
    }
}

/// One view as guest memory.
fn as_memory(region: Arc<GuestRegionMmap>) -> Result<GuestMem> {
    GuestMem::from_arc_regions(vec![region])
        .map_err(|source| MemoryError::Regions { source }.into())
}

/// The host address of `region`'s first byte, when it maps `size` bytes.
fn host_bytes(region: &GuestRegionMmap, size: u64) -> Option<*mut u8> {
    use vm_memory::MemoryRegionAddress;
    (region.len() == size)
        .then(|| region.get_host_address(MemoryRegionAddress(0)).ok())
        .flatten()
}

/// Sets `view` (a private view of some layers) back to `original` (another view of the
/// same layers that nothing wrote): copies every page the host shows as not the file's
/// ([`written_runs`]) whose bytes differ.
fn set_back(view: &mut [u8], original: &[u8]) -> Result<()> {
    let page = PAGE as usize;
    for (first, end) in written_runs(view)? {
        for i in first..end {
            let at = i * page..(i + 1) * page;
            if view[at.clone()] != original[at.clone()] {
                view[at.clone()].copy_from_slice(&original[at]);
            }
        }
    }
    Ok(())
}

/// Asks the host to give `mem` (mapped at guest-physical `base`) its own writable copy of
/// every page in `ranges` (byte offsets) now, as first writes would one by one. Where the
/// host cannot (a kernel before 5.14 has no `MADV_POPULATE_WRITE`), nothing is done: each
/// page is copied at its first write, as without this.
fn populate_write(mem: &GuestMem, base: u64, ranges: &[(u64, u64)]) {
    static UNSUPPORTED: AtomicBool = AtomicBool::new(false);
    if ranges.is_empty() || UNSUPPORTED.load(Ordering::Relaxed) {
        return;
    }
    let Ok(host) =
        vm_memory::GuestMemoryBackend::get_host_address(mem, vm_memory::GuestAddress(base))
    else {
        return;
    };
    for &(a, b) in ranges {
        // SAFETY: `mem` is one region of `size` bytes at `host` (made by `map_views`), and
        // every range lies within it (learned from a view of the same size). Populating
        // copies pages the mapping would copy at their first write anyway, with the same
        // bytes; it moves and frees nothing Rust code refers to.
        let r = unsafe {
            libc::madvise(
                host.add(a as usize).cast(),
                (b - a) as usize,
                MADV_POPULATE_WRITE,
            )
        };
        if r != 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
                UNSUPPORTED.store(true, Ordering::Relaxed);
            }
            return;
        }
    }
}

/// `madvise` advice: fault every page of the range in writable now (Linux 5.14).
const MADV_POPULATE_WRITE: libc::c_int = 23;

/// Whether this host's pagemap tells written pages of a private file mapping from the
/// file's (checked once, on a small mapping: a page read, a page written, a hole). Where it
/// does not (pagemap unreadable, or its flags hidden), every moment is copied whole, and
/// wio says so once.
pub(super) fn pagemap_works() -> bool {
    static WORKS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WORKS.get_or_init(|| {
        let check = || -> Result<bool> {
            let size = 4 * PAGE;
            let root = Layers::from_runs(size, &[(0, vec![1u8; 2 * PAGE as usize])], true)?;
            let mem = root.map(0)?;
            let host = vm_memory::GuestMemoryBackend::get_host_address(
                &mem,
                vm_memory::GuestAddress(0),
            )
            .map_err(|_| MemoryError::Pagemap {
                source: std::io::Error::other("no host address"),
            })?;
            // SAFETY: `mem` maps `size` bytes at `host` and lives to the end of this
            // closure; nothing else touches them.
            let ram = unsafe { std::slice::from_raw_parts_mut(host, size as usize) };
            let _ = std::hint::black_box(ram[0]);
            ram[PAGE as usize] = 2;
            let f = page_flags(ram)?;
            Ok(!written(f[0]) && written(f[1]) && !written(f[3]))
        };
        let works = check().unwrap_or(false);
        if !works {
            eprintln!(
                "wio: this host's /proc/self/pagemap does not say which pages a branch wrote: guided exploration copies every moment's memory whole (same results, more memory)"
            );
        }
        works
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;
    use vm_memory::{Bytes, GuestAddress, GuestMemoryBackend};

    const BASE: u64 = 0x8000_0000;

    fn ram(mem: &GuestMem) -> &[u8] {
        let host = mem.get_host_address(GuestAddress(BASE)).unwrap();
        // SAFETY: the one region maps 256 pages at `host` for as long as `mem` lives.
        unsafe { std::slice::from_raw_parts(host, 256 * PAGE as usize) }
    }

    /// Whether this host's pagemap cannot show private pages (the test is then skipped,
    /// and says so).
    fn skipped_without_pagemap() -> bool {
        let skip = !pagemap_works();
        if skip {
            eprintln!("skipped: this host's pagemap does not show private pages");
        }
        skip
    }

    /// Whether `mem` holds its own copy of `page` (see [`written_privately`]).
    fn private(mem: &GuestMem, page: usize) -> bool {
        written_privately(page_flags(ram(mem)).unwrap()[page])
    }

    fn byte(mem: &GuestMem, page: u64) -> u8 {
        let mut b = [0u8; 1];
        mem.read_slice(&mut b, GuestAddress(BASE + page * PAGE + 5))
            .unwrap();
        b[0]
    }

    /// Moments over moments: each layer holds what its branch wrote (a page made zero
    /// included), children see every layer, and reads cost nothing.
    #[test]
    fn moments_keep_what_their_branch_wrote() {
        let size = 256 * PAGE;
        let root = Layers::from_runs(size, &[(3, vec![7u8; 2 * PAGE as usize])], true).unwrap();
        assert_eq!(root.own_bytes(), 0, "the root's layer is not a moment's");
        let a = root.map(BASE).unwrap();
        // Reads of data and of holes, and writes (one makes a page zero).
        for page in [0, 3, 4, 100, 200] {
            let _ = byte(&a, page);
        }
        a.write_slice(&[1], GuestAddress(BASE + 10 * PAGE + 5))
            .unwrap();
        a.write_slice(&[0; PAGE as usize], GuestAddress(BASE + 4 * PAGE))
            .unwrap();
        a.write_slice(&[2], GuestAddress(BASE + 3 * PAGE + 5))
            .unwrap();
        let m1 = root.with_written(ram(&a)).unwrap().unwrap();
        assert_eq!(m1.depth(), 2);
        // Pages 3, 4 and 10 only (a THP host may report a whole huge page: at most 512).
        assert!(
            m1.own_bytes() >= 3 * PAGE && m1.own_bytes() <= 512 * PAGE,
            "{}",
            m1.own_bytes()
        );
        let b = m1.map(BASE).unwrap();
        assert_eq!(
            [0, 3, 4, 10, 100].map(|p| byte(&b, p)),
            [0, 2, 0, 1, 0],
            "the moment's memory"
        );
        b.write_slice(&[5], GuestAddress(BASE + 200 * PAGE + 5))
            .unwrap();
        let m2 = m1.with_written(ram(&b)).unwrap().unwrap();
        let c = m2.map(BASE).unwrap();
        assert_eq!([3, 4, 10, 200].map(|p| byte(&c, p)), [2, 0, 1, 5]);
        // The parent's view is unchanged by its child's writes.
        let again = m1.map(BASE).unwrap();
        assert_eq!(byte(&again, 200), 0);
        // Memory of another size (a new boot's) is no view of these layers.
        assert!(m2
            .with_written(&vec![0u8; 8 * PAGE as usize])
            .unwrap()
            .is_none());
    }

    /// Layers asked to ([`Layers::populate_written`]) learn the pages their views wrote and
    /// give later views their own copies of them before any write, with the same bytes;
    /// writes still reach neither the file nor other views; layers not asked learn nothing,
    /// and learning stops after [`LEARN_BRANCHES`] branches.
    #[test]
    fn later_views_hold_their_own_copies_of_the_pages_earlier_branches_wrote() {
        if skipped_without_pagemap() {
            return;
        }
        let size = 256 * PAGE;
        let runs = [
            (3, vec![7u8; 2 * PAGE as usize]),
            (40, vec![9u8; PAGE as usize]),
        ];
        let root = Layers::from_runs(size, &runs, true).unwrap();
        let branch = |pages: &[u64]| {
            let v = root.map(BASE).unwrap();
            let _ = byte(&v, 40);
            for &p in pages {
                v.write_slice(&[1], GuestAddress(BASE + p * PAGE + 5))
                    .unwrap();
            }
            root.learn_written(ram(&v));
        };
        // Not asked: nothing learned, nothing populated.
        branch(&[3, 20]);
        let v = root.map(BASE).unwrap();
        assert!(!private(&v, 3) && !private(&v, 20));
        root.populate_written();
        branch(&[3, 20]);
        let v = root.map(BASE).unwrap();
        assert!(private(&v, 3) && private(&v, 20), "written pages populated");
        assert!(
            !private(&v, 4) && !private(&v, 40) && !private(&v, 100),
            "read or untouched pages not"
        );
        assert_eq!(
            [3, 4, 20, 40, 100].map(|p| byte(&v, p)),
            [7, 7, 0, 9, 0],
            "the same bytes"
        );
        v.write_slice(&[2], GuestAddress(BASE + 3 * PAGE + 5))
            .unwrap();
        assert_eq!(byte(&v, 3), 2);
        let mut f = [0u8; 1];
        root.layers[0]
            .file
            .read_exact_at(&mut f, 3 * PAGE + 5)
            .unwrap();
        assert_eq!(f[0], 7, "writes never reach the file");
        assert_eq!(byte(&root.map(BASE).unwrap(), 3), 7, "nor another view");
        // Pages of later branches add up, up to LEARN_BRANCHES branches in all.
        branch(&[50]);
        assert!(private(&root.map(BASE).unwrap(), 50));
        for p in 0..u64::from(LEARN_BRANCHES) {
            branch(&[60 + p]);
        }
        // (What was learned, not a view: views are reused, and a reused one keeps every
        // page an earlier branch wrote as its own.)
        let learned = |page: usize| {
            root.written.learned.lock().unwrap().bits[page / 64] & (1 << (page % 64)) != 0
        };
        let last = 60 + LEARN_BRANCHES as usize - 1;
        assert!(learned(60) && !learned(last), "learned past the limit");
    }

    /// A flat exploration's views are reused once their branch has ended, set back to the
    /// layers' bytes (pages written in data, in short and long holes and in an upper layer,
    /// holes only read), and never while a branch holds them; guided explorations' views
    /// are not reused.
    #[test]
    fn a_reused_view_reads_as_a_new_one() {
        if skipped_without_pagemap() {
            return;
        }
        let size = 256 * PAGE;
        let runs = [
            (3, vec![7u8; 2 * PAGE as usize]),
            (10, vec![8u8; PAGE as usize]),
            (40, vec![9u8; PAGE as usize]),
        ];
        let root = Layers::from_runs(size, &runs, true).unwrap();
        let first = root.map(BASE).unwrap();
        first
            .write_slice(&[6], GuestAddress(BASE + 150 * PAGE + 5))
            .unwrap();
        let moment = root.with_written(ram(&first)).unwrap().unwrap();
        moment.populate_written();
        let all = |mem: &GuestMem| ram(mem).to_vec();
        // Pages: 3 data, 6 a bridged hole, 40 data, 100 a long hole, 150 the upper layer.
        let wrote = [3u64, 6, 40, 100, 150];
        let new = moment.map(BASE).unwrap();
        let want = all(&new);
        let view = moment.map(BASE).unwrap();
        for p in [4u64, 20, 200] {
            let _ = byte(&view, p);
        }
        for &p in &wrote {
            view.write_slice(&[1, 2, 3], GuestAddress(BASE + p * PAGE + 9))
                .unwrap();
        }
        drop(view);
        let again = moment.map(BASE).unwrap();
        assert!(
            wrote.iter().all(|&p| private(&again, p as usize)),
            "the ended branch's view was not reused"
        );
        assert!(all(&again) == want, "a reused view differs from a new one");
        // Held: never reused.
        let other = moment.map(BASE).unwrap();
        assert!(!private(&other, 3), "a held view was handed out again");
        assert!(all(&other) == want);
        // Not a flat exploration's (no populate_written): nothing kept for reuse.
        let plain = root.map(BASE).unwrap();
        plain
            .write_slice(&[1], GuestAddress(BASE + 3 * PAGE))
            .unwrap();
        drop(plain);
        assert!(!private(&root.map(BASE).unwrap(), 3));
    }

    /// The bottom layer is mapped across short holes: they read as zero, a write there is
    /// the branch's own (kept by its moment, unseen by other views), and long holes and
    /// upper layers are mapped exactly.
    #[test]
    fn short_holes_of_the_bottom_layer_are_bridged_and_still_read_zero() {
        assert_eq!(
            bridged(&[(0, 2), (5, 6), (23, 30), (40, 41), (58, 60)], 16),
            vec![(0, 6), (23, 41), (58, 60)]
        );
        assert_eq!(bridged(&[], 16), vec![]);
        let size = 256 * PAGE;
        let runs = [
            (0, vec![1u8; 2 * PAGE as usize]),
            (5, vec![2u8; PAGE as usize]),
            (100, vec![3u8; PAGE as usize]),
        ];
        let root = Layers::from_runs(size, &runs, true).unwrap();
        let a = root.map(BASE).unwrap();
        assert_eq!(
            [0, 1, 2, 3, 4, 5, 6, 50, 100, 101].map(|p| byte(&a, p)),
            [1, 1, 0, 0, 0, 2, 0, 0, 3, 0]
        );
        a.write_slice(&[9], GuestAddress(BASE + 3 * PAGE + 5))
            .unwrap();
        let m = root.with_written(ram(&a)).unwrap().unwrap();
        let b = m.map(BASE).unwrap();
        assert_eq!([2, 3, 4, 5].map(|p| byte(&b, p)), [0, 9, 0, 2]);
        // Another view of the root does not see the branch's write into the bridged hole.
        let c = root.map(BASE).unwrap();
        assert_eq!([2, 3, 4].map(|p| byte(&c, p)), [0, 0, 0]);
    }

    /// `PAGEMAP_SCAN` and the page map's entries name the same written pages.
    #[test]
    fn the_page_scan_and_the_page_map_agree() {
        if skipped_without_pagemap() {
            return;
        }
        let size = 256 * PAGE;
        let root = Layers::from_runs(size, &[(3, vec![7u8; 40 * PAGE as usize])], true).unwrap();
        let view = root.map(BASE).unwrap();
        for p in [0u64, 3, 4, 5, 20, 42, 43, 44, 100, 101, 255] {
            let _ = byte(&view, p);
        }
        for p in [3u64, 5, 6, 7, 42, 43, 90, 101, 200, 255] {
            view.write_slice(&[1], GuestAddress(BASE + p * PAGE))
                .unwrap();
        }
        let flags = page_flags(ram(&view)).unwrap();
        let from_flags: Vec<usize> = (0..flags.len()).filter(|&i| written(flags[i])).collect();
        match scan_written(ram(&view)) {
            Ok(runs) => {
                let scanned: Vec<usize> = runs.iter().flat_map(|&(a, b)| a..b).collect();
                assert_eq!(scanned, from_flags);
            }
            Err(e) => eprintln!("no PAGEMAP_SCAN on this host ({e}): the page map is read"),
        }
        assert!(from_flags.contains(&90) && !from_flags.contains(&4));
    }
}
