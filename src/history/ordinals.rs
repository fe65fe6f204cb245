//! A run direction's `born` and `died` columns of commit ordinals ([`super::versions`]),
//! stored as narrow as the run's commits allow: one byte per entry while a run's range
//! holds fewer than 256 commits (a bulk load in batches of 65,536 edges at Kron20 holds
//! 257 with the rounds after it), two below 65,536, four beyond. The columns are as long
//! as the run's lists, so their width is most of a versions file's size.

use crate::run::Sec;

/// One direction's born and died columns, both of width `T`.
pub(crate) struct BornDied<T> {
    /// Per add, in the run's order: the ordinal of the commit that added it last.
    pub born: Sec<T>,
    /// Per tombstone, in the run's order: the ordinal of the commit that removed it last.
    pub died: Sec<T>,
}

/// [`BornDied`] at the width of one versions file.
pub(crate) enum Ordinals {
    U8(BornDied<u8>),
    U16(BornDied<u16>),
    U32(BornDied<u32>),
}

impl Default for Ordinals {
    fn default() -> Self {
        Ordinals::U32(BornDied {
            born: Sec::default(),
            died: Sec::default(),
        })
    }
}

/// The width in bytes of the ordinals of a run whose range holds `commits` commits
/// (ordinals run from 0, before all of them, to `commits`).
pub(crate) fn width(commits: usize) -> usize {
    match commits {
        0..=0xff => 1,
        0x100..=0xffff => 2,
        _ => 4,
    }
}

/// Applies a generic function to the columns of an [`Ordinals`] at their width.
macro_rules! with_ordinals {
    ($o:expr, |$c:ident| $body:expr) => {
        match $o {
            $crate::history::ordinals::Ordinals::U8($c) => $body,
            $crate::history::ordinals::Ordinals::U16($c) => $body,
            $crate::history::ordinals::Ordinals::U32($c) => $body,
        }
    };
}
pub(crate) use with_ordinals;

impl Ordinals {
    /// The columns `born` and `died` (every value at most `commits`) at [`width`]`(commits)`.
    pub(crate) fn narrow(born: Vec<u32>, died: Vec<u32>, commits: usize) -> Ordinals {
        debug_assert!(
            born.iter().chain(&died).all(|&o| o as usize <= commits),
            "an ordinal past the run's commits"
        );
        // The casts keep every value: each is at most `commits`, which fits the width.
        match width(commits) {
            1 => Ordinals::U8(BornDied {
                born: Sec::owned(born.iter().map(|&o| o as u8).collect()),
                died: Sec::owned(died.iter().map(|&o| o as u8).collect()),
            }),
            2 => Ordinals::U16(BornDied {
                born: Sec::owned(born.iter().map(|&o| o as u16).collect()),
                died: Sec::owned(died.iter().map(|&o| o as u16).collect()),
            }),
            _ => Ordinals::U32(BornDied {
                born: Sec::owned(born),
                died: Sec::owned(died),
            }),
        }
    }

    /// Bytes per ordinal.
    pub(crate) fn width(&self) -> usize {
        match self {
            Ordinals::U8(_) => 1,
            Ordinals::U16(_) => 2,
            Ordinals::U32(_) => 4,
        }
    }

    /// The lengths of the born and died columns.
    pub(crate) fn lens(&self) -> (usize, usize) {
        with_ordinals!(self, |c| (c.born.get().len(), c.died.get().len()))
    }

    /// Both columns widened to `u32`, to compare two derivations.
    pub(crate) fn widened(&self) -> (Vec<u32>, Vec<u32>) {
        with_ordinals!(self, |c| (widen(c.born.get()), widen(c.died.get())))
    }

    /// The columns of `width` bytes per ordinal mapped from `m`: `born` ordinals at byte
    /// `at.0`, `died` at `at.1`.
    pub(crate) fn mapped(
        m: &crate::medium::Mapped,
        width: usize,
        at: (usize, usize),
        (born, died): (usize, usize),
    ) -> Ordinals {
        match width {
            1 => Ordinals::U8(BornDied {
                born: Sec::mapped(m.clone(), at.0, born),
                died: Sec::mapped(m.clone(), at.1, died),
            }),
            2 => Ordinals::U16(BornDied {
                born: Sec::mapped(m.clone(), at.0, born),
                died: Sec::mapped(m.clone(), at.1, died),
            }),
            _ => Ordinals::U32(BornDied {
                born: Sec::mapped(m.clone(), at.0, born),
                died: Sec::mapped(m.clone(), at.1, died),
            }),
        }
    }
}

fn widen<T: Copy + Into<u32>>(s: &[T]) -> Vec<u32> {
    s.iter().map(|&o| o.into()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_take_the_narrowest_width_that_holds_the_commits() {
        for (commits, w) in [(0, 1), (255, 1), (256, 2), (65_535, 2), (65_536, 4)] {
            let born = vec![0, commits as u32, (commits / 2) as u32];
            let died = vec![commits as u32];
            let o = Ordinals::narrow(born.clone(), died.clone(), commits);
            assert_eq!(o.width(), w, "{commits} commits");
            assert_eq!(o.widened(), (born, died), "{commits} commits");
            assert_eq!(o.lens(), (3, 1));
        }
    }
}
