import ArgumentParser
import Foundation

/// The options of a remote that is a gateway (`http://` / `https://`): the
/// bearer token, and the certificate authorities to trust.
struct GatewayOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "With an http(s):// remote (a gateway): a file holding the token (default: the GROUPSTORE_TOKEN environment variable); read again when the gateway refuses the token.",
            valueName: "file"))
    var tokenFile: String?

    @Option(
        name: .customLong("tls-ca"),
        help: ArgumentHelp(
            "With an https:// remote: a PEM file of the certificate authorities to trust (default: the system's).", valueName: "file"))
    var tlsCA: String?

    /// The token: the file's first line, or `GROUPSTORE_TOKEN`. Blocking (reads a file).
    func token() throws -> String {
        if let tokenFile {
            guard let text = try? String(contentsOfFile: tokenFile, encoding: .utf8) else {
                throw CommandFailure(message: "cannot read the token file \(tokenFile)")
            }
            let token = text.split(whereSeparator: \.isNewline).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard !token.isEmpty else { throw CommandFailure(message: "the token file \(tokenFile) is empty") }
            return token
        }
        if let token = ProcessInfo.processInfo.environment["GROUPSTORE_TOKEN"], !token.isEmpty { return token }
        throw CommandFailure(
            message: "a gateway remote needs a token: give --token-file FILE or set GROUPSTORE_TOKEN (groupstore cloud token mints one)")
    }
}
