//! What the proxy knows about the conversation: the client's requests still waiting for an
//! answer, the tools the upstream declared, and the protocol version in force. Knows MCP, not
//! bytes or processes.
//!
//! Only the client's requests are tracked: every answer that comes from the upstream answers one
//! of them, so the server's own id space (its requests to the client) never meets this table.

use std::collections::HashMap;

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::wire::IdKey;

/// The protocol version a message is exchanged under, which decides what a result may carry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protocol(pub Option<String>);

impl Protocol {
    /// `structuredContent` exists since 2025-06-18. An unknown version gets it: clients of older
    /// versions ignore fields they do not know.
    pub fn has_structured_content(&self) -> bool {
        self.0.as_deref().is_none_or(|v| v >= "2025-06-18")
    }

    /// Every result carries `resultType` since 2026-07-28.
    pub fn has_result_type(&self) -> bool {
        self.0.as_deref().is_some_and(|v| v >= "2026-07-28")
    }
}

/// A `tools/call` waiting for its answer.
#[derive(Debug, Clone)]
pub struct ToolCall {
    pub name: String,
    pub arguments: Option<Box<RawValue>>,
    /// Set by a 2026-07-28 request's `_meta`, which overrides the session's version.
    pub protocol_version: Option<String>,
    /// A task-augmented call: its answer is a task handle, never a failure to rewrite.
    pub task: bool,
}

/// A client request waiting for its answer.
#[derive(Debug)]
pub struct Pending {
    /// The id's original bytes, to answer it ourselves if the upstream cannot.
    pub id: Box<RawValue>,
    pub kind: PendingKind,
}

#[derive(Debug)]
pub enum PendingKind {
    ToolCall(ToolCall),
    /// `first_page`: a listing without a cursor replaces what is known.
    ToolsList {
        first_page: bool,
    },
    Initialize,
    Other {
        method: String,
    },
}

impl PendingKind {
    pub fn method(&self) -> &str {
        match self {
            PendingKind::ToolCall(_) => "tools/call",
            PendingKind::ToolsList { .. } => "tools/list",
            PendingKind::Initialize => "initialize",
            PendingKind::Other { method } => method,
        }
    }
}

/// What the upstream declared about a tool in `tools/list`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ToolInfo {
    #[serde(skip)]
    pub has_output_schema: bool,
    #[serde(rename = "readOnlyHint")]
    pub read_only: Option<bool>,
    #[serde(rename = "idempotentHint")]
    pub idempotent: Option<bool>,
    #[serde(rename = "destructiveHint")]
    pub destructive: Option<bool>,
}

/// An answered `tools/call` whose answer may be rewritten.
#[derive(Debug)]
pub struct AnsweredCall {
    /// The id as the client spelled it: a rewritten answer goes back under the client's own id.
    pub id: Box<RawValue>,
    pub call: ToolCall,
    pub tool: Option<ToolInfo>,
    pub protocol: Protocol,
}

/// A request the upstream never answered.
#[derive(Debug)]
pub enum Unanswered {
    Call(AnsweredCall),
    Request { id: Box<RawValue>, method: String },
}

#[derive(Debug, Default)]
pub struct Session {
    pending: HashMap<IdKey, Pending>,
    tools: HashMap<String, ToolInfo>,
    /// From `initialize`: the client's request, then the server's answer.
    version: Option<String>,
}

#[derive(Deserialize)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Option<Box<RawValue>>,
    #[serde(default)]
    task: Option<IgnoredAny>,
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMeta>,
}

#[derive(Deserialize)]
struct RequestMeta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    protocol_version: Option<String>,
}

#[derive(Deserialize)]
struct VersionField {
    #[serde(rename = "protocolVersion")]
    protocol_version: Option<String>,
}

#[derive(Deserialize)]
struct CursorField {
    cursor: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct ToolsListResult {
    #[serde(default)]
    tools: Vec<ToolEntry>,
}

#[derive(Deserialize)]
struct ToolEntry {
    name: String,
    #[serde(rename = "outputSchema")]
    output_schema: Option<IgnoredAny>,
    annotations: Option<ToolInfo>,
}

fn parse<'a, T: Deserialize<'a>>(raw: Option<&'a RawValue>) -> Option<T> {
    serde_json::from_str(raw?.get()).ok()
}

impl Session {
    /// A request from the client, on its way to the upstream.
    pub fn client_request(&mut self, id: &RawValue, method: &str, params: Option<&RawValue>) {
        let Some(key) = IdKey::new(id) else {
            tracing::warn!(
                id = id.get(),
                "request with an id that is neither string nor number"
            );
            return;
        };
        let kind = match method {
            "tools/call" => match parse::<CallParams>(params) {
                Some(p) => PendingKind::ToolCall(ToolCall {
                    name: p.name,
                    arguments: p.arguments,
                    protocol_version: p.meta.and_then(|m| m.protocol_version),
                    task: p.task.is_some(),
                }),
                // Without a tool name there is nothing to classify by: let the answer pass.
                None => PendingKind::Other {
                    method: method.to_owned(),
                },
            },
            "tools/list" => PendingKind::ToolsList {
                first_page: parse::<CursorField>(params).is_none_or(|c| c.cursor.is_none()),
            },
            "initialize" => {
                if let Some(v) = parse::<VersionField>(params).and_then(|v| v.protocol_version) {
                    self.version = Some(v);
                }
                PendingKind::Initialize
            }
            _ => PendingKind::Other {
                method: method.to_owned(),
            },
        };
        let pending = Pending {
            id: id.to_owned(),
            kind,
        };
        if let Some(old) = self.pending.insert(key, pending) {
            tracing::warn!(
                id = id.get(),
                method = old.kind.method(),
                "the client reused the id of a request still in flight; the first is forgotten"
            );
        }
    }

    /// A notification from the client. After `notifications/cancelled` the client ignores the
    /// answer, so the request is forgotten and its answer, if one comes, passes untouched.
    pub fn client_notification(&mut self, method: &str, params: Option<&RawValue>) {
        #[derive(Deserialize)]
        struct Cancelled<'a> {
            #[serde(rename = "requestId", borrow)]
            request_id: &'a RawValue,
        }
        if method == "notifications/cancelled" {
            if let Some(key) = parse::<Cancelled>(params).and_then(|c| IdKey::new(c.request_id)) {
                self.pending.remove(&key);
            }
        }
    }

    /// An answer from the upstream. Returns the call when it answers a `tools/call` whose
    /// failure the proxy may rewrite.
    pub fn upstream_answer(
        &mut self,
        id: &RawValue,
        result: Option<&RawValue>,
    ) -> Option<AnsweredCall> {
        let pending = self.pending.remove(&IdKey::new(id)?)?;
        match pending.kind {
            PendingKind::ToolCall(call) if !call.task => Some(self.answered(pending.id, call)),
            PendingKind::ToolsList { first_page } => {
                self.learn_tools(result, first_page);
                None
            }
            PendingKind::Initialize => {
                if let Some(v) = parse::<VersionField>(result).and_then(|v| v.protocol_version) {
                    self.version = Some(v);
                }
                None
            }
            _ => None,
        }
    }

    fn learn_tools(&mut self, result: Option<&RawValue>, first_page: bool) {
        let Some(listing) = parse::<ToolsListResult>(result) else {
            tracing::debug!("a tools/list answer the proxy could not read; tools unchanged");
            return;
        };
        if first_page {
            self.tools.clear();
        }
        for tool in listing.tools {
            let info = ToolInfo {
                has_output_schema: tool.output_schema.is_some(),
                ..tool.annotations.unwrap_or_default()
            };
            self.tools.insert(tool.name, info);
        }
        tracing::debug!(tools = self.tools.len(), "learned tools from tools/list");
    }

    fn answered(&self, id: Box<RawValue>, call: ToolCall) -> AnsweredCall {
        AnsweredCall {
            id,
            tool: self.tools.get(&call.name).cloned(),
            protocol: Protocol(call.protocol_version.clone().or(self.version.clone())),
            call,
        }
    }

    /// The upstream's tools changed: what was learned may be stale until the next listing, and
    /// a tool not known to lack an outputSchema gets no `structuredContent`.
    pub fn tools_changed(&mut self) {
        self.tools.clear();
    }

    /// What is known of a tool.
    pub fn tool(&self, name: &str) -> Option<&ToolInfo> {
        self.tools.get(name)
    }

    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// Takes every request still waiting, for answering when the upstream is gone.
    pub fn drain_pending(&mut self) -> Vec<Unanswered> {
        let pending: Vec<Pending> = self.pending.drain().map(|(_, p)| p).collect();
        pending
            .into_iter()
            .map(|p| match p.kind {
                PendingKind::ToolCall(call) => Unanswered::Call(self.answered(p.id, call)),
                other => Unanswered::Request {
                    id: p.id,
                    method: other.method().to_owned(),
                },
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn tracks_tool_calls_until_answered() {
        let mut s = Session::default();
        s.client_request(
            &raw("7"),
            "tools/call",
            Some(&raw(r#"{"name":"read","arguments":{"path":"/x"}}"#)),
        );
        assert_eq!(s.pending_len(), 1);
        let answered = s.upstream_answer(&raw("7.0"), None).unwrap();
        assert_eq!(answered.call.name, "read");
        assert_eq!(answered.call.arguments.unwrap().get(), r#"{"path":"/x"}"#);
        assert_eq!(s.pending_len(), 0);
        assert!(s.upstream_answer(&raw("7"), None).is_none());
    }

    #[test]
    fn cancelled_and_task_calls_are_not_rewritten() {
        let mut s = Session::default();
        s.client_request(&raw(r#""a""#), "tools/call", Some(&raw(r#"{"name":"t"}"#)));
        s.client_notification(
            "notifications/cancelled",
            Some(&raw(r#"{"requestId":"a","reason":"x"}"#)),
        );
        assert!(s.upstream_answer(&raw(r#""a""#), None).is_none());
        s.client_request(
            &raw("1"),
            "tools/call",
            Some(&raw(r#"{"name":"t","task":{}}"#)),
        );
        assert!(s.upstream_answer(&raw("1"), None).is_none());
        assert_eq!(s.pending_len(), 0);
    }

    #[test]
    fn learns_tools_and_protocol() {
        let mut s = Session::default();
        s.client_request(
            &raw("0"),
            "initialize",
            Some(&raw(r#"{"protocolVersion":"2025-11-25"}"#)),
        );
        s.upstream_answer(&raw("0"), Some(&raw(r#"{"protocolVersion":"2025-03-26"}"#)));
        s.client_request(&raw("1"), "tools/list", None);
        s.upstream_answer(
            &raw("1"),
            Some(&raw(
                r#"{"tools":[{"name":"a","outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},{"name":"b","inputSchema":{}}]}"#,
            )),
        );
        assert!(s.tool("a").unwrap().has_output_schema);
        assert_eq!(s.tool("a").unwrap().read_only, Some(true));
        assert!(!s.tool("b").unwrap().has_output_schema);

        s.client_request(
            &raw("2"),
            "tools/call",
            Some(&raw(
                r#"{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#,
            )),
        );
        s.client_request(&raw("3"), "tools/call", Some(&raw(r#"{"name":"b"}"#)));
        let per_request = s.upstream_answer(&raw("2"), None).unwrap().protocol;
        assert!(per_request.has_result_type());
        let session = s.upstream_answer(&raw("3"), None).unwrap().protocol;
        assert_eq!(session, Protocol(Some("2025-03-26".into())));
        assert!(!session.has_structured_content());

        // A fresh listing replaces the catalog.
        s.client_request(&raw("4"), "tools/list", Some(&raw("{}")));
        s.upstream_answer(&raw("4"), Some(&raw(r#"{"tools":[{"name":"c"}]}"#)));
        assert!(s.tool("a").is_none());
        assert!(s.tool("c").is_some());
    }

    #[test]
    fn drains_every_waiting_request() {
        let mut s = Session::default();
        s.client_request(&raw("1"), "tools/call", Some(&raw(r#"{"name":"t"}"#)));
        s.client_request(&raw("2"), "resources/read", None);
        let mut methods: Vec<_> = s
            .drain_pending()
            .into_iter()
            .map(|u| match u {
                Unanswered::Call(a) => a.call.name,
                Unanswered::Request { method, .. } => method,
            })
            .collect();
        methods.sort();
        assert_eq!(methods, ["resources/read", "t"]);
        assert_eq!(s.pending_len(), 0);
    }
}
