import Dispatch
import Foundation
import GroupStore
import XCTest

@testable import GroupStoreCloud

/// The bridge's loop of local saves waits, for each save, until the engine
/// has taken its transaction in (so the bridge's cursor never passes a save
/// whose keys are not durably pending). A waiter must be let go by the
/// intake that covers it, whichever of the two runs first on the engine's
/// queue: a waiter missed by its intake held the loop, and with it every
/// later local save, until the bridge's timer (5 s by default) ran a sync.
///
/// The stall was traced in a release build, where the body of the wait's
/// `withCheckedContinuation` ran after an intake queued behind it. In a
/// debug build the body runs in turn and this test passes with or without
/// the fix (`SyncEngine.waitIntake` looking at the position again in the
/// body); it holds the contract for either, and fails in the release build
/// of the code before the fix if the runtime defers the body there too.
final class IntakeWaitTests: CloudTestCase {
    func testWaiterLinedUpBeforeTheIntakeThatCoversIt_isLetGo() async throws {
        let store = try open("a", member: "cloud", schema: "CREATE TABLE note(id TEXT PRIMARY KEY, body TEXT)")
        let engine = try await SyncEngine.make(
            store: store, configuration: try configuration("a", tables: ["note"]), events: EventHub(label: "test", object: { nil }),
            tracer: SyncTracer())
        for round in 1...20 {
            let seq = await engine.intakePosition + 1
            // The wait, then the intake that covers it: two jobs lined up on
            // the engine's queue in that order (held until both are queued),
            // as a local save and a sync are.
            let hold = DispatchSemaphore(value: 0)
            engine.executor.queue.async { hold.wait() }
            let waiter = Task(executorPreference: engine.executor) { await engine.waitIntake(through: seq) }
            let intake = Task(executorPreference: engine.executor) {
                await engine.noteIntake(HistoryIntake.Outcome(through: seq))
            }
            // Creating a task queues its first job on its preferred executor.
            hold.signal()
            await intake.value
            let letGo = await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    await waiter.value
                    return true
                }
                group.addTask {
                    try? await Task.sleep(for: .seconds(10))
                    return false
                }
                let first = await group.next()!
                // A waiter still held is let go here, so the test ends.
                if !first { await engine.releaseWaiters() }
                group.cancelAll()
                return first
            }
            XCTAssertTrue(letGo, "round \(round): the wait for the intake through \(seq) was still held 10 s after that intake")
            if !letGo { return }
        }
    }
}
