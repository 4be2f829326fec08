import ArgumentParser
import Dispatch
import Foundation
import GroupStore
import Logging

/// A group member that reports each delivered save:
/// `R <seq> <receivedAt µs> <committedAt µs> <inserted keys, comma-separated>`, then
/// `D <count> <first delivery µs> <last delivery µs> <VmHWM kB> <VmRSS kB>` once
/// it has `--expect` saves, and `M <count> <VmRSS kB>` every 100,000.
struct MemberRole: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "member", shouldDisplay: false)

    @Option var group: String
    @Option var member: String
    @Option var expect: Int = 0
    @Flag var printEach = false
    @Option var idleSeconds: Double = 0
    /// Join (creating the cursor) and leave at once.
    @Flag var joinOnly = false

    func run() async throws {
        var configuration = GroupConfiguration(directory: group, member: try MemberName(member), logger: Logger(label: member))
        configuration.migrator = BenchSchema.migrator
        configuration.pruneInterval = 5
        let store = try await GroupStore.open(configuration)
        if joinOnly {
            await store.close()
            return
        }
        let saves = store.saves()
        try store.start()
        if idleSeconds > 0 {
            // CPU used while nothing happens (watching only).
            let before = ProcessFacts.cpuSeconds
            try await Task.sleep(for: .seconds(idleSeconds))
            emit("C \(ProcessFacts.cpuSeconds - before) \(idleSeconds)")
        }
        FileHandle.standardError.write(Data("member ready\n".utf8))
        var count = 0
        var first = 0.0
        for await save in saves {
            let received = ProcessFacts.nowMicros
            count += 1
            if count == 1 { first = received }
            if printEach {
                let keys = save.changes.first?.inserted.map(\.json).joined(separator: ",") ?? ""
                emit("R \(save.seq) \(received) \(save.committedAt.timeIntervalSince1970 * 1e6) \(keys.isEmpty ? "-" : keys)")
            }
            if count % 100_000 == 0 { emit("M \(count) \(ProcessFacts.memoryKB("VmRSS"))") }
            if count == expect {
                emit("D \(count) \(first) \(received) \(ProcessFacts.memoryKB("VmHWM")) \(ProcessFacts.memoryKB("VmRSS"))")
                break
            }
        }
        await store.close()
    }
}
