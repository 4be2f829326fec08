import ArgumentParser
import Foundation
import Subprocesses

/// `groupstore-faults`: the fault and abuse suite. Real processes, real
/// inotify, real signals; prints a table of what was tried and what held.
///
///     swift build && .build/debug/groupstore-faults            # the long form (release checks)
///     swift build && .build/debug/groupstore-faults --ci       # the bounded form CI runs
///     .build/debug/groupstore-faults --only soak --soak 1800   # the 30-minute soak
///     .build/debug/groupstore-faults --only cloud              # the cloud bridge: 100 kill trials, 60 s convergence,
///                                                              # 50 trials each of the remote replaced and restored
@main
struct FaultsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "groupstore-faults",
        abstract: "Kill, stall, flood and abuse a running group; check that nothing is lost.")

    @Flag(help: "The bounded form for CI (a few minutes).") var ci = false
    @Option(help: "Crash trials (default 500; 50 with --ci).") var trials: Int?
    @Option(help: "Soak duration in seconds (0: no soak).") var soak = 0
    @Option(help: "Only these sections (comma-separated: capture,crash,overload,garbage,hostile,access,cloud,failover,soak).") var only:
        String?
    @Option(help: "Leave out these sections (comma-separated).") var skip: String?
    @Option(help: "Transactions of random SQL in the capture trial (default 5,000; 1,000 with --ci).") var steps: Int?
    @Option(help: "Seed of the capture trial's random SQL.") var seed: UInt64 = 0x6361_7074_7572_65
    @Option(help: "Cloud kill trials (default 100; 10 with --ci).") var cloudTrials: Int?
    @Option(help: "Seconds the three groups of each cloud convergence trial write (default 60; 30 with --ci).") var cloudSeconds: Int?
    @Option(help: "Conflict policies of the cloud convergence trials (default server-wins,field-merge).") var cloudPolicies =
        "server-wins,field-merge"
    @Option(
        help:
            "Trials of the remote replaced, and of the remote restored, under running bridges (default 50 each; none with --ci unless given)."
    )
    var cloudResetTrials: Int?
    @Option(
        help:
            "PostgreSQL failovers under bridges syncing through a gateway (default 20; none with --ci unless given; built with --traits Postgres,Gateway)."
    )
    var cloudFailovers: Int?
    @Option(help: "Seed of the cloud section (default: from the clock; printed). Kill trial i uses seed + i.") var cloudSeed: UInt64?
    @Option(help: "Also write the table as JSON to this file.") var json: String?

    func run() throws {
        let suite = FaultSuite()
        defer { suite.cleanUp() }
        let wanted = only.map { Set($0.split(separator: ",").map(String.init)) }
        let unwanted = Set((skip ?? "").split(separator: ",").map(String.init))
        func section(_ name: String, _ body: () throws -> [Outcome]) {
            guard wanted?.contains(name) ?? (name != "soak" || soak > 0), !unwanted.contains(name) else { return }
            let started = Date()
            FileHandle.standardError.write(Data("faults: \(name)…\n".utf8))
            do {
                suite.outcomes += try body()
            } catch {
                suite.outcomes.append(Outcome(fault: name, trials: 0, passed: false, figures: "aborted: \(error)"))
            }
            FileHandle.standardError.write(
                Data(String(format: "faults: %@ done in %.1f s\n", name, Date().timeIntervalSince(started)).utf8))
        }
        section("capture") { try CaptureTrial(suite: suite).run(steps: steps ?? (ci ? 1_000 : 5_000), seed: seed) }
        section("crash") { try CrashTrials(suite: suite).run(trials: trials ?? (ci ? 50 : 500)) }
        section("overload") { try OverloadTrial(suite: suite).run(transactions: ci ? 50_000 : 200_000) }
        section("garbage") { try GarbageTrial(suite: suite).run(files: ci ? 2_000 : 20_000) }
        section("hostile") { try HostileFileSystem(suite: suite).run() }
        section("access") {
            var trial = AccessTrial(suite: suite)
            return try trial.run()
        }
        section("cloud") {
            let seed = cloudSeed ?? UInt64(Date().timeIntervalSince1970 * 1000)
            FileHandle.standardError.write(Data("faults: cloud seed \(seed)\n".utf8))
            var outcomes = try CloudKillTrial(suite: suite).run(trials: cloudTrials ?? (ci ? 10 : 100), seed: seed)
            for policy in cloudPolicies.split(separator: ",").map(String.init) {
                do {
                    outcomes += try CloudConvergenceTrial(suite: suite).run(
                        seconds: cloudSeconds ?? (ci ? 30 : 60), policy: policy, seed: seed)
                } catch {
                    outcomes.append(
                        Outcome(
                            fault: "cloud: 3 groups converging, policy \(policy)", trials: 1, passed: false,
                            figures: "seed \(seed): \(error)"))
                }
            }
            // The remote replaced or restored under running bridges: 200 of 200 and 194 of 200 held
            // in the long form (docs/RELIABILITY.md); what is left fails about 3 restored trials in 100,
            // so CI, which must not flake, replays the races deterministically instead
            // (RemoteResetTests, BridgeAttackTests) and these run in the long form only.
            if !ci || cloudResetTrials != nil {
                for mode in [CloudRemoteResetTrial.Mode.replaced, .restored] {
                    outcomes.append(CloudRemoteResetTrial(suite: suite).run(trials: cloudResetTrials ?? 50, mode: mode, seed: seed))
                }
            }
            return outcomes
        }
        // Long form only: CI runs one failover in GatewayFailoverTests.
        if !ci || cloudFailovers != nil {
            section("failover") {
                #if Postgres && Gateway
                    let seed = cloudSeed ?? UInt64(Date().timeIntervalSince1970 * 1000)
                    return [CloudFailoverTrial(suite: suite).run(failovers: cloudFailovers ?? 20, seed: seed)]
                #else
                    return [
                        Outcome(
                            fault: "failover", trials: 0, passed: false,
                            figures: "not built: build with --traits Postgres,Gateway (or leave it out: --skip failover)")
                    ]
                #endif
            }
        }
        section("soak") { try SoakTrial(suite: suite).run(seconds: max(soak, 60)) }

        print("GroupStore fault suite\(ci ? " (bounded CI form)" : "")\n")
        print(Outcome.table(suite.outcomes))
        if let json {
            let rows = suite.outcomes.map {
                ["fault": $0.fault, "trials": $0.trials, "passed": $0.passed, "figures": $0.figures] as [String: Any]
            }
            try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted]).write(to: URL(fileURLWithPath: json))
        }
        let failed = suite.outcomes.filter { !$0.passed }
        print("\n\(suite.outcomes.count - failed.count) passed, \(failed.count) failed")
        if !failed.isEmpty { throw ExitCode(1) }
    }
}

/// One line of the report.
struct Outcome {
    var fault: String
    var trials: Int
    var passed: Bool
    var figures: String

    static func table(_ outcomes: [Outcome]) -> String {
        var lines = ["| fault | trials | outcome | figures |", "|---|---|---|---|"]
        for outcome in outcomes {
            lines.append("| \(outcome.fault) | \(outcome.trials) | \(outcome.passed ? "held" : "**FAILED**") | \(outcome.figures) |")
        }
        return lines.joined(separator: "\n")
    }
}
