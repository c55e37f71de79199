//! Who may run which command: the module's ACL categories (`@cuckoo`, and `@read`,
//! `@write`, `@fast`, `@slow` as each command's flags say) and `maxmemory`, which refuses
//! the commands that may allocate (`deny-oom`) and not the lookups.

mod common;

use common::{Server, config_set, error, query};
use redis::Connection;

const COMMANDS: [&str; 13] = [
    "CF.ADD",
    "CF.ADDNX",
    "CF.COUNT",
    "CF.DEBUG",
    "CF.DEL",
    "CF.EXISTS",
    "CF.INFO",
    "CF.INSERT",
    "CF.INSERTNX",
    "CF.LOADCHUNK",
    "CF.MEXISTS",
    "CF.RESERVE",
    "CF.SCANDUMP",
];

/// The module's commands in ACL category `category`, sorted.
fn in_category(con: &mut Connection, category: &str) -> Vec<String> {
    let mut names: Vec<String> = query::<Vec<String>>(con, &["ACL", "CAT", category])
        .unwrap()
        .into_iter()
        .map(|name| name.to_uppercase())
        .filter(|name| name.starts_with("CF."))
        .collect();
    names.sort();
    names
}

#[test]
fn acl_categories_let_a_read_only_user_look_up_and_not_add() {
    let server = Server::start("acl");
    let mut con = server.connection();
    query::<String>(&mut con, &["CF.RESERVE", "f", "100"]).unwrap();
    query::<i64>(&mut con, &["CF.ADD", "f", "a"]).unwrap();
    let categories: Vec<String> = query(&mut con, &["ACL", "CAT"]).unwrap();
    if !categories.iter().any(|c| c == "cuckoo") {
        // Redis before 7.4 (Debian's 7.0) has no module ACL categories, and puts a
        // module's commands in none of its own: nothing to check there.
        eprintln!("skipped: this server has no module ACL categories");
        assert!(in_category(&mut con, "read").is_empty());
        return;
    }
    assert_eq!(in_category(&mut con, "cuckoo"), COMMANDS);
    let reads = [
        "CF.COUNT",
        "CF.DEBUG",
        "CF.EXISTS",
        "CF.INFO",
        "CF.MEXISTS",
        "CF.SCANDUMP",
    ];
    assert_eq!(in_category(&mut con, "read"), reads);
    let writes: Vec<&str> = COMMANDS
        .into_iter()
        .filter(|c| !reads.contains(c))
        .collect();
    assert_eq!(in_category(&mut con, "write"), writes);
    let fast = [
        "CF.COUNT",
        "CF.DEBUG",
        "CF.DEL",
        "CF.EXISTS",
        "CF.INFO",
        "CF.MEXISTS",
    ];
    assert_eq!(in_category(&mut con, "fast"), fast);
    let slow: Vec<&str> = COMMANDS.into_iter().filter(|c| !fast.contains(c)).collect();
    assert_eq!(in_category(&mut con, "slow"), slow);

    for (user, rules) in [
        ("reader", &["+@read"][..]),
        ("looker", &["+@cuckoo", "-@write"]),
    ] {
        let mut setuser = vec!["ACL", "SETUSER", user, "on", "nopass", "~*"];
        setuser.extend(rules);
        query::<String>(&mut con, &setuser).unwrap();
        let mut limited = server.connection();
        query::<String>(&mut limited, &["AUTH", user, "any"]).unwrap();
        assert_eq!(
            query::<i64>(&mut limited, &["CF.EXISTS", "f", "a"]).unwrap(),
            1,
            "{user}"
        );
        assert_eq!(
            query::<Vec<i64>>(&mut limited, &["CF.MEXISTS", "f", "a", "b"]).unwrap(),
            [1, 0]
        );
        for args in [
            &["CF.ADD", "f", "b"][..],
            &["CF.RESERVE", "g", "100"],
            &["CF.DEL", "f", "a"],
        ] {
            let refused = error(&mut limited, args);
            assert!(refused.starts_with("NOPERM"), "{user} {args:?}: {refused}");
        }
    }
    assert_eq!(query::<i64>(&mut con, &["CF.COUNT", "f", "a"]).unwrap(), 1);
    assert_eq!(query::<i64>(&mut con, &["EXISTS", "g"]).unwrap(), 0);
}

#[test]
fn maxmemory_refuses_growth_and_not_lookups() {
    let server = Server::start("oom");
    let mut con = server.connection();
    query::<String>(&mut con, &["CF.RESERVE", "f", "100"]).unwrap();
    query::<i64>(&mut con, &["CF.ADD", "f", "a"]).unwrap();
    // Far below what the server already uses: every deny-oom command is refused.
    config_set(&mut con, "maxmemory", "1").unwrap();
    for args in [
        &["CF.ADD", "f", "b"][..],
        &["CF.ADDNX", "f", "b"],
        &["CF.INSERT", "f", "ITEMS", "b"],
        &["CF.INSERTNX", "f", "ITEMS", "b"],
        &["CF.RESERVE", "g", "100"],
        &["CF.LOADCHUNK", "g", "1", "header"],
    ] {
        let refused = error(&mut con, args);
        assert!(refused.starts_with("OOM"), "{args:?}: {refused}");
    }
    assert_eq!(query::<i64>(&mut con, &["CF.EXISTS", "f", "a"]).unwrap(), 1);
    assert_eq!(query::<i64>(&mut con, &["CF.EXISTS", "f", "b"]).unwrap(), 0);
    assert_eq!(query::<i64>(&mut con, &["CF.COUNT", "f", "a"]).unwrap(), 1);
    query::<Vec<redis::Value>>(&mut con, &["CF.INFO", "f"]).unwrap();
    // A delete frees nothing and allocates nothing: still allowed.
    assert_eq!(query::<i64>(&mut con, &["CF.DEL", "f", "a"]).unwrap(), 1);
    config_set(&mut con, "maxmemory", "0").unwrap();
    assert_eq!(query::<i64>(&mut con, &["CF.ADD", "f", "b"]).unwrap(), 1);
}
