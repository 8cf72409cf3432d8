//! A card's two numbers: the logical id a process's ACL and runtime calls take, and the
//! driver-visible ("physical") id that the HAL indexes and that every process on the host shares.
//!
//! `ASCEND_RT_VISIBLE_DEVICES` renumbers the logical space: with `ASCEND_RT_VISIBLE_DEVICES=5,2`
//! logical 0 is physical 5 and logical 1 is physical 2, while HAL calls (`halResMap`,
//! `halMemCtl`, `halGetDeviceInfoByBuff`) keep indexing the physical space; unset or empty, the
//! two are the same. Facts: hw-native-sys/simpler `src/common/platform/include/common/
//! acl_hal_device.h` (`acl_to_hal_device_id`: ACL/rt entry points take the logical id, direct
//! `hal*` calls must translate; the list is split on `,` and spaces; a call with an untranslated
//! id targets the wrong card). Upstream falls back to the logical id on a malformed list; here a
//! malformed list (a token that is not a card number, a card named twice) is an error naming the
//! variable, since acting on a guess would lease and reset the wrong card.
//!
//! Every host-wide thing about a card is keyed by its physical id: its lease and lock file, its
//! health record, its place in the host-wide queue. Two runs with different maps that name the
//! same physical card therefore exclude each other.
//!
//! This file owns the variable's grammar and the mapping. It never reads a card and never
//! changes the environment.

use crate::driver::DeviceId;

/// CANN's variable that renumbers the cards a process sees.
pub const ENV_VISIBLE_DEVICES: &str = "ASCEND_RT_VISIBLE_DEVICES";

/// A card's driver-visible id: what the HAL indexes, and the key of everything host-wide.
pub type PhysicalId = u32;

/// The logical-to-physical map of this process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VisibleDevices {
    /// `map[logical]` is the physical id; `None`: the identity (variable unset or empty).
    map: Option<Vec<PhysicalId>>,
}

/// A value of [`ENV_VISIBLE_DEVICES`] that cannot be used; names the variable, on one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VisibleError {
    /// A token is not a card number (ASCII digits that fit a `u32`).
    #[error("{ENV_VISIBLE_DEVICES}={value:?}: {token:?} is not a card number")]
    NotANumber {
        /// The whole value.
        value: String,
        /// The bad token.
        token: String,
    },
    /// A card is named twice.
    #[error("{ENV_VISIBLE_DEVICES}={value:?} names card {card} twice")]
    Twice {
        /// The whole value.
        value: String,
        /// The card.
        card: PhysicalId,
    },
    /// The value is not valid UTF-8.
    #[error("{ENV_VISIBLE_DEVICES}={value:?} is not valid UTF-8")]
    NotUnicode {
        /// The value, lossily decoded.
        value: String,
    },
}

impl VisibleDevices {
    /// Logical ids are physical ids (the variable unset).
    pub const fn identity() -> Self {
        Self { map: None }
    }

    /// This process's map, from [`ENV_VISIBLE_DEVICES`].
    pub fn from_env() -> Result<Self, VisibleError> {
        match std::env::var_os(ENV_VISIBLE_DEVICES) {
            None => Ok(Self::identity()),
            Some(v) => match v.to_str() {
                Some(s) => Self::parse(s),
                None => Err(VisibleError::NotUnicode {
                    value: v.to_string_lossy().into_owned(),
                }),
            },
        }
    }

    /// Parses a value of [`ENV_VISIBLE_DEVICES`]: physical ids separated by `,` or spaces, as the
    /// runtime reads it; empty (or only separators) is the identity.
    pub fn parse(value: &str) -> Result<Self, VisibleError> {
        let mut map: Vec<PhysicalId> = Vec::new();
        for token in value.split([',', ' ']).filter(|t| !t.is_empty()) {
            let card = crate::number::whole_u32(token)
                .filter(|_| token.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| VisibleError::NotANumber {
                    value: value.to_owned(),
                    token: token.to_owned(),
                })?;
            if map.contains(&card) {
                return Err(VisibleError::Twice {
                    value: value.to_owned(),
                    card,
                });
            }
            map.push(card);
        }
        Ok(Self {
            map: (!map.is_empty()).then_some(map),
        })
    }

    /// Whether logical and physical ids are the same.
    pub fn is_identity(&self) -> bool {
        self.map.is_none()
    }

    /// The physical id of `logical`; `None` when the map is shorter (the process cannot see
    /// that card at all).
    pub fn physical(&self, logical: DeviceId) -> Option<PhysicalId> {
        match &self.map {
            None => Some(logical),
            Some(m) => m.get(logical as usize).copied(),
        }
    }

    /// The logical id under which this process sees `physical`, if it sees it.
    pub fn logical(&self, physical: PhysicalId) -> Option<DeviceId> {
        match &self.map {
            None => Some(physical),
            Some(m) => m
                .iter()
                .position(|&p| p == physical)
                .and_then(|i| DeviceId::try_from(i).ok()),
        }
    }

    /// How many cards the map lets this process see; `None` for the identity (every card).
    pub fn count(&self) -> Option<u32> {
        self.map
            .as_ref()
            .map(|m| u32::try_from(m.len()).unwrap_or(u32::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_and_empty_are_the_identity() {
        for v in ["", ",", "  , "] {
            let m = VisibleDevices::parse(v).unwrap();
            assert!(m.is_identity(), "{v:?}");
            assert_eq!(m.physical(3), Some(3));
            assert_eq!(m.logical(7), Some(7));
            assert_eq!(m.count(), None);
        }
    }

    #[test]
    fn a_map_renumbers_the_logical_space() {
        let m = VisibleDevices::parse("5,2").unwrap();
        assert_eq!(m.physical(0), Some(5));
        assert_eq!(m.physical(1), Some(2));
        assert_eq!(m.physical(2), None, "beyond the map");
        assert_eq!(m.logical(2), Some(1));
        assert_eq!(m.logical(0), None, "physical 0 is not visible");
        assert_eq!(m.count(), Some(2));
    }

    #[test]
    fn spaces_separate_as_commas_do() {
        assert_eq!(VisibleDevices::parse("4 6,7").unwrap().physical(2), Some(7));
    }

    #[test]
    fn a_bad_map_names_the_variable_and_the_bad_part() {
        let cases = [
            ("1,x", "\"x\" is not a card number"),
            ("1,-2", "\"-2\" is not a card number"),
            ("+1", "\"+1\" is not a card number"),
            ("99999999999", "is not a card number"),
            ("3,1,3", "names card 3 twice"),
        ];
        for (value, want) in cases {
            let e = VisibleDevices::parse(value).unwrap_err().to_string();
            assert!(e.starts_with("ASCEND_RT_VISIBLE_DEVICES="), "{value}: {e}");
            assert!(e.contains(want), "{value}: {e}");
            assert!(!e.contains('\n'));
        }
    }
}
