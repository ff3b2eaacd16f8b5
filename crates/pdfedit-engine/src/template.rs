//! Template reuse across the records of a batch (`options.template_cache`): the records
//! of a batch are edits of one template, and every record's commit step renders the same
//! unedited pages "before". This per-process cache keeps those renders, keyed by the exact
//! bytes they were rendered from, so only a process's first record of a template pays for
//! them. A run takes a render out (moved, not copied: a page is megabytes) and gives it
//! back when its commit keeps the change; a render whose commit rolls back stays with its
//! run (a later record renders that page again).
//!
//! What a render is keyed by: the document's current saved bytes (the run's `current`,
//! which a fresh run makes by saving the parsed template) compared in full, the 1-based
//! page and the verification resolution. A render is a pure function of those three, so a
//! cached render is exactly what [`crate::verify::render`] would return for them, and an
//! edit with the cache gives the same verdicts, changes and output as one without it.
//!
//! Why sharing across callers is safe: an entry is found only by presenting bytes equal,
//! byte for byte, to the ones it was rendered from (no hash stands in for the bytes, so no
//! collision can be crafted). A caller who presents them already holds the document those
//! renders show; nothing of any request (edits, values, outputs) is stored, only the
//! template's own pixels.
//!
//! Bounds: at most [`MAX_ENTRIES`] documents and [`MAX_BYTES`] of bytes and pixels
//! together per process, least recently used first out; a document whose bytes take more
//! than half the budget is not cached.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use pdf_render::raster::Raster;

/// Documents kept at once.
const MAX_ENTRIES: usize = 4;
/// Bytes of documents and pixels of renders kept at once (an A4 page at the verification
/// resolution is about 6 MB). An engine process is recycled past 400 MB resident.
const MAX_BYTES: usize = 48 << 20;

/// One document: its saved bytes and the renders made of them.
struct Entry {
    bytes: Vec<u8>,
    /// By 1-based page and the bits of the requested pixels per point.
    renders: HashMap<(u32, u32), Raster>,
    last_used: u64,
}

impl Entry {
    fn size(&self) -> usize {
        self.bytes.len() + self.renders.values().map(|r| r.pixels.len()).sum::<usize>()
    }
}

struct Cache {
    entries: Vec<Entry>,
    clock: u64,
}

impl Cache {
    fn size(&self) -> usize {
        self.entries.iter().map(Entry::size).sum()
    }

    /// The entry of exactly these bytes, marked used.
    fn find(&mut self, bytes: &[u8]) -> Option<&mut Entry> {
        self.clock += 1;
        let clock = self.clock;
        let entry = self
            .entries
            .iter_mut()
            .find(|e| e.bytes.len() == bytes.len() && e.bytes == bytes)?;
        entry.last_used = clock;
        Some(entry)
    }

    /// Drops least recently used entries until within `budget` and [`MAX_ENTRIES`]; never
    /// the most recently used one (the one a caller just found or added).
    fn evict(&mut self, budget: usize) {
        while self.entries.len() > 1 && (self.size() > budget || self.entries.len() > MAX_ENTRIES) {
            let oldest = self
                .entries
                .iter()
                .enumerate()
                .filter(|(_, e)| e.last_used != self.clock)
                .min_by_key(|(_, e)| e.last_used)
                .map(|(i, _)| i);
            let Some(i) = oldest else { return };
            self.entries.swap_remove(i);
        }
    }
}

/// Renders this process took from the cache (for tests and diagnostics).
static HITS: AtomicU64 = AtomicU64::new(0);

/// How many renders before this process's runs took from the template cache.
pub fn hits() -> u64 {
    HITS.load(Ordering::Relaxed)
}

static CACHE: Mutex<Cache> = Mutex::new(Cache {
    entries: Vec::new(),
    clock: 0,
});

/// Runs `f` on the cache; `None` if its lock was poisoned (the cache is then skipped).
fn with_cache<T>(f: impl FnOnce(&mut Cache) -> Option<T>) -> Option<T> {
    let mut cache = CACHE.lock().ok()?;
    f(&mut cache)
}

/// Makes `bytes` (a run's unedited saved document) a cached template, or marks it used.
pub(crate) fn register(bytes: &[u8]) {
    if bytes.len() > MAX_BYTES / 2 {
        return;
    }
    with_cache(|c| {
        if c.find(bytes).is_some() {
            return Some(());
        }
        c.entries.push(Entry {
            bytes: bytes.to_vec(),
            renders: HashMap::new(),
            last_used: c.clock,
        });
        c.evict(MAX_BYTES);
        Some(())
    });
}

/// The cached render of page `page` of exactly `bytes` at `px_per_pt`, taken out of the
/// cache (moved, not copied: it goes back with [`give_back`] once its commit is done).
pub(crate) fn take(bytes: &[u8], page: u32, px_per_pt: f32) -> Option<Raster> {
    let hit = with_cache(|c| c.find(bytes)?.renders.remove(&(page, px_per_pt.to_bits())));
    if hit.is_some() {
        HITS.fetch_add(1, Ordering::Relaxed);
    }
    hit
}

/// Keeps `raster`, which must be exactly the render of page `page` of `bytes` at
/// `px_per_pt`, when `bytes` is a registered template, the page is not kept yet and the
/// budget has room for it.
pub(crate) fn give_back(bytes: &[u8], page: u32, px_per_pt: f32, raster: Raster) {
    with_cache(|c| {
        let total = c.size();
        let entry = c.find(bytes)?;
        let key = (page, px_per_pt.to_bits());
        if entry.renders.contains_key(&key) || total + raster.pixels.len() > MAX_BYTES {
            return None;
        }
        entry.renders.insert(key, raster);
        Some(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raster(len: usize) -> Raster {
        Raster {
            width: 1,
            height: 1,
            px_per_pt: 2.0,
            pixels: vec![7; len],
        }
    }

    #[test]
    fn bounded_and_exact() {
        let mut c = Cache {
            entries: Vec::new(),
            clock: 0,
        };
        for i in 0..6u8 {
            c.clock += 1;
            c.entries.push(Entry {
                bytes: vec![i; 10],
                renders: HashMap::new(),
                last_used: c.clock,
            });
            c.evict(1000);
        }
        assert_eq!(c.entries.len(), MAX_ENTRIES);
        // The newest stay; the two oldest went.
        assert!(c.find(&[0; 10]).is_none() && c.find(&[1; 10]).is_none());
        assert!(c.find(&[5; 10]).is_some());
        // Only equal bytes find an entry (a prefix or a longer document does not).
        assert!(c.find(&[5; 9]).is_none() && c.find(&[5; 11]).is_none());
        // Over the byte budget the least recently used go, never the one just used.
        c.find(&[2; 10])
            .unwrap()
            .renders
            .insert((1, 0), raster(500));
        c.find(&[3; 10])
            .unwrap()
            .renders
            .insert((1, 0), raster(500));
        c.evict(600);
        assert!(c.size() <= 600, "{}", c.size());
        assert!(c.find(&[3; 10]).is_some() && c.find(&[2; 10]).is_none());
    }
}
