#!/usr/bin/env bash
# Makes the fixtures with an older build's `groupstore`: make-before-migrations.sh PATH/TO/groupstore
set -euo pipefail
tool=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
g=$work/g; h=$work/h; remote=$work/cloud.sqlite
"$tool" exec --group "$g" --member app --sql "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT); INSERT INTO note VALUES ('n1', 'one'), ('n2', 'two')"
"$tool" cloud sync --group "$g" --remote "$remote" --tables note --user alice
"$tool" exec --group "$h" --member app --sql "CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT)"
"$tool" cloud sync --group "$h" --remote "$remote" --tables note --user alice
"$tool" exec --group "$h" --member app --sql "INSERT INTO note VALUES ('n3', 'from the other group')"
"$tool" cloud sync --group "$h" --remote "$remote" --tables note --user alice
"$tool" exec --group "$g" --member app --sql "UPDATE note SET title = 'edited before the upgrade' WHERE id = 'n1'"
sqlite3 "$g/store.sqlite" .dump > "$here/before-migrations-store.sql"
sqlite3 "$remote" .dump > "$here/before-migrations-remote.sql"
rm -rf "$work"
