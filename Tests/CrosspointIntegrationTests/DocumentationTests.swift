import CrosspointCore
import CrosspointNode
import Foundation
import Testing

/// The README's tables are made from the code's one table of parameters and of module
/// arguments; these tests fail when they drift apart.
struct DocumentationTests {
    let readme = (try? String(contentsOf: repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)) ?? ""

    @Test func readmeParameterTableIsTheParameterTable() {
        #expect(readme.contains(Parameter.markdownTable()), "regenerate with: swift run crosspoint params --markdown\n\(Parameter.markdownTable())")
    }

    @Test func readmeArgumentTableIsTheModuleArgumentTable() {
        #expect(readme.contains(NodeConfiguration.markdownTable()), "README lacks:\n\(NodeConfiguration.markdownTable())")
    }
}
