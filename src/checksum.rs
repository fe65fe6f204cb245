//! crc32c of large buffers on every core: the same value as `crc32c::crc32c`, computed
//! over chunks in parallel and combined. Files checked whole on each open (a run's
//! versions, hundreds of MB at Kron20) would otherwise cost one core's pass per read.

use rayon::prelude::*;

/// Chunk each thread checks at a time: large enough that combining costs nothing beside it.
const CHUNK: usize = 4 << 20;

/// The crc32c of `b`.
pub(crate) fn crc32c(b: &[u8]) -> u32 {
    if b.len() <= CHUNK {
        return crc32c::crc32c(b);
    }
    b.par_chunks(CHUNK)
        .map(|c| (crc32c::crc32c(c), c.len()))
        .collect::<Vec<_>>()
        .into_iter()
        .fold(0, |acc, (crc, len)| crc32c::crc32c_combine(acc, crc, len))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_parallel_crc_is_the_serial_one() {
        let b: Vec<u8> = (0..(9 << 20) + 12_345u32)
            .map(|i| (i * 31 % 251) as u8)
            .collect();
        for len in [0, 1, 4 << 20, (4 << 20) + 1, b.len()] {
            assert_eq!(
                super::crc32c(&b[..len]),
                crc32c::crc32c(&b[..len]),
                "{len} bytes"
            );
        }
    }
}
