//! The byte format of a `DICT` chunk: a run of external ids, checksummed.
//!
//! ```text
//! stamped (this build): magic "DCH2" u32 | count u32 | first_dense u64 | store_id u64
//!                       | commit u64 | crc32c u32 (header bytes 0..32, then payload) | 0 u32
//! from before stamps:   magic "DCHK" u32 | count u32 | first_dense u64
//!                       | crc32c u32 (header bytes 0..16, then payload) | 0 u32 x3
//! payload:              count x u64 external ids (dense ids first_dense ..)
//! ```

use crate::stamp::Stamp;

const MAGIC_LEGACY: u32 = 0x4B48_4344; // "DCHK"
const MAGIC: u32 = 0x3248_4344; // "DCH2"
const HEADER_LEGACY: usize = 32;
const HEADER: usize = 40;
// The layouts above, field by field; chunks stay 8-byte aligned.
const _: () = assert!(HEADER == 4 + 4 + 8 + 8 + 8 + 4 + 4 && HEADER.is_multiple_of(8));
const _: () = assert!(HEADER_LEGACY == 4 + 4 + 8 + 4 + 4 * 3 && HEADER_LEGACY.is_multiple_of(8));
const _: () = assert!(u32::from_le_bytes(*b"DCH2") == MAGIC);
const _: () = assert!(u32::from_le_bytes(*b"DCHK") == MAGIC_LEGACY);

/// A chunk read back from the file.
pub(crate) struct Parsed<'a> {
    /// The dense id of the first entry.
    pub first: u64,
    /// The external ids.
    pub payload: &'a [u8],
    /// Its stamp; `None` for a chunk from before stamps.
    pub stamp: Option<Stamp>,
    /// Bytes of the chunk, header included.
    pub len: usize,
}

/// Encodes entries `ids` (dense ids from `first`) as a stamped chunk.
pub(crate) fn encode(first: u64, ids: &[u64], stamp: Stamp) -> Vec<u8> {
    let payload: &[u8] = bytemuck::cast_slice(ids);
    let mut buf = Vec::with_capacity(HEADER + payload.len());
    buf.extend_from_slice(&MAGIC.to_le_bytes());
    buf.extend_from_slice(&(ids.len() as u32).to_le_bytes());
    buf.extend_from_slice(&first.to_le_bytes());
    buf.extend_from_slice(&stamp.store_id.to_le_bytes());
    buf.extend_from_slice(&stamp.seq.to_le_bytes());
    let crc = crc32c::crc32c_append(crc32c::crc32c(&buf), payload);
    buf.extend_from_slice(&crc.to_le_bytes());
    buf.extend_from_slice(&[0u8; 4]);
    buf.extend_from_slice(payload);
    debug_assert_eq!(buf.len(), HEADER + payload.len());
    buf
}

/// Parses the chunk at the start of `b`: what is wrong with it if it does not verify.
pub(crate) fn parse(b: &[u8]) -> Result<Parsed<'_>, &'static str> {
    let rd32 = |o: usize| {
        b.get(o..o + 4)
            .map(|x| u32::from_le_bytes(x.try_into().unwrap()))
    };
    let rd64 = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    let (header, covered, crc_at, stamped) = match rd32(0).ok_or("truncated chunk")? {
        MAGIC => (HEADER, 32, 32, true),
        MAGIC_LEGACY => (HEADER_LEGACY, 16, 16, false),
        _ => return Err("not a dictionary chunk"),
    };
    let h = b.get(..header).ok_or("truncated chunk")?;
    if h[crc_at + 4..].iter().any(|&x| x != 0) {
        return Err("reserved header bytes are not zero");
    }
    let count = rd32(4).expect("within the header") as usize;
    let payload = b
        .get(header..header + count * 8)
        .ok_or("chunk runs past the committed end")?;
    let crc = rd32(crc_at).expect("within the header");
    if crc32c::crc32c_append(crc32c::crc32c(&h[..covered]), payload) != crc {
        return Err("checksum mismatch");
    }
    let stamp = stamped.then(|| Stamp {
        store_id: rd64(16),
        seq: rd64(24),
    });
    Ok(Parsed {
        first: rd64(8),
        payload,
        stamp,
        len: header + count * 8,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_round_trips_and_any_flip_is_caught() {
        let b = encode(7, &[3, 1 << 40, 9], Stamp::new(0xabc, 12));
        let p = parse(&b).unwrap();
        assert_eq!(
            (p.first, p.len, p.stamp),
            (7, b.len(), Some(Stamp::new(0xabc, 12)))
        );
        assert_eq!(p.payload, bytemuck::cast_slice::<u64, u8>(&[3, 1 << 40, 9]));
        for i in 0..b.len() {
            let mut c = b.clone();
            c[i] ^= 0x10;
            assert!(parse(&c).is_err(), "flip at byte {i}");
        }
    }
}
