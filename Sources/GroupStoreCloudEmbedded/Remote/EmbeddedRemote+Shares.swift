import Foundation
import GRDB
import GroupStoreCloud
import Logging

extension EmbeddedRemote {
    /// Shares this user's zone `zone` with `user` (`access` `nil`: stops
    /// sharing it with them). The groups of `user` that sync the zone fetch
    /// it from their next sync on; those that lose it remove its records.
    /// - Throws: ``CloudSyncError/Code/invalidConfiguration`` for a zone name
    ///   that is not 1 to 63 of `A-Z a-z 0-9 . _ -`, or a user name that is
    ///   not one this remote accepts (or is this user).
    public func share(_ zone: String, with member: String, access: CloudShareAccess?) async throws {
        guard CloudZone.isZoneName(zone) else {
            throw CloudSyncError(
                .invalidConfiguration, "a shared zone's name is 1 to 63 of A-Z a-z 0-9 . _ -, not \(String(reflecting: zone))")
        }
        guard CloudZone.isUserName(member), member != user else {
            throw CloudSyncError(
                .invalidConfiguration,
                "zone \(zone) of \(user) can be shared with another user of 1 to 128 of A-Z a-z 0-9 . _ - @ +, not \(String(reflecting: member))"
            )
        }
        let owner = user
        try await perform("share a zone") { connection in
            try await connection.write { db in
                if let access {
                    try db.execute(
                        sql: """
                            INSERT INTO shares (owner, zone, member, can_write) VALUES (?, ?, ?, ?)
                            ON CONFLICT (owner, zone, member) DO UPDATE SET can_write = excluded.can_write
                            """,
                        arguments: [owner, zone, member, access == .readWrite])
                } else {
                    try db.execute(sql: "DELETE FROM shares WHERE owner = ? AND zone = ? AND member = ?", arguments: [owner, zone, member])
                }
            }
        }
        logger.info(
            "zone shared",
            metadata: [
                "remote": "\(path)", "zone": "\(CloudZone.shared(owner: owner, name: zone))", "with": "\(member)",
                "access": "\(access?.rawValue ?? "none")",
            ])
    }

    /// The shares of this user's zones and of the zones shared with this user.
    public func shares() async throws -> [CloudShare] {
        let user = self.user
        return try await perform("list shares") { connection in
            try await connection.read { db in
                try Row.fetchAll(
                    db, sql: "SELECT owner, zone, member, can_write FROM shares WHERE owner = ? OR member = ? ORDER BY owner, zone, member",
                    arguments: [user, user]
                ).map { row in
                    CloudShare(
                        zone: .shared(owner: row[0], name: row[1]), user: row[2], access: (row[3] as Bool) ? .readWrite : .readOnly)
                }
            }
        }
    }

    /// What `user` may do in the shared zone `zone`: its owner everything.
    static func access(_ db: Database, to zone: CloudZone, user: String) throws -> CloudShareAccess? {
        if zone.owner == user { return .readWrite }
        let canWrite = try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT can_write FROM shares WHERE owner = ? AND zone = ? AND member = ?"),
            arguments: [zone.owner, zone.name, user])
        return canWrite.map { $0 ? .readWrite : .readOnly }
    }
}
