#if Gateway
    import Foundation
    import GroupStoreCloud
    import Synchronization

    /// The gateways a client may use: `http://HOST:PORT` or `https://HOST:PORT`,
    /// or several of one scheme as libpq takes several PostgreSQL servers,
    /// `https://gw1:8443,gw2:8443`. Requests go to one until it cannot be
    /// reached, then to the next; a load balancer in front of them is one host.
    final class GatewayEndpoints: Sendable, CustomStringConvertible {
        /// `https` or `http`.
        let scheme: String
        /// `host:port` of each gateway.
        let hosts: [String]
        private let current = Atomic<Int>(0)

        init(_ text: String) throws {
            let lowered = text.lowercased()
            let scheme: String
            if lowered.hasPrefix("https://") {
                scheme = "https"
            } else if lowered.hasPrefix("http://") {
                scheme = "http"
            } else {
                throw CloudSyncError(.badRemote, "\(text) is not an http:// or https:// URL of a gateway")
            }
            var rest = text.dropFirst(scheme.count + 3)
            if rest.hasSuffix("/") { rest = rest.dropLast() }
            guard !rest.isEmpty, !rest.contains("/"), !rest.contains("@"), !rest.contains("?") else {
                throw CloudSyncError(
                    .badRemote, "\(text): a gateway's URL is \(scheme)://HOST:PORT (several: \(scheme)://HOST:PORT,HOST:PORT), with no path"
                )
            }
            let hosts = rest.split(separator: ",").map(String.init)
            for host in hosts {
                guard let colon = host.lastIndex(of: ":"), let port = Int(host[host.index(after: colon)...]), (1...65535).contains(port),
                    colon > host.startIndex
                else {
                    throw CloudSyncError(.badRemote, "\(text): \(host) is not HOST:PORT")
                }
            }
            self.scheme = scheme
            self.hosts = hosts
        }

        var description: String { "\(scheme)://\(hosts.joined(separator: ","))" }

        /// The base URL of the gateway in use.
        var base: String { "\(scheme)://\(hosts[current.load(ordering: .relaxed) % hosts.count])" }

        /// The push connection's URL on the gateway in use.
        var pushURL: String {
            "\(scheme == "https" ? "wss" : "ws")://\(hosts[current.load(ordering: .relaxed) % hosts.count])\(GatewayWire.apiPrefix)/push"
        }

        /// The gateway at `base` could not be reached: use the next one (unless
        /// another caller moved on already).
        func failed(_ base: String) {
            let index = current.load(ordering: .relaxed)
            guard hosts.count > 1, self.base == base else { return }
            _ = current.compareExchange(expected: index, desired: (index + 1) % hosts.count, ordering: .relaxed)
        }
    }
#endif  // Gateway
