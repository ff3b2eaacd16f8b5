//! The annotation's own copies of its text: /Contents (plain text) and /RC (rich text,
//! XHTML), updated to say what the edited appearance shows.

use lopdf::{Document, Object, ObjectId, StringFormat};
use pdf_content::{decode_text_string, encode_text_string};
use regex::Regex;

/// `found` as a pattern that also matches where the text breaks its lines differently
/// (the appearance shows `a b` where /Contents holds `a\nb` or `a  b`).
fn loose(found: &str) -> Option<Regex> {
    let words: Vec<String> = found.split_whitespace().map(regex::escape).collect();
    if words.is_empty() {
        return None;
    }
    Regex::new(&words.join(r"\s+")).ok()
}

/// `text` with each `(found, replacement)` applied in turn, each at its first occurrence
/// after the previous one; None when one is not there.
fn substitute(text: &str, pairs: &[(String, String)]) -> Option<String> {
    let mut out = String::new();
    let mut rest = text;
    for (found, replacement) in pairs {
        let m = loose(found)?.find(rest)?;
        out.push_str(&rest[..m.start()]);
        out.push_str(replacement);
        rest = &rest[m.end()..];
    }
    out.push_str(rest);
    Some(tidy_delete(out, pairs))
}

/// A delete leaves no double space behind.
fn tidy_delete(text: String, pairs: &[(String, String)]) -> String {
    if pairs.iter().all(|(_, r)| !r.is_empty()) {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive(['\n', '\r']) {
        let (body, end) = line.split_at(line.trim_end_matches(['\n', '\r']).len());
        out.push_str(
            &body
                .split(' ')
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join(" "),
        );
        out.push_str(end);
    }
    out
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The rich text with the same substitutions made in its character data, or None when a
/// found text is not there as one run of character data (split over spans, entities,
/// different line breaks): changing it then could not be done without rewriting markup.
fn substitute_rich(rc: &str, pairs: &[(String, String)]) -> Option<String> {
    let mut out = String::new();
    let mut rest = rc;
    for (found, replacement) in pairs {
        let pattern = loose(&xml_escape(found))?;
        let m = pattern.find_iter(rest).find(|m| {
            // Outside a tag: the last '<' before it is closed before it.
            let head = &rest[..m.start()];
            head.rfind('<').is_none_or(|lt| head[lt..].contains('>'))
        })?;
        out.push_str(&rest[..m.start()]);
        out.push_str(&xml_escape(replacement));
        rest = &rest[m.end()..];
    }
    out.push_str(rest);
    Some(out)
}

/// Updates /Contents and /RC of `annot` with the `(found, replacement)` pairs, in the
/// appearance's reading order. Err when /Contents does not hold the text the appearance
/// showed (the two disagree; the edit is refused rather than leaving them apart).
pub(crate) fn update(
    doc: &mut Document,
    annot: ObjectId,
    pairs: &[(String, String)],
) -> Result<(), String> {
    let dict = doc.get_dictionary(annot).map_err(|e| e.to_string())?;
    let read = |key: &[u8]| match dict.get(key).map(|o| doc.dereference(o)) {
        Ok(Ok((_, Object::String(s, _)))) => Some(s.clone()),
        _ => None,
    };
    let contents = read(b"Contents")
        .ok_or_else(|| "the annotation has no /Contents text to update".to_string())?;
    let was_utf16 = contents.starts_with(&[0xFE, 0xFF]);
    let new_contents = substitute(&decode_text_string(&contents), pairs)
        .ok_or_else(|| "the annotation's /Contents does not hold the text it shows".to_string())?;
    // /RC: updated in its character data when every found text is one run of it;
    // otherwise removed, since stale rich text would bring the old text back in viewers
    // that rebuild the appearance from it (they fall back to /Contents with /DA and /DS).
    let rich = match dict.get(b"RC").map(|o| doc.dereference(o)) {
        Ok(Ok((_, Object::String(s, _)))) => {
            let utf16 = s.starts_with(&[0xFE, 0xFF]);
            substitute_rich(&decode_text_string(s), pairs).map(|t| encode_text_string(&t, utf16))
        }
        _ => None,
    };
    let has_rc = dict.has(b"RC");
    let d = doc
        .get_object_mut(annot)
        .and_then(Object::as_dict_mut)
        .map_err(|e| e.to_string())?;
    d.set(
        "Contents",
        Object::String(
            encode_text_string(&new_contents, was_utf16),
            StringFormat::Literal,
        ),
    );
    match rich {
        Some(bytes) => d.set("RC", Object::String(bytes, StringFormat::Literal)),
        None if has_rc => {
            d.remove(b"RC");
        }
        None => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn contents_follow_line_breaks_and_order() {
        let p = pairs(&[("typewriter text", "new words"), ("b", "c")]);
        assert_eq!(
            substitute("a typewriter\ntext b b", &p).as_deref(),
            Some("a new words c b")
        );
        assert_eq!(substitute("nothing here", &p), None);
    }

    #[test]
    fn delete_leaves_single_spaces() {
        let p = pairs(&[("modified", "")]);
        assert_eq!(
            substitute("the modified text", &p).as_deref(),
            Some("the text")
        );
    }

    #[test]
    fn rich_text_changes_character_data_only() {
        let rc =
            r#"<body style="font-family:Arial"><p><span style="x">a &amp; Arial</span></p></body>"#;
        let p = pairs(&[("a & Arial", "b <c>")]);
        assert_eq!(
            substitute_rich(rc, &p).as_deref(),
            Some(
                r#"<body style="font-family:Arial"><p><span style="x">b &lt;c&gt;</span></p></body>"#
            )
        );
        // Only inside a tag: refused.
        assert_eq!(substitute_rich(rc, &pairs(&[("font-family", "x")])), None);
    }

    #[test]
    fn utf16_kept_and_chosen_when_needed() {
        assert_eq!(encode_text_string("ab", false), b"ab".to_vec());
        assert_eq!(
            encode_text_string("ab", true),
            vec![0xFE, 0xFF, 0, b'a', 0, b'b']
        );
        assert_eq!(encode_text_string("é", false), vec![0xFE, 0xFF, 0, 0xE9]);
    }
}
