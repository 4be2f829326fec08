import Foundation
import GroupStoreCloud
import XCTest

/// The remote contract every ``CloudDatabase`` keeps — tags, conflicts,
/// tombstones, tokens, scopes, assets — run against the in-memory remote
/// here, against the embedded remote in ``EmbeddedRemoteContractTests`` and
/// against a PostgreSQL server in ``PostgresRemoteContractTests``.
class RemoteContractTests: CloudTestCase {
    let notes = CloudRecordType(
        name: "notes", scope: .private,
        columns: [
            CloudColumn(name: "id", kind: .text, declaredType: "TEXT", notNull: true, isKey: true),
            CloudColumn(name: "title", kind: .text, declaredType: "TEXT", notNull: false, isKey: false),
            CloudColumn(name: "body", kind: .text, declaredType: "TEXT", notNull: false, isKey: false),
        ])
    let posts = CloudRecordType(
        name: "posts", scope: .public,
        columns: [
            CloudColumn(name: "id", kind: .text, declaredType: "TEXT", notNull: true, isKey: true),
            CloudColumn(name: "title", kind: .text, declaredType: "TEXT", notNull: false, isKey: false),
        ])

    let items = CloudRecordType(
        name: "items", scope: .shared,
        columns: [
            CloudColumn(name: "id", kind: .text, declaredType: "TEXT", notNull: true, isKey: true),
            CloudColumn(name: "title", kind: .text, declaredType: "TEXT", notNull: false, isKey: false),
        ])

    /// The remote of this class's kind as `user`, with the record types prepared.
    func remote(_ user: String = "alice") async throws -> any CloudDatabase {
        try await declareAsOwner([posts, items])
        let remote = try defaultRemote(user: user)
        try await remote.prepare([notes, posts, items])
        return remote
    }

    func testEverySaveGetsANewTagAndTheSavedRecordIsWhatIsFetched() async throws {
        let remote = try await remote()
        let id = note("n1")
        let created = try await create(remote, id, ["title": .text("one")])
        XCTAssertEqual(created.owner, "alice")
        XCTAssertEqual(created.editedBy, "alice")
        guard case .saved(let updated) = try await save(remote, id, base: created.tag, ["title": .text("two")]) else {
            return XCTFail("expected a save")
        }
        XCTAssertNotEqual(updated.tag, created.tag)
        guard case .saved(let third) = try await save(remote, id, base: updated.tag, ["title": .text("three")]) else {
            return XCTFail("expected a save")
        }
        XCTAssertEqual(Set([created.tag, updated.tag, third.tag]).count, 3)
        let fetched = try await fetchAll(remote, .private("alice"), since: nil)
        XCTAssertEqual(fetched.changed, [third])
    }

    func testStaleTagIsAConflictCarryingTheServerRecord() async throws {
        let remote = try await remote()
        let id = note("n1")
        let created = try await create(remote, id, ["title": .text("one")])
        guard case .saved(let updated) = try await save(remote, id, base: created.tag, ["title": .text("two")]) else {
            return XCTFail("expected a save")
        }
        let stale = try await save(remote, id, base: created.tag, ["title": .text("three")])
        XCTAssertEqual(stale, .conflict(id, server: updated))
        let staleDelete = try await delete(remote, id, base: created.tag)
        XCTAssertEqual(staleDelete, .conflict(id, server: updated))
    }

    func testStaleEditOfADeletedRecordIsAConflictWithNothing() async throws {
        let remote = try await remote()
        let id = note("n1")
        let created = try await create(remote, id, ["title": .text("one")])
        let deleted = try await delete(remote, id, base: created.tag)
        XCTAssertEqual(deleted, .deleted(id))
        let staleSave = try await save(remote, id, base: created.tag, ["title": .text("two")])
        guard case .conflict(id, .none, _) = staleSave else { return XCTFail("expected a conflict with nothing, got \(staleSave)") }
        let staleDelete = try await delete(remote, id, base: created.tag)
        guard case .conflict(id, .none, _) = staleDelete else { return XCTFail("expected a conflict with nothing, got \(staleDelete)") }
        // Without a tag: already gone; and a new save creates it again.
        let untaggedDelete = try await delete(remote, id, base: nil)
        XCTAssertEqual(untaggedDelete, .deleted(id))
        let recreated = try await create(remote, id, ["title": .text("again")])
        // (A remote may list the columns not given, as NULL.)
        XCTAssertEqual(recreated.fields.filter { $0.value != .null }, ["title": .text("again")])
        // Never seen at all: a tagged save is a conflict with nothing.
        let unknown = try await save(remote, note("nope"), base: "1-abc", ["title": .text("x")])
        XCTAssertEqual(unknown, .conflict(note("nope"), server: nil))
    }

    /// A stale edit of a deleted record is answered with the delete's edit
    /// time — the time it was sent with, raised above the version it
    /// deleted — so that a version brought back after the remote was
    /// restored from an older copy is settled against the delete by edit
    /// time; a record never held has none.
    func testAStaleEditOfADeletedRecord_isAnsweredWithTheDeletesEditTime() async throws {
        let remote = try await remote()
        let now = Date()
        func deleted(_ name: String, createdAt: Date, deletedAt: Date) async throws -> (CloudRecordID, CloudRecord) {
            let id = note(name)
            let created = try await remote.modify([.save(id: id, baseTag: nil, fields: ["title": .text("one")], editedAt: createdAt)])
            guard case .saved(let record) = created.first else {
                XCTFail("expected \(id) saved, got \(created)")
                throw CancellationError()
            }
            let results = try await remote.modify([.delete(id: id, baseTag: record.tag, editedAt: deletedAt)])
            XCTAssertEqual(results, [.deleted(id)])
            return (id, record)
        }
        func deleteTime(_ id: CloudRecordID, base: String) async throws -> [Date?] {
            var times: [Date?] = []
            for result in [try await save(remote, id, base: base, ["title": .text("stale")]), try await delete(remote, id, base: base)] {
                guard case .conflict(id, .none, let deletedAt) = result else {
                    XCTFail("expected a conflict with nothing, got \(result)")
                    continue
                }
                times.append(deletedAt)
            }
            return times
        }
        let (n1, v1) = try await deleted("n1", createdAt: now.addingTimeInterval(-60), deletedAt: now.addingTimeInterval(-30))
        for time in try await deleteTime(n1, base: v1.tag) {
            XCTAssertEqual(time?.timeIntervalSince1970 ?? 0, now.timeIntervalSince1970 - 30, accuracy: 0.001, "the delete's own time")
        }
        // Sent with a time before the version it deleted (a clock behind): raised above that version.
        let (n2, v2) = try await deleted("n2", createdAt: now.addingTimeInterval(-60), deletedAt: now.addingTimeInterval(-90))
        for time in try await deleteTime(n2, base: v2.tag) {
            XCTAssertEqual(time?.timeIntervalSince1970 ?? 0, v2.editedAt.timeIntervalSince1970 + 0.001, accuracy: 0.0005)
        }
        let unknown = try await save(remote, note("never"), base: "1-abc", ["title": .text("x")])
        XCTAssertEqual(unknown, .conflict(note("never"), server: nil, deletedAt: nil), "no delete, no time")
    }

    func testAVersionBroughtBack_isNotCreatedOverALaterDelete_butOverAnEarlierOne_andANewRecordIsOverAny() async throws {
        let remote = try await remote()
        let now = Date()
        var ids: [CloudRecordID] = []
        for name in ["n1", "n2", "n3"] {
            let id = note(name)
            let created = try await remote.modify([
                .save(id: id, baseTag: nil, fields: ["title": .text("one")], editedAt: now.addingTimeInterval(-60))
            ])
            guard case .saved(let record) = created.first else { return XCTFail("expected \(id) saved, got \(created)") }
            let deleted = try await remote.modify([.delete(id: id, baseTag: record.tag, editedAt: now.addingTimeInterval(-30))])
            XCTAssertEqual(deleted, [.deleted(id)])
            ids.append(id)
        }
        let results = try await remote.modify([
            .save(id: ids[0], baseTag: nil, fields: ["title": .text("back")], editedAt: now.addingTimeInterval(-45), bringsBack: true),
            .save(id: ids[1], baseTag: nil, fields: ["title": .text("back")], editedAt: now.addingTimeInterval(-20), bringsBack: true),
            .save(id: ids[2], baseTag: nil, fields: ["title": .text("new")], editedAt: now.addingTimeInterval(-45)),
            .save(id: note("n4"), baseTag: nil, fields: ["title": .text("back")], editedAt: now.addingTimeInterval(-45), bringsBack: true),
        ])
        guard results.count == 4 else { return XCTFail("expected four results, got \(results)") }
        guard case .conflict(ids[0], .none, let deletedAt) = results[0] else {
            return XCTFail("a version brought back, edited before the delete: expected a conflict with nothing, got \(results[0])")
        }
        XCTAssertEqual(deletedAt?.timeIntervalSince1970 ?? 0, now.timeIntervalSince1970 - 30, accuracy: 0.001, "the delete's own time")
        for (index, title) in [(1, "back"), (2, "new"), (3, "back")] {
            guard case .saved(let record) = results[index] else { return XCTFail("change \(index): expected saved, got \(results[index])") }
            XCTAssertEqual(record.fields["title"], .text(title))
        }
        let page = try await remote.fetchChanges(in: .private("alice"), since: nil, limit: 100)
        XCTAssertEqual(Set(page.changed.map(\.id.name)), ["n2", "n3", "n4"], "n1 stays deleted")
    }

    func testSaveOrDeleteWithoutTagOfALiveRecordConflicts() async throws {
        let remote = try await remote()
        let id = note("n1")
        let created = try await create(remote, id, ["title": .text("one")])
        let second = try await save(remote, id, base: nil, ["title": .text("mine")])
        XCTAssertEqual(second, .conflict(id, server: created))
        let untaggedDelete = try await delete(remote, id, base: nil)
        XCTAssertEqual(untaggedDelete, .conflict(id, server: created))
    }

    func testFieldsNotSentAreKept() async throws {
        let remote = try await remote()
        let id = note("n1")
        let created = try await create(remote, id, ["title": .text("one"), "body": .text("text"), "n": .integer(1)])
        guard case .saved(let updated) = try await save(remote, id, base: created.tag, ["title": .text("two"), "n": .null]) else {
            return XCTFail("expected a save")
        }
        XCTAssertEqual(updated.fields, ["title": .text("two"), "body": .text("text"), "n": .null])
    }

    func testEachChangeStandsAloneInOrder() async throws {
        let remote = try await remote()
        let a = try await create(remote, note("a"), ["title": .text("a")])
        let results = try await remote.modify([
            .save(id: note("a"), baseTag: "stale", fields: ["title": .text("x")], editedAt: Date()),
            .save(id: note("b"), baseTag: nil, fields: ["title": .text("b")], editedAt: Date()),
            .save(id: note("x", owner: "bob"), baseTag: nil, fields: ["title": .text("x")], editedAt: Date()),
            .delete(id: note("a"), baseTag: a.tag, editedAt: Date()),
        ])
        XCTAssertEqual(results.count, 4)
        XCTAssertEqual(results[0], .conflict(note("a"), server: a))
        guard case .saved(let b) = results[1] else { return XCTFail("expected b saved, got \(results[1])") }
        XCTAssertEqual(b.id, note("b"))
        guard case .refused = results[2] else { return XCTFail("expected bob's zone refused, got \(results[2])") }
        XCTAssertEqual(results[3], .deleted(note("a")))
    }

    func testEditTimeNeverLaterThanTheRemoteClockAndAboveTheVersionEdited() async throws {
        let remote = try await remote()
        let id = note("n1")
        let before = Date()
        let results = try await remote.modify([
            .save(id: id, baseTag: nil, fields: [:], editedAt: Date().addingTimeInterval(3600))
        ])
        guard case .saved(let created) = results[0] else { return XCTFail("expected a save") }
        XCTAssertLessThanOrEqual(created.editedAt, Date())
        XCTAssertGreaterThanOrEqual(created.editedAt.timeIntervalSince1970, before.timeIntervalSince1970 - 0.001)
        let behind = try await remote.modify([
            .save(id: id, baseTag: created.tag, fields: ["title": .text("x")], editedAt: Date().addingTimeInterval(-3600))
        ])
        guard case .saved(let edited) = behind[0] else { return XCTFail("expected a save") }
        XCTAssertGreaterThan(edited.editedAt, created.editedAt)
    }

    func testUnpreparedTypeAndWrongScopeAreRefused() async throws {
        let remote = try await remote()
        let unknown = CloudRecordID(zone: .private("alice"), type: "ghosts", name: "g")
        let wrongZone = CloudRecordID(zone: .public, type: "notes", name: "n")
        let results = try await remote.modify([
            .save(id: unknown, baseTag: nil, fields: [:], editedAt: Date()),
            .save(id: wrongZone, baseTag: nil, fields: [:], editedAt: Date()),
        ])
        guard case .refused(_, let reason1) = results[0], case .refused(_, let reason2) = results[1] else {
            return XCTFail("expected both refused, got \(results)")
        }
        XCTAssertTrue(reason1.contains("ghosts"), reason1)
        XCTAssertTrue(reason2.contains("private"), reason2)
    }

    func testTagsAreUniqueAcrossConcurrentWriters() async throws {
        let alice = try await remote("alice")
        let bob = try await remote("bob")
        let changes = (0..<20).map { i in
            (
                CloudRecordChange.save(id: note("a\(i)"), baseTag: nil, fields: [:], editedAt: Date()),
                CloudRecordChange.save(id: note("b\(i)", owner: "bob"), baseTag: nil, fields: [:], editedAt: Date())
            )
        }
        let tags = try await withThrowingTaskGroup(of: [String].self) { group in
            for (forAlice, forBob) in changes {
                group.addTask { try await alice.modify([forAlice]).compactMap { if case .saved(let r) = $0 { r.tag } else { nil } } }
                group.addTask { try await bob.modify([forBob]).compactMap { if case .saved(let r) = $0 { r.tag } else { nil } } }
            }
            var tags: [String] = []
            for try await some in group { tags += some }
            return tags
        }
        XCTAssertEqual(tags.count, 40)
        XCTAssertEqual(Set(tags).count, 40)
    }

    /// A fetch or a modify made on condition that a mark is part of the
    /// history (the bridge's every call after its first sync): the head a
    /// modify answers is its own change's mark, still kept after it; a mark
    /// of another change at that position, a position ahead of the log or
    /// another epoch is not, and then nothing is written or read.
    func testACallKeepingAMark_isMadeOnlyWhileTheHistoryKeepsIt() async throws {
        let remote = try await remote()
        let saved = try await remote.modify(
            [.save(id: note("n1"), baseTag: nil, fields: ["title": .text("one")], editedAt: Date())], keeping: nil)
        guard case .saved = saved.value?.first else { return XCTFail("n1 saved: \(String(describing: saved.value))") }
        let head = saved.history.head
        XCTAssertGreaterThan(head.position, 0, "the head after the save is past it")
        XCTAssertTrue(saved.history.keepsMark)
        let asked = try await remote.history(keeping: head)
        XCTAssertTrue(asked.keepsMark, "the head a modify answered is part of the history")
        XCTAssertEqual(asked.head, head, "and nothing was written since")

        let second = try await remote.modify(
            [.save(id: note("n2"), baseTag: nil, fields: ["title": .text("two")], editedAt: Date())], keeping: head)
        guard case .saved = second.value?.first else { return XCTFail("n2 saved keeping the head: \(String(describing: second.value))") }
        XCTAssertGreaterThan(second.history.head.position, head.position)
        let fetched = try await remote.fetchChanges(in: .private("alice"), since: nil, limit: 100, keeping: second.history.head)
        XCTAssertEqual(fetched.value?.changed.map(\.id.name).sorted(), ["n1", "n2"])
        XCTAssertTrue(fetched.history.keepsMark)

        let marks = [
            (
                "another change at its position",
                CloudHistoryMark(epoch: head.epoch, position: second.history.head.position, entry: "not-this-change")
            ),
            ("a position ahead of the log", CloudHistoryMark(epoch: head.epoch, position: second.history.head.position + 1000, entry: "")),
            ("another epoch", CloudHistoryMark(epoch: "another-" + head.epoch, position: head.position, entry: head.entry)),
        ]
        for (what, mark) in marks {
            let refused = try await remote.modify(
                [.save(id: note("n3"), baseTag: nil, fields: ["title": .text("three")], editedAt: Date())], keeping: mark)
            XCTAssertNil(refused.value, "\(what): nothing applied")
            XCTAssertFalse(refused.history.keepsMark, what)
            XCTAssertEqual(refused.history.head.epoch, head.epoch, what)
            let read = try await remote.fetchChanges(in: .private("alice"), since: nil, limit: 100, keeping: mark)
            XCTAssertNil(read.value, "\(what): no page")
            XCTAssertFalse(read.history.keepsMark, what)
        }
        let names = try await fetchAll(remote, .private("alice"), since: nil).changed.map(\.id.name).sorted()
        XCTAssertEqual(names, ["n1", "n2"], "n3 was never written")
    }

    func testFullFetchPagesWithMoreComing() async throws {
        let remote = try await remote()
        for i in 0..<5 { try await create(remote, note("n\(i)"), ["title": .text("\(i)")]) }
        let p1 = try await remote.fetchChanges(in: .private("alice"), since: nil, limit: 2)
        XCTAssertEqual(p1.changed.map(\.id.name), ["n0", "n1"])
        XCTAssertTrue(p1.moreComing)
        let p2 = try await remote.fetchChanges(in: .private("alice"), since: p1.token, limit: 2)
        XCTAssertEqual(p2.changed.map(\.id.name), ["n2", "n3"])
        XCTAssertTrue(p2.moreComing)
        let p3 = try await remote.fetchChanges(in: .private("alice"), since: p2.token, limit: 2)
        XCTAssertEqual(p3.changed.map(\.id.name), ["n4"])
        XCTAssertFalse(p3.moreComing)
        XCTAssertTrue(p3.deleted.isEmpty)
        let after = try await remote.fetchChanges(in: .private("alice"), since: p3.token, limit: 2)
        XCTAssertTrue(after.changed.isEmpty && after.deleted.isEmpty && !after.moreComing)
        XCTAssertEqual(after.token, p3.token)
    }

    func testFullFetchListsLiveRecordsOnlyAndOnlyItsZone() async throws {
        let alice = try await remote("alice")
        let bob = try await remote("bob")
        let gone = try await create(alice, note("gone"), [:])
        _ = try await delete(alice, note("gone"), base: gone.tag)
        try await create(alice, note("kept"), [:])
        try await create(bob, note("bobs", owner: "bob"), [:])
        try await create(bob, post("p"), [:])
        let all = try await fetchAll(alice, .private("alice"), since: nil)
        XCTAssertEqual(all.changed.map(\.id.name), ["kept"])
        XCTAssertEqual(all.deleted, [])
    }

    func testFetchSinceATokenGivesTheLatestStateOnceAndDeletions() async throws {
        let remote = try await remote()
        let a = try await create(remote, note("a"), ["title": .text("a1")])
        let b = try await create(remote, note("b"), ["title": .text("b")])
        let start = try await fetchAll(remote, .private("alice"), since: nil).token
        guard case .saved(let a2) = try await save(remote, note("a"), base: a.tag, ["title": .text("a2")]),
            case .saved(let a3) = try await save(remote, note("a"), base: a2.tag, ["title": .text("a3")])
        else { return XCTFail("expected saves") }
        _ = try await delete(remote, note("b"), base: b.tag)
        let c = try await create(remote, note("c"), [:])
        let changes = try await fetchAll(remote, .private("alice"), since: start)
        XCTAssertEqual(changes.changed, [a3, c])
        XCTAssertEqual(changes.deleted, [note("b")])
        // Paged one at a time: the same, in change order.
        let paged = try await fetchAll(remote, .private("alice"), since: start, limit: 1)
        XCTAssertEqual(paged.changed, [a3, c])
        XCTAssertEqual(paged.deleted, [note("b")])
        XCTAssertEqual(paged.pages, 3)
        XCTAssertEqual(paged.token, changes.token)
    }

    func testUnreadableTokenExpires() async throws {
        let remote = try await remote()
        for raw in ["", "garbage", "x:y", "abc:-1", "abc:5:2"] {
            let error = await cloudError {
                _ = try await remote.fetchChanges(in: .private("alice"), since: CloudChangeToken(raw), limit: 10)
            }
            XCTAssertEqual(error?.code, .tokenExpired, raw)
        }
    }

    func testAnotherUsersPrivateZoneIsRefusedAndUnreadable() async throws {
        let alice = try await remote("alice")
        let bob = try await remote("bob")
        let secret = try await create(alice, note("n1"), ["title": .text("top secret")])
        let results = try await bob.modify([
            .save(id: note("n1"), baseTag: secret.tag, fields: ["title": .text("hacked")], editedAt: Date()),
            .delete(id: note("n1"), baseTag: secret.tag, editedAt: Date()),
            .save(id: note("n2"), baseTag: nil, fields: [:], editedAt: Date()),
        ])
        for result in results {
            guard case .refused(_, let reason) = result else { return XCTFail("expected refused, got \(result)") }
            XCTAssertFalse(reason.contains("top secret"), reason)
        }
        let error = await cloudError { _ = try await bob.fetchChanges(in: .private("alice"), since: nil, limit: 10) }
        XCTAssertEqual(error?.code, .permissionDenied)
        XCTAssertFalse(error?.message.contains("top secret") ?? true)
        let stillThere = try await fetchAll(alice, .private("alice"), since: nil)
        XCTAssertEqual(stillThere.changed, [secret])
    }

    func testAFullFetchWhosePageEndsWithATable_listsTheNextTableWhole() async throws {
        let remote = try await remote()
        let columns = notes.columns
        try await remote.prepare([
            CloudRecordType(name: "alpha", scope: .private, columns: columns),
            CloudRecordType(name: "beta", scope: .private, columns: columns),
        ])
        for name in ["a1", "a2", "a3"] { try await create(remote, CloudRecordID(zone: .private("alice"), type: "alpha", name: name), [:]) }
        // The same names in the next table: a listing must not resume it after the previous table's last name.
        for name in ["a1", "a2", "b1"] { try await create(remote, CloudRecordID(zone: .private("alice"), type: "beta", name: name), [:]) }
        let all = try await fetchAll(remote, .private("alice"), since: nil, limit: 3)
        XCTAssertEqual(
            Set(all.changed.map { "\($0.id.type)/\($0.id.name)" }),
            ["alpha/a1", "alpha/a2", "alpha/a3", "beta/a1", "beta/a2", "beta/b1"])
    }

    func testABatchOfNewRecords_someMeetingARow_answersEachInOrder() async throws {
        let alice = try await remote("alice")
        let bob = try await remote("bob")
        let existing = try await create(alice, note("n2"), ["title": .text("already there")])
        let alicesPost = try await create(alice, post("p2"), ["title": .text("alice's")])
        let results = try await alice.modify(
            (1...3).map { .save(id: note("n\($0)"), baseTag: nil, fields: ["title": .text("new \($0)"), "body": .null], editedAt: Date()) })
        XCTAssertEqual(results.count, 3)
        guard case .saved(let first) = results[0], case .conflict(_, let server?, _) = results[1], case .saved(let third) = results[2]
        else {
            return XCTFail("expected saved, conflict, saved: \(results)")
        }
        XCTAssertEqual([first.id.name, third.id.name], ["n1", "n3"])
        XCTAssertEqual(first.fields["title"], .text("new 1"))
        XCTAssertEqual(server, existing)
        let posts = try await bob.modify(
            (1...3).map { .save(id: post("p\($0)"), baseTag: nil, fields: ["title": .text("bob's \($0)")], editedAt: Date()) })
        guard case .saved = posts[0], case .refused = posts[1], case .saved = posts[2] else {
            return XCTFail("expected saved, refused, saved: \(posts)")
        }
        let board = try await fetchAll(alice, .public, since: nil)
        XCTAssertEqual(Set(board.changed.map { "\($0.id.name):\($0.owner)" }), ["p1:bob", "p2:alice", "p3:bob"])
        XCTAssertTrue(board.changed.contains(alicesPost))
    }

    func testASharedZone_isReadByItsMembers_writtenByReadWriteOnes_andClosedWhenUnshared() async throws {
        let alice = try await remote("alice")
        let bob = try await remote("bob")
        let carol = try await remote("carol")
        let family = CloudZone.shared(owner: "alice", name: "family")
        func item(_ name: String) -> CloudRecordID { CloudRecordID(zone: family, type: "items", name: name) }
        // The owner writes and reads her zone with no step before.
        let first = try await create(alice, item("i1"), ["title": .text("from alice")])
        XCTAssertEqual(first.owner, "alice")
        // Not shared yet: bob reads nothing of it and writes nothing to it.
        var error = await cloudError { _ = try await bob.fetchChanges(in: family, since: nil, limit: 10) }
        XCTAssertEqual(error?.code, .permissionDenied)
        guard case .refused = try await save(bob, item("i2"), base: nil, ["title": .text("too early")]) else {
            return XCTFail("bob wrote to a zone not shared with him")
        }

        try await alice.share("family", with: "bob", access: .readWrite)
        try await alice.share("family", with: "carol", access: .readOnly)
        let ownersView = try await alice.shares()
        XCTAssertEqual(
            Set(ownersView),
            [CloudShare(zone: family, user: "bob", access: .readWrite), CloudShare(zone: family, user: "carol", access: .readOnly)])
        let carolsView = try await carol.shares()
        XCTAssertEqual(carolsView, [CloudShare(zone: family, user: "carol", access: .readOnly)])

        // bob (read-write) edits alice's record and adds his own; a stale edit is a conflict, not a refusal.
        let seenByBob = try await fetchAll(bob, family, since: nil)
        XCTAssertEqual(seenByBob.changed, [first])
        guard case .saved(let edited) = try await save(bob, item("i1"), base: first.tag, ["title": .text("edited by bob")]) else {
            return XCTFail("bob could not edit a zone shared with him read-write")
        }
        XCTAssertEqual(edited.owner, "alice", "an edit keeps the record's creator")
        XCTAssertEqual(edited.editedBy, "bob")
        guard case .conflict(_, let server?, _) = try await save(bob, item("i1"), base: first.tag, ["title": .text("stale")]) else {
            return XCTFail("a stale edit in a shared zone is a conflict")
        }
        XCTAssertEqual(server.tag, edited.tag)
        let bobs = try await create(bob, item("i2"), ["title": .text("from bob")])
        XCTAssertEqual(bobs.owner, "bob")

        // carol (read-only) reads everything, changes nothing.
        let seenByCarol = try await fetchAll(carol, family, since: nil)
        XCTAssertEqual(Set(seenByCarol.changed.map(\.id.name)), ["i1", "i2"])
        for result in try await carol.modify([
            .save(id: item("i1"), baseTag: edited.tag, fields: ["title": .text("carol was here")], editedAt: Date()),
            .delete(id: item("i2"), baseTag: bobs.tag, editedAt: Date()),
            .save(id: item("i3"), baseTag: nil, fields: ["title": .text("carol's own")], editedAt: Date()),
        ]) {
            guard case .refused(_, let reason) = result else { return XCTFail("carol changed a read-only zone: \(result)") }
            XCTAssertTrue(reason.contains("read-only"), reason)
        }
        // Nobody but the owner manages the zone's shares: bob sharing "family" shares his own zone.
        try await bob.share("family", with: "carol", access: .readWrite)
        let carolsViewNow = try await carol.shares()
        XCTAssertEqual(
            Set(carolsViewNow),
            [
                CloudShare(zone: family, user: "carol", access: .readOnly),
                CloudShare(zone: .shared(owner: "bob", name: "family"), user: "carol", access: .readWrite),
            ])
        guard case .refused = try await save(carol, item("i3"), base: nil, ["title": .text("still read-only")]) else {
            return XCTFail("carol wrote to alice's zone after bob shared his own")
        }

        // Unshared: bob's token and his writes are no longer served; the owner's data stays.
        try await alice.share("family", with: "bob", access: nil)
        error = await cloudError { _ = try await bob.fetchChanges(in: family, since: seenByBob.token, limit: 10) }
        XCTAssertEqual(error?.code, .permissionDenied)
        XCTAssertFalse(error?.message.contains("edited by bob") ?? true)
        guard case .refused = try await save(bob, item("i2"), base: bobs.tag, ["title": .text("after")]) else {
            return XCTFail("bob wrote to a zone no longer shared with him")
        }
        let ownerStillHas = try await fetchAll(alice, family, since: nil)
        XCTAssertEqual(Set(ownerStillHas.changed.map(\.id.name)), ["i1", "i2"])
        let badName = await cloudError { try await alice.share("no/slash", with: "bob", access: .readOnly) }
        XCTAssertEqual(badName?.code, .invalidConfiguration)
    }

    func testPublicRecordsAreReadByAllAndWrittenByTheirCreatorOnly() async throws {
        let alice = try await remote("alice")
        let bob = try await remote("bob")
        let record = try await create(alice, post("p1"), ["title": .text("alice's words")])
        let seen = try await fetchAll(bob, .public, since: nil)
        XCTAssertEqual(seen.changed, [record])
        let edit = try await save(bob, post("p1"), base: record.tag, ["title": .text("bob's words")])
        guard case .refused(_, let reason) = edit else { return XCTFail("expected refused, got \(edit)") }
        XCTAssertFalse(reason.contains("alice's words"), reason)
        let removal = try await delete(bob, post("p1"), base: record.tag)
        guard case .refused = removal else { return XCTFail("expected refused, got \(removal)") }
        // Bob's own public record is his to edit.
        let own = try await create(bob, post("p2"), ["title": .text("bob")])
        guard case .saved = try await save(bob, post("p2"), base: own.tag, ["title": .text("bob 2")]) else {
            return XCTFail("expected bob's own post saved")
        }
        let unchanged = try await fetchAll(alice, .public, since: nil)
        XCTAssertEqual(unchanged.changed.first, record)
    }

    func testScopeChangeIsRefused() async throws {
        let remote = try await remote()
        let flipped = CloudRecordType(name: "notes", scope: .public, columns: notes.columns)
        let error = await cloudError { try await remote.prepare([flipped]) }
        XCTAssertEqual(error?.code, .scopeChanged)
        XCTAssertTrue(error?.message.contains("notes") ?? false, error?.message ?? "")
        XCTAssertTrue(error?.message.contains("synced as private; it cannot be synced as public") ?? false, error?.message ?? "")
        // More columns in the same scope are fine.
        var wider = notes
        wider.columns.append(CloudColumn(name: "tags", kind: .text, declaredType: "TEXT", notNull: false, isKey: false))
        try await remote.prepare([wider])
        try await remote.prepare([notes])
    }

    func testAssetsRoundTrip() async throws {
        let remote = try await remote()
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let asset = CloudAsset(bytes: bytes)
        let other = CloudAsset(bytes: [1, 2, 3])
        let missing = try await remote.missingAssets([asset.hash, other.hash])
        XCTAssertEqual(missing, [asset.hash, other.hash])
        try await remote.uploadAsset(asset, bytes: bytes)
        try await remote.uploadAsset(asset, bytes: bytes)
        let stillMissing = try await remote.missingAssets([asset.hash, other.hash])
        XCTAssertEqual(stillMissing, [other.hash])
        let downloaded = try await remote.downloadAsset(asset)
        XCTAssertEqual(downloaded, bytes)
        let noneMissing = try await remote.missingAssets([])
        XCTAssertEqual(noneMissing, [])
    }

    func testAssetWithWrongBytesIsRejectedAndMissingOneIsNamed() async throws {
        let remote = try await remote()
        let asset = CloudAsset(bytes: [1, 2, 3])
        let wrongHash = await cloudError { try await remote.uploadAsset(asset, bytes: [1, 2, 4]) }
        XCTAssertEqual(wrongHash?.code, .badRemote)
        XCTAssertTrue(wrongHash?.message.contains(asset.hash) ?? false)
        let wrongSize = await cloudError { try await remote.uploadAsset(CloudAsset(hash: asset.hash, size: 4), bytes: [1, 2, 3]) }
        XCTAssertEqual(wrongSize?.code, .badRemote)
        let stillMissing = try await remote.missingAssets([asset.hash])
        XCTAssertEqual(stillMissing, [asset.hash])
        let absent = await cloudError { _ = try await remote.downloadAsset(asset) }
        XCTAssertEqual(absent?.code, .badRemote)
        XCTAssertTrue(absent?.message.contains(asset.hash) ?? false, absent?.message ?? "")
    }
}
