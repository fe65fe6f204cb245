//! crc32c of large buffers on every core: the same value as `crc32c::crc32c`, computed
//! over chunks in parallel and combined. Files checked whole on each open (a run's
//! versions, hundreds of MB at Kron20) would otherwise cost one core's pass per read.

use rayon::prelude::*;

/// The smallest chunk a thread checks at a time. Each chunk past the first costs a combine
/// (about 70 us: 29 of them were 2 ms of a 119 MB file's 13 ms), so a buffer is cut into a
/// few chunks per thread, no more.
const CHUNK: usize = 4 << 20;

/// The crc32c of `b`.
pub(crate) fn crc32c(b: &[u8]) -> u32 {
    if b.len() <= CHUNK {
        return crc32c::crc32c(b);
    }
    let chunk = b
        .len()
        .div_ceil(rayon::current_num_threads() * 4)
        .max(CHUNK);
    b.par_chunks(chunk)
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
