//! Tidings' entry in a host's config text: read, set, remove, keeping every other byte as
//! written (JSON and JSONC through jsonc-parser's concrete syntax tree, TOML through
//! `toml_edit`, YAML through `super::yaml`). Pure: text in, text out; the file handling is in
//! `file`.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::Value;
use tidings_platform::Format;
use tidings_platform::hosts::SERVER_NAME;

pub use crate::error::EditError;

/// The parts of an entry a check and a listing need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The program the host starts.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment, in file order.
    pub env: Vec<(String, String)>,
}

impl Entry {
    /// The fields of a JSON entry (`command`, `args`, `env`; Goose's `cmd` and `envs`);
    /// `None` without a command.
    pub fn from_json(value: &Value) -> Option<Entry> {
        let field = |names: [&str; 2]| names.into_iter().find_map(|n| value.get(n));
        let command = field(["command", "cmd"])?.as_str()?.to_owned();
        let args = value
            .get("args")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let env = field(["env", "envs"])
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        Some(Entry { command, args, env })
    }
}

/// Tidings' entry in `text`, if it has one.
pub fn read(format: Format, key: &'static str, text: &str) -> Result<Option<Entry>, EditError> {
    match format {
        Format::Toml => return toml_read(key, text),
        Format::Yaml => {
            return Ok(super::yaml::read(key, text)?.and_then(|v| Entry::from_json(&v)));
        }
        Format::Json | Format::Jsonc | Format::JsonComments => {}
    }
    let root = json_parse(format, text)?;
    let Some(servers) = json_servers(&root, key, false)? else {
        return Ok(None);
    };
    Ok(servers
        .get(SERVER_NAME)
        .and_then(|prop| prop.value())
        .and_then(|v| v.to_serde_value())
        .and_then(|v| Entry::from_json(&v)))
}

/// `text` with Tidings' entry set to `entry` (added after the other servers, or replaced in
/// place), the servers key created if missing.
pub fn set(
    format: Format,
    key: &'static str,
    text: &str,
    entry: &[(&'static str, Value)],
) -> Result<String, EditError> {
    match format {
        Format::Toml => return toml_set(key, text, entry),
        Format::Yaml => return super::yaml::set(key, text, entry),
        Format::Json | Format::Jsonc | Format::JsonComments => {}
    }
    let root = json_parse(format, text)?;
    let servers = json_servers(&root, key, true)?.expect("created when missing");
    match servers.get(SERVER_NAME) {
        Some(prop) => prop.set_value(cst_object(entry)),
        None => {
            servers.append(SERVER_NAME, cst_object(entry));
        }
    }
    Ok(root.to_string())
}

/// `text` without Tidings' entry, or `None` when it has none.
pub fn remove(format: Format, key: &'static str, text: &str) -> Result<Option<String>, EditError> {
    match format {
        Format::Toml => return toml_remove(key, text),
        Format::Yaml => return super::yaml::remove(key, text),
        Format::Json | Format::Jsonc | Format::JsonComments => {}
    }
    let root = json_parse(format, text)?;
    let Some(prop) = json_servers(&root, key, false)?.and_then(|s| s.get(SERVER_NAME)) else {
        return Ok(None);
    };
    prop.remove();
    Ok(Some(root.to_string()))
}

/// Parses strict JSON, JSON with comments, or JSONC. Comments for the last two, trailing
/// commas for JSONC only; nothing else a JSON5-ish parser allows, so what we accept the host
/// accepts too.
fn json_parse(format: Format, text: &str) -> Result<CstRootNode, EditError> {
    let comments = matches!(format, Format::Jsonc | Format::JsonComments);
    let jsonc = format == Format::Jsonc;
    // The CST keeps comments whatever the options say, so strict JSON is checked by
    // serde_json first (a blank file stands for an empty config).
    if !comments
        && !text.trim().is_empty()
        && let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text)
    {
        let message = e.to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(m, _)| m)
            .to_owned();
        return Err(EditError::Invalid {
            format: "JSON",
            line: e.line(),
            column: e.column(),
            message,
        });
    }
    let options = ParseOptions {
        allow_comments: comments,
        allow_loose_object_property_names: false,
        allow_trailing_commas: jsonc,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_extended_string_escapes: false,
        allow_non_finite_numbers: false,
    };
    let root = CstRootNode::parse(text, &options).map_err(|e| EditError::Invalid {
        format: if jsonc { "JSON with comments" } else { "JSON" },
        line: e.line_display(),
        column: e.column_display(),
        message: e.kind().to_string(),
    })?;
    // An empty (or blank) file is an empty config; anything else must be an object.
    if root.value().is_some() && root.object_value().is_none() {
        return Err(EditError::NotAnObject { what: "object" });
    }
    Ok(root)
}

/// The servers object; created (with the root object) when `create`.
fn json_servers(
    root: &CstRootNode,
    key: &'static str,
    create: bool,
) -> Result<Option<CstObject>, EditError> {
    let not_object = EditError::KeyNotAnObject {
        key,
        what: "object",
    };
    let object = if create {
        root.object_value_or_set()
    } else {
        match root.object_value() {
            Some(object) => object,
            None => return Ok(None),
        }
    };
    match object.get(key) {
        Some(prop) => prop.object_value().map(Some).ok_or(not_object),
        None if create => object
            .object_value_or_create(key)
            .map(Some)
            .ok_or(not_object),
        None => Ok(None),
    }
}

/// The entry's fields as a CST object, in their order.
fn cst_object(fields: &[(&'static str, Value)]) -> CstInputValue {
    CstInputValue::Object(
        fields
            .iter()
            .map(|(k, v)| ((*k).to_owned(), cst_value(v)))
            .collect(),
    )
}

/// A JSON value as the CST builds it.
fn cst_value(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(cst_value).collect()),
        Value::Object(map) => {
            CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), cst_value(v))).collect())
        }
    }
}

fn toml_parse(text: &str) -> Result<toml_edit::DocumentMut, EditError> {
    text.parse::<toml_edit::DocumentMut>().map_err(|e| {
        let start = e.span().map_or(0, |s| s.start);
        let (line, column) = line_column(text, start);
        EditError::Invalid {
            format: "TOML",
            line,
            column,
            message: e.message().to_owned(),
        }
    })
}

/// 1-based line and column (in characters) of byte `offset`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

fn toml_read(key: &'static str, text: &str) -> Result<Option<Entry>, EditError> {
    let doc = toml_parse(text)?;
    let Some(servers) = doc.get(key) else {
        return Ok(None);
    };
    let servers = servers
        .as_table_like()
        .ok_or(EditError::KeyNotAnObject { key, what: "table" })?;
    let Some(entry) = servers.get(SERVER_NAME).and_then(|e| e.as_table_like()) else {
        return Ok(None);
    };
    let Some(command) = entry.get("command").and_then(|c| c.as_str()) else {
        return Ok(None);
    };
    let strings = |item: Option<&toml_edit::Item>| -> Vec<String> {
        item.and_then(toml_edit::Item::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let env = entry
        .get("env")
        .and_then(toml_edit::Item::as_table_like)
        .map(|t| {
            t.iter()
                .filter_map(|(k, v)| Some((k.to_owned(), v.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default();
    Ok(Some(Entry {
        command: command.to_owned(),
        args: strings(entry.get("args")),
        env,
    }))
}

fn toml_set(
    key: &'static str,
    text: &str,
    entry: &[(&'static str, Value)],
) -> Result<String, EditError> {
    let mut doc = toml_parse(text)?;
    if !doc.contains_key(key) {
        // `[mcp_servers.tidings]` alone, without an empty `[mcp_servers]` above it.
        let mut table = toml_edit::Table::new();
        table.set_implicit(true);
        doc.insert(key, toml_edit::Item::Table(table));
    }
    let is_table = doc[key].is_table();
    let servers = doc[key]
        .as_table_like_mut()
        .ok_or(EditError::KeyNotAnObject { key, what: "table" })?;
    let fields = entry.iter().map(|(k, v)| (*k, v));
    if let Some(existing) = servers
        .get_mut(SERVER_NAME)
        .and_then(toml_edit::Item::as_table_like_mut)
    {
        // In place: the table keeps its position and header.
        existing.clear();
        for (k, v) in fields {
            existing.insert(k, toml_edit::Item::Value(toml_value(v)));
        }
    } else {
        let mut table = toml_edit::Table::new();
        for (k, v) in fields {
            table.insert(k, toml_edit::Item::Value(toml_value(v)));
        }
        let item = if is_table {
            toml_edit::Item::Table(table)
        } else {
            toml_edit::Item::Value(toml_edit::Value::InlineTable(table.into_inline_table()))
        };
        servers.insert(SERVER_NAME, item);
    }
    Ok(doc.to_string())
}

fn toml_remove(key: &'static str, text: &str) -> Result<Option<String>, EditError> {
    let mut doc = toml_parse(text)?;
    let Some(servers) = doc.get_mut(key) else {
        return Ok(None);
    };
    let servers = servers
        .as_table_like_mut()
        .ok_or(EditError::KeyNotAnObject { key, what: "table" })?;
    if servers.remove(SERVER_NAME).is_none() {
        return Ok(None);
    }
    Ok(Some(doc.to_string()))
}

/// A JSON scalar or array as a TOML value (entries hold nothing else).
fn toml_value(value: &Value) -> toml_edit::Value {
    match value {
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => n
            .as_i64()
            .map_or_else(|| n.as_f64().unwrap_or(0.0).into(), Into::into),
        Value::String(s) => s.as_str().into(),
        Value::Array(items) => toml_edit::Value::Array(items.iter().map(toml_value).collect()),
        Value::Object(map) => {
            let mut table = toml_edit::InlineTable::new();
            for (k, v) in map {
                table.insert(k, toml_value(v));
            }
            toml_edit::Value::InlineTable(table)
        }
        Value::Null => "".into(),
    }
}

#[cfg(test)]
mod tests;
