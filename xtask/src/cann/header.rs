//! What `cardguard_cann.h` declares, read from its text: the calls (`CG_API`), the integer
//! constants (`#define`s and enumerators) and the structs with their fields.
//!
//! The header is this project's own and written in one plain style (one declaration per line,
//! one field per line), which is all this reader understands; it never reads CANN's headers
//! (the compiler does, in [`super::unit`]). Names of cardguard's own (`cg*`, `CG_*`) are kept
//! apart: they have no counterpart in CANN.

/// One struct: the name C code uses for it (`rtArgsEx_t`, `struct res_map_info`) and its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Struct {
    /// `rtArgsEx_t` for a typedef'd struct, `struct res_map_info` for a tagged one.
    pub c_name: String,
    /// The fields, in order.
    pub fields: Vec<String>,
}

/// An integer constant and how it is declared (a macro is compared by its expansion, an
/// enumerator by its qualified name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConstKind {
    /// `#define NAME value`.
    Macro,
    /// An enumerator of an `enum`.
    Enumerator,
}

/// What the header declares that CANN also declares (cardguard's own names left out).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Declarations {
    /// Each `CG_API` call's name, in header order.
    pub calls: Vec<String>,
    /// Each integer constant, in header order.
    pub constants: Vec<(String, ConstKind)>,
    /// Each struct, in header order.
    pub structs: Vec<Struct>,
}

/// Whether `name` is cardguard's own (no counterpart in CANN).
pub fn is_own(name: &str) -> bool {
    name.starts_with("cg") || name.starts_with("CG_") || name == "CARDGUARD_CANN_H"
}

/// `line` without its `/* */` (one-line) and `//` comments.
fn strip_comment(line: &str) -> String {
    let mut out = line.to_owned();
    while let Some(start) = out.find("/*") {
        match out[start..].find("*/") {
            Some(end) => out.replace_range(start..start + end + 2, ""),
            None => out.truncate(start),
        }
    }
    if let Some(i) = out.find("//") {
        out.truncate(i);
    }
    out
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

fn is_number(s: &str) -> bool {
    let s = s.trim_end_matches(['u', 'U', 'l', 'L']);
    s.parse::<i64>().is_ok()
        || s.strip_prefix("0x")
            .is_some_and(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()))
}

/// Reads the header's text. Multi-line comments are skipped as whole lines.
pub fn parse(text: &str) -> Declarations {
    let mut d = Declarations::default();
    let mut in_comment = false;
    // (c_name of a tagged struct or None for a typedef'd one awaiting its name, fields)
    let mut open_struct: Option<(Option<String>, Vec<String>)> = None;
    let mut in_enum = false;
    for raw in text.lines() {
        let mut line = raw.to_owned();
        if in_comment {
            match line.find("*/") {
                Some(end) => {
                    line = line[end + 2..].to_owned();
                    in_comment = false;
                }
                None => continue,
            }
        }
        if let Some(start) = line.find("/*") {
            if !line[start..].contains("*/") {
                line.truncate(start);
                in_comment = true;
            }
        }
        let line = strip_comment(&line);
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(rest) = t.strip_prefix("#define ") {
            let mut parts = rest.split_whitespace();
            if let (Some(name), Some(value), None) = (parts.next(), parts.next(), parts.next()) {
                if is_ident(name) && is_number(value) && !is_own(name) {
                    d.constants.push((name.to_owned(), ConstKind::Macro));
                }
            }
            continue;
        }
        if let Some(rest) = t.strip_prefix("CG_API(") {
            if let Some(name) = rest.split(',').nth(1).map(str::trim) {
                if is_ident(name) && !is_own(name) {
                    d.calls.push(name.to_owned());
                }
            }
            continue;
        }
        if in_enum {
            if t.starts_with('}') {
                in_enum = false;
                continue;
            }
            let name = t.split(['=', ',']).next().unwrap_or("").trim();
            if is_ident(name) && !is_own(name) {
                d.constants.push((name.to_owned(), ConstKind::Enumerator));
            }
            continue;
        }
        if let Some((tag, mut fields)) = open_struct.take() {
            if let Some(rest) = t.strip_prefix('}') {
                let name = rest.trim().trim_end_matches(';').trim();
                let c_name = tag.unwrap_or_else(|| name.to_owned());
                if !is_own(&c_name) && !c_name.is_empty() {
                    d.structs.push(Struct { c_name, fields });
                }
                continue;
            }
            let decl = t.trim_end_matches(';');
            let decl = decl.split('[').next().unwrap_or(decl);
            if let Some(field) = decl.split([' ', '*']).rfind(|s| !s.is_empty()) {
                if is_ident(field) {
                    fields.push(field.to_owned());
                }
            }
            open_struct = Some((tag, fields));
            continue;
        }
        if t.ends_with('{') && (t.starts_with("typedef enum") || t.starts_with("enum ")) {
            in_enum = true;
            continue;
        }
        if t.ends_with('{') && t.starts_with("typedef struct ") {
            open_struct = Some((None, Vec::new()));
            continue;
        }
        if let Some(rest) = t.strip_prefix("struct ") {
            if let Some(tag) = rest.strip_suffix('{').map(str::trim) {
                open_struct = Some((Some(format!("struct {tag}")), Vec::new()));
            }
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"
/* a comment
 * #define NOT_THIS 1
 */
#define ACL_SUCCESS 0
#define CG_OWN 1u
#define CG_API(ret, name, params) x
typedef enum rtKernelType {
    KERNEL_TYPE_CCE = 0, /* c */
    KERNEL_TYPE_AICPU = 2
} rtKernelType_t;
typedef struct tagRtArgsEx {
    void *args;                 /* x */
    rtHostInputInfo_t *hostInputInfoPtr;
    uint8_t reserved[4];
} rtArgsEx_t;
struct res_map_info {
    unsigned int rsv[RES_MAP_INFO_RSV_LEN]; /* 0 */
};
typedef struct cgSimStats {
    uint64_t calls;
} cgSimStats;
CG_API(const char *, aclGetRecentErrMsg, (void));
CG_API(aclError, cgSimGetStats, (cgSimStats *out));
"#;

    #[test]
    fn reads_calls_constants_and_structs_but_not_cardguards_own() {
        let d = parse(SAMPLE);
        assert_eq!(d.calls, ["aclGetRecentErrMsg"]);
        assert_eq!(
            d.constants,
            [
                ("ACL_SUCCESS".to_owned(), ConstKind::Macro),
                ("KERNEL_TYPE_CCE".to_owned(), ConstKind::Enumerator),
                ("KERNEL_TYPE_AICPU".to_owned(), ConstKind::Enumerator),
            ]
        );
        assert_eq!(
            d.structs,
            [
                Struct {
                    c_name: "rtArgsEx_t".into(),
                    fields: vec!["args".into(), "hostInputInfoPtr".into(), "reserved".into()],
                },
                Struct {
                    c_name: "struct res_map_info".into(),
                    fields: vec!["rsv".into()],
                },
            ]
        );
    }

    #[test]
    fn reads_the_real_header() {
        let text =
            std::fs::read_to_string(crate::bindgen::workspace_root().join(crate::bindgen::HEADER)).unwrap();
        let d = parse(&text);
        for call in [
            "aclInit",
            "rtKernelLaunchWithHandleV2",
            "halMemCtl",
            "halGetDeviceInfoByBuff",
        ] {
            assert!(d.calls.iter().any(|c| c == call), "{call} not read");
        }
        assert!(!d.calls.iter().any(|c| is_own(c)));
        let args = d.structs.iter().find(|s| s.c_name == "rtArgsEx_t").unwrap();
        assert_eq!(args.fields.len(), 9, "{args:?}");
        assert!(d.structs.iter().any(|s| s.c_name == "struct AddrMapOutPara"));
        assert!(d
            .constants
            .iter()
            .any(|(n, k)| n == "RES_AICORE" && *k == ConstKind::Enumerator));
        assert!(d
            .constants
            .iter()
            .any(|(n, k)| n == "DRV_ERROR_NOT_SUPPORT" && *k == ConstKind::Macro));
    }
}
