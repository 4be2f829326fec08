import ArgumentParser

/// `groupstore cloud`: the cloud sync bridge from the shell.
struct CloudCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cloud",
        abstract: "Keep chosen tables of a group in sync with a remote shared by groups on other hosts.",
        discussion: """
            The bridge joins the group as the member `cloud`: one process per group syncs at a time, \
            and the changes it brings in are saves of `cloud` that every member sees. REMOTE is a file \
            path (an embedded remote: a SQLite file several groups share, created if missing; its \
            directory must exist), a postgres:// URL (a PostgreSQL server set up with `cloud setup`) or a \
            gateway's http(s)://HOST:PORT (`groupstore serve`, with --token-file or GROUPSTORE_TOKEN). Synced \
            tables need TEXT, UUID or BLOB keys, or a composite key of references for a link table: \
            an INTEGER key would collide across hosts.

            Example:
              groupstore cloud setup --remote /srv/cloud.sqlite
              groupstore cloud sync --group /var/lib/app/group \\
                --remote /srv/cloud.sqlite --tables note,tag
              groupstore cloud run --group /var/lib/app/group \\
                --remote /srv/cloud.sqlite --tables note,tag --format jsonl
              groupstore cloud status --group /var/lib/app/group
              groupstore cloud share --remote /srv/cloud.sqlite --user alice \\
                --zone family --with bob --access read-write
            """,
        subcommands: [
            CloudSetupCommand.self, CloudSyncCommand.self, CloudRunCommand.self, CloudStatusCommand.self, CloudShareCommand.self,
            CloudTokenCommand.self, CloudFleetCommand.self,
        ]
    )
}
