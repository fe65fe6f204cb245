//! Writing edge lists as text (`u v` lines) or 8-byte binary records.

use crate::error::{Error, Result};
use rayon::prelude::*;
use std::fs::File;
use std::io::Write;
use std::path::Path;

/// Edges formatted per parallel task.
const TASK_EDGES: usize = 1 << 16;
/// Edges formatted between writes: bounds the memory held by formatted text to ~20 MiB.
const GROUP_EDGES: usize = 1 << 20;

/// Writes `edges` as a text edge list, one `src dst` line per edge.
///
/// Formatting runs in parallel into large buffers that are written in order, so the file is
/// the same whatever the thread count and costs one `write` per megabyte or so. Writing one
/// group overlaps with formatting the next, since both take about as long.
pub fn write_el(path: &Path, edges: &[(u32, u32)]) -> Result<()> {
    let mut file = File::create(path).map_err(|e| Error::io("create", path, e))?;
    write_el_to(&mut file, path, edges)
}

/// [`write_el`] into an open file (`path` names it in errors).
pub fn write_el_to(file: &mut File, path: &Path, edges: &[(u32, u32)]) -> Result<()> {
    let mut pending: Vec<Vec<u8>> = Vec::new();
    for group in edges.chunks(GROUP_EDGES) {
        let (written, next) = rayon::join(
            || write_texts(file, path, &pending),
            || group.par_chunks(TASK_EDGES).map(format_edges).collect(),
        );
        written?;
        pending = next;
    }
    write_texts(file, path, &pending)
}

fn write_texts(file: &mut File, path: &Path, texts: &[Vec<u8>]) -> Result<()> {
    for text in texts {
        file.write_all(text)
            .map_err(|e| Error::io("write", path, e))?;
    }
    Ok(())
}

/// Writes `edges` as 8-byte records: little-endian u32 src then u32 dst.
pub fn write_bin(path: &Path, edges: &[(u32, u32)]) -> Result<()> {
    let mut file = File::create(path).map_err(|e| Error::io("create", path, e))?;
    write_bin_to(&mut file, path, edges)
}

/// [`write_bin`] into an open file (`path` names it in errors).
pub fn write_bin_to(file: &mut File, path: &Path, edges: &[(u32, u32)]) -> Result<()> {
    let mut buf = Vec::with_capacity(8 * GROUP_EDGES.min(edges.len()));
    for group in edges.chunks(GROUP_EDGES) {
        buf.clear();
        for &(s, d) in group {
            buf.extend_from_slice(&s.to_le_bytes());
            buf.extend_from_slice(&d.to_le_bytes());
        }
        file.write_all(&buf)
            .map_err(|e| Error::io("write", path, e))?;
    }
    Ok(())
}

fn format_edges(edges: &[(u32, u32)]) -> Vec<u8> {
    // At most 10 digits per id, a space and a newline.
    let mut out = Vec::with_capacity(edges.len() * 22);
    for &(s, d) in edges {
        push_u32(&mut out, s);
        out.push(b' ');
        push_u32(&mut out, d);
        out.push(b'\n');
    }
    out
}

/// Two decimal digits per division: the pairs "00".."99" back to back.
const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Appends the decimal form of `v` (itoa-style: digits filled from the right).
fn push_u32(out: &mut Vec<u8>, mut v: u32) {
    let mut tmp = [0u8; 10];
    let mut i = tmp.len();
    while v >= 100 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        tmp[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if v >= 10 {
        let pair = v as usize * 2;
        i -= 2;
        tmp[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        i -= 1;
        tmp[i] = b'0' + v as u8;
    }
    out.extend_from_slice(&tmp[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_match_std_formatting() {
        let mut out = Vec::new();
        let samples = [
            0,
            1,
            9,
            10,
            99,
            100,
            101,
            999,
            1000,
            65_535,
            1_000_000,
            u32::MAX - 1,
            u32::MAX,
        ];
        for v in samples
            .into_iter()
            .chain((0..5000u32).map(|i| i.wrapping_mul(859_963)))
        {
            out.clear();
            push_u32(&mut out, v);
            assert_eq!(out, v.to_string().as_bytes());
        }
    }

    #[test]
    fn el_text_is_exact() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.el");
        write_el(&path, &[(1, 2), (30, 4_000_000_000)]).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"1 2\n30 4000000000\n");
    }

    #[test]
    fn large_writes_cross_group_boundaries() {
        let edges: Vec<(u32, u32)> = (0..(GROUP_EDGES as u32 + 12_345))
            .map(|i| (i, !i))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.el");
        write_el(&path, &edges).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), edges.len());
        assert_eq!(text.lines().last().unwrap(), {
            let (s, d) = edges[edges.len() - 1];
            format!("{s} {d}")
        });
        let bin = dir.path().join("big.bin");
        write_bin(&bin, &edges).unwrap();
        let bytes = std::fs::read(&bin).unwrap();
        assert_eq!(bytes.len(), edges.len() * 8);
        assert_eq!(&bytes[8 * 70_000..8 * 70_000 + 4], &70_000u32.to_le_bytes());
    }

    #[test]
    fn unwritable_path_is_an_io_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no/such/dir/x.el");
        assert!(matches!(
            write_el(&path, &[(1, 2)]),
            Err(Error::Io { op: "create", .. })
        ));
        assert!(matches!(
            write_bin(&path, &[(1, 2)]),
            Err(Error::Io { op: "create", .. })
        ));
    }
}
