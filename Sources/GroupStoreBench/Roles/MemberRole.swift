import ArgumentParser
import Dispatch
import Foundation
import GRDB
import GroupStore
import Logging
import Synchronization

/// A group member that reports each delivered save:
/// `R <seq> <receivedAt µs> <committedAt µs> <inserted keys, comma-separated>`, then
/// `D <count> <first delivery µs> <last delivery µs> <VmHWM kB> <VmRSS kB> <CPU s since ready>` once
/// it has `--expect` saves, and `M <count> <VmRSS kB> <RssAnon kB>` every 100,000. With
/// `--trace`, at the end, one line per merged save:
/// `T <seq> <wake> <woke µs> <merge start µs> <history read µs> <observers notified µs> <handed over µs>`.
struct MemberRole: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "member", shouldDisplay: false)

    @Option var group: String
    @Option var member: String
    @Option var expect: Int = 0
    @Flag var printEach = false
    @Option var idleSeconds: Double = 0
    /// Join (creating the cursor) and leave at once.
    @Flag var joinOnly = false
    @Flag var trace = false
    /// `PRAGMA mmap_size` for this member's connections (0: SQLite's default, off).
    @Option var mmapBytes: Int = 0
    /// Time each save in `GroupConfiguration.synchronousDelivery` (on the
    /// merge queue) instead of in the `for await` loop; R lines come at the end.
    @Flag var synchronous = false
    /// Post `.groupStoreDidSave` too (the library's default; off unless
    /// asked, as a member that uses streams only would).
    @Flag var postsNotifications = false
    /// Finish once a save inserts this key of `items` (or a higher one).
    @Option var untilKey: Int64?
    /// Finish once a save inserts the key of `items` that a line
    /// `until-key N` on standard input names (for a writer whose count is
    /// known only at its end).
    @Flag var keyFromInput = false

    func run() async throws {
        var configuration = GroupConfiguration(directory: group, member: try MemberName(member), logger: Logger(label: member))
        configuration.migrator = BenchSchema.migrator
        configuration.pruneInterval = 5
        // Saves are handled by the stream (or the synchronous handler) only,
        // unless the default's notifications are asked for (nobody observes them).
        configuration.postsNotifications = postsNotifications
        if mmapBytes > 0 {
            let bytes = mmapBytes
            configuration.prepareDatabase = { db in try db.execute(sql: "PRAGMA mmap_size = \(bytes)") }
        }
        let received = Mutex<[(save: Save, at: Double)]>([])
        let (enough, enoughContinuation) = AsyncStream<Void>.makeStream()
        if synchronous {
            received.withLock { $0.reserveCapacity(expect) }
            let target = expect
            configuration.synchronousDelivery = { save in
                let at = ProcessFacts.nowMicros
                let count = received.withLock { received in
                    received.append((save, at))
                    return received.count
                }
                if count == target { enoughContinuation.yield() }
            }
        }
        let store = try await GroupStore.open(configuration)
        if joinOnly {
            await store.close()
            return
        }
        // The synchronous handler is the only consumer in that mode (a
        // stream would cost a hop per save).
        let saves: SaveStream? = synchronous ? nil : store.saves()
        let traces = Mutex<[DeliveryTrace]>([])
        if trace {
            traces.withLock { $0.reserveCapacity(expect) }
            store.traceDeliveries { trace in traces.withLock { $0.append(trace) } }
        }
        try await store.start()
        if idleSeconds > 0 {
            // CPU used while nothing happens (watching only).
            let before = ProcessFacts.cpuSeconds
            try await Task.sleep(for: .seconds(idleSeconds))
            emit("C \(ProcessFacts.cpuSeconds - before) \(idleSeconds)")
        }
        let startCPU = ProcessFacts.cpuSeconds
        FileHandle.standardError.write(Data("member ready\n".utf8))
        var count = 0
        var first = 0.0
        func emitReceived(_ save: Save, at: Double) {
            let keys = save.changes.first?.inserted.map(\.json).joined(separator: ",") ?? ""
            emit("R \(save.seq) \(at) \(save.committedAt.timeIntervalSince1970 * 1e6) \(keys.isEmpty ? "-" : keys)")
        }
        func emitDone(count: Int, first: Double, last: Double) {
            emit(
                "D \(count) \(first) \(last) \(ProcessFacts.memoryKB("VmHWM")) \(ProcessFacts.memoryKB("VmRSS")) \(ProcessFacts.cpuSeconds - startCPU)"
            )
        }
        if synchronous {
            for await _ in enough { break }
            let all = received.withLock { $0 }
            emitDone(count: all.count, first: all.first?.at ?? 0, last: all.last?.at ?? 0)
        }
        // R lines are printed once every save is in: a line written per save
        // would wake the benchmark's reader of this pipe at each delivery,
        // on the cores being measured.
        var inHand: [(save: Save, at: Double)] = []
        if printEach { inHand.reserveCapacity(expect) }
        // The highest key of `items` inserted so far, and the one to stop at.
        let progress = Mutex((highest: Int64.min, until: untilKey))
        if keyFromInput, let saves {
            Thread {
                while let line = readLine() {
                    guard line.hasPrefix("until-key "), let key = Int64(line.dropFirst(10)) else { continue }
                    let reached = progress.withLock { progress -> Bool in
                        progress.until = key
                        return progress.highest >= key
                    }
                    if reached { saves.cancel() }
                }
            }.start()
        }
        if let saves {
            var last = 0.0
            var finished = false
            for await save in saves {
                let received = ProcessFacts.nowMicros
                last = received
                count += 1
                if count == 1 { first = received }
                if printEach { inHand.append((save, received)) }
                if count % 100_000 == 0 { emit("M \(count) \(ProcessFacts.memoryKB("VmRSS")) \(ProcessFacts.memoryKB("RssAnon"))") }
                let highest = save.change(of: "items")?.inserted.compactMap(\.integerValue).max()
                let reached = progress.withLock { progress -> Bool in
                    if let highest { progress.highest = max(progress.highest, highest) }
                    return progress.until.map { progress.highest >= $0 } ?? false
                }
                if count == expect || reached {
                    finished = true
                    break
                }
            }
            // Ended by the input's `until-key` (reached before it came), or done.
            if finished || keyFromInput { emitDone(count: count, first: first, last: last) }
        }
        await store.close()
        for (save, at) in received.withLock({ $0 }) + inHand where printEach { emitReceived(save, at: at) }
        for trace in traces.withLock({ $0 }) {
            emit(
                String(
                    format: "T %lld %@ %.1f %.1f %.1f %.1f %.1f", trace.seq, trace.wake.rawValue, trace.wokeAt, trace.mergeStartedAt,
                    trace.historyReadAt, trace.handedOverAt, trace.observersNotifiedAt))
        }
    }
}
