#if Postgres
    import Foundation
    import GRDB
    import PostgresTestServer
    import XCTest

    /// The attack's findings that only a PostgreSQL remote has (issue 30): a
    /// key written with `psql`, the role every user is granted, `-0.0` in an
    /// untyped column, and the URL in messages.
    final class PostgresFindingsTests: AttackTestCase {
        override class var remoteKind: RemoteKind { .postgres }

        func testATextKeyWrittenWithPsqlAsHex_arrivesAsText() throws {
            try exec("a", BridgeAttackTests.schema)
            try exec("a", "INSERT INTO note VALUES ('first', 'so that the table exists on the server')")
            try cloudSync("a")
            try server.psql("INSERT INTO note (id, body) VALUES ('hex:41', 'by psql'), ('hex:', 'by psql too')", as: "alice", database: Self.database)
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
                try server.psql("SET ROLE groupstore_user; INSERT INTO note (id, body) VALUES ('n2', 'shared identity')", as: "alice", database: Self.database)
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
                    "SELECT count(*) FROM pg_attribute WHERE attrelid = 'public.note'::regclass AND attname = 'spam'", database: Self.database),
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
                try server.psql("SELECT groupstore.prepare_type('diary', 'shared', '\(columns)'::jsonb)", as: "bob", database: Self.database)
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
                try server.psql("SELECT name || ':' || scope || ':' || coalesce(creator, 'owner') FROM groupstore.types ORDER BY name", database: Self.database),
                "board:public:owner\ndiary:private:alice")
            // A private type declared by the owner later is the owner's: alice adds no column to it any more.
            let widened = try groupstore([
                "cloud", "setup", "--remote", remote("postgres"), "--group", group("admin"), "--tables", "diary",
            ])
            XCTAssertEqual(widened.status, 0, widened.text)
            XCTAssertEqual(try server.psql("SELECT coalesce(creator, 'owner') FROM groupstore.types WHERE name = 'diary'", database: Self.database), "owner")
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
