//! `--devices LIST|auto`: which cards a run names ([`DeviceSpec`]), parsed once for the flag,
//! the environment and the config file. A range is checked before it is expanded, so a huge one
//! is a usage error naming the list, never an allocation.
//!
//! This file owns the value and its one parser. It never takes a card (the dispatcher's leases
//! do).

use std::fmt;
use std::str::FromStr;

use platform_common::DeviceId;

/// `--devices`: a list of cards or `auto`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSpec {
    /// Take free cards.
    Auto,
    /// Exactly these cards, in this order.
    List(Vec<DeviceId>),
}

/// The widest range a `--devices` list may name (no host has more cards); checked before the
/// range is expanded.
pub const MAX_RANGE_CARDS: u32 = 1024;

/// A `--devices` value that cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad device list {0:?}: {1} (expected auto, 0-3 or 0,2,5)")]
pub struct BadDeviceList(pub String, pub &'static str);

impl FromStr for DeviceSpec {
    type Err = BadDeviceList;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why| BadDeviceList(s.to_owned(), why);
        if s == "auto" {
            return Ok(DeviceSpec::Auto);
        }
        let mut out: Vec<DeviceId> = Vec::new();
        // No whitespace anywhere: the one rule for numbers (a padded value is named, not guessed at).
        for part in s.split(',') {
            if part.is_empty() {
                return Err(bad("empty entry"));
            }
            let num = |t: &str| platform_common::number::whole_u32(t).ok_or_else(|| bad("not a card number"));
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (num(a)?, num(b)?);
                    if a > b {
                        return Err(bad("a range must go up"));
                    }
                    if b - a >= MAX_RANGE_CARDS || out.len() + ((b - a) as usize) >= MAX_RANGE_CARDS as usize
                    {
                        return Err(bad("names more than 1024 cards"));
                    }
                    out.extend(a..=b);
                }
                None => out.push(num(part)?),
            }
        }
        let mut seen = std::collections::HashSet::new();
        if !out.iter().all(|d| seen.insert(*d)) {
            return Err(bad("a card is named twice"));
        }
        Ok(DeviceSpec::List(out))
    }
}

impl fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSpec::Auto => f.write_str("auto"),
            DeviceSpec::List(l) => {
                let s: Vec<String> = l.iter().map(ToString::to_string).collect();
                f.write_str(&s.join(","))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_lists_parse() {
        assert_eq!("auto".parse::<DeviceSpec>().unwrap(), DeviceSpec::Auto);
        assert_eq!(
            "0-3".parse::<DeviceSpec>().unwrap(),
            DeviceSpec::List(vec![0, 1, 2, 3])
        );
        assert_eq!(
            "0,2,5".parse::<DeviceSpec>().unwrap(),
            DeviceSpec::List(vec![0, 2, 5])
        );
        assert_eq!(
            "1-2,4".parse::<DeviceSpec>().unwrap(),
            DeviceSpec::List(vec![1, 2, 4])
        );
        for bad in [
            "",
            "x",
            "3-1",
            "1,,2",
            "1,1",
            "-1",
            "+1",
            "0-+2",
            "1-",
            "0-4000000000",
            "0-1024",
            "0-600,601-1100",
        ] {
            let e = bad.parse::<DeviceSpec>().unwrap_err();
            assert!(e.to_string().contains(&format!("{bad:?}")), "{e}");
        }
    }

    #[test]
    fn a_range_is_capped_before_it_is_expanded() {
        assert_eq!(
            "0-1023".parse::<DeviceSpec>().unwrap(),
            DeviceSpec::List((0..1024).collect())
        );
        let e = "0-4000000000".parse::<DeviceSpec>().unwrap_err();
        assert!(e.to_string().contains("more than 1024 cards"), "{e}");
    }
}
