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
//! Where a run's `current` comes from on a hit: saving the parsed template again costs
//! 0.4 ms on one page, several ms on a hundred. An entry also keeps the input bytes its
//! saved bytes were made from (an unencrypted input, parsed and saved with nothing done
//! in between), and a run whose input equals them, byte for byte, takes a copy of the
//! saved bytes instead of saving. Parsing and saving are pure functions of the input, so
//! the copy is exactly what the save would have written: the renders are still keyed by
//! exactly the bytes they were rendered from, and the run is the same run.
//!
//! One entry holds all a process keeps of a template: besides the saved bytes and renders,
//! the facts PDFium found when it opened the input (`crate::open::facts_kept`), and an id
//! by which the thread that ran it keeps the input's page models and fonts
//! (`crate::template_models`, thread-local because models are not `Send`). The input's
//! bytes are held once, here, and compared in full whenever any of these is asked for.
//!
//! Bounds: at most [`MAX_ENTRIES`] documents and [`MAX_BYTES`] of bytes and pixels
//! together per process, least recently used first out; a document whose bytes take more
//! than half the budget is not cached.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use pdf_render::raster::Raster;
use pdf_render::DocInfo;

/// Documents kept at once.
const MAX_ENTRIES: usize = 4;
/// Bytes of documents and pixels of renders kept at once (an A4 page at the verification
/// resolution is about 6 MB). An engine process is recycled past 400 MB resident.
const MAX_BYTES: usize = 48 << 20;

/// One document: its saved bytes and the renders made of them.
struct Entry {
    bytes: Vec<u8>,
    /// The input `bytes` were saved from (empty when not known).
    source: Vec<u8>,
    /// What PDFium found opening `source` (no password, not encrypted), once known.
    facts: Option<DocInfo>,
    /// Names this entry in the per-thread model cache (`crate::template_models`); never
    /// reused within the process.
    id: u64,
    /// By 1-based page and the bits of the requested pixels per point.
    renders: HashMap<(u32, u32), Raster>,
    last_used: u64,
}

impl Entry {
    fn size(&self) -> usize {
        self.bytes.len()
            + self.source.len()
            + self.renders.values().map(|r| r.pixels.len()).sum::<usize>()
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

    /// The entry whose input is exactly `source`, marked used.
    fn find_source(&mut self, source: &[u8]) -> Option<&mut Entry> {
        self.clock += 1;
        let clock = self.clock;
        let entry = self.entries.iter_mut().find(|e| {
            !e.source.is_empty() && e.source.len() == source.len() && e.source == source
        })?;
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

/// The next entry's id.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

static CACHE: Mutex<Cache> = Mutex::new(Cache {
    entries: Vec::new(),
    clock: 0,
});

/// Runs `f` on the cache; `None` if its lock was poisoned (the cache is then skipped).
fn with_cache<T>(f: impl FnOnce(&mut Cache) -> Option<T>) -> Option<T> {
    let mut cache = CACHE.lock().ok()?;
    f(&mut cache)
}

/// Saved bytes this process's runs took from the cache instead of saving (for tests).
static SAVES_SKIPPED: AtomicU64 = AtomicU64::new(0);

/// How many runs of this process took their unedited saved bytes from the template cache.
pub fn saves_skipped() -> u64 {
    SAVES_SKIPPED.load(Ordering::Relaxed)
}

/// What a template entry gives a run of exactly the input it was made from.
pub(crate) struct Known {
    /// What saving the parse of the input writes.
    pub(crate) saved: Vec<u8>,
    /// The entry's id, for the page models kept by `crate::template_models`.
    pub(crate) id: u64,
}

/// A copy of the saved bytes registered as made from exactly `source` (the input of a
/// run, unencrypted), with the entry's id, if any.
pub(crate) fn saved_from(source: &[u8]) -> Option<Known> {
    let known = with_cache(|c| {
        let entry = c.find_source(source)?;
        Some(Known {
            saved: entry.bytes.clone(),
            id: entry.id,
        })
    });
    if known.is_some() {
        SAVES_SKIPPED.fetch_add(1, Ordering::Relaxed);
    }
    known
}

/// The facts PDFium found opening exactly `source` without a password, if a template
/// entry holds them.
pub(crate) fn facts_of(source: &[u8]) -> Option<DocInfo> {
    with_cache(|c| c.find_source(source)?.facts.clone())
}

/// Makes `bytes` (a run's unedited saved document) a cached template, or marks it used.
/// `source`, when given, must be the unencrypted input that parsing and saving (with
/// nothing done in between) turned into exactly `bytes`; it is kept when the budget allows,
/// with `facts`, what PDFium found opening it without a password. Returns the entry's id
/// when the entry holds `source` (so that a later run of the same input finds it).
pub(crate) fn register(
    bytes: &[u8],
    source: Option<&[u8]>,
    facts: Option<&DocInfo>,
) -> Option<u64> {
    if bytes.len() > MAX_BYTES / 2 {
        return None;
    }
    let source = source.filter(|s| !s.is_empty() && bytes.len() + s.len() <= MAX_BYTES / 2);
    with_cache(|c| {
        if let Some(entry) = c.find(bytes) {
            if let (true, Some(s)) = (entry.source.is_empty(), source) {
                entry.source = s.to_vec();
            }
            // Facts and models are of the entry's own input only (another input that
            // saves to the same bytes is not it).
            let own = source.is_some_and(|s| entry.source == s);
            if own && entry.facts.is_none() {
                entry.facts = facts.cloned();
            }
            let id = own.then_some(entry.id);
            c.evict(MAX_BYTES);
            return Some(id);
        }
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        c.entries.push(Entry {
            bytes: bytes.to_vec(),
            source: source.map(<[u8]>::to_vec).unwrap_or_default(),
            facts: source.and(facts.cloned()),
            id,
            renders: HashMap::new(),
            last_used: c.clock,
        });
        c.evict(MAX_BYTES);
        Some(source.map(|_| id))
    })
    .flatten()
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
                source: Vec::new(),
                facts: None,
                id: u64::from(i),
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
