//! The template's page models and fonts, shared by the records of a batch
//! (`options.template_cache`, issue 18 item 3). Every record of a batch opens the same
//! template and, before any edit, reads the same unedited pages: classifying the document
//! reads its first pages' models (content interpreted, fonts loaded, lines built), and
//! the record's find and font plan then work on those models and fonts. This per-process
//! cache keeps them after a process's first record of a template, so later records start
//! from copies instead of reading the pages again (only what their own edit changes is
//! read anew: an edited page's model is dropped and read again as before).
//!
//! What an entry is keyed by: the id of the template entry (`crate::template`) that holds
//! the run's input bytes, unencrypted; that entry is found only by the input's bytes
//! compared in full (no hash stands in for them), and an id is never reused. A page model and a font are pure functions of the parsed input
//! and the page (the parse is a pure function of the bytes, object ids included), so a
//! kept model is exactly what reading the page of that input again gives, and a run that
//! starts from it gives the same verdicts, changes and output as one that does not.
//! Only models of the unedited document are kept: taken right after classification,
//! before any edit ran, and none that took PDFium's reading of its text (that is per run).
//!
//! Why per thread: models refer to fonts by `Rc` (not `Send`). An engine process runs its
//! edits on one thread; a run on another thread simply finds nothing kept.
//!
//! Bounds: at most [`MAX_ENTRIES`] templates and [`MAX_BYTES`] of estimated model size
//! together, least recently used first out; a template over half the
//! budget is not kept.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::model::fonts::DocFonts;
use crate::model::PageModel;
use crate::types::Flag;

/// Templates kept at once.
const MAX_ENTRIES: usize = 4;
/// Estimated model size kept at once.
const MAX_BYTES: usize = 32 << 20;
/// Estimated bytes a glyph takes in a kept model (glyph, its text, its share of lines
/// and parsed streams): generous, so that the budget bounds what is actually held.
const GLYPH_BYTES: usize = 512;

struct Entry {
    /// The template entry's id.
    template: u64,
    models: HashMap<u32, PageModel>,
    fonts: DocFonts,
    /// The template's classification (SPEC rule 12): a pure function of the input, as
    /// its models are, so a record need not gather its facts again.
    flags: Vec<Flag>,
    size: usize,
    last_used: u64,
}

#[derive(Default)]
struct Kept {
    entries: Vec<Entry>,
    clock: u64,
}

thread_local! {
    static KEPT: RefCell<Kept> = RefCell::new(Kept::default());
}

/// Runs of this process that started from kept models (for tests and diagnostics).
static TAKEN: AtomicU64 = AtomicU64::new(0);

/// How many runs of this process started from a template's kept page models.
pub fn taken() -> u64 {
    TAKEN.load(Ordering::Relaxed)
}

/// What a run of a kept template starts from: copies of its page models, fonts and
/// classification.
pub(crate) struct KeptModels {
    pub(crate) models: HashMap<u32, PageModel>,
    pub(crate) fonts: DocFonts,
    pub(crate) flags: Vec<Flag>,
}

/// Copies of the page models, fonts and flags kept for the template entry `template`, if any.
pub(crate) fn models_of(template: u64) -> Option<KeptModels> {
    let found = KEPT.with(|k| {
        let mut k = k.try_borrow_mut().ok()?;
        k.clock += 1;
        let clock = k.clock;
        let entry = k.entries.iter_mut().find(|e| e.template == template)?;
        entry.last_used = clock;
        Some(KeptModels {
            models: entry.models.clone(),
            fonts: entry.fonts.clone(),
            flags: entry.flags.clone(),
        })
    });
    if found.is_some() {
        TAKEN.fetch_add(1, Ordering::Relaxed);
    }
    found
}

/// Keeps `models`, `fonts` and `flags`, which must be those of the unedited parse of
/// exactly the input held by the template entry `template` (the flags its
/// classification), when they are not kept yet and fit the budget. Models that took
/// PDFium's reading (`read_taken`) are left out.
pub(crate) fn keep(
    template: u64,
    models: &HashMap<u32, PageModel>,
    fonts: &DocFonts,
    read_taken: &BTreeSet<u32>,
    flags: &[Flag],
) {
    let glyphs: usize = models.values().map(|m| m.glyphs.glyphs.len()).sum();
    let size = glyphs.saturating_mul(GLYPH_BYTES);
    if models.is_empty() || size > MAX_BYTES / 2 {
        return;
    }
    KEPT.with(|k| {
        let Ok(mut k) = k.try_borrow_mut() else {
            return;
        };
        if k.entries.iter().any(|e| e.template == template) {
            return;
        }
        k.clock += 1;
        let clock = k.clock;
        let models = models
            .iter()
            .filter(|(n, _)| !read_taken.contains(n))
            .map(|(n, m)| (*n, m.clone()))
            .collect();
        k.entries.push(Entry {
            template,
            models,
            fonts: fonts.clone(),
            flags: flags.to_vec(),
            size,
            last_used: clock,
        });
        evict(&mut k, MAX_BYTES);
    });
}

/// Drops least recently used entries until within `budget` and [`MAX_ENTRIES`]; never
/// the one used last.
fn evict(k: &mut Kept, budget: usize) {
    loop {
        let total: usize = k.entries.iter().map(|e| e.size).sum();
        if k.entries.len() <= 1 || (total <= budget && k.entries.len() <= MAX_ENTRIES) {
            return;
        }
        let clock = k.clock;
        let Some(oldest) = k
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.last_used != clock)
            .min_by_key(|(_, e)| e.last_used)
            .map(|(i, _)| i)
        else {
            return;
        };
        k.entries.swap_remove(oldest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: u8, size: usize, last_used: u64) -> Entry {
        Entry {
            template: u64::from(id),
            models: HashMap::new(),
            fonts: DocFonts::default(),
            flags: Vec::new(),
            size,
            last_used,
        }
    }

    #[test]
    fn bounded_least_recently_used_out() {
        let mut k = Kept::default();
        for i in 0..6u8 {
            k.clock += 1;
            let clock = k.clock;
            k.entries.push(entry(i, 10, clock));
            evict(&mut k, 1000);
        }
        assert_eq!(k.entries.len(), MAX_ENTRIES);
        assert!(k.entries.iter().all(|e| e.template >= 2));
        // Over the budget the oldest go, never the one used last.
        k.clock += 1;
        let clock = k.clock;
        k.entries.push(entry(9, 500, clock));
        evict(&mut k, 520);
        assert_eq!(k.entries.len(), 3, "{}", k.entries.len());
        assert!(k.entries.iter().any(|e| e.template == 9));
    }
}
