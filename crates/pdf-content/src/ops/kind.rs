//! The typed operation enum and its operators.

use std::ops::Range;

/// What an operation does, with its operands checked and typed. Operators are named
/// after their meaning; the PDF operator is in each variant's doc and [`OpKind::operator`].
#[derive(Debug, Clone, PartialEq)]
pub enum OpKind {
    /// `w`
    LineWidth(f64),
    /// `J`
    LineCap(i64),
    /// `j`
    LineJoin(i64),
    /// `M`
    MiterLimit(f64),
    /// `d`
    Dash {
        /// Dash array.
        array: Vec<f64>,
        /// Dash phase.
        phase: f64,
    },
    /// `ri`
    RenderingIntent(Vec<u8>),
    /// `i`
    Flatness(f64),
    /// `gs`
    ExtGState(Vec<u8>),
    /// `q`
    Save,
    /// `Q`
    Restore,
    /// `cm`
    Transform([f64; 6]),
    /// `m`
    MoveTo([f64; 2]),
    /// `l`
    LineTo([f64; 2]),
    /// `c`
    CurveTo([f64; 6]),
    /// `v`
    CurveToV([f64; 4]),
    /// `y`
    CurveToY([f64; 4]),
    /// `h`
    ClosePath,
    /// `re`
    Rectangle([f64; 4]),
    /// `S`
    Stroke,
    /// `s`
    CloseStroke,
    /// `f`
    Fill,
    /// `F` (obsolete spelling of `f`)
    FillCompat,
    /// `f*`
    FillEvenOdd,
    /// `B`
    FillStroke,
    /// `B*`
    FillStrokeEvenOdd,
    /// `b`
    CloseFillStroke,
    /// `b*`
    CloseFillStrokeEvenOdd,
    /// `n`
    EndPath,
    /// `W`
    Clip,
    /// `W*`
    ClipEvenOdd,
    /// `BT`
    BeginText,
    /// `ET`
    EndText,
    /// `Tc`
    CharSpacing(f64),
    /// `Tw`
    WordSpacing(f64),
    /// `Tz` (percent)
    HorizontalScaling(f64),
    /// `TL`
    Leading(f64),
    /// `Tf`
    Font {
        /// Resource name in /Font.
        name: Vec<u8>,
        /// Font size.
        size: f64,
    },
    /// `Tr`
    RenderMode(i64),
    /// `Ts`
    Rise(f64),
    /// `Td`
    MoveText([f64; 2]),
    /// `TD`
    MoveTextSetLeading([f64; 2]),
    /// `Tm`
    TextMatrix([f64; 6]),
    /// `T*`
    NextLine,
    /// `Tj`; the string is the last operand.
    ShowText,
    /// `TJ`; the array is the last operand.
    ShowTextArray,
    /// `'`; the string is the last operand.
    NextLineShowText,
    /// `"`; the string is the last operand.
    NextLineShowTextSpacing {
        /// Word spacing set before showing.
        word_spacing: f64,
        /// Character spacing set before showing.
        char_spacing: f64,
    },
    /// `d0`
    Type3Width([f64; 2]),
    /// `d1`
    Type3WidthBBox([f64; 6]),
    /// `CS`
    StrokeColorSpace(Vec<u8>),
    /// `cs`
    FillColorSpace(Vec<u8>),
    /// `SC`
    StrokeColor(Vec<f64>),
    /// `SCN`
    StrokeColorN {
        /// Colour components.
        components: Vec<f64>,
        /// Pattern name, for Pattern colour spaces.
        pattern: Option<Vec<u8>>,
    },
    /// `sc`
    FillColor(Vec<f64>),
    /// `scn`
    FillColorN {
        /// Colour components.
        components: Vec<f64>,
        /// Pattern name, for Pattern colour spaces.
        pattern: Option<Vec<u8>>,
    },
    /// `G`
    StrokeGray(f64),
    /// `g`
    FillGray(f64),
    /// `RG`
    StrokeRgb([f64; 3]),
    /// `rg`
    FillRgb([f64; 3]),
    /// `K`
    StrokeCmyk([f64; 4]),
    /// `k`
    FillCmyk([f64; 4]),
    /// `sh`
    Shading(Vec<u8>),
    /// `BI … ID … EI`; the image dictionary is the only operand.
    InlineImage {
        /// The image data bytes in the stream.
        data: Range<usize>,
    },
    /// `Do`
    XObject(Vec<u8>),
    /// `MP`
    MarkedPoint(Vec<u8>),
    /// `DP`; the property list (name or dictionary) is the last operand.
    MarkedPointProps(Vec<u8>),
    /// `BMC`
    BeginMarked(Vec<u8>),
    /// `BDC`; the property list (name or dictionary) is the last operand.
    BeginMarkedProps(Vec<u8>),
    /// `EMC`
    EndMarked,
    /// `BX`
    BeginCompat,
    /// `EX`
    EndCompat,
    /// An operator this crate does not know (kept byte-exact; ignored by the
    /// interpreter, as §7.8.2 asks inside `BX`/`EX` and viewers do outside).
    Other(Vec<u8>),
    /// A known operator whose operands are missing or of the wrong type. Viewers skip
    /// such an op; so does the interpreter.
    Malformed(Vec<u8>),
    /// Operands at the end of the stream with no operator after them.
    Trailing,
}

impl OpKind {
    /// The PDF operator for this kind (`b""` for [`OpKind::Trailing`]).
    pub fn operator(&self) -> &[u8] {
        use OpKind::*;
        match self {
            LineWidth(_) => b"w",
            LineCap(_) => b"J",
            LineJoin(_) => b"j",
            MiterLimit(_) => b"M",
            Dash { .. } => b"d",
            RenderingIntent(_) => b"ri",
            Flatness(_) => b"i",
            ExtGState(_) => b"gs",
            Save => b"q",
            Restore => b"Q",
            Transform(_) => b"cm",
            MoveTo(_) => b"m",
            LineTo(_) => b"l",
            CurveTo(_) => b"c",
            CurveToV(_) => b"v",
            CurveToY(_) => b"y",
            ClosePath => b"h",
            Rectangle(_) => b"re",
            Stroke => b"S",
            CloseStroke => b"s",
            Fill => b"f",
            FillCompat => b"F",
            FillEvenOdd => b"f*",
            FillStroke => b"B",
            FillStrokeEvenOdd => b"B*",
            CloseFillStroke => b"b",
            CloseFillStrokeEvenOdd => b"b*",
            EndPath => b"n",
            Clip => b"W",
            ClipEvenOdd => b"W*",
            BeginText => b"BT",
            EndText => b"ET",
            CharSpacing(_) => b"Tc",
            WordSpacing(_) => b"Tw",
            HorizontalScaling(_) => b"Tz",
            Leading(_) => b"TL",
            Font { .. } => b"Tf",
            RenderMode(_) => b"Tr",
            Rise(_) => b"Ts",
            MoveText(_) => b"Td",
            MoveTextSetLeading(_) => b"TD",
            TextMatrix(_) => b"Tm",
            NextLine => b"T*",
            ShowText => b"Tj",
            ShowTextArray => b"TJ",
            NextLineShowText => b"'",
            NextLineShowTextSpacing { .. } => b"\"",
            Type3Width(_) => b"d0",
            Type3WidthBBox(_) => b"d1",
            StrokeColorSpace(_) => b"CS",
            FillColorSpace(_) => b"cs",
            StrokeColor(_) => b"SC",
            StrokeColorN { .. } => b"SCN",
            FillColor(_) => b"sc",
            FillColorN { .. } => b"scn",
            StrokeGray(_) => b"G",
            FillGray(_) => b"g",
            StrokeRgb(_) => b"RG",
            FillRgb(_) => b"rg",
            StrokeCmyk(_) => b"K",
            FillCmyk(_) => b"k",
            Shading(_) => b"sh",
            InlineImage { .. } => b"BI",
            XObject(_) => b"Do",
            MarkedPoint(_) => b"MP",
            MarkedPointProps(_) => b"DP",
            BeginMarked(_) => b"BMC",
            BeginMarkedProps(_) => b"BDC",
            EndMarked => b"EMC",
            BeginCompat => b"BX",
            EndCompat => b"EX",
            Other(op) | Malformed(op) => op,
            Trailing => b"",
        }
    }
}
