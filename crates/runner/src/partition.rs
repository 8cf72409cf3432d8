//! `--partition`: the K-th of N shares of a run's classes, by hash (`hash:K/N`) or by estimated
//! duration (`duration:K/N`, issue 23 item 4).
//!
//! This file owns the flag's syntax and both ways of making shares: a stable hash of the class
//! name, and a stable greedy over estimated class durations (longest first onto the lightest
//! share, ties by class name, then by the lower share). It never reads the duration history
//! (`order` turns it into the estimates) and never selects cases (`select` does).

use std::fmt;
use std::str::FromStr;

use crate::case::stable_hash;

/// How `--partition` splits the classes into shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionBy {
    /// By a stable hash of the class name (`hash:K/N`).
    Hash,
    /// Into shares of equal estimated duration from the duration history (`duration:K/N`:
    /// [`duration_shares`] makes them, `select` takes every class and `order` cuts the share).
    Duration,
}

/// `--partition hash:K/N` or `duration:K/N`: the K-th of N shares of the classes (K from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    /// How the shares are made.
    pub by: PartitionBy,
    /// This share, from 1.
    pub k: u64,
    /// Number of shares.
    pub n: u64,
}

/// A partition that cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad partition {0:?}: expected hash:K/N or duration:K/N with 1 <= K <= N")]
pub struct BadPartition(pub String);

impl FromStr for Partition {
    type Err = BadPartition;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadPartition(s.to_owned());
        let (by, rest) = if let Some(rest) = s.strip_prefix("hash:") {
            (PartitionBy::Hash, rest)
        } else if let Some(rest) = s.strip_prefix("duration:") {
            (PartitionBy::Duration, rest)
        } else {
            return Err(bad());
        };
        let (k, n) = rest.split_once('/').ok_or_else(bad)?;
        let k = platform_common::number::whole(k).ok_or_else(bad)?;
        let n = platform_common::number::whole(n).ok_or_else(bad)?;
        if k == 0 || n == 0 || k > n {
            return Err(bad());
        }
        Ok(Partition { by, k, n })
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let by = match self.by {
            PartitionBy::Hash => "hash",
            PartitionBy::Duration => "duration",
        };
        write!(f, "{by}:{}/{}", self.k, self.n)
    }
}

impl Partition {
    /// A `hash:K/N` share.
    pub fn hash(k: u64, n: u64) -> Partition {
        Partition {
            by: PartitionBy::Hash,
            k,
            n,
        }
    }

    /// Whether class `name` falls in this share by its hash (a `duration` share takes every
    /// class here: it is cut from the selection by [`duration_shares`]).
    pub fn takes(&self, name: &str) -> bool {
        match self.by {
            PartitionBy::Hash => stable_hash(name) % self.n == self.k - 1,
            PartitionBy::Duration => true,
        }
    }
}

/// The share (from 0) of every class under `duration:K/N` with `n` shares: `classes` are
/// (class name, estimated ms) in any order; the result is in the same order. The greedy is
/// deterministic for given estimates: classes longest first (ties by name) each go to the share
/// with the least estimated work so far (ties by the lower share).
pub fn duration_shares(classes: &[(&str, u64)], n: u64) -> Vec<u64> {
    let n = usize::try_from(n.max(1))
        .unwrap_or(usize::MAX)
        .min(classes.len().max(1));
    let mut order: Vec<usize> = (0..classes.len()).collect();
    order.sort_by(|&a, &b| {
        classes[b]
            .1
            .cmp(&classes[a].1)
            .then_with(|| classes[a].0.cmp(classes[b].0))
    });
    let mut load = vec![0u64; n];
    let mut share = vec![0u64; classes.len()];
    for i in order {
        let (lightest, _) = load
            .iter()
            .enumerate()
            .min_by_key(|&(s, &l)| (l, s))
            .expect("at least one share");
        load[lightest] = load[lightest].saturating_add(classes[i].1);
        share[i] = lightest as u64;
    }
    share
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_parse_and_print_back_and_bad_ones_are_refused() {
        for good in ["hash:1/2", "duration:3/3", "duration:1/1"] {
            assert_eq!(good.parse::<Partition>().unwrap().to_string(), good);
        }
        assert_eq!(
            "duration:2/4".parse::<Partition>().unwrap().by,
            PartitionBy::Duration
        );
        for bad in [
            "hash:0/2",
            "hash:3/2",
            "hash:1/0",
            "mod:1/2",
            "hash:1",
            "hash:a/b",
            "duration:0/2",
            "duration:2/1",
            "duration: 1/2",
            "duration:+1/2",
            "duration:1/2 ",
            "Duration:1/2",
        ] {
            let e = bad.parse::<Partition>().unwrap_err().to_string();
            assert!(e.contains(bad), "{e}");
        }
    }

    /// Longest first onto the lightest share: a textbook instance where the greedy is exact.
    #[test]
    fn the_greedy_puts_the_longest_first_onto_the_lightest_share() {
        let classes = [("A", 5), ("B", 5), ("C", 4), ("D", 3), ("E", 3)];
        // A -> 0 (5, 0); B -> 1 (5, 5); C -> 0, the tie to the lower share (9, 5); D -> 1 (9, 8);
        // E -> 1, 8 < 9 (9, 11).
        assert_eq!(duration_shares(&classes, 2), vec![0, 1, 0, 1, 1]);
        assert_eq!(duration_shares(&classes, 1), vec![0; 5]);
        // Ties by name, whatever the input order.
        let a = duration_shares(&[("X", 1), ("Y", 1), ("Z", 1)], 3);
        let b = duration_shares(&[("Z", 1), ("Y", 1), ("X", 1)], 3);
        assert_eq!(a, vec![0, 1, 2]);
        assert_eq!(b, vec![2, 1, 0]);
        // More shares than classes: the shares past the classes are empty.
        assert_eq!(duration_shares(&[("A", 1), ("B", 2)], 4), vec![1, 0]);
    }

    /// On a crafted spread of class estimates (24 classes, 10 ms to 1.2 s) four shares are each
    /// within 1.10 of the ideal share, every class in exactly one share, the same every time.
    #[test]
    fn four_shares_of_a_crafted_history_are_balanced_and_deterministic() {
        let names: Vec<String> = (0..24).map(|i| format!("C{i:02}")).collect();
        let classes: Vec<(&str, u64)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), 10 + (i as u64 * 7919) % 1200))
            .collect();
        let shares = duration_shares(&classes, 4);
        assert_eq!(shares, duration_shares(&classes, 4));
        assert_eq!(shares.len(), classes.len(), "every class has one share");
        let mut load = [0u64; 4];
        for (c, s) in classes.iter().zip(&shares) {
            load[usize::try_from(*s).unwrap()] += c.1;
        }
        let total: u64 = classes.iter().map(|c| c.1).sum();
        let ideal = total as f64 / 4.0;
        let worst = *load.iter().max().unwrap() as f64;
        assert!(worst <= 1.10 * ideal, "{load:?} against {ideal}");
    }
}
