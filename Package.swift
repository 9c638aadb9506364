// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Crosspoint",
    products: [
        .library(name: "CrosspointCore", targets: ["CrosspointCore"]),
        .executable(name: "crosspoint", targets: ["crosspoint"]),
        .executable(name: "crosspoint-bench", targets: ["CrosspointBenchmarks"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // `crosspoint serve`: HTTP and WebSocket. Without Hummingbird's default traits
        // (ConfigurationSupport, FullFoundation), which link the whole of Foundation and ICU
        // (the command is linked statically; stripped, 73 MB with them, 28 MB without).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    ],
    targets: [
        // The model, channel maps, parameters, ramps, the render path. No PipeWire.
        .target(name: "CrosspointCore", dependencies: ["CCrosspointKernel"]),
        // The steady mixing kernels in C: one version per instruction set in one binary
        // (baseline x86-64, AVX2+FMA, AVX-512), chosen at load. Swift builds a function for one
        // target only. No PipeWire.
        // A section per function, so that scripts/lib/module-order.txt can place the data
        // thread's path (xp_run, then each version's run) next to the Swift code that calls it.
        .target(name: "CCrosspointKernel", cSettings: [.unsafeFlags(["-ffunction-sections"])]),

        // libpipewire-0.3 and libspa, as C modules.
        .systemLibrary(
            name: "CPipeWire", pkgConfig: "libpipewire-0.3",
            providers: [.apt(["libpipewire-0.3-dev", "libspa-0.2-dev"])]),
        // Wrappers for the macros and variadic functions Swift cannot call.
        .target(name: "CCrosspointShim", dependencies: ["CPipeWire"]),
        // PipeWire plumbing both sides share: hooks, registry, links, pods and the Props codec,
        // SPA-JSON, logging.
        .target(
            name: "CrosspointPipeWire",
            dependencies: ["CrosspointCore", "CCrosspointShim", "CPipeWire"]),
        // The node, inside the daemon: filter, ports, the real-time process callback, memory,
        // state file, module arguments.
        .target(name: "CrosspointNode", dependencies: ["CrosspointPipeWire"]),
        // The client, outside the daemon: connection, graph snapshots, node proxies, links.
        .target(name: "CrosspointClient", dependencies: ["CrosspointPipeWire"]),
        // The module's entry point, `pipewire__module_init`; linked into a .so by scripts/build.
        .target(name: "CrosspointModule", dependencies: ["CrosspointNode"]),
        // What the command line does, outside its argument parsing: a session with the daemon
        // and changes made through it, values as people type them, reports, the views it
        // prints; and the control surface `crosspoint serve` runs: its HTTP and WebSocket server,
        // the API's change sets, OSC, and the page in Surface/Web/, compiled into the binary
        // (with the routes that serve it: `embedInCode` makes the files this target's own).
        .target(
            name: "CrosspointControl",
            dependencies: [
                "CrosspointClient",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            resources: [
                .embedInCode("Surface/Web/index.html"), .embedInCode("Surface/Web/app.js"), .embedInCode("Surface/Web/style.css"),
            ]),
        // The command line: its commands' arguments, help and completion, over CrosspointControl.
        .executableTarget(
            name: "crosspoint",
            dependencies: ["CrosspointControl", .product(name: "ArgumentParser", package: "swift-argument-parser")]),

        // Benchmarks: the kernel beside OpenBLAS sgemm and memcpy.
        .systemLibrary(name: "COpenBLAS", pkgConfig: "openblas", providers: [.apt(["libopenblas-dev"])]),
        .executableTarget(
            name: "CrosspointBenchmarks", dependencies: ["CrosspointCore", "CrosspointTestSupport", "COpenBLAS"]),

        // Test data shared by the tests and the benchmarks (a seeded generator).
        .target(name: "CrosspointTestSupport"),

        // Test support: counts malloc calls on the calling thread.
        .target(name: "CAllocationCounter"),
        .testTarget(
            name: "CrosspointCoreTests", dependencies: ["CrosspointCore", "CrosspointTestSupport", "CAllocationCounter"]),
        .testTarget(
            name: "CrosspointNodeTests",
            dependencies: ["CrosspointNode", "CrosspointCore", "CrosspointTestSupport", "CAllocationCounter"]),
        .testTarget(
            name: "CrosspointIntegrationTests", dependencies: ["CrosspointCore", "CrosspointNode", "CrosspointClient"], exclude: ["Fixtures"]),
    ]
)
