//! The workload: items, lookups and their pipelines, packed once for every run.

use crate::KEY;
use crate::options::Options;

/// A pipeline packed ahead of time: the bytes sent and the replies to read.
pub(crate) struct Batch {
    pub(crate) bytes: Vec<u8>,
    pub(crate) commands: usize,
}

/// One phase's pipelines, one list per client thread.
pub(crate) type Plan = Vec<Vec<Batch>>;

pub(crate) struct Workload {
    /// `item:{i}`: the items added.
    pub(crate) items: Vec<String>,
    /// The lookups: even `j` an added item, odd `j` `absent:{j}`.
    pub(crate) lookups: Vec<String>,
    /// Of the lookups, how many are added items.
    pub(crate) present: usize,
    pub(crate) add: Plan,
    pub(crate) exists: Plan,
    pub(crate) mexists: Plan,
    pub(crate) mexists_commands: usize,
}

impl Workload {
    pub(crate) fn new(options: &Options) -> Self {
        let n = options.items;
        let items: Vec<String> = (0..n).map(|i| format!("item:{i}")).collect();
        let lookups: Vec<String> = (0..n)
            .map(|j| {
                if j % 2 == 0 {
                    items[j].clone()
                } else {
                    format!("absent:{j}")
                }
            })
            .collect();
        let (threads, pipeline) = (options.connections, options.pipeline);
        let add = plan(n, threads, pipeline, |i| {
            let mut cmd = redis::cmd("CF.ADD");
            cmd.arg(KEY).arg(&items[i]);
            cmd
        });
        let exists = plan(n, threads, pipeline, |j| {
            let mut cmd = redis::cmd("CF.EXISTS");
            cmd.arg(KEY).arg(&lookups[j]);
            cmd
        });
        let batch = options.mexists_batch;
        let mexists_commands = n.div_ceil(batch);
        let mexists = plan(mexists_commands, threads, pipeline, |c| {
            let mut cmd = redis::cmd("CF.MEXISTS");
            cmd.arg(KEY)
                .arg(&lookups[c * batch..((c + 1) * batch).min(n)]);
            cmd
        });
        Self {
            present: n.div_ceil(2),
            items,
            lookups,
            add,
            exists,
            mexists,
            mexists_commands,
        }
    }
}

/// `count` commands (`command(i)` makes the `i`th) split into `threads` contiguous
/// slices, each cut into pipelines of `pipeline` commands.
pub(crate) fn plan(
    count: usize,
    threads: usize,
    pipeline: usize,
    command: impl Fn(usize) -> redis::Cmd,
) -> Plan {
    (0..threads)
        .map(|t| {
            let (start, end) = (t * count / threads, (t + 1) * count / threads);
            (start..end)
                .step_by(pipeline)
                .map(|first| {
                    let last = (first + pipeline).min(end);
                    let mut pipe = redis::pipe();
                    for i in first..last {
                        pipe.add_command(command(i));
                    }
                    Batch {
                        bytes: pipe.get_packed_pipeline(),
                        commands: last - first,
                    }
                })
                .collect()
        })
        .collect()
}
