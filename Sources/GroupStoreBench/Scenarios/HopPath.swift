import Foundation
import GRDB
import GroupStore
import GroupStoreCloud
import Synchronization

/// One path of the cloud hop (``CloudScenario``): group A (a writer and a
/// peer) and group B (a reader), each with a running bridge on a remote of
/// its own, as two hosts have (a bridge sharing its remote with the other
/// would also fetch its own upload's echo: see `PushHints`). A sample is a
/// commit in A timed to its did-save in B, with the stages between.
final class HopPath {
    private let scenario: CloudScenario
    private let root: String
    private let remotes: [any CloudDatabase]
    private let stores: [GroupStore]
    private let writer: GroupStore
    private var peerSaves: SaveStream.AsyncIterator
    private var readerSaves: SaveStream.AsyncIterator
    private let marks = Marks()
    /// The bridges while started (``start()``).
    private var bridges: [Task<Void, any Error>] = []
    /// The rows written so far (each sample's key is new).
    private var written = 0

    /// The stages each bridge reached, as traced.
    private final class Marks: Sendable {
        let list = Mutex<[(side: Character, stage: SyncStage, at: Double)]>([])
    }

    /// One sample: from the commit, in µs.
    struct Sample {
        /// In group A (the peer's did-save).
        var local: Double
        /// In group B.
        var remote: Double
        /// In group B, from the call of the async write in A.
        var fromCall: Double
        /// When each of ``CloudScenario/hopStages`` was reached (NaN: missing).
        var stages: [Double]
    }

    /// Opens the groups under `root`, whose bridges sync through `remoteA` and `remoteB`.
    init(scenario: CloudScenario, root: String, remoteA: any CloudDatabase, remoteB: any CloudDatabase) async throws {
        self.scenario = scenario
        self.root = root
        remotes = [remoteA, remoteB]
        writer = try await scenario.open(root + "/a", "writer")
        let peer = try await scenario.open(root + "/a", "peer")
        let reader = try await scenario.open(root + "/b", "reader")
        stores = [writer, peer, reader]
        peerSaves = peer.saves().makeAsyncIterator()
        readerSaves = reader.saves().makeAsyncIterator()
        try await peer.start()
        try await reader.start()
    }

    /// Starts the bridges; returns once each finished its first sync.
    func start() async throws {
        let marks = self.marks
        for (side, group, remote) in [("A", "/a", remotes[0]), ("B", "/b", remotes[1])] as [(Character, String, any CloudDatabase)] {
            let sync = try scenario.bridge(root + group, remote: remote)
            sync.traceStages { stage, at in marks.list.withLock { $0.append((side, stage, at)) } }
            bridges.append(try await scenario.start(sync))
        }
    }

    /// Stops the bridges and waits for them to end.
    func stop() async {
        for bridge in bridges { bridge.cancel() }
        for bridge in bridges { _ = try? await bridge.value }
        bridges = []
    }

    /// Commits a new row in A and waits for it in A's peer and in B.
    func sample() async throws -> Sample {
        let index = written
        written += 1
        let key = "k\(index)"
        marks.list.withLock { $0.removeAll() }
        let calledAt = DeliveryTrace.now()
        try await writer.write { db in try db.execute(sql: "INSERT INTO note VALUES (?, ?, 'x')", arguments: [key, index]) }
        // Timed from the commit, as the core table is: the save's commit
        // time (its seal, inside the transaction), read from the peer's copy.
        var committedAt = Double.nan
        var localAt = Double.nan
        var remoteAt = Double.nan
        while committedAt.isNaN || remoteAt.isNaN {
            // Both streams are awaited in turn; each records the time its save arrived.
            if committedAt.isNaN, let save = await peerSaves.next(), save.change(of: "note")?.inserted.contains(.text(key)) == true {
                localAt = DeliveryTrace.now()
                committedAt = save.committedAt.timeIntervalSince1970 * 1e6
            }
            if remoteAt.isNaN {
                guard let save = await readerSaves.next() else { throw BenchFailure("group B's stream ended") }
                if save.author == "cloud", save.change(of: "note")?.inserted.contains(.text(key)) == true {
                    remoteAt = DeliveryTrace.now()
                }
            }
        }
        return Sample(
            local: localAt - committedAt, remote: remoteAt - committedAt, fromCall: remoteAt - calledAt,
            stages: CloudScenario.hopTimes(marks.list.withLock { $0 }, from: committedAt, delivered: remoteAt))
    }

    /// Stops the bridges and closes the groups.
    func close() {
        for bridge in bridges { bridge.cancel() }
        for store in stores { store.closeBlocking() }
    }
}
