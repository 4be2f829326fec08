import Foundation
import GRDB
import GroupStore
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

final class StoreTests: StoreTestCase {
    func testPeerSave_isPostedAsGroupStoreDidSave_withTheSaveInUserInfo() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        let reader = try open("reader")
        let posted = expectation(forNotification: .groupStoreDidSave, object: reader) { notification in
            let save = notification.userInfo?[GroupStore.saveUserInfoKey] as? Save
            return save?.change(of: "t")?.inserted == [5]
        }
        try await reader.start()
        try await writer.write { db in try db.execute(sql: "INSERT INTO t(id) VALUES (5)") }
        await fulfillment(of: [posted], timeout: 20)
    }

    func testOwnSaves_areNotDeliveredToTheWriter() async throws {
        let store = try open("solo")
        let peer = try open("peer")
        try await store.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        let saves = store.saves()
        try await store.start()
        try await store.write { db in try db.execute(sql: "INSERT INTO t(id) VALUES (1)") }
        try await peer.write { db in try db.execute(sql: "INSERT INTO t(id) VALUES (2)") }
        let received = try await first(1, of: saves)
        XCTAssertEqual(received[0].author, "peer", "the first save delivered must be the peer's, not our own")
        XCTAssertEqual(store.cursor, received[0].seq)
    }

    func testSecondOpenOfALiveMemberName_throwsMemberAlreadyLive_untilTheFirstCloses() throws {
        let first = try open("collector")
        XCTAssertThrowsError(try open("collector")) { error in
            XCTAssertEqual((error as? GroupStoreError)?.code, .memberAlreadyLive)
            XCTAssertTrue("\(error)".contains("member 'collector' is already live in group \(group)"), "\(error)")
        }
        first.closeBlocking()
        XCTAssertNoThrow(try open("collector"))
    }

    func testGroupFiles_areOwnerAndGroupOnly_directoriesSetgid() throws {
        let previous = umask(0o022)
        defer { umask(previous) }
        let store = try open("writer")  // a consumer: it keeps a cursor file
        try store.writeBlocking { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)") }
        store.flushPublicationsBlocking()
        func mode(_ path: String) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as! NSNumber).intValue
        }
        for directory in [group, group + "/members", group + "/members/writer", group + "/tmp"] {
            XCTAssertEqual(try mode(directory), 0o2770, "mode of \(directory)")
        }
        var files = ["store.sqlite", "store.sqlite-wal", "store.sqlite-shm", "members/writer/lock", "members/writer/cursor"]
        files += try FileManager.default.contentsOfDirectory(atPath: group + "/members/writer")
            .filter { $0.hasSuffix(".json") }.map { "members/writer/" + $0 }
        XCTAssertGreaterThan(files.count, 5, "no payload file was published")
        for file in files {
            XCTAssertEqual(try mode(group + "/" + file) & 0o777, 0o660, "mode of \(file)")
        }
    }

    func testMemberFolderReplacedBySymlink_isRefused_andNothingIsWrittenThroughIt() throws {
        let outside = FileManager.default.temporaryDirectory.appendingPathComponent("outside-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: outside) }
        try open("first").closeBlocking()
        try FileManager.default.createSymbolicLink(atPath: group + "/members/victim", withDestinationPath: outside)

        XCTAssertThrowsError(try open("victim")) { error in
            XCTAssertEqual((error as? GroupStoreError)?.code, .unsafePath, "\(error)")
            XCTAssertTrue("\(error)".contains(group + "/members/victim"), "\(error)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: outside), [])
    }

    func testDatabaseReplacedBySymlink_isRefused() throws {
        try FileManager.default.createDirectory(atPath: group, withIntermediateDirectories: true)
        let target = group + "/elsewhere.sqlite"
        _ = FileManager.default.createFile(atPath: target, contents: nil)
        try FileManager.default.createSymbolicLink(atPath: group + "/store.sqlite", withDestinationPath: target)
        XCTAssertThrowsError(try open("member")) { error in
            XCTAssertEqual((error as? GroupStoreError)?.code, .unsafePath, "\(error)")
        }
    }

    func testMissingGroup_withoutCreate_throwsGroupNotFound() {
        XCTAssertThrowsError(try open("member") { $0.createIfMissing = false }) { error in
            XCTAssertEqual((error as? GroupStoreError)?.code, .groupNotFound)
            XCTAssertTrue("\(error)".contains(group), "\(error)")
        }
    }

    func testPayloadFile_followsTheDocumentedFormat() async throws {
        let store = try open("writer")
        try await store.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, v)") }
        let seq = try await writeSeq(store, "INSERT INTO t(id, v) VALUES (7, 'x')")
        await store.flushPublications()
        let path = group + "/members/writer/" + String(format: "%020lld.v2.json", seq)
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        XCTAssertEqual(object?["format"] as? Int, 2)
        XCTAssertEqual(object?["seq"] as? Int64, seq)
        XCTAssertEqual(object?["author"] as? String, "writer")
        XCTAssertEqual(object?["truncated"] as? Bool, false)
        XCTAssertNotNil(object?["committedAt"] as? Double)
        let changes = object?["changes"] as? [[String: Any]]
        XCTAssertEqual(changes?.first?["entity"] as? String, "t")
        XCTAssertEqual(changes?.first?["inserted"] as? [Int], [7])
        XCTAssertFalse(FileManager.default.fileExists(atPath: group + "/tmp/writer.\(seq).\(getpid()).tmp"), "temp file left behind")
    }

    func testLargeTransaction_payloadIsTruncated_butEveryKeyIsDelivered() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        let reader = try open("reader")
        let saves = reader.saves()
        try await reader.start()
        let seq = try await writeSeq(
            writer, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) INSERT INTO t SELECT i FROM n")
        await writer.flushPublications()
        let save = try await first(1, of: saves)[0]
        XCTAssertEqual(save.change(of: "t")?.inserted.count, 20_000)
        let payload = try String(contentsOfFile: group + "/members/writer/" + String(format: "%020lld.v2.json", seq), encoding: .utf8)
        XCTAssertTrue(payload.contains(#""truncated":true"#))
        // Past the limit the payload lists no keys (a prefix of the rows could
        // misstate a row that a later change in the transaction undid).
        XCTAssertTrue(payload.contains(#""changes":[]"#), payload)
    }

    func testClose_finishesSaveStreams_andLaterWritesThrowClosed() async throws {
        let store = try open("member")
        let saves = store.saves()
        try await store.start()
        await store.close()
        var count = 0
        for await _ in saves { count += 1 }
        XCTAssertEqual(count, 0)
        do {
            try await store.write { _ in }
            XCTFail("a closed store accepted a write")
        } catch {
            XCTAssertEqual((error as? GroupStoreError)?.code, .closed)
        }
    }

    func testPrune_removesWhatEveryMemberConsumed_andKeepsTheRest() async throws {
        let writer = try open("writer") { $0.writesOnly = true }
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        // Its own payload too: unflushed, it may share one with the first insert.
        await writer.flushPublications()
        let reader = try open("reader") { $0.cursorFlushInterval = 0 }
        let saves = reader.saves()
        try await reader.start()
        var seqs: [Int64] = []
        for id in 1...4 {
            seqs.append(try await writeSeq(writer, "INSERT INTO t(id) VALUES (\(id))"))
            await writer.flushPublications()  // one payload each (back-to-back writes may share one)
        }
        _ = try await first(4, of: saves)
        await reader.close()  // persists its cursor
        await writer.close()
        let janitor = try open("janitor")
        // The writer only wrote (it never started): it pins nothing, so what
        // the reader processed goes (the table's creation, then the inserts;
        // the reader's cursor is the third or the fourth insert, as it may
        // still have held the last save when it closed).
        let readerCursor = try XCTUnwrap(
            Int64(String(contentsOfFile: group + "/members/reader/cursor", encoding: .utf8).split(separator: " ")[0]))
        let processed = try XCTUnwrap(seqs.firstIndex(of: readerCursor), "cursor \(readerCursor) is none of \(seqs)") + 2
        XCTAssertTrue([4, 5].contains(processed), "\(readerCursor) of \(seqs)")
        let atHead = readerCursor == seqs.last
        let report = try janitor.prune()
        XCTAssertEqual(report.prunedThrough, readerCursor)
        XCTAssertEqual(report.transactionsRemoved, processed - (atHead ? 1 : 0), "the newest row stays as the high-water mark")
        XCTAssertEqual(report.payloadFilesRemoved, processed)
        XCTAssertEqual(report.heldBackBy.map(\.member), atHead ? [] : ["reader"])
    }

    func testPrune_removesPayloadsWhileReadingALargeFolder_andKeepsEveryNewerOne() async throws {
        let writer = try open("writer") { $0.writesOnly = true }
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)") }
        await writer.close()
        // 20,000 payloads of seq 1 (under as many format versions) among
        // 20,000 of a seq far ahead: removed as the folder is read, the
        // listing must neither skip one nor take a newer one.
        let folder = group + "/members/writer"
        for version in 2..<20_002 {
            for seq in [1, 1_000_000_000] {
                let name = String(format: "%020d.v%d.json", seq, version)
                XCTAssertTrue(FileManager.default.createFile(atPath: folder + "/" + name, contents: nil), name)
            }
        }
        let janitor = try open("janitor")
        let report = try janitor.prune()
        XCTAssertGreaterThanOrEqual(report.prunedThrough, 1)
        let left = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".json") }
        XCTAssertEqual(left.filter { $0.hasPrefix("00000000000000000001.") }.count, 0, "payloads of seq 1 left behind")
        XCTAssertEqual(left.filter { $0.hasPrefix("00000000001000000000.") }.count, 20_000, "newer payloads removed")
        XCTAssertGreaterThanOrEqual(report.payloadFilesRemoved, 20_000)
    }

    func testPrune_readsNamesOfEveryLength_andRemovesOnlyPayloads() async throws {
        let writer = try open("writer") { $0.writesOnly = true }
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)") }
        await writer.close()
        // Directory records are as long as their names: names of every
        // length (1…255 bytes, the most a file system allows), interleaved
        // with payloads, are each read whole, up to their own end.
        let folder = group + "/members/writer"
        var strays: Set<String> = []
        for length in 1...255 {
            let stray = String(repeating: "s", count: length)
            strays.insert(stray)
            XCTAssertTrue(FileManager.default.createFile(atPath: folder + "/" + stray, contents: nil), "\(length)")
            let payload = String(format: "%020d.v%d.json", 1, length + 2)
            XCTAssertTrue(FileManager.default.createFile(atPath: folder + "/" + payload, contents: nil), payload)
        }
        let report = try open("janitor").prune()
        XCTAssertGreaterThanOrEqual(report.payloadFilesRemoved, 255)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: folder))
        XCTAssertEqual(left.filter { $0.hasPrefix("00000000000000000001.") }, [], "payloads of seq 1 left behind")
        XCTAssertEqual(left.intersection(strays), strays, "a file that is not a payload was removed")
    }

    func testBurstOfWrites_publishesTheNewestPayload_andSkipsNoChange() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        let reader = try open("reader")
        let saves = reader.saves()
        try await reader.start()
        let count = 2_000
        var written: Set<Int64> = []
        for id in 1...count {
            written.insert(try await writeSeq(writer, "INSERT INTO t(id) VALUES (\(id))"))
        }
        await writer.flushPublications()
        let received = try await first(count, of: saves)
        XCTAssertEqual(received.flatMap { $0.change(of: "t")?.inserted ?? [] }, (1...count).map { KeyValue.integer(Int64($0)) })
        XCTAssertEqual(Set(received.map(\.seq)), written)
        let payloads = try FileManager.default.contentsOfDirectory(atPath: group + "/members/writer").filter { $0.hasSuffix(".json") }
        XCTAssertTrue(payloads.contains(String(format: "%020lld.v2.json", written.max()!)), "the newest payload was not published")
        // Each payload is one of the transactions written (the table's
        // creation, or an insert), named in the documented format.
        let seqs = payloads.compactMap { name -> Int64? in
            guard name.hasSuffix(".v2.json"), name.count == 28 else { return nil }
            return Int64(name.prefix(20))
        }
        XCTAssertEqual(seqs.count, payloads.count, "payload files not in the documented format: \(payloads)")
        XCTAssertTrue(seqs.allSatisfy { $0 <= written.max()! }, "a payload for no transaction written: \(seqs.sorted().suffix(5))")
        XCTAssertLessThanOrEqual(seqs.filter { !written.contains($0) }.count, 1, "only the table's creation is not an insert")
    }

    func testSaveInHandWhenTheStoreCloses_isDeliveredAgainAfterReopening() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        let reader = try open("reader")
        var iterator = reader.saves().makeAsyncIterator()
        try await reader.start()
        var seqs: [Int64?] = []
        for id in 1...3 {
            seqs.append(try await writer.writeWithSequence { db in try db.execute(sql: "INSERT INTO t(id) VALUES (\(id))") }.seq)
        }
        // Take the first save and the second, and stop in the middle of the second.
        let firstSave = await iterator.next()
        let secondSave = await iterator.next()
        // The table's creation came before the reader joined.
        XCTAssertEqual([firstSave?.seq, secondSave?.seq], Array(seqs.prefix(2)))
        // The process "dies" now: everything was delivered to the stream, but
        // only the first save was processed.
        await reader.close()
        XCTAssertEqual(
            try String(contentsOfFile: group + "/members/reader/cursor", encoding: .utf8).split(separator: " ").first, "\(seqs[0]!)")

        let again = try open("reader")
        let saves = again.saves()
        try await again.start()
        let redelivered = try await first(2, of: saves)
        XCTAssertEqual(redelivered.map(\.seq), Array(seqs.suffix(2)), "the save in hand and the one after must come again, and only those")
    }

    /// Two loops of one member, one ahead of the other, end (one cancelled
    /// while it waited, one left in the middle of a save) and are dropped
    /// before the store closes, as services stopped before the store are: the
    /// cursor written keeps the slower one's place.
    func testLoopsEndedBeforeTheStoreCloses_keepTheSlowerOnesPlace_forTheNextStart() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        let reader = try open("reader")
        var seqs: [Int64] = []
        do {
            var fast = reader.saves().makeAsyncIterator()
            var slow = reader.saves().makeAsyncIterator()
            try await reader.start()
            for id in 1...3 {
                seqs.append(try await writer.writeWithSequence { db in try db.execute(sql: "INSERT INTO t(id) VALUES (\(id))") }.seq!)
            }
            for _ in 1...3 { _ = await fast.next() }
            // The fast loop asks for a fourth (so the third is processed) and is cancelled while it waits.
            let waiting = Task { [fast] in
                var fast = fast
                return await fast.next()
            }
            waiting.cancel()
            let afterCancel = await waiting.value
            XCTAssertNil(afterCancel, "a cancelled loop's stream ends")
            // The slow loop takes the first save and stops in the middle of it.
            let inHand = await slow.next()
            XCTAssertEqual(inHand?.seq, seqs[0])
        }
        await reader.close()
        let again = try open("reader")
        let saves = again.saves()
        try await again.start()
        let redelivered = try await first(3, of: saves)
        XCTAssertEqual(redelivered.map(\.seq), seqs, "the slower loop had finished none: all three come again")
    }

    /// A stream ended with `cancel()` lets go of its place: the cursor
    /// passes the save it held, up to what the other stream processed.
    func testACancelledStream_doesNotHoldTheCursor() async throws {
        let writer = try open("writer")
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        let reader = try open("reader")
        var seqs: [Int64] = []
        do {
            let fastStream = reader.saves()
            let slowStream = reader.saves()
            var fast = fastStream.makeAsyncIterator()
            var slow = slowStream.makeAsyncIterator()
            try await reader.start()
            for id in 1...2 {
                seqs.append(try await writer.writeWithSequence { db in try db.execute(sql: "INSERT INTO t(id) VALUES (\(id))") }.seq!)
            }
            // The fast one processed the first save; the slow one holds it.
            for _ in 1...2 { _ = await fast.next() }
            _ = await slow.next()
            slowStream.cancel()
            fastStream.cancel()
        }
        await reader.close()
        XCTAssertEqual(
            try String(contentsOfFile: group + "/members/reader/cursor", encoding: .utf8).split(separator: " ").first, "\(seqs[0])",
            "the cancelled stream's save in hand does not hold the cursor")
    }
}
