//! Validation of real outputs against the published JSON Schemas in schema/.

use std::path::Path;

use serde_json::Value;

pub fn assert_valid(schema_file: &str, instance: &Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schema")
        .join(schema_file);
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "{schema_file} rejects {instance}:\n{}",
        errors.join("\n")
    );
}
