//! What the vendor dialects share: the lenient field type their per-entry serde
//! structs are made of, the walk over `hooks: { Event: [entries] }`, the defaults of
//! a vendor command hook, and the JSON Schema generator for their config formats.
//!
//! Each vendor dialect declares its entries as serde structs whose fields are
//! [`Lenient`]: deserializing an entry never fails on a mistyped field (the raw value
//! is kept, so the compile step can warn with its path and go on), and the same
//! structs derive the published schema (`schemas/dialects/`), so the parser and the
//! schema cannot drift apart. The vendors' parsers use this module, never the other
//! way round: gathering each vendor's schema and keys is [`super::schemas`]' job.

use std::borrow::Cow;
use std::path::Path;
use std::time::Duration;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::dialect::{Dialect, HookMatcher, HookOptions, HookSpec, Scope};
use crate::event::CanonicalEvent;
use crate::outcome::FailurePolicy;

/// A field read leniently: the typed value when it has the declared type, else the
/// raw JSON (kept for the warning). Its schema is the declared type's.
#[derive(Debug, Clone, PartialEq)]
pub enum Lenient<T> {
    /// The value has the declared type.
    Ok(T),
    /// It does not: the value as written.
    Bad(Value),
}

impl<T> Lenient<T> {
    /// The typed value, if the field had the declared type.
    pub fn ok(&self) -> Option<&T> {
        match self {
            Lenient::Ok(t) => Some(t),
            Lenient::Bad(_) => None,
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Value::deserialize(d)?;
        Ok(match T::deserialize(&raw) {
            Ok(t) => Lenient::Ok(t),
            Err(_) => Lenient::Bad(raw),
        })
    }
}

impl<T: JsonSchema> JsonSchema for Lenient<T> {
    fn inline_schema() -> bool {
        T::inline_schema()
    }
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }
    fn schema_id() -> Cow<'static, str> {
        T::schema_id()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        T::json_schema(generator)
    }
}

/// An optional lenient field as the old `obj.get(key)` view: absent and `null` are
/// `None` (serde reads `null` into `None`).
pub type Field<T> = Option<Lenient<T>>;

/// A config file's name as its messages start with it: its directory and file name
/// (`hooks/guard.json`), or `default` when the path has no file name.
pub fn display_name(source: &std::path::Path, default: &str) -> String {
    let file = source
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| default.to_string());
    match source.parent().and_then(std::path::Path::file_name) {
        Some(dir) if !dir.is_empty() => format!("{}/{file}", dir.to_string_lossy()),
        _ => file,
    }
}

/// The raw text of a matcher as written: trimmed, `None` when absent or blank, the
/// JSON text of a non-string.
pub fn matcher_source(raw: &Field<String>) -> Option<String> {
    match raw {
        None => None,
        Some(Lenient::Ok(s)) if s.trim().is_empty() => None,
        Some(Lenient::Ok(s)) => Some(s.trim().to_string()),
        Some(Lenient::Bad(other)) => Some(other.to_string()),
    }
}

/// A lenient string field that is present with text (trimmed).
pub fn text(field: &Field<String>) -> Option<String> {
    match field {
        Some(Lenient::Ok(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        _ => None,
    }
}

/// The raw JSON of a field for a message (`none` when absent).
pub fn raw_text<T: serde::Serialize>(field: &Field<T>) -> String {
    match field {
        None => "none".to_string(),
        Some(Lenient::Ok(t)) => serde_json::to_string(t).unwrap_or_default(),
        Some(Lenient::Bad(v)) => v.to_string(),
    }
}

/// A lenient field back as the JSON it was written as (`None` when absent).
pub fn raw_value<T: serde::Serialize>(field: &Field<T>) -> Option<Value> {
    match field {
        None => None,
        Some(Lenient::Ok(t)) => serde_json::to_value(t).ok(),
        Some(Lenient::Bad(v)) => Some(v.clone()),
    }
}

/// Parses an entry of type `T` from one array element; `None` when the element is
/// not an object (the caller warns: "must be an object").
pub fn entry<T: DeserializeOwned>(value: &Value) -> Option<T> {
    if !value.is_object() {
        return None;
    }
    T::deserialize(value).ok()
}

/// One element of an event's array: its 1-based position and the raw value.
pub struct Element<'a> {
    /// 1-based position in the event's array (`entry N`, `group N`).
    pub n: usize,
    /// The element as written.
    pub value: &'a Value,
}

/// The elements of an event's array with their 1-based positions.
pub fn elements(items: &[Value]) -> impl Iterator<Item = Element<'_>> {
    items
        .iter()
        .enumerate()
        .map(|(i, value)| Element { n: i + 1, value })
}

/// Parses a vendor `timeout` in seconds: a positive finite number.
pub fn timeout_secs(field: &Lenient<f64>) -> Option<Duration> {
    match field {
        Lenient::Ok(s) if s.is_finite() && *s > 0.0 && *s < 1.0e9 => {
            Some(Duration::from_millis((s * 1000.0).round().max(1.0) as u64))
        }
        _ => None,
    }
}

/// What every vendor command hook starts as: fires always, fails closed unless a
/// setting says otherwise, sandboxed with network, awaited, no Copse options. The
/// dialect then sets what its entry declares.
#[derive(Clone, Copy)]
pub struct VendorHook<'a> {
    /// The declaring dialect.
    pub dialect: Dialect,
    /// The wire event as written.
    pub event: &'a str,
    /// The canonical event (`None`: listed, never run).
    pub canonical: Option<CanonicalEvent>,
    /// The config file.
    pub source: &'a Path,
    /// User or project.
    pub scope: Scope,
    /// The workspace root of a project file.
    pub root: Option<&'a Path>,
    /// 1-based position within its event's array.
    pub entry: usize,
}

impl VendorHook<'_> {
    /// The spec with the vendor defaults for `command`.
    pub fn command(&self, command: String, timeout: Duration) -> HookSpec {
        HookSpec {
            dialect: self.dialect,
            event: self.event.to_string(),
            canonical: self.canonical,
            command,
            matcher_source: None,
            matcher: HookMatcher::Always,
            glob: None,
            // The vendor leaves a failed hook to the host: the seed's closed default,
            // which the per-dialect `failurePolicy` setting may open.
            policy: FailurePolicy::Closed,
            timeout,
            source: self.source.to_path_buf(),
            scope: self.scope,
            root: self.root.map(Path::to_path_buf),
            entry: self.entry,
            sandbox: true,
            network: true,
            run_async: false,
            loop_limit: None,
            options: HookOptions::default(),
        }
    }
}

/// The schema of a vendor's `hooks` object: one optional array of `Entry` per
/// published event name (the list the parser recognises).
pub fn events_schema<Entry: JsonSchema>(
    generator: &mut SchemaGenerator,
    events: &[&str],
    description: &str,
) -> Schema {
    let item = generator.subschema_for::<Vec<Entry>>();
    let mut properties = Map::new();
    for event in events {
        properties.insert((*event).to_string(), item.clone().to_value());
    }
    let mut schema = Map::new();
    schema.insert("description".into(), Value::from(description));
    schema.insert("type".into(), Value::from("object"));
    schema.insert("properties".into(), Value::Object(properties));
    schema.insert("additionalProperties".into(), Value::Bool(false));
    Schema::from(schema)
}

/// The JSON Schema of a vendor config format rooted at `T` (draft-07, as the Copse
/// schema): integer widths dropped, doc paragraphs unwrapped, identifying keys first.
pub fn vendor_schema<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft07()
        .with_transform(schemars::transform::RecursiveTransform(|s: &mut Schema| {
            s.remove("format");
            if let Some(Value::String(d)) = s.get_mut("description") {
                *d = unwrap_paragraphs(d);
            }
        }))
        .into_generator();
    let schema = generator.into_root_schema_for::<T>().to_value();
    let Value::Object(mut rest) = schema else {
        return schema;
    };
    let mut ordered = Map::new();
    for key in ["$schema", "title", "description"] {
        if let Some(v) = rest.remove(key) {
            ordered.insert(key.to_string(), v);
        }
    }
    ordered.extend(rest);
    Value::Object(ordered)
}

/// A schema as its committed file's text (pretty, trailing newline).
pub fn schema_text(schema: &Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).unwrap_or_default();
    text.push('\n');
    text
}

/// The keys an entry struct `T` declares (the properties of its schema): what lint
/// accepts without an "unknown key" warning.
pub fn declared_keys<T: JsonSchema>() -> Vec<String> {
    let schema = schemars::generate::SchemaSettings::draft07()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// Joins the lines of each paragraph with spaces, keeping blank-line breaks.
fn unwrap_paragraphs(text: &str) -> String {
    text.split("\n\n")
        .map(|p| p.lines().map(str::trim).collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Whether a value is an object, read without copying it: the `hooks` object of a
/// config is checked this way, and its events are then read one entry at a time from
/// the document itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A JSON object.
    Object,
    /// Anything else (never `null`: that reads as absent).
    Other,
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Shape;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Shape::Object)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Shape::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
                Ok(Shape::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
                Ok(Shape::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
                Ok(Shape::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
                Ok(Shape::Other)
            }
            fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
                Ok(Shape::Other)
            }
            fn visit_unit<E>(self) -> Result<Shape, E> {
                Ok(Shape::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// The events of a config's `hooks` key, given how it deserialized.
pub enum Events<'a> {
    /// No `hooks` (or `null`).
    Absent,
    /// Present but not an object.
    NotObject,
    /// The events, in file order.
    Object(&'a Map<String, Value>),
}

/// Reads the `hooks` key of `doc` whose shape a file struct recorded.
pub fn events<'a>(doc: &'a Value, shape: Option<Shape>) -> Events<'a> {
    match (shape, doc.get("hooks").and_then(Value::as_object)) {
        (None, _) => Events::Absent,
        (Some(Shape::Object), Some(h)) => Events::Object(h),
        _ => Events::NotObject,
    }
}
