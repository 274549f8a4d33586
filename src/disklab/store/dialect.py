"""The few things the store says differently to SQLite and to PostgreSQL; everything else is one SQL for both."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Dialect:
    name: str
    begin: str  # a writing transaction; SQLite takes its write lock at once, so that two writers never deadlock
    snapshot: str  # a reading transaction whose reads all see the store as it was at the first
    next_run_id: str | None  # the runs row's number; None: the database's own (an identity column)
    json_key: str  # {column}'s top-level {key} as SQL text or NULL
    # {column} holds the casefolded ?; on PostgreSQL only for text all in ASCII, which its translate() folds as
    # casefold does: a run with other text is searched in Python (filters.py)
    contains: str
    casefolds: bool  # `contains` holds for text in any script (SQLite's casefold function, repository.py)
    non_ascii: str  # {column} has characters other than ASCII: more bytes than characters
    json_models: str  # the (key, value) rows of the runs row's device_env, each value as text, as "models"
    key_like: str  # {column} matches the pattern {pattern}
    wildcard: str  # any run of characters in key_like's pattern
    text_order: str  # after an ORDER BY of text: byte order, as SQLite sorts
    one_of: str  # {column} is one of the values of a list given as ?s, {marks}
    in_query: str  # {column} is one of the values the SELECT {query} returns

    def is_one_of(self, column: str, values: tuple) -> tuple[str, tuple]:
        """The SQL and the parameters of `column` being one of `values`."""
        if "{marks}" in self.one_of:
            return self.one_of.format(column=column, marks=", ".join("?" * len(values))), values
        return self.one_of.format(column=column), (list(values),)

    def is_in(self, column: str, query: str) -> str:
        """The SQL of `column` being one of the values `query` (a SELECT of one column) returns."""
        return self.in_query.format(column=column, query=query)

    def like(self, column: str, pattern: str) -> str:
        """{column} matches an environment key pattern such as device.*.model."""
        return self.key_like.format(column=column, pattern=pattern.replace("*", self.wildcard))


SQLITE = Dialect(
    name="sqlite",
    begin="BEGIN IMMEDIATE",
    snapshot="BEGIN",  # deferred: a read lock, and in WAL mode the database as of the first read
    # The next number after every run there is or was (curation.py keeps the deleted ones' numbers).
    next_run_id="1 + max(coalesce((SELECT max(id) FROM runs), 0), coalesce((SELECT max(id) FROM deleted_runs), 0))",
    json_key="CAST(json_extract({column}, '$.{key}') AS TEXT)",
    # SQLite's LIKE and lower() fold ASCII only, as casefold folds ASCII; text in any other script is folded by
    # Python's casefold (repository.py), a call for each value that SQLite's own functions spare the ASCII ones.
    contains="(instr(lower({column}), ?) > 0 OR (length({column}) < length(CAST({column} AS BLOB)) "
             "AND instr(casefold({column}), ?) > 0))",
    casefolds=True,
    non_ascii="length({column}) < length(CAST({column} AS BLOB))",
    json_models="json_each(runs.device_env) AS models",
    key_like="{column} GLOB '{pattern}'",
    wildcard="*",
    text_order="",
    one_of="{column} IN ({marks})",
    in_query="{column} IN ({query})",
)

POSTGRESQL = Dialect(
    name="postgresql",
    begin="BEGIN",
    snapshot="BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
    next_run_id=None,  # an identity: never a number given before, and no two writers given the same one
    json_key="({column}::jsonb ->> '{key}')",
    # lower() folds by the collation's locale and never as casefold does (ß, ς); in the C collation it folds ASCII's
    # letters alone, whatever the database's locale (Turkish's I included), ten times faster than translate().
    contains="strpos(lower({column} COLLATE \"C\"), ?) > 0",
    casefolds=False,
    non_ascii="char_length({column}) < octet_length({column})",
    json_models="jsonb_each_text(runs.device_env::jsonb) AS models",
    key_like="{column} LIKE '{pattern}'",
    wildcard="%",
    text_order=' COLLATE "C"',
    one_of="{column} = ANY(?)",  # one array, however many values (a statement takes 65,535 parameters at most)
    # The values made a list first, so that {column}'s index is searched for each, where a join or IN may scan and
    # hash the whole table: the flags of a history page's 800 tests in 1 ms, not 12, at 100,000 runs.
    in_query="{column} = ANY(ARRAY({query}))",
)
