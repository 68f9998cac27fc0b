#!/bin/sh
# Checks that the PostgreSQL schema in this directory behaves as the SQLite
# schema in the one above: runs parity.sql on a fresh database of each and
# compares what they print and which statements they refuse, reading a
# PostgreSQL unique-constraint name u__<table>__<col>... as the column list
# SQLite names ("<table>.<col>, ...").
#
# Needs the sqlite3 and psql clients and a PostgreSQL 15 server to create a
# scratch database in; psql's usual PG* variables say where (for example
# PGHOST=/tmp PGPORT=55432 PGUSER=postgres). The scratch database is dropped.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
db="stockhop_parity_$$"
trap 'psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

# SQLite: the migrations in order, then the scenario.
for f in "$here"/../0*.sql; do
    sqlite3 -bail "$work/site.sqlite" "PRAGMA foreign_keys = ON;" ".read $f"
done
(echo "PRAGMA foreign_keys = ON;"; cat "$here/parity.sql") |
    sqlite3 -batch -separator '|' "$work/site.sqlite" >"$work/sqlite.out" 2>"$work/sqlite.err" || true
sed -n -e 's/.*UNIQUE constraint failed: \(.*\) ([0-9]*)$/unique: \1/p' \
    -e 's/.*error near line [0-9]*: \(.*\) ([0-9]*)$/refused: \1/p' "$work/sqlite.err" |
    sed 's/^refused: UNIQUE.*//; /^$/d' >"$work/sqlite.errors"

# PostgreSQL: the same, each file in one transaction.
# A linguistic default collation ('a9' before 'B1'), so the check also
# shows that the schema sorts text by code point however the database
# was created.
psql -X -q -v ON_ERROR_STOP=1 -d postgres >/dev/null \
    -c "CREATE DATABASE $db TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"
for f in "$here"/0*.sql; do
    psql -X -q -v ON_ERROR_STOP=1 -1 -d "$db" -f "$f" >/dev/null
done
psql -X -q -A -t -F '|' -d "$db" -f "$here/parity.sql" >"$work/pg.out" 2>"$work/pg.err" || true
sed -n -e 's/.*ERROR:  duplicate key value violates unique constraint "u__\(.*\)"$/unique: \1/p' \
    -e 's/.*ERROR:  \(.*\)$/refused: \1/p' "$work/pg.err" |
    sed 's/^refused: duplicate key.*//; /^$/d' |
    awk '/^unique: / {
            n = split(substr($0, 9), part, "__"); line = "unique: "
            for (i = 2; i <= n; i++) line = line (i > 2 ? ", " : "") part[1] "." part[i]
            print line; next
         } { print }' >"$work/pg.errors"

status=0
diff -u "$work/sqlite.out" "$work/pg.out" || status=1
diff -u "$work/sqlite.errors" "$work/pg.errors" || status=1
if [ "$status" -eq 0 ]; then
    echo "parity: $(wc -l <"$work/sqlite.out") rows and $(wc -l <"$work/sqlite.errors") refusals alike"
else
    echo "parity: SQLite and PostgreSQL differ (above)" >&2
fi
exit "$status"
