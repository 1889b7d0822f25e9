//! Request params and errors: what `methods` (every method) and `shim` (`shim/handle`)
//! share, so neither reaches into the other.

use copse_hooks_wire::rpc::codes;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// A JSON-RPC error.
pub(crate) struct RpcError {
    code: i64,
    message: String,
}

impl RpcError {
    /// The code and message.
    pub(crate) fn parts(self) -> (i64, String) {
        (self.code, self.message)
    }

    pub(crate) fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
        }
    }
}

/// Params as `T`: absent or `null` is `{}`; a bad field is named.
pub(crate) fn parse<T: DeserializeOwned>(params: Option<Value>) -> Result<T, RpcError> {
    let value = match params {
        None | Some(Value::Null) => json!({}),
        Some(v) => v,
    };
    if !value.is_object() {
        return Err(RpcError::new(
            codes::INVALID_PARAMS,
            "invalid params: params must be an object",
        ));
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        let message = if path == "." || path.is_empty() {
            format!("invalid params: {inner}")
        } else {
            format!("invalid params: field `{path}`: {inner}")
        };
        RpcError::new(codes::INVALID_PARAMS, message)
    })
}
