use super::*;

fn load(text: &str) -> Result<RuleSet, Diagnostics> {
    RuleSet::load(&[SourceFile::new("r.toml", text)], &[])
}

fn failure(text: &str) -> Failure<'_> {
    Failure {
        text,
        tool: "read_file",
        source: Source::Result,
        rpc_code: None,
    }
}

#[test]
fn first_match_wins_by_priority_then_order() {
    let set = load(
        r#"
        [[rule]]
        id = "a"
        match = "boom"
        category = "business"
        [[rule]]
        id = "b"
        match = "boom"
        category = "permission"
        [[rule]]
        id = "c"
        match = "boom"
        priority = 5
        category = "transient"
        "#,
    )
    .unwrap();
    let ids: Vec<_> = set
        .matches(failure("boom"))
        .map(|m| m.rule.id.as_str())
        .collect();
    assert_eq!(ids, ["c", "a", "b"]);
    assert!(set.first_match(failure("nothing")).is_none());
}

#[test]
fn filters_on_tool_source_and_code() {
    let set = load(
        r#"
        [[rule]]
        id = "only-rpc"
        match = "x"
        source = "rpc"
        rpc_codes = [-32602]
        code = "NOT_FOUND"
        [[rule]]
        id = "only-git"
        tools = ["git_*"]
        category = "transient"
        "#,
    )
    .unwrap();
    let mut f = failure("x");
    assert!(set.first_match(f).is_none());
    f.source = Source::Rpc;
    f.rpc_code = Some(-32602);
    assert_eq!(set.first_match(f).unwrap().rule.id, "only-rpc");
    f.rpc_code = Some(-32601);
    assert!(set.first_match(f).is_none());
    f.tool = "git_status";
    assert_eq!(set.first_match(f).unwrap().rule.id, "only-git");
}

#[test]
fn defaults_fill_in_category_code_and_retryable() {
    let set = load(
        r#"
        [[rule]]
        id = "nf"
        match = "nf"
        code = "NOT_FOUND"
        [[rule]]
        id = "t"
        match = "t"
        category = "transient"
        [[rule]]
        id = "rl"
        match = "rl"
        category = "business"
        code = "RATE_LIMITED"
        "#,
    )
    .unwrap();
    let rule = |t| set.first_match(failure(t)).unwrap().rule;
    assert_eq!(
        (rule("nf").category, rule("nf").retryable),
        (Category::Validation, false)
    );
    assert_eq!(
        (rule("t").code.as_str(), rule("t").retryable),
        ("SYSTEM_UNAVAILABLE", true)
    );
    assert!(rule("rl").retryable);
}

#[test]
fn captures_feed_templates() {
    let set = load(
        r#"
        [[rule]]
        id = "enoent"
        match = "ENOENT: no such file or directory, (?P<op>\\w+) '(?P<path>[^']*)'"
        code = "NOT_FOUND"
        message = "{tool}: '{path}' does not exist"
        alternatives = ["list the folder of {path}"]
        "#,
    )
    .unwrap();
    let m = set
        .first_match(failure("ENOENT: no such file or directory, open '/a/b'"))
        .unwrap();
    assert_eq!(m.message().unwrap(), "read_file: '/a/b' does not exist");
    assert_eq!(m.alternatives(), ["list the folder of /a/b"]);
    assert_eq!(m.user_message(), None);
}

#[test]
fn user_rules_override_defaults_by_id_and_come_first() {
    let defaults = [SourceFile::new(
        "d.toml",
        "[[rule]]\nid = \"x\"\nmatch = \"e\"\ncategory = \"transient\"\n\
         [[rule]]\nid = \"y\"\nmatch = \"e\"\ncategory = \"business\"\n",
    )];
    let user = [SourceFile::new(
        "u.toml",
        "[[rule]]\nid = \"y\"\nenabled = false\ncategory = \"business\"\n\
         [[rule]]\nid = \"z\"\nmatch = \"e\"\ncategory = \"permission\"\n",
    )];
    let set = RuleSet::load(&user, &defaults).unwrap();
    let ids: Vec<_> = set.rules().iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["z", "x"]);
}

#[test]
fn enabled_false_alone_switches_a_default_off() {
    let defaults = [SourceFile::new(
        "d.toml",
        "[[rule]]\nid = \"enoent\"\nmatch = \"e\"\ncategory = \"validation\"\n",
    )];
    let off = [SourceFile::new(
        "off.toml",
        "[[rule]]\nid = \"enoent\"\nenabled = false\n",
    )];
    let set = RuleSet::load(&off, &defaults).unwrap_or_else(|e| panic!("{e}"));
    assert!(set.rules().is_empty());
    assert!(set.switching_off_nothing().is_empty());
}

#[test]
fn a_switch_off_that_names_no_default_is_reported_with_the_id_meant() {
    let defaults = [SourceFile::new(
        "d.toml",
        "[[rule]]\nid = \"enoent\"\nmatch = \"e\"\ncategory = \"validation\"\n",
    )];
    let typo = [SourceFile::new(
        "off.toml",
        "[[rule]]\nid = \"enoentt\"\nenabled = false\n\
         [[rule]]\nid = \"parked\"\nenabled = false\nmatch = \"p\"\ncategory = \"business\"\n",
    )];
    // Loads (a start or reload is not refused for it): only `check` judges it.
    let set = RuleSet::load(&typo, &defaults).unwrap_or_else(|e| panic!("{e}"));
    let reported: Vec<String> = set
        .switching_off_nothing()
        .iter()
        .map(ToString::to_string)
        .collect();
    // A whole rule parked with `enabled = false` is no switch-off.
    assert_eq!(
        reported,
        [
            "error: off.toml:2:6: rule 'enoentt': switches off no rule: there is no default rule \
          'enoentt'; did you mean 'enoent'?"
        ]
    );
    // Without defaults there is nothing to switch off, and nothing lost.
    assert!(RuleSet::load(&typo, &[])
        .unwrap()
        .switching_off_nothing()
        .is_empty());
}

#[test]
fn embedded_defaults_load() {
    assert!(!RuleSet::defaults().rules().is_empty());
}

/// Loading skips compiling the embedded regexes (start-up time); this is what makes that
/// safe. As user files they get every check: regex syntax and size, placeholders.
#[test]
fn embedded_defaults_pass_every_check() {
    let strict = RuleSet::load(&default_sources(), &[]).unwrap_or_else(|e| panic!("{e}"));
    for rule in strict.rules() {
        assert!(rule.user);
        if let Some(regex) = &rule.regex {
            regex.get();
        }
    }
    assert_eq!(strict.rules().len(), RuleSet::defaults().rules().len());
}

#[test]
fn a_trusted_file_is_only_the_embedded_text() {
    // The same name with other text gets every check.
    let name = format!("(embedded) {}", EMBEDDED_DEFAULTS[0].0);
    let file = SourceFile::new(
        name,
        "[[rule]]\nid = \"x\"\nmatch = \"(\"\ncategory = \"business\"\n",
    );
    let e = RuleSet::load(&[], &[file]).unwrap_err().to_string();
    assert!(e.contains("rule 'x': invalid regex in 'match'"), "{e}");
}

#[test]
fn the_first_pass_is_built_by_the_first_failure() {
    let set = load("[[rule]]\nid = \"a\"\nmatch = \"boom\"\ncategory = \"business\"\n").unwrap();
    assert!(set.first_pass.get().is_none());
    assert!(set.first_match(failure("boom")).is_some());
    assert!(set.first_pass.get().is_some_and(Option::is_some));
}

#[test]
fn successes_do_not_build_the_first_pass() {
    let set = load(
        "[[rule]]\nid = \"s\"\nsource = \"success\"\nmatch = \"^Error: (?P<detail>.+)\"\n\
         category = \"business\"\n\
         [[rule]]\nid = \"r\"\nmatch = \"Error\"\ncategory = \"transient\"\n",
    )
    .unwrap();
    let mut success = failure("Error: no such table");
    success.source = Source::Success;
    let m = set.first_match(success).unwrap();
    assert_eq!(
        (m.rule.id.as_str(), m.value("detail")),
        ("s", Some("no such table"))
    );
    success.text = "3 rows";
    assert!(set.first_match(success).is_none());
    assert!(set.first_pass.get().is_none());
}

#[test]
fn without_a_first_pass_every_rule_decides_alone() {
    let set = load(
        "[[rule]]\nid = \"a\"\nmatch = \"boom\"\ncategory = \"business\"\n\
         [[rule]]\nid = \"b\"\ncategory = \"transient\"\n",
    )
    .unwrap();
    set.first_pass.set(None).unwrap();
    let ids = |t| {
        set.matches(failure(t))
            .map(|m| m.rule.id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids("a boom"), ["a", "b"]);
    assert_eq!(ids("calm"), ["b"]);
}

#[test]
fn a_tools_filter_too_large_to_build_is_an_error_not_dropped() {
    let text = format!(
        "[[rule]]\nid = \"wide\"\nmatch = \"boom\"\ncategory = \"business\"\ntools = [\"{}\"]\n",
        "?".repeat(600_000)
    );
    let problems = load(&text).expect_err("refused").to_string();
    assert!(
        problems.contains("r.toml:5:10: rule 'wide': the globs in 'tools' do not build"),
        "{problems}"
    );
}

#[test]
fn the_regexes_of_a_table_together_have_a_limit() {
    // Each under the limit of one regex, together over the table's: refused at the rule that
    // crosses it, and said once.
    let rule = |i: usize| {
        format!(
            "[[rule]]\nid = \"big{i}\"\nmatch = '(?P<v>x{i}\\w{{20}})'\ncategory = \"business\"\nmessage = \"{{v}}\"\n"
        )
    };
    let many: String = (0..200).map(rule).collect();
    let problems = load(&many).unwrap_err().to_string();
    assert!(
        problems.contains("regexes together take more than 64 MiB compiled"),
        "{problems}"
    );
    assert_eq!(problems.lines().count(), 1, "{problems}");
    let few: String = (0..5).map(rule).collect();
    assert_eq!(load(&few).unwrap().rules().len(), 5);
}

#[test]
fn successes_are_read_only_for_the_tools_some_success_rule_names() {
    let rule = |id: &str, source: &str, tools: &str| {
        format!("[[rule]]\nid = \"{id}\"\nmatch = \"x\"\ncategory = \"business\"\nsource = \"{source}\"\ntools = [{tools}]\n")
    };
    let set = load(&format!(
        "{}{}{}",
        rule("a", "success", "\"git_*\""),
        rule("b", "success", "\"query\", \"*_sql\""),
        rule("c", "result", "\"read_file\""),
    ))
    .unwrap();
    for (tool, read) in [
        ("git_log", true),
        ("query", true),
        ("run_sql", true),
        ("read_file", false),
        ("gitlog", false),
    ] {
        assert_eq!(set.inspects_successes_of(tool), read, "{tool}");
    }
    let every = load(&format!(
        "{}{}",
        rule("a", "success", "\"git_*\""),
        rule("b", "success", "")
    ))
    .unwrap();
    assert!(
        every.inspects_successes_of("anything"),
        "a success rule for every tool"
    );
    assert!(!load(&rule("c", "result", ""))
        .unwrap()
        .inspects_successes_of("read_file"));
}

#[test]
fn a_named_pattern_stands_in_for_its_name_in_every_match_of_its_file() {
    let set = load(
        r#"
        [patterns]
        frame = '(?:HTTP|status code)\W{0,3}'
        [[rule]]
        id = "gone"
        match = '{frame}410\b'
        category = "validation"
        [[rule]]
        id = "braces"
        match = 'a\{frame}|b{2}'
        category = "business"
        "#,
    )
    .unwrap();
    let first = |text| set.first_match(failure(text)).map(|m| m.rule.id.as_str());
    assert_eq!(first("Request failed with status code 410"), Some("gone"));
    assert_eq!(first("HTTP 410 Gone"), Some("gone"));
    assert_eq!(first("410"), None);
    // An escaped brace and a quantifier are regex, not names.
    assert_eq!(first("a{frame}"), Some("braces"));
    assert_eq!(first("bb"), Some("braces"));
}
