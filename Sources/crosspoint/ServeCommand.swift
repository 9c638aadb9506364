// `crosspoint serve`: the control surface's options. The server, what it serves and how it is
// kept safe: `SurfaceServer` and the files beside it (Sources/CrosspointControl/Surface).

import ArgumentParser
import CrosspointControl

struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the control surface: the matrix as a grid with live meters, in a browser.",
        discussion: """
        Starts a small web server (HTTP and a WebSocket) that shows every Crosspoint node of \
        the daemon: the matrix as a grid of gains, input and output strips with gains, mutes \
        and live meters, the master, the ramp, links, presets, channel counts and names. \
        Changes made anywhere (pw-cli, crosspoint, another browser) show at once; the page's \
        own go straight to the node. It prints the URL to open.

        Only you control your mix: every request needs a token, on 127.0.0.1 too (another \
        account on the machine can reach a loopback port). It is made on first use, stored \
        with mode 0600 in $XDG_CONFIG_HOME/crosspoint/serve-token (or read from --token-file), \
        and the URL printed carries it: open that once and the page keeps it in a cookie. \
        Scripts send Authorization: Bearer TOKEN. By default it listens on 127.0.0.1 only; \
        --listen 0.0.0.0 or a LAN address opens it to the network (with the same token). To \
        reach a loopback-only server from another machine, tunnel it: ssh -L \
        7311:127.0.0.1:7311 audio-box, then open the printed URL there. Presets are files NAME.json in one folder \
        ($XDG_CONFIG_HOME/crosspoint/presets, or --presets). The API the page uses is in the \
        README (Control surface).

        Examples:
          crosspoint serve
          crosspoint serve --port 8080
          crosspoint serve --listen 0.0.0.0          (a tablet on the LAN: open the printed URL with the machine's address)
          crosspoint serve --listen 192.168.1.20 --token-file ~/.config/crosspoint/token
        """)

    @OptionGroup var connection: Connection
    @Option(help: ArgumentHelp("The address to listen on: 127.0.0.1 (the default, this machine only), ::1, 0.0.0.0 or one of this machine's addresses (the token is needed on every one).", valueName: "address"))
    var listen = "127.0.0.1"
    @Option(help: ArgumentHelp("The port (0 picks a free one).", valueName: "n")) var port = 7311
    @Option(help: ArgumentHelp("Read the token from this file instead of the stored one (16 or more printable characters).", valueName: "file"),
            completion: .file())
    var tokenFile: String?
    @Option(help: ArgumentHelp("The folder presets are kept in (default: $XDG_CONFIG_HOME/crosspoint/presets).", valueName: "dir"),
            completion: .directory)
    var presets: String?
    @Option(help: ArgumentHelp("Also take Open Sound Control on this UDP port, on the same address (0 picks a free one): /crosspoint/NODE/KEY VALUE; README: OSC.", valueName: "port"))
    var osc: Int?

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
        if let osc, !(0...65535).contains(osc) { throw ValidationError("--osc must be from 0 to 65535") }
        guard !listen.isEmpty else { throw ValidationError("--listen needs an address") }
    }

    func run() throws {
        try SurfaceServer(remote: connection.remote, listen: listen, port: port, tokenFile: tokenFile, presets: presets, osc: osc).run()
    }
}
