//! The one place where operator bytes are matched: operator + operands → [`OpKind`].

use super::{OpKind, Operand, Value};

/// The last `N` operands as numbers. Like PDFium, extra leading operands are ignored
/// (it reads parameters counting from the operator backwards).
fn nums<const N: usize>(operands: &[Operand]) -> Option<[f64; N]> {
    let tail = operands.get(operands.len().checked_sub(N)?..)?;
    let mut out = [0.0; N];
    for (slot, operand) in out.iter_mut().zip(tail) {
        *slot = operand.as_f64()?;
    }
    Some(out)
}

fn num(operands: &[Operand]) -> Option<f64> {
    nums::<1>(operands).map(|[v]| v)
}

fn int(operands: &[Operand]) -> Option<i64> {
    match operands.last()?.value {
        Value::Integer(i) => Some(i),
        Value::Real(r) => Some(r as i64),
        _ => None,
    }
}

fn last_name(operands: &[Operand]) -> Option<Vec<u8>> {
    operands.last()?.as_name().map(<[u8]>::to_vec)
}

/// Leading numbers of `sc`/`scn`, with an optional trailing pattern name.
fn components(operands: &[Operand], allow_pattern: bool) -> Option<(Vec<f64>, Option<Vec<u8>>)> {
    let (pattern, numbers) = match operands.split_last() {
        Some((last, rest)) if allow_pattern && last.as_name().is_some() => {
            (last_name(operands), rest)
        }
        _ => (None, operands),
    };
    let comps = numbers
        .iter()
        .map(Operand::as_f64)
        .collect::<Option<Vec<_>>>()?;
    Some((comps, pattern))
}

/// Maps an operator and its operands to an [`OpKind`]: an operator of none of the groups
/// is [`OpKind::Other`], one of them whose operands do not fit it [`OpKind::Malformed`].
pub(crate) fn classify(operator: &[u8], operands: &[Operand]) -> OpKind {
    let kind = graphics_state_and_path(operator, operands)
        .or_else(|| text(operator, operands))
        .or_else(|| colour_and_objects(operator, operands));
    match kind {
        Some(kind) => kind.unwrap_or_else(|| OpKind::Malformed(operator.to_vec())),
        // `BI` never reaches here (the lexer folds the image into one token), but an
        // `ID` or `EI` without its `BI` does.
        None => OpKind::Other(operator.to_vec()),
    }
}

/// General graphics state, special graphics state, path construction, painting and
/// clipping operators (ISO 32000-1 Table 51); `None` for any other operator, `Some(None)`
/// when the operands do not fit.
fn graphics_state_and_path(operator: &[u8], operands: &[Operand]) -> Option<Option<OpKind>> {
    use OpKind::*;
    Some(match operator {
        b"w" => num(operands).map(LineWidth),
        b"J" => int(operands).map(LineCap),
        b"j" => int(operands).map(LineJoin),
        b"M" => num(operands).map(MiterLimit),
        b"d" => match operands {
            [.., array, phase] => match (&array.value, phase.as_f64()) {
                (Value::Array(items), Some(phase)) => items
                    .iter()
                    .map(Operand::as_f64)
                    .collect::<Option<Vec<_>>>()
                    .map(|array| Dash { array, phase }),
                _ => None,
            },
            _ => None,
        },
        b"ri" => last_name(operands).map(RenderingIntent),
        b"i" => num(operands).map(Flatness),
        b"gs" => last_name(operands).map(ExtGState),
        b"q" => Some(Save),
        b"Q" => Some(Restore),
        b"cm" => nums(operands).map(Transform),
        b"m" => nums(operands).map(MoveTo),
        b"l" => nums(operands).map(LineTo),
        b"c" => nums(operands).map(CurveTo),
        b"v" => nums(operands).map(CurveToV),
        b"y" => nums(operands).map(CurveToY),
        b"h" => Some(ClosePath),
        b"re" => nums(operands).map(Rectangle),
        b"S" => Some(Stroke),
        b"s" => Some(CloseStroke),
        b"f" => Some(Fill),
        b"F" => Some(FillCompat),
        b"f*" => Some(FillEvenOdd),
        b"B" => Some(FillStroke),
        b"B*" => Some(FillStrokeEvenOdd),
        b"b" => Some(CloseFillStroke),
        b"b*" => Some(CloseFillStrokeEvenOdd),
        b"n" => Some(EndPath),
        b"W" => Some(Clip),
        b"W*" => Some(ClipEvenOdd),
        _ => return None,
    })
}

/// Text object, text state, positioning and showing operators and the Type 3 glyph
/// metrics operators; `None` for any other operator.
fn text(operator: &[u8], operands: &[Operand]) -> Option<Option<OpKind>> {
    use OpKind::*;
    let last_is = |pred: fn(&Value) -> bool| operands.last().is_some_and(|o| pred(&o.value));
    let is_string = |v: &Value| matches!(v, Value::String(_));
    Some(match operator {
        b"BT" => Some(BeginText),
        b"ET" => Some(EndText),
        b"Tc" => num(operands).map(CharSpacing),
        b"Tw" => num(operands).map(WordSpacing),
        b"Tz" => num(operands).map(HorizontalScaling),
        b"TL" => num(operands).map(Leading),
        b"Tf" => match operands {
            [.., name, size] => match (name.as_name(), size.as_f64()) {
                (Some(name), Some(size)) => Some(Font {
                    name: name.to_vec(),
                    size,
                }),
                _ => None,
            },
            _ => None,
        },
        b"Tr" => int(operands).map(RenderMode),
        b"Ts" => num(operands).map(Rise),
        b"Td" => nums(operands).map(MoveText),
        b"TD" => nums(operands).map(MoveTextSetLeading),
        b"Tm" => nums(operands).map(TextMatrix),
        b"T*" => Some(NextLine),
        b"Tj" => last_is(is_string).then_some(ShowText),
        b"TJ" => last_is(|v| matches!(v, Value::Array(_))).then_some(ShowTextArray),
        b"'" => last_is(is_string).then_some(NextLineShowText),
        b"\"" => match operands {
            [.., aw, ac, s] if is_string(&s.value) => match (aw.as_f64(), ac.as_f64()) {
                (Some(word_spacing), Some(char_spacing)) => Some(NextLineShowTextSpacing {
                    word_spacing,
                    char_spacing,
                }),
                _ => None,
            },
            _ => None,
        },
        b"d0" => nums(operands).map(Type3Width),
        b"d1" => nums(operands).map(Type3WidthBBox),
        _ => return None,
    })
}

/// Colour, shading, XObject, marked-content and compatibility operators; `None` for any
/// other operator.
fn colour_and_objects(operator: &[u8], operands: &[Operand]) -> Option<Option<OpKind>> {
    use OpKind::*;
    Some(match operator {
        b"CS" => last_name(operands).map(StrokeColorSpace),
        b"cs" => last_name(operands).map(FillColorSpace),
        b"SC" => components(operands, false).map(|(c, _)| StrokeColor(c)),
        b"sc" => components(operands, false).map(|(c, _)| FillColor(c)),
        b"SCN" => components(operands, true).map(|(components, pattern)| StrokeColorN {
            components,
            pattern,
        }),
        b"scn" => components(operands, true).map(|(components, pattern)| FillColorN {
            components,
            pattern,
        }),
        b"G" => num(operands).map(StrokeGray),
        b"g" => num(operands).map(FillGray),
        b"RG" => nums(operands).map(StrokeRgb),
        b"rg" => nums(operands).map(FillRgb),
        b"K" => nums(operands).map(StrokeCmyk),
        b"k" => nums(operands).map(FillCmyk),
        b"sh" => last_name(operands).map(Shading),
        b"Do" => last_name(operands).map(XObject),
        b"MP" => last_name(operands).map(MarkedPoint),
        b"BMC" => last_name(operands).map(BeginMarked),
        b"DP" | b"BDC" => match operands {
            [.., tag, props] if matches!(props.value, Value::Name(_) | Value::Dict(_)) => {
                tag.as_name().map(|t| {
                    if operator == b"DP" {
                        MarkedPointProps(t.to_vec())
                    } else {
                        BeginMarkedProps(t.to_vec())
                    }
                })
            }
            _ => None,
        },
        b"EMC" => Some(EndMarked),
        b"BX" => Some(BeginCompat),
        b"EX" => Some(EndCompat),
        _ => return None,
    })
}
