import ArgumentParser
import Foundation
import Subprocesses

#if Postgres
    import PostgresTestServer
#endif

/// `groupstore-bench`: propagation latency, throughput and overhead of
/// GroupStore, each beside its reference measured in the same run.
///
///     swift run -c release groupstore-bench [--json results.json] [--quick]
///
/// Spawns itself in hidden roles (member, writer, inotify-writer,
/// inotify-reader, poller) so every measurement crosses real processes.
@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "groupstore-bench",
        abstract: "Measure GroupStore against bare inotify, polling and plain GRDB, and print a table.",
        subcommands: [
            RunCommand.self, MemberRole.self, WriterRole.self, InotifyWriterRole.self, InotifyReaderRole.self, PollerRole.self,
            RawMemberRole.self,
        ],
        defaultSubcommand: RunCommand.self
    )
}

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Run every scenario and print the table.")

    @Option(help: "Also write the figures as JSON to this file.") var json: String?
    @Flag(help: "Fewer samples (a smoke run, not for quoting).") var quick = false
    @Option(
        help:
            "Only these sections (comma-separated: latency,breakdown,polling,throughput,overhead,foreign,catchup,memory,bulk,cloud,postgres,gateway; or one part of cloud: cloud-latency, cloud-initial, cloud-rate, of postgres: postgres-latency, postgres-initial, postgres-rate, postgres-fleet, postgres-subscriptions, or of gateway: gateway-hop, gateway-rps, gateway-scale, gateway-devices)."
    )
    var only: String?

    func run() async throws {
        let bench = Bench(quick: quick)
        defer { bench.cleanUp() }
        let wanted = only.map { Set($0.split(separator: ",").map(String.init)) }
        var rows: [TableRow] = []
        func section(_ name: String, _ body: () throws -> [TableRow]) {
            guard wanted?.contains(name) ?? true else { return }
            let started = Date()
            FileHandle.standardError.write(Data("bench: \(name)…\n".utf8))
            do {
                rows += try body()
            } catch {
                rows.append(TableRow(section: name, what: "FAILED: \(error)", unit: ""))
            }
            FileHandle.standardError.write(Data(String(format: "bench: %@ done in %.1f s\n", name, Date().timeIntervalSince(started)).utf8))
        }
        let latency = LatencyScenario(bench: bench)
        var reference: Distribution?
        section("latency") {
            let result = try latency.run()
            reference = result.twoMembersTmpfs
            return result.rows
        }
        #if Postgres
            if wanted?.contains("latency") ?? true {
                // The usual server-side alternative, on this machine, in the same run.
                FileHandle.standardError.write(Data("bench: PostgreSQL LISTEN/NOTIFY reference…\n".utf8))
                do {
                    let server = try PostgresServer.start()
                    defer { server.stop() }
                    var row = try await PostgresScenario(bench: bench).notifyRoundTrip(
                        server, section: "1. propagation latency, 1 commit/ms")
                    if let reference {
                        row.reference = String(format: "GroupStore 2 members %.0f µs", reference.median)
                        row.ratio = reference.median / (row.distribution?.median ?? .nan)
                    }
                    rows.append(row)
                } catch {
                    rows.append(
                        TableRow(
                            section: "1. propagation latency, 1 commit/ms", what: "PostgreSQL LISTEN/NOTIFY: not measured (\(error))",
                            unit: ""))
                }
            }
        #endif
        section("breakdown") { try BreakdownScenario(bench: bench).run() }
        section("polling") { try PollingScenario(bench: bench, groupStoreLatency: reference).run() }
        section("throughput") { try ThroughputScenario(bench: bench).run() }
        section("overhead") { try OverheadScenario(bench: bench).run() }
        section("foreign") { try ForeignWriterScenario(bench: bench).run() }
        section("catchup") { try CatchUpScenario(bench: bench).run() }
        section("memory") { try MemoryScenario(bench: bench).run() }
        section("bulk") { try BulkScenario(bench: bench).run() }
        let cloudParts = CloudScenario.parts.filter { wanted == nil || wanted!.contains("cloud") || wanted!.contains("cloud-" + $0) }
        if !cloudParts.isEmpty {
            FileHandle.standardError.write(Data("bench: cloud…\n".utf8))
            do {
                rows += try await CloudScenario.embedded(bench).run(parts: Set(cloudParts))
            } catch {
                rows.append(TableRow(section: "cloud", what: "FAILED: \(error)", unit: ""))
            }
        }
        #if Postgres
            let postgresParts = PostgresScenario.parts.filter {
                wanted == nil || wanted!.contains("postgres") || wanted!.contains("postgres-" + $0)
            }
            if !postgresParts.isEmpty {
                FileHandle.standardError.write(Data("bench: postgres…\n".utf8))
                do {
                    rows += try await PostgresScenario(bench: bench).run(parts: Set(postgresParts))
                } catch {
                    rows.append(TableRow(section: "postgres", what: "FAILED: \(error)", unit: ""))
                }
            }
        #else
            if wanted?.contains(where: { $0.hasPrefix("postgres") }) == true {
                rows.append(TableRow(section: "postgres", what: "not built: build the benchmark with --traits Postgres", unit: ""))
            }
        #endif

        #if Gateway
            let gatewayParts = GatewayScenario.parts.filter {
                wanted == nil || wanted!.contains("gateway") || wanted!.contains("gateway-" + $0)
            }
            if !gatewayParts.isEmpty {
                FileHandle.standardError.write(Data("bench: gateway…\n".utf8))
                do {
                    rows += try await GatewayScenario(bench: bench).run(parts: Set(gatewayParts))
                } catch {
                    rows.append(TableRow(section: "gateway", what: "FAILED: \(error)", unit: ""))
                }
            }
        #else
            if wanted?.contains(where: { $0.hasPrefix("gateway") }) == true {
                rows.append(TableRow(section: "gateway", what: "not built: build the benchmark with --traits Gateway", unit: ""))
            }
        #endif

        print("GroupStore benchmark — \(Report.machine)\(quick ? " (quick run: few samples)" : "")\n")
        print(Report.table(rows))
        if let json { try Report.writeJSON(rows, machine: Report.machine, to: json) }
    }
}
