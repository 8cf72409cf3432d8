//! How one setting's value is read from any of its sources, and shown back.
//!
//! A setting has one parser, the flag's (`crate::cli`'s `parse_count` and `parse_secs`, or a
//! clap `ValueEnum`'s names): an environment variable's text and a config file's value go through
//! it too, so `retries = -1` and `--retries -1` fail with the same words. A config value must
//! first have the TOML type of its [`Kind`] (an integer for a count, an integer or a float for
//! seconds, a string for a name or a list, a boolean for a switch); it is then written as the
//! text a flag would be given. This file owns those conversions; it never decides which source
//! wins (`settings` does).

use std::path::PathBuf;
use std::time::Duration;

use clap::ValueEnum;

/// The TOML type a setting takes in the config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A whole number (a TOML integer).
    Count,
    /// Seconds: a TOML integer or float.
    Secs,
    /// A TOML string.
    Text,
    /// A TOML boolean.
    Switch,
}

impl Kind {
    /// What the config file must hold, for errors and docs/reference/config-keys.md.
    pub fn expected(self) -> &'static str {
        match self {
            Kind::Count => "an integer",
            Kind::Secs => "a number of seconds (integer or float)",
            Kind::Text => "a string",
            Kind::Switch => "a boolean",
        }
    }
}

/// The name of a TOML value's type, for errors.
pub fn type_name(v: &toml::Value) -> &'static str {
    match v {
        toml::Value::String(_) => "a string",
        toml::Value::Integer(_) => "an integer",
        toml::Value::Float(_) => "a float",
        toml::Value::Boolean(_) => "a boolean",
        toml::Value::Datetime(_) => "a datetime",
        toml::Value::Array(_) => "an array",
        toml::Value::Table(_) => "a table",
    }
}

/// A config value as the text its flag would be given, or the wrong-type error (`expected an
/// integer, found a string`).
pub fn as_flag_text(kind: Kind, v: &toml::Value) -> Result<String, String> {
    let text = match (kind, v) {
        (Kind::Count | Kind::Secs, toml::Value::Integer(i)) => Some(i.to_string()),
        // `f64`'s Display never uses an exponent: 2.5 is "2.5", 1e-10 is "0.0000000001" (which
        // the seconds parser refuses as under 1 ms), nan and inf stay words it refuses.
        (Kind::Secs, toml::Value::Float(f)) => Some(f.to_string()),
        (Kind::Text, toml::Value::String(s)) => Some(s.clone()),
        (Kind::Switch, toml::Value::Boolean(b)) => Some(b.to_string()),
        _ => None,
    };
    text.ok_or_else(|| format!("expected {}, found {}", kind.expected(), type_name(v)))
}

/// A clap `ValueEnum` by the name its flag takes (`sim`, `on-failure`).
pub fn parse_enum<T: ValueEnum>(s: &str) -> Result<T, String> {
    T::from_str(s, false).map_err(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_owned()))
            .collect();
        format!("{s:?} is not one of {}", names.join(", "))
    })
}

/// A switch: `true` or `false` (an environment variable's text, a TOML boolean's).
pub fn parse_switch(s: &str) -> Result<bool, String> {
    match s {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("{s:?} is not true or false")),
    }
}

/// Free text (a fault plan, checked where it is used, naming its source).
pub fn parse_text(s: &str) -> Result<String, String> {
    Ok(s.to_owned())
}

/// A path: any text.
pub fn parse_path(s: &str) -> Result<PathBuf, String> {
    Ok(PathBuf::from(s))
}

/// A `FromStr` value whose error says what is wrong (a device list).
pub fn parse_from_str<T>(s: &str) -> Result<T, String>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    s.parse().map_err(|e: T::Err| e.to_string())
}

/// A `ValueEnum` as its flag spells it.
pub fn show_enum<T: ValueEnum>(v: &T) -> String {
    v.to_possible_value()
        .map_or_else(|| "?".to_owned(), |p| p.get_name().to_owned())
}

/// Seconds as a flag takes them, with the unit: `300 s`, `2.5 s`.
pub fn show_secs(d: &Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

/// Anything with a `Display`.
pub fn show_display<T: std::fmt::Display>(v: &T) -> String {
    v.to_string()
}

/// A path as it reads (`&PathBuf`: it is a `fn(&X)` of the setting's parsed type).
#[allow(clippy::ptr_arg)]
pub fn show_path(p: &PathBuf) -> String {
    p.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::FlakyArg;

    #[test]
    fn config_values_become_the_text_a_flag_takes_or_a_type_error() {
        let int = toml::Value::Integer(3);
        let float = toml::Value::Float(2.5);
        let s = toml::Value::String("0-3".into());
        assert_eq!(as_flag_text(Kind::Count, &int).unwrap(), "3");
        assert_eq!(as_flag_text(Kind::Secs, &int).unwrap(), "3");
        assert_eq!(as_flag_text(Kind::Secs, &float).unwrap(), "2.5");
        assert_eq!(as_flag_text(Kind::Text, &s).unwrap(), "0-3");
        assert_eq!(
            as_flag_text(Kind::Switch, &toml::Value::Boolean(true)).unwrap(),
            "true"
        );
        assert_eq!(
            as_flag_text(Kind::Count, &float).unwrap_err(),
            "expected an integer, found a float"
        );
        assert_eq!(
            as_flag_text(Kind::Count, &s).unwrap_err(),
            "expected an integer, found a string"
        );
        assert_eq!(
            as_flag_text(Kind::Text, &int).unwrap_err(),
            "expected a string, found an integer"
        );
        assert_eq!(
            as_flag_text(Kind::Secs, &toml::Value::Float(1e-10)).unwrap(),
            "0.0000000001"
        );
    }

    #[test]
    fn enums_and_switches_take_the_flag_names_only() {
        assert_eq!(parse_enum::<FlakyArg>("fail"), Ok(FlakyArg::Fail));
        assert_eq!(
            parse_enum::<FlakyArg>("Fail").unwrap_err(),
            "\"Fail\" is not one of pass, fail"
        );
        assert_eq!(show_enum(&FlakyArg::Pass), "pass");
        assert_eq!(parse_switch("true"), Ok(true));
        assert!(parse_switch("yes").unwrap_err().contains("yes"));
        assert_eq!(show_secs(&Duration::from_millis(2500)), "2.5 s");
    }
}
