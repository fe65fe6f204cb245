//! A run direction's columns of commit ordinals ([`super::versions`]): `born` and `died`,
//! and where each spell of its edges' earlier changes began and ended. They are stored as
//! narrow as the run's commits allow: one byte per ordinal while a run's range holds fewer
//! than 256 commits (a bulk load in batches of 65,536 edges at Kron20 holds 257 with the
//! rounds after it), two below 65,536, four beyond. `born` and `died` are as long as the
//! run's lists, so their width is most of a versions file's size.

use crate::run::Sec;

/// The two ends of a direction's spells, parallel to [`super::versions::Spells`]: spell
/// `i` held from just after commit `from[i]` (0: before the range) until commit `to[i]`.
pub(crate) struct Spans<T> {
    pub from: Sec<T>,
    pub to: Sec<T>,
}

/// One direction's ordinal columns, all of width `T`.
pub(crate) struct DirOrdinals<T> {
    /// Per add, in the run's order: the ordinal of the commit that added it last.
    pub born: Sec<T>,
    /// Per tombstone, in the run's order: the ordinal of the commit that removed it last.
    pub died: Sec<T>,
    /// The spells of edges present that the runs before do not hold.
    pub present: Spans<T>,
    /// The spells of edges absent that the runs before hold.
    pub absent: Spans<T>,
}

/// The columns of a [`DirOrdinals`] in their order (born, died, present from and to,
/// absent from and to), as a build makes them and a file lays them out.
pub(crate) const COLUMNS: usize = 6;

/// [`DirOrdinals`] at the width of one versions file.
pub(crate) enum Ordinals {
    U8(DirOrdinals<u8>),
    U16(DirOrdinals<u16>),
    U32(DirOrdinals<u32>),
}

impl Default for Ordinals {
    fn default() -> Self {
        Ordinals::U32(DirOrdinals::from_columns(std::array::from_fn(|_| {
            Sec::default()
        })))
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

impl<T: bytemuck::Pod> DirOrdinals<T> {
    fn from_columns([born, died, pf, pt, af, at]: [Sec<T>; COLUMNS]) -> Self {
        DirOrdinals {
            born,
            died,
            present: Spans { from: pf, to: pt },
            absent: Spans { from: af, to: at },
        }
    }

    /// The columns in [`COLUMNS`] order.
    pub(crate) fn columns(&self) -> [&[T]; COLUMNS] {
        [
            self.born.get(),
            self.died.get(),
            self.present.from.get(),
            self.present.to.get(),
            self.absent.from.get(),
            self.absent.to.get(),
        ]
    }
}

impl Ordinals {
    /// The `columns` (in [`COLUMNS`] order, every value at most `commits`) at
    /// [`width`]`(commits)`.
    pub(crate) fn narrow(columns: [Vec<u32>; COLUMNS], commits: usize) -> Ordinals {
        debug_assert!(
            columns.iter().flatten().all(|&o| o as usize <= commits),
            "an ordinal past the run's commits"
        );
        // The casts keep every value: each is at most `commits`, which fits the width.
        match width(commits) {
            1 => Ordinals::U8(DirOrdinals::from_columns(
                columns.map(|c| Sec::owned(c.iter().map(|&o| o as u8).collect())),
            )),
            2 => Ordinals::U16(DirOrdinals::from_columns(
                columns.map(|c| Sec::owned(c.iter().map(|&o| o as u16).collect())),
            )),
            _ => Ordinals::U32(DirOrdinals::from_columns(columns.map(Sec::owned))),
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

    /// Every column widened to `u32`, to compare two derivations.
    pub(crate) fn widened(&self) -> [Vec<u32>; COLUMNS] {
        with_ordinals!(self, |c| c.columns().map(widen))
    }

    /// The columns of `width` bytes per ordinal mapped from `m`: column `k` (in
    /// [`COLUMNS`] order) of `at[k].1` ordinals at byte `at[k].0`.
    pub(crate) fn mapped(
        m: &crate::medium::Mapped,
        width: usize,
        at: [(usize, usize); COLUMNS],
    ) -> Ordinals {
        match width {
            1 => Ordinals::U8(DirOrdinals::from_columns(
                at.map(|(off, n)| Sec::mapped(m.clone(), off, n)),
            )),
            2 => Ordinals::U16(DirOrdinals::from_columns(
                at.map(|(off, n)| Sec::mapped(m.clone(), off, n)),
            )),
            _ => Ordinals::U32(DirOrdinals::from_columns(
                at.map(|(off, n)| Sec::mapped(m.clone(), off, n)),
            )),
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
            let c = commits as u32;
            let columns = [vec![0, c, c / 2], vec![c], vec![0], vec![c], vec![], vec![]];
            let o = Ordinals::narrow(columns.clone(), commits);
            assert_eq!(o.width(), w, "{commits} commits");
            assert_eq!(o.widened(), columns, "{commits} commits");
            assert_eq!(o.lens(), (3, 1));
        }
    }
}
