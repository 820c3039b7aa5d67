//! The examples in docs/ are real: they load, and classify as the docs say.

use mcp_errnorm::classify::classify;
use mcp_errnorm::diagnostic::SourceFile;
use mcp_errnorm::rules::{default_sources, Failure, RuleSet};
use mcp_errnorm::taxonomy::{Category, Source};

fn orders_rules() -> RuleSet {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/examples/orders-api.toml");
    let file = SourceFile::read(std::path::Path::new(path)).unwrap();
    RuleSet::load(&[file], &default_sources()).unwrap()
}

fn failure<'a>(tool: &'a str, text: &'a str) -> Failure<'a> {
    Failure {
        text,
        tool,
        source: Source::Result,
        rpc_code: None,
    }
}

#[test]
fn orders_example_classifies_as_documented() {
    let rules = orders_rules();
    let v = classify(
        &rules,
        failure("orders_get", "Orders API timed out after 30000ms"),
    );
    assert_eq!(
        (v.category, v.code.as_str(), v.retryable),
        (Category::Transient, "TIMEOUT", true)
    );
    assert_eq!(v.message, "The orders API did not answer within 30000 ms.");

    let v = classify(
        &rules,
        failure(
            "orders_update",
            "Order 12345 is locked for editing by the billing run",
        ),
    );
    assert_eq!(
        (v.category, v.code.as_str(), v.retryable),
        (Category::Business, "ORDER_LOCKED", false)
    );
    assert_eq!(
        v.user_message.as_deref(),
        Some("Order 12345 cannot be changed right now: the billing run is processing it.")
    );
    assert_eq!(v.alternatives.len(), 2);

    let v = classify(
        &rules,
        failure("orders_get", "quota exhausted, resets in 3600 seconds"),
    );
    assert_eq!(
        (v.code.as_str(), v.retry_after_seconds),
        ("RATE_LIMITED", Some(3600))
    );

    let v = classify(&rules, failure("orders_create", "HTTP 409 duplicate"));
    assert_eq!(
        (v.category, v.code.as_str()),
        (Category::Validation, "DUPLICATE_SUBMISSION")
    );
    assert_eq!(
        v.rule_id.as_deref(),
        Some("http-409"),
        "replaces the default of the same id"
    );
}

#[test]
fn orders_rules_are_scoped_to_their_tools() {
    let v = classify(
        &orders_rules(),
        failure("billing_run", "Order 1 is locked for editing by x"),
    );
    assert_ne!(v.rule_id.as_deref(), Some("orders-locked"));
}

/// docs/rules.md says to run `check` until it passes: the example file passes it, beside the
/// embedded rules and their examples.
#[test]
fn the_orders_example_passes_check() {
    let failures = mcp_errnorm::check::run_examples(&orders_rules());
    assert!(failures.is_empty(), "{failures:?}");
}
