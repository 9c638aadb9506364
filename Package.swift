// swift-tools-version: 6.0
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
    ],
    targets: [
        // Pure Swift: the model, channel maps, parameters, ramps, the render kernel. No PipeWire.
        .target(name: "CrosspointCore"),

        // libpipewire-0.3 and libspa, as C modules.
        .systemLibrary(
            name: "CPipeWire", pkgConfig: "libpipewire-0.3",
            providers: [.apt(["libpipewire-0.3-dev", "libspa-0.2-dev"])]),
        // Wrappers for the macros and variadic functions Swift cannot call.
        .target(name: "CCrosspointShim", dependencies: ["CPipeWire"]),
        // The thin Swift layer over libpipewire: filter, ports, params, pods, arguments.
        .target(
            name: "CrosspointPipeWire",
            dependencies: ["CrosspointCore", "CCrosspointShim", "CPipeWire"]),
        // The module's entry point, `pipewire__module_init`; linked into a .so by scripts/build.
        .target(name: "CrosspointModule", dependencies: ["CrosspointPipeWire"]),
        // The command line.
        .executableTarget(
            name: "crosspoint",
            dependencies: [
                "CrosspointPipeWire",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),

        // Benchmarks: the kernel beside OpenBLAS sgemm and memcpy.
        .systemLibrary(name: "COpenBLAS", pkgConfig: "openblas", providers: [.apt(["libopenblas-dev"])]),
        .executableTarget(name: "CrosspointBenchmarks", dependencies: ["CrosspointCore", "COpenBLAS"]),

        // Test support: counts malloc calls on the calling thread.
        .target(name: "CAllocationCounter"),
        .testTarget(name: "CrosspointCoreTests", dependencies: ["CrosspointCore", "CAllocationCounter"]),
        .testTarget(
            name: "CrosspointIntegrationTests", dependencies: ["CrosspointCore", "CrosspointPipeWire"], exclude: ["Fixtures"]),
    ]
)
