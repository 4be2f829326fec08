#if Postgres
    import Foundation
    import GRDB
    import PostgresTestServer
    import XCTest
    @testable import GroupStoreCloudPostgres

    /// The attack's findings that only a PostgreSQL remote has (issue 30): a
    /// key written with `psql`, the role every user is granted, `-0.0` in an
    /// untyped column, and the URL in messages.
    final class PostgresFindingsTests: AttackTestCase {
        override class var remoteKind: RemoteKind { .postgres }

        func testATextKeyWrittenWithPsqlAsHex_arrivesAsText() throws {
            try exec("a", BridgeAttackTests.schema)
            try exec("a", "INSERT INTO note VALUES ('first', 'so that the table exists on the server')")
            try cloudSync("a")
            try server.psql(
                "INSERT INTO note (id, body) VALUES ('hex:41', 'by psql'), ('hex:', 'by psql too')", as: "alice", database: Self.database)
            try cloudSync("a")
            XCTAssertEqual(
                try rows("a", "SELECT id || '|' || typeof(id) FROM note WHERE body LIKE 'by psql%' ORDER BY id"),
                ["hex:|text", "hex:41|text"])
        }

        func testGroupstoreUser_ownsNoRow() throws {
            try exec("a", BridgeAttackTests.schema)
            try exec("a", "INSERT INTO note VALUES ('n1', 'one')")
            try cloudSync("a")
            XCTAssertThrowsError(
                try server.psql(
                    "SET ROLE groupstore_user; INSERT INTO note (id, body) VALUES ('n2', 'shared identity')", as: "alice",
                    database: Self.database)
            ) { error in
                XCTAssertTrue("\(error)".contains("groupstore_user is the role users are granted"), "\(error)")
            }
            XCTAssertEqual(try server.psql("SELECT count(*) FROM note WHERE gs_owner = 'groupstore_user'", database: Self.database), "0")
        }

        func testAUserCannotAddColumnsToAnotherUsersType() throws {
            try exec("a", BridgeAttackTests.schema)
            try exec("a", "INSERT INTO note VALUES ('n1', 'one')")
            try cloudSync("a")
            let columns =
                #"[{"name":"id","kind":"text","declaredType":"TEXT","isKey":true,"pgType":"text"},"#
                + #"{"name":"spam","kind":"text","declaredType":"TEXT","isKey":false,"pgType":"text"}]"#
            try server.psql("SELECT groupstore.prepare_type('note', 'private', '\(columns)'::jsonb)", as: "bob", database: Self.database)
            XCTAssertEqual(
                try server.psql(
                    "SELECT count(*) FROM pg_attribute WHERE attrelid = 'public.note'::regclass AND attname = 'spam'",
                    database: Self.database),
                "0", "bob added a column to alice's type")
        }

        func testAUserCannotClaimATablesScope_theSchemasOwnerDeclaresPublicAndSharedTables() throws {
            let schema = "CREATE TABLE diary(id TEXT PRIMARY KEY, body TEXT); CREATE TABLE board(id TEXT PRIMARY KEY, body TEXT)"
            for name in ["a", "b", "admin"] { try exec(name, schema) }
            try exec("a", "INSERT INTO diary VALUES ('d1', 'dear diary')")
            try exec("b", "INSERT INTO board VALUES ('b1', 'posted by bob')")
            // bob syncs first, with diary as public: refused with a sentence, nothing is declared.
            let claim = try groupstore(cloud("sync", "b", tables: "", user: "bob", extra: ["--public-tables", "diary,board"]))
            XCTAssertEqual(claim.status, 1, claim.text)
            XCTAssertTrue(
                claim.text.contains("record type diary is not declared on this server: a public table is declared by the schema's owner"),
                claim.text)
            XCTAssertEqual(try remoteTypes(), [])
            // Nor with psql, nor as the role every user is granted.
            let columns = #"[{"name":"id","kind":"text","declaredType":"TEXT","isKey":true,"pgType":"text"}]"#
            XCTAssertThrowsError(
                try server.psql(
                    "SELECT groupstore.prepare_type('diary', 'shared', '\(columns)'::jsonb)", as: "bob", database: Self.database)
            ) { error in XCTAssertTrue("\(error)".contains("declared by the schema's owner"), "\(error)") }
            XCTAssertThrowsError(
                try server.psql(
                    "SET ROLE groupstore_user; SELECT groupstore.prepare_type('diary', 'private', '\(columns)'::jsonb)", as: "bob",
                    database: Self.database)
            ) { error in XCTAssertTrue("\(error)".contains("groupstore_user is the role users are granted"), "\(error)") }
            XCTAssertEqual(try remoteTypes(), [])
            // alice's private diary syncs as hers.
            try cloudSync("a", tables: "diary")
            // The owner declares board public with cloud setup; bob's post then reaches alice.
            let declared = try groupstore([
                "cloud", "setup", "--remote", remote("postgres"), "--group", group("admin"), "--public-tables", "board",
            ])
            XCTAssertEqual(declared.status, 0, declared.text)
            XCTAssertEqual(declared.output.last, "\(remote("postgres")): declared board (public)")
            try cloudSync("b", tables: "", user: "bob", extra: ["--public-tables", "board"])
            try cloudSync("a", tables: "diary", extra: ["--public-tables", "board"])
            XCTAssertEqual(try rows("a", "SELECT id || ':' || body FROM board"), ["b1:posted by bob"])
            XCTAssertEqual(
                try server.psql(
                    "SELECT name || ':' || scope || ':' || coalesce(creator, 'owner') FROM groupstore.types ORDER BY name",
                    database: Self.database),
                "board:public:owner\ndiary:private:alice")
            // A private type declared by the owner later is the owner's: alice adds no column to it any more.
            let widened = try groupstore([
                "cloud", "setup", "--remote", remote("postgres"), "--group", group("admin"), "--tables", "diary",
            ])
            XCTAssertEqual(widened.status, 0, widened.text)
            XCTAssertEqual(
                try server.psql("SELECT coalesce(creator, 'owner') FROM groupstore.types WHERE name = 'diary'", database: Self.database),
                "owner")
        }

        /// The review's F4: a user who created a private type of a name
        /// before the owner declared it public does not keep the name from the
        /// owner while the type holds nothing; once it holds a row, the owner's
        /// declaration is refused naming the user (the rows are the user's).
        func testAPrivateTypeAUserCreatedFirst_isTakenBackByTheOwnersDeclaration_whileItHoldsNothing() throws {
            let schema = "CREATE TABLE board(id TEXT PRIMARY KEY, body TEXT); CREATE TABLE notice(id TEXT PRIMARY KEY, body TEXT)"
            for name in ["b", "admin"] { try exec(name, schema) }
            let columns = #"[{"name":"id","kind":"text","declaredType":"TEXT","isKey":true,"pgType":"text"}]"#
            // bob takes both names as private types with psql; notice gets a row.
            try server.psql(
                "SELECT groupstore.prepare_type('board', 'private', '\(columns)'::jsonb); SELECT groupstore.prepare_type('notice', 'private', '\(columns)'::jsonb)",
                as: "bob", database: Self.database)
            try exec("b", "INSERT INTO notice VALUES ('n1', 'mine')")
            try cloudSync("b", tables: "notice", user: "bob")
            XCTAssertEqual(
                try server.psql(
                    "SELECT name || ':' || scope || ':' || coalesce(creator, 'owner') FROM groupstore.types ORDER BY name",
                    database: Self.database),
                "board:private:bob\nnotice:private:bob")
            // The owner declares board public: bob's empty type gives way.
            let board = try groupstore([
                "cloud", "setup", "--remote", remote("postgres"), "--group", group("admin"), "--public-tables", "board",
            ])
            XCTAssertEqual(board.status, 0, board.text)
            XCTAssertEqual(board.output.last, "\(remote("postgres")): declared board (public)")
            // notice holds bob's row: refused, naming bob, and kept as it was.
            let notice = try groupstore([
                "cloud", "setup", "--remote", remote("postgres"), "--group", group("admin"), "--public-tables", "notice",
            ])
            XCTAssertEqual(notice.status, 1, notice.text)
            XCTAssertTrue(
                notice.text.contains("record type notice is synced as private; it cannot be synced as public (bob declared it)"),
                notice.text)
            XCTAssertEqual(
                try server.psql(
                    "SELECT name || ':' || scope || ':' || coalesce(creator, 'owner') FROM groupstore.types ORDER BY name",
                    database: Self.database),
                "board:public:owner\nnotice:private:bob")
            XCTAssertEqual(try server.psql("SELECT count(*) FROM public.notice", database: Self.database), "1")
            // bob's board, synced as private now, meets the owner's scope.
            try exec("b", "INSERT INTO board VALUES ('b1', 'x')")
            let squat = try groupstore(cloud("sync", "b", tables: "board", user: "bob"))
            XCTAssertEqual(squat.status, 1, squat.text)
            XCTAssertTrue(squat.text.contains("record type board is synced as public; it cannot be synced as private"), squat.text)
        }

        /// The review's F5: the upgrade to format 6 clears the creators format 4
        /// recorded that format 5 would not have: of a public type, and of a
        /// type a gateway's authenticator created. A user's own private type keeps its.
        func testTheUpgradeToFormat6_clearsCreatorsThatFormat4RecordedAndFormat5WouldNot() throws {
            let columns = #"[{"name":"id","kind":"text","declaredType":"TEXT","isKey":true,"pgType":"text"}]"#
            for (name, scope) in [("board", "public"), ("diary", "private"), ("memo", "private")] {
                try server.psql("SELECT groupstore.prepare_type('\(name)', '\(scope)', '\(columns)'::jsonb)", database: Self.database)
            }
            // As format 4 left them: bob created board, the gateway's authenticator diary, alice memo.
            try server.psql(
                """
                CREATE ROLE gs_authenticator LOGIN; GRANT groupstore_gateway TO gs_authenticator;
                UPDATE groupstore.types SET creator = CASE name WHEN 'board' THEN 'bob' WHEN 'diary' THEN 'gs_authenticator' ELSE 'alice' END;
                DELETE FROM groupstore.migrations WHERE identifier = 'groupstore.postgres.history-guard';
                UPDATE groupstore.meta SET value = '5' WHERE key = 'format';
                """, database: Self.database)
            let upgrade = try groupstore(["cloud", "setup", "--remote", remote("postgres")])
            XCTAssertEqual(upgrade.status, 0, upgrade.text)
            XCTAssertTrue(upgrade.text.contains("upgraded from format 5 to \(PostgresServerSchema.format)"), upgrade.text)
            XCTAssertEqual(
                try server.psql(
                    "SELECT name || ':' || coalesce(creator, 'owner') FROM groupstore.types ORDER BY name", database: Self.database),
                "board:owner\ndiary:owner\nmemo:alice")
            // Run again over itself, the migration left one working prepare_type: alice still prepares her memo.
            try server.psql("SELECT groupstore.prepare_type('memo', 'private', '\(columns)'::jsonb)", as: "alice", database: Self.database)
        }

        func testNegativeZeroInAnUntypedColumn_isKept() throws {
            let schema = "CREATE TABLE sample(id TEXT PRIMARY KEY, v)"
            for name in ["a", "b"] { try exec(name, schema) }
            try exec("a", "INSERT INTO sample VALUES ('z', -0.0), ('one', 1.5)")
            try cloudSync("a", tables: "sample")
            try cloudSync("b", tables: "sample")
            XCTAssertEqual(try rows("b", "SELECT id || ':' || typeof(v) FROM sample ORDER BY id"), ["one:real", "z:real"])
            // SQLite prints -0.0 as 0.0 (quote, printf): its sign is read as a double's.
            for name in ["a", "b"] {
                let zero = try DatabaseQueue(path: group(name) + "/store.sqlite").read { db in
                    try Double.fetchOne(db, sql: "SELECT v FROM sample WHERE id = 'z'")
                }
                XCTAssertEqual(zero, 0, "group \(name)")
                XCTAssertEqual(zero?.sign, .minus, "group \(name) holds -0.0, not +0.0")
            }
        }

        func testTheURLInAMessage_isTheURLAsGiven_withoutItsPassword() throws {
            try exec("a", BridgeAttackTests.schema)
            let given = "postgres://alice:s3cret@/\(Self.database)?host=\(root)/no-server&port=5432"
            let run = try groupstore(["cloud", "sync", "--group", group("a"), "--remote", given, "--tables", "note"])
            XCTAssertEqual(run.status, 1, run.text)
            XCTAssertTrue(run.text.contains("postgres://alice@/\(Self.database)?host=\(root)/no-server&port=5432"), run.text)
            XCTAssertFalse(run.text.contains("s3cret"), run.text)
            XCTAssertFalse(run.text.contains(".s.PGSQL"), run.text)
        }
    }
#endif  // Postgres
