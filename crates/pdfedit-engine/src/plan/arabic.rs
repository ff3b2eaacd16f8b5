//! New right-to-left text made ready to draw: Arabic letters shaped into their contextual
//! forms, then the line put in visual order (left to right, as glyphs are placed).
//!
//! A PDF places glyphs left to right and knows nothing of shaping: a producer draws each
//! Arabic letter in the form its neighbours give it (isolated, initial, medial or final),
//! right-to-left runs reversed. New text is typed in logical order and in base letters,
//! so before it is encoded it is
//!
//! 1. shaped: every letter becomes the Arabic presentation form (U+FB50–U+FEFF) its
//!    joining type (Unicode `ArabicShaping.txt`: dual-joining, right-joining, join-causing
//!    tatweel, transparent marks) and its neighbours call for; lam followed by an alef
//!    becomes one lam-alef ligature. Marks (harakat) join nothing and are skipped over
//!    when neighbours are looked for. Fonts map these code points to their form glyphs
//!    (their cmap; a subset's `/ToUnicode` may also list them), so the document's own
//!    font draws the form when its subset has it, and an installed face with Arabic
//!    coverage otherwise;
//! 2. reordered with the Unicode bidirectional algorithm (`unicode-bidi`), the paragraph
//!    direction taken from its first strong character: right-to-left runs are reversed
//!    (a mark then comes before its letter, as shapers emit them), numbers and Latin
//!    words inside them keep their own order.
//!
//! Readers (pdftotext, PDFium) fold the presentation forms back to letters.

use std::borrow::Cow;

/// How a letter joins its neighbours (Unicode joining types).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Joining {
    /// Joins on both sides (beh, seen…).
    Dual,
    /// Joins only the letter before it (alef, dal, reh, waw…).
    Right,
    /// Makes both neighbours join, drawn as itself (tatweel).
    Causing,
    /// Skipped when neighbours are looked for (harakat and other marks).
    Transparent,
    /// Joins nothing.
    None,
}

/// A letter's presentation forms: isolated, final, initial, medial (the last two only for
/// dual-joining letters).
#[derive(Clone, Copy)]
struct Forms {
    isolated: u32,
    final_: u32,
    initial: Option<u32>,
    medial: Option<u32>,
}

/// Letters of the Arabic block with forms in Presentation Forms-B (U+FE80…): the letter
/// and the code point of its isolated form; dual-joining letters have four forms in a
/// row (isolated, final, initial, medial), right-joining ones two (isolated, final).
const FORMS_B: &[(char, u32, Joining)] = &[
    ('\u{0622}', 0xFE81, Joining::Right),
    ('\u{0623}', 0xFE83, Joining::Right),
    ('\u{0624}', 0xFE85, Joining::Right),
    ('\u{0625}', 0xFE87, Joining::Right),
    ('\u{0626}', 0xFE89, Joining::Dual),
    ('\u{0627}', 0xFE8D, Joining::Right),
    ('\u{0628}', 0xFE8F, Joining::Dual),
    ('\u{0629}', 0xFE93, Joining::Right),
    ('\u{062A}', 0xFE95, Joining::Dual),
    ('\u{062B}', 0xFE99, Joining::Dual),
    ('\u{062C}', 0xFE9D, Joining::Dual),
    ('\u{062D}', 0xFEA1, Joining::Dual),
    ('\u{062E}', 0xFEA5, Joining::Dual),
    ('\u{062F}', 0xFEA9, Joining::Right),
    ('\u{0630}', 0xFEAB, Joining::Right),
    ('\u{0631}', 0xFEAD, Joining::Right),
    ('\u{0632}', 0xFEAF, Joining::Right),
    ('\u{0633}', 0xFEB1, Joining::Dual),
    ('\u{0634}', 0xFEB5, Joining::Dual),
    ('\u{0635}', 0xFEB9, Joining::Dual),
    ('\u{0636}', 0xFEBD, Joining::Dual),
    ('\u{0637}', 0xFEC1, Joining::Dual),
    ('\u{0638}', 0xFEC5, Joining::Dual),
    ('\u{0639}', 0xFEC9, Joining::Dual),
    ('\u{063A}', 0xFECD, Joining::Dual),
    ('\u{0641}', 0xFED1, Joining::Dual),
    ('\u{0642}', 0xFED5, Joining::Dual),
    ('\u{0643}', 0xFED9, Joining::Dual),
    ('\u{0644}', 0xFEDD, Joining::Dual),
    ('\u{0645}', 0xFEE1, Joining::Dual),
    ('\u{0646}', 0xFEE5, Joining::Dual),
    ('\u{0647}', 0xFEE9, Joining::Dual),
    ('\u{0648}', 0xFEED, Joining::Right),
    ('\u{064A}', 0xFEF1, Joining::Dual),
];

/// Letters whose forms are elsewhere or not in one row: (letter, isolated, final,
/// initial, medial). Alef maksura is dual-joining; its initial and medial forms are in
/// Presentation Forms-A. Persian and Urdu letters are in Presentation Forms-A too.
const FORMS_OTHER: &[(char, u32, u32, u32, u32)] = &[
    ('\u{0649}', 0xFEEF, 0xFEF0, 0xFBE8, 0xFBE9),
    ('\u{067E}', 0xFB56, 0xFB57, 0xFB58, 0xFB59),
    ('\u{0686}', 0xFB7A, 0xFB7B, 0xFB7C, 0xFB7D),
    ('\u{06A9}', 0xFB8E, 0xFB8F, 0xFB90, 0xFB91),
    ('\u{06AF}', 0xFB92, 0xFB93, 0xFB94, 0xFB95),
    ('\u{06CC}', 0xFBFC, 0xFBFD, 0xFBFE, 0xFBFF),
];

/// Right-joining letters with forms in Presentation Forms-A: (letter, isolated, final).
const FORMS_OTHER_RIGHT: &[(char, u32, u32)] = &[('\u{0698}', 0xFB8A, 0xFB8B)];

/// Lam-alef ligatures: (alef, isolated ligature; the final form follows it).
const LAM_ALEF: &[(char, u32)] = &[
    ('\u{0622}', 0xFEF5),
    ('\u{0623}', 0xFEF7),
    ('\u{0625}', 0xFEF9),
    ('\u{0627}', 0xFEFB),
];

const LAM: char = '\u{0644}';

fn forms_of(c: char) -> Option<(Forms, Joining)> {
    if let Some(&(_, iso, j)) = FORMS_B.iter().find(|(l, _, _)| *l == c) {
        let dual = j == Joining::Dual;
        return Some((
            Forms {
                isolated: iso,
                final_: iso + 1,
                initial: dual.then_some(iso + 2),
                medial: dual.then_some(iso + 3),
            },
            j,
        ));
    }
    if let Some(&(_, iso, fin, ini, med)) = FORMS_OTHER.iter().find(|f| f.0 == c) {
        let forms = Forms {
            isolated: iso,
            final_: fin,
            initial: Some(ini),
            medial: Some(med),
        };
        return Some((forms, Joining::Dual));
    }
    FORMS_OTHER_RIGHT
        .iter()
        .find(|f| f.0 == c)
        .map(|&(_, iso, fin)| {
            let forms = Forms {
                isolated: iso,
                final_: fin,
                initial: None,
                medial: None,
            };
            (forms, Joining::Right)
        })
}

/// The joining type of `c` (Unicode `ArabicShaping.txt` and the general category Mn for
/// transparent marks, restricted to the Arabic letters this module shapes).
fn joining(c: char) -> Joining {
    if let Some((_, j)) = forms_of(c) {
        return j;
    }
    match c as u32 {
        // Tatweel (and zero width joiner) make their neighbours join.
        0x0640 | 0x200D => Joining::Causing,
        // Harakat, Quranic marks, superscript alef.
        0x0610..=0x061A | 0x064B..=0x065F | 0x0670 | 0x06D6..=0x06DC | 0x06DF..=0x06E4 => {
            Joining::Transparent
        }
        0x06E7 | 0x06E8 | 0x06EA..=0x06ED => Joining::Transparent,
        _ => Joining::None,
    }
}

/// Whether `c` is an Arabic letter or mark this module shapes.
fn is_arabic(c: char) -> bool {
    matches!(c as u32, 0x0600..=0x06FF | 0x0750..=0x077F | 0x08A0..=0x08FF)
}

/// Whether `text` holds a strong right-to-left character (Hebrew, Arabic and their
/// presentation forms, Syriac, Thaana, NKo…).
pub(crate) fn has_rtl(text: &str) -> bool {
    text.chars()
        .any(|c| matches!(c as u32, 0x0590..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFF))
}

/// `text` (logical order) with each Arabic letter in its contextual presentation form
/// and lam + alef as one ligature. Characters other than Arabic letters are kept.
pub(crate) fn shape(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let types: Vec<Joining> = chars.iter().map(|&c| joining(c)).collect();
    // The nearest character before / after `i` that is not a transparent mark.
    let prev = |i: usize| (0..i).rev().find(|&k| types[k] != Joining::Transparent);
    let next = |i: usize| (i + 1..chars.len()).find(|&k| types[k] != Joining::Transparent);
    // Whether the character at `k` joins the one after it / before it.
    let joins_next = |k: usize| matches!(types[k], Joining::Dual | Joining::Causing);
    let joins_prev =
        |k: usize| matches!(types[k], Joining::Dual | Joining::Right | Joining::Causing);
    let mut out = String::with_capacity(text.len() * 2);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let Some((forms, j)) = forms_of(c) else {
            out.push(c);
            i += 1;
            continue;
        };
        let before = prev(i).is_some_and(joins_next);
        // Lam followed by an alef (marks on the lam may sit between them).
        if c == LAM {
            if let Some(a) = next(i) {
                if let Some(&(_, iso)) = LAM_ALEF.iter().find(|(al, _)| *al == chars[a]) {
                    let lig = if before { iso + 1 } else { iso };
                    out.extend(char::from_u32(lig));
                    // The lam's marks stay, after the ligature.
                    out.extend(&chars[i + 1..a]);
                    i = a + 1;
                    continue;
                }
            }
        }
        let after = j == Joining::Dual && next(i).is_some_and(joins_prev);
        let form = match (before, after) {
            (true, true) => forms.medial.unwrap_or(forms.final_),
            (true, false) => forms.final_,
            (false, true) => forms.initial.unwrap_or(forms.isolated),
            (false, false) => forms.isolated,
        };
        out.extend(char::from_u32(form));
        i += 1;
    }
    out
}

/// One line of text (logical order) put in visual order by the Unicode bidirectional
/// algorithm, the paragraph direction from its first strong character.
pub(crate) fn reorder(text: &str) -> String {
    reorder_at(text, None)
}

/// One line of text given in visual order put back in logical order: the same
/// reordering (for one line it is its own inverse) at the paragraph direction of the
/// logical text, whose first strong character is the visual line's last when the line
/// runs right to left.
pub(crate) fn logical_from_visual(text: &str) -> String {
    use unicode_bidi::{bidi_class, BidiClass};
    let last_strong = text.chars().rev().find_map(|c| match bidi_class(c) {
        BidiClass::R | BidiClass::AL => Some(true),
        BidiClass::L => Some(false),
        _ => None,
    });
    let level = match last_strong {
        Some(true) => unicode_bidi::Level::rtl(),
        _ => unicode_bidi::Level::ltr(),
    };
    reorder_at(text, Some(level))
}

fn reorder_at(text: &str, level: Option<unicode_bidi::Level>) -> String {
    let info = unicode_bidi::BidiInfo::new(text, level);
    let Some(para) = info.paragraphs.first() else {
        return text.to_string();
    };
    if info.paragraphs.len() > 1 {
        // Several paragraphs (a line break inside): each reordered on its own.
        return info
            .paragraphs
            .iter()
            .map(|p| info.reorder_line(p, p.range.clone()).into_owned())
            .collect();
    }
    info.reorder_line(para, para.range.clone()).into_owned()
}

/// `text` (logical order) as it is drawn: Arabic shaped, then in visual order. Text with
/// no right-to-left character is returned as it is.
pub(crate) fn for_drawing(text: &str) -> Cow<'_, str> {
    if !has_rtl(text) {
        return Cow::Borrowed(text);
    }
    let shaped = if text.chars().any(is_arabic) {
        shape(text)
    } else {
        text.to_string()
    };
    Cow::Owned(reorder(&shaped))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u32> {
        s.chars().map(|c| c as u32).collect()
    }

    #[test]
    fn a_letter_takes_each_of_its_four_forms() {
        // "بببب" (beh ×4): initial, medial, medial, final; alone it is isolated.
        assert_eq!(
            hex(&shape("\u{0628}\u{0628}\u{0628}\u{0628}")),
            [0xFE91, 0xFE92, 0xFE92, 0xFE90]
        );
        assert_eq!(hex(&shape("\u{0628}")), [0xFE8F]);
    }

    #[test]
    fn habibi_shapes_like_the_document_and_marks_are_transparent() {
        // حَبيبي: hah initial (its fatha does not break the join), beh medial, yeh
        // medial, beh medial, yeh final: the forms WeasyPrint drew in the corpus file.
        assert_eq!(
            hex(&shape("حَبيبي")),
            [0xFEA3, 0x064E, 0xFE92, 0xFEF4, 0xFE92, 0xFEF2]
        );
    }

    #[test]
    fn right_joining_letters_break_the_word_and_lam_alef_ligates() {
        // "دار": dal isolated (joins nothing after it), alef isolated after dal, reh
        // isolated after alef.
        assert_eq!(hex(&shape("دار")), [0xFEA9, 0xFE8D, 0xFEAD]);
        // "سلام": seen initial, lam-alef final ligature, meem isolated.
        assert_eq!(hex(&shape("سلام")), [0xFEB3, 0xFEFC, 0xFEE1]);
        // "لا" alone: the isolated ligature.
        assert_eq!(hex(&shape("لا")), [0xFEFB]);
    }

    #[test]
    fn drawing_order_is_visual_and_latin_keeps_its_order() {
        let drawn = for_drawing("حَبيبي");
        // Reversed: final yeh first, the fatha before its hah.
        assert_eq!(
            hex(&drawn),
            [0xFEF2, 0xFE92, 0xFEF4, 0xFE92, 0x064E, 0xFEA3]
        );
        // A Latin word inside Arabic reads left to right still.
        let mixed = for_drawing("بيت abc");
        assert!(mixed.contains("abc"), "{mixed}");
        assert_eq!(for_drawing("habibi"), "habibi");
        // A visual line put back in logical order gives the text again.
        for logical in ["يبيبَح abc 12", "سلام حَبيبي"] {
            assert_eq!(logical_from_visual(&reorder(logical)), logical);
        }
        // A visual line that could be either direction is drawn again as it was given.
        for visual in ["habibi يبيبَح", "abc 12 يبيبَح", "يبيبَح بيب"] {
            assert_eq!(reorder(&logical_from_visual(visual)), visual);
        }
        assert_eq!(logical_from_visual("يبيبَح"), "حَبيبي");
    }
}
