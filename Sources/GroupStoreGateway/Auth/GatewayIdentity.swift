import Foundation
import GroupStoreCloud

// Outside `#if Gateway`, as ``GatewayBackend`` is: a backend names who it acts as.

/// Who a request comes from, as its verified token says: the database
/// role it acts as.
public struct GatewayIdentity: Sendable, Hashable {
    /// The `role` claim: the database role every statement of the request runs as.
    public var role: String
    /// For a device of a fleet (a token whose role is the fleet's,
    /// `groupstore_device`), its `sub` claim: the device the request acts
    /// for. Every transaction of the request sets it (`groupstore.device`),
    /// and the database takes the user from it (`device+<sub>`: its
    /// private zone, the owner of its rows, a member of its shares), as
    /// PostgREST takes it from `request.jwt.claims`: enrolling a device is
    /// minting its token, and a device is who its verified token says,
    /// whatever it sends. `nil` for any other role.
    public var device: String?
    /// The `exp` claim, if any.
    public var expiresAt: Date?
    /// The token's claims that are a string, a number or a boolean
    /// (`true` as 1, a whole number as an integer), as a subscription's
    /// `claim(…)` reads them: verified, so a filter `site = claim('site')`
    /// binds the token's site, not one the device configured. A client's
    /// filter only narrows what it reads; what restricts it is
    /// ``restrictions``.
    public var claims: [String: CloudValue] = [:]
    /// The token's `where` claim: a filter per table (an object of table
    /// name to ``GroupStoreCloud/CloudFilter`` text, which may read
    /// `claim(…)` but not `param(…)`), that the gateway ANDs into every
    /// read of that table for this request (`/v1/fetch` included) whatever
    /// the client asks: `{"job": "site = claim('site')"}` keeps a device
    /// to its site's jobs without trusting it. Reads only: what the role
    /// may write, row-level security decides, and a write the role may
    /// make to a record outside the restriction is answered as any write
    /// is (a conflict carries the server's version; `forgotten` says
    /// whether a named record is gone): keep devices from writing outside
    /// their restriction with row-level security. A record the device held
    /// before its token said so leaves it when it next changes.
    public var restrictions: [String: CloudFilter] = [:]

    /// What the limits count by (the rate bucket, the push connections):
    /// the verified identity, never the token's spelling, so that one
    /// identity has one bucket however many tokens (or spellings of one
    /// token) it presents: the device, or the role.
    var key: String { device.map { "device:" + $0 } ?? "role:" + role }

    /// The user the database sees (`device+<sub>` for a device, else the role).
    public var user: String { device.map { "device+" + $0 } ?? role }

    /// The identity as messages name it.
    var described: String { device.map { "device \(String(reflecting: $0))" } ?? "role \(String(reflecting: role))" }
}
