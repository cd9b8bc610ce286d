//! Rust's legacy symbol mangling (`_ZN…E`, the Itanium-like scheme rustc uses by default for
//! crates built on stable; RFC 2603 describes it beside v0) turned back into `a::b::c`, so the
//! category table can match bytepath's own functions by path. Names in any other scheme (C
//! names, v0 `_R…` names from the prebuilt standard library) are returned unchanged.

/// The readable form of `name`, or `name` itself when it is not a legacy Rust symbol.
pub fn demangle(name: &str) -> String {
    legacy(name).unwrap_or_else(|| name.to_string())
}

fn legacy(name: &str) -> Option<String> {
    let mut rest = name.strip_prefix("_ZN")?;
    let mut parts: Vec<String> = Vec::new();
    while !rest.starts_with('E') {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let len: usize = rest[..digits].parse().ok()?;
        let ident = rest.get(digits..digits + len)?;
        parts.push(unescape(ident)?);
        rest = &rest[digits + len..];
    }
    if parts.last().is_some_and(|p| is_hash(p)) {
        parts.pop();
    }
    (!parts.is_empty()).then(|| parts.join("::"))
}

/// The trailing `h` + 16 hex digits that disambiguates monomorphizations.
fn is_hash(part: &str) -> bool {
    part.len() == 17 && part.starts_with('h') && part[1..].bytes().all(|b| b.is_ascii_hexdigit())
}

/// Undoes the `$..$` escapes and `..` (for `::`) inside one path component.
fn unescape(ident: &str) -> Option<String> {
    let ident = if ident.starts_with("_$") {
        &ident[1..]
    } else {
        ident
    };
    let mut out = String::with_capacity(ident.len());
    let mut rest = ident;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("..") {
            out.push_str("::");
            rest = after;
        } else if c == '$' {
            let end = rest[1..].find('$')? + 1;
            out.push(escape(&rest[1..end])?);
            rest = &rest[end + 1..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    Some(out)
}

fn escape(code: &str) -> Option<char> {
    Some(match code {
        "SP" => '@',
        "BP" => '*',
        "RF" => '&',
        "LT" => '<',
        "GT" => '>',
        "LP" => '(',
        "RP" => ')',
        "C" => ',',
        _ => char::from_u32(u32::from_str_radix(code.strip_prefix('u')?, 16).ok()?)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_path_loses_its_hash() {
        assert_eq!(
            demangle("_ZN8bytepath3sys4ring4Ring4read17h1eaf2b7692e511b8E"),
            "bytepath::sys::ring::Ring::read"
        );
    }

    #[test]
    fn trait_impls_read_as_rust_writes_them() {
        // As found in the release binary (nm).
        let mangled = "_ZN89_$LT$bytepath..mechanism..copy..TwoCopy$u20$as$u20$bytepath..mechanism..SendMechanism$GT$12send_message17h07d11bf38b3289f1E";
        assert_eq!(
            demangle(mangled),
            "<bytepath::mechanism::copy::TwoCopy as bytepath::mechanism::SendMechanism>::send_message"
        );
    }

    #[test]
    fn other_names_are_left_alone() {
        for name in [
            "__memmove_avx512_unaligned_erms",
            "_RNvCs1_3std4main",
            "_ZN3foo",
            "_ZN3fooE",
        ] {
            let expected = if name == "_ZN3fooE" { "foo" } else { name };
            assert_eq!(demangle(name), expected);
        }
    }
}
