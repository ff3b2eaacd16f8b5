//! Reading order: blocks in geometric order, not content-stream order.
//!
//! Producers write text in any order (a footer first, table columns one after the other),
//! so the blocks found by `layout` are ordered by a recursive XY-cut over their boxes:
//!
//! 1. Columns first: when a vertical strip of empty page (a gutter) separates the blocks of
//!    a region, the columns are read left to right (right to left for vertical CJK
//!    writing), each recursively.
//! 2. Otherwise bands: horizontal strips of empty page split the region into bands, read
//!    top to bottom, each recursively. Consecutive bands that share a gutter are merged
//!    first: in a two-column article, a paragraph break that happens to line up in both
//!    columns must not make us read the columns' tops before their bottoms.
//! 3. A region that no cut splits is read by its blocks' top edges, then left edges.
//!
//! Lines keep their order inside a block (layout builds blocks top to bottom), and lines
//! and blocks are then numbered in the new order.

use std::collections::HashMap;

use super::page_text::Span;

/// Narrowest empty vertical strip, in points, that separates columns.
const MIN_GUTTER: f32 = 4.0;

/// One block's box and whether it is vertical writing.
#[derive(Debug, Clone, Copy)]
struct Cell {
    block: u32,
    bbox: [f32; 4],
    vertical: bool,
}

/// Reorders `spans` (one page, one source) into reading order and renumbers their lines
/// and blocks from `first_line` and `first_block`. Returns the next free line and block.
pub(crate) fn reading_order(spans: &mut [Span], first_line: u32, first_block: u32) -> (u32, u32) {
    let mut cells: Vec<Cell> = Vec::new();
    let mut index: HashMap<u32, usize> = HashMap::new();
    for s in spans.iter() {
        match index.get(&s.block) {
            Some(&i) => {
                let b = &mut cells[i].bbox;
                *b = [
                    b[0].min(s.bbox[0]),
                    b[1].min(s.bbox[1]),
                    b[2].max(s.bbox[2]),
                    b[3].max(s.bbox[3]),
                ];
            }
            None => {
                index.insert(s.block, cells.len());
                cells.push(Cell {
                    block: s.block,
                    bbox: s.bbox,
                    vertical: s.rotation == 270.0,
                });
            }
        }
    }
    let mut order = Vec::with_capacity(cells.len());
    xy_cut(cells, &mut order);
    let rank: HashMap<u32, usize> = order.iter().enumerate().map(|(i, &b)| (b, i)).collect();
    // Stable: spans of one block keep their order, so lines stay together and in order.
    spans.sort_by_key(|s| rank[&s.block]);
    let (mut line, mut block) = (first_line, first_block);
    let mut prev: Option<(u32, u32)> = None;
    for s in spans.iter_mut() {
        if let Some((old_line, old_block)) = prev {
            if s.block != old_block {
                block += 1;
                line += 1;
            } else if s.line != old_line {
                line += 1;
            }
        }
        prev = Some((s.line, s.block));
        s.line = line;
        s.block = block;
    }
    if prev.is_some() {
        (line + 1, block + 1)
    } else {
        (first_line, first_block)
    }
}

fn xy_cut(cells: Vec<Cell>, out: &mut Vec<u32>) {
    if cells.len() <= 1 {
        out.extend(cells.iter().map(|c| c.block));
        return;
    }
    let columns = split(&cells, 0, MIN_GUTTER);
    if columns.len() > 1 {
        let vertical = cells.iter().filter(|c| c.vertical).count() * 2 > cells.len();
        let columns: Vec<Vec<Cell>> = if vertical {
            columns.into_iter().rev().collect()
        } else {
            columns
        };
        for c in columns {
            xy_cut(c, out);
        }
        return;
    }
    let bands = merge_bands(split(&cells, 1, 0.0));
    if bands.len() > 1 {
        for b in bands {
            xy_cut(b, out);
        }
        return;
    }
    let mut cells = cells;
    cells.sort_by(|a, b| {
        let key = |c: &Cell| {
            if c.vertical {
                (c.bbox[1], -c.bbox[2])
            } else {
                (c.bbox[1], c.bbox[0])
            }
        };
        key(a)
            .partial_cmp(&key(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    out.extend(cells.iter().map(|c| c.block));
}

/// Splits cells at empty strips wider than `min_gap` along `axis` (0 = x: columns,
/// 1 = y: bands), in increasing coordinate order.
fn split(cells: &[Cell], axis: usize, min_gap: f32) -> Vec<Vec<Cell>> {
    let mut sorted = cells.to_vec();
    sorted.sort_by(|a, b| {
        a.bbox[axis]
            .partial_cmp(&b.bbox[axis])
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut groups: Vec<Vec<Cell>> = Vec::new();
    let mut reach = f32::MIN;
    for c in sorted {
        let (lo, hi) = (c.bbox[axis], c.bbox[axis + 2]);
        match groups.last_mut() {
            Some(g) if lo - reach <= min_gap => g.push(c),
            _ => groups.push(vec![c]),
        }
        reach = reach.max(hi);
    }
    groups
}

/// The gutters (empty vertical strips) of a band, as x intervals.
fn gutters(cells: &[Cell]) -> Vec<(f32, f32)> {
    let columns = split(cells, 0, MIN_GUTTER);
    columns
        .windows(2)
        .map(|w| {
            let left = w[0].iter().map(|c| c.bbox[2]).fold(f32::MIN, f32::max);
            let right = w[1].iter().map(|c| c.bbox[0]).fold(f32::MAX, f32::min);
            (left, right)
        })
        .collect()
}

/// Merges consecutive bands that have a gutter in common (see the module comment).
fn merge_bands(bands: Vec<Vec<Cell>>) -> Vec<Vec<Cell>> {
    let mut out: Vec<Vec<Cell>> = Vec::new();
    for band in bands {
        if let Some(last) = out.last_mut() {
            let (a, b) = (gutters(last), gutters(&band));
            let shared = a
                .iter()
                .any(|x| b.iter().any(|y| x.1.min(y.1) - x.0.max(y.0) >= MIN_GUTTER));
            if shared {
                last.extend(band);
                continue;
            }
        }
        out.push(band);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(block: u32, bbox: [f32; 4]) -> Cell {
        Cell {
            block,
            bbox,
            vertical: false,
        }
    }

    #[test]
    fn two_columns_under_a_title_read_column_by_column() {
        let cells = vec![
            cell(0, [50.0, 100.0, 280.0, 300.0]),  // left top
            cell(1, [320.0, 100.0, 550.0, 300.0]), // right top
            cell(2, [50.0, 310.0, 280.0, 700.0]),  // left bottom
            cell(3, [320.0, 310.0, 550.0, 700.0]), // right bottom
            cell(4, [50.0, 40.0, 550.0, 60.0]),    // title
            cell(5, [50.0, 740.0, 550.0, 760.0]),  // footer
        ];
        let mut out = Vec::new();
        xy_cut(cells, &mut out);
        assert_eq!(out, vec![4, 0, 2, 1, 3, 5]);
    }

    #[test]
    fn footer_written_first_is_read_last() {
        let cells = vec![
            cell(0, [50.0, 700.0, 300.0, 720.0]),
            cell(1, [50.0, 50.0, 300.0, 70.0]),
        ];
        let mut out = Vec::new();
        xy_cut(cells, &mut out);
        assert_eq!(out, vec![1, 0]);
    }
}
