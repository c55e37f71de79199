//! Driving a server: pipelines from many connections, and the queries figures read.

use std::collections::HashMap;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use redis::{Connection, ConnectionLike, Value};

use crate::Result;
use crate::server::Server;
use crate::workload::{Batch, Plan};

/// Replies counted: integer 1s (inside arrays too) and errors; 0s are fine.
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) ones: u64,
    pub(crate) errors: u64,
    pub(crate) first_error: Option<String>,
}

impl Tally {
    fn count(&mut self, reply: &Value) {
        match reply {
            Value::Int(1) => self.ones += 1,
            Value::Int(0) => {}
            Value::Array(replies) => replies.iter().for_each(|r| self.count(r)),
            Value::ServerError(e) => self.error(describe(&e.clone().into())),
            other => self.error(format!("unexpected reply {other:?}")),
        }
    }

    fn error(&mut self, text: String) {
        self.errors += 1;
        self.first_error.get_or_insert(text);
    }

    fn merge(&mut self, other: Self) {
        self.ones += other.ones;
        self.errors += other.errors;
        if let Some(text) = other.first_error {
            self.first_error.get_or_insert(text);
        }
    }
}

/// Sends each thread's pipelines on its own connection, all threads starting together;
/// the time from the start to the last reply, and the replies' tally.
pub(crate) fn drive(server: &Server, plan: &Plan) -> Result<(Duration, Tally)> {
    let connections = plan
        .iter()
        .map(|_| server.connect())
        .collect::<Result<Vec<_>>>()?;
    let barrier = Barrier::new(plan.len() + 1);
    std::thread::scope(|scope| {
        let clients: Vec<_> = plan
            .iter()
            .zip(connections)
            .map(|(batches, con)| {
                let barrier = &barrier;
                scope.spawn(move || {
                    barrier.wait();
                    send(con, batches)
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        let mut tally = Tally::default();
        for client in clients {
            tally.merge(client.join().map_err(|_| "a client thread panicked")??);
        }
        Ok((start.elapsed(), tally))
    })
}

/// One client's pipelines, one after another.
fn send(mut con: Connection, batches: &[Batch]) -> Result<Tally> {
    let mut tally = Tally::default();
    for batch in batches {
        let replies = con
            .req_packed_commands(&batch.bytes, 0, batch.commands)
            .map_err(|e| format!("a pipeline failed: {e}"))?;
        replies.iter().for_each(|reply| tally.count(reply));
    }
    Ok(tally)
}

pub(crate) fn query<T: redis::FromRedisValue>(con: &mut Connection, cmd: &redis::Cmd) -> Result<T> {
    cmd.query(con).map_err(|e| describe(&e))
}

/// A server's error as it worded it (`ERR ...`), anything else as the client does.
pub(crate) fn describe(error: &redis::RedisError) -> String {
    match (error.code(), error.detail()) {
        (Some(code), Some(detail)) => format!("{code} {detail}"),
        _ => error.to_string(),
    }
}

pub(crate) fn reserve(con: &mut Connection, key: &str, capacity: usize) -> Result<()> {
    query::<String>(con, redis::cmd("CF.RESERVE").arg(key).arg(capacity))
        .map(drop)
        .map_err(|e| format!("CF.RESERVE {key} {capacity}: {e}"))
}

/// `CF.INFO`'s fields by name.
pub(crate) fn cf_info(con: &mut Connection, key: &str) -> Result<HashMap<String, i64>> {
    info_fields(&query(con, redis::cmd("CF.INFO").arg(key))?)
}

/// The integer fields of a `CF.INFO` reply (others, such as a bound given as a
/// string, are left out).
pub(crate) fn info_fields(reply: &Value) -> Result<HashMap<String, i64>> {
    let Value::Array(fields) = reply else {
        return Err(format!("CF.INFO replied {reply:?}"));
    };
    Ok(fields
        .chunks_exact(2)
        .filter_map(|pair| match (&pair[0], &pair[1]) {
            (name, Value::Int(value)) => Some((redis::from_redis_value(name).ok()?, *value)),
            _ => None,
        })
        .collect())
}

pub(crate) fn field(info: &HashMap<String, i64>, name: &str) -> Result<i64> {
    info.get(name)
        .copied()
        .ok_or_else(|| format!("CF.INFO has no {name:?}"))
}

/// `usec_per_call` by command name (`cf.add`, ...) from `INFO commandstats`.
pub(crate) fn usec_per_call(con: &mut Connection) -> Result<HashMap<String, f64>> {
    let text: String = query(con, redis::cmd("INFO").arg("commandstats"))?;
    Ok(text
        .lines()
        .filter_map(|line| {
            let (name, stats) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let usec = stats
                .split(',')
                .find_map(|stat| stat.strip_prefix("usec_per_call="))?;
            // Redis 7.0 keeps a module command's name as registered (`CF.ADD`).
            Some((name.to_ascii_lowercase(), usec.parse().ok()?))
        })
        .collect())
}

/// The first loaded module's version from `MODULE LIST`.
pub(crate) fn module_version(con: &mut Connection) -> Option<i64> {
    let modules: Vec<Vec<Value>> = query(con, &redis::cmd("MODULE").arg("LIST").to_owned()).ok()?;
    let module = modules.first()?;
    let at = module
        .chunks_exact(2)
        .position(|pair| redis::from_redis_value::<String>(&pair[0]).is_ok_and(|n| n == "ver"))?;
    redis::from_redis_value(&module[2 * at + 1]).ok()
}
