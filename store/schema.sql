-- autotune database schema, version 6 (a read-write open migrates an older database by
-- rebuilding its runs table and adding the decision tables: store/store_migration.cc says what each version added).
-- Read it with the sqlite3 shell, e.g.:
--   sqlite3 autotune.db 'SELECT id, workload_name, complete, step_ms_median FROM runs'
-- Times: *_us are microseconds from the start of the step on the rank that measured them
-- (every step starts after a barrier); *_ms are milliseconds. Bytes are bytes.
-- score_bytes_per_s is Horovod's score, bytes reduced + gathered per second, and always the
-- same statistic over a series of steps: their total bytes / their total time (in seconds),
-- never a median or mean of per-step ratios (traces/score.h), measured or simulated alike.
-- The build embeds this file; the store creates it in one transaction on a new database.

-- Identity and version. application = 'autotune'; schema_version = 8, also kept as the file
-- header's PRAGMA user_version, which every open checks first.
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

-- One row per run: a measured `autotune record`, a simulated replay, or an imported real job
-- (`autotune import` of a Horovod timeline).
CREATE TABLE runs (
  id                     INTEGER PRIMARY KEY,
  created_at             TEXT NOT NULL,           -- UTC, ISO 8601
  kind                   TEXT NOT NULL CHECK (kind IN ('measured', 'simulated', 'imported')),
  command                TEXT NOT NULL,           -- command line that made the run
  workload_name          TEXT NOT NULL,
  workload_json          TEXT NOT NULL,           -- the workload as played (after --scale)
  scale                  REAL NOT NULL,
  fusion_threshold_mb    REAL NOT NULL,           -- knobs, one column each ...
  cycle_time_ms          REAL NOT NULL,
  cache_capacity         INTEGER NOT NULL,
  hierarchical_allreduce INTEGER NOT NULL,
  hierarchical_allgather INTEGER NOT NULL,
  num_groups             INTEGER NOT NULL,
  knobs_json             TEXT NOT NULL,           -- ... and all knobs incl. backend ones
  nodes                  INTEGER NOT NULL,
  ranks_per_node         INTEGER NOT NULL,
  hosts_json             TEXT NOT NULL,           -- host name per node
  backend                TEXT NOT NULL,           -- mpi | nccl
  hardware               TEXT NOT NULL,
  steps_planned          INTEGER NOT NULL,
  warmup_steps           INTEGER NOT NULL,
  complete               INTEGER NOT NULL DEFAULT 0,  -- 1 once every planned step is stored
  steps_recorded         INTEGER NOT NULL DEFAULT 0,
  score_bytes_per_s      REAL,                    -- its steps' sum(bytes) / sum(step_ms)
  step_ms_median         REAL,
  step_ms_p95            REAL,
  source_run             INTEGER REFERENCES runs (id),  -- simulated: the replayed trace
  -- Why an incomplete run ended ('' while running, or when it completed), one line, e.g.
  -- "stopped by SIGTERM", "rank 3 on node1 died (signal 9)", "stall: rank 2 on node0 ...".
  end_reason             TEXT NOT NULL DEFAULT '',
  -- The training framework the run models or measured (its knobs, its fusion policy).
  framework              TEXT NOT NULL DEFAULT 'horovod' CHECK (framework IN ('horovod', 'ddp')),
  -- The machine, for the model of compute slowed by communication: CPU cores the ranks of one
  -- host share (0 = not known) and nodes of the topology per host (an emulated cluster puts
  -- several on one machine).
  host_cores             INTEGER NOT NULL DEFAULT 0,
  nodes_per_host         INTEGER NOT NULL DEFAULT 1,
  -- An imported run's production step time (the job without its timeline or trace) at the
  -- same setting, ms; 0 = not known.
  untraced_step_ms       REAL NOT NULL DEFAULT 0,
  -- An imported run: a hash of its source files and the options of its import, by which a
  -- second import of the same is recognised (empty for other runs).
  source_hash            TEXT NOT NULL DEFAULT '',
  -- An imported run: the traced job's own step time in ms (its wall clock per step while
  -- the trace was written); 0 = not known. Added in version 7 as the last column
  traced_step_ms         REAL NOT NULL DEFAULT 0
);

-- The workload's tensors, for reading traces by name.
CREATE TABLE tensors (
  run_id     INTEGER NOT NULL REFERENCES runs (id),
  tensor     INTEGER NOT NULL,                    -- index in ready order
  name       TEXT NOT NULL,
  op         TEXT NOT NULL,                       -- allreduce | allgather
  dtype      TEXT NOT NULL,
  elements   INTEGER NOT NULL,
  bytes      INTEGER NOT NULL,
  ready_ms   REAL NOT NULL,                       -- planned, from backward start
  PRIMARY KEY (run_id, tensor)
) WITHOUT ROWID;

-- One row per measured step (warm-up steps are not stored).
CREATE TABLE steps (
  run_id            INTEGER NOT NULL REFERENCES runs (id),
  step              INTEGER NOT NULL,
  step_ms           REAL NOT NULL,                -- max over ranks
  backward_start_us REAL NOT NULL,
  bytes             INTEGER NOT NULL,             -- reduced + gathered
  score_bytes_per_s REAL NOT NULL,                -- bytes / step_ms, this step alone
  PRIMARY KEY (run_id, step)
) WITHOUT ROWID;

-- Per rank, per step, per tensor: when the gradient was ready and when it was done.
CREATE TABLE tensor_events (
  run_id   INTEGER NOT NULL,
  step     INTEGER NOT NULL,
  rank     INTEGER NOT NULL,
  tensor   INTEGER NOT NULL,
  ready_us REAL NOT NULL,
  done_us  REAL NOT NULL,
  PRIMARY KEY (run_id, step, rank, tensor)
) WITHOUT ROWID;

-- Background cycles that had work (coordinator, rank 0).
CREATE TABLE cycles (
  run_id           INTEGER NOT NULL,
  step             INTEGER NOT NULL,
  rank             INTEGER NOT NULL,
  cycle            INTEGER NOT NULL,
  start_us         REAL NOT NULL,
  negotiate_end_us REAL NOT NULL,
  submitted        INTEGER NOT NULL,              -- tensors newly offered by this rank
  cache_hits       INTEGER NOT NULL,              -- responses agreed via the cache bits
  responses        INTEGER NOT NULL,              -- tensors ready on all ranks
  collectives      INTEGER NOT NULL,              -- fused collectives launched
  PRIMARY KEY (run_id, step, rank, cycle)
) WITHOUT ROWID;

-- Fused collectives (rank 0; every rank runs the same ones).
CREATE TABLE collectives (
  run_id         INTEGER NOT NULL,
  step           INTEGER NOT NULL,
  rank           INTEGER NOT NULL,
  seq            INTEGER NOT NULL,
  cycle          INTEGER NOT NULL,
  op             TEXT NOT NULL,                   -- allreduce | allgather
  algorithm      TEXT NOT NULL,                   -- flat | hierarchical
  bytes          INTEGER NOT NULL,                -- fusion buffer bytes
  tensor_count   INTEGER NOT NULL,
  tensors        TEXT NOT NULL,                   -- member tensor indices, comma-separated
  start_us       REAL NOT NULL,                   -- copy-in starts
  copy_in_end_us REAL NOT NULL,
  comm_end_us    REAL NOT NULL,
  end_us         REAL NOT NULL,                   -- copy-out done
  PRIMARY KEY (run_id, step, rank, seq)
) WITHOUT ROWID;

-- Collective time against size, for the simulator's network model.
CREATE TABLE calibrations (
  id             INTEGER PRIMARY KEY,
  created_at     TEXT NOT NULL,
  backend        TEXT NOT NULL,
  nodes          INTEGER NOT NULL,
  ranks_per_node INTEGER NOT NULL,
  hosts_json     TEXT NOT NULL,
  hardware       TEXT NOT NULL,
  -- Open MPI's TCP eager limit it ran under (bytes; 0 = Open MPI's own); schema 8
  tcp_eager_limit INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE calibration_points (
  calibration_id INTEGER NOT NULL REFERENCES calibrations (id),
  op             TEXT NOT NULL,                   -- allreduce | allgather
  scope          TEXT NOT NULL,                   -- world | intra | cross | hierarchical | copy
  ranks          INTEGER NOT NULL,                -- communicator size
  bytes          INTEGER NOT NULL,                -- per rank
  repetitions    INTEGER NOT NULL,
  median_us      REAL NOT NULL,
  min_us         REAL NOT NULL,
  max_us         REAL NOT NULL,
  mean_us        REAL NOT NULL DEFAULT 0      -- 0: not measured; schema 8
);
CREATE INDEX calibration_points_by_id ON calibration_points (calibration_id);

-- Scored points in knob space, measured (complete measured or imported runs) or simulated
-- (replays).
CREATE TABLE samples (
  id                INTEGER PRIMARY KEY,
  created_at        TEXT NOT NULL,
  fidelity          TEXT NOT NULL CHECK (fidelity IN ('measured', 'simulated')),
  run_id            INTEGER,                      -- measured run or simulated run row
  trace_run_id      INTEGER,                      -- trace it derives from
  calibration_id    INTEGER,                      -- network model used (simulated)
  workload          TEXT NOT NULL,
  nodes             INTEGER NOT NULL,
  ranks_per_node    INTEGER NOT NULL,
  knobs_json        TEXT NOT NULL,
  score_bytes_per_s REAL NOT NULL,                -- total bytes / total time of its steps
  step_ms           REAL NOT NULL                 -- median step time
);
CREATE INDEX samples_by_workload ON samples (workload, nodes, ranks_per_node);

-- What a search decided (version 6; these tables stay last: the migration creates them from
-- here). One row per decision `search` (or `record --autotune`) took: the setting it chose,
-- the verdict on its candidate against the default, the interval, and what it was decided
-- from. `runs`, `report` and a later `search` of the same evidence show it as stored.
CREATE TABLE decisions (
  id                   INTEGER PRIMARY KEY,
  created_at           TEXT NOT NULL,           -- UTC, ISO 8601
  run_id               INTEGER NOT NULL,        -- the run searched from
  command              TEXT NOT NULL,           -- search | search --live | record --autotune
  evidence_key         TEXT NOT NULL,           -- the measured samples and the question it
                                                -- was decided from; equal key: same decision
  chosen_knobs_json    TEXT NOT NULL,           -- the setting written: the candidate when
                                                -- verdict = 'beats_default', else the default
  candidate_knobs_json TEXT NOT NULL,           -- the setting judged against the default
  default_knobs_json   TEXT NOT NULL,
  verdict              TEXT NOT NULL CHECK (verdict IN ('is_default', 'best_not_measured',
                         'default_not_measured', 'no_step_times', 'run_to_run_unknown',
                         'within_noise', 'runs_disagree', 'beats_default')),
  speedup              REAL,                    -- candidate over default, from the run
  speedup_low          REAL,                    -- medians (tuner/run_comparison.h); NULL
  speedup_high         REAL,                    -- when the verdict has no speedup
  confidence           REAL,                    -- two-sided level of [low, high]
  noise_cv             REAL NOT NULL,           -- step-time noise the verdict was stated against
  summary              TEXT NOT NULL            -- the verdict line as printed
);
CREATE INDEX decisions_by_run ON decisions (run_id);

-- The real runs behind a decision's speedup, in the order they ran.
CREATE TABLE decision_runs (
  decision_id    INTEGER NOT NULL REFERENCES decisions (id),
  seq            INTEGER NOT NULL,              -- 0, 1, ... in run order
  run_id         INTEGER NOT NULL,              -- the real run (0: none stored)
  role           TEXT NOT NULL CHECK (role IN ('default', 'candidate')),
  steps          INTEGER NOT NULL,
  median_step_ms REAL NOT NULL,
  outlier        INTEGER NOT NULL,              -- 1: left out, an outlier among its repeats
  PRIMARY KEY (decision_id, seq)
) WITHOUT ROWID;
