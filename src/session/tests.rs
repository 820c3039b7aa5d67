use super::*;

fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).unwrap()
}

fn call(answered: Answered) -> AnsweredCall {
    match answered {
        Answered::Call(c) => c,
        other => panic!("not a call: {other:?}"),
    }
}

#[test]
fn tracks_tool_calls_until_answered() {
    let mut s = Session::default();
    let new = s.client_request(
        &raw("7"),
        "tools/call",
        Some(&raw(r#"{"name":"read","arguments":{"path":"/x"}}"#)),
    );
    assert_eq!(new.unwrap().tool, "read");
    assert_eq!(s.pending_len(), 1);
    let answered = call(s.upstream_answer(&raw("7.0"), None));
    assert_eq!(answered.call.name, "read");
    assert_eq!(
        answered.call.params.get(),
        r#"{"name":"read","arguments":{"path":"/x"}}"#
    );
    assert_eq!(answered.attempt, 1);
    assert_eq!(s.pending_len(), 0);
    assert!(
        matches!(s.upstream_answer(&raw("7"), None), Answered::Duplicate),
        "a second answer to an answered id is never the client's"
    );
    assert!(matches!(s.upstream_answer(&raw("8"), None), Answered::Pass));
}

#[test]
fn an_id_the_client_reused_in_flight_gets_both_answers_and_no_third() {
    let mut s = Session::default();
    s.client_request(&raw("7"), "ping", None);
    s.client_request(&raw("7"), "ping", None);
    assert!(matches!(s.upstream_answer(&raw("7"), None), Answered::Pass));
    assert!(matches!(s.upstream_answer(&raw("7"), None), Answered::Pass));
    assert!(matches!(
        s.upstream_answer(&raw("7"), None),
        Answered::Duplicate
    ));
}

#[test]
fn params_that_are_no_object_make_no_tool_call() {
    let mut s = Session::default();
    let new = s.client_request(&raw("1"), "tools/call", Some(&raw(r#"["read"]"#)));
    assert_eq!(new, None, "serde would read the name from the array");
    assert!(matches!(s.upstream_answer(&raw("1"), None), Answered::Pass));
}

#[test]
fn only_answers_nothing_reads_whole_may_stream() {
    let key = |s: &str| IdKey::new(&raw(s));
    let none = |_: &str| false;
    let mut s = Session::default();
    assert!(s.may_stream(None, none), "nothing pending");
    let read = s.client_request(&raw("1"), "tools/call", Some(&raw(r#"{"name":"read"}"#)));
    s.client_request(&raw("2"), "resources/read", None);
    assert!(s.may_stream(key("1").as_ref(), none));
    assert!(s.may_stream(key("2").as_ref(), none));
    assert!(
        s.may_stream(key("99").as_ref(), none),
        "an answer nobody waits for passes"
    );
    assert!(s.may_stream(None, none));
    assert!(
        !s.may_stream(key("1").as_ref(), |t| t == "read"),
        "a rule reads its successes"
    );
    assert!(!s.may_stream(None, |t| t == "read"));
    // A tools/list answer is read whole; so is any answer whose id comes too late to tell.
    s.client_request(&raw("3"), "tools/list", None);
    assert!(!s.may_stream(key("3").as_ref(), none));
    assert!(!s.may_stream(None, none));
    assert!(s.may_stream(key("1").as_ref(), none));
    s.upstream_answer(&raw("3"), None);
    // A retry goes out under the proxy's id: its answer is read whole, to be answered under
    // the client's.
    let failed = call(s.upstream_answer(&raw("1"), None));
    let (retry, _) = s.retry(failed, Vec::new());
    assert!(!s.may_stream(Some(&retry), none));
    assert!(!s.may_stream(None, none));
    s.expire(read.unwrap().seq).unwrap();
    assert!(!s.may_stream(Some(&retry), none), "dropped when it comes");
    assert!(s.may_stream(None, none));
    // A timed-out call's late answer is dropped, so it is read whole when its id says so; an
    // answer whose id comes later is not held for it.
    let late = s.client_request(&raw("4"), "tools/call", Some(&raw(r#"{"name":"w"}"#)));
    s.expire(late.unwrap().seq).unwrap();
    assert!(!s.may_stream(key("4").as_ref(), none));
    assert!(s.may_stream(None, none));
    assert!(s.may_stream(key("5").as_ref(), none));
}

#[test]
fn cancelled_calls_lose_their_answer_and_task_calls_pass() {
    let mut s = Session::default();
    s.client_request(&raw(r#""a""#), "tools/call", Some(&raw(r#"{"name":"t"}"#)));
    let retry = s.client_notification(
        "notifications/cancelled",
        Some(&raw(r#"{"requestId":"a","reason":"x"}"#)),
    );
    assert!(retry.is_none(), "nothing of the proxy's to cancel");
    assert!(
        matches!(s.upstream_answer(&raw(r#""a""#), None), Answered::Drop),
        "the client ignores an answer after its cancel"
    );
    s.client_request(&raw(r#""a""#), "tools/call", Some(&raw(r#"{"name":"t"}"#)));
    assert!(
        matches!(s.upstream_answer(&raw(r#""a""#), None), Answered::Call(_)),
        "the id used again is a new call"
    );
    s.client_request(
        &raw("1"),
        "tools/call",
        Some(&raw(r#"{"name":"t","task":{}}"#)),
    );
    assert!(matches!(s.upstream_answer(&raw("1"), None), Answered::Pass));
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
    let per_request = call(s.upstream_answer(&raw("2"), None)).protocol;
    assert!(per_request.has_result_type());
    let session = call(s.upstream_answer(&raw("3"), None)).protocol;
    assert_eq!(session, Protocol(Some("2025-03-26".into())));
    assert!(!session.has_structured_content());

    // A fresh listing replaces the catalog; list_changed forgets it.
    s.client_request(&raw("4"), "tools/list", Some(&raw("{}")));
    s.upstream_answer(&raw("4"), Some(&raw(r#"{"tools":[{"name":"c"}]}"#)));
    assert!(s.tool("a").is_none());
    assert!(s.tool("c").is_some());
    s.tools_changed();
    assert!(s.tool("c").is_none());
}

#[test]
fn retries_wait_under_proxy_ids_and_answer_the_client() {
    let mut s = Session::default();
    let params = r#"{"name":"t","arguments":{"q":1},"_meta":{"progressToken":"p"}}"#;
    let seq = s
        .client_request(&raw("5"), "tools/call", Some(&raw(params)))
        .unwrap()
        .seq;
    let first = call(s.upstream_answer(&raw("5"), None));
    let (key, line) = s.retry(first, b"failed\n".to_vec());
    let line = String::from_utf8(line).unwrap();
    let IdKey::Str(retry_id) = &key else { panic!() };
    assert_eq!(
        line,
        format!("{{\"jsonrpc\":\"2.0\",\"id\":\"{retry_id}\",\"method\":\"tools/call\",\"params\":{params}}}\n")
    );
    assert!(s.send_retry(&key));
    let retry_raw = raw(&format!("\"{retry_id}\""));
    let second = call(s.upstream_answer(&retry_raw, None));
    assert_eq!(
        second.id.get(),
        "5",
        "answers go back under the client's id"
    );
    assert_eq!(second.attempt, 2);
    assert_eq!(second.call.seq, seq);
    assert!(
        matches!(s.upstream_answer(&retry_raw, None), Answered::Drop),
        "never leaks a proxy id"
    );
}

#[test]
fn a_retry_never_sent_is_answered_with_its_failure() {
    let mut s = Session::default();
    for id in ["1", "2", "3"] {
        s.client_request(&raw(id), "tools/call", Some(&raw(r#"{"name":"t"}"#)));
    }
    let retry = |s: &mut Session, id: &str| {
        let first = call(s.upstream_answer(&raw(id), None));
        s.retry(first, format!("failure {id}\n").into_bytes()).0
    };
    // Abandoned (the upstream's stdin closed): the failure, once.
    let one = retry(&mut s, "1");
    assert_eq!(s.abandon_retry(&one), Some(b"failure 1\n".to_vec()));
    assert_eq!(s.abandon_retry(&one), None);
    // Sent, then the upstream died: it gets the upstream's answer like any call.
    let two = retry(&mut s, "2");
    assert!(s.send_retry(&two));
    assert_eq!(s.abandon_retry(&two), None, "sent: not abandoned");
    // Still in its backoff when the upstream died: its failure.
    retry(&mut s, "3");
    let mut left: Vec<String> = s
        .drain_pending()
        .into_iter()
        .map(|u| match u {
            Unanswered::Call(c) => format!("call {}", c.id.get()),
            Unanswered::RetryNotSent(line) => String::from_utf8(line).unwrap(),
            Unanswered::Request { .. } => panic!("a call"),
        })
        .collect();
    left.sort();
    assert_eq!(left, ["call 2", "failure 3\n"]);
    assert_eq!(s.pending_len(), 0);
}

#[test]
fn cancelling_a_retried_call_names_the_retry() {
    let mut s = Session::default();
    s.client_request(&raw("5"), "tools/call", Some(&raw(r#"{"name":"t"}"#)));
    let first = call(s.upstream_answer(&raw("5"), None));
    let (key, _) = s.retry(first, b"failed\n".to_vec());
    assert!(s.send_retry(&key));
    let to_cancel = s
        .client_notification("notifications/cancelled", Some(&raw(r#"{"requestId":5}"#)))
        .unwrap();
    assert_eq!(IdKey::new(&to_cancel), Some(key.clone()));
    assert!(!s.send_retry(&key));
    // A retry still in its backoff was never sent: forgotten, with nothing to cancel upstream.
    s.client_request(&raw("6"), "tools/call", Some(&raw(r#"{"name":"t"}"#)));
    let first = call(s.upstream_answer(&raw("6"), None));
    let (key, _) = s.retry(first, b"failed\n".to_vec());
    let cancel = raw(r#"{"requestId":6}"#);
    assert!(s
        .client_notification("notifications/cancelled", Some(&cancel))
        .is_none());
    assert!(!s.send_retry(&key));
}

#[test]
fn a_call_cancelled_while_its_failure_is_settled_is_not_retried() {
    let mut s = Session::default();
    let cancel = raw(r#"{"requestId":5}"#);
    s.client_request(&raw("5"), "tools/call", Some(&raw(r#"{"name":"t"}"#)));
    let failed = call(s.upstream_answer(&raw("5"), None));
    // The cancel comes after the answer was taken out of the table, before the retry.
    assert!(s
        .client_notification("notifications/cancelled", Some(&cancel))
        .is_none());
    assert!(s.cancelled_meanwhile(&failed.id));
    assert!(
        !s.cancelled_meanwhile(&failed.id),
        "asked once, for the one settlement"
    );
    // A cancel that came after the call was settled does not stop the id's next call.
    assert!(s
        .client_notification("notifications/cancelled", Some(&cancel))
        .is_none());
    s.client_request(&raw("5"), "tools/call", Some(&raw(r#"{"name":"t"}"#)));
    let failed = call(s.upstream_answer(&raw("5"), None));
    assert!(!s.cancelled_meanwhile(&failed.id));
}

#[test]
fn an_id_used_again_is_remembered_from_its_last_use() {
    let mut memory = Remembered::default();
    let key = |n: u32| IdKey::new(&raw(&n.to_string())).unwrap();
    memory.remember(key(1), 3);
    memory.remember(key(2), 3);
    assert!(memory.forget(&key(1)));
    memory.remember(key(1), 3);
    // Its first place in the order is now the oldest: evicting it must not forget the second.
    memory.remember(key(3), 3);
    assert!(memory.contains(&key(1)), "remembered after its reuse");
    assert!(memory.contains(&key(2)) && memory.contains(&key(3)));
    memory.remember(key(4), 3);
    assert!(!memory.contains(&key(2)), "the oldest goes");
    assert!(memory.contains(&key(1)) && memory.contains(&key(3)) && memory.contains(&key(4)));
    memory.remember(key(5), 3);
    assert!(
        !memory.contains(&key(1)),
        "then the reused id, from its last use"
    );
    assert_eq!(memory.order.len(), 3);
}

#[test]
fn expired_calls_drop_their_late_answers() {
    let mut s = Session::default();
    let seq = s
        .client_request(&raw("9"), "tools/call", Some(&raw(r#"{"name":"t"}"#)))
        .unwrap()
        .seq;
    let expired = s.expire(seq).unwrap();
    assert_eq!(expired.call.id.get(), "9");
    assert!(expired.sent);
    assert!(s.expire(seq).is_none());
    assert!(matches!(s.upstream_answer(&raw("9"), None), Answered::Drop));
    assert!(
        matches!(s.upstream_answer(&raw("9"), None), Answered::Pass),
        "only once"
    );
}

#[test]
fn a_deadline_holds_across_retries_and_goes_with_the_answer() {
    use std::time::{Duration, Instant};
    let mut s = Session::default();
    let t0 = Instant::now();
    let deadline = |secs| Deadline {
        at: t0 + Duration::from_secs(secs),
        limit: Duration::from_secs(secs),
    };
    let call = |s: &mut Session, id: &str| {
        let params = raw(r#"{"name":"t"}"#);
        s.client_request(&raw(id), "tools/call", Some(&params))
            .unwrap()
            .seq
    };
    let (a, b) = (call(&mut s, "1"), call(&mut s, "2"));
    s.client_request(&raw("3"), "ping", None);
    assert_eq!(s.next_deadline(), None);
    s.set_deadline(a, deadline(30));
    s.set_deadline(b, deadline(10));
    assert_eq!(s.next_deadline(), Some(t0 + Duration::from_secs(10)));
    // Answered: its deadline goes with it.
    s.upstream_answer(&raw("2"), None);
    assert_eq!(s.next_deadline(), Some(t0 + Duration::from_secs(30)));
    // Retried: the deadline stays the first attempt's.
    let failed = match s.upstream_answer(&raw("1"), None) {
        Answered::Call(c) => c,
        other => panic!("not a call: {other:?}"),
    };
    s.retry(failed, Vec::new());
    assert_eq!(s.next_deadline(), Some(t0 + Duration::from_secs(30)));
    assert!(s
        .expire_due(t0 + Duration::from_secs(29), usize::MAX)
        .is_empty());
    let due = s.expire_due(t0 + Duration::from_secs(30), usize::MAX);
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].call.id.get(), "1");
    assert_eq!(due[0].call.call.deadline, Some(deadline(30)));
    assert_eq!(due[0].call.attempt, 2);
    assert!(
        !due[0].sent,
        "the retry is still in its backoff: the upstream never saw it"
    );
    assert_eq!(s.next_deadline(), None);
    assert_eq!(s.pending_len(), 1, "the ping still waits");
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
            Unanswered::RetryNotSent(_) => panic!("no retry"),
        })
        .collect();
    methods.sort();
    assert_eq!(methods, ["resources/read", "t"]);
    assert_eq!(s.pending_len(), 0);
}

#[test]
fn progress_is_followed_through_retries_and_forgotten_with_the_call() {
    let mut s = Session::default();
    let progress = |n: u32| raw(&format!(r#"{{"progressToken":"p","progress":{n}}}"#));
    let params = r#"{"name":"t","_meta":{"progressToken":"p"}}"#;
    s.client_request(&raw("5"), "tools/call", Some(&raw(params)));
    assert_eq!(s.upstream_progress(Some(&progress(1))), ProgressLine::Pass);
    let first = call(s.upstream_answer(&raw("5"), None));
    let (retry, _) = s.retry(first, Vec::new());
    // The retry counts from 1 again: the client sees 2.
    assert!(matches!(
        s.upstream_progress(Some(&progress(1))),
        ProgressLine::Send(_)
    ));
    let IdKey::Str(retry) = retry else { panic!() };
    call(s.upstream_answer(&raw(&format!("\"{retry}\"")), None));
    assert!(s.progress.is_empty(), "forgotten with the call");
    // A call that takes over an id (and its token) keeps it when the first is forgotten.
    s.client_request(&raw("6"), "tools/call", Some(&raw(params)));
    s.client_request(&raw("6"), "tools/call", Some(&raw(params)));
    assert_eq!(s.progress.len(), 1);
    s.drain_pending();
    assert!(
        s.progress.is_empty(),
        "and with every request a dead server leaves"
    );
}

#[test]
fn a_tool_listed_twice_is_taken_at_its_safer_reading() {
    for listing in [
        r#"{"tools":[{"name":"t","annotations":{"destructiveHint":true}},{"name":"t","annotations":{"readOnlyHint":true}}]}"#,
        r#"{"tools":[{"name":"t","annotations":{"readOnlyHint":true}},{"name":"t","annotations":{"destructiveHint":true}}]}"#,
    ] {
        let mut s = Session::default();
        s.client_request(&raw("1"), "tools/list", None);
        s.upstream_answer(&raw("1"), Some(&raw(listing)));
        let t = s.tool("t").unwrap();
        assert_eq!(t.destructive, Some(true), "{listing}");
        assert_ne!(t.read_only, Some(true), "{listing}");
    }
}

#[test]
fn a_duplicate_answer_is_dropped_also_while_its_call_is_retried() {
    let mut s = Session::default();
    s.client_request(&raw("1"), "tools/call", Some(&raw(r#"{"name":"t"}"#)));
    let first = call(s.upstream_answer(&raw("1"), None));
    let (key, _) = s.retry(first, Vec::new());
    assert!(s.send_retry(&key));
    assert!(matches!(
        s.upstream_answer(&raw("1"), None),
        Answered::Duplicate
    ));
    let IdKey::Str(retry_id) = &key else {
        panic!("a retry's id is a string")
    };
    let retried = call(s.upstream_answer(&raw(&serde_json::to_string(retry_id).unwrap()), None));
    assert_eq!(retried.id.get(), "1");
    assert!(s.drops_answer(&IdKey::new(&raw("1")).unwrap()));
    s.client_request(&raw("1"), "ping", None);
    assert!(
        !s.drops_answer(&IdKey::new(&raw("1")).unwrap()),
        "the id used again"
    );
    assert!(matches!(s.upstream_answer(&raw("1"), None), Answered::Pass));
}
