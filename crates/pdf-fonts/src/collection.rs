//! CID → Unicode of Adobe's predefined character collections (Adobe-Japan1, -GB1, -CNS1,
//! -Korea1, -KR), for CID fonts that carry neither a ToUnicode map nor a program to read
//! one from (typically a non-embedded Ryumin or MS-Mincho under Identity-H/V).
//!
//! The tables are Adobe's `Adobe-<Ordering>-UCS2` CMaps (BSD-3-Clause). We do not ship
//! them: they are read from the system's copy (Debian `poppler-data`, which pdftotext uses
//! for the same purpose). Without it such text stays unreadable, as before.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::cmap::CMap;

/// Where the system keeps the collections' CMaps (`<dir>/Adobe-<Ordering>/Adobe-<Ordering>-UCS2`).
const CMAP_DIRS: &[&str] = &["/usr/share/poppler/cMap"];
/// The orderings we read; anything else is refused before touching the file system.
const ORDERINGS: &[&str] = &["Japan1", "GB1", "CNS1", "Korea1", "KR"];
/// A UCS2 CMap is about 300 KB; a file much larger is not one.
const MAX_BYTES: u64 = 4 << 20;

type Table = Arc<HashMap<u32, (String, usize)>>;

/// CID → (text, 2) for collection `Adobe-<ordering>`, loaded once per process; `None` when
/// the ordering is unknown or the system has no table for it.
pub(crate) fn cid_to_unicode(registry: &[u8], ordering: &[u8]) -> Option<Table> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<Table>>>> = OnceLock::new();
    if registry != b"Adobe" {
        return None;
    }
    let ordering = std::str::from_utf8(ordering).ok()?;
    if !ORDERINGS.contains(&ordering) {
        return None;
    }
    let cache = CACHE.get_or_init(Mutex::default);
    let mut cache = cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    cache
        .entry(ordering.to_string())
        .or_insert_with(|| load(ordering))
        .clone()
}

fn load(ordering: &str) -> Option<Table> {
    for dir in CMAP_DIRS {
        let path = std::path::Path::new(dir)
            .join(format!("Adobe-{ordering}"))
            .join(format!("Adobe-{ordering}-UCS2"));
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.len() > MAX_BYTES {
            continue;
        }
        let Ok(data) = std::fs::read(&path) else {
            continue;
        };
        let map = CMap::parse(&data).unicode;
        if !map.is_empty() {
            return Some(Arc::new(map));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn japan1_reads_when_the_system_has_it() {
        let Some(t) = super::cid_to_unicode(b"Adobe", b"Japan1") else {
            eprintln!("skipped: no Adobe-Japan1-UCS2 on this system (poppler-data)");
            return;
        };
        // CID 843 is HIRAGANA LETTER A in Adobe-Japan1.
        assert_eq!(t.get(&843).map(|(s, l)| (s.as_str(), *l)), Some(("あ", 2)));
        assert!(super::cid_to_unicode(b"Adobe", b"Nope").is_none());
    }
}
