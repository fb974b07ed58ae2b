//! `cuLink*` for PTX: inputs are joined into one PTX module.
//!
//! Linking PTX is textual here: the first input keeps its `.version`,
//! `.target` and `.address_size`; later inputs lose theirs, have their
//! `.file`/`.loc` indices shifted past the earlier inputs' files, and any
//! `.extern` declaration of a function or variable that another input
//! defines is dropped, so that the definition is the only one left.

/// One `cuLinkAddData`/`cuLinkAddFile` input.
#[derive(Debug, Clone)]
pub struct LinkInput {
    pub name: String,
    pub ptx: String,
}

/// A top-level PTX item: a header directive line, or a statement ending in
/// `;` or a `{ … }` body.
#[derive(Debug)]
struct Item<'a> {
    text: &'a str,
}

impl Item<'_> {
    fn words(&self) -> Vec<&str> {
        self.text
            .split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ';' || c == ',')
            .filter(|w| !w.is_empty())
            .collect()
    }

    fn directive(&self) -> Option<&str> {
        self.words().into_iter().find(|w| w.starts_with('.'))
    }

    fn is_header(&self) -> bool {
        matches!(
            self.directive(),
            Some(".version" | ".target" | ".address_size")
        )
    }

    fn is_extern(&self) -> bool {
        self.words().contains(&".extern")
    }

    /// The name a `.func`/`.entry` item declares or defines, or a variable's name.
    fn symbol(&self) -> Option<String> {
        let text = self.text;
        if let Some(pos) = text.find(".func").or_else(|| text.find(".entry")) {
            let mut rest = text[pos..].split_once(char::is_whitespace)?.1.trim_start();
            if rest.starts_with('(') {
                // Skip the return-value list.
                let close = rest.find(')')?;
                rest = rest[close + 1..].trim_start();
            }
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '%'))
                .collect();
            return (!name.is_empty()).then_some(name);
        }
        // A variable: the last word before an initializer, array suffix or `;`.
        let decl = text.split(['=', ';']).next()?;
        let last = decl.split_whitespace().last()?;
        let name: String = last
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '$'))
            .collect();
        (!name.is_empty()).then_some(name)
    }

    fn defines(&self) -> Option<String> {
        if self.is_extern() || self.is_header() || self.directive() == Some(".file") {
            return None;
        }
        self.symbol()
    }
}

/// Splits PTX into top-level items, skipping comments for the purpose of
/// finding item boundaries (the comments stay in the item text).
fn items(ptx: &str) -> Vec<Item<'_>> {
    let bytes = ptx.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut depth = 0usize;
    let mut i = 0;
    let mut line_start = true;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < bytes.len() && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
            continue;
        }
        if c == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += 1;
            }
            i += 1;
            continue;
        }
        if depth == 0 && line_start && c == b'.' {
            // Header directives end at the end of their line.
            let line_end = ptx[i..].find('\n').map_or(ptx.len(), |n| i + n);
            let word = ptx[i..line_end].split_whitespace().next().unwrap_or("");
            if matches!(word, ".version" | ".target" | ".address_size" | ".file") {
                out.push(Item {
                    text: &ptx[start..line_end],
                });
                start = line_end;
                i = line_end;
                continue;
            }
        }
        if !c.is_ascii_whitespace() {
            line_start = false;
        }
        match c {
            b'\n' => line_start = true,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    out.push(Item {
                        text: &ptx[start..=i],
                    });
                    start = i + 1;
                }
            }
            b';' if depth == 0 => {
                out.push(Item {
                    text: &ptx[start..=i],
                });
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if !ptx[start.min(ptx.len())..].trim().is_empty() {
        out.push(Item {
            text: &ptx[start.min(ptx.len())..],
        });
    }
    out
}

/// Shifts the file index of a `.file N` or `.loc N …` line by `offset`.
fn shift_file_indices(text: &str, offset: u32) -> String {
    if offset == 0 {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let directive = [".file", ".loc"]
            .into_iter()
            .find(|d| trimmed.starts_with(d) && trimmed[d.len()..].starts_with([' ', '\t']));
        match directive {
            Some(d) => {
                let indent = &line[..line.len() - trimmed.len()];
                let rest = trimmed[d.len()..].trim_start();
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                match digits.parse::<u32>() {
                    Ok(n) => out.push_str(&format!(
                        "{indent}{d} {}{}",
                        n + offset,
                        &rest[digits.len()..]
                    )),
                    Err(_) => out.push_str(line),
                }
            }
            None => out.push_str(line),
        }
    }
    out
}

fn max_file_index(ptx: &str) -> u32 {
    ptx.lines()
        .filter_map(|l| l.trim_start().strip_prefix(".file"))
        .filter_map(|r| r.split_whitespace().next()?.parse::<u32>().ok())
        .max()
        .unwrap_or(0)
}

/// Joins the inputs into one PTX module.
pub fn link(inputs: &[LinkInput]) -> String {
    if let [only] = inputs {
        return only.ptx.clone();
    }
    let parsed: Vec<Vec<Item<'_>>> = inputs.iter().map(|i| items(&i.ptx)).collect();
    let defined: std::collections::HashSet<String> =
        parsed.iter().flatten().filter_map(Item::defines).collect();
    let mut out = String::new();
    let mut file_offset = 0;
    for (n, (input, items)) in inputs.iter().zip(&parsed).enumerate() {
        out.push_str(&format!("\n// ---- {} ----\n", input.name));
        for item in items {
            if n > 0 && item.is_header() {
                continue;
            }
            if item.is_extern() && item.symbol().is_some_and(|s| defined.contains(&s)) {
                continue;
            }
            out.push_str(&shift_file_indices(item.text, file_offset));
        }
        out.push('\n');
        file_offset += max_file_index(&input.ptx);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAIN: &str = ".version 7.5\n.target sm_80\n.address_size 64\n.file 1 \"a.cu\"\n\
        .extern .func (.param .b32 r) helper(.param .b32 x);\n\
        .visible .entry k(.param .u64 p)\n{\n.loc 1 3 0\nret;\n}\n";
    const LIB: &str = ".version 7.5\n.target sm_80\n.address_size 64\n.file 1 \"b.cu\"\n\
        .visible .func (.param .b32 r) helper(.param .b32 x)\n{\n.loc 1 7 0\nret;\n}\n";

    #[test]
    fn single_input_is_unchanged() {
        let one = [LinkInput {
            name: "a".into(),
            ptx: MAIN.into(),
        }];
        assert_eq!(link(&one), MAIN);
    }

    #[test]
    fn joins_inputs_dropping_resolved_externs_and_later_headers() {
        let out = link(&[
            LinkInput {
                name: "a.ptx".into(),
                ptx: MAIN.into(),
            },
            LinkInput {
                name: "b.ptx".into(),
                ptx: LIB.into(),
            },
        ]);
        assert_eq!(out.matches(".version").count(), 1, "{out}");
        assert!(!out.contains(".extern"), "{out}");
        assert!(out.contains(".file 2 \"b.cu\""), "{out}");
        assert!(out.contains(".loc 2 7 0"), "{out}");
        assert!(out.contains(".loc 1 3 0"), "{out}");
        assert!(out.contains("helper(.param .b32 x)\n{"), "{out}");
    }

    #[test]
    fn unresolved_externs_are_kept() {
        let out = link(&[
            LinkInput {
                name: "a".into(),
                ptx: MAIN.into(),
            },
            LinkInput {
                name: "c".into(),
                ptx: ".version 7.5\n.target sm_80\n.global .u32 g;\n".into(),
            },
        ]);
        assert!(out.contains(".extern .func"), "{out}");
        assert!(out.contains(".global .u32 g;"), "{out}");
    }
}
