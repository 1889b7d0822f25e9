//! Where spans go and how: the standard `OTEL_*` environment variables.
//!
//! The variables and their precedence are the OpenTelemetry specification's (the
//! OTLP exporter's and the SDK's environment variables): a signal-specific variable
//! (`OTEL_EXPORTER_OTLP_TRACES_*`) wins over the generic one, an empty value counts
//! as unset, and a bad value is a warning (the default applies), never a failure.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `service.name` when neither `OTEL_SERVICE_NAME` nor `OTEL_RESOURCE_ATTRIBUTES`
/// names one.
pub const DEFAULT_SERVICE_NAME: &str = "copse-hooks";
/// How long one export request may take (the specification's default, 10 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// How many gates wait for export at most; a gate past that is dropped and counted.
pub const DEFAULT_MAX_QUEUE: usize = 2048;
/// The most spans in one export request.
pub const DEFAULT_MAX_BATCH: usize = 512;
/// How long a span waits for its batch to fill before it is sent anyway.
pub const DEFAULT_SCHEDULE_DELAY: Duration = Duration::from_secs(1);
/// How long [`super::Exporter::shutdown`] may take when the caller has no bound of
/// its own (and when an exporter is dropped without a shutdown).
pub const DEFAULT_SHUTDOWN: Duration = Duration::from_secs(2);

/// Where and how spans are exported. Built from the environment
/// ([`ExportConfig::from_env`]) or by a host from its own settings
/// ([`ExportConfig::new`], then the fields).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExportConfig {
    /// The full URL spans are POSTed to (OTLP/HTTP, protobuf), e.g.
    /// `http://collector:4318/v1/traces`.
    pub traces_url: String,
    /// Extra request headers (typically credentials). Their values are never
    /// printed: `Debug` shows the names only.
    pub headers: Vec<(String, String)>,
    /// How long one export request may take.
    pub timeout: Duration,
    /// The resource attributes of every span, in order (`service.name`, `host.name`,
    /// `process.owner`, `telemetry.sdk.*`, then `OTEL_RESOURCE_ATTRIBUTES`).
    pub resource: Vec<(String, String)>,
    /// How many gates may wait for export (`OTEL_BSP_MAX_QUEUE_SIZE`).
    pub max_queue: usize,
    /// The most spans per request (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`).
    pub max_batch: usize,
    /// How long a span waits for its batch to fill (`OTEL_BSP_SCHEDULE_DELAY`).
    pub schedule_delay: Duration,
    /// Export payload bodies (the tool input or prompt, each hook's stdin and
    /// stdout), redacted and capped; off by default (`includePayloads` in the
    /// settings).
    pub include_payloads: bool,
}

impl fmt::Debug for ExportConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let header_names: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("ExportConfig")
            .field("traces_url", &self.traces_url)
            .field("headers", &header_names)
            .field("timeout", &self.timeout)
            .field("resource", &self.resource)
            .field("max_queue", &self.max_queue)
            .field("max_batch", &self.max_batch)
            .field("schedule_delay", &self.schedule_delay)
            .field("include_payloads", &self.include_payloads)
            .finish()
    }
}

/// What [`ExportConfig::from_env`] read: the configuration, if export is on, and
/// what was wrong with the variables (each warning names the variable; a header's
/// value never appears in one).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct EnvReading {
    /// `None` when no endpoint is set, `OTEL_SDK_DISABLED=true`,
    /// `OTEL_TRACES_EXPORTER` names no OTLP exporter, or the endpoint is unusable.
    pub config: Option<ExportConfig>,
    /// One line per problem, for `doctor` and the logs.
    pub warnings: Vec<String>,
}

impl ExportConfig {
    /// Export to `traces_url` (used as is) with the defaults: no headers, a 10 s
    /// timeout, the detected resource (`service.name` `copse-hooks`, `host.name`,
    /// `process.owner`, `telemetry.sdk.*`), a queue of 2048 gates, batches of 512
    /// spans sent at least every second.
    pub fn new(traces_url: impl Into<String>) -> ExportConfig {
        ExportConfig {
            traces_url: traces_url.into(),
            headers: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            resource: detected_resource(&[]),
            max_queue: DEFAULT_MAX_QUEUE,
            max_batch: DEFAULT_MAX_BATCH,
            schedule_delay: DEFAULT_SCHEDULE_DELAY,
            include_payloads: false,
        }
    }

    /// Reads the standard variables from `env` (the host's environment, as
    /// `EngineConfig::environment` holds it): [`ExportConfig::resolve`] with no
    /// settings.
    ///
    /// * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is) or
    ///   `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/traces` appended); neither set: no export;
    /// * `OTEL_EXPORTER_OTLP_[TRACES_]HEADERS`: `name=value,…`, values percent-decoded;
    /// * `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`: `http/protobuf` (the default); `grpc`
    ///   and `http/json` are warned about and spans still go as `http/protobuf`;
    /// * `OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT`: milliseconds;
    /// * `OTEL_EXPORTER_OTLP_[TRACES_]COMPRESSION`: only `none` (gzip is warned about);
    /// * `OTEL_SERVICE_NAME` (default `copse-hooks`) and `OTEL_RESOURCE_ATTRIBUTES`;
    /// * `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_BSP_MAX_QUEUE_SIZE`,
    ///   `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`;
    /// * `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`: no export.
    pub fn from_env(env: &[(OsString, OsString)]) -> EnvReading {
        ExportConfig::resolve(env, None, None)
    }

    /// Where spans go from three layers: `pinned` (the `"otel"` object of the
    /// machine's managed settings), the standard `OTEL_*` variables in `env` (as
    /// [`ExportConfig::from_env`] reads them), and `user` (the `"otel"` object of
    /// `$COPSE_DIR/settings.json`); each object has the shape of [`OtelSettings`].
    ///
    /// * `pinned` wins over everything. A pinned endpoint (`tracesEndpoint`, or
    ///   `endpoint` with `/v1/traces` appended) is where spans go: neither the
    ///   variables nor the user's settings can change it or turn export off (each
    ///   attempt is a warning). A pinned `"enabled": false` turns export off, whatever
    ///   the others say. Every other pinned key wins over the same key elsewhere.
    /// * Otherwise the variables win over the user's settings, key by key; either one
    ///   can turn export off (`OTEL_SDK_DISABLED=true`, `OTEL_TRACES_EXPORTER=none`,
    ///   `"enabled": false`).
    /// * Headers and resource attributes merge by name, the higher layer winning.
    ///
    /// A key that cannot be read is a warning naming the layer and the key (never a
    /// header's value), and the rest applies.
    pub fn resolve(
        env: &[(OsString, OsString)],
        user: Option<&serde_json::Value>,
        pinned: Option<&serde_json::Value>,
    ) -> EnvReading {
        let mut reading = EnvReading::default();
        let warnings = &mut reading.warnings;
        let pinned = OtelSettings::read(pinned, MANAGED, warnings);
        let user = OtelSettings::read(user, SETTINGS, warnings);
        let get = |name: &str, warnings: &mut Vec<String>| lookup(env, name, warnings);

        if pinned.enabled == Some(false) {
            return reading;
        }
        let pinned_url = pinned.traces_url(MANAGED);
        let mut env_off = None;
        if let Some(v) = get("OTEL_SDK_DISABLED", warnings) {
            if v.eq_ignore_ascii_case("true") {
                env_off = Some("OTEL_SDK_DISABLED=true".to_owned());
            } else if !v.eq_ignore_ascii_case("false") {
                warnings.push(format!(
                    "OTEL_SDK_DISABLED={v:?} is neither true nor false: taken as false"
                ));
            }
        }
        if env_off.is_none()
            && let Some(v) = get("OTEL_TRACES_EXPORTER", warnings)
        {
            let names: Vec<&str> = v.split(',').map(str::trim).collect();
            if names.iter().any(|n| n.eq_ignore_ascii_case("none")) {
                env_off = Some(format!("OTEL_TRACES_EXPORTER={v:?}"));
            } else if !names.iter().any(|n| n.eq_ignore_ascii_case("otlp")) {
                if pinned_url.is_none() {
                    warnings.push(format!(
                        "OTEL_TRACES_EXPORTER={v:?}: copse-hooks exports only over OTLP; no spans are exported"
                    ));
                }
                env_off = Some(format!("OTEL_TRACES_EXPORTER={v:?}"));
            }
        }
        let user_off = (user.enabled == Some(false)).then(|| format!("{SETTINGS}.enabled=false"));

        let env_url = if let Some(v) = get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", warnings) {
            Some((
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT".to_owned(),
                v.trim().to_owned(),
            ))
        } else {
            get("OTEL_EXPORTER_OTLP_ENDPOINT", warnings)
                .map(|v| ("OTEL_EXPORTER_OTLP_ENDPOINT".to_owned(), base_to_traces(&v)))
        };
        let user_url = user.traces_url(SETTINGS);

        let (endpoint_var, url) = match pinned_url {
            Some(pinned_url) => {
                for (name, _) in env_url.iter().chain(user_url.iter()) {
                    warnings.push(format!(
                        "{name} is ignored: the machine's managed settings pin where spans go"
                    ));
                }
                for off in env_off.iter().chain(user_off.iter()) {
                    warnings.push(format!(
                        "{off} is ignored: the machine's managed settings turn export on"
                    ));
                }
                pinned_url
            }
            None => {
                if env_off.is_some() || user_off.is_some() {
                    return reading;
                }
                match env_url.or(user_url) {
                    Some(found) => found,
                    None => {
                        if user.enabled == Some(true) || pinned.enabled == Some(true) {
                            warnings.push(format!(
                                "export is enabled but no endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT, or {SETTINGS}.endpoint); no spans are exported"
                            ));
                        }
                        return reading;
                    }
                }
            }
        };
        if let Err(why) = check_url(&url) {
            warnings.push(format!("{endpoint_var}: {why}; no spans are exported"));
            return reading;
        }

        let mut config = ExportConfig::new(url);
        config.resource = detected_resource(env);

        // Each key: pinned, else the variable, else the user's settings.
        let (name, protocol) = signal(env, "PROTOCOL", warnings);
        let protocol = pick(
            pinned.protocol.clone(),
            MANAGED,
            protocol,
            name,
            user.protocol.clone(),
            "protocol",
        );
        if let Some((name, p)) = protocol {
            match p.trim() {
                "http/protobuf" => {}
                "grpc" => warnings.push(format!(
                    "{name}=grpc is not supported: use http/protobuf (the collector's OTLP/HTTP port, 4318); spans are sent as http/protobuf to {}",
                    config.traces_url
                )),
                "http/json" => warnings.push(format!(
                    "{name}=http/json is not supported: spans are sent as http/protobuf"
                )),
                other => warnings.push(format!(
                    "{name}={other:?} is not a known protocol (http/protobuf, http/json, grpc): spans are sent as http/protobuf"
                )),
            }
        }

        let mut headers = Vec::new();
        if let Some(h) = &user.headers {
            merge_headers(
                &mut headers,
                checked_headers(&format!("{SETTINGS}.headers"), h, warnings),
            );
        }
        let (name, env_headers) = signal(env, "HEADERS", warnings);
        if let Some(h) = env_headers {
            merge_headers(&mut headers, parse_headers(&name, &h, warnings));
        }
        if let Some(h) = &pinned.headers {
            merge_headers(
                &mut headers,
                checked_headers(&format!("{MANAGED}.headers"), h, warnings),
            );
        }
        config.headers = headers;

        let (name, timeout) = signal(env, "TIMEOUT", warnings);
        let env_timeout = timeout.and_then(|t| positive(&name, &t, warnings));
        let timeout = pinned
            .timeout_ms
            .filter(|ms| nonzero(*ms, MANAGED, warnings))
            .or(env_timeout)
            .or(user
                .timeout_ms
                .filter(|ms| nonzero(*ms, SETTINGS, warnings)));
        if let Some(ms) = timeout {
            config.timeout = Duration::from_millis(ms);
        }

        let (name, compression) = signal(env, "COMPRESSION", warnings);
        if let Some(c) = compression
            && !c.trim().eq_ignore_ascii_case("none")
        {
            warnings.push(format!(
                "{name}={c:?} is not supported: spans are sent uncompressed"
            ));
        }
        for suffix in ["CERTIFICATE", "CLIENT_KEY", "CLIENT_CERTIFICATE"] {
            let (name, value) = signal(env, suffix, warnings);
            if value.is_some() {
                warnings.push(format!(
                    "{name} is not supported: the collector's certificate is checked against the bundled web roots, and no client certificate is sent"
                ));
            }
        }

        // The resource, lowest layer first: a later value replaces an earlier one.
        let service = |s: &Option<String>| {
            s.as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        for (k, v) in user.resource_attributes.iter().flatten() {
            set(&mut config.resource, k.clone(), v.clone());
        }
        if let Some(s) = service(&user.service_name) {
            set(&mut config.resource, "service.name".to_owned(), s);
        }
        if let Some(attrs) = get("OTEL_RESOURCE_ATTRIBUTES", warnings) {
            for (k, v) in parse_pairs("OTEL_RESOURCE_ATTRIBUTES", &attrs, warnings) {
                set(&mut config.resource, k, v);
            }
        }
        if let Some(s) = get("OTEL_SERVICE_NAME", warnings) {
            set(
                &mut config.resource,
                "service.name".to_owned(),
                s.trim().to_owned(),
            );
        }
        for (k, v) in pinned.resource_attributes.iter().flatten() {
            set(&mut config.resource, k.clone(), v.clone());
        }
        if let Some(s) = service(&pinned.service_name) {
            set(&mut config.resource, "service.name".to_owned(), s);
        }

        if let Some(v) = get("OTEL_BSP_SCHEDULE_DELAY", warnings)
            && let Some(ms) = positive("OTEL_BSP_SCHEDULE_DELAY", &v, warnings)
        {
            config.schedule_delay = Duration::from_millis(ms);
        }
        if let Some(v) = get("OTEL_BSP_MAX_QUEUE_SIZE", warnings)
            && let Some(n) = positive("OTEL_BSP_MAX_QUEUE_SIZE", &v, warnings)
        {
            config.max_queue = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(v) = get("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", warnings)
            && let Some(n) = positive("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", &v, warnings)
        {
            config.max_batch = usize::try_from(n).unwrap_or(usize::MAX);
        }
        config.include_payloads = pinned
            .include_payloads
            .or(user.include_payloads)
            .unwrap_or(false);
        reading.config = Some(config);
        reading
    }
}

/// How warnings name the managed layer's keys.
const MANAGED: &str = "managed otel";
/// How warnings name the user's settings keys.
const SETTINGS: &str = "settings otel";

/// The `"otel"` object of `$COPSE_DIR/settings.json`, and of the machine's managed
/// settings: where and how gates are exported, beside the standard `OTEL_*`
/// variables ([`ExportConfig::resolve`] says which wins). Every key is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct OtelSettings {
    /// `false` turns export off (the user's: unless the machine's managed settings
    /// turn it on); `true` without an endpoint is a warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// The collector's base URL (`http://collector:4318`); `/v1/traces` is appended,
    /// as with `OTEL_EXPORTER_OTLP_ENDPOINT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// The full URL spans are POSTed to, used as is (wins over `endpoint`), as with
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traces_endpoint: Option<String>,
    /// Request headers, name to value (typically credentials; values are used as
    /// written, never printed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, String>>,
    /// `http/protobuf` (the only one supported; others are warned about).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// The `service.name` resource attribute (default `copse-hooks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_name: Option<String>,
    /// Further resource attributes, name to value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_attributes: Option<BTreeMap<String, String>>,
    /// How long one export request may take, in milliseconds (default 10000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Export payload bodies too: each gate's tool input or prompt, each hook's stdin
    /// and stdout, redacted and capped (default off: a one-line summary only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_payloads: Option<bool>,
    /// Keys this version does not know, kept on rewrite (and warned about).
    #[serde(flatten)]
    #[schemars(skip)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

impl OtelSettings {
    /// Reads `value` key by key: a key that cannot be read (or is unknown) is a
    /// warning naming `origin` and the key, and the rest applies. `null` or absent is
    /// empty.
    fn read(
        value: Option<&serde_json::Value>,
        origin: &str,
        warnings: &mut Vec<String>,
    ) -> OtelSettings {
        let mut out = OtelSettings::default();
        let Some(value) = value.filter(|v| !v.is_null()) else {
            return out;
        };
        let Some(object) = value.as_object() else {
            warnings.push(format!("{origin} is not a JSON object: ignored"));
            return out;
        };
        for (key, v) in object {
            let mut one = serde_json::Map::new();
            one.insert(key.clone(), v.clone());
            match serde_json::from_value::<OtelSettings>(serde_json::Value::Object(one)) {
                Ok(p) if p.other.contains_key(key) => {
                    warnings.push(format!("{origin}.{key} is not a known key: ignored"));
                }
                Ok(p) => out.overlay(p),
                // Headers are a map of strings: a value that fails is not a string,
                // so the message quotes no credential.
                Err(e) => warnings.push(format!("{origin}.{key} is not valid ({e}): ignored")),
            }
        }
        out
    }

    fn overlay(&mut self, o: OtelSettings) {
        macro_rules! take {
            ($($f:ident),*) => {$( if o.$f.is_some() { self.$f = o.$f; } )*};
        }
        take!(
            enabled,
            endpoint,
            traces_endpoint,
            headers,
            protocol,
            service_name,
            resource_attributes,
            timeout_ms,
            include_payloads
        );
    }

    /// The traces URL this layer names, with the key it came from; empty strings
    /// count as unset.
    fn traces_url(&self, origin: &str) -> Option<(String, String)> {
        let nonempty = |s: &Option<String>| {
            s.as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        if let Some(u) = nonempty(&self.traces_endpoint) {
            return Some((format!("{origin}.tracesEndpoint"), u));
        }
        nonempty(&self.endpoint).map(|u| (format!("{origin}.endpoint"), base_to_traces(&u)))
    }
}

/// A collector's base URL as its traces URL (`/v1/traces` appended).
fn base_to_traces(base: &str) -> String {
    format!("{}/v1/traces", base.trim().trim_end_matches('/'))
}

/// The first of pinned, the variable and the user's settings that is set, with the
/// name a warning calls it by.
fn pick(
    pinned: Option<String>,
    pinned_origin: &str,
    env: Option<String>,
    env_name: String,
    user: Option<String>,
    key: &str,
) -> Option<(String, String)> {
    let nonempty = |s: Option<String>| s.filter(|s| !s.trim().is_empty());
    if let Some(p) = nonempty(pinned) {
        return Some((format!("{pinned_origin}.{key}"), p));
    }
    if let Some(e) = env {
        return Some((env_name, e));
    }
    nonempty(user).map(|u| (format!("{SETTINGS}.{key}"), u))
}

fn nonzero(ms: u64, origin: &str, warnings: &mut Vec<String>) -> bool {
    if ms == 0 {
        warnings.push(format!("{origin}.timeoutMs is 0: the default applies"));
    }
    ms > 0
}

/// Replaces headers of the same name (case-insensitively), or appends.
fn merge_headers(headers: &mut Vec<(String, String)>, more: Vec<(String, String)>) {
    for (name, value) in more {
        match headers
            .iter_mut()
            .find(|(k, _)| k.eq_ignore_ascii_case(&name))
        {
            Some(slot) => *slot = (name, value),
            None => headers.push((name, value)),
        }
    }
}

/// A settings object's headers, each checked as a header (a bad one is a warning
/// naming it, never its value).
fn checked_headers(
    origin: &str,
    headers: &BTreeMap<String, String>,
    warnings: &mut Vec<String>,
) -> Vec<(String, String)> {
    headers
        .iter()
        .filter(|(name, value)| header_ok(origin, name, value, warnings))
        .map(|(k, v)| (k.trim().to_owned(), v.clone()))
        .collect()
}

fn header_ok(origin: &str, name: &str, value: &str, warnings: &mut Vec<String>) -> bool {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    let name = name.trim();
    if name.is_empty() || !name.chars().all(token) {
        warnings.push(format!(
            "{origin}: {name:?} is not a valid header name: ignored"
        ));
        return false;
    }
    if value.chars().any(|c| c.is_control() && c != '\t') {
        warnings.push(format!(
            "{origin}: the value of header {name:?} contains a control character: ignored"
        ));
        return false;
    }
    true
}

/// The value of `name` in `env` (the last one wins, as when a process is started
/// with it); an empty value counts as unset, a non-UTF-8 one is warned about.
fn lookup(env: &[(OsString, OsString)], name: &str, warnings: &mut Vec<String>) -> Option<String> {
    let value = env
        .iter()
        .rev()
        .find(|(k, _)| k.as_os_str() == OsStr::new(name))
        .map(|(_, v)| v)?;
    if value.is_empty() {
        return None;
    }
    match value.to_str() {
        Some(v) => Some(v.to_owned()),
        None => {
            warnings.push(format!("{name} is not valid UTF-8: ignored"));
            None
        }
    }
}

/// The traces variable `OTEL_EXPORTER_OTLP_TRACES_<suffix>` if set, else the generic
/// `OTEL_EXPORTER_OTLP_<suffix>`; with the name of the one that was read.
fn signal(
    env: &[(OsString, OsString)],
    suffix: &str,
    warnings: &mut Vec<String>,
) -> (String, Option<String>) {
    let specific = format!("OTEL_EXPORTER_OTLP_TRACES_{suffix}");
    if let Some(v) = lookup(env, &specific, warnings) {
        return (specific, Some(v));
    }
    let generic = format!("OTEL_EXPORTER_OTLP_{suffix}");
    let v = lookup(env, &generic, warnings);
    (generic, v)
}

fn positive(name: &str, value: &str, warnings: &mut Vec<String>) -> Option<u64> {
    match value.trim().parse::<u64>() {
        Ok(n) if n > 0 => Some(n),
        _ => {
            warnings.push(format!(
                "{name}={value:?} is not a positive whole number: the default applies"
            ));
            None
        }
    }
}

/// An `http://` or `https://` URL with a host.
fn check_url(url: &str) -> Result<(), String> {
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))
        .ok_or_else(|| format!("{url:?} is not an http:// or https:// URL"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    if host.is_empty() || host.starts_with(':') {
        return Err(format!("{url:?} names no host"));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("{url:?} contains whitespace"));
    }
    Ok(())
}

/// `name=value` pairs separated by commas (the W3C baggage form the specification
/// uses for headers and resource attributes), keys and values trimmed, values
/// percent-decoded. A bad entry is a warning naming `var` and the key, never the
/// value (headers carry credentials).
fn parse_pairs(var: &str, text: &str, warnings: &mut Vec<String>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, entry) in text.split(',').enumerate() {
        let entry = entry.trim();
        if entry.is_empty() {
            continue;
        }
        let Some((key, value)) = entry.split_once('=') else {
            warnings.push(format!("{var}: entry {} has no '=': ignored", i + 1));
            continue;
        };
        let key = key.trim();
        if key.is_empty() {
            warnings.push(format!("{var}: entry {} has an empty name: ignored", i + 1));
            continue;
        }
        match percent_decode(value.trim()) {
            Some(value) => out.push((key.to_owned(), value)),
            None => warnings.push(format!(
                "{var}: the value of {key:?} is not valid percent-encoded UTF-8: ignored"
            )),
        }
    }
    out
}

fn parse_headers(var: &str, text: &str, warnings: &mut Vec<String>) -> Vec<(String, String)> {
    parse_pairs(var, text, warnings)
        .into_iter()
        .filter(|(name, value)| header_ok(var, name, value, warnings))
        .collect()
}

/// `%XX` sequences decoded; `None` when the result is not UTF-8. A `%` not followed
/// by two hex digits is kept as written.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            // Two hex digits make at most 0xFF.
            out.push(u8::try_from(h * 16 + l).unwrap_or(b'?'));
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// Replaces `key`'s value, or appends it.
fn set(resource: &mut Vec<(String, String)>, key: String, value: String) {
    match resource.iter_mut().find(|(k, _)| *k == key) {
        Some(slot) => slot.1 = value,
        None => resource.push((key, value)),
    }
}

/// What this process knows about itself: `service.name`, `service.version`,
/// `host.name`, `process.owner` (from `USER`/`LOGNAME` in `env`, else the process's
/// own environment, else the effective uid), `telemetry.sdk.*`.
fn detected_resource(env: &[(OsString, OsString)]) -> Vec<(String, String)> {
    let mut resource = vec![
        ("service.name".to_owned(), DEFAULT_SERVICE_NAME.to_owned()),
        (
            "service.version".to_owned(),
            env!("CARGO_PKG_VERSION").to_owned(),
        ),
    ];
    let host = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned();
    if !host.is_empty() {
        resource.push(("host.name".to_owned(), host));
    }
    let from_list = ["USER", "LOGNAME"]
        .into_iter()
        .find_map(|n| lookup(env, n, &mut Vec::new()));
    let owner = from_list
        .or_else(|| {
            ["USER", "LOGNAME"]
                .into_iter()
                .find_map(|n| std::env::var(n).ok().filter(|v| !v.is_empty()))
        })
        .unwrap_or_else(|| rustix::process::geteuid().as_raw().to_string());
    resource.push(("process.owner".to_owned(), owner));
    resource.extend([
        ("telemetry.sdk.name".to_owned(), "copse-hooks".to_owned()),
        ("telemetry.sdk.language".to_owned(), "rust".to_owned()),
        (
            "telemetry.sdk.version".to_owned(),
            env!("CARGO_PKG_VERSION").to_owned(),
        ),
    ]);
    resource
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b%2Cc").as_deref(), Some("a b,c"));
        assert_eq!(percent_decode("100%").as_deref(), Some("100%"));
        assert_eq!(percent_decode("%zz%4").as_deref(), Some("%zz%4"));
        assert_eq!(percent_decode("%C3%A9").as_deref(), Some("é"));
        assert_eq!(percent_decode("%FF"), None);
    }

    #[test]
    fn urls() {
        assert!(check_url("http://127.0.0.1:4318/v1/traces").is_ok());
        assert!(check_url("HTTPS://collector.example/v1/traces").is_ok());
        assert!(check_url("collector:4318").is_err());
        assert!(check_url("http:///v1/traces").is_err());
        assert!(check_url("http://:4318/").is_err());
        assert!(check_url("http://a b/").is_err());
    }
}
