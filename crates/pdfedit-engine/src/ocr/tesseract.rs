//! Running Tesseract (Debian `tesseract-ocr`) on a grey image and reading its TSV words.
//!
//! The image goes to `tesseract stdin stdout … tsv` as a binary PGM on standard input;
//! nothing touches the disk. `OMP_THREAD_LIMIT=1` keeps one engine process on one core.
//! The run has its own deadline: past it the child is killed and the page reads as
//! [`RunError::Timeout`].

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The program (overridable for tests with `PDFEDIT_TESSERACT`).
fn program() -> String {
    std::env::var("PDFEDIT_TESSERACT").unwrap_or_else(|_| "tesseract".into())
}

/// One word of Tesseract's TSV, in the pixels of the image it read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TsvWord {
    pub text: String,
    pub left: u32,
    pub top: u32,
    pub width: u32,
    pub height: u32,
    /// 0…100.
    pub conf: f32,
    pub block: u32,
    pub par: u32,
    pub line: u32,
}

/// Why a run gave no words.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RunError {
    /// The run passed its deadline and was killed.
    Timeout,
    /// The program is missing or failed.
    Failed(String),
}

/// The languages Tesseract has installed (`tesseract --list-langs`), read once.
pub(crate) fn installed_languages() -> &'static [String] {
    static LANGS: OnceLock<Vec<String>> = OnceLock::new();
    LANGS.get_or_init(|| {
        let Ok(out) = Command::new(program())
            .arg("--list-langs")
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
        else {
            return Vec::new();
        };
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .skip(1)
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty() && l != "osd")
            .collect()
    })
}

/// Reads `gray` (`width`×`height`, one byte a pixel, rows top to bottom) with page
/// segmentation mode `psm`, killed at `deadline`.
pub(crate) fn run(
    gray: &[u8],
    width: u32,
    height: u32,
    languages: &str,
    psm: u8,
    deadline: Instant,
) -> Result<Vec<TsvWord>, RunError> {
    let mut pgm = format!("P5\n{width} {height}\n255\n").into_bytes();
    pgm.extend_from_slice(gray);
    let mut child = Command::new(program())
        .args([
            "stdin",
            "stdout",
            "-l",
            languages,
            "--psm",
            &psm.to_string(),
        ])
        .args(["--dpi", "300", "tsv"])
        .env("OMP_THREAD_LIMIT", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| RunError::Failed(format!("starting tesseract: {e}")))?;
    let mut stdin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            // A child killed at its deadline closes the pipe: the error is expected then.
            let _ = s.write_all(&pgm);
        }
    });
    let mut stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(s) = stdout.as_mut() {
            let _ = s.read_to_end(&mut out);
        }
        out
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = writer.join();
                let _ = reader.join();
                return Err(RunError::Timeout);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(RunError::Failed(e.to_string())),
        }
    };
    let _ = writer.join();
    let out = reader
        .join()
        .map_err(|_| RunError::Failed("reading tesseract's output".into()))?;
    if !status.success() {
        return Err(RunError::Failed(format!("tesseract exited with {status}")));
    }
    Ok(parse_tsv(&String::from_utf8_lossy(&out)))
}

/// The words (level 5 rows with text) of Tesseract's TSV.
pub(crate) fn parse_tsv(tsv: &str) -> Vec<TsvWord> {
    tsv.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() < 12 || f[0] != "5" {
                return None;
            }
            let text = f[11].trim();
            if text.is_empty() {
                return None;
            }
            let n = |i: usize| f[i].parse::<u32>().ok();
            Some(TsvWord {
                text: text.to_string(),
                block: n(2)?,
                par: n(3)?,
                line: n(4)?,
                left: n(6)?,
                top: n(7)?,
                width: n(8)?,
                height: n(9)?,
                conf: f[10].parse::<f32>().ok()?.max(0.0),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_words_of_tsv() {
        let tsv = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n\
                   4\t1\t1\t1\t1\t0\t882\t131\t776\t86\t-1\t\n\
                   5\t1\t1\t1\t1\t1\t882\t132\t154\t70\t93.01\tThe\n\
                   5\t1\t1\t1\t1\t2\t1061\t131\t597\t86\t91.2\tLinnSequencer\n\
                   5\t1\t1\t1\t2\t1\t10\t10\t5\t5\t0\t \n";
        let words = parse_tsv(tsv);
        assert_eq!(words.len(), 2);
        assert_eq!(words[1].text, "LinnSequencer");
        assert_eq!((words[1].left, words[1].width), (1061, 597));
        assert!((words[0].conf - 93.01).abs() < 1e-3);
    }
}
