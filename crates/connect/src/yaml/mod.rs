//! Tidings' entry in a YAML config (Goose's `config.yaml`): read, set, remove under one
//! top-level mapping key, every other byte kept.
//!
//! Each step can refuse, and nothing is written then: saphyr validates the text
//! (invalid YAML is refused with line and column; yaml-edit alone would accept some of it);
//! a scan refuses what we do not edit (tabs in indentation, several documents, anchors,
//! aliases or tags inside the servers block, where replacing our entry could cut a
//! reference); yaml-edit's lossless tree makes the change; then the result is parsed again
//! and compared with the old text: every other top-level key and every other server the
//! same, in the same order, and ours exactly the entry meant (or gone). Why a crate and not
//! our own editor: docs/decisions/connect.md.

use saphyr::{LoadableYamlNode, Scalar, Yaml};
use saphyr_parser::{Event, Parser};
use serde_json::Value;
use tidings_platform::hosts::SERVER_NAME;
use yaml_edit::{MappingBuilder, SequenceBuilder, YamlFile};

use crate::error::EditError;

/// Tidings' entry under `key` in `text`, as JSON, if it has one.
pub fn read(key: &'static str, text: &str) -> Result<Option<Value>, EditError> {
    let docs = load(text)?;
    let Some(root) = root_of(&docs)? else {
        return Ok(None);
    };
    let Some(servers) = servers_of(root, key)? else {
        return Ok(None);
    };
    Ok(get(servers, SERVER_NAME).map(to_json))
}

/// `text` with Tidings' entry under `key` set to `entry` (replaced in place, or appended
/// after the other servers), the key created when missing or empty.
pub fn set(
    key: &'static str,
    text: &str,
    entry: &[(&'static str, Value)],
) -> Result<String, EditError> {
    let docs = load(text)?;
    let root = root_of(&docs)?;
    if let Some(root) = root {
        // Checked before editing: a scalar or list under the key is the user's to fix.
        servers_of(root, key)?;
    }
    refuse_unsupported(key, text)?;
    let fields: Vec<(&str, &Value)> = entry.iter().map(|(k, v)| (*k, v)).collect();
    let ours = || fill_mapping(MappingBuilder::new(), &fields).build_document();
    let servers_block = || {
        MappingBuilder::new()
            .mapping(SERVER_NAME, |m| fill_mapping(m, &fields))
            .build_document()
    };
    let out = if root.is_none() {
        // Empty, or comments only: the new block after whatever is there.
        let fresh = guarded(|| {
            MappingBuilder::new()
                .mapping(key, |m| {
                    m.mapping(SERVER_NAME, |e| fill_mapping(e, &fields))
                })
                .build_document()
                .to_string()
        })?;
        match text.trim_end() {
            "" => fresh,
            kept => format!("{kept}\n{fresh}"),
        }
    } else {
        let file = edit_tree(text)?;
        guarded(|| {
            let mapping = file.document().and_then(|d| d.as_mapping())?;
            match mapping.get_mapping(key) {
                Some(servers) => servers.set(SERVER_NAME, ours()),
                // Missing, or empty (`extensions:` / `~`): a new mapping holding ours.
                None => mapping.set(key, servers_block()),
            }
            Some(file.to_string())
        })?
        .ok_or_else(|| EditError::Unverified("the editor found no top-level mapping".into()))?
    };
    check(key, root, &out, Some(entry))?;
    Ok(out)
}

/// Runs an edit, turning a panic inside the editor (a young crate, on input we did not
/// foresee) into a refusal rather than a crash; nothing has been written at this point.
fn guarded<T>(edit: impl FnOnce() -> T) -> Result<T, EditError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(edit))
        .map_err(|_| EditError::Unverified("the editor stopped on this text".into()))
}

/// `text` without Tidings' entry under `key`, or `None` when it has none. The last server
/// out leaves an empty mapping (`extensions: {}`), which the host reads as no servers.
pub fn remove(key: &'static str, text: &str) -> Result<Option<String>, EditError> {
    let docs = load(text)?;
    let Some(root) = root_of(&docs)? else {
        return Ok(None);
    };
    let Some(servers) = servers_of(root, key)? else {
        return Ok(None);
    };
    if get(servers, SERVER_NAME).is_none() {
        return Ok(None);
    }
    refuse_unsupported(key, text)?;
    let file = edit_tree(text)?;
    let out = guarded(|| {
        file.document()
            .and_then(|d| d.as_mapping())
            .and_then(|m| m.get_mapping(key))
            .and_then(|servers| servers.remove(SERVER_NAME))
            .map(|_| file.to_string())
    })?
    .ok_or_else(|| {
        EditError::Unverified(format!("the editor did not find `{key}.{SERVER_NAME}`"))
    })?;
    check(key, Some(root), &out, None)?;
    Ok(Some(out))
}

/// The documents in `text`, refused with line and column when it is not YAML.
fn load(text: &str) -> Result<Vec<Yaml<'_>>, EditError> {
    refuse_tabs(text)?;
    Yaml::load_from_str(text).map_err(|e| EditError::Invalid {
        format: "YAML",
        line: e.marker().line(),
        column: e.marker().col() + 1,
        message: e.info().to_owned(),
    })
}

/// The top-level mapping; `None` for a file with no document (empty, or comments only).
fn root_of<'a, 'y>(docs: &'a [Yaml<'y>]) -> Result<Option<&'a Yaml<'y>>, EditError> {
    match docs {
        [] => Ok(None),
        [root] if root.is_mapping() => Ok(Some(root)),
        [_] => Err(EditError::NotAnObject { what: "mapping" }),
        // Several documents are refused by `refuse_unsupported` with a position; reading
        // takes the first, as the host does not read the others either.
        [root, ..] if root.is_mapping() => Ok(Some(root)),
        _ => Err(EditError::NotAnObject { what: "mapping" }),
    }
}

/// The servers mapping under `key`: `None` when missing or empty (null), refused when it is
/// anything else.
fn servers_of<'a, 'y>(
    root: &'a Yaml<'y>,
    key: &'static str,
) -> Result<Option<&'a Yaml<'y>>, EditError> {
    match get(root, key) {
        None => Ok(None),
        Some(v) if v.is_null() => Ok(None),
        Some(v) if v.is_mapping() => Ok(Some(v)),
        Some(_) => Err(EditError::KeyNotAnObject {
            key,
            what: "mapping",
        }),
    }
}

/// The value of string key `key` in `mapping`.
fn get<'a, 'y>(mapping: &'a Yaml<'y>, key: &str) -> Option<&'a Yaml<'y>> {
    mapping
        .as_mapping()?
        .iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
}

/// The entries of `mapping` other than `skip`, in order.
fn others<'a, 'y>(mapping: Option<&'a Yaml<'y>>, skip: &str) -> Vec<(&'a Yaml<'y>, &'a Yaml<'y>)> {
    mapping
        .and_then(Yaml::as_mapping)
        .map(|m| m.iter().filter(|(k, _)| k.as_str() != Some(skip)).collect())
        .unwrap_or_default()
}

/// The old text's tree for yaml-edit. It rejects less than saphyr, so a failure here on
/// text saphyr accepted is the editor's limit, not the user's error.
fn edit_tree(text: &str) -> Result<YamlFile, EditError> {
    guarded(|| text.parse::<YamlFile>())?
        .map_err(|e| EditError::Unverified(format!("the editor could not read it: {e}")))
}

/// Reads `out` back and compares it with `before` (the old root, `None` for an empty file):
/// the same keys and values but `key`, the same servers but ours, and ours `entry` (or gone
/// for `None`).
fn check(
    key: &'static str,
    before: Option<&Yaml<'_>>,
    out: &str,
    entry: Option<&[(&'static str, Value)]>,
) -> Result<(), EditError> {
    let failed = |what: &str| EditError::Unverified(what.to_owned());
    let docs = Yaml::load_from_str(out)
        .map_err(|e| failed(&format!("the result is not valid YAML: {}", e.info())))?;
    let after = docs
        .first()
        .filter(|d| d.is_mapping())
        .ok_or_else(|| failed("the result has no top-level mapping"))?;
    if others(before, key) != others(Some(after), key) {
        return Err(failed("another top-level key changed"));
    }
    let old_servers = before.and_then(|b| get(b, key));
    let new_servers = get(after, key).filter(|s| s.is_mapping());
    let Some(new_servers) = new_servers else {
        return Err(failed(&format!("`{key}` is no longer a mapping")));
    };
    if others(old_servers, SERVER_NAME) != others(Some(new_servers), SERVER_NAME) {
        return Err(failed(&format!("another entry of `{key}` changed")));
    }
    let ours = get(new_servers, SERVER_NAME).map(to_json);
    let meant = entry.map(|fields| {
        Value::Object(
            fields
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
        )
    });
    if ours != meant {
        return Err(failed(&format!(
            "`{key}.{SERVER_NAME}` reads back as {}",
            ours.map_or_else(|| "nothing".to_owned(), |v| v.to_string())
        )));
    }
    Ok(())
}

/// Refuses a tab in any line's indentation (YAML forbids it there; parsers differ on what
/// they make of one), with its position.
fn refuse_tabs(text: &str) -> Result<(), EditError> {
    for (n, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        if let Some(column) = line[..indent].find('\t') {
            if line.trim().is_empty() {
                continue;
            }
            return Err(EditError::Unsupported {
                what: "a tab in the indentation".into(),
                line: n + 1,
                column: column + 1,
            });
        }
    }
    Ok(())
}

/// Refuses several documents, and an anchor, alias or tag inside the value of top-level
/// `key`, with the position of the first.
fn refuse_unsupported(key: &str, text: &str) -> Result<(), EditError> {
    let unsupported = |what: String, mark: saphyr::Marker| EditError::Unsupported {
        what,
        line: mark.line(),
        column: mark.col() + 1,
    };
    // Where we are: `depth` counts open collections; at depth 1 (the root mapping) keys and
    // values alternate; `inside` is the depth at which the servers value opened.
    let mut depth = 0usize;
    let mut documents = 0usize;
    let mut expect_key = true;
    let mut at_servers_key = false;
    let mut inside: Option<usize> = None;
    for event in Parser::new_from_str(text) {
        // The text was validated by `load`; a parser error here ends the scan.
        let Ok((event, span)) = event else { break };
        let (anchor, tag, alias) = match &event {
            Event::Scalar(_, _, anchor, tag)
            | Event::SequenceStart(anchor, tag)
            | Event::MappingStart(anchor, tag) => (*anchor, tag.is_some(), false),
            Event::Alias(_) => (0, false, true),
            _ => (0, false, false),
        };
        if inside.is_some() || (depth == 1 && !expect_key && at_servers_key) {
            let what = if alias {
                Some("a YAML alias")
            } else if anchor != 0 {
                Some("a YAML anchor")
            } else if tag {
                Some("a YAML tag")
            } else {
                None
            };
            if let Some(what) = what {
                return Err(unsupported(format!("{what} inside `{key}`"), span.start));
            }
        }
        match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(unsupported(
                        "more than one YAML document".into(),
                        span.start,
                    ));
                }
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                if depth == 1 && !expect_key && at_servers_key {
                    inside = Some(depth);
                }
                depth += 1;
            }
            Event::MappingEnd | Event::SequenceEnd => {
                depth = depth.saturating_sub(1);
                // A collection value of the root mapping ended: a key comes next.
                if depth == 1 {
                    inside = None;
                    at_servers_key = false;
                    expect_key = true;
                }
            }
            Event::Scalar(value, ..) if depth == 1 => {
                if expect_key {
                    at_servers_key = value == key;
                    expect_key = false;
                } else {
                    at_servers_key = false;
                    expect_key = true;
                }
            }
            Event::Alias(_) if depth == 1 && !expect_key => {
                at_servers_key = false;
                expect_key = true;
            }
            _ => {}
        }
    }
    Ok(())
}

/// The entries of a JSON object, for [`fill_mapping`].
fn pairs(map: &serde_json::Map<String, Value>) -> Vec<(&str, &Value)> {
    map.iter().map(|(k, v)| (k.as_str(), v)).collect()
}

/// `fields` into a block mapping builder, in order.
fn fill_mapping(builder: MappingBuilder, fields: &[(&str, &Value)]) -> MappingBuilder {
    fields.iter().fold(builder, |b, &(k, v)| match v {
        Value::Array(items) => b.sequence(k, |s| fill_sequence(s, items)),
        Value::Object(map) => b.mapping(k, |m| fill_mapping(m, &pairs(map))),
        Value::String(s) => b.pair(k, s.as_str()),
        Value::Bool(x) => b.pair(k, *x),
        Value::Number(n) => match n.as_i64() {
            Some(i) => b.pair(k, i),
            None => b.pair(k, n.as_f64().unwrap_or_default()),
        },
        Value::Null => b.pair(k, None::<&str>),
    })
}

/// `items` into a block sequence builder.
fn fill_sequence(builder: SequenceBuilder, items: &[Value]) -> SequenceBuilder {
    items.iter().fold(builder, |b, v| match v {
        Value::Array(inner) => b.sequence(|s| fill_sequence(s, inner)),
        Value::Object(map) => b.mapping(|m| fill_mapping(m, &pairs(map))),
        Value::String(s) => b.item(s.as_str()),
        Value::Bool(x) => b.item(*x),
        Value::Number(n) => match n.as_i64() {
            Some(i) => b.item(i),
            None => b.item(n.as_f64().unwrap_or_default()),
        },
        Value::Null => b.item(None::<&str>),
    })
}

/// A parsed YAML node as JSON: scalars, sequences, mappings with their keys as text.
fn to_json(node: &Yaml<'_>) -> Value {
    match node {
        Yaml::Value(scalar) => match scalar {
            Scalar::Null => Value::Null,
            Scalar::Boolean(b) => Value::Bool(*b),
            Scalar::Integer(i) => Value::from(*i),
            Scalar::FloatingPoint(f) => Value::from(f.into_inner()),
            Scalar::String(s) => Value::String(s.to_string()),
        },
        Yaml::Sequence(items) => Value::Array(items.iter().map(to_json).collect()),
        Yaml::Mapping(map) => {
            Value::Object(map.iter().map(|(k, v)| (key_text(k), to_json(v))).collect())
        }
        Yaml::Tagged(_, inner) => to_json(inner),
        Yaml::Representation(text, ..) => Value::String(text.to_string()),
        Yaml::Alias(_) | Yaml::BadValue => Value::Null,
    }
}

/// A mapping key as text (`1: x` has the key "1").
fn key_text(key: &Yaml<'_>) -> String {
    match to_json(key) {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests;
