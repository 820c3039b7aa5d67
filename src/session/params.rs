//! What the session reads from requests and answers: the few members it needs, each through
//! a small struct, from objects only.

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::ToolInfo;

#[derive(Deserialize)]
pub(super) struct CallParams<'a> {
    pub(super) name: String,
    #[serde(default)]
    pub(super) task: Option<IgnoredAny>,
    #[serde(rename = "_meta", default, borrow)]
    pub(super) meta: Option<RequestMeta<'a>>,
}

#[derive(Deserialize)]
pub(super) struct RequestMeta<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    pub(super) protocol_version: Option<String>,
    #[serde(rename = "progressToken", borrow)]
    pub(super) progress_token: Option<&'a RawValue>,
}

/// The request a `notifications/cancelled` cancels.
#[derive(Deserialize)]
pub(super) struct Cancelled<'a> {
    #[serde(rename = "requestId", borrow)]
    pub(super) request_id: &'a RawValue,
}

/// The token of a `notifications/progress`.
#[derive(Deserialize)]
pub(super) struct ProgressToken<'a> {
    #[serde(rename = "progressToken", borrow)]
    pub(super) token: &'a RawValue,
}

#[derive(Deserialize)]
pub(super) struct VersionField {
    #[serde(rename = "protocolVersion")]
    pub(super) protocol_version: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct CursorField {
    pub(super) cursor: Option<IgnoredAny>,
}

#[derive(Deserialize)]
pub(super) struct ToolsListResult {
    #[serde(default)]
    pub(super) tools: Vec<ToolEntry>,
}

#[derive(Deserialize)]
pub(super) struct ToolEntry {
    pub(super) name: String,
    #[serde(rename = "outputSchema")]
    pub(super) output_schema: Option<IgnoredAny>,
    pub(super) annotations: Option<ToolInfo>,
}

/// Reads params or a result as `T`, only from an object: serde would also fill a pub(super) struct from an
/// array, by position.
pub(super) fn parse<'a, T: Deserialize<'a>>(raw: Option<&'a RawValue>) -> Option<T> {
    let raw = raw?.get();
    if !raw.starts_with('{') {
        return None;
    }
    serde_json::from_str(raw).ok()
}
