"""Append-only numbered schema migrations. Never edit one that has shipped; add the next."""

MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "initial",
        """
        CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            suite_name TEXT NOT NULL,
            suite_source TEXT NOT NULL,
            suite_text TEXT NOT NULL,
            target TEXT NOT NULL,
            target_kind TEXT NOT NULL CHECK (target_kind IN ('directory', 'file', 'device')),
            test_path TEXT NOT NULL,
            options_json TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),
            error TEXT,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            disklab_version TEXT NOT NULL,
            fio_version TEXT NOT NULL,
            fio_engine TEXT NOT NULL,
            hostname TEXT NOT NULL,
            kernel TEXT NOT NULL,
            pid INTEGER NOT NULL,
            planned_tests INTEGER NOT NULL
        );
        CREATE TABLE tests (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            label TEXT NOT NULL,
            params_json TEXT NOT NULL,
            jobfile TEXT NOT NULL,
            fio_output TEXT NOT NULL,
            fio_stderr TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT NOT NULL,
            usr_cpu_percent REAL NOT NULL,
            sys_cpu_percent REAL NOT NULL,
            UNIQUE (run_id, seq)
        );
        CREATE TABLE metrics (
            test_id INTEGER NOT NULL REFERENCES tests(id) ON DELETE CASCADE,
            direction TEXT NOT NULL CHECK (direction IN ('read', 'write', 'trim', 'sync')),
            iops REAL NOT NULL,
            bw_bytes_per_s REAL NOT NULL,
            io_bytes INTEGER NOT NULL,
            total_ios INTEGER NOT NULL,
            runtime_ms INTEGER NOT NULL,
            lat_mean_ns REAL NOT NULL,
            clat_mean_ns REAL NOT NULL,
            clat_max_ns REAL NOT NULL,
            clat_p50_ns REAL,
            clat_p90_ns REAL,
            clat_p99_ns REAL,
            clat_p99_9_ns REAL,
            clat_p99_99_ns REAL,
            PRIMARY KEY (test_id, direction)
        );
        CREATE INDEX tests_by_run ON tests (run_id, seq);
        """,
    ),
    (
        2,
        "series",
        # Per-interval values of tests with log_interval, jobs combined (fio/logs.py); kinds carry their unit.
        """
        CREATE TABLE series (
            test_id INTEGER NOT NULL REFERENCES tests(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            direction TEXT NOT NULL CHECK (direction IN ('read', 'write', 'trim')),
            t_ms INTEGER NOT NULL,
            value REAL NOT NULL,
            PRIMARY KEY (test_id, kind, direction, t_ms)
        ) WITHOUT ROWID;
        """,
    ),
    (
        3,
        "repeats, environment, SMART, flags and outcomes",
        """
        ALTER TABLE tests ADD COLUMN plan_index INTEGER;
        ALTER TABLE tests ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1;
        UPDATE tests SET plan_index = seq;
        CREATE TABLE run_env (
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            key TEXT NOT NULL,
            value_json TEXT NOT NULL,
            PRIMARY KEY (run_id, key)
        );
        CREATE TABLE run_smart (
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            device TEXT NOT NULL,
            phase TEXT NOT NULL CHECK (phase IN ('before', 'after')),
            data_json TEXT NOT NULL,
            PRIMARY KEY (run_id, device, phase)
        );
        CREATE TABLE test_flags (
            test_id INTEGER NOT NULL REFERENCES tests(id) ON DELETE CASCADE,
            flag TEXT NOT NULL,
            message TEXT NOT NULL,
            PRIMARY KEY (test_id, flag)
        );
        CREATE TABLE run_outcomes (
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            key TEXT NOT NULL,
            value_json TEXT NOT NULL,
            PRIMARY KEY (run_id, key)
        );
        """,
    ),
    (
        4,
        "run names and the host of each test",
        # host: the fio server a test ran on (client/server mode); NULL = this machine. name: the user's name for a run.
        """
        ALTER TABLE tests ADD COLUMN host TEXT;
        ALTER TABLE runs ADD COLUMN name TEXT;
        """,
    ),
    (
        5,
        "pgbench transactions as a direction",
        # pgbench steps store their TPS and latency as the direction 'transaction' (database/pgbench.py); SQLite
        # cannot change a CHECK constraint, so metrics and series are rebuilt with the same columns and rows.
        """
        CREATE TABLE metrics_new (
            test_id INTEGER NOT NULL REFERENCES tests(id) ON DELETE CASCADE,
            direction TEXT NOT NULL CHECK (direction IN ('read', 'write', 'trim', 'sync', 'transaction')),
            iops REAL NOT NULL,
            bw_bytes_per_s REAL NOT NULL,
            io_bytes INTEGER NOT NULL,
            total_ios INTEGER NOT NULL,
            runtime_ms INTEGER NOT NULL,
            lat_mean_ns REAL NOT NULL,
            clat_mean_ns REAL NOT NULL,
            clat_max_ns REAL NOT NULL,
            clat_p50_ns REAL,
            clat_p90_ns REAL,
            clat_p99_ns REAL,
            clat_p99_9_ns REAL,
            clat_p99_99_ns REAL,
            PRIMARY KEY (test_id, direction)
        );
        INSERT INTO metrics_new SELECT * FROM metrics;
        DROP TABLE metrics;
        ALTER TABLE metrics_new RENAME TO metrics;
        CREATE TABLE series_new (
            test_id INTEGER NOT NULL REFERENCES tests(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            direction TEXT NOT NULL CHECK (direction IN ('read', 'write', 'trim', 'transaction')),
            t_ms INTEGER NOT NULL,
            value REAL NOT NULL,
            PRIMARY KEY (test_id, kind, direction, t_ms)
        ) WITHOUT ROWID;
        INSERT INTO series_new SELECT * FROM series;
        DROP TABLE series;
        ALTER TABLE series_new RENAME TO series;
        """,
    ),
    (
        6,
        "indexes for listing runs",
        # Counting a run's tests by host must not walk each test's fio output (host is stored after it); the runs
        # list filters by suite, target and start; every command looks for this host's running runs.
        """
        CREATE INDEX tests_by_run_host ON tests (run_id, host);
        CREATE INDEX runs_by_suite ON runs (suite_name);
        CREATE INDEX runs_by_target ON runs (target);
        CREATE INDEX runs_by_start ON runs (started_at);
        CREATE INDEX runs_running ON runs (hostname) WHERE status = 'running';
        """,
    ),
    (
        7,
        "deleted run numbers",
        # A deleted run's number is never given to a new run: a script or a note that says "run 12" must not come
        # to mean another run (SQLite would reuse the highest id once its row is gone).
        """
        CREATE TABLE deleted_runs (
            id INTEGER PRIMARY KEY,
            deleted_at TEXT NOT NULL
        );
        """,
    ),
    (
        8,
        "run notes",
        # What a run's user wrote about it (`disklab note`), oldest first; a run's name stays one line in runs.
        """
        CREATE TABLE run_notes (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            text TEXT NOT NULL,
            added_at TEXT NOT NULL
        );
        CREATE INDEX run_notes_by_run ON run_notes (run_id, id);
        """,
    ),
    (
        9,
        "the keys that name a run's disks",
        # The devices pages group every run by the environment keys naming its disks (store/groups.py): these
        # three of its ~40 keys, with their values, so that the group reads 30,000 index entries, not 400,000 rows.
        # SQLite takes a partial index only for a WHERE that says the same, in these words (store/groups.py).
        # IF NOT EXISTS: a store whose index was made by hand is upgraded all the same.
        """
        CREATE INDEX IF NOT EXISTS run_env_identity ON run_env (run_id, key, value_json)
            WHERE key GLOB 'devices' OR key GLOB 'device.*.model' OR key GLOB 'device.*.serial';
        """,
    ),
    (
        10,
        "run identity, user and origin",
        # uid: a run's identity in every store it is copied to (store copy and import skip a run already there);
        # the numbers are each store's own. user_name: who ran it (a shared store has many). origin_json: where an
        # imported bundle's run came from (its store, number and export time), NULL for a run made here.
        """
        ALTER TABLE runs ADD COLUMN uid TEXT;
        UPDATE runs SET uid = lower(hex(randomblob(16)));
        CREATE UNIQUE INDEX runs_by_uid ON runs (uid);
        ALTER TABLE runs ADD COLUMN user_name TEXT;
        ALTER TABLE runs ADD COLUMN origin_json TEXT;
        """,
    ),
    (
        11,
        "each run's disks on the runs row",
        # The devices pages group 100,000 runs by host, target and the keys that name their disks: those keys kept
        # on the runs row too (device_env, a JSON object of them in key order; '{}' until the environment names
        # them), written by triggers whatever writes run_env, so that the groups are read from one index; and what a
        # search for text reads of each run (store/filters.py) in an index of its own, narrower than the runs rows.
        """
        ALTER TABLE runs ADD COLUMN device_env TEXT NOT NULL DEFAULT '{}';
        UPDATE runs SET device_env = (SELECT json_group_object(key, json(value_json)) FROM (
            SELECT key, value_json FROM run_env WHERE run_id = runs.id
            AND (key GLOB 'devices' OR key GLOB 'device.*.model' OR key GLOB 'device.*.serial') ORDER BY key));
        CREATE INDEX runs_by_device ON runs (hostname, target, device_env, started_at, id);
        CREATE INDEX runs_search ON runs (suite_name, hostname, target, name, device_env);
        CREATE TRIGGER run_env_identity_added AFTER INSERT ON run_env
            WHEN (NEW.key GLOB 'devices' OR NEW.key GLOB 'device.*.model' OR NEW.key GLOB 'device.*.serial') BEGIN
            UPDATE runs SET device_env = (SELECT json_group_object(key, json(value_json)) FROM (
                SELECT key, value_json FROM run_env WHERE run_id = NEW.run_id
                AND (key GLOB 'devices' OR key GLOB 'device.*.model' OR key GLOB 'device.*.serial') ORDER BY key))
            WHERE id = NEW.run_id;
        END;
        CREATE TRIGGER run_env_identity_changed AFTER UPDATE ON run_env
            WHEN (NEW.key GLOB 'devices' OR NEW.key GLOB 'device.*.model' OR NEW.key GLOB 'device.*.serial')
              OR (OLD.key GLOB 'devices' OR OLD.key GLOB 'device.*.model' OR OLD.key GLOB 'device.*.serial') BEGIN
            UPDATE runs SET device_env = (SELECT json_group_object(key, json(value_json)) FROM (
                SELECT key, value_json FROM run_env WHERE run_id = NEW.run_id
                AND (key GLOB 'devices' OR key GLOB 'device.*.model' OR key GLOB 'device.*.serial') ORDER BY key))
            WHERE id = NEW.run_id;
            UPDATE runs SET device_env = (SELECT json_group_object(key, json(value_json)) FROM (
                SELECT key, value_json FROM run_env WHERE run_id = OLD.run_id
                AND (key GLOB 'devices' OR key GLOB 'device.*.model' OR key GLOB 'device.*.serial') ORDER BY key))
            WHERE id = OLD.run_id;
        END;
        CREATE TRIGGER run_env_identity_removed AFTER DELETE ON run_env
            WHEN (OLD.key GLOB 'devices' OR OLD.key GLOB 'device.*.model' OR OLD.key GLOB 'device.*.serial') BEGIN
            UPDATE runs SET device_env = (SELECT json_group_object(key, json(value_json)) FROM (
                SELECT key, value_json FROM run_env WHERE run_id = OLD.run_id
                AND (key GLOB 'devices' OR key GLOB 'device.*.model' OR key GLOB 'device.*.serial') ORDER BY key))
            WHERE id = OLD.run_id;
        END;
        """,
    ),
    (
        12,
        "the groups of runs there are",
        # A device's history page reads the groups of runs (host, target, device_env) that make its device: the
        # combinations ever stored kept in a table of their own (tens of rows), written by triggers whatever writes
        # runs, so that the page counts only its device's runs, not every run of the store (store/groups.py). Rows
        # are added, never removed: a combination whose runs were all deleted counts none, and a deletion never
        # races a run stored under it. NOT EXISTS, not INSERT OR IGNORE: a statement's own conflict clause (the
        # environment's upsert) overrides the OR of a trigger it fires.
        """
        CREATE TABLE run_groups (
            hostname TEXT NOT NULL,
            target TEXT NOT NULL,
            device_env TEXT NOT NULL,
            PRIMARY KEY (hostname, target, device_env)
        ) WITHOUT ROWID;
        INSERT INTO run_groups SELECT DISTINCT hostname, target, device_env FROM runs;
        CREATE TRIGGER runs_group_added AFTER INSERT ON runs BEGIN
            INSERT INTO run_groups SELECT NEW.hostname, NEW.target, NEW.device_env WHERE NOT EXISTS (
                SELECT 1 FROM run_groups WHERE hostname = NEW.hostname AND target = NEW.target
                AND device_env = NEW.device_env);
        END;
        CREATE TRIGGER runs_group_changed AFTER UPDATE OF hostname, target, device_env ON runs BEGIN
            INSERT INTO run_groups SELECT NEW.hostname, NEW.target, NEW.device_env WHERE NOT EXISTS (
                SELECT 1 FROM run_groups WHERE hostname = NEW.hostname AND target = NEW.target
                AND device_env = NEW.device_env);
        END;
        """,
    ),
    (
        13,
        "the latency histograms kept apart",
        # fio's json+ completion-latency histogram of each test's direction (store/records.py's recorded_bins), as
        # it was stored: a device's history page pools hundreds of them, and reading and parsing each whole fio
        # output for them took most of its time. NULL: a test stored before, whose histogram is read from its
        # output as before.
        """
        ALTER TABLE metrics ADD COLUMN clat_bins_json TEXT;
        """,
    ),
)

LATEST_VERSION = MIGRATIONS[-1][0]
