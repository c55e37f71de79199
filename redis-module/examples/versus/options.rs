//! The command-line options and the checks on the module files they name.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::Result;

pub(crate) const USAGE: &str = "\
usage: cargo run --release -p cuckoo-redis --example versus -- [options]
  --redisbloom PATH      RedisBloom 2.8's redisbloom.so [$REDISBLOOM_MODULE]
  --module PATH          this module [target/release/libcuckoo_redis.so]
  --redis-server PATH    server binary for both [$REDIS_SERVER or redis-server]
  --items N              items added to the measured key [1000000]
  --connections C        client threads, one connection each [8]
  --pipeline P           commands per pipeline [32]
  --mexists-batch B      items per CF.MEXISTS [10]
  --fpr-keys M           never-added keys for the false-positive rate [1000000]
  --growth-capacity G    capacity of the key filled to find the first growth [100000]
  --samples S            throughput runs per configuration; medians reported [3]
See the doc comment at the top of redis-module/examples/versus/main.rs for what each figure means.
";

pub(crate) struct Options {
    pub(crate) redisbloom: Option<PathBuf>,
    pub(crate) module: PathBuf,
    pub(crate) server: String,
    pub(crate) items: usize,
    pub(crate) connections: usize,
    pub(crate) pipeline: usize,
    pub(crate) mexists_batch: usize,
    pub(crate) fpr_keys: usize,
    pub(crate) growth_capacity: usize,
    pub(crate) samples: usize,
}

impl Options {
    fn defaults() -> Self {
        Self {
            redisbloom: std::env::var_os("REDISBLOOM_MODULE").map(PathBuf::from),
            module: Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../target/release")
                .join(format!(
                    "{}cuckoo_redis{}",
                    std::env::consts::DLL_PREFIX,
                    std::env::consts::DLL_SUFFIX
                )),
            server: std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".into()),
            items: 1_000_000,
            connections: 8,
            pipeline: 32,
            mexists_batch: 10,
            fpr_keys: 1_000_000,
            growth_capacity: 100_000,
            samples: 3,
        }
    }

    /// The options, or `None` for `--help`.
    pub(crate) fn parse(mut args: impl Iterator<Item = String>) -> Result<Option<Self>> {
        let mut options = Self::defaults();
        while let Some(arg) = args.next() {
            if arg == "-h" || arg == "--help" {
                return Ok(None);
            }
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) => (flag.to_string(), Some(value.to_string())),
                None => (arg, None),
            };
            let Some(value) = inline.or_else(|| args.next()) else {
                return Err(format!("{flag} needs a value"));
            };
            match flag.as_str() {
                "--redisbloom" => options.redisbloom = Some(value.into()),
                "--module" => options.module = value.into(),
                "--redis-server" => options.server = value,
                "--items" => options.items = count(&flag, &value)?,
                "--connections" => options.connections = count(&flag, &value)?,
                "--pipeline" => options.pipeline = count(&flag, &value)?,
                "--mexists-batch" => options.mexists_batch = count(&flag, &value)?,
                "--fpr-keys" => options.fpr_keys = count(&flag, &value)?,
                "--growth-capacity" => options.growth_capacity = count(&flag, &value)?,
                "--samples" => options.samples = count(&flag, &value)?,
                _ => return Err(format!("unknown option {flag}")),
            }
        }
        Ok(Some(options))
    }
}

/// A positive count; `_` and `,` may group digits.
fn count(flag: &str, value: &str) -> Result<usize> {
    value
        .replace(['_', ','], "")
        .parse()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("{flag} needs a positive number, not {value:?}"))
}

/// The module's absolute path (the server changes directory before loading modules),
/// once it is known to be a file `redis-server` will load.
pub(crate) fn checked_module(path: &Path, what: &str) -> Result<PathBuf> {
    let path = path
        .canonicalize()
        .map_err(|e| format!("{what}: no module at {}: {e}", path.display()))?;
    let mode = fs::metadata(&path)
        .map_err(|e| format!("{what}: {}: {e}", path.display()))?
        .permissions()
        .mode();
    if mode & 0o111 == 0 {
        return Err(format!(
            "{what}: redis-server refuses a module without execute permission: chmod +x {}",
            path.display()
        ));
    }
    Ok(path)
}

/// Warns when a source file is newer than the built module (the example's build does not
/// rebuild the `.so` the servers load).
pub(crate) fn warn_if_stale(module: &Path) {
    let Ok(built) = fs::metadata(module).and_then(|m| m.modified()) else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let newer = [root.join("src"), root.join("../src")]
        .iter()
        .filter_map(|dir| fs::read_dir(dir).ok())
        .flatten()
        .flatten()
        .find(|entry| {
            entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|modified| modified > built)
        });
    if let Some(entry) = newer {
        eprintln!(
            "warning: {} is newer than {}: run `cargo build --release -p cuckoo-redis` first",
            entry.path().display(),
            module.display()
        );
    }
}
