import Foundation

/// A remote's URL as messages show it: as given, less any password.
package enum RemoteURL {
    /// `url` with any password left out: from the user information
    /// (`user:secret@host`) and from a `password=` query parameter.
    package static func withoutPassword(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let head = url[..<schemeEnd.upperBound]
        var rest = Substring(url[schemeEnd.upperBound...])
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authority = String(rest[..<authorityEnd])
        rest = rest[authorityEnd...]
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            let user = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            authority = String(user) + authority[at...]
        }
        var tail = String(rest)
        if let question = tail.firstIndex(of: "?") {
            let path = tail[..<question]
            let afterQuestion = tail[tail.index(after: question)...]
            let fragmentStart = afterQuestion.firstIndex(of: "#") ?? afterQuestion.endIndex
            let query = afterQuestion[..<fragmentStart]
                .split(separator: "&")
                .filter { !$0.lowercased().hasPrefix("password=") }
                .joined(separator: "&")
            tail = path + (query.isEmpty ? "" : "?" + query) + afterQuestion[fragmentStart...]
        }
        return head + authority + tail
    }
}
