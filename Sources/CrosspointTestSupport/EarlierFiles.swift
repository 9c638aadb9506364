// Shared by the core's and the node's tests: files as an earlier version of Crosspoint wrote
// them, which this one must still read (and write back the same).

/// Files written before the parameter table drove presets.
public enum EarlierFiles {
    /// A preset (`Preset.json` of the version before, run on a mixer with every key set): 2
    /// inputs and a sink's 2 channels, 3 outputs. The state file's `mixer` is the same.
    public static let preset = """
        {
          "format": "crosspoint-preset",
          "version": 1,
          "inputs": 4,
          "outputs": 3,
          "input.position": ["FL", "FR", "game_FL", "game_FR"],
          "output.position": ["L", "R", "SUB"],
          "gain.master": 0.8,
          "mute.master": true,
          "gain.in": [0.3, -0.1, 1, 1],
          "mute.in": [false, true, false, false],
          "gain.out": [1, 1, 0.5011872],
          "mute.out": [true, false, false],
          "delay.out": [0, 0, 12.345],
          "matrix": [
            [1, 0.3, 0],
            [0, 1, -0.70794576],
            [0, 0, 0],
            [0, 0, 0]
          ],
          "ramp.ms": 37.5,
          "midi": true,
          "midi.map": ["cc 1 7 gain.in.0", "note 1 60 mute.out.L momentary"],
          "devices": ["sink game position=FL,FR channels=game_FL,game_FR description=Game"],
          "targets": ["default outputs=L,R"]
        }

        """

    /// A state file of the node `preset` was saved from (`NodeState.json`), with two links.
    public static let state = """
        {
          "format": "crosspoint-state",
          "version": 1,
          "configured": "4x3 [FL FR game_FL game_FR] [L R SUB]",
          "mixer": \(preset.split(separator: "\n").joined(separator: "\n  ")),
          "links": [
            {"port": "out_L", "peer.node": "alsa_output.usb-1.analog", "peer.port": "playback_FL", "seen": 1764000000},
            {"port": "in_FL", "peer.node": "player", "peer.port": "output_FL"}
          ]
        }

        """
}
