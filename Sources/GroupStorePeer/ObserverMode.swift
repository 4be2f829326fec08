import ArgumentParser
import Foundation
import GroupStore

/// `groupstore-peer --observe-only …`: CDShare-style code that only observes
/// `.groupStoreDidSave` on the main queue (no `saves()` loop), set up in one
/// of three ways, for the tests of what the store says when its saves would
/// reach nobody.
enum ObserverMode {
    enum Setup: String, ExpressibleByArgument, Sendable {
        /// The store is never started; the async top level awaits.
        case neverStarted = "never-started"
        /// The store is started; the main thread sleeps, so the main queue
        /// is never served.
        case mainBlocked = "main-blocked"
        /// The store is started; the async top level awaits (the observer
        /// gets every save, and nothing counts them as processed).
        case started
    }

    static func run(store: GroupStore, setup: Setup) async throws {
        let observer = NotificationCenter.default.addObserver(forName: .groupStoreDidSave, object: store, queue: .main) { note in
            if let save = note.userInfo?[GroupStore.saveUserInfoKey] as? Save { PeerCommand.report("main observer seq \(save.seq)") }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        if setup != .neverStarted { try await store.start() }
        PeerCommand.report("observer ready")
        if setup == .mainBlocked {
            await MainActor.run { _ = sleep(3600) }
        } else {
            try? await Task.sleep(for: .seconds(3600))
        }
    }
}
