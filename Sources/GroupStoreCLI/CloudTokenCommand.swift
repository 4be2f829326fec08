import ArgumentParser
import Foundation
import GroupStore
import GroupStoreCloud

#if Gateway
    import GroupStoreGateway
#endif

/// `groupstore cloud token`: mint a token a gateway takes.
struct CloudTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract:
            "Print a token (an HS256 JWT) that a gateway started with the same secret file takes, for a database role or a fleet's device.",
        discussion: """
            The token's role claim names the database role the gateway acts as for its requests \
            (the gateway's login role must be granted it). Without --expires-in the token does not \
            expire: prefer a lifetime, and mint a new token before it ends.

            Example:
              openssl rand -base64 48 > /etc/groupstore/jwt.secret
              groupstore cloud token --jwt-secret-file /etc/groupstore/jwt.secret \\
                --role alice --expires-in 2592000 > alice.token

            --device mints a fleet device's token instead: role groupstore_device, sub the \
            device (see GatewayIdentity.device): enrolling a device is minting its token, \
            with no change to the database:
              groupstore cloud token --jwt-secret-file /etc/groupstore/jwt.secret \\
                --device pump-0017 --expires-in 2592000 > pump-0017.token

            --claim adds a claim a subscription's claim('NAME') reads through the gateway. \
            --where restricts what the token reads: a device's token with --claim site=7 and \
            --where "job: site = claim('site')" reads that site's jobs only, whatever filter \
            the device asks for (see GatewayIdentity.restrictions in the gateway's docs).
            """
    )

    @Option(name: .long, help: ArgumentHelp("The secret's file (at least 32 bytes).", valueName: "file"))
    var jwtSecretFile: String

    @Option(name: .long, help: ArgumentHelp("The database role the token acts as.", valueName: "role"))
    var role: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A fleet device the token acts for, instead of --role (role groupstore_device, sub NAME).", valueName: "name"))
    var device: String?

    @Option(name: .long, help: ArgumentHelp("Seconds until the token expires (default: never).", valueName: "seconds"))
    var expiresIn: Int?

    @Option(
        name: .customLong("claim"),
        help: ArgumentHelp(
            "A claim for subscriptions' claim('NAME') (repeatable): an integer, a real, or text.", valueName: "NAME=VALUE"))
    var claims: [String] = []

    @Option(
        name: .customLong("where"),
        help: ArgumentHelp(
            "A filter the gateway ANDs into every read of TABLE with this token (repeatable, one per table); it may read claim('NAME').",
            valueName: "TABLE: FILTER"))
    var restrictions: [String] = []

    func validate() throws {
        guard (role == nil) != (device == nil) else { throw ValidationError("give one of --role and --device") }
        for item in claims where item.firstIndex(of: "=").map({ $0 == item.startIndex }) ?? true {
            throw ValidationError("--claim takes NAME=VALUE; '\(item)' is not one")
        }
        if let expiresIn, expiresIn <= 0 { throw ValidationError("--expires-in takes a number of seconds above 0") }
    }

    func run() async throws {
        do {
            try await reportingFailure {
                #if Gateway
                    let (file, device, seconds) = (jwtSecretFile, device, expiresIn.map(TimeInterval.init))
                    let role = device == nil ? self.role ?? "" : TokenVerifier.deviceRole
                    var values: [String: CloudValue] = [:]
                    for item in claims {
                        let equals = item.firstIndex(of: "=")!
                        values[String(item[..<equals])] = SubscriptionOptions.value(String(item[item.index(after: equals)...]))
                    }
                    let (claimed, restricted) = (values, try SubscriptionOptions.filters(restrictions, option: "--where"))
                    let token = try await offThePool {
                        try GatewayToken.mint(
                            secretFile: file, role: role, expiresIn: seconds, claims: claimed, restrictions: restricted, device: device)
                    }
                    StandardOutput.writeLine(token)
                #else
                    throw CommandFailure(message: RemoteArgument.gatewayNotBuilt)
                #endif
            }
        } catch let failure as CommandFailure {
            CommandFailure.exit(failure)
        }
    }
}
